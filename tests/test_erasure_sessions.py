"""Erasing a vault memory a session promoted takes every L1 item the promotion linked to it, in
both erase modes, on the process host: the items of the same fact the promotion superseded (a
text seen in three turns, promoted from the third) and the item of a promotion that only
refreshed it. They leave history, ``recall(at=...)``, a rollback and the open session's
prompt, and stay linked after a reopen (the ledger's provenance index, also when it is rebuilt
from the events). An L1 item of the same text the runtime never linked is kept. Each test
starts from a red-team reproduction that once passed."""

from __future__ import annotations

import os

import duckdb
import pytest

import memactors

SC = "/org/acme/user/alice/"
TIER = "Alice's frequent flyer tier is Quokkaplatinum"
INSURER = dict(subject="alice", predicate="insurer", object="Wombatmed", category="preference")


def _rt(path):
    rt = memactors.connect(str(path), host="process")
    rt.grant("ag", SC, write=True)
    return rt


def _recall(rt, query, **kw):
    return rt.recall(query, actor="ag", task_id="t", allowed_scopes=[SC], purpose="p", threshold=0.0, top_k=20,
                     **kw).hits


def _seen_in_history(rt, word) -> list[str]:
    """The ids of every version whose history still shows ``word``."""
    ids = [r[0] for r in rt.audit.sql("SELECT DISTINCT memory_id FROM events WHERE memory_id IS NOT NULL", actor="ag")]
    return [m for m in ids for v in rt.history(m, actor="ag")["versions"] if word in (v.get("content") or "")]


def _seen_in_the_past(rt, query, word, upto) -> list[int]:
    """The seqs at which ``recall(at=...)`` still returns ``word``."""
    return [at for at in range(2, upto + 1) if any(word in h.content for h in _recall(rt, query, at=at))]


def _three_turns(rt):
    """A text seen in three turns (promoted by ``seen_in_turns`` from the third), the session
    completed; returns (the vault memory, the seq while the first two items were live)."""
    s = rt.session(SC, actor="ag", task_id="t42", goal="Plan a trip", plan=["search"])
    s.start()
    for turn in range(3):
        s.observe("user", TIER)
        s.before_llm()
        if turn == 1:
            live = rt.audit.head()["seq"]
        tr = s.end_turn()
    assert [p["rule"] for p in tr.promoted] == ["seen_in_turns"]
    s.complete("done", "success")
    return tr.promoted[0]["memory_id"], live


@pytest.mark.parametrize("erase", ["fact", "memory"])
def test_the_items_a_seen_in_turns_promotion_superseded_go_with_its_memory(tmp_path, erase):
    rt = _rt(tmp_path / "data")
    try:
        vault, live = _three_turns(rt)
        assert any("Quokka" in h.content for h in _recall(rt, "frequent flyer tier", at=live))
        out = rt.forget(vault, actor="ag", reason="user asked", erase=erase)
        assert len(out["forgotten"]) == 4  # the vault memory and the three L1 items of its text
        rt.purge()
        assert _seen_in_history(rt, "Quokka") == []
        assert _seen_in_the_past(rt, "frequent flyer tier", "Quokka", live) == []
        plan = rt.rollback(at=live, actor="ag", reason="undo", dry_run=True)
        assert {it["action"] for it in plan.items if it["memory_id"] in out["forgotten"]} == {"stays_forgotten"}
        rt.rollback(at=live, actor="ag", reason="undo")
        assert not [h for h in _recall(rt, "frequent flyer tier") if "Quokka" in h.content]
    finally:
        rt.close()
    rt = _rt(tmp_path / "data")  # and after a reopen (L1 and L2 rebuilt from the ledger)
    try:
        assert _seen_in_history(rt, "Quokka") == []
        assert _seen_in_the_past(rt, "frequent flyer tier", "Quokka", live) == []
    finally:
        rt.close()


@pytest.mark.parametrize("reindex", [False, True])
def test_the_link_holds_after_a_reopen_and_a_rebuilt_provenance_index(tmp_path, reindex):
    data = tmp_path / "data"
    rt = _rt(data)
    try:
        vault, live = _three_turns(rt)
    finally:
        rt.close()
    if reindex:  # as a ledger from before the index: rebuilt from the events, the status patches too
        con = duckdb.connect(os.path.join(data, "ledger.duckdb"))
        con.execute("DELETE FROM provenance")
        con.execute("DELETE FROM meta WHERE key = 'provenance'")
        con.close()
    rt = _rt(data)
    try:
        assert len(rt.forget(vault, actor="ag", reason="user asked")["forgotten"]) == 4
        assert _seen_in_history(rt, "Quokka") == []
        assert _seen_in_the_past(rt, "frequent flyer tier", "Quokka", live) == []
    finally:
        rt.close()


@pytest.mark.parametrize("erase", ["memory", "fact"])
def test_the_item_of_a_refreshing_promotion_goes_with_the_memory(tmp_path, erase):
    rt = _rt(tmp_path / "data")
    try:
        s = rt.session(SC, actor="ag", task_id="t43", goal="Book the clinic visit")
        s.start()
        s.observe("user", "Alice's insurer is Wombatmed", **INSURER)
        s.before_llm()
        first = s.end_turn().promoted[0]
        s.observe("user", "Alice's insurer is Wombatmed", **INSURER)
        s.before_llm()
        live = rt.audit.head()["seq"]
        again = s.end_turn().promoted[0]
        assert again["decision"] == "refreshed" and again["memory_id"] == first["memory_id"]
        out = rt.forget(first["memory_id"], actor="ag", reason="user asked", erase=erase)
        assert {first["promoted_from"], again["promoted_from"]} <= set(out["forgotten"])
        assert _seen_in_history(rt, "Wombat") == []
        assert "Wombat" not in s.before_llm().text  # the open session's prompt lets it go too
        assert _seen_in_the_past(rt, "insurer", "Wombat", live) == []
        rt.rollback(at=live, actor="ag", reason="undo")
        assert not [h for h in _recall(rt, "insurer") if "Wombat" in h.content]
    finally:
        rt.close()
    rt = _rt(tmp_path / "data")
    try:
        assert _seen_in_history(rt, "Wombat") == []
    finally:
        rt.close()


def test_an_item_of_the_same_text_the_runtime_never_linked_is_kept(tmp_path):
    rt = _rt(tmp_path / "data")
    try:
        vault, _ = _three_turns(rt)
        other = rt.session(SC, actor="ag", task_id="t44", goal="Plan another trip")
        other.start()
        other.observe("user", TIER)  # once, in another session: never promoted, never linked
        other.before_llm()
        rt.forget(vault, actor="ag", reason="user asked", erase="fact")
        assert len(_seen_in_history(rt, "Quokka")) == 1
        assert "Quokka" in other.before_llm().text
    finally:
        rt.close()


@pytest.mark.parametrize("erase", ["plan", "step"])
def test_a_plan_step_and_the_step_item_advance_copies_it_to_go_together(tmp_path, erase):
    """``advance()`` writes the current step's text as a step item: a copy of its plan item, so
    erasing either erases both; the session's place is its step mark's, kept across the erasure
    and a resume."""
    rt = _rt(tmp_path / "d")
    s = rt.session(SC, actor="ag", task_id="trip", goal="Plan the trip", plan=["Pack the bags", "Book Quokkatel"])
    s.start()
    s.advance()
    s.end_turn()
    plan_id = next(m for m, (slot, text) in s._shown.items() if slot == "plan" and "Quokkatel" in text)
    step_id = next(iter(s._steps))
    out = rt.forget(plan_id if erase == "plan" else step_id, actor="ag", reason="user asked")
    assert set(out["forgotten"]) == {plan_id, step_id}
    assert _seen_in_history(rt, "Quokkatel") == [] and not [h for h in _recall(rt, "Quokkatel") if "Quokkatel" in h.content]
    assert "> 2. (erased) [current]" in s.before_llm().text
    again = rt.resume_session(SC, actor="ag", task_id="trip")
    assert again.l0.step == 1 and "Quokkatel" not in again.before_llm().text
    rt.close()
