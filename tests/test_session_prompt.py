"""What an open session's prompt shows: an erasure reaches it (an L0 observation whose L1 item
was erased, and a pushed memory erased since its push, leave the next ``before_llm()``, as they
leave recall and a resumed session; what was not erased stays), and pushed memories never
repeat the session's own items, nor the vault copies promoted from them. And a summary the gate
blocks leaves the session open to be completed properly."""

from __future__ import annotations

import pytest

import memactors

SC = "/org/acme/user/alice/"


def _session(rt):
    rt.grant("agent-1", SC, write=True)
    s = rt.session(SC, actor="agent-1", task_id="t1", goal="plan alice's trip to Lisbon")
    return s


def test_an_erased_observation_leaves_the_live_prompt():
    with memactors.connect("memory://") as rt:
        s = _session(rt)
        s.start()
        s.observe("user", "alice loves QUOKKAZEBRA tours", category="preference")
        s.observe("user", "alice keeps a small grey cat", category="preference")
        promoted = {p["promoted_from"]: p["memory_id"] for p in s.end_turn().promoted}
        items = {o.content: o.memory_id for o in s.l0.observations}
        assert "QUOKKAZEBRA" in s.before_llm().text
        vault = promoted[items["alice loves QUOKKAZEBRA tours"]]
        rt.forget(vault, actor="agent-1", reason="user asked", erase="fact")  # its L1 item goes with it
        text = s.before_llm().text
        assert "QUOKKAZEBRA" not in text and "grey cat" in text  # only the erased one goes
        s.end_turn()
        assert "QUOKKAZEBRA" not in s.before_llm().text
        assert "QUOKKAZEBRA" not in rt.resume_session(SC, actor="agent-1", task_id="t1").before_llm().text


def test_a_pushed_memory_erased_since_its_push_leaves_the_prompt():
    with memactors.connect("memory://") as rt:
        rt.grant("agent-1", SC, write=True)
        m = rt.write(SC, "alice's Lisbon trip: she wants a window seat", actor="agent-1")
        keep = rt.write(SC, "alice's Lisbon trip: hotel near the river", actor="agent-1")
        s = rt.session(SC, actor="agent-1", task_id="t1", goal="plan alice's trip to Lisbon")
        s.start()
        first = s.before_llm()
        assert m.memory_id in first.memory_ids and keep.memory_id in first.memory_ids
        rt.forget(m.memory_id, actor="agent-1", reason="user asked")
        then = s.before_llm()  # within push_refresh_turns: the push is not run again
        assert m.memory_id not in then.memory_ids and "window seat" not in then.text
        assert keep.memory_id in then.memory_ids


def test_pushed_memories_never_repeat_the_sessions_own_items_once_promoted():
    with memactors.connect("memory://") as rt:
        rt.grant("agent-1", SC, write=True)
        other = rt.write(SC, "help alice with her flights: her passport expires in spring", actor="agent-1")
        s = rt.session(SC, actor="agent-1", task_id="t1", goal="help alice with her flights",
                       constraints=["alice never flies at night"])
        s.start()
        s.observe("user", "alice prefers aisle seats on her flights", category="preference")
        for _ in range(6):  # promoted at the first turn end; the push runs again within these turns
            s.end_turn()
        assert {p["promoted_from"] for p in s.promoted}  # the copies are in the vault now
        for prompt in (s.before_llm(), rt.resume_session(SC, actor="agent-1", task_id="t1").before_llm()):
            assert prompt.text.count("alice never flies at night") == 1
            assert prompt.text.count("alice prefers aisle seats") == 1
            assert other.memory_id in prompt.memory_ids  # other memories are still pushed


def test_a_summary_the_gate_blocks_leaves_the_session_open_to_complete_properly():
    from memactors.core.errors import Blocked

    with memactors.connect("memory://") as rt:
        rt.grant("agent-1", SC, write=True)
        s = rt.session(SC, actor="agent-1", task_id="t1", goal="rotate alice's deploy key")
        s.start()
        with pytest.raises(Blocked) as e:
            s.complete("done; the deploy key is AKIAQYLPMN5HFTXW7Z3B", "success")
        assert "AKIA" not in str(e.value) and e.value.gate["decision"] == "blocked"
        assert not s.closed
        done = s.complete("done; the key was rotated", "success")
        assert done["outcome"].decision == "accepted" and s.closed


def test_an_erased_goal_step_constraint_or_note_leaves_the_live_prompt():
    """Not only observations: a goal, a plan step, a constraint or a note erased while the
    session is open leaves its next prompt (a step and the goal read "(erased)", so the plan
    keeps its places); what was not erased stays."""
    with memactors.connect("memory://") as rt:
        rt.grant("agent-1", SC, write=True)
        s = rt.session(SC, actor="agent-1", task_id="t1", goal="plan alice's trip via ZEPHYRQUAY",
                       plan=["book the OSPREYLINK ferry", "pack light"],
                       constraints=["never book through FLAMINGOAIR", "alice needs an aisle seat"])
        s.start()
        s.note("ask about the HERONPASS voucher")
        first = s.before_llm().text
        marks = ("ZEPHYRQUAY", "OSPREYLINK", "FLAMINGOAIR", "HERONPASS")
        assert all(m in first for m in marks)
        hits = rt.recall("trip ferry book voucher ZEPHYRQUAY OSPREYLINK FLAMINGOAIR HERONPASS", actor="agent-1",
                         allowed_scopes=[SC], threshold=0.0, top_k=20).hits
        for m in marks:
            mid = next(h.memory_id for h in hits if h.pool == "working" and m in h.content)
            rt.forget(mid, actor="agent-1", reason="user asked")
            text = s.before_llm().text
            assert m not in text, m
            assert "aisle seat" in text and "pack light" in text  # only the erased ones go
        assert "(erased)" in text
        with pytest.raises(memactors.SessionClosed, match="erased"):  # its goal is gone: nothing to complete
            s.complete("done")


def test_a_grant_lowered_or_revoked_since_the_push_reaches_the_live_prompt():
    """What was pushed under a grant that has since been narrowed (a clearance lowered) leaves
    the next prompt, before ``push_refresh_turns`` has passed; a read grant revoked refuses the
    prompt's memories (AccessDenied), and nothing pushed before is shown."""
    with memactors.connect("memory://") as rt:
        rt.grant("w", SC, write=True, clearance="restricted")
        rt.grant("r", SC, write=True, clearance="restricted")
        rt.write(SC, "alice's Lisbon trip: the SAFFRONKEY door code is in the vault", actor="w",
                 sensitivity="restricted")
        rt.write(SC, "alice's Lisbon trip: she wants a window seat", actor="w", sensitivity="internal")
        s = rt.session(SC, actor="r", task_id="t1", goal="plan alice's trip to Lisbon")
        s.start()
        assert "SAFFRONKEY" in s.before_llm().text
        rt.grant("r", SC, write=True, clearance="internal")
        text = s.before_llm().text
        assert "SAFFRONKEY" not in text and "window seat" in text
        rt.grant("r", SC, read=False, write=False)
        with pytest.raises(memactors.AccessDenied):
            s.before_llm()
        assert s._pushed is None  # noqa: SLF001 - nothing pushed under the old grant is kept to render
