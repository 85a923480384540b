"""Red-team findings on the session layer (L0 and L1), each on the process host: an erased note
leaves the scratchpad whole (also where the 500-character window had cut its start) and takes
no other note's words with it; a resumed session keeps its plan's places (and so its current
step) when a step was erased; the memories of a prompt are counted as shown (their line
breaks indented), so the prompt never goes over its budget for them; a pushed memory that
recall no longer serves (superseded, past its hard TTL) leaves the prompt before the push is
refreshed; a session's hooks after its runtime closed raise ``RuntimeClosed`` (buffered ones
too) and change nothing; a flush that failed keeps what it did not write, and writing it again
never writes twice; a copy of a session completed elsewhere (a resumed one) writes and promotes
nothing more (SessionClosed); a resumed session continues at the turn the live one was at (also
after turns that observed nothing), so promotion by distinct turns is the same with or without
a resume in between."""

from __future__ import annotations

import pytest

import memactors
from memactors.core.budget import estimate_tokens
from memactors.core.errors import PartialWrite

SC = "/org/acme/user/alice/"


def _rt(tmp_path, **cfg):
    rt = memactors.connect(str(tmp_path / "data"), host="process", clock=memactors.ManualClock(),
                           config=cfg or None)
    rt.grant("agent-1", SC, write=True)
    return rt


def _session(rt, task_id="t1"):
    s = rt.session(SC, actor="agent-1", task_id=task_id, goal="plan alice's trip to Lisbon")
    s.start()
    return s


def _note_id(s, text):
    return next(m for m, (slot, t) in s._shown.items() if slot == "scratchpad" and t == text)  # noqa: SLF001


def test_an_erased_note_leaves_the_scratchpad_whole_and_alone(tmp_path):
    rt = _rt(tmp_path)
    try:
        s = _session(rt)
        first, second = "ZEBRAQUILL " * 30, "quokka tours " * 23  # 330 + 299 characters: the window cuts the first
        s.note(first.strip())
        s.note(second.strip())
        s.note("a")
        assert "ZEBRAQUILL" in s.before_llm().text and not s.l0.scratchpad.startswith("ZEBRAQUILL")
        rt.forget(_note_id(s, first.strip()), actor="agent-1", reason="user asked")
        text = s.before_llm().text
        assert "ZEBRAQUILL" not in text and "EBRAQUILL" not in text  # none of it, not even the part the window cut
        assert "quokka tours" in text
        rt.forget(_note_id(s, "a"), actor="agent-1", reason="user asked")
        text = s.before_llm().text
        assert "quokka tours" in text and "(erased)" not in text  # cut out; the other notes keep their every 'a'
        assert s.l0.scratchpad.endswith("quokka tours")
        assert rt.resume_session(SC, actor="agent-1", task_id="t1").l0.scratchpad == s.l0.scratchpad
    finally:
        rt.close()


def test_a_resumed_session_keeps_its_step_when_an_earlier_step_was_erased(tmp_path):
    rt = _rt(tmp_path)
    try:
        s = rt.session(SC, actor="agent-1", task_id="t1", goal="plan alice's trip",
                       plan=["search OSPREYLINK ferries", "book the ferry", "pack light"])
        s.start()
        s.advance()
        s.end_turn()
        hits = rt.recall("OSPREYLINK ferries", actor="agent-1", allowed_scopes=[SC], threshold=0.0, top_k=20).hits
        rt.forget(next(h.memory_id for h in hits if "OSPREYLINK" in h.content), actor="agent-1", reason="asked")
        live = s.before_llm().text
        again = rt.resume_session(SC, actor="agent-1", task_id="t1")
        assert again.l0.current_step == s.l0.current_step == "book the ferry"
        assert again.before_llm().text == live and "OSPREYLINK" not in live
    finally:
        rt.close()


def test_an_erased_step_item_takes_its_plan_text_and_leaves_the_place_live_and_resumed_alike(tmp_path):
    """A step item (what ``advance`` writes) is a copy of its plan item's text: erased, the plan
    step's text goes with it (shown as erased), and the session stays at the place its step mark
    names, in the live session as in one resumed from the ledger."""
    rt = _rt(tmp_path)
    try:
        s = rt.session(SC, actor="agent-1", task_id="t1", goal="plan alice's trip",
                       plan=["search the ferries", "book the ferry", "pack light", "leave"])
        s.start()
        s.advance()
        s.advance()
        s.end_turn()
        steps = list(s._steps)  # noqa: SLF001 - the step items, in the order written
        assert s.l0.current_step == "pack light" and len(steps) == 2
        rt.forget(steps[-1], actor="agent-1", reason="asked")
        live = s.before_llm().text
        again = rt.resume_session(SC, actor="agent-1", task_id="t1")
        assert again.l0.step == s.l0.step == 2 and "pack light" not in live
        assert again.before_llm().text == live and "book the ferry" in live
        rt.forget(steps[0], actor="agent-1", reason="asked")
        live = s.before_llm().text
        again = rt.resume_session(SC, actor="agent-1", task_id="t1")
        assert again.l0.step == s.l0.step == 2 and "book the ferry" not in live
        assert again.before_llm().text == live
        s.advance(3)  # and on from there, as written (at the end of the turn)
        s.end_turn()
        assert rt.resume_session(SC, actor="agent-1", task_id="t1").l0.current_step == "leave"
    finally:
        rt.close()


def test_the_memories_of_a_prompt_never_take_it_over_its_budget(tmp_path):
    rt = _rt(tmp_path)
    try:
        rt.write(SC, "alice's trip to Lisbon:" + "\nLisbon trip" * 60, actor="agent-1")  # 60 line breaks
        rt.write(SC, "alice's trip to Lisbon: she wants a window seat", actor="agent-1")
        s = _session(rt)
        assert len(s.before_llm().memory_ids) == 2
        for budget in range(60, 400, 7):
            p = s.before_llm(budget)
            assert p.tokens == estimate_tokens(p.text) <= budget, budget
            assert p.memory_ids, budget  # the short one fits every one of these budgets
    finally:
        rt.close()


def test_a_pushed_memory_recall_no_longer_serves_leaves_the_prompt(tmp_path):
    rt = _rt(tmp_path)
    try:
        rt.write(SC, "alice's Lisbon trip: hotel by the river OLDHOTEL", actor="agent-1", subject="alice",
                 predicate="hotel", object="river")
        rt.write(SC, "alice's Lisbon trip: she flies TAP SHORTLIVED", actor="agent-1", ttl_days=0.1)
        rt.write(SC, "alice's Lisbon trip: she wants a window seat", actor="agent-1")
        s = _session(rt)
        text = s.before_llm().text
        assert "OLDHOTEL" in text and "SHORTLIVED" in text
        new = rt.write(SC, "alice's Lisbon trip: hotel in Alfama NEWHOTEL", actor="agent-1", subject="alice",
                       predicate="hotel", object="alfama")
        assert new.decision == "superseded_previous"
        text = s.before_llm().text  # within push_refresh_turns: the push is not run again
        assert "OLDHOTEL" not in text and "SHORTLIVED" in text and "window seat" in text
        rt.clock.advance(days=0.2)
        s.observe("user", "she likes trams")
        text = s.before_llm().text
        assert "SHORTLIVED" not in text and "window seat" in text
    finally:
        rt.close()


def test_an_observation_past_its_hard_ttl_leaves_the_prompt_live_and_resumed(tmp_path):
    # The bug: its L1 item left recall, but L0 kept showing it (also after a sweep, and resumed).
    cfg = {"runtime": {"session_ttl_s": 30 * 86400}}
    rt = _rt(tmp_path, **cfg)
    try:
        s = _session(rt)
        s.observe("tool:door", "Desk number for today is 8812", ttl_days=2)
        s.observe("user", "she likes trams")
        s.end_turn()
        assert "8812" in s.before_llm().text
        rt.clock.advance(days=3)
        text = s.before_llm().text
        assert "8812" not in text and "she likes trams" in text and "Lisbon" in text
        rt.gc()
        assert "8812" not in s.before_llm().text
        clock = rt.clock
        rt.close()
        rt = memactors.connect(str(tmp_path / "data"), host="process", clock=clock, config=cfg)
        text = rt.resume_session(SC, actor="agent-1", task_id="t1").before_llm().text
        assert "8812" not in text and "she likes trams" in text
    finally:
        rt.close()


def test_a_session_after_its_runtime_closed_refuses_every_hook(tmp_path):
    rt = _rt(tmp_path)
    s = _session(rt)
    s.observe("user", "alice likes trams")
    rt.close()
    for hook in (lambda: s.observe("user", "x"), lambda: s.note("x"), s.advance, s.end_turn, s.before_llm,
                 lambda: s.complete("done")):
        with pytest.raises(memactors.RuntimeClosed):
            hook()
    assert s.turn == 0 and s.pending == 1  # nothing moved on, nothing buffered lost


def test_a_flush_not_confirmed_keeps_what_it_did_not_write_and_never_writes_twice(tmp_path, monkeypatch):
    rt = _rt(tmp_path)
    rt.grant("admin", "/org/acme/", write=True)
    try:
        s = _session(rt)
        for i in range(3):
            s.observe("user", f"alice likes tram line {i}")
        real = rt._send_writes  # noqa: SLF001

        def timed_out(reqs, now):  # every write committed, only the first confirmed in time
            out = real(reqs, now)
            monkeypatch.setattr(rt, "_send_writes", real)
            raise PartialWrite("not confirmed in time", results=[out[0]] + [None] * (len(out) - 1),
                               failed=list(range(1, len(out))))

        monkeypatch.setattr(rt, "_send_writes", timed_out)
        with pytest.raises(PartialWrite):
            s.before_llm()
        assert s.pending == 2
        text = s.before_llm().text  # the two written again: each answered by its first write
        assert all(text.count(f"alice likes tram line {i}") == 1 for i in range(3))
        assert len({o.memory_id for o in s.l0.observations}) == 3
        rows = rt.audit.sql("SELECT count(*) FROM events WHERE action = 'write_working'", [], actor="admin")
        assert rows[0][0] == 4  # the goal and the three observations, once each
    finally:
        rt.close()


def _shown_anywhere(rt, word):
    hits = rt.recall(word, actor="agent-1", allowed_scopes=[SC], threshold=0.0, top_k=100).hits
    return [h.content for h in hits if word in h.content]


def test_a_copy_of_a_session_completed_elsewhere_writes_and_promotes_nothing(tmp_path):
    rt = _rt(tmp_path)
    try:
        s = _session(rt)
        s.observe("user", "alice likes trams")
        s.before_llm()
        rt.resume_session(SC, actor="agent-1", task_id="t1").complete("done")
        s.observe("user", "alice likes PELICANBOATS", category="preference")
        with pytest.raises(memactors.SessionClosed):
            s.end_turn()
        with pytest.raises(memactors.SessionClosed):
            s.before_llm()
        assert not _shown_anywhere(rt, "PELICANBOATS")
        s2 = _session(rt, "t2")
        s2.observe("user", "alice likes PELICANBOATS", category="preference")
        s3 = rt.resume_session(SC, actor="agent-1", task_id="t2")
        s3.complete("done")
        out = memactors.runtime.session.end_turn_all(rt, [s2])  # a batch leaves it out
        assert out[0].errors and out[0].errors[0].startswith("SessionClosed") and s2.closed
        assert not _shown_anywhere(rt, "PELICANBOATS")
    finally:
        rt.close()


def test_a_tool_calls_evidence_names_only_the_pushed_memories_the_prompt_showed(tmp_path):
    """``after_tool`` logged every memory of the session's push as shown with the action, also
    those the prompt's token budget had left out."""
    rt = _rt(tmp_path)
    try:
        for i in range(12):
            rt.write(SC, f"Alice note {i}: she enjoys trip planning detail number {i} about Lisbon ferries and trains",
                     actor="agent-1")
        s = _session(rt)
        prompt = s.before_llm(token_budget=80)
        pushed = {h.memory_id for h in s._pushed.hits}  # noqa: SLF001
        assert set(prompt.memory_ids) < pushed  # the budget left some out
        with s.before_tool("weather", {"city": "Bergen"}, top_k=1) as call:
            pass
        pulled = {h.memory_id for h in call.hits}
        assert set(call.recalled) == set(prompt.memory_ids) | pulled
        for m in pushed - set(prompt.memory_ids) - pulled:
            assert rt.audit.actions(m, actor="agent-1") == []
        assert rt.audit.actions(prompt.memory_ids[0], actor="agent-1")
    finally:
        rt.close()


def test_a_sessions_outcome_derives_from_none_of_its_items_erased_meanwhile(tmp_path):
    rt = _rt(tmp_path)
    try:
        s = _session(rt)
        s.observe("user", "alice likes the tram to Belem")
        s.observe("user", "alice's gate code is kept elsewhere")
        s.end_turn()
        kept, gone = (o.memory_id for o in s.l0.observations)
        rt.forget(gone, actor="agent-1", reason="asked to")
        outcome = s.complete("trip planned")["outcome"]
        _, edges = rt._calls.get(rt._ledger.provenance.remote([outcome.memory_id]))  # noqa: SLF001 - its edges
        sources = {src for mid, src, _ in edges if mid == outcome.memory_id}
        assert kept in sources and gone not in sources
    finally:
        rt.close()


def _resumed(rt, tmp_path, how):
    """The session of t1 resumed: in the same runtime ("hot"), or after the data folder was closed
    and opened again ("reopen"). Returns (runtime, session)."""
    if how == "reopen":
        clock = rt.clock
        rt.close()
        rt = memactors.connect(str(tmp_path / "data"), host="process", clock=clock)
    return rt, rt.resume_session(SC, actor="agent-1", task_id="t1")


@pytest.mark.parametrize("how", ["hot", "reopen"])
def test_a_resumed_session_continues_at_the_turn_the_live_one_was_at(tmp_path, how):
    """A resumed session restarted at the turn of its newest item: the turns ended after it
    (an observed turn's end, or a turn that observed nothing, which writes no item) were lost."""
    rt = _rt(tmp_path)
    try:
        s = _session(rt)
        assert rt.resume_session(SC, actor="agent-1", task_id="t1").turn == 0
        s.observe("user", "alice likes trams")
        s.end_turn()  # an observed turn
        assert s.turn == 1 and rt.resume_session(SC, actor="agent-1", task_id="t1").turn == 1
        s.end_turn()  # a turn that observed nothing
        s.end_turn()
        assert s.turn == 3
        rt, s = _resumed(rt, tmp_path, how)
        assert s.turn == 3
        s.observe("user", "alice likes ferries")
        assert s.end_turn().turn == 3 and s.turn == 4
        s.end_turn()
        rt, s = _resumed(rt, tmp_path, how)
        assert s.turn == 5
        assert [o.turn for o in s.l0.observations] == [0, 3]  # each observation keeps its own turn
    finally:
        rt.close()


@pytest.mark.parametrize("how", [None, "hot", "reopen"])
@pytest.mark.parametrize("empty_turn", [False, True])
def test_promotion_by_turns_is_the_same_with_or_without_a_resume_in_between(tmp_path, how, empty_turn):
    """A fact seen in turns 0 and 1, then once more after a resume, is seen in three turns (the
    seen_in_turns rule): the resumed session counted the third as the second, and promoted nothing."""
    rt = _rt(tmp_path)
    try:
        s = _session(rt)
        for _ in range(2):
            s.observe("user", "Alice's hotel has a rooftop pool")
            s.end_turn()
        if empty_turn:
            s.end_turn()
        if how is not None:
            rt, s = _resumed(rt, tmp_path, how)
        s.observe("user", "Alice's hotel has a rooftop pool")
        tr = s.end_turn()
        assert [(p["decision"], p["rule"]) for p in tr.promoted] == [("accepted", "seen_in_turns")]
        hits = rt.recall("hotel rooftop pool", actor="agent-1", task_id="t", allowed_scopes=[SC], purpose="test",
                         threshold=0.0).hits
        assert [h.content for h in hits if h.pool == "vault"] == ["Alice's hotel has a rooftop pool"]
    finally:
        rt.close()


def test_a_bad_category_or_allowed_scopes_through_a_session_is_refused_typed_and_writes_nothing(tmp_path):
    """``observe(category=0 / [] / {} / "")`` was taken as "default" (``or``), a NumPy array
    raised NumPy's ValueError; ``recall(allowed_scopes=5)`` a TypeError from the session."""
    import numpy as np

    from memactors.core.errors import InvalidIdentifier, InvalidRecord

    rt = _rt(tmp_path)
    s = _session(rt)
    rt.flush()
    seq = rt.audit.head()["seq"]
    for bad in (0, [], {}, "", np.array([1, 2])):
        with pytest.raises(InvalidIdentifier, match="category is not valid"):
            s.observe("user", "I like aisle seats", category=bad)
    for bad in (5, "abc", None.__class__):
        with pytest.raises(InvalidRecord, match="allowed_scopes"):
            s.recall("seats", allowed_scopes=bad)
    assert s.pending == 0
    rt.flush()
    assert rt.audit.head()["seq"] == seq
    s.observe("user", "I like aisle seats", category="preference")  # a good one is taken
    assert s.pending == 1
    rt.close()
