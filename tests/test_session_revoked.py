"""Sessions whose actor may not write their scope. One whose actor loses its write grant midway
(found by the governance model's sessions) has its hooks' writes refused with the grant's
error, and ``complete()`` too, without closing it: it was answered ``SessionClosed`` ("completed
already, or its goal was erased") and closed for good, because an owner answers a claim on a
scope the actor cannot read as it answers an unknown id. One whose actor may only read reads."""

from __future__ import annotations

import pytest

import memactors
from memactors import AccessDenied, NoGrants
from memactors import ops as O


@pytest.fixture
def rt(tmp_path):
    rt = memactors.connect(str(tmp_path / "data"), host="process")
    yield rt
    rt.close()


ALICE = "/org/rv/user/alice/"


def _session(rt):
    s = rt.session(ALICE, actor="ag", task_id="t1", goal="Plan a trip to Lisbon", plan=["search flights"])
    s.start()
    s.observe("user", "I prefer window seats on long flights", category="preference")
    s.end_turn()
    return s


@pytest.mark.parametrize("keep_other", [True, False], ids=["other-grants-left", "no-grants-left"])
def test_complete_after_a_revoke_is_refused_and_the_session_stays_open(rt, keep_other):
    rt.grant("ag", ALICE, write=True)
    if keep_other:
        rt.grant("ag", "/org/rv/user/bob/", write=True)
    s = _session(rt)
    rt.grant("ag", ALICE, read=False, write=False)
    s.observe("user", "My favourite airline is KLM", category="preference")
    s.end_turn()  # the buffered observation's write is refused, and said so
    assert s.errors and ("AccessDenied" if keep_other else "NoGrants") in s.errors[-1]
    with pytest.raises(AccessDenied if keep_other else NoGrants):
        s.complete("booked", "success")
    assert not s.closed
    rt.grant("admin", ALICE, clearance="restricted")
    held = [m.content for m in rt.batch([O.Lookup(scope=ALICE, actor="admin")])[0]]
    assert not any("Task t1 ended" in c for c in held)  # no outcome written
    rt.grant("ag", ALICE, write=True)  # given back: the same session ends as it would have
    done = s.complete("booked", "success")
    assert done["outcome"].decision == "accepted" and s.closed
    with pytest.raises(memactors.SessionClosed):
        s.complete("again", "success")


def test_a_session_completed_elsewhere_is_still_closed(rt):
    """What the refusal above must not take away: a session ended by another copy of it."""
    rt.grant("ag", ALICE, write=True)
    s = _session(rt)
    twin = type(s).resume(rt, ALICE, actor="ag", task_id="t1")
    twin.complete("done here", "success")
    with pytest.raises(memactors.SessionClosed):
        s.complete("and there", "success")
    assert s.closed


def test_a_reader_s_session_reads_and_writes_nothing(rt):
    """A session of an actor that may only read its scope (a read-only assistant): its pushes
    and prompts work as for any reader, each write it would make is refused and named in
    ``s.errors``, nothing is written, and there is nothing to complete."""
    rt.grant("ag", ALICE, write=True)
    rt.write(ALICE, "Alice likes the window seat on trips to Lisbon", actor="ag")
    rt.grant("reader", ALICE)
    rt.grant("admin", ALICE, clearance="restricted")
    s = rt.session(ALICE, actor="reader", task_id="t1", goal="Alice likes the window seat on trips to Lisbon")
    pushed = s.start()
    assert [h.content for h in pushed.hits] == ["Alice likes the window seat on trips to Lisbon"]
    assert s.errors and all(e.startswith("AccessDenied") for e in s.errors)
    s.observe("user", "I also like aisle seats", category="preference")
    assert "window seat" in s.before_llm().text
    assert [m.content for m in rt.batch([O.Lookup(scope=ALICE, actor="admin")])[0]] == [
        "Alice likes the window seat on trips to Lisbon"]
    with pytest.raises(memactors.InvalidRecord):
        s.complete("booked", "success")
    rv = rt.session(ALICE, actor="nobody", task_id="t2", goal="Plan a trip to Lisbon")
    with pytest.raises(NoGrants):
        rv.start()
