"""Lifecycle interactions found by red-teaming, on the process host with a simulated clock:
each test is a promise that broke when two lifecycle mechanisms met."""

from __future__ import annotations

import pytest

import memactors
from process_folder import A, S, folder  # noqa: F401 - a fixture (tests/process_folder.py)
from process_folder import connect as _connect
from process_folder import reopen as _reopen


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


def _price(rt, eur: int, **kw):
    return rt.write(S, f"Flight TP123 costs {eur} EUR", actor=A, subject="tp123", predicate="price",
                    object=f"{eur} eur", source="tool", confidence=0.7, **kw)


@pytest.mark.parametrize("reopen", [False, True])
def test_a_source_repeating_a_value_can_still_update_it(folder, reopen):
    """A tool saying the same price again is no new evidence: its confidence stays, and its next
    price is the fact's new version (it was kept as superseded behind the repeated one)."""
    rt, clock, path = folder
    first = _price(rt, 320)
    assert _price(rt, 320).decision == "refreshed"
    if reopen:
        rt = _reopen(rt, path, clock)
    assert rt.history(first.memory_id, actor=A)["versions"][0]["confidence"] == pytest.approx(0.7)
    new = _price(rt, 350)
    assert new.decision == "superseded_previous" and new.supersedes == first.memory_id
    hits = rt.recall("TP123 price", actor=A, task_id="t", allowed_scopes=[S], purpose="p").hits
    assert [h.content for h in hits] == ["Flight TP123 costs 350 EUR"]
    rt.close()


def test_another_source_confirming_raises_confidence_and_the_voice_still_updates(folder):
    """The same text from another source kind confirms it (+ refresh_confidence_bump); the first
    voice's next value still supersedes it: a confirmation alone never locks a fact."""
    rt, _, _ = folder
    first = _price(rt, 320)
    again = rt.write(S, "Flight TP123 costs 320 EUR", actor=A, subject="tp123", predicate="price", object="320 eur",
                     source="user_stated", confidence=0.7)
    assert again.decision == "refreshed"
    assert rt.history(first.memory_id, actor=A)["versions"][0]["confidence"] == pytest.approx(0.75)
    assert _price(rt, 350).decision == "superseded_previous"
    # markedly less sure, the same voice does not override (by more than contradiction_gap)
    weak = rt.write(S, "Flight TP123 costs 999 EUR", actor=A, subject="tp123", predicate="price", object="999 eur",
                    source="tool", confidence=0.4)
    assert weak.decision == "kept_as_superseded"


@pytest.mark.parametrize("pair", [(0.5, 0.7), (0.7, 0.9), (0.8, 1.0), (0.1, 0.3)])
@pytest.mark.parametrize("reopen", [False, True])
def test_a_gap_of_exactly_contradiction_gap_is_a_close_call_hot_and_reopened(folder, pair, reopen):
    """Only a gap of more than 0.2 decides alone, whatever float32 or a sum of bumps makes of it."""
    rt, clock, path = folder
    _city(rt, "Paris", pair[0], "tool")
    if reopen:
        rt = _reopen(rt, path, clock)
    assert _city(rt, "Rome", pair[1], "agent_inferred").decision == "contradiction_queued"
    rt.close()


def test_a_rewrite_that_sets_its_own_ttl_renews_the_memory_under_it(folder):
    """The same text written again with ``ttl_days`` keeps the memory (refreshed) under the TTL
    the write asked for, shorter or longer than its own."""
    rt, clock, path = folder
    c = rt.write(S, "Alice's old address is 5 Elm St", actor=A)  # the default policy: a year
    assert rt.write(S, "Alice's old address is 5 Elm St", actor=A, ttl_days=1).decision == "refreshed"
    v = rt.history(c.memory_id, actor=A)["versions"][0]
    assert v["hard_expires_at"] - v["updated_at"] == 86_400_000_000
    b = rt.write(S, "Alice's hotel booking ref is QX7", actor=A, ttl_days=2)
    rt.write(S, "Alice's hotel booking ref is QX7", actor=A, ttl_days=365)
    clock.advance(days=3)
    rt = _reopen(rt, path, clock)
    got = [h.memory_id for h in rt.recall("Alice address hotel booking", actor=A, task_id="t", allowed_scopes=[S],
                                           purpose="p", threshold=0.0).hits]
    assert c.memory_id not in got and b.memory_id in got
    rt.close()


@pytest.mark.parametrize("unseen", ["\u200b", "\u00ad", "\u2060", "\ufeff"])
def test_characters_that_show_nothing_make_no_other_memory_or_fact(folder, unseen):
    """A zero-width space, soft hyphen, word joiner or byte-order mark inside a word: the same
    text (refreshed, one hit) and the same fact (superseded, not a second live version)."""
    rt, _, _ = folder
    a = rt.write(S, "Alice is allergic to cats", actor=A)
    b = rt.write(S, f"Alice is aller{unseen}gic to cats", actor=A)
    assert b.decision == "refreshed" and b.memory_id == a.memory_id
    rt.write(S, "Alice lives in Paris", actor=A, subject="alice", predicate="city", object="paris")
    rome = rt.write(S, "Alice lives in Rome", actor=A, subject=f"ali{unseen}ce", predicate="city", object="rome")
    assert rome.decision == "superseded_previous" and rome.version == 2


def test_a_value_with_the_minus_sign_is_the_value_with_a_hyphen(folder):
    """U+2212 "−5" is -5: against 5 a contradiction (never a near-copy merge), against "-5" the same."""
    rt, _, _ = folder
    rt.write(S, "The freezer limit is 5 degrees", actor=A)
    assert rt.write(S, "The freezer limit is \u22125 degrees", actor=A).decision == "contradiction_queued"
    rt.write(S, "The fridge limit is -3 degrees", actor=A)
    assert rt.write(S, "The fridge limit is \u22123 degrees", actor=A).decision == "refreshed"


@pytest.mark.parametrize("first,second", [
    ("Alice owes Bob 50 dollars", "Bob owes Alice 50 dollars"),
    ("Carol reports to Dave", "Dave reports to Carol"),
    ("The flight goes from Paris to Rome", "The flight goes from Rome to Paris"),
    ("Alice prefers tea, not coffee", "Alice prefers coffee, not tea"),
    ("Alice is pregnant", "Alice was pregnant"),
    ("Alice is vegetarian", "Is Alice vegetarian?"),
    # a long shared part makes a bag-of-words vector a near-copy of each of these pairs
    *[(f"For the quarterly offsite in Lisbon with the whole engineering team, Alice {x}",
       f"For the quarterly offsite in Lisbon with the whole engineering team, Alice {y}")
      for x, y in (("arrives before the keynote", "arrives after the keynote"), ("has two guests", "has three guests"),
                   ("goes up to floor 5", "goes down to floor 5"), ("is happy with the venue", "is unhappy with the venue"),
                   ("will be the organiser", "was the organiser"), ("buys the tickets", "sells the tickets"))],
])
def test_a_near_copy_that_says_another_thing_is_not_merged(folder, first, second):
    """Two texts a bag-of-words vector cannot tell apart (roles swapped, another tense, a
    question): both kept, each recalled; a wrong merge lost the second."""
    rt, _, _ = folder
    a = rt.write(S, first, actor=A)
    b = rt.write(S, second, actor=A)
    assert b.decision != "merged" and b.memory_id != a.memory_id
    got = {h.content for h in rt.recall(second, actor=A, task_id="t", allowed_scopes=[S], purpose="p", top_k=10,
                                        threshold=0.0).hits}
    assert {first, second} <= got


def test_texts_embedded_from_one_embed_text_are_not_merged(folder):
    rt, _, _ = folder
    a = rt.write(S, "Alice's flight TP123 leaves Friday at 09:00", actor=A, embed_text="Alice travel")
    b = rt.write(S, "Alice's hotel in Lisbon is the Hilton, booking ref QX7", actor=A, embed_text="Alice travel")
    assert b.decision == "accepted" and b.memory_id != a.memory_id
    # a near-copy in the same words is still merged
    assert rt.write(S, "Alice's flight TP123 leaves Friday at 09:00!", actor=A).decision in ("merged", "refreshed")


def test_another_source_echoing_a_fact_lifts_it_once_not_once_an_echo(folder):
    """A tool repeating the user's fact eight times lifts it to the tool's confidence plus the
    bump, once: the user's own next value still stands (it was locked out at 1.0)."""
    rt, _, _ = folder
    fact = dict(actor=A, subject="alice", predicate="city")
    first = rt.write(S, "Alice lives in Paris", object="paris", source="user_stated", confidence=0.6, **fact)
    for _ in range(8):
        assert rt.write(S, "Alice lives in Paris", object="paris", source="tool", confidence=0.7,
                        **fact).decision == "refreshed"
    assert rt.history(first.memory_id, actor=A)["versions"][0]["confidence"] == pytest.approx(0.75)
    assert rt.write(S, "Alice lives in Rome", object="rome", source="user_stated", confidence=0.7,
                    **fact).decision == "superseded_previous"


@pytest.mark.parametrize("reopen", [False, True], ids=["hot", "cold"])
def test_a_side_past_its_hard_ttl_is_no_side_a_reviewer_can_pick(folder, reopen):
    """Before a sweep erases it, a side past its hard TTL is out of recall: pending() leaves it
    (and a group left with one side) out, and resolve() refuses it as the winner (else it
    superseded the only side recall still served, and the sweep then erased the winner)."""
    rt, clock, path = folder
    paris, rome = _disputed(rt, paris_ttl=5)
    clock.advance(days=6)
    if reopen:
        rt = _reopen(rt, path, clock)
    try:
        assert rt.contradictions.pending(S, actor=A) == []
        with pytest.raises(memactors.NotFound, match="has expired"):
            rt.contradictions.resolve(paris.memory_id, actor=A, reason="picked the expired side")
        assert list(_reviews(rt)) == [rome.memory_id]
        rt.gc()
        assert _reviews(rt) == {rome.memory_id: None}  # the sweep ended the contradiction
    finally:
        rt.close()


def test_a_memory_past_its_hard_ttl_is_not_due_for_review(folder):
    rt, clock, _ = folder
    fact = dict(actor=A, subject="alice", predicate="employer", category="entity_fact")
    short = rt.write(S, "Alice works at Acme", object="acme", ttl_days=200, **fact)
    long = rt.write(S, "Alice's blood type is O+", subject="alice", predicate="blood", object="o+", actor=A,
                    category="entity_fact")
    clock.advance(days=181)
    rt.gc()
    rt.gc()  # marked stale first (unused for half a year), flagged for review by the next sweep
    assert {m["memory_id"] for m in rt.review.due(S, actor=A)} == {short.memory_id, long.memory_id}
    clock.advance(days=20)  # past the hard TTL, before the next sweep
    assert [m["memory_id"] for m in rt.review.due(S, actor=A)] == [long.memory_id]
    with pytest.raises(memactors.NotFound, match="has expired"):
        rt.review.confirm(short.memory_id, actor=A, reason="still true")


@pytest.mark.parametrize("reopen", [False, True], ids=["hot", "cold"])
def test_a_confirmation_lifting_one_side_past_the_gap_settles_the_close_call(folder, reopen):
    """The user stating one side of an open close call (Paris 0.8 vs Rome 0.7) refreshes it to
    1.0: 0.3 above Rome, more than contradiction_gap, so it settles the call as a new value
    that sure would (it stayed open, both flagged)."""
    rt, clock, path = folder
    three = _city(rt, "Oslo", 0.7, "tool")
    four = _city(rt, "Bern", 0.75, "agent_inferred")
    assert four.decision == "contradiction_queued"
    _city(rt, "Oslo", 0.7, "tool")  # the same voice again: no new evidence, still open
    assert _flagged(rt) == {three.memory_id, four.memory_id}
    if reopen:
        rt = _reopen(rt, path, clock)
    try:
        out = _city(rt, "Oslo", 1.0, "user_stated")
        assert (out.decision, out.memory_id) == ("refreshed", three.memory_id)
        assert _flagged(rt) == set()
        assert _reviews(rt) == {three.memory_id: None}
        versions = {v["memory_id"]: v for v in rt.history(three.memory_id, actor=A)["versions"]}
        assert versions[four.memory_id]["status"] == "superseded"
        rt = _reopen(rt, path, clock)
        assert _flagged(rt) == set() and _reviews(rt) == {three.memory_id: None}
    finally:
        rt.close()


def test_a_confirmation_within_the_gap_leaves_the_close_call_open(folder):
    rt, _, _ = folder
    paris, rome = _disputed(rt)
    assert _city(rt, "Rome", 0.8, "task_outcome").decision == "refreshed"  # 0.8 vs 0.8: still close
    assert _flagged(rt) == {paris.memory_id, rome.memory_id}
