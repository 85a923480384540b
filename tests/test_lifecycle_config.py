"""[lifecycle] configuration: defaults, overrides, and every bad value a typed ConfigError. Pure."""

from __future__ import annotations

import math

import pytest

from memactors.core.config import CategoryTTL, Config, LifecycleConfig
from memactors.core.errors import ConfigError


def lifecycle(section) -> LifecycleConfig:
    return Config.from_dict({"lifecycle": section}).lifecycle


def test_defaults_round_trip():
    d = Config().to_dict()
    assert d["lifecycle"]["ttl"]["entity_fact"] == {"soft_days": "never", "hard_days": "never", "review_days": 180.0}
    assert Config.from_dict(d).to_dict() == d
    assert Config.from_dict({}).lifecycle == LifecycleConfig()


def test_overrides_keep_the_rest():
    lc = lifecycle({"stale_threshold": 0.6, "plan_workers": 4, "ttl": {"preference": {"soft_days": 60}}})
    assert lc.stale_threshold == 0.6 and lc.plan_workers == 4
    assert lc.ttl["preference"] == CategoryTTL(60.0, 365.0, None)
    assert lc.ttl["default"] == CategoryTTL(30.0, 365.0, None)


def test_never_and_new_categories():
    lc = lifecycle({"ttl": {"default": {"hard_days": "never"}, "meeting_note": {"soft_days": 3},
                            "entity_fact": {"review_days": "never"}}})
    assert lc.ttl["default"] == CategoryTTL(30.0, None, None)
    assert lc.ttl["meeting_note"] == CategoryTTL(3.0, None, None)  # the rest from the configured default
    assert lc.ttl["entity_fact"] == CategoryTTL(None, None, None)
    assert lifecycle({"ttl": {"default": {"soft_days": math.inf}}}).ttl["default"].soft_days is None


@pytest.mark.parametrize("section", [
    [1], "x", {"nope": 1},
    {"stale_threshold": -0.1}, {"stale_threshold": 1.1}, {"stale_threshold": "0.5"}, {"stale_threshold": True},
    {"stale_threshold": float("nan")}, {"evict_threshold": 0.4},  # below the stale threshold
    {"age_half_life_days": 0}, {"access_half_life_days": -1}, {"unused_days": float("inf")},
    {"superseded_days": 10**400}, {"low_confidence": 2}, {"low_confidence_days": None},
    {"sweep_interval_s": -1}, {"compact_deleted_fraction": 0}, {"compact_small_fragments": 0},
    {"compact_small_fragments": 2.5}, {"compact_small_fragment_rows": True}, {"version_retention_s": -5},
    {"plan_workers": -1}, {"plan_workers": 1.0}, {"refresh_confidence_bump": 1.5},
    {"staleness_weights": [0.4, 0.3]}, {"staleness_weights": [0, 0, 0]}, {"staleness_weights": [-1, 1, 1]},
    {"staleness_weights": [True, 1, 1]}, {"staleness_weights": "0.4/0.3/0.3"}, {"staleness_weights": [float("nan"), 1, 1]},
    {"ttl": [1]}, {"ttl": {"default": 30}}, {"ttl": {"default": {"soft": 30}}},
    {"ttl": {"Bad Name": {"soft_days": 1}}}, {"ttl": {"default": {"soft_days": 0}}},
    {"ttl": {"default": {"soft_days": -3}}}, {"ttl": {"default": {"hard_days": 40_000}}},
    {"ttl": {"default": {"soft_days": "forever"}}}, {"ttl": {"default": {"soft_days": float("nan")}}},
    {"ttl": {"default": {"soft_days": 400}}},  # soft past the hard 365
])
def test_bad_values_are_config_errors(section):
    with pytest.raises(ConfigError):
        Config.from_dict({"lifecycle": section})


def test_error_names_the_key():
    with pytest.raises(ConfigError, match=r"\[lifecycle\]\.plan_workers"):
        lifecycle({"plan_workers": -1})
    with pytest.raises(ConfigError, match=r"\[lifecycle\.ttl\.preference\]\.soft_days"):
        lifecycle({"ttl": {"preference": {"soft_days": -1}}})
