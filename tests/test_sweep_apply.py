"""The pieces that make an applied sweep fast, without a Ray runtime: slices of whole scopes
(an owner decides the next while the ledger commits this one), the sweep operation's
validation, the ledger's write-ahead log folded in by the writer rather than inside commits,
and decide_sweep's second look at hot memories."""

from __future__ import annotations

import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memactors.actors import sweeper
from memactors.core.errors import ValidationError
from memactors.core.idempotency import IdempotencyCache
from memactors.core.ops import SweepOp
from memactors.core.project import Change
from memactors.store.entries import Entry, encode
from memactors.store.ledger import Ledger

MID = "0" * 31


def _reference_slices(rows: list, size: int) -> list[list]:
    """An owner's rows sorted by (scope, id) cut the plain way: a slice ends where the scope
    it reaches ``size`` in ends."""
    out, start = [], 0
    while start < len(rows):
        end = min(start + size, len(rows))
        while end < len(rows) and rows[end][1] == rows[end - 1][1]:
            end += 1
        out.append(rows[start:end])
        start = end
    return out


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 40), st.integers(0, 999), st.integers(1, 6)), max_size=300),
       st.integers(1, 5), st.integers(1, 50), st.booleans())
def test_a_plans_rows_reach_their_scopes_owners_in_slices_of_whole_scopes(rows, owners, size, chunked):
    # by column (sweeper.owner_slices) as a loop over the rows does it: every row once, to the
    # owner of its scope's tenant, each owner's slices in order its rows sorted by (scope, id)
    # cut where a scope ends once ``size`` are reached, codes as ints; owners take turns
    import pyarrow as pa

    from memactors.core.scopes import parse_scope
    from memactors.engine.naming import owner_index

    plan = [(f"{m:032x}", f"/org/t{t:02d}/user/u{m % 3}/", code) for t, m, code in rows]
    plan = list({r[0]: r for r in plan}.values())  # a plan names a memory once
    table = pa.table({"memory_id": [r[0] for r in plan], "scope": [r[1] for r in plan],
                      "rule": pa.array([r[2] for r in plan], pa.int8())})
    if chunked and table.num_rows > 1:  # a plan gathered from several fragments' tasks
        half = table.num_rows // 2
        table = pa.concat_tables([table.slice(0, half), table.slice(half)])
    want: dict = {}
    for r in sorted(plan, key=lambda r: (r[1], r[0])):
        want.setdefault(owner_index(parse_scope(r[1]), owners), []).append(r)
    old = sweeper.SLICE
    sweeper.SLICE = size
    try:
        got = list(sweeper.owner_slices(table, owners))
    finally:
        sweeper.SLICE = old
    by_owner: dict = {}
    for oi, k, part in got:
        assert k == len(by_owner.setdefault(oi, []))  # each owner's slices in order
        by_owner[oi].append(part)
    assert by_owner == {oi: _reference_slices(part, size) for oi, part in want.items()}
    assert all(type(r[2]) is int for _, _, part in got for r in part)
    firsts = [oi for oi, k, _ in got if k == 0]
    assert [oi for oi, _, _ in got[:len(firsts)]] == sorted(firsts)  # every owner's first slice first


def test_a_sweep_op_takes_canonical_scopes_and_rule_codes_only():
    ok = SweepOp([(MID + "a", "/org/acme/user/u1/", 1)], "memactors-lifecycle", "gc-1-0-0", 0)
    assert ok.validate() is ok
    for bad in ([(MID + "a", "/org/acme/user/u1", 1)],  # not canonical: the owner locks by the text
                [(MID + "a", "/org/acme/../x/", 1)],
                [(MID + "A", "/org/acme/user/u1/", 1)],
                [(MID + "a", "/org/acme/user/u1/", 0)],  # code 0 is "keep"
                [(MID + "a", "/org/acme/user/u1/", True)],
                [(MID + "a", "/org/acme/user/u1/", 1), (MID + "b", "/org/acme/user/u1/", True)],  # True == 1
                [(MID + "a", "/org/acme/user/u1/", 1.0)],
                [(MID + "a", "/org/acme/user/u1/")],
                # ids checked together: two wrong lengths that join into valid hex, one bad among many
                [(MID, "/org/acme/user/u1/", 1), (MID + "ab", "/org/acme/user/u1/", 1)],
                [(f"{i:032x}", "/org/acme/user/u1/", 1) for i in range(500)] + [(MID + "g", "/org/acme/user/u1/", 1)],
                [(f"{i:032x}", "/org/acme/user/u1/", 1) for i in range(500)] + [(7, "/org/acme/user/u1/", 1)]):
        with pytest.raises(ValidationError):
            SweepOp(bad, "memactors-lifecycle", "gc-1-0-0", 0).validate()


def _status_entries(n: int, k: int) -> dict:
    changes = [Change("status", "/org/acme/user/u1/", f"{i + k * n:032x}", patch={"status": "evicted"},
                      reason="gc: hard_expired") for i in range(n)]
    return encode([Entry(f"gc-test-{k}", "memactors-lifecycle", 1, changes, b"{}")])


def test_the_ledger_log_is_folded_in_by_checkpoint_and_the_limit_is_set(tmp_path):
    led = Ledger(str(tmp_path / "ledger.duckdb"), str(tmp_path / "keys"), wal_max_mb=64)
    try:
        assert led.con.execute("SELECT current_setting('checkpoint_threshold')").fetchone()[0] == "64.0 MiB"
        known = IdempotencyCache(86_400_000_000)
        for k in range(3):
            out = led.commit(_status_entries(500, k), known)
            assert out[0][0] == "ok" and len(out[0][1]) == 500
        assert led.wal_bytes() > 0  # under the limit: nothing folded in yet
        led.checkpoint()
        assert led.wal_bytes() == 0
        assert led.count_events() == 1_500 and led.verify().ok
    finally:
        led.close()
    assert not os.path.exists(str(tmp_path / "ledger.duckdb.wal"))


def test_decide_sweep_checks_hot_memories_again_and_takes_cold_ones_as_planned():
    from memactors.core import lifecycle as L
    from memactors.core import records as R
    from memactors.core.changes import Ctx, decide_sweep
    from memactors.core.clock import US_PER_DAY
    from memactors.core.config import LifecycleConfig
    from memactors.core.versions import ScopeState

    scope, other = "/org/a/user/u/", "/org/a/user/v/"
    lc = LifecycleConfig()
    now = 400 * US_PER_DAY

    def rec(text, updated):
        req = R.WriteRequest(scope, text, "agent", ttl_days=30).validate()
        return R.build_record(req, text, R.new_memory_id(), updated)

    due, refreshed = rec("due since long", 1), rec("written again yesterday", now - US_PER_DAY)
    state = ScopeState()
    for r in (due, refreshed):
        state.put(r)
    cold = R.new_memory_id()  # a memory of a scope this owner does not hold hot
    hard = L.RULES.index("hard_expired")
    rows = [(due["memory_id"], scope, hard), (refreshed["memory_id"], scope, hard), (cold, other, hard)]
    out = decide_sweep(SweepOp(rows, "memactors-lifecycle", "gc-x-0-0", 0),
                       Ctx(None, now, lc, state_of={scope: state}.get))
    assert out.result == {"decision": "swept", "by_rule": {"hard_expired": 2}, "by_scope": {scope: 1, other: 1},
                          "skipped": 1}
    # past its hard TTL a memory is erased: a tombstone (its sensitivity where the record is at
    # hand), its data key destroyed with it
    assert [(c.action, c.memory_id, c.patch, c.reason) for c in out.changes] == [
        ("forget", due["memory_id"], {"status": "tombstoned", "sensitivity": "internal"}, "gc: hard_expired"),
        ("forget", cold, {"status": "tombstoned"}, "gc: hard_expired")]
    assert out.destroy_keys == [due["memory_id"], cold]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 5), st.booleans(), st.sampled_from(["keep", "evict", "stale", "review"])),
                min_size=1, max_size=40), st.booleans())
def test_a_sweep_applied_in_place_leaves_what_a_staged_commit_leaves(memories, counted):
    # A batch of bulk operations alone changes the hot states in place once committed
    # (HotCache.apply_bulk); any other batch stages them and commits the layers. Both end in
    # the same state, index for index, and the same memory -> scope map.
    import numpy as np

    from memactors.core import events as E
    from memactors.core import lifecycle as L
    from memactors.core import records as R
    from memactors.core.project import apply_bulk
    from memactors.core.versions import ScopeState
    from memactors.engine.hot import HotCache

    scope = "/org/a/user/u/"

    def build():
        hot, state = HotCache(10_000, 4), ScopeState()
        for i, (fact, entity, _) in enumerate(memories):
            text = f"alice likes tea number {fact}" if entity else f"note {i}: alice is not in {fact} rooms"
            req = R.WriteRequest(scope, text, "agent", **({"subject": "alice", "predicate": f"p{fact}",
                                                             "object": str(i)} if entity else {})).validate()
            r = R.build_record(req, text, f"{i:032x}", 1_000 + i)
            r["version"] = state.next_version(r["entity_key"]) if r.get("entity_key") else 1
            state.put(r, np.full(4, 0.5, np.float32))
        if counted:
            state.build_cues()
        hot.install(scope, state)
        return hot

    changes = []
    for i, (_, _, what) in enumerate(memories):
        mid = f"{i:032x}"
        if what == "evict":
            changes.append(Change(E.STATUS, scope, mid, patch={"status": "evicted"}, reason="gc"))
        elif what == "stale":
            changes.append(Change(E.STATUS, scope, mid, patch={"status": "stale"}, reason="gc"))
        elif what == "review":
            changes.append(Change(E.ANNOTATE, scope, mid, patch={"review": L.PERIODIC_REVIEW}, reason="gc"))
    in_place, staged = build(), build()
    in_place.apply_bulk(changes)
    layers = staged.get(scope).stage()
    apply_bulk({scope: layers}.get, changes)
    staged.commit(scope, layers)
    a, b = in_place.get(scope), staged.get(scope)
    for f in ("records", "by_entity", "by_hash", "versions", "disputed", "vectors", "cues", "cue_of"):
        assert list(getattr(a, f) or {}) == list(getattr(b, f) or {}), f
        if f != "vectors":
            assert getattr(a, f) == getattr(b, f), f
    assert a.gen == (1 if changes else 0) and in_place.where == staged.where  # a changed state's index is built again
    assert all(in_place.where[m] == scope for m in a.records) and set(in_place.where) == set(a.records)


@settings(max_examples=120, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.sampled_from(["active", "stale", "pending", "superseded"]),
                          st.booleans()), min_size=1, max_size=30),
       st.data(), st.booleans())
def test_removing_many_at_once_leaves_the_state_its_survivors_build(memories, data, counted):
    # A sweep takes its evictions out of a hot state in one call per scope (ScopeState.remove_many:
    # a fact's versions rebuilt once, the usual index cases inline). What is left must be what the
    # survivors alone build, index for index: live versions side by side (disputed), a fact's
    # superseded versions held by number only, content hashes, cue counts.
    import numpy as np

    from memactors.core import records as R
    from memactors.core.versions import ScopeState

    scope = "/org/a/user/u/"
    recs = []
    for i, (fact, status, entity) in enumerate(memories):
        # Texts differ: two live memories of one text in a scope (a hidden twin, written by writers
        # not cleared for each other) keep only the newer in the hash index, a known limit.
        text = f"alice likes tea number {i}" if entity else f"note {i}: alice is not in room {fact}"
        req = R.WriteRequest(scope, text, "agent", **({"subject": "alice", "predicate": f"p{fact}",
                                                       "object": str(i)} if entity else {})).validate()
        r = R.build_record(req, text, f"{i:032x}", 1_000 + i)
        r["status"], r["version"] = status, i + 1
        recs.append(r)
    gone = data.draw(st.sets(st.sampled_from([r["memory_id"] for r in recs])))

    def build(keep):
        state = ScopeState()
        for r in recs:
            if r["memory_id"] in keep:
                state.put(dict(r), np.full(4, 0.5, np.float32))
        if counted:
            state.build_cues()
        return state

    every = {r["memory_id"] for r in recs}
    state = build(every)
    state.remove_many(sorted(gone))
    want = build(every - gone)
    for f in ("records", "by_entity", "by_hash", "versions", "disputed", "vectors", "cues", "cue_of", "key_of",
              "level_of"):
        got, exp = getattr(state, f), getattr(want, f)
        if f == "vectors":
            assert set(got) == set(exp), f
        else:
            assert (got or {}) == (exp or {}), f
