"""A GC plan (memactors.core.gc_plan): counts per rule, tenant and both, bytes, ids, output,
and merging partial plans in order gives the plan of the whole. Pure."""

from __future__ import annotations

import orjson
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memactors.core import gc_plan as G
from memactors.core.clock import US_PER_DAY, ManualClock
from memactors.core.errors import InvalidRecord

NOW = ManualClock().advance(days=365)
DAY = US_PER_DAY


def table(specs: list[tuple[str, str, dict]]) -> pa.Table:
    """Rows from (memory_id, scope, overrides of an active, fresh memory)."""
    rows = []
    for mid, scope, kw in specs:
        r = {"memory_id": mid, "scope": scope, "status": "active", "confidence": 0.9, "updated_at": NOW - DAY,
             "last_accessed_at": None, "soft_expires_at": None, "hard_expires_at": None}
        r.update(kw)
        rows.append(r)
    ts = pa.timestamp("us", tz="UTC")
    schema = pa.schema([("memory_id", pa.string()), ("scope", pa.string()), ("status", pa.string()),
                        ("confidence", pa.float32()), ("updated_at", ts), ("last_accessed_at", ts),
                        ("soft_expires_at", ts), ("hard_expires_at", ts)])
    return pa.Table.from_pylist(rows, schema=schema)


EXPIRED = {"hard_expires_at": NOW - DAY}
OLD_SUPERSEDED = {"status": "superseded", "updated_at": NOW - 100 * DAY}
LOW = {"confidence": 0.1, "updated_at": NOW - 61 * DAY, "last_accessed_at": NOW}
SPECS = [
    ("a1", "/org/acme/user/alice/", EXPIRED),
    ("a2", "/org/acme/user/alice/task/t1/", OLD_SUPERSEDED),
    ("a3", "/org/acme/", LOW),
    ("a4", "/org/acme/user/bob/", {}),
    ("b1", "/org/beta/project/p/", EXPIRED),
    ("g1", "/global/", EXPIRED),
    ("g2", "/global/", {"status": "evicted", **EXPIRED}),
]


def test_counts_by_rule_tenant_and_both():
    p = G.plan_columns(table(SPECS), NOW, row_bytes=100.0)
    assert p.rows_scanned == 7 and p.planned == 5
    assert p.by_rule == {"hard_expired": 3, "soft_expired_unused": 0, "superseded_old": 1,
                         "low_confidence_stale": 1, "staleness_evict": 0, "staleness_stale": 0,
                         "review_due": 0}
    assert p.by_tenant == {"acme": 3, "beta": 1, "global": 1}
    assert p.by_rule_tenant["hard_expired"] == {"acme": 1, "beta": 1, "global": 1}
    assert p.by_rule_tenant["superseded_old"] == {"acme": 1}
    assert p.bytes_total == 500 and p.bytes_by_tenant == {"acme": 300, "beta": 100, "global": 100}
    assert p.ids("hard_expired").to_pylist() == ["a1", "b1", "g1"]
    assert p.ids(action="evict").to_pylist() == ["a1", "a2", "b1", "g1"]
    assert p.ids(action="stale").to_pylist() == ["a3"]
    assert p.ids().to_pylist() == ["a1", "a2", "a3", "b1", "g1"]
    assert {k: v.to_pylist() for k, v in p.ids_by_rule.items() if len(v)} == {
        "hard_expired": ["a1", "b1", "g1"], "superseded_old": ["a2"], "low_confidence_stale": ["a3"]}
    assert p.rows["scope"].to_pylist()[:2] == ["/org/acme/user/alice/", "/org/acme/user/alice/task/t1/"]


def test_per_row_bytes():
    p = G.plan_columns(table(SPECS), NOW, row_bytes=[1, 2, 3, 4, 5, 6, 7])
    assert p.bytes_by_rule["hard_expired"] == 1 + 5 + 6


def test_nothing_to_do():
    p = G.plan_columns(table(SPECS[3:4]), NOW)
    assert p.planned == 0 and p.rows_scanned == 1 and p.by_tenant == {} and p.ids().to_pylist() == []
    assert "total" in p.summary() and p.to_dict()["planned"] == 0
    empty = G.merge([], now_us=NOW)
    assert empty.rows_scanned == 0 and empty.digest() == G.Plan(now_us=NOW).digest()


def test_output_is_readable_and_json_able():
    p = G.plan_columns(table(SPECS), NOW, row_bytes=1500.0)
    p.seconds = 0.5
    text = p.summary()
    for word in ("hard_expired", "superseded_old", "low_confidence_stale", "acme", "global", "7.5 kB"):
        assert word in text
    d = p.to_dict(ids=True)
    assert orjson.loads(orjson.dumps(d)) == d
    assert d["by_rule"]["hard_expired"] == {"action": "evict", "count": 3, "bytes": 4500}
    assert d["ids"]["superseded_old"] == ["a2"] and d["now"] == "2027-01-01T00:00:00Z"
    assert d["by_tenant"]["acme"] == {"count": 3, "bytes": 4500}


def test_tenants_of_scopes():
    got = G.tenants_of(pa.array(["/org/a.b-c_d/user/u/", "/global/", "/org/x/", "bogus"])).to_pylist()
    assert got == ["a.b-c_d", "global", "x", "?"]


def test_bad_requests():
    p = G.plan_columns(table(SPECS), NOW)
    with pytest.raises(InvalidRecord):
        p.ids("no_such_rule")
    with pytest.raises(InvalidRecord):
        p.ids(action="delete")
    with pytest.raises(InvalidRecord, match="memory_id"):
        G.plan_columns(table(SPECS).drop(["memory_id"]), NOW)
    with pytest.raises(InvalidRecord):
        G.merge([p, G.plan_columns(table(SPECS), NOW + 1)])
    with pytest.raises(InvalidRecord):
        G.merge([])
    cols = {k: table(SPECS).column(k) for k in G.PLAN_COLUMNS if k in table(SPECS).column_names}
    for name, bad in (("memory_id", [1] * 7), ("scope", [object()] * 7), ("memory_id", pa.array(range(7)))):
        with pytest.raises(InvalidRecord, match=name):
            G.plan_columns(cols | {name: bad}, NOW)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 7), min_size=0, max_size=4))
def test_merging_parts_in_order_equals_the_whole(cuts):
    t = table(SPECS * 3)
    whole = G.plan_columns(t, NOW, row_bytes=10.0)
    bounds = [0, *sorted(cuts), t.num_rows]
    parts = [G.plan_columns(t.slice(a, b - a), NOW, row_bytes=10.0) for a, b in zip(bounds, bounds[1:])]
    merged = G.merge(parts)
    assert merged.same_decisions(whole)
    assert merged.digest() == whole.digest()
    assert merged.bytes_total == whole.bytes_total and merged.by_rule_tenant == whole.by_rule_tenant
    # and a builder fed the same slices
    b = G.PlanBuilder(NOW)
    for a, c in zip(bounds, bounds[1:]):
        b.add(t.slice(a, c - a), 10.0)
    assert b.finish().digest() == whole.digest()


def test_digest_sees_every_decision():
    base = G.plan_columns(table(SPECS), NOW)
    swapped = G.plan_columns(table([SPECS[1], SPECS[0], *SPECS[2:]]), NOW)
    fewer = G.plan_columns(table(SPECS[:-2]), NOW)
    assert len({base.digest(), swapped.digest(), fewer.digest()}) == 3


def test_an_applied_sweeps_summary_does_not_call_itself_a_dry_run():
    import memactors

    with memactors.connect("memory://", clock=ManualClock()) as rt:
        s = "/org/acme/user/alice/"
        rt.grant("a", s, write=True)
        rt.write(s, "Alice prefers window seats", actor="a", ttl_days=1)
        rt.clock.advance(days=2)
        planned, applied = rt.gc(dry_run=True).summary(), rt.gc().summary()
    assert planned.startswith("GC plan (dry run, nothing changed)")
    assert "dry run" not in applied and applied.startswith("GC sweep") and "applied: 1 changes" in applied
