"""What a write means, asked through the public API on the process host: a changed value is
never a near-copy or an exact duplicate, texts about different subjects are never flagged as
contradicting each other, negation is read in a few more languages, a TTL that would expire a
memory at the instant it is written is refused, and a batch means what the same writes one by
one mean."""

from __future__ import annotations

import math

import pytest

import memactors
from memactors import ops as O
from memactors.core.contradictions import text_contradiction
from memactors.core.records import content_hash, normalise

A = "/org/acme/user/alice/"
B = "/org/acme/user/bob/"
C = "/org/other/user/carol/"  # another tenant: another owner of two


@pytest.fixture
def rt(tmp_path):
    rt = memactors.connect(str(tmp_path / "data"), host="process", clock=memactors.ManualClock(),
                           config={"runtime": {"num_owners": 2}})
    for scope in (A, B, C):
        rt.grant("ag", scope, write=True)
    yield rt
    rt.close()


def _recall(rt, query: str, scopes=(A,)) -> list:
    return rt.recall(query, actor="ag", task_id="t", allowed_scopes=list(scopes), purpose="answer", top_k=20,
                     threshold=0.0).hits


def _pending_ids(rt, scope=A) -> set:
    return {m["memory_id"] for g in rt.contradictions.pending(scope, actor="ag") for m in g["memories"]}


# --- a changed value is never dropped ------------------------------------------------------------


def test_a_signed_number_is_a_changed_value_not_a_near_copy(rt):
    # -18 and 18 embed alike (cosine 1.0): the second once merged into the first, its value lost.
    old = rt.write(A, "The freezer is set to -18 degrees", actor="ag")
    new = rt.write(A, "The freezer is set to 18 degrees", actor="ag")
    assert new.decision == "contradiction_queued" and new.memory_id != old.memory_id
    assert {h.content for h in _recall(rt, "freezer degrees")} == {
        "The freezer is set to -18 degrees", "The freezer is set to 18 degrees"}
    assert {old.memory_id, new.memory_id} <= _pending_ids(rt)
    assert rt.stats()["counters"]["dedups"]["merged"] == 0


@pytest.mark.parametrize("a,b", [
    ("The freezer is set to -18 degrees", "The freezer is set to 18 degrees"),
    ("The account balance is -250 dollars", "The account balance is 250 dollars"),
    ("Alice is 30", "Alice is 31"),
    ("Alice's flight is at 9:30", "Alice's flight is at 9:45"),
])
def test_changed_values_are_flagged(a, b):
    assert text_contradiction(a, b) == "value" and text_contradiction(b, a) == "value"


@pytest.mark.parametrize("a,b", [
    ("Alice paid 1,000 dollars for the laptop", "Alice paid 1000 dollars for the laptop"),
    ("Alice is 30", "Alice is 30.0"),
    ("The range is 5-10 km", "The range is 5 10 km"),  # a dash inside a range, a word or a date is no sign
    ("Bob caught covid-19 in March", "Bob caught covid 19 in March"),
    ("The sale ends on 2024-01-05", "The sale ends on 2024 01 05"),
])
def test_the_same_value_written_two_ways_is_not_a_changed_value(a, b):
    assert text_contradiction(a, b) is None and text_contradiction(b, a) is None


def test_a_leading_minus_is_part_of_the_text(rt):
    # normalise dropped edge punctuation, the sign of a leading number with it: "5 degrees" was
    # then an exact duplicate of "-5 degrees" and refreshed it, the new value lost.
    assert normalise("-5 degrees outside") != normalise("5 degrees outside")
    assert content_hash("-5 degrees outside") != content_hash("5 degrees outside")
    assert normalise("  Alice LIKES   tea. ") == normalise("alice likes tea") == normalise("- alice likes tea!")
    first = rt.write(A, "-5 degrees outside at the cabin", actor="ag")
    second = rt.write(A, "5 degrees outside at the cabin", actor="ag")
    assert second.decision != "refreshed" and second.memory_id != first.memory_id
    assert "5 degrees outside at the cabin" in {h.content for h in _recall(rt, "degrees outside cabin")}
    assert rt.write(A, "-5 degrees outside at the cabin!", actor="ag").decision == "refreshed"  # the same text


# --- contradictions are between the same subject ---------------------------------------------------


@pytest.mark.parametrize("a,b", [
    ("Frank likes dogs", "Frank's sister dislikes dogs"),
    ("Alice likes tea", "Alice's sister hates tea"),
    ("Alice likes green tea", "Bob hates green tea"),
    ("Alice's mother is vegetarian", "Bob's mother is not vegetarian"),
    ("Alice goes to the gym every Monday morning", "Bob never goes to the gym on Monday morning"),
    ("The kitchen window light is on", "The bedroom window light is off"),
])
def test_other_subjects_are_not_flagged(a, b):
    assert text_contradiction(a, b) is None and text_contradiction(b, a) is None


@pytest.mark.parametrize("a,b", [
    ("Yesterday Alice was not at home", "Alice was at home yesterday"),  # the subject not first
    ("On Mondays Alice swims", "Alice never swims on Mondays"),
    ("Alice's flight is not delayed", "Alice's flight is delayed"),
    ("It is raining in Paris", "It is not raining in Paris"),
    ("Alice and Bob like tea", "Alice hates tea"),
    ("The build passes on the main branch", "The build does not pass on the main branch"),
])
def test_the_same_subject_is_still_flagged(a, b):
    assert text_contradiction(a, b) is not None and text_contradiction(b, a) is not None


def test_writes_about_other_subjects_stay_unflagged(rt):
    rt.write(A, "Alice likes green tea", actor="ag")
    assert rt.write(A, "Bob hates green tea", actor="ag").decision == "accepted"
    rt.write(A, "Frank likes dogs", actor="ag")
    assert rt.write(A, "Frank's sister dislikes dogs", actor="ag").decision == "accepted"
    assert _pending_ids(rt) == set()
    assert rt.stats()["counters"]["contradictions"]["queued"] == 0
    assert all(h.review is None for h in _recall(rt, "green tea dogs"))


# --- negation in other languages -------------------------------------------------------------------


@pytest.mark.parametrize("a,b", [
    ("Alice ist Vegetarierin", "Alice ist nicht Vegetarierin"),
    ("Alice isst Fleisch", "Alice isst kein Fleisch"),
    ("Alice est végétarienne", "Alice n'est pas végétarienne"),
    ("Alice mangia carne", "Alice non mangia carne"),
    ("Alice eet vlees", "Alice eet geen vlees"),
    ("Alice es vegetariana", "Alice no es vegetariana"),
    ("Alice is a smoker", "Alice is a non-smoker"),
])
def test_negation_in_other_languages_is_flagged(a, b):
    assert text_contradiction(a, b) == "negation" and text_contradiction(b, a) == "negation"


@pytest.mark.parametrize("a,b", [
    ("Alice ist Vegetarierin", "Bob ist nicht Vegetarier"),
    ("Alice isst kein Fleisch", "Alice isst nie Fleisch"),  # both negated: they agree
    ("Alice ne mange pas de viande", "Alice ne mange jamais de viande"),
])
def test_negation_in_other_languages_does_not_flag_agreement(a, b):
    assert text_contradiction(a, b) is None


def test_a_german_negation_is_queued_not_stored_silently(rt):
    first = rt.write(A, "Alice ist Vegetarierin", actor="ag")
    second = rt.write(A, "Alice ist nicht Vegetarierin", actor="ag")
    assert second.decision == "contradiction_queued"
    assert {first.memory_id, second.memory_id} <= _pending_ids(rt)


# --- TTLs ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("ttl", [0, -1, math.nan, -math.inf, "30", "NEVER", " never", True, [1], 36_500.5,
                                 1e-12, 1e-300])
@pytest.mark.parametrize("field", ["ttl_days", "soft_ttl_days"])
def test_bad_ttls_are_refused_and_write_nothing(rt, ttl, field):
    with pytest.raises(memactors.InvalidRecord):
        rt.write(A, "Alice's parcel arrives on Tuesday", actor="ag", **{field: ttl})
    items = [{"scope": A, "text": "Alice likes pears", "actor": "ag"},
             {"scope": A, "text": "Alice's parcel arrives on Tuesday", "actor": "ag", field: ttl}]
    with pytest.raises(memactors.InvalidRecord, match="^write at position 1: "):
        rt.write_many(items)
    assert rt.stats()["counters"]["writes"] == 0
    out = rt.write_many(items, return_errors=True)
    assert out[0].decision == "accepted" and isinstance(out[1], memactors.InvalidRecord)


@pytest.mark.parametrize("ttl", ["never", math.inf, 36_500, 0.5, 1e-6])
def test_good_ttls_are_taken_and_the_memory_is_recalled(rt, ttl):
    r = rt.write(A, "Alice's parcel arrives on Tuesday", actor="ag", ttl_days=ttl)
    assert r.decision == "accepted"
    assert [h.memory_id for h in _recall(rt, "alice parcel tuesday")] == [r.memory_id]


def test_a_tiny_ttl_is_refused_in_a_batch_too(rt):
    ops = [O.Write(A, "Alice likes pears", "ag"), O.Write(A, "Alice likes plums", "ag", ttl_days=1e-12)]
    with pytest.raises(memactors.InvalidRecord, match="op at position 1|write at position 1"):
        rt.batch(ops)
    out = rt.batch(ops, return_errors=True)
    assert out[0].decision == "accepted" and isinstance(out[1], memactors.InvalidRecord)
    assert {h.content for h in _recall(rt, "alice pears plums")} == {"Alice likes pears"}


def test_a_fact_whose_only_version_expired_takes_a_weaker_value(rt):
    f = dict(subject="alice", predicate="city", actor="ag")
    rt.write(A, "Alice lives in Paris", object="Paris", ttl_days=1, **f)
    rt.clock.advance(days=2)
    new = rt.write(A, "Alice lives in Rome", object="Rome", source="pattern", **f)
    assert (new.decision, new.version) == ("superseded_previous", 2)
    assert [h.content for h in _recall(rt, "alice lives")] == ["Alice lives in Rome"]


def _ttls(rt, mid) -> tuple:
    """(category, soft days, hard days) of ``mid`` as history shows it, from its updated_at."""
    v = next(v for v in rt.history(mid, actor="ag")["versions"] if v["memory_id"] == mid)
    days = lambda t: None if t is None else round((t - v["updated_at"]) / 86_400e6, 3)  # noqa: E731
    return v["category"], days(v["soft_expires_at"]), days(v["hard_expires_at"])


def test_a_rewrite_renews_under_the_ttls_it_states_and_keeps_the_others(rt):
    # The bug: a refresh giving one TTL reset the other to the category's (a 3-day memory
    # refreshed with soft_ttl_days=1 lived 365 days).
    text = "Quinn's temporary desk number is 4471"
    m = rt.write(A, text, actor="ag", ttl_days=3).memory_id
    assert rt.write(A, text, actor="ag", soft_ttl_days=1).decision == "refreshed"
    assert _ttls(rt, m) == ("default", 1, 3)
    rt.write(A, text, actor="ag")
    assert _ttls(rt, m) == ("default", 1, 3)
    rt.write(A, text, actor="ag", soft_ttl_days=10)  # beyond the hard expiry it keeps: cut to it
    assert _ttls(rt, m) == ("default", 3, 3)
    rt.clock.advance(days=4)
    assert _recall(rt, "Quinn desk number") == []
    lease = rt.write(A, "Pia's lease ends in 2030", actor="ag", ttl_days=3650, soft_ttl_days=1).memory_id
    rt.write(A, "Pia's lease ends in 2030", actor="ag", ttl_days=3650)
    assert _ttls(rt, lease) == ("default", 1, 3650)
    f = dict(actor="ag", subject="tom", predicate="employer")
    tom = rt.write(A, "Tom works at Acme", object="Acme", soft_ttl_days=2, ttl_days=50, **f).memory_id
    rt.write(A, "Tom works at Acme", object="Acme", ttl_days=40, **f)
    assert _ttls(rt, tom) == ("default", 2, 40)
    new = rt.update(tom, "Tom works at Globex", actor="ag", object="Globex", ttl_days=30)  # a new version too
    assert _ttls(rt, new.memory_id) == ("default", 2, 30)


def test_a_rewrite_naming_another_category_moves_the_memory_to_it(rt, tmp_path):
    m = rt.write(A, "Alice wants window seats", actor="ag").memory_id
    assert rt.write(A, "Alice wants window seats", actor="ag", category="preference").decision == "refreshed"
    assert _ttls(rt, m) == ("preference", 90, 365)
    rt.write(A, "Alice wants window seats", actor="ag")  # names none: stays a preference
    assert _ttls(rt, m) == ("preference", 90, 365)
    rt.write(A, "Alice wants window seats", actor="ag", category="observation", ttl_days=20)
    assert _ttls(rt, m) == ("observation", 7, 20)
    f = dict(actor="ag", subject="ann", predicate="city")
    rt.write(A, "Ann is in Oslo", object="Oslo", category="entity_fact", ttl_days=20, **f)
    new = rt.write(A, "Ann is in Rome", object="Rome", **f)  # a new version keeps the policy
    assert _ttls(rt, new.memory_id) == ("entity_fact", None, 20)
    rt.close()
    again = memactors.connect(str(tmp_path / "data"), host="process", clock=rt.clock)
    try:  # the category moved in L2 too: a recall from Lance still finds it
        assert _ttls(again, m) == ("observation", 7, 20)
        hits = again.recall("Alice window seats", actor="ag", task_id="t", allowed_scopes=[A], purpose="answer").hits
        assert [h.memory_id for h in hits] == [m]
    finally:
        again.close()


# --- a batch means what the same writes one by one mean --------------------------------------------

_SEQUENCE = [
    dict(scope=A, text="Alice likes to drink green tea with honey every single morning before work"),
    dict(scope=B, text="Alice likes to drink green tea with honey every single morning before work, usually"),
    dict(scope=C, text="Alice likes to drink green tea with honey every single morning before work, usually"),
    # a near-copy that adds no fact (a filler word): merged ("usually" would be a fact of its own)
    dict(scope=A, text="Alice likes to drink green tea with honey every single morning before work, really"),
    dict(scope=B, text="Alice is vegetarian"),
    dict(scope=A, text="Alice is not vegetarian"),
    dict(scope=A, text="Alice is vegetarian"),
    dict(scope=A, text="Alice is not vegetarian"),
    dict(scope=C, text="The freezer is set to -18 degrees"),
    dict(scope=C, text="The freezer is set to 18 degrees"),
    dict(scope=A, text="Bob hates green tea"),
    dict(scope=A, text="Alice lives in Paris", subject="alice", predicate="city", object="Paris"),
    dict(scope=A, text="alice lives in paris.", subject="Alice ", predicate="city", object="PARIS"),
    dict(scope=A, text="Alice lives in Rome", subject="alice", predicate="city", object="Rome", source="agent_inferred"),
    dict(scope=A, text="Alice lives in Oslo", subject="alice", predicate="city", object="Oslo", source="tool",
         confidence=0.9),
    dict(scope=C, text="Alice lives in Rome", subject="alice", predicate="city", object="Rome"),
]


@pytest.mark.parametrize("mode", ["many", "batch"])
def test_a_batch_means_what_the_writes_one_by_one_mean(tmp_path, mode):
    def run(how: str, path: str):
        with memactors.connect(path, host="process", clock=memactors.ManualClock(),
                               config={"runtime": {"num_owners": 2}}) as rt:
            for scope in (A, B, C):
                rt.grant("ag", scope, write=True)
            items = [dict(actor="ag", **i) for i in _SEQUENCE]
            if how == "one":
                res = [rt.write(**i) for i in items]
            elif how == "many":
                res = rt.write_many(items)
            else:
                res = rt.batch([O.Write(**i) for i in items])
            hits = sorted((h.scope, h.content, h.version, h.review)
                          for h in _recall(rt, "alice green tea vegetarian freezer lives", (A, B, C)))
            counters = rt.stats()["counters"]
            return ([(r.decision, r.version, r.status) for r in res], hits,
                    {k: counters[k] for k in ("writes", "dedups", "contradictions")})

    one = run("one", str(tmp_path / "one"))
    assert run(mode, str(tmp_path / mode)) == one
    decisions = [d for d, _, _ in one[0]]
    assert decisions == ["accepted", "accepted", "accepted", "merged", "accepted", "accepted", "contradiction_queued",
                         "refreshed", "accepted", "contradiction_queued", "accepted", "accepted", "refreshed",
                         "kept_as_superseded", "contradiction_queued", "accepted"]
    assert one[2]["dedups"] == {"refreshed": 2, "merged": 1}
    assert one[2]["contradictions"] == {"auto": 1, "queued": 3, "resolved": 0}  # Rome (agent_inferred) lost at once


def test_idempotency_keys_answer_retries_and_refuse_other_writes(rt):
    first = rt.write(A, "Alice's train leaves at nine", actor="ag", idempotency_key="k-1")
    again = rt.write(A, "Alice's train leaves at nine", actor="ag", idempotency_key="k-1")
    assert (again.decision, again.memory_id) == (first.decision, first.memory_id)
    for text in ("Alice's train leaves at ten", "Alice's train leaves at nine "):  # any other write
        with pytest.raises(memactors.IdempotencyConflict):
            rt.write(A, text, actor="ag", idempotency_key="k-1")
    with pytest.raises(memactors.IdempotencyConflict) as err:
        rt.write_many([{"scope": A, "text": "Alice owns a red bike", "actor": "ag", "idempotency_key": "k-2"},
                       {"scope": C, "text": "Carol owns a red bike", "actor": "ag", "idempotency_key": "k-2"}])
    assert err.value.failed == [1] and err.value.results[0].decision == "accepted"
    assert rt.stats()["counters"]["writes"] == 2


# --- known defects elsewhere -----------------------------------------------------------------------


def test_the_same_value_from_another_source_is_not_a_contradiction(rt):
    f = dict(subject="alice", predicate="city", actor="ag")
    rt.write(A, "Alice lives in Paris", object="Paris", **f)
    again = rt.write(A, "Alice lives in Paris, France", object="paris", source="tool", confidence=0.9, **f)
    assert again.decision == "kept_as_superseded"  # the user's word stands; it says the same
    assert _pending_ids(rt) == set()
    other = rt.write(A, "Alice lives in Lyon", object="Lyon", source="tool", confidence=0.9, **f)
    assert other.decision == "contradiction_queued"  # another value, as close: for review


def test_an_expired_version_superseded_is_not_a_contradiction_resolved(rt):
    f = dict(subject="alice", predicate="city", actor="ag")
    rt.write(A, "Alice lives in Paris", object="Paris", ttl_days=1, **f)
    rt.clock.advance(days=2)
    rt.write(A, "Alice lives in Rome", object="Rome", source="pattern", **f)
    assert rt.stats()["counters"]["contradictions"]["auto"] == 0
    rt.write(A, "Alice lives in Oslo", object="Oslo", **f)  # the user's word over a pattern's: a gap of 0.3
    assert rt.stats()["counters"]["contradictions"]["auto"] == 1


def test_texts_of_punctuation_only_are_not_one_another():
    from memactors.core.records import normalise

    assert normalise("...") != normalise("!!!") and normalise("...") == normalise(" ... ")
    assert normalise("Hello, world!") == normalise("hello, world") and normalise("-5 degrees") != normalise("5 degrees")


def test_a_promotion_or_another_voice_seen_again_never_shortens_a_memory():
    # A session item with a 2-day TTL re-observing a vault fact refreshed it under the item's
    # TTL (a promotion's cap read as a statement), and the sweep erased it 3 days later; a
    # weaker source rewriting a never-expiring fact as an "observation" moved it to 90 days.
    clock = memactors.ManualClock()
    with memactors.connect("memory://", clock=clock) as rt:
        a = "/org/acme/user/alice/"
        rt.grant("ag", a, write=True)
        rt.grant("bot", a, write=True)
        seats = rt.write(a, "Alice prefers window seats", actor="ag", category="preference", ttl_days=3000).memory_id
        born = rt.write(a, "Alice was born in Porto in 1990", actor="ag", category="entity_fact").memory_id
        s = rt.session(a, actor="ag", task_id="t1", goal="Book a flight")
        s.start()
        s.observe("user", "Alice prefers window seats", category="preference", ttl_days=2)
        s.end_turn()
        again = rt.write(a, "Alice was born in Porto in 1990", actor="bot", source="agent_inferred",
                         category="observation")
        assert again.decision == "refreshed" and again.memory_id == born
        v = rt.history(born, actor="ag")["versions"][-1]
        assert v["category"] == "entity_fact" and v["hard_expires_at"] is None
        clock.advance(days=400)
        rt.gc()  # unused for 400 days they may be set aside (evicted), never erased
        for mid in (seats, born):
            assert rt.history(mid, actor="ag")["versions"][-1]["status"] != "tombstoned", mid
            assert not rt.audit.erased(mid, actor="ag")["key_destroyed"]
