"""Erasure follows the provenance the runtime recorded, through every owner that holds a copy
(a promotion to /global/, a demotion's L1 copy, the L1 item a memory was promoted from, words
carried as retrieval context), and a caller's ``derived_from`` is a claim: it needs a read grant
and never erases across scopes. Each test starts from a red-team reproduction that once passed."""

from __future__ import annotations

import os

import duckdb
import lance
import pytest

import memactors
from memactors.engine.naming import owner_index
from memactors.core.errors import AccessDenied
from memactors.core.scopes import GLOBAL, parse_scope
from memactors.testing import unique_org

from on_disk import files_holding  # tests/on_disk.py

CFG = {"runtime": {"num_owners": 2, "l2_flush_interval_s": 60.0}}  # flushed by hand: copies stay unflushed


def _other_owner_org(prefix: str) -> str:
    """An org whose owner is not /global/'s: a /global/ copy lives on another owner."""
    while True:
        org = unique_org(prefix)
        if owner_index(parse_scope(f"/org/{org}/"), 2) != owner_index(GLOBAL, 2):
            return org


@pytest.fixture(scope="module")
def rt(ray_session, tmp_path_factory):
    r = memactors.connect(str(tmp_path_factory.mktemp("prov") / "data"), config=CFG)
    r.grant("admin-1", "/global/", write=True)
    yield r
    r.close()


def _ids(rt, query, actor, scopes):
    hits = rt.recall(query, actor=actor, task_id="t", allowed_scopes=scopes, purpose="p", top_k=20,
                     threshold=0.0).hits
    return {h.memory_id: h for h in hits}


@pytest.mark.parametrize("flushed", [False, True])
def test_forget_erases_a_promoted_global_copy_on_its_owner(rt, flushed):
    org, other = _other_owner_org("h1a"), unique_org("h1b")
    mine, theirs = f"/org/{org}/user/u/", f"/org/{other}/user/v/"
    rt.grant("ag-h1", mine, write=True)
    rt.grant("admin-1", mine)
    rt.grant("other-h1", theirs)
    rt.grant("other-h1", "/global/")
    word = f"Xylophagous{org.replace('-', '')}"
    m = rt.write(mine, f"the launch code word is {word}", actor="ag-h1").memory_id
    copy = rt.promote(m, "/global/", actor="admin-1", reason="useful for everyone")["memory_id"]
    if flushed:
        rt.flush()
    assert copy in _ids(rt, word, "other-h1", [theirs, "/global/"])
    out = rt.forget(m, actor="ag-h1", reason="user asked")
    assert out["forgotten"] == [m]  # the copy too, unnamed: ag-h1 may not read /global/
    # Gone from the other owner's hot state before forget returned, for every tenant.
    assert copy not in _ids(rt, word, "other-h1", [theirs, "/global/"])
    assert rt.audit.erased(copy, actor="admin-1")["key_destroyed"]
    rt.purge()
    assert files_holding(rt.data_dir, word.encode()) == []


def test_forgetting_the_copy_erases_what_it_was_copied_from(rt):
    org = _other_owner_org("up")
    mine = f"/org/{org}/user/u/"
    rt.grant("ag-up", mine, write=True)
    rt.grant("admin-1", mine)
    m = rt.write(mine, "Quillfeather keeps the spare key under the mat", actor="ag-up").memory_id
    copy = rt.promote(m, "/global/", actor="admin-1", reason="shared")["memory_id"]
    out = rt.forget(copy, actor="admin-1", reason="the source asked for erasure")
    assert set(out["forgotten"]) == {m, copy}
    assert m not in _ids(rt, "Quillfeather spare key", "ag-up", [mine])


def test_a_rollback_cannot_bring_back_a_memory_forgotten_through_its_demoted_copy(rt):
    org = unique_org("h2")
    s = f"/org/{org}/user/u/"
    rt.grant("ag-h2", s, write=True)
    v = rt.write(s, "Marblewood office code is 4471", actor="ag-h2").memory_id
    for _ in range(3):
        rt.recall("Marblewood office code", actor="ag-h2", task_id="t", allowed_scopes=[s], purpose="p",
                  threshold=0.0)
    before = rt.audit.head()["seq"]
    res = rt.demote_unused(after=3, scope=s)
    assert res["demoted"] == 1
    [w] = [h for h in _ids(rt, "Marblewood office code", "ag-h2", [s]).values() if h.pool == "working"]
    out = rt.forget(w.memory_id, actor="ag-h2", reason="user asked", scope="fact")
    assert set(out["forgotten"]) == {w.memory_id, v}
    assert rt.audit.erased(v, actor="ag-h2")["key_destroyed"]
    plan = rt.rollback(to=before, scope=s, actor="ag-h2", reason="undo the demotion")
    assert {it["action"] for it in plan.items if it["memory_id"] == v} <= {"stays_forgotten"}
    assert not [h for h in _ids(rt, "Marblewood office code", "ag-h2", [s]).values() if "Marblewood" in h.content]


def test_forgetting_a_promoted_memory_erases_the_l1_item_it_came_from(rt):
    org = unique_org("m4")
    s = f"/org/{org}/user/u/"
    rt.grant("ag-m4", s, write=True)
    sess = rt.session(s, actor="ag-m4", task_id="t-m4", goal="book a trip")
    sess.start()
    sess.observe("user", "Alice prefers Tamarind airline for long flights", subject="alice", predicate="airline",
                 object="Tamarind")
    sess.end_turn()
    promoted = [h for h in _ids(rt, "Tamarind airline", "ag-m4", [s]).values() if h.pool == "vault"]
    assert promoted, "the explicit preference was promoted"
    out = rt.forget(promoted[0].memory_id, actor="ag-m4", reason="user asked", scope="fact")
    assert len(out["forgotten"]) >= 2  # the vault memory and the L1 item it is a copy of
    assert not [h for h in _ids(rt, "Tamarind airline", "ag-m4", [s]).values() if "Tamarind" in h.content]


def test_words_carried_as_context_go_with_the_memory_they_came_from(rt):
    org = unique_org("l6")
    s = f"/org/{org}/user/u/"
    rt.grant("ag-l6", s, write=True)
    turn = "I always fly with my Pangolinesque twins"
    m = rt.write(s, turn, actor="ag-l6").memory_id
    d = rt.write(s, "Alice books aisle seats", actor="ag-l6", context=turn).memory_id
    keep = rt.write(s, "Alice books early flights", actor="ag-l6", context="no memory says this").memory_id
    rt.flush()
    assert d in _ids(rt, "Pangolinesque", "ag-l6", [s])
    out = rt.forget(m, actor="ag-l6", reason="user asked")
    assert set(out["forgotten"]) == {m, d}
    found = _ids(rt, "Pangolinesque twins aisle early", "ag-l6", [s])
    assert m not in found and d not in found and keep in found
    out = rt.forget(keep, actor="ag-l6", reason="and this")  # a context that carries nothing stored: alone
    assert out["forgotten"] == [keep]
    rt.purge()
    assert files_holding(rt.data_dir, b"pangolinesque") == []  # search tokens are case-folded


@pytest.mark.parametrize("shape", [
    "From her diary: {t}, she said",  # inside a sentence
    'She wrote "{t}" on the card',  # quoted
    "She wrote \u201c{t}\u201d and left",  # typographic quotes
    "notes (first: {t}; then more)",  # between clause marks
])
def test_words_carried_inside_a_longer_context_go_with_the_memory_they_came_from(rt, shape):
    # The context's pieces were its lines and sentences only: the erased text inside a clause
    # or a quotation stayed in the carrier's search text (and made a recall find it).
    org = unique_org("l7")
    s = f"/org/{org}/user/u/"
    rt.grant("ag-l7", s, write=True)
    turn = "Alice's secret garden is at Vashtorelm lane, behind the mill"
    m = rt.write(s, turn, actor="ag-l7").memory_id
    d = rt.write(s, "Alice waters the roses on Sundays", actor="ag-l7", context=shape.format(t=turn)).memory_id
    other = rt.write(s, "Alice trims the hedge", actor="ag-l7", context=shape.format(t="the garden lane")).memory_id
    # a short common phrase of a memory's inside another's context is no carried text: kept
    thanks = rt.write(s, "thank you", actor="ag-l7").memory_id
    polite = rt.write(s, "Alice answered the letter", actor="ag-l7", context=shape.format(t="thank you")).memory_id
    assert rt.forget(thanks, actor="ag-l7", reason="asked")["forgotten"] == [thanks]
    assert polite in _ids(rt, "Alice answered the letter", "ag-l7", [s])
    out = rt.forget(m, actor="ag-l7", reason="user asked")
    assert set(out["forgotten"]) == {m, d}
    rt.purge()
    assert files_holding(rt.data_dir, b"vashtorelm") == []
    assert other in _ids(rt, "Alice trims the hedge", "ag-l7", [s])


def test_a_claim_needs_a_read_grant_and_never_erases_across_scopes(rt):
    org, other = unique_org("m3"), unique_org("m3x")
    alice, bob, victim = f"/org/{org}/user/alice/", f"/org/{org}/user/bob/", f"/org/{other}/user/v/"
    rt.grant("ag-alice", alice, write=True)
    rt.grant("ag-bob", bob, write=True)
    rt.grant("ag-victim", victim, write=True)
    src = rt.write(alice, "Alice's tenancy ends in March", actor="ag-alice").memory_id
    theirs = rt.write(victim, "v's unrelated note", actor="ag-victim").memory_id
    for ids in ([theirs], [src], ["0" * 32]):  # another tenant's, another user's, unknown: one answer
        with pytest.raises(AccessDenied) as e:
            rt.write(bob, "Bob's summary", actor="ag-bob", derived_from=ids)
        assert theirs not in str(e.value) and "alice" not in str(e.value)
    rt.grant("ag-bob", alice)  # now Bob may read Alice's memories, and claim from them
    bobs = rt.write(bob, "Bob notes Alice moves out in spring", actor="ag-bob", derived_from=[src]).memory_id
    same_scope = rt.write(alice, "summary: Alice moves in March", actor="ag-alice", derived_from=[src]).memory_id
    plan = rt.rollback(memory_id=src, cascade=True, actor="ag-alice", reason="poisoned", dry_run=True)
    assert {it["memory_id"]: it["action"] for it in plan.items}.get(bobs) == "left_to_its_scope"
    out = rt.forget(src, actor="ag-alice", reason="user asked")
    assert set(out["forgotten"]) == {src, same_scope}  # the claim in Alice's own scope goes with it
    assert out["flagged"] == []  # Bob's is his: kept, flagged for him to re-derive, unnamed to Alice's agent
    hit = _ids(rt, "Bob notes Alice spring", "ag-bob", [bob])[bobs]
    assert hit.review == "source_forgotten"


def test_a_refused_claim_refuses_its_whole_write_many(rt):
    """All items are grant-checked before anything is written, their claims too: a call with
    one claim the actor may not make writes nothing; with ``return_errors`` only that item fails."""
    org, other = unique_org("m4"), unique_org("m4x")
    mine, theirs = f"/org/{org}/user/u/", f"/org/{other}/user/v/"
    rt.grant("ag-m4", mine, write=True)
    rt.grant("ag-m4x", theirs, write=True)
    src = rt.write(theirs, "v's note on the lease", actor="ag-m4x").memory_id
    items = [dict(scope=mine, text="the first item of the call", actor="ag-m4"),
             dict(scope=mine, text="a summary of v's lease", actor="ag-m4", derived_from=[src])]
    with pytest.raises(AccessDenied):
        rt.write_many(items)
    assert not _ids(rt, "first item of the call", "ag-m4", [mine])
    out = rt.write_many(items, return_errors=True)
    assert out[0].decision == "accepted" and isinstance(out[1], AccessDenied)
    assert [h.content for h in _ids(rt, "first item of the call", "ag-m4", [mine]).values()] == \
        ["the first item of the call"]


def test_the_provenance_index_is_built_for_a_ledger_from_before_it(ray_session, tmp_path):
    data = str(tmp_path / "data")
    s = "/org/old/user/u/"
    r = memactors.connect(data, config=CFG)
    try:
        r.grant("ag", s, write=True)
        src = r.write(s, "the old fact", actor="ag").memory_id
        d = r.write(s, "made from the old fact", actor="ag", derived_from=[src]).memory_id
    finally:
        r.close()
    con = duckdb.connect(os.path.join(data, "ledger.duckdb"))  # as a ledger from before the index was
    con.execute("DELETE FROM provenance")
    con.execute("DELETE FROM meta WHERE key = 'provenance'")
    con.close()
    r = memactors.connect(data, config=CFG)
    try:
        assert set(r.forget(src, actor="ag", reason="asked")["forgotten"]) == {src, d}
    finally:
        r.close()
    assert lance.dataset(os.path.join(data, "l2", "memories.lance")).count_rows() == 0


def test_a_short_common_phrase_in_a_context_takes_no_memory_with_its_erasure(rt):
    # "Ok", "Thanks!", "see below for details" as a sentence of another memory's context: erasing
    # a memory of that text (a chat item, or one a lower-cleared writer planted) took the other.
    org = unique_org("l8")
    s = f"/org/{org}/user/u/"
    rt.grant("ag-l8", s, write=True)
    pairs = [("Thanks!", "Thanks! Your reservation HX-4471 is confirmed."),
             ("see below for details", "See below for details. The visa expires in April."),
             ("thank you very much", "Thank you very much. The new address is 5 Elm Street.")]
    for short, context in pairs:
        m = rt.write(s, short, actor="ag-l8").memory_id
        kept = rt.write(s, f"Alice's note {len(short)}", actor="ag-l8", context=context).memory_id
        assert rt.forget(m, actor="ag-l8", reason="asked")["forgotten"] == [m]
        assert kept in _ids(rt, f"Alice's note {len(short)}", "ag-l8", [s])
