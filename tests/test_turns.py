"""The parts of one call take their locks in the caller's order (``engine.turns``), whatever
order they arrive in and their preparing ends in; a part refused for back pressure holds back
the later ones; an earlier part that never comes holds the later ones back for a bounded time.
Pure asyncio, no storage: the hosts' contract is in ``test_hosts``."""

from __future__ import annotations

import asyncio

import pytest

from memactors.core.errors import BackPressure, BadArguments
from memactors.engine.turns import Turns, check_order

WAIT = 5.0


async def _part(turns: Turns, order, prepare_s: float, log: list, arrive_s: float = 0.0) -> None:
    await asyncio.sleep(arrive_s)  # on its way (Ray starts an async actor's calls in any order)
    ticket = turns.arrive(order)
    try:
        await asyncio.sleep(prepare_s)  # preparing: a later part may end it first
        await turns.turn(ticket, WAIT)
        log.append(order[1] if order else None)  # "holds its locks"
        turns.leave(ticket)
        await asyncio.sleep(0.01)  # deciding, committing
    finally:
        turns.leave(ticket)


@pytest.mark.parametrize("arrivals", [(0.0, 0.0, 0.0), (0.04, 0.02, 0.0)])
def test_parts_take_their_locks_in_the_callers_order_whatever_their_arrival_and_preparing(arrivals):
    async def go():
        turns, log = Turns(), []
        # the last part is small (prepared in place, at once), the first ones slow (a gate worker)
        await asyncio.gather(*[_part(turns, ("call", k, 3), s, log, a)
                               for k, (s, a) in enumerate(zip([0.05, 0.03, 0.0], arrivals))])
        return log, turns

    log, turns = asyncio.run(go())
    assert log == [0, 1, 2]
    assert not turns._low and not turns._done and not turns._moved  # noqa: SLF001 - nothing left behind


def test_other_calls_and_unordered_parts_never_wait():
    async def go():
        turns, log = Turns(), []
        slow = asyncio.create_task(_part(turns, ("a", 0, 2), 0.05, log))
        await asyncio.sleep(0)
        await asyncio.gather(_part(turns, ("b", 0, 1), 0.0, log), _part(turns, None, 0.0, log))
        at_once = list(log)
        await slow
        return at_once

    assert sorted(asyncio.run(go()), key=str) == [0, None]


def test_a_part_that_ends_before_its_locks_lets_the_later_ones_on():
    async def go():
        turns, log = Turns(), []

        async def refused_in_prepare():  # every write blocked by the gate: no locks needed
            ticket = turns.arrive(("c", 0, 2))
            try:
                await asyncio.sleep(0.02)
            finally:
                turns.leave(ticket)

        await asyncio.wait_for(asyncio.gather(refused_in_prepare(), _part(turns, ("c", 1, 2), 0.0, log)), 2)
        return log

    assert asyncio.run(go()) == [1]


def test_an_earlier_part_that_never_comes_holds_the_later_ones_a_bounded_time():
    async def go():
        turns = Turns()
        ticket = turns.arrive(("d", 1, 2))
        t0 = asyncio.get_running_loop().time()
        await turns.turn(ticket, 0.1)
        return asyncio.get_running_loop().time() - t0

    assert 0.09 <= asyncio.run(go()) < 2


def test_a_refused_part_holds_back_the_later_ones_until_it_is_taken_in():
    async def go():
        turns, log = Turns(), []
        t1 = turns.arrive(("e", 1, 3))  # arrived before the first part's refusal
        turns.refuse(turns.arrive(("e", 0, 3)))  # back pressure: the facade resends it later
        with pytest.raises(BackPressure):
            turns.arrive(("e", 2, 3))
        assert turns.arrive(("f", 5, 6)) == ("f", 5, 6)  # another call is not held back
        waiting = asyncio.create_task(turns.turn(t1, WAIT))
        await asyncio.sleep(0.02)
        assert not waiting.done()  # the refused part is still to come
        t0 = turns.arrive(("e", 0, 3))  # resent: taken in
        turns.leave(t0)
        await asyncio.wait_for(waiting, 1)
        turns.leave(t1)
        t2 = turns.arrive(("e", 2, 3))  # the later ones with it
        turns.leave(t2)
        return turns

    turns = asyncio.run(go())
    assert "e" not in turns._low and not turns._refused  # noqa: SLF001


def test_calls_remembered_for_refusals_are_bounded():
    turns = Turns()
    for i in range(5000):
        turns.refuse(turns.arrive((f"g{i}", 0, 2)))
    assert len(turns._refused) <= 4096  # noqa: SLF001


@pytest.mark.parametrize("order", [("t", 0, 1), ["t", 3, 4], ("x" * 64, 10**9, 10**9 + 1)])
def test_orders_a_caller_may_send(order):
    assert check_order(order) == (*order, 0)
    assert check_order([*order, order[1]]) == (*order, order[1])
    assert check_order(None) is None


def test_a_part_resent_to_a_restarted_owner_does_not_wait_for_the_parts_its_caller_saw_end():
    # The owner that decided parts 0 and 1 restarted; part 2, resent, reaches a new Turns.
    async def go():
        turns = Turns()
        ticket = turns.arrive(check_order(("h", 2, 4, 2)))
        await asyncio.wait_for(turns.turn(ticket, WAIT), 1)
        turns.leave(ticket)
        late = turns.arrive(check_order(("h", 3, 4, 2)))  # sent before part 2 was answered
        await asyncio.wait_for(turns.turn(late, WAIT), 1)
        turns.leave(late)
        return turns

    turns = asyncio.run(go())
    assert not turns._low and not turns._done  # noqa: SLF001


@pytest.mark.parametrize("arrived", [True, False])
def test_a_part_that_failed_without_an_answer_is_released_by_its_caller(arrived):
    # Part 1's call failed on its way (or in the owner): the caller releases it, and part 2,
    # already waiting, goes on at once, not after the call timeout.
    async def go():
        turns = Turns()
        turns.leave(turns.arrive(check_order(("r", 0, 3))))
        if arrived:
            turns.leave(turns.arrive(check_order(("r", 1, 3))))
        t2 = turns.arrive(check_order(("r", 2, 3, 1)))
        waiting = asyncio.create_task(turns.turn(t2, WAIT))
        await asyncio.sleep(0.02)
        assert waiting.done() == arrived
        turns.release(check_order(("r", 1, 3, 1)))
        await asyncio.wait_for(waiting, 1)
        turns.leave(t2)
        return turns

    turns = asyncio.run(go())
    assert "r" not in turns._done and not turns._moved  # noqa: SLF001


def test_a_release_of_a_part_refused_for_back_pressure_lets_the_later_ones_in():
    turns = Turns()
    turns.refuse(turns.arrive(check_order(("q", 0, 2))))
    with pytest.raises(BackPressure):
        turns.arrive(check_order(("q", 1, 2)))
    turns.release(check_order(("q", 0, 2)))  # the caller gave up on it
    turns.leave(turns.arrive(check_order(("q", 1, 2, 1))))
    assert not turns._refused and not turns._low  # noqa: SLF001


@pytest.mark.parametrize("order", [("t", 0), ("t", 0, 1, 2), ("t", 2, 3, 3), ("t", 2, 3, -1), ("t", 2, 3, 1.0),
                                   ("t", 2, 3, 1, 0), ("", 0, 1), ("x" * 65, 0, 1), (1, 0, 1), ("t", -1, 1),
                                   ("t", 1, 1), ("t", 1.0, 2), ("t", True, 2), ("t", "1", 2), ("t", 0, 1.0), "t0", 5,
                                   {"t": 0}])
def test_orders_refused(order):
    with pytest.raises(BadArguments):
        check_order(order)


def test_a_part_cancelled_as_its_turn_comes_is_cancelled():
    # close() cancels the parts in flight. With wait_for (Python 3.11) a cancel that came as the
    # earlier part let go was lost: the part went on to decide and commit against a ledger being
    # shut, and close() waited 10 s for it.
    async def go():
        turns = Turns()
        t0 = turns.arrive(("z", 0, 2))
        t1 = turns.arrive(("z", 1, 2))
        waiting = asyncio.create_task(turns.turn(t1, WAIT))
        await asyncio.sleep(0)
        turns.leave(t0)
        waiting.cancel()  # in the same step: the cancel comes as the event is set
        with pytest.raises(asyncio.CancelledError):
            await waiting

    for _ in range(20):
        asyncio.run(go())
