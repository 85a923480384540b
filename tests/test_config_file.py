"""configs/default.toml documents every tunable and equals the built-in defaults."""

import os
import tomllib

import pytest

from memactors import Config

PATH = os.path.join(os.path.dirname(__file__), "..", "configs", "default.toml")


def test_default_toml_matches_defaults_key_for_key():
    with open(PATH, "rb") as f:
        data = tomllib.load(f)
    from memactors.gate import GatePolicy

    got, defaults = Config.from_dict(data).to_dict(), Config().to_dict()
    assert GatePolicy.from_dict(got.pop("gate")).to_dict() == GatePolicy().to_dict()
    defaults.pop("gate")
    assert got == defaults
    for section in ("runtime", "embedder", "recall", "lifecycle"):
        assert set(data[section]) == set(defaults[section]), section
    for category, policy in defaults["lifecycle"]["ttl"].items():
        assert set(data["lifecycle"]["ttl"][category]) == set(policy), category


def test_the_commented_purposes_example_loads():
    """The `[recall.purposes]` example, uncommented in place, is a valid configuration (it once
    named a category, "config", that [lifecycle.ttl] does not define)."""
    import re

    with open(PATH, encoding="utf-8") as f:
        lines = f.read().splitlines()
    end = lines.index("[recall.purposes]")
    start = end
    while lines[start - 1].startswith("#   "):
        start -= 1
    assert start < end
    lines[start:end] = [re.sub(r"^#   ", "", line) for line in lines[start:end]]
    cfg = Config.from_dict(tomllib.loads("\n".join(lines)))
    assert set(cfg.to_dict()["recall"]["purposes"]) == {"deploy_check", "marketing"}


def test_bad_gate_policy_is_a_config_error():
    import pytest

    from memactors import ConfigError
    from memactors.runtime import load_config

    with pytest.raises(ConfigError):
        load_config({"gate": {"category": {"injection": "shrug"}}})


@pytest.mark.parametrize("bad", [0, 15, -1, "512", 2**21])
def test_lance_cache_size_out_of_range_is_a_config_error(bad):
    # Lance's own default is 7 GB of caches per connection: the bound must be a real number.
    from memactors import ConfigError
    from memactors.runtime import load_config

    with pytest.raises(ConfigError):
        load_config({"runtime": {"l2_cache_mb": bad}})
    assert load_config({"runtime": {"l2_cache_mb": 64}}).runtime.l2_cache_mb == 64
