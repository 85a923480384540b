"""Rollback, points in time and forks against the store's own promises, on the process host
(real LanceDB and DuckDB files, no Ray): one live version per fact, hot = cold = reopened =
rebuilt, a verifying chain, clearance in every view, and a folder that still opens."""

from __future__ import annotations

import os

import pytest

import memactors
from memactors import server
from memactors.core.errors import AccessDenied, LedgerTampered, MemactorsError, NotFound
from memactors.testing import drop_hot

S = "/org/rt/user/u/"
Q = "carol drinks tea coffee juice milk water note city"


def _open(tmp_path, clock=None):
    cfg = {"runtime": {"key_dir": str(tmp_path / "keys"), "num_owners": 2}}
    kw = {"clock": clock} if clock is not None else {}
    return memactors.connect(str(tmp_path / "data"), host="process", config=cfg, **kw), cfg, kw


def _recall(rt, actor="ag", **kw):
    res = rt.recall(Q, actor=actor, task_id="t", allowed_scopes=[S], purpose="p", top_k=50, threshold=0.0, **kw)
    return {h.memory_id: h.content for h in res.hits}


def _drink(rt, obj, **kw):
    return rt.write(S, f"carol drinks {obj}", actor="ag", subject="carol", predicate="drink", object=obj, **kw)


def _versions(rt, mid):
    return [(v["version"], v["status"]) for v in rt.history(mid, actor="ag")["versions"]]


def _live(rt, mid):
    return [v["memory_id"] for v in rt.history(mid, actor="ag")["versions"] if v["status"] in ("active", "stale")]


def _consistent(rt, tmp_path, cfg, kw):
    """Hot, cold, reopened and rebuilt recall agree and the chain verifies. Returns the recall
    and a runtime open on the folder again."""
    hot = _recall(rt)
    drop_hot(rt)
    cold = _recall(rt)
    assert rt.audit.verify()["ok"]
    rt.close()
    rt = memactors.connect(str(tmp_path / "data"), host="process", config=cfg, **kw)  # refuses a broken folder
    reopened = _recall(rt)
    rt.close()
    server.rebuild(str(tmp_path / "data"), config=cfg)
    rt = memactors.connect(str(tmp_path / "data"), host="process", config=cfg, **kw)
    assert hot == cold == reopened == _recall(rt)
    return hot, rt


@pytest.fixture
def store(tmp_path):
    rt, cfg, kw = _open(tmp_path)
    rt.grant("ag", "/org/rt/", write=True)
    box = {"rt": rt}
    yield box, cfg, kw
    box["rt"].close()


def test_undoing_a_superseded_middle_version_leaves_its_predecessor_superseded(store, tmp_path):
    """v1 <- v2 <- v3: undoing v2 (superseded) once reinstated v1 beside the live v3."""
    box, cfg, kw = store
    rt = box["rt"]
    v1, v2, v3 = _drink(rt, "tea"), _drink(rt, "coffee"), _drink(rt, "juice")
    plan = rt.rollback(memory_id=v2.memory_id, actor="ag", reason="bad", dry_run=True)
    assert plan.counts() == {"undo": 1}
    rt.rollback(memory_id=v2.memory_id, actor="ag", reason="bad")
    assert _versions(rt, v1.memory_id) == [(1, "superseded"), (2, "evicted"), (3, "active")]
    assert _live(rt, v1.memory_id) == [v3.memory_id]
    got, box["rt"] = _consistent(rt, tmp_path, cfg, kw)
    assert list(got.values()) == ["carol drinks juice"]


def test_undoing_an_undone_version_again_changes_nothing(store):
    """v2 undone (v1 back), v2' supersedes v1, v2 undone again: v1 was reinstated a second
    time beside v2'."""
    rt = store[0]["rt"]
    v1, v2 = _drink(rt, "tea"), _drink(rt, "coffee")
    rt.rollback(memory_id=v2.memory_id, actor="ag", reason="bad")
    v2b = _drink(rt, "milk")
    plan = rt.rollback(memory_id=v2.memory_id, actor="ag", reason="again")
    assert plan.items == [] and not plan.applied
    assert _live(rt, v1.memory_id) == [v2b.memory_id]


def test_undoing_the_newest_versions_together_reinstates_the_newest_left(store, tmp_path):
    box, cfg, kw = store
    rt = box["rt"]
    rt.grant("importer", "/org/rt/", write=True)
    v1 = _drink(rt, "tea")
    for obj in ("coffee", "juice"):
        rt.write(S, f"carol drinks {obj}", actor="importer", subject="carol", predicate="drink", object=obj)
    plan = rt.rollback(where={"actor": "importer"}, actor="ag", reason="bad import")
    assert plan.counts() == {"undo": 2, "reinstate": 1}
    assert _live(rt, v1.memory_id) == [v1.memory_id]
    got, box["rt"] = _consistent(rt, tmp_path, cfg, kw)
    assert list(got.values()) == ["carol drinks tea"]


def test_a_point_inside_one_write_stands_for_the_whole_write(store, tmp_path):
    """A write that supersedes v1 logs v2 then v1's status change: the seq between them is a
    state that never stood (both live). Recall, audit.at and rollback read the write whole."""
    box, cfg, kw = store
    rt = box["rt"]
    v1, v2 = _drink(rt, "tea"), _drink(rt, "coffee")
    end = rt.audit.head()["seq"]
    inside = end - 1
    snap = rt.audit.at(inside, actor="ag", scope=S)
    assert snap["seq"] == end
    assert sorted(m["status"] for m in snap["memories"]) == ["active", "superseded"]
    assert list(_recall(rt, at=inside)) == [v2.memory_id]
    plan = rt.rollback(at=inside, actor="ag", reason="to a point inside a write")
    assert plan.items == [] and plan.restore_at == end
    assert _live(rt, v1.memory_id) == [v2.memory_id]
    got, box["rt"] = _consistent(rt, tmp_path, cfg, kw)
    assert list(got) == [v2.memory_id]


def test_rolling_back_a_rollback_to_a_superseded_version_keeps_the_folder_openable(store, tmp_path):
    """Everything undone, then back to when v1 was superseded by v2: v1 returns from evicted
    to superseded. Its Lance row was gone and a bare status patch did not bring it back: the
    next connect refused the folder (LedgerTampered: L2 disagrees with the ledger)."""
    box, cfg, kw = store
    rt = box["rt"]
    t0 = rt.audit.head()["seq"]
    v1, v2 = _drink(rt, "tea"), _drink(rt, "coffee")
    t1 = rt.audit.head()["seq"]
    rt.rollback(at=t0, actor="ag", reason="everything")
    plan = rt.rollback(at=t1, actor="ag", reason="back to t1", dry_run=True)
    assert plan.counts() == {"restore": 1, "reinstate": 1}
    applied = rt.rollback(at=t1, actor="ag", reason="back to t1").applied
    assert (applied["restored"], applied["reinstated"]) == (1, 1)
    assert _versions(rt, v1.memory_id) == [(1, "superseded"), (2, "active")]
    # Its two events are one point in time: the state between them never stood.
    head = rt.audit.head()["seq"]
    assert rt.audit.at(head - 1, actor="ag", scope=S)["seq"] == head
    got, box["rt"] = _consistent(rt, tmp_path, cfg, kw)
    assert list(got) == [v2.memory_id]
    assert _versions(box["rt"], v1.memory_id) == [(1, "superseded"), (2, "active")]


def test_a_pending_write_comes_back_pending_and_the_folder_opens(tmp_path):
    """A write held for review (a web source), undone with everything, then the undo undone."""
    rt, cfg, kw = _open(tmp_path)
    try:
        rt.grant("ag", "/org/rt/", write=True)
        t0 = rt.audit.head()["seq"]
        held = rt.write(S, "carol drinks tea says a page", actor="ag", subject="carol", predicate="drink",
                        object="tea", source="web")
        assert held.decision == "pending"
        t1 = rt.audit.head()["seq"]
        rt.rollback(at=t0, actor="ag", reason="everything")
        rt.rollback(at=t1, actor="ag", reason="back")
        assert _versions(rt, held.memory_id) == [(1, "pending")]
        rt.flush()
    finally:
        rt.close()
    with memactors.connect(str(tmp_path / "data"), host="process", config=cfg, **kw) as rt:
        assert _versions(rt, held.memory_id) == [(1, "pending")]


def test_rollback_holds_clearance_as_history_does(tmp_path):
    """A writer whose clearance is below a memory's sensitivity: history answers NotFound, and
    a rollback naming it answered as for an unknown id; one touching it is refused whole."""
    rt, cfg, kw = _open(tmp_path)
    try:
        rt.grant("admin", "/global/", write=True, clearance="restricted")
        rt.grant("low", S, write=True, clearance="internal")
        t0 = rt.audit.head()["seq"]
        plain = rt.write(S, "note the city is leeds", actor="admin")
        secret = rt.write(S, "note the city vault code place", actor="admin", sensitivity="restricted")
        with pytest.raises(NotFound):
            rt.history(secret.memory_id, actor="low")
        with pytest.raises(NotFound) as a:
            rt.rollback(memory_id=secret.memory_id, actor="low", reason="x", dry_run=True)
        with pytest.raises(NotFound) as b:
            rt.rollback(memory_id="0" * 32, actor="low", reason="x", dry_run=True)
        assert str(a.value).replace(secret.memory_id, "0" * 32) == str(b.value)
        head = rt.audit.head()["seq"]
        for kw_ in ({"at": t0, "scope": S}, {"where": {"actor": "admin"}, "scope": S}):
            with pytest.raises(AccessDenied) as e:
                rt.rollback(actor="low", reason="x", **kw_)
            assert secret.memory_id not in str(e.value)
        assert rt.audit.head()["seq"] == head  # nothing half done
        # the memory it may see is its to roll back; the admin's rollback is unchanged
        assert rt.rollback(memory_id=plain.memory_id, actor="low", reason="x").counts() == {"undo": 1}
        assert rt.rollback(at=t0, actor="admin", reason="x").counts() == {"undo": 1}
    finally:
        rt.close()


@pytest.mark.parametrize("bad", [
    {}, {"at": 2, "memory_id": "0" * 32}, {"at": 10 ** 9}, {"at": -1}, {"at": True}, {"at": 1.5},
    {"at": "not a time"}, {"at": "2999-01-01T00:00:00Z"}, {"memory_id": "zz"}, {"memory_id": "0" * 32},
    {"where": {}}, {"where": {"bogus": 1}}, {"where": {"source_kind": "nope"}}, {"where": {"since": "x"}},
    {"where": {"since": True}}, {"where": {"source_kind": "tool", "since": 10 ** 15}}, {"at": 2, "scope": "bad"}, {"at": 2, "cascade": "yes"}, {"at": 2, "dry_run": 1},
    {"at": 2, "reason": ""}, {"at": 2, "reason": None}, {"at": 2, "actor": ""}, {"at": 2, "actor": "nobody"},
    {"at": 2, "actor": "reader"},
])
def test_bad_rollbacks_are_refused_typed_and_change_nothing(store, bad):
    rt = store[0]["rt"]
    rt.grant("reader", S)
    _drink(rt, "tea")
    _drink(rt, "coffee")
    head = rt.audit.head()["seq"]
    args = {"actor": "ag", "reason": "r", **bad}
    with pytest.raises(MemactorsError):
        rt.rollback(**args)
    assert rt.audit.head()["seq"] == head
    assert rt.audit.verify()["ok"]


def test_where_since_and_until_read_an_int_as_a_seq_as_at_does(tmp_path):
    # The bug: since=<seq> was read as microseconds since 1970, so since=head undid every write
    # of that source kind ever made.
    import datetime

    clock = memactors.ManualClock()
    rt, _, _ = _open(tmp_path, clock)
    try:
        rt.grant("ag", "/org/rt/", write=True)
        old = rt.write(S, "note old crawl: the city is Austin", actor="ag", source="tool")
        clock.advance(days=30)
        head = rt.audit.head()["seq"]
        then = datetime.datetime.fromtimestamp(clock.now_us() / 1e6, datetime.timezone.utc)
        new = rt.write(S, "note new crawl: the city has 500 staff", actor="ag", source="tool")
        undone = lambda **w: {i["memory_id"] for i in rt.rollback(  # noqa: E731
            where={"source_kind": "tool", **w}, actor="ag", reason="poisoned crawl", dry_run=True).items}
        assert undone(since=head) == {new.memory_id} == {i["memory_id"] for i in rt.rollback(
            at=head, actor="ag", reason="x", dry_run=True).items}
        assert undone(until=head) == {old.memory_id}
        assert undone(since=then) == undone(since=then.isoformat()) == {new.memory_id}  # times still work
        assert undone(until=then) == {old.memory_id}
        with pytest.raises(NotFound, match="ledger seq"):  # microseconds are no seq of this ledger
            undone(since=int(then.timestamp() * 1_000_000))
        rt.rollback(where={"source_kind": "tool", "since": head}, actor="ag", reason="poisoned crawl")
        assert set(_recall(rt)) == {old.memory_id}
    finally:
        rt.close()


def test_a_fork_before_an_erasure_holds_nothing_of_it(store, tmp_path):
    rt = store[0]["rt"]
    v1 = _drink(rt, "tea")
    secret = rt.write(S, "note zanzibarquux is the city", actor="ag")
    point = rt.audit.head()["seq"]
    rt.forget(secret.memory_id, actor="ag", reason="asked", erase="fact")
    rt.purge()
    assert secret.memory_id not in _recall(rt, at=point)
    out = rt.fork(str(tmp_path / "fork"), at=point)
    cfg = {"runtime": {"key_dir": str(tmp_path / "keys")}}
    with memactors.connect(out["path"], host="process", config=cfg) as fork:
        assert fork.audit.verify()["ok"]
        assert list(_recall(fork)) == [v1.memory_id]
        plan = fork.rollback(memory_id=secret.memory_id, actor="ag", reason="bring it back?")
        assert plan.counts() == {"stays_forgotten": 1}
        assert secret.memory_id not in _recall(fork)
    for root, _, files in os.walk(out["path"]):
        for f in files:
            with open(os.path.join(root, f), "rb") as fh:
                assert b"zanzibarquux" not in fh.read()


def test_the_owner_writes_the_row_of_an_evicted_memory_a_rollback_makes_superseded(tmp_path):
    from memactors.core.ops import RollbackOp
    from memactors.testing import owner_for

    rt, cfg, kw = _open(tmp_path)
    try:
        rt.grant("ag", "/org/rt/", write=True)
        v1 = _drink(rt, "tea")
        rt.rollback(memory_id=v1.memory_id, actor="ag", reason="out")
        (now, _), = rt._calls.get(rt._ledger.history_call.remote("now_and_then", [v1.memory_id], None)).values()
        op = RollbackOp([(v1.memory_id, S, now, dict(now, status="superseded"))], "ag", "direct", "rollback-direct-0")
        out = rt._calls.get(owner_for(rt, S).submit.remote([op], rt.clock.now_us()))
        assert out[0]["restored"] == 1
        rt.flush()
    finally:
        rt.close()
    memactors.connect(str(tmp_path / "data"), host="process", config=cfg, **kw).close()


def test_a_crash_before_the_flush_of_such_a_rollback_leaves_a_folder_that_opens(tmp_path):
    """The same direct rollback, then the process dies before its flush reaches Lance: the
    replay at the next open writes the row whole (it patched a row Lance no longer held, and
    the folder after refused to open)."""
    import subprocess
    import sys

    rt, cfg, kw = _open(tmp_path)
    rt.grant("ag", "/org/rt/", write=True)
    v1 = _drink(rt, "tea")
    rt.rollback(memory_id=v1.memory_id, actor="ag", reason="out")  # evicted: its row leaves Lance
    rt.close()
    script = f"""
import os, memactors
from memactors.core.ops import RollbackOp
from memactors.testing import owner_for
cfg = {dict(cfg, runtime=dict(cfg["runtime"], l2_flush_interval_s=3600.0))!r}
rt = memactors.connect({str(tmp_path / "data")!r}, host="process", config=cfg)
(now, _), = rt._calls.get(rt._ledger.history_call.remote("now_and_then", [{v1.memory_id!r}], None)).values()
op = RollbackOp([({v1.memory_id!r}, {S!r}, now, dict(now, status="superseded"))], "ag", "direct", "rollback-direct-1")
assert rt._calls.get(owner_for(rt, {S!r}).submit.remote([op], rt.clock.now_us()))[0]["restored"] == 1
os._exit(0)  # committed in the ledger, never flushed to Lance
"""
    subprocess.run([sys.executable, "-c", script], check=True, timeout=120)
    for _ in range(2):  # the replay, then a folder whose L2 agrees with its ledger
        rt = memactors.connect(str(tmp_path / "data"), host="process", config=cfg, **kw)
        assert _versions(rt, v1.memory_id) == [(1, "superseded")]
        rt.close()


def test_a_rollback_leaves_a_memory_erased_after_its_plan_erased():
    # A forget or a sweep landing between a rollback's plan and its apply: the plan's row
    # reinstated the erased memory whole (its text back in L2 and recall, the folder then
    # refused to open: "L2 disagrees with the ledger").
    from memactors.core import changes as C
    from memactors.core.config import LifecycleConfig
    from memactors.core.ops import RollbackOp

    scope, mid = "/org/acme/user/alice/", "05c4ba3e" + "0" * 24
    now = {"memory_id": mid, "scope": scope, "status": "superseded", "version": 1, "content": "a secret plan"}
    op = RollbackOp([(mid, scope, now, dict(now, status="active"))], "ag", "undo", "k-1")
    ctx = C.Ctx(None, 0, LifecycleConfig(), state_of=lambda s: None, erased={mid})
    assert C.decide_rollback(op, ctx).changes == []
    ctx.erased = set()
    assert [ch.patch for ch in C.decide_rollback(op, ctx).changes] == [{"status": "active"}]


def test_a_recall_at_a_point_serves_the_working_items_the_pool_served_then(tmp_path):
    """`at=` served L1 items a session idle past session_ttl_s (and a direct working write older
    than it) had let go: at the newest seq it returned them while plain recall did not, and an
    expired demoted copy of an old value hid a fact's live value. At a point the session was
    alive, its items are served."""
    clock = memactors.ManualClock()
    rt, _, _ = _open(tmp_path, clock)
    try:
        rt.grant("ag", S, write=True)
        rt.write(S, "carol city is porto", actor="ag", subject="carol", predicate="city", object="porto")
        rt.write(S, "scratch note about the weather in porto", actor="ag", pool="working")
        s = rt.session(S, actor="ag", task_id="t1", goal="plan the trip to porto", plan=["search", "book"])
        s.start()
        s.observe("user", "carol prefers an aisle seat to porto", category="preference")
        s.before_llm()
        alive = rt.audit.head()["seq"]
        clock.advance(days=2)  # past session_ttl_s (a day)
        rt.grant("other", S)  # an event at the clock's now: the newest seq is judged now
        head = rt.audit.head()["seq"]

        def contents(**kw):
            return sorted(h.content for h in rt.recall("porto", actor="ag", task_id="t", allowed_scopes=[S],
                                                       purpose="p", top_k=50, threshold=0.0, **kw).hits)

        assert contents(at=head) == contents() == ["carol city is porto"]
        then = contents(at=alive)
        assert "carol prefers an aisle seat to porto" in then and "scratch note about the weather in porto" in then
    finally:
        rt.close()


def test_history_lists_versions_oldest_first_when_a_later_write_takes_a_lower_number(tmp_path):
    """Sorted by version number, a write numbered 1 again (its fact's versions all rolled back)
    was listed before the older version 2: the docs say oldest first."""
    rt, _, _ = _open(tmp_path)
    try:
        rt.grant("ag", S, write=True)
        v1, v2 = _drink(rt, "tea"), _drink(rt, "coffee")
        rt.rollback(memory_id=v2.memory_id, actor="ag", reason="wrong")  # v1 reinstated
        rt.rollback(memory_id=v1.memory_id, actor="ag", reason="wrong too")  # nothing of the fact on record
        v3 = _drink(rt, "juice")
        h = rt.history(v3.memory_id, actor="ag")["versions"]
        assert [v["memory_id"] for v in h] == [v1.memory_id, v2.memory_id, v3.memory_id]
        assert [v["written"]["seq"] for v in h] == sorted(v["written"]["seq"] for v in h)
        assert [v["version"] for v in h] == [1, 2, v3.version]
    finally:
        rt.close()
