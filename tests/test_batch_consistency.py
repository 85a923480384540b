"""One thing asked several ways (``write``, ``write_many``, ``batch``, the agent handle) is
refused alike: the same typed error, naming the caller's position. On the in-memory host."""

from __future__ import annotations

import pytest

import memactors
from memactors import ops as O
from memactors.core.errors import InvalidRecord

ALICE, BOB = "/org/bc/user/alice/", "/org/bc/user/bob/"


@pytest.fixture
def rt():
    with memactors.connect("memory://") as rt:
        rt.grant("ag", ALICE, write=True)
        yield rt


def test_write_many_names_the_position_of_a_write_beyond_the_grants(rt):
    items = [{"scope": ALICE, "text": "alice likes green tea", "actor": "ag"},
             {"scope": ALICE, "text": "alice walks the dog", "actor": "ag"},
             {"scope": BOB, "text": "bob likes green tea", "actor": "ag"}]
    with pytest.raises(memactors.AccessDenied) as many:
        rt.write_many(items)
    with pytest.raises(memactors.AccessDenied) as batch:
        rt.batch([O.Write(**i) for i in items])
    assert str(many.value).startswith("write at position 2: ")
    assert str(many.value) == str(batch.value)
    assert rt.write_many(items[:2])[1].decision == "accepted"  # a grant that covers them: no position, no error


def test_write_many_names_the_position_of_a_refused_derived_from_claim(rt):
    src = rt.write(ALICE, "alice lives in Lisbon", actor="ag")
    rt.grant("other", BOB, write=True)
    items = [{"scope": BOB, "text": "bob visits Porto", "actor": "other"},
             {"scope": BOB, "text": "summary: a city", "actor": "other", "derived_from": [src.memory_id]}]
    with pytest.raises(memactors.AccessDenied, match=r"^write at position 1: derived_from names a memory"):
        rt.write_many(items)
    assert rt.audit.sql("SELECT count(*) FROM events WHERE action = 'write'", actor="other")[0][0] == 0


def test_a_batch_names_the_position_of_an_op_its_owner_refused(rt):
    rt.write(ALICE, "alice's train leaves at nine", actor="ag", idempotency_key="k-1")
    ops = [O.Write(ALICE, "alice likes green tea", "ag"),
           O.Write(ALICE, "alice's train leaves at ten", "ag", idempotency_key="k-1")]
    with pytest.raises(memactors.IdempotencyConflict) as batch:
        rt.batch(ops)
    assert str(batch.value).startswith("op at position 1: ") and batch.value.failed == [1]
    assert batch.value.results[0].decision == "accepted" and batch.value.results[1] is None
    with pytest.raises(memactors.IdempotencyConflict) as many:
        rt.write_many([{"scope": ALICE, "text": "alice's train leaves at ten", "actor": "ag", "idempotency_key": "k-1"}])
    assert many.value.failed == [0]
    assert rt.batch(ops[:1])[0].decision == "refreshed"  # nothing refused: nothing named


def test_start_all_checks_every_session_before_it_starts_any(rt):
    from memactors.runtime.session import end_turn_all, flush_all, recall_all, start_all

    rt.grant("bg", BOB, write=True)
    fresh = rt.session(ALICE, actor="ag", task_id="t1", goal="Book a flight to Lisbon")
    started = rt.session(BOB, actor="bg", task_id="t2", goal="Book a hotel in Porto")
    started.start()
    for bad in ([fresh, started], [fresh, fresh]):
        with pytest.raises(InvalidRecord):
            start_all(rt, bad)
    assert not fresh.started and fresh.start().recall_id  # left as it was: it still starts
    for call, arg in ((start_all, None), (start_all, [5]), (flush_all, [5]), (end_turn_all, "s"),
                      (recall_all, [(started, "hotel")]), (recall_all, [5])):
        with pytest.raises(InvalidRecord):  # typed, never an AttributeError or an unpacking ValueError
            call(rt, arg)
    assert [type(r).__name__ for r in recall_all(rt, [(started, "hotel", None, None)])] == ["RecallResult"]
