"""Sessions whose actor may not write their scope (found by the governance model's sessions).
One that could never write does not start: it started a husk whose every write was refused
and that nothing could complete. One whose actor loses the grant midway has its hooks' writes
refused with the grant's error, and ``complete()`` too, without closing it: it was answered
``SessionClosed`` ("completed already, or its goal was erased") and closed for good, because
an owner answers a claim on a scope the actor cannot read as it answers an unknown id."""

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


@pytest.mark.parametrize("grant", ["read-only", "none"])
def test_a_session_its_actor_may_not_write_does_not_start(rt, grant):
    """Its goal would be refused: the session was a husk (every write refused, nothing to
    complete: ``InvalidRecord`` at the end). Now ``start()`` is refused and nothing is written."""
    rt.grant("admin", ALICE, clearance="restricted")
    if grant == "read-only":
        rt.grant("ag", ALICE)
    s = rt.session(ALICE, actor="ag", task_id="t1", goal="Plan a trip to Lisbon", plan=["search flights"])
    with pytest.raises(AccessDenied if grant == "read-only" else NoGrants):
        s.start()
    assert not s.started and not s.errors
    assert rt.batch([O.Lookup(scope=ALICE, actor="admin")])[0] == []
    assert rt.recall("trip Lisbon", actor="admin", allowed_scopes=[ALICE], task_id="t", purpose="p",
                     threshold=0.0).hits == []
    rt.grant("ag", ALICE, write=True)  # granted: the same handle starts
    s.start()
    assert s.started and s.complete("booked", "success")["outcome"].decision == "accepted"
