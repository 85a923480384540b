"""configs/default.toml documents every tunable and equals the built-in defaults."""

import os
import tomllib

from memactors import Config

PATH = os.path.join(os.path.dirname(__file__), "..", "configs", "default.toml")


def test_default_toml_matches_defaults_key_for_key():
    with open(PATH, "rb") as f:
        data = tomllib.load(f)
    assert Config.from_dict(data).to_dict() == Config().to_dict()
    defaults = Config().to_dict()
    for section in ("runtime", "embedder", "recall"):
        assert set(data[section]) == set(defaults[section]), section
