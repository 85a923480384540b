"""Recall, lifecycle and session semantics found by a second red-team pass through the public
API, on the process host with a simulated clock: each test is a promise of docs/ that broke."""

from __future__ import annotations

import pytest

from process_folder import A, S, folder  # noqa: F401 - a fixture (tests/process_folder.py)
from process_folder import connect as _connect
from process_folder import reopen as _reopen


def _city(rt, city: str, confidence: float, source: str):
    return rt.write(S, f"Alice lives in {city}", actor=A, subject="alice", predicate="city", object=city.lower(),
                    confidence=confidence, source=source)


def _pending(rt) -> list[set[str]]:
    return [{m["memory_id"] for m in g["memories"]} for g in rt.contradictions.pending(S, actor=A)]


def _conflicts(rt) -> dict:
    res = rt.recall("where does Alice live", actor=A, task_id="t", allowed_scopes=[S], purpose="test", top_k=20,
                    threshold=0.0)
    return {h.memory_id: (h.review, (h.conflict or {}).get("reason")) for h in res.hits}


@pytest.mark.parametrize("form", ["at", "memory_id"])
@pytest.mark.parametrize("reopen", [False, True], ids=["hot", "cold"])
def test_rolling_back_an_update_of_one_side_puts_the_close_call_back(folder, form, reopen):
    """Paris (user) and Rome (tool) are a close call in review; the tool then updates Rome to
    Oslo, which takes Rome's place in the dispute. Rolling the update back (to the point before
    it, or the Oslo write by id) must restore the state then: Paris and Rome both flagged, in
    the review queue, recalled as `contradiction_in_review`. (The rollback cleared Paris's flag
    as if its rival had left, leaving Rome flagged alone and both shown as `written_apart`.)"""
    rt, clock, path = folder
    paris = _city(rt, "Paris", 0.8, "user_stated")
    rome = _city(rt, "Rome", 0.7, "tool")
    assert rome.decision == "contradiction_queued"
    head = rt.audit.head()["seq"]
    before = _conflicts(rt)
    oslo = _city(rt, "Oslo", 0.7, "tool")
    assert oslo.supersedes == rome.memory_id and _pending(rt) == [{paris.memory_id, oslo.memory_id}]
    if reopen:
        rt = _reopen(rt, path, clock)
    try:
        if form == "at":
            rt.rollback(at=head, actor="admin", reason="bad tool run")
        else:
            rt.rollback(memory_id=oslo.memory_id, actor="admin", reason="bad tool run")
        assert _pending(rt) == [{paris.memory_id, rome.memory_id}]
        assert _conflicts(rt) == before == {paris.memory_id: ("contradiction", "contradiction_in_review"),
                                            rome.memory_id: ("contradiction", "contradiction_in_review")}
        rt = _reopen(rt, path, clock)  # the flags are in the ledger and L2, not in the hot state alone
        assert _pending(rt) == [{paris.memory_id, rome.memory_id}] and _conflicts(rt) == before
    finally:
        rt.close()


@pytest.mark.parametrize("reopen", [False, True], ids=["hot", "cold"])
def test_a_version_brought_back_by_a_rollback_after_its_rival_was_erased_is_in_no_dispute(folder, reopen):
    """Paris and Rome in review; the tool updates Rome to Oslo; Paris is then erased, which ends
    the dispute for Oslo. Undoing the Oslo write reinstates Rome: its rival of then is gone, so
    it comes back unflagged, as a side left alone by an erasure is (it came back flagged
    `contradiction` with nothing to contradict, its staleness counting a contradiction)."""
    rt, clock, path = folder
    paris = _city(rt, "Paris", 0.8, "user_stated")
    rome = _city(rt, "Rome", 0.7, "tool")
    oslo = _city(rt, "Oslo", 0.7, "tool")
    rt.forget(paris.memory_id, actor=A, reason="user asked")
    assert _conflicts(rt) == {oslo.memory_id: (None, None)}
    if reopen:
        rt = _reopen(rt, path, clock)
    try:
        rt.rollback(memory_id=oslo.memory_id, actor="admin", reason="bad tool run")
        assert _conflicts(rt) == {rome.memory_id: (None, None)} and _pending(rt) == []
        rt = _reopen(rt, path, clock)
        assert _conflicts(rt) == {rome.memory_id: (None, None)} and _pending(rt) == []
    finally:
        rt.close()


def test_marking_a_hit_cited_again_counts_one_use(folder):
    """`mark_cited` of the same hit of the same recall twice (a retry after a timeout, or a
    session's `cite` after `after_tool(cited=...)`) is one use: `cited_count` 1 (it counted 2),
    and one citation row in the evidence."""
    import lance

    rt, _, path = folder
    m = rt.write(S, "Alice likes climbing on weekends", actor=A)
    res = rt.recall("climbing weekends", actor=A, task_id="t", allowed_scopes=[S], purpose="test")
    assert [h.memory_id for h in res.hits] == [m.memory_id]
    assert rt.mark_cited(res.recall_id, [m.memory_id], actor=A) == 1
    assert rt.mark_cited(res.recall_id, [m.memory_id, m.memory_id], actor=A) == 1
    rt.flush()
    row = lance.dataset(str(path / "l2" / "memories.lance")).to_table(
        filter=f"memory_id = '{m.memory_id}'", columns=["retrieved_count", "cited_count"]).to_pylist()[0]
    assert row == {"retrieved_count": 1, "cited_count": 1}
    assert rt.explain(res.recall_id, actor=A)["cited"] == [m.memory_id]
    assert rt.audit.sql("SELECT count(*) FROM citations", actor=A) == [(1,)]


@pytest.mark.parametrize("reopen", [False, True], ids=["hot", "cold"])
def test_undoing_the_live_version_brings_back_the_one_a_sweep_set_aside_as_superseded(folder, reopen):
    """v2 superseded v1; 100 days on a sweep evicts v1 (`superseded_old`, its key kept "so a
    rollback can bring it back"). Undoing v2 by id reinstates what it superseded, as `at=` does:
    the fact keeps a live version (it was left with none)."""
    rt, clock, path = folder
    v1 = rt.write(S, "Alice lives in Porto", actor=A, subject="alice", predicate="city", object="porto",
                  category="entity_fact")
    clock.advance(days=1)
    v2 = rt.write(S, "Alice lives in Lisbon", actor=A, subject="alice", predicate="city", object="lisbon")
    clock.advance(days=100)
    assert rt.gc().by_rule["superseded_old"] == 1
    if reopen:
        rt = _reopen(rt, path, clock)
    try:
        plan = rt.rollback(memory_id=v2.memory_id, actor="admin", reason="poisoned", dry_run=True)
        assert {(i["memory_id"], i["action"]) for i in plan.items} == {(v2.memory_id, "undo"),
                                                                      (v1.memory_id, "reinstate")}
        rt.rollback(memory_id=v2.memory_id, actor="admin", reason="poisoned")
        assert _conflicts(rt) == {v1.memory_id: (None, None)}
    finally:
        rt.close()


def test_a_version_undone_by_a_rollback_stays_undone_when_its_successor_is_undone(folder):
    """The guard the previous test relaxes: v1 undone by id (a rollback's eviction, not a
    sweep's) is not brought back by undoing v2."""
    rt, clock, _ = folder
    v1 = rt.write(S, "Alice lives in Porto", actor=A, subject="alice", predicate="city", object="porto")
    v2 = rt.write(S, "Alice lives in Lisbon", actor=A, subject="alice", predicate="city", object="lisbon")
    rt.rollback(memory_id=v1.memory_id, actor="admin", reason="wrong")
    rt.rollback(memory_id=v2.memory_id, actor="admin", reason="wrong")
    assert _conflicts(rt) == {}


@pytest.mark.parametrize("reopen", [False, True], ids=["hot", "cold"])
def test_undoing_the_side_a_reviewer_picked_brings_the_other_back(folder, reopen):
    """A reviewer resolves the close call for Paris: Rome is superseded, and its history says
    by which version (`by`). Paris is then found poisoned and undone by id: what it superseded,
    Rome, is live again (the fact was left with no live version: the resolution's event did not
    name its winner as every other supersession does)."""
    rt, clock, path = folder
    paris = _city(rt, "Paris", 0.8, "user_stated")
    rome = _city(rt, "Rome", 0.7, "tool")
    rt.contradictions.resolve(paris.memory_id, actor=A, reason="checked with the user")
    rome_v = next(v for v in rt.history(rome.memory_id, actor=A)["versions"] if v["memory_id"] == rome.memory_id)
    assert [(c["why"], c.get("by")) for c in rome_v["changes"]] == [("superseded", paris.memory_id)]
    if reopen:
        rt = _reopen(rt, path, clock)
    try:
        rt.rollback(memory_id=paris.memory_id, actor="admin", reason="poisoned")
        assert _conflicts(rt) == {rome.memory_id: (None, None)} and _pending(rt) == []
    finally:
        rt.close()


def test_a_recall_at_a_past_point_is_not_a_use(folder):
    """An auditor's `recall(at=...)` looks at history: its evidence is logged, but it raises no
    access count (else replaying the past kept a soft-expired memory alive, or pushed a live
    one towards demotion by its run of uncited returns). A recall of now still counts."""
    import lance

    rt, _, path = folder
    m = rt.write(S, "Alice likes climbing on weekends", actor=A)
    head = rt.audit.head()["seq"]
    for _ in range(3):
        past = rt.recall("climbing weekends", actor=A, task_id="t", allowed_scopes=[S], purpose="test", at=head)
        assert [h.memory_id for h in past.hits] == [m.memory_id]
    assert rt.explain(past.recall_id, actor=A)["hits"][0]["memory_id"] == m.memory_id  # logged all the same
    rt.flush()

    def counts():
        rt.flush()
        return lance.dataset(str(path / "l2" / "memories.lance")).to_table(
            filter=f"memory_id = '{m.memory_id}'", columns=["retrieved_count", "last_accessed_at"]).to_pylist()[0]

    assert counts() == {"retrieved_count": 0, "last_accessed_at": None}
    now = rt.recall("climbing weekends", actor=A, task_id="t", allowed_scopes=[S], purpose="test")
    assert [h.memory_id for h in now.hits] == [m.memory_id]
    got = counts()
    assert got["retrieved_count"] == 1 and got["last_accessed_at"] is not None
