"""Recall, lifecycle and session semantics found by a second red-team pass through the public
API, on the process host with a simulated clock: each test is a promise of docs/ that broke."""

from __future__ import annotations

import pytest

import memactors

S = "/org/acme/user/alice/"
A = "agent"


def _connect(path, clock, **kw):
    return memactors.connect(str(path), host="process", clock=clock, **kw)


@pytest.fixture
def folder(tmp_path):
    clock = memactors.ManualClock()
    rt = _connect(tmp_path / "d", clock)
    rt.grant(A, S, write=True)
    rt.grant("admin", "/org/acme/", write=True)
    yield rt, clock, tmp_path / "d"
    rt.close()


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
        rt.close()
        rt = _connect(path, clock)
    try:
        if form == "at":
            rt.rollback(at=head, actor="admin", reason="bad tool run")
        else:
            rt.rollback(memory_id=oslo.memory_id, actor="admin", reason="bad tool run")
        assert _pending(rt) == [{paris.memory_id, rome.memory_id}]
        assert _conflicts(rt) == before == {paris.memory_id: ("contradiction", "contradiction_in_review"),
                                            rome.memory_id: ("contradiction", "contradiction_in_review")}
        rt.close()
        rt = _connect(path, clock)  # the flags are in the ledger and L2, not in the hot state alone
        assert _pending(rt) == [{paris.memory_id, rome.memory_id}] and _conflicts(rt) == before
    finally:
        rt.close()
