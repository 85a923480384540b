"""Lifecycle interactions found by red-teaming, on the process host with a simulated clock:
each test is a promise that broke when two lifecycle mechanisms met."""

from __future__ import annotations

import pytest

import memactors

S = "/org/acme/user/alice/"
A = "agent"


def _connect(path, clock):
    return memactors.connect(str(path), host="process", clock=clock)


def _reopen(rt, path, clock):
    """The folder closed and opened again: the hot state rebuilt from the ledger and L2."""
    rt.close()
    return _connect(path, clock)


@pytest.fixture
def folder(tmp_path):
    clock = memactors.ManualClock()
    rt = _connect(tmp_path / "d", clock)
    rt.grant(A, S, write=True)
    rt.grant("admin", "/org/acme/", write=True)
    yield rt, clock, tmp_path / "d"
    rt.close()


def _city(rt, city: str, confidence: float, source: str, **kw):
    return rt.write(S, f"Alice lives in {city}", actor=A, subject="alice", predicate="city", object=city.lower(),
                    confidence=confidence, source=source, **kw)


def _disputed(rt, paris_ttl: float | None = None, rome_ttl: float | None = None):
    """Alice's city as a close call queued for review: Paris from the user, Rome from a tool."""
    paris = _city(rt, "Paris", 0.8, "user_stated", **({"ttl_days": paris_ttl} if paris_ttl else {}))
    rome = _city(rt, "Rome", 0.7, "tool", **({"ttl_days": rome_ttl} if rome_ttl else {}))
    assert rome.decision == "contradiction_queued"
    return paris, rome


def _flagged(rt) -> set[str]:
    return {m["memory_id"] for g in rt.contradictions.pending(S, actor=A) for m in g["memories"]}


def _reviews(rt) -> dict:
    res = rt.recall("where does Alice live", actor=A, task_id="t", allowed_scopes=[S], purpose="test", top_k=20,
                    threshold=0.0)
    return {h.memory_id: h.review for h in res.hits}


@pytest.mark.parametrize("reopen", [False, True], ids=["hot", "cold"])
def test_a_sweep_evicting_one_side_of_a_contradiction_ends_it(folder, reopen):
    """One side of a close call hard-expires and a sweep evicts it: the other, left with no
    rival, is no longer in a contradiction (as when one side is erased), whether the owner held
    the scope in memory or the sweep met it cold after a restart."""
    rt, clock, path = folder
    paris, rome = _disputed(rt, paris_ttl=5, rome_ttl=50)
    clock.advance(days=6)
    if reopen:
        rt = _reopen(rt, path, clock)
    try:
        assert rt.gc().by_rule["hard_expired"] == 1
        assert _flagged(rt) == set()
        assert _reviews(rt) == {rome.memory_id: None}
        rt = _reopen(rt, path, clock)  # the flag's end is in the ledger and L2, not in the hot state alone
        assert _flagged(rt) == set() and _reviews(rt) == {rome.memory_id: None}
        assert paris.memory_id not in _reviews(rt)
    finally:
        rt.close()


def test_a_sweep_evicting_one_of_three_sides_keeps_the_contradiction(folder):
    rt, clock, _ = folder
    _city(rt, "Paris", 0.8, "user_stated", ttl_days=5)
    rome = _city(rt, "Rome", 0.7, "tool", ttl_days=50)
    oslo = _city(rt, "Oslo", 0.75, "agent_inferred", ttl_days=50)
    assert oslo.decision == "contradiction_queued"
    clock.advance(days=6)
    rt.gc()
    assert _flagged(rt) == {rome.memory_id, oslo.memory_id}


@pytest.mark.parametrize("reopen", [False, True], ids=["hot", "cold"])
def test_rolling_back_one_side_of_a_contradiction_ends_it(folder, reopen):
    """A rollback of one side (a poisoned tool write) takes it out of recall: the side left
    is no longer waiting for a reviewer."""
    rt, clock, path = folder
    paris, rome = _disputed(rt)
    if reopen:
        rt = _reopen(rt, path, clock)
    rt.rollback(memory_id=rome.memory_id, actor="admin", reason="bad tool")
    assert _flagged(rt) == set()
    assert _reviews(rt) == {paris.memory_id: None}
    rt.close()
    again = _connect(path, clock)
    try:
        assert _flagged(again) == set() and _reviews(again) == {paris.memory_id: None}
    finally:
        again.close()


def test_a_rollback_in_a_scope_not_held_hot_stays_undone_when_the_scope_is_next_used(folder):
    """After a restart the scope is cold: the rollback's changes go to L2 through the outbox. A
    write that loads the scope right after must see them (it loaded the rows from L2 as they
    were: the undone memory came back to recall until the next restart, and the same text
    written again refreshed it)."""
    rt, clock, path = folder
    tea = rt.write(S, "Alice likes green tea", actor=A)
    coffee = rt.write(S, "Alice drinks coffee", actor=A, subject="alice", predicate="drink", object="coffee")
    rt = _reopen(rt, path, clock)
    try:
        rt.rollback(memory_id=tea.memory_id, actor="admin", reason="poisoned")
        dog = rt.write(S, "Alice has a dog", actor=A)  # loads the scope
        q = dict(actor=A, task_id="t", allowed_scopes=[S], purpose="test", top_k=20, threshold=0.0)
        assert {h.memory_id for h in rt.recall("Alice tea coffee dog", **q).hits} == {coffee.memory_id, dog.memory_id}
        again = rt.write(S, "Alice likes green tea", actor=A)
        assert again.decision == "accepted" and again.memory_id != tea.memory_id
    finally:
        rt.close()


def test_a_rollback_in_a_cold_scope_is_out_of_recall_at_once(folder):
    rt, clock, path = folder
    fact = rt.write(S, "Alice drinks coffee", actor=A, subject="alice", predicate="drink", object="coffee")
    rt = _reopen(rt, path, clock)
    try:
        rt.rollback(memory_id=fact.memory_id, actor="admin", reason="poisoned")
        res = rt.recall("Alice coffee", actor=A, task_id="t", allowed_scopes=[S], purpose="test", threshold=0.0)
        assert fact.memory_id not in {h.memory_id for h in res.hits}
    finally:
        rt.close()


def _recalled(rt, query: str) -> list[str]:
    return [h.content for h in rt.recall(query, actor=A, task_id="t", allowed_scopes=[S], purpose="test",
                                         threshold=0.0).hits]


@pytest.mark.parametrize("cold", [False, True], ids=["hot", "cold"])
def test_a_new_value_of_a_fact_whose_version_expired_is_live_whatever_its_confidence(folder, cold):
    """A fact's version past its hard TTL is out of recall: a later value from a weaker source
    supersedes it, where it was kept as superseded behind it (recalled: nothing)."""
    rt, clock, path = folder
    old = _city(rt, "Paris", 0.9, "user_stated", ttl_days=5)
    clock.advance(days=6)
    if cold:
        rt = _reopen(rt, path, clock)
    try:
        new = _city(rt, "Rome", 0.5, "tool")
        assert new.decision == "superseded_previous" and new.version == 2
        assert _recalled(rt, "where does Alice live") == ["Alice lives in Rome"]
        assert [v["status"] for v in rt.history(old.memory_id, actor=A)["versions"]] == ["superseded", "active"]
        rt = _reopen(rt, path, clock)  # the same after a reopen (the hot state rebuilt from L2)
        assert _recalled(rt, "where does Alice live") == ["Alice lives in Rome"]
    finally:
        rt.close()


def test_before_its_hard_ttl_a_stronger_version_still_keeps_a_weaker_value_superseded(folder):
    rt, clock, _ = folder
    _city(rt, "Paris", 0.9, "user_stated", ttl_days=5)
    clock.advance(days=4)
    assert _city(rt, "Rome", 0.5, "tool").decision == "kept_as_superseded"
    assert _recalled(rt, "where does Alice live") == ["Alice lives in Paris"]


@pytest.mark.parametrize("cold", [False, True], ids=["hot", "cold"])
def test_a_near_copy_of_an_expired_memory_is_a_memory_of_its_own(folder, cold):
    """A paraphrase of a memory past its hard TTL merged into it: the new wording was dropped
    and the expired text came back into recall."""
    rt, clock, path = folder
    rt.write(S, "The quarterly report for the northern region is due on Friday afternoon", actor=A, ttl_days=5)
    clock.advance(days=6)
    if cold:
        rt = _reopen(rt, path, clock)
    try:
        res = rt.write(S, "The quarterly report for the northern region is due Friday afternoon", actor=A)
        assert res.decision == "accepted"
        assert _recalled(rt, "quarterly report") == ["The quarterly report for the northern region is due Friday afternoon"]
    finally:
        rt.close()


@pytest.mark.parametrize("cold", [False, True], ids=["hot", "cold"])
def test_updating_one_side_of_a_contradiction_keeps_the_dispute_with_the_new_version(folder, cold):
    """The updated side's new version was unflagged and the other side stayed flagged alone:
    two live versions of one fact, one of them in a contradiction with nothing."""
    rt, clock, path = folder
    paris, rome = _disputed(rt)
    if cold:
        rt = _reopen(rt, path, clock)
    try:
        oslo = rt.update(paris.memory_id, "Alice lives in Oslo", actor=A, object="oslo")
        assert _flagged(rt) == {rome.memory_id, oslo.memory_id}
        rt = _reopen(rt, path, clock)  # the same after a reopen
        assert _flagged(rt) == {rome.memory_id, oslo.memory_id}
        rt.contradictions.resolve(oslo.memory_id, actor=A, reason="she moved")
        assert _flagged(rt) == set() and _reviews(rt) == {oslo.memory_id: None}
    finally:
        rt.close()


def test_updating_one_side_to_the_other_sides_value_settles_the_dispute(folder):
    rt, _, _ = folder
    paris, rome = _disputed(rt)
    new = rt.update(paris.memory_id, "Alice lives in Rome", actor=A, object="rome")
    assert _flagged(rt) == set() and _reviews(rt) == {new.memory_id: None}
    assert rt.history(rome.memory_id, actor=A)["live"] == [new.memory_id]
