"""A sweep's joint flush on the process host (no Ray): every owner's share of the sweep reaches
Lance together, written by the first owner (one delete for all, one merge per column set),
and an owner whose partner never sends keeps its batch for its own next flush."""

from __future__ import annotations

import concurrent.futures as cf
import os
import time

import lance
import pytest

import memactors
from memactors.actors import sweeper
from memactors.actors.flush_hold import deferred
from memactors.core.scopes import parse_scope
from memactors.engine import flush as flush_mod
from memactors.engine.naming import owner_index
from memactors.engine.outbox import Batch
from memactors.testing import unique_org


@pytest.fixture
def world(tmp_path):
    clock = memactors.ManualClock()
    rt = memactors.connect(str(tmp_path / "data"), clock=clock, host="process",
                           config={"runtime": {"num_owners": 2, "l2_flush_interval_s": 0.05},
                                   "lifecycle": {"sweep_interval_s": 0}})
    scopes = {}
    while len(scopes) < 2:  # a scope on each owner
        org = unique_org("joint")
        scopes.setdefault(owner_index(parse_scope(f"/org/{org}/"), 2), f"/org/{org}/user/u/")
    actor = "ag-joint"
    for s in scopes.values():
        rt.grant(actor, s, write=True)
    yield rt, clock, [scopes[0], scopes[1]], actor
    rt.close()


def _table(rt):
    return lance.dataset(os.path.join(rt.data_dir, "l2", "memories.lance"))


def _in_l2(rt, memory_id: str) -> int:
    return _table(rt).count_rows(filter=f"memory_id = '{memory_id}'")


def _table_written(rt, scope: str, actor: str) -> None:
    rt.write(scope, "a first note: the table exists", actor=actor)
    rt.flush()


def _failed(message: str) -> cf.Future:
    """An owner's flush call that failed (as the process host's, or Ray's, call reports it)."""
    gone = cf.Future()
    gone.set_exception(memactors.StoreError(message))
    return gone


def test_a_sweeps_shares_land_in_one_delete_for_every_owner(world):
    rt, clock, scopes, actor = world
    short = {s: [rt.write(s, f"parked on level {i} of {s}", actor=actor, ttl_days=2).memory_id for i in range(5)]
             for s in scopes}
    kept = {s: rt.write(s, f"born in Hangzhou, says {s}", actor=actor, ttl_days="never").memory_id for s in scopes}
    rt.flush()
    before = _table(rt).version
    clock.advance(days=3)
    res = rt.gc()
    assert res.applied["by_rule"]["hard_expired"] == 10
    table = _table(rt)
    gone = [m for ids in short.values() for m in ids]
    assert table.count_rows(filter=" OR ".join(f"memory_id = '{m}'" for m in gone)) == 0
    assert table.count_rows(filter=" OR ".join(f"memory_id = '{m}'" for m in kept.values())) == 2
    ops = [type(t.operation).__name__ for t in table.get_transactions(table.version - before)
           if t is not None and t.read_version >= before]
    assert ops.count("Delete") == 1, ops  # both owners' evictions in one commit
    for s in scopes:  # and recall agrees: nothing evicted comes back, the rest does
        hits = rt.recall("parked level Hangzhou", actor=actor, task_id="t", allowed_scopes=[s], purpose="test",
                         threshold=0.0).hits
        assert {h.memory_id for h in hits} == {kept[s]}


def test_an_owner_whose_partner_never_sends_keeps_its_batch_for_its_next_flush(world, monkeypatch):
    rt, clock, scopes, actor = world
    monkeypatch.setattr(flush_mod, "JOINT_WAIT_S", 0.3)
    _table_written(rt, scopes[1], actor)
    owner = rt._owner(scopes[0])  # noqa: SLF001
    with deferred(rt._owners):  # noqa: SLF001 - the flush loop waits, as during a sweep
        w = rt.write(scopes[0], "a note that waits for its partner", actor=actor)
        with pytest.raises(memactors.StoreError):  # a joint of two, the other owner never asked
            rt._calls.get(owner.flush.remote(joint=("never-complete", 2, None)))  # noqa: SLF001
        assert _in_l2(rt, w.memory_id) == 0
    rt._calls.get(owner.flush.remote())  # noqa: SLF001 - its own flush writes what it kept
    assert _in_l2(rt, w.memory_id) == 1


def test_a_joint_whose_partner_fails_is_called_off_at_once(world):
    # The partner's flush fails before it sends its share (its process gone, its ledger
    # unreachable): the sweeper calls the joint off, so the first owner's flush fails now, not
    # after JOINT_WAIT_S (30 s), keeps its batch, and a share arriving late fails at once.
    rt, clock, scopes, actor = world
    _table_written(rt, scopes[1], actor)
    owner = rt._owner(scopes[0])  # noqa: SLF001
    with deferred(rt._owners):  # noqa: SLF001
        w = rt.write(scopes[0], "a note whose partner fails", actor=actor)
        mine = owner.flush.remote(joint=("partner-fails", 2, None))
        t0 = time.monotonic()
        with pytest.raises(memactors.StoreError, match="partner's flush failed"):
            sweeper._joint_flush([mine, _failed("the partner's flush failed")], owner, "partner-fails")  # noqa: SLF001
        assert time.monotonic() - t0 < 10 and flush_mod.JOINT_WAIT_S >= 30
        with pytest.raises(memactors.StoreError):
            mine.result(timeout=5)
        assert _in_l2(rt, w.memory_id) == 0
        with pytest.raises(memactors.StoreError, match="called off"):
            owner.apply_joint.remote("partner-fails", 2, Batch()).result(timeout=5)
    rt._calls.get(owner.flush.remote())  # noqa: SLF001 - its own flush writes what it kept
    assert _in_l2(rt, w.memory_id) == 1


def test_a_joint_of_three_is_called_off_when_its_third_fails_while_the_second_waits(world):
    # The sweeper watches the owners' flushes in turn: the second owner's waits on the joint,
    # the third's fails; the joint is called off at once all the same, and both waiting owners
    # keep their batches.
    rt, clock, scopes, actor = world
    _table_written(rt, scopes[1], actor)
    first, second = rt._owner(scopes[0]), rt._owner(scopes[1])  # noqa: SLF001
    with deferred(rt._owners):  # noqa: SLF001
        w = [rt.write(s, f"a note in a joint of three, {s}", actor=actor) for s in scopes]
        key = ("joint-of-three", 3)
        mine = first.flush.remote(joint=(*key, None))
        waits = second.flush.remote(joint=(*key, first))
        third = _failed("the third owner's flush failed")
        t0 = time.monotonic()
        with pytest.raises(memactors.StoreError, match="third owner's flush failed"):
            sweeper._joint_flush([mine, waits, third], first, key[0])  # noqa: SLF001
        assert time.monotonic() - t0 < 10
        for ref in (mine, waits):
            with pytest.raises(memactors.StoreError):
                ref.result(timeout=5)
        assert all(_in_l2(rt, x.memory_id) == 0 for x in w)
    for o in (first, second):
        rt._calls.get(o.flush.remote())  # noqa: SLF001
    assert all(_in_l2(rt, x.memory_id) == 1 for x in w)
