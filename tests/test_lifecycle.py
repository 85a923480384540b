"""Lifecycle rules (memactors.core.lifecycle): TTL policy, refresh, staleness and the GC rules,
each rule with memories just inside and just outside its boundary on a fixed "now". Pure."""

from __future__ import annotations

import math
from datetime import UTC, datetime

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memactors.core import lifecycle as L
from memactors.core.clock import US_PER_DAY, ManualClock
from memactors.core.config import Config, LifecycleConfig
from memactors.core.errors import InvalidRecord

NOW = ManualClock().advance(days=365)  # 2027-01-01, one simulated year after the clock's start
DAY = US_PER_DAY
HOUR = DAY // 24


def row(**kw) -> dict:
    """One memory's rule columns: active, confident, updated yesterday, never recalled, no expiry."""
    base = {"status": "active", "confidence": 0.9, "updated_at": NOW - DAY, "last_accessed_at": None,
            "soft_expires_at": None, "hard_expires_at": None}
    base.update(kw)
    return base


def rules_of(rows: list[dict], cfg=None, now=NOW) -> list[str]:
    cols = {k: [r.get(k) for r in rows] for k in rows[0]}
    rule, action = L.evaluate(cols, now, cfg)
    assert rule.dtype == np.int8 and action.dtype == np.int8
    assert list(action) == [L.ACTION_OF[c] for c in rule]
    return [L.RULES[c] for c in rule]


def rule_of(cfg=None, **kw) -> str:
    return rules_of([row(**kw)], cfg)[0]


# --- hard_expired -------------------------------------------------------------------------------


def test_hard_expired_at_the_instant_and_not_a_microsecond_before():
    assert rule_of(hard_expires_at=NOW) == "hard_expired"
    assert rule_of(hard_expires_at=NOW - 400 * DAY) == "hard_expired"
    assert rule_of(hard_expires_at=NOW + 1) == "none"


@pytest.mark.parametrize("status", ["pending", "active", "superseded", "stale"])
def test_hard_expiry_evicts_every_live_status(status):
    assert rule_of(status=status, hard_expires_at=NOW - DAY) == "hard_expired"


@pytest.mark.parametrize("status", ["evicted", "tombstoned", "unknown-status", None])
def test_gone_or_unknown_rows_never_match(status):
    everything = dict(status=status, hard_expires_at=NOW - DAY, soft_expires_at=NOW - DAY, confidence=0.01,
                      updated_at=NOW - 1000 * DAY)
    assert rule_of(**everything) == "none"
    assert rules_of([row(**everything)], now=NOW + 10_000 * DAY) == ["none"]


# --- soft_expired_unused ------------------------------------------------------------------------


def test_soft_expired_and_unused_for_30_days_is_evicted():
    old = dict(updated_at=NOW - 60 * DAY, soft_expires_at=NOW - DAY)
    assert rule_of(**old) == "soft_expired_unused"  # never recalled: counts from updated_at
    assert rule_of(**old, last_accessed_at=NOW - 30 * DAY) == "soft_expired_unused"  # exactly 30 days
    assert rule_of(**old, last_accessed_at=NOW - 30 * DAY + 1) == "none"  # a microsecond less


def test_a_memory_recalled_yesterday_survives_soft_expired_unused():
    assert rule_of(updated_at=NOW - 200 * DAY, soft_expires_at=NOW - 100 * DAY,
                   last_accessed_at=NOW - DAY) == "none"


def test_not_soft_expired_yet_or_recently_written_is_kept():
    assert rule_of(updated_at=NOW - 60 * DAY, soft_expires_at=NOW + 1) == "none"
    assert rule_of(updated_at=NOW - 60 * DAY, soft_expires_at=NOW) == "soft_expired_unused"
    # soft-expired (a 1-day TTL) but written 29 days ago and never recalled: not yet 30 days unused
    assert rule_of(updated_at=NOW - 29 * DAY, soft_expires_at=NOW - 28 * DAY) == "none"


def test_soft_expiry_leaves_pending_and_superseded_to_their_own_rules():
    assert rule_of(status="pending", updated_at=NOW - 60 * DAY, soft_expires_at=NOW - DAY) == "none"
    assert rule_of(status="superseded", updated_at=NOW - 60 * DAY, soft_expires_at=NOW - DAY) == "none"
    assert rule_of(status="stale", updated_at=NOW - 60 * DAY, soft_expires_at=NOW - DAY) == "soft_expired_unused"


# --- superseded_old -----------------------------------------------------------------------------


def test_superseded_just_under_and_over_90_days():
    assert rule_of(status="superseded", updated_at=NOW - 90 * DAY - HOUR) == "superseded_old"
    assert rule_of(status="superseded", updated_at=NOW - 90 * DAY) == "superseded_old"
    assert rule_of(status="superseded", updated_at=NOW - 90 * DAY + 1) == "none"
    assert rule_of(status="superseded", updated_at=NOW - 89 * DAY) == "none"
    assert rule_of(status="active", updated_at=NOW - 91 * DAY, last_accessed_at=NOW) == "none"


# --- low_confidence_stale -----------------------------------------------------------------------


def recent(**kw):
    return row(last_accessed_at=NOW - DAY, **kw)  # recalled yesterday: staleness stays low


def test_low_confidence_029_and_03_at_59_and_61_days():
    assert rule_of(**recent(confidence=0.29, updated_at=NOW - 61 * DAY)) == "low_confidence_stale"
    assert rule_of(**recent(confidence=0.3, updated_at=NOW - 61 * DAY)) == "none"
    assert rule_of(**recent(confidence=0.29, updated_at=NOW - 59 * DAY)) == "none"
    assert rule_of(**recent(confidence=0.29, updated_at=NOW - 60 * DAY)) == "low_confidence_stale"
    assert rule_of(**recent(confidence=0.29, updated_at=NOW - 60 * DAY + 1)) == "none"


def test_low_confidence_marks_only_active_rows():
    assert rule_of(**recent(status="stale", confidence=0.1, updated_at=NOW - 90 * DAY)) == "none"
    assert rule_of(**recent(status="pending", confidence=0.1, updated_at=NOW - 90 * DAY)) == "none"


def test_float32_confidence_column_compares_like_the_stored_value():
    cols = {k: [v] for k, v in recent(updated_at=NOW - 61 * DAY).items()}
    for value, expected in ((0.3, 0), (0.29, 4)):
        cols["confidence"] = pa.array([value], pa.float32())
        assert L.evaluate(cols, NOW)[0][0] == expected


# --- staleness ----------------------------------------------------------------------------------

AGE_ONLY = LifecycleConfig(staleness_weights=[1.0, 0.0, 0.0], age_half_life_days=10.0,
                           stale_threshold=0.5, evict_threshold=0.75)


def test_staleness_components_map_to_0_1():
    lc = LifecycleConfig()
    fresh = L.staleness(NOW, [NOW], [None])
    assert fresh[0] == 0.0
    # 90 days (one age half-life) since the write, never recalled: access counts from the write
    s = L.staleness(NOW, [NOW - 90 * DAY], [None], None, lc)[0]
    assert s == pytest.approx(0.4 * 0.5 + 0.3 * (1 - 0.5 ** 3))
    # recalled just now: no access decay
    s = L.staleness(NOW, [NOW - 90 * DAY], [NOW], None, lc)[0]
    assert s == pytest.approx(0.4 * 0.5)
    # an open contradiction adds its weight
    s = L.staleness(NOW, [NOW - 90 * DAY], [NOW], [True], lc)[0]
    assert s == pytest.approx(0.4 * 0.5 + 0.3)
    # a write in the future (clock skew) counts as 0 days; the ceiling is 1
    assert L.staleness(NOW, [NOW + DAY], [None])[0] == 0.0
    assert L.staleness(NOW, [NOW - 10**6 * DAY], [None], [True])[0] == pytest.approx(1.0)


def test_staleness_refuses_bad_input():
    for args in ((float(NOW), [NOW], [None]), (NOW, ["x"], [None]), (NOW, [NOW], [None, None]),
                 (NOW, [NOW], [None], ["yes"])):
        with pytest.raises(InvalidRecord):
            L.staleness(*args)


def test_staleness_weights_are_normalised():
    doubled = LifecycleConfig(staleness_weights=[0.8, 0.6, 0.6])
    a = L.staleness(NOW, [NOW - 50 * DAY], [NOW - 20 * DAY], [True])
    b = L.staleness(NOW, [NOW - 50 * DAY], [NOW - 20 * DAY], [True], doubled)
    assert a == pytest.approx(b)


def test_staleness_thresholds_just_inside_and_outside():
    # age only, half-life 10 days: score 0.5 at 10 days, 0.75 at 20 days; "above" is strict
    assert rule_of(AGE_ONLY, updated_at=NOW - 10 * DAY) == "none"
    assert rule_of(AGE_ONLY, updated_at=NOW - 10 * DAY - HOUR) == "staleness_stale"
    assert rule_of(AGE_ONLY, updated_at=NOW - 20 * DAY) == "staleness_stale"
    assert rule_of(AGE_ONLY, updated_at=NOW - 20 * DAY - HOUR) == "staleness_evict"


def test_stale_rows_can_still_be_evicted_but_are_not_marked_again():
    assert rule_of(AGE_ONLY, status="stale", updated_at=NOW - 15 * DAY) == "none"
    assert rule_of(AGE_ONLY, status="stale", updated_at=NOW - 25 * DAY) == "staleness_evict"
    assert rule_of(AGE_ONLY, status="superseded", updated_at=NOW - 25 * DAY) == "none"
    assert rule_of(AGE_ONLY, status="pending", updated_at=NOW - 25 * DAY) == "none"


def test_default_staleness_needs_a_contradiction_to_evict():
    old = row(updated_at=NOW - 150 * DAY)
    assert rules_of([old]) == ["staleness_stale"]  # 0.4*0.68 + 0.3*0.97 = 0.56
    with_flag = {k: [v] for k, v in old.items()}
    with_flag["contradicted"] = [True]
    assert L.RULES[L.evaluate(with_flag, NOW)[0][0]] == "staleness_evict"
    with_flag["contradicted"] = pa.array([None], pa.bool_())  # unknown: not contradicted
    assert L.RULES[L.evaluate(with_flag, NOW)[0][0]] == "staleness_stale"
    young = {k: [v] for k, v in row(updated_at=NOW - 10 * DAY).items()} | {"contradicted": [True]}
    assert L.RULES[L.evaluate(young, NOW)[0][0]] == "none"


def test_a_threshold_of_1_switches_the_staleness_rules_off():
    off = LifecycleConfig(stale_threshold=1.0, evict_threshold=1.0)
    cols = {k: [v] for k, v in row(updated_at=NOW - 5000 * DAY).items()} | {"contradicted": [True]}
    assert L.evaluate(cols, NOW, off)[0][0] == 0


# --- precedence ---------------------------------------------------------------------------------


def test_first_rule_in_order_wins_and_evict_beats_stale():
    # hard_expired and superseded_old both hold
    assert rule_of(status="superseded", updated_at=NOW - 100 * DAY, hard_expires_at=NOW - DAY) == "hard_expired"
    # soft_expired_unused and low_confidence_stale both hold
    assert rule_of(confidence=0.1, updated_at=NOW - 70 * DAY, soft_expires_at=NOW - DAY) == "soft_expired_unused"
    # low_confidence_stale (stale) and staleness_evict (evict): the eviction wins
    assert rule_of(AGE_ONLY, **recent(confidence=0.1, updated_at=NOW - 61 * DAY)) == "staleness_evict"
    # low_confidence_stale and staleness_stale: the earlier stale rule is named
    half = LifecycleConfig(staleness_weights=[1.0, 0.0, 0.0], age_half_life_days=60.0, evict_threshold=0.9)
    assert rule_of(half, **recent(confidence=0.1, updated_at=NOW - 61 * DAY)) == "low_confidence_stale"


# --- a reference implementation, scalar and obvious, against the vectorised one ----------------


def reference(r: dict, now: int, lc: LifecycleConfig) -> str:
    st, upd = r["status"], r["updated_at"]
    last = r["last_accessed_at"]
    last_use = upd if last is None else max(last, upd)
    soft, hard = r["soft_expires_at"], r["hard_expires_at"]
    conf = np.float32(r["confidence"])
    w = np.array(lc.staleness_weights) / sum(lc.staleness_weights)
    age = 1 - 2.0 ** (-max(now - upd, 0) / (lc.age_half_life_days * DAY))
    acc = 1 - 2.0 ** (-max(now - last_use, 0) / (lc.access_half_life_days * DAY))
    score = w[0] * age + w[1] * acc + w[2] * bool(r.get("contradicted"))
    day = lambda d: round(d * DAY)  # noqa: E731
    hit = []
    if st in ("pending", "active", "superseded", "stale") and hard is not None and hard <= now:
        hit.append("hard_expired")
    if st in ("active", "stale") and soft is not None and soft <= now and now - last_use >= day(lc.unused_days):
        hit.append("soft_expired_unused")
    if st == "superseded" and now - upd >= day(lc.superseded_days):
        hit.append("superseded_old")
    if st in ("active", "stale") and score > lc.evict_threshold:
        hit.append("staleness_evict")
    if st == "active" and conf < np.float32(lc.low_confidence) and now - upd >= day(lc.low_confidence_days):
        hit.append("low_confidence_stale")
    if st == "active" and score > lc.stale_threshold:
        hit.append("staleness_stale")
    return hit[0] if hit else "none"


def maybe(strategy):
    return st.one_of(st.none(), strategy)


ROWS = st.fixed_dictionaries({
    "status": st.sampled_from(["pending", "active", "superseded", "stale", "evicted", "tombstoned"]),
    "confidence": st.sampled_from([0.1, 0.29, 0.3, 0.31, 0.6, 1.0]),
    "updated_at": st.integers(NOW - 800 * DAY, NOW + DAY),
    "last_accessed_at": maybe(st.integers(NOW - 800 * DAY, NOW + DAY)),
    "soft_expires_at": maybe(st.integers(NOW - 400 * DAY, NOW + 400 * DAY)),
    "hard_expires_at": maybe(st.integers(NOW - 400 * DAY, NOW + 400 * DAY)),
    "contradicted": st.booleans(),
})
CONFIGS = st.builds(
    lambda w, a, b, th: LifecycleConfig(staleness_weights=w, age_half_life_days=a, access_half_life_days=b,
                                        stale_threshold=min(th), evict_threshold=max(th)),
    st.lists(st.sampled_from([0.0, 0.1, 0.3, 0.4, 1.0]), min_size=3, max_size=3).filter(lambda w: sum(w) > 0),
    st.sampled_from([5.0, 30.0, 90.0]), st.sampled_from([7.0, 30.0]),
    st.lists(st.sampled_from([0.2, 0.5, 0.7, 0.8, 0.95, 1.0]), min_size=2, max_size=2),
)


def as_arrow(rows: list[dict], skip: int) -> dict:
    """The rows as Arrow columns of the L2 types, each sliced ``skip`` rows in (offsets in the
    validity bitmaps), the way a scan hands them over."""
    ts = pa.timestamp("us", tz="UTC")
    types = {"status": pa.string(), "confidence": pa.float32(), "contradicted": pa.bool_()}
    pad = [rows[0]] * skip
    return {k: pa.array([r[k] for r in pad + rows], types.get(k, ts)).slice(skip) for k in rows[0]}


@settings(max_examples=150, deadline=None)
@given(st.lists(ROWS, min_size=1, max_size=40), CONFIGS, st.integers(0, 20), st.booleans())
def test_vectorised_rules_equal_the_scalar_reference(rows, lc, skip, arrow):
    cols = as_arrow(rows, skip) if arrow else {k: [r[k] for r in rows] for k in rows[0]}
    got = [L.RULES[c] for c in L.evaluate(cols, NOW, lc)[0]]
    want = [reference(r, NOW, lc) for r in rows]
    # The score may sit within rounding of a threshold; only then may the two disagree.
    for g, w, r in zip(got, want, rows):
        if g != w:
            w_ = np.array(lc.staleness_weights) / sum(lc.staleness_weights)
            s = L.staleness(NOW, [r["updated_at"]], [r["last_accessed_at"]], [r["contradicted"]], lc)[0]
            assert min(abs(s - lc.stale_threshold), abs(s - lc.evict_threshold)) < 1e-9, (g, w, r, w_)


# --- input forms --------------------------------------------------------------------------------


def test_arrow_numpy_and_lists_give_the_same_rules():
    rows = [row(hard_expires_at=NOW - DAY), row(status="superseded", updated_at=NOW - 100 * DAY),
            row(updated_at=NOW - 60 * DAY, soft_expires_at=NOW - DAY, last_accessed_at=NOW - 40 * DAY), row()]
    as_lists = {k: [r[k] for r in rows] for k in rows[0]}
    ts = pa.timestamp("us", tz="UTC")
    as_arrow = pa.RecordBatch.from_pydict({
        "status": pa.array(as_lists["status"]), "confidence": pa.array(as_lists["confidence"], pa.float32()),
        **{k: pa.array(as_lists[k], ts) for k in ("updated_at", "last_accessed_at", "soft_expires_at", "hard_expires_at")},
    })
    nat = np.datetime64("NaT", "us")
    as_numpy = {
        "status": np.array(as_lists["status"], dtype=object), "confidence": np.array(as_lists["confidence"]),
        **{k: np.array([nat if v is None else np.datetime64(v, "us") for v in as_lists[k]])
           for k in ("updated_at", "last_accessed_at", "soft_expires_at", "hard_expires_at")},
    }
    chunked = {k: pa.chunked_array([as_arrow.column(k)[:2], as_arrow.column(k)[2:]]) for k in as_arrow.schema.names}
    want = [1, 3, 2, 0]
    for cols in (as_lists, as_arrow, as_numpy, chunked):
        assert list(L.evaluate(cols, NOW)[0]) == want
    assert list(L.evaluate(pa.Table.from_batches([as_arrow]), np.int64(NOW))[0]) == want


def test_sliced_arrow_columns_with_nulls_read_the_right_rows():
    hard = pa.array([None, NOW - DAY, None, NOW + DAY, NOW - DAY, None, None, None, NOW - 1, None], pa.int64())
    n = len(hard)
    base = {"status": pa.array(["active"] * n), "confidence": pa.array([0.9] * n, pa.float32()),
            "updated_at": pa.array([NOW] * n, pa.int64()), "last_accessed_at": pa.nulls(n, pa.int64()),
            "soft_expires_at": pa.nulls(n, pa.int64()), "hard_expires_at": hard}
    for start in range(0, 9):
        cols = {k: v.slice(start) for k, v in base.items()}
        want = [1 if v is not None and v <= NOW else 0 for v in hard.to_pylist()[start:]]
        assert list(L.evaluate(cols, NOW)[0]) == want


def test_bad_inputs_are_typed_errors():
    cols = {k: [v] for k, v in row().items()}
    with pytest.raises(InvalidRecord, match="updated_at"):
        L.evaluate({k: v for k, v in cols.items() if k != "updated_at"}, NOW)
    with pytest.raises(InvalidRecord, match="rows"):
        L.evaluate(cols | {"confidence": [0.5, 0.5]}, NOW)
    with pytest.raises(InvalidRecord, match="rows"):
        L.evaluate(cols | {"contradicted": [True, False]}, NOW)
    with pytest.raises(InvalidRecord, match="now_us"):
        L.evaluate(cols, float(NOW))
    with pytest.raises(InvalidRecord, match="now_us"):
        L.evaluate(cols, True)
    with pytest.raises(InvalidRecord, match="timestamp"):
        L.evaluate(cols | {"updated_at": np.array([1.5])}, NOW)
    with pytest.raises(InvalidRecord, match="timestamp"):
        L.evaluate(cols | {"updated_at": pa.array(["x"])}, NOW)
    for name, bad in (("status", [1]), ("status", pa.array([1])), ("updated_at", ["x"]), ("confidence", ["high"]),
                      ("confidence", [object()]), ("hard_expires_at", [10**30]), ("contradicted", [{"a": 1}])):
        with pytest.raises(InvalidRecord, match=name):
            L.evaluate(cols | {name: bad}, NOW)


def test_nanosecond_timestamps_truncate_to_microseconds():
    cols = {k: [v] for k, v in row().items()}
    cols["hard_expires_at"] = pa.array([NOW * 1000 + 999], pa.timestamp("ns", tz="UTC"))
    assert L.RULES[L.evaluate(cols, NOW)[0][0]] == "hard_expired"


def test_empty_batch():
    cols = {k: [] for k in L.RULE_COLUMNS}
    rule, action = L.evaluate(cols, NOW)
    assert rule.shape == action.shape == (0,)


def test_config_object_or_section_or_defaults():
    c = Config.from_dict({"lifecycle": {"superseded_days": 10}})
    r = row(status="superseded", updated_at=NOW - 11 * DAY)
    assert rules_of([r], c) == ["superseded_old"]
    assert rules_of([r], c.lifecycle) == ["superseded_old"]
    assert rules_of([r]) == ["none"]


# --- TTL policy ---------------------------------------------------------------------------------


def test_ttl_defaults_per_category():
    assert L.ttl_policy(None) == (30.0, 365.0)
    assert L.ttl_policy("default") == (30.0, 365.0)
    assert L.ttl_policy("preference") == (90.0, 365.0)
    assert L.ttl_policy("task_learning") == (30.0, 365.0)
    assert L.ttl_policy("entity_fact") == (None, None)
    assert L.review_days("entity_fact") == 180.0
    assert L.review_days("default") is None
    for name in L.CATEGORIES:
        L.ttl_policy(name)  # every named category has a policy


def test_ttl_overrides_and_never():
    assert L.ttl_policy("default", ttl_days=10) == (10.0, 10.0)  # the category's soft 30 is cut to 10
    assert L.ttl_policy("default", ttl_days=100, soft_ttl_days=5) == (5.0, 100.0)
    assert L.ttl_policy("default", ttl_days="never") == (30.0, None)
    assert L.ttl_policy("default", ttl_days=math.inf, soft_ttl_days="never") == (None, None)
    assert L.ttl_policy("entity_fact", ttl_days=7) == (None, 7.0)
    assert L.ttl_policy("preference", soft_ttl_days=0.5) == (0.5, 365.0)
    assert L.ttl_policy("default", ttl_days=36_500) == (30.0, 36_500.0)


@pytest.mark.parametrize("bad", [0, -1, -0.0, float("nan"), -math.inf, True, False, "30", "Never", 36_500.01,
                                 10**400, [30], None.__class__])
def test_bad_ttl_values_are_invalid_records(bad):
    with pytest.raises(InvalidRecord):
        L.ttl_policy("default", ttl_days=bad)
    with pytest.raises(InvalidRecord):
        L.ttl_policy("default", soft_ttl_days=bad)


def test_soft_longer_than_hard_is_refused_when_asked_for():
    with pytest.raises(InvalidRecord):
        L.ttl_policy("default", ttl_days=10, soft_ttl_days=20)
    with pytest.raises(InvalidRecord):
        L.ttl_policy("default", soft_ttl_days=400)  # longer than the category's hard 365


def test_unknown_category_is_described_not_echoed():
    with pytest.raises(InvalidRecord) as e:
        L.ttl_policy("my-secret-category")
    assert "my-secret-category" not in str(e.value) and "18 characters" in str(e.value)
    with pytest.raises(InvalidRecord):
        L.ttl_policy(["default"])
    with pytest.raises(InvalidRecord):
        L.review_days("nope")


def test_categories_added_in_config():
    c = Config.from_dict({"lifecycle": {"ttl": {"meeting_note": {"soft_days": 3}}}})
    assert L.ttl_policy("meeting_note", cfg=c) == (3.0, 365.0)  # hard from the default category


def test_expiries_from_updated_at():
    assert L.expiries(NOW, 30.0, 365.0) == (NOW + 30 * DAY, NOW + 365 * DAY)
    assert L.expiries(NOW, None, None) == (None, None)
    assert L.expiries(NOW, 0.5, None) == (NOW + DAY // 2, None)


def test_refresh_restarts_the_clock_and_raises_confidence():
    rec = {"updated_at": NOW - 10 * DAY, "soft_expires_at": NOW + 20 * DAY, "hard_expires_at": None,
           "confidence": 0.7}
    got = L.refreshed(rec, NOW)
    assert got == {"updated_at": NOW, "soft_expires_at": NOW + 30 * DAY, "hard_expires_at": None,
                   "confidence": pytest.approx(0.75)}
    assert L.refreshed_confidence(0.98) == 1.0
    assert L.refreshed_confidence(0.5, LifecycleConfig(refresh_confidence_bump=0.2)) == pytest.approx(0.7)
    assert np.allclose(L.refreshed_confidence(np.array([0.1, 0.99])), [0.15, 1.0])
    for bad in (1.5, -0.1, float("nan")):
        with pytest.raises(InvalidRecord):
            L.refreshed_confidence(bad)
    for bad in ([0.5, 2.0], "0.5", None, True, ["a"], [float("nan")]):
        with pytest.raises(InvalidRecord):
            L.refreshed_confidence(bad)


def test_a_new_version_inherits_the_policy_of_the_one_it_supersedes():
    soft, hard = L.expiries(NOW - 100 * DAY, *L.ttl_policy("preference"))
    old = {"updated_at": NOW - 100 * DAY, "soft_expires_at": soft, "hard_expires_at": hard}
    assert L.inherit_expiries(old, NOW) == L.expiries(NOW, 90.0, 365.0)
    never = {"updated_at": NOW - 100 * DAY, "soft_expires_at": None, "hard_expires_at": None}
    assert L.inherit_expiries(never, NOW) == (None, None)
    # timestamps as Lance hands them back (datetimes) work too, exactly
    as_dt = {k: datetime.fromtimestamp(v / 1e6, UTC) for k, v in old.items()}
    assert L.inherit_expiries(as_dt, NOW) == L.expiries(NOW, 90.0, 365.0)
    assert L.restart_expiries(NOW - 1, NOW + 5, None, NOW) == (NOW + 6, None)
    naive = datetime(2026, 3, 1, 12, 0, 0, 123457)
    assert L.restart_expiries(naive, naive, None, NOW)[0] == NOW
    for bad in ((None, None, None, NOW), ("x", None, None, NOW), (NOW, 1.5, None, NOW), (NOW, None, None, True)):
        with pytest.raises(InvalidRecord):
            L.restart_expiries(*bad)
    with pytest.raises(InvalidRecord):
        L.refreshed({"updated_at": NOW, "confidence": "high"}, NOW)


def test_a_write_dated_in_the_future_counts_as_age_0():
    only_contradiction = LifecycleConfig(staleness_weights=[0.0, 0.0, 1.0], stale_threshold=0.2, evict_threshold=0.2)
    cols = {k: [v] for k, v in row(updated_at=NOW + 1).items()} | {"contradicted": [True]}
    assert L.RULES[L.evaluate(cols, NOW, only_contradiction)[0][0]] == "staleness_evict"
