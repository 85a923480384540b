"""The parts of one call take their locks in the caller's order (``engine.turns``), whatever
order their preparing ends in; a part refused for back pressure holds back the later ones.
Pure asyncio, no storage: the hosts' contract is in ``test_hosts``."""

from __future__ import annotations

import asyncio

import pytest

from memactors.core.errors import BackPressure, BadArguments
from memactors.engine.turns import Turns, check_order


async def _part(turns: Turns, order, prepare_s: float, log: list) -> None:
    ticket = turns.arrive(order)  # as a submit does, before its first await
    try:
        await asyncio.sleep(prepare_s)  # preparing: a later part may end it first
        await turns.turn(ticket)
        log.append(order[1] if order else None)  # "holds its locks"
        turns.leave(ticket)
        await asyncio.sleep(0.01)  # deciding, committing
    finally:
        turns.leave(ticket)


def test_parts_take_their_locks_in_the_callers_order_whatever_their_preparing():
    async def go():
        turns, log = Turns(), []
        # the last part is small (prepared in place, at once), the first ones slow (a gate worker)
        await asyncio.gather(*[_part(turns, ("call", k), s, log) for k, s in enumerate([0.05, 0.03, 0.0])])
        return log, turns

    log, turns = asyncio.run(go())
    assert log == [0, 1, 2]
    assert not turns._waiting and not turns._moved  # noqa: SLF001 - nothing left behind


def test_other_calls_and_unordered_parts_never_wait():
    async def go():
        turns, log = Turns(), []
        slow = asyncio.create_task(_part(turns, ("a", 0), 0.05, log))
        await asyncio.sleep(0)
        await asyncio.gather(_part(turns, ("b", 1), 0.0, log), _part(turns, None, 0.0, log))
        at_once = list(log)
        await slow
        return at_once

    assert sorted(asyncio.run(go()), key=str) == [1, None]


def test_a_part_that_ends_before_its_locks_lets_the_later_ones_on():
    async def go():
        turns, log = Turns(), []

        async def refused_in_prepare():  # every write blocked by the gate: no locks needed
            ticket = turns.arrive(("c", 0))
            try:
                await asyncio.sleep(0.02)
            finally:
                turns.leave(ticket)

        await asyncio.wait_for(asyncio.gather(refused_in_prepare(), _part(turns, ("c", 1), 0.0, log)), 2)
        return log

    assert asyncio.run(go()) == [1]


def test_a_refused_part_holds_back_the_later_ones_until_it_is_taken_in():
    turns = Turns()
    t0 = turns.arrive(("d", 0))
    turns.refuse(t0)  # back pressure: the facade resends it later
    with pytest.raises(BackPressure):
        turns.arrive(("d", 1))
    with pytest.raises(BackPressure):
        turns.arrive(("d", 2))
    assert turns.arrive(("e", 5)) == ("e", 5)  # another call is not held back
    assert turns.arrive(("d", 0)) == ("d", 0)  # resent: taken in
    assert turns.arrive(("d", 1)) == ("d", 1)  # and the later ones with it
    for t in (("d", 0), ("d", 1), ("e", 5)):
        turns.leave(t)
    assert not turns._waiting and not turns._refused  # noqa: SLF001


def test_a_part_refused_after_a_later_one_was_taken_in_does_not_stop_it():
    turns = Turns()
    t1 = turns.arrive(("f", 1))
    turns.refuse(turns.arrive(("f", 0)))
    turns.leave(t1)
    assert turns.arrive(("f", 0)) == ("f", 0)


def test_calls_remembered_for_refusals_are_bounded():
    turns = Turns()
    for i in range(5000):
        turns.refuse(turns.arrive((f"g{i}", 0)))
    assert len(turns._refused) <= 4096  # noqa: SLF001


@pytest.mark.parametrize("order", [("t", 0), ["t", 3], ("x" * 64, 10**9)])
def test_orders_a_caller_may_send(order):
    assert check_order(order) == (order[0], order[1])
    assert check_order(None) is None


@pytest.mark.parametrize("order", [("t",), ("t", 0, 1), ("", 0), ("x" * 65, 0), (1, 0), ("t", -1), ("t", 1.0),
                                   ("t", True), ("t", "1"), "t0", 5, {"t": 0}])
def test_orders_refused(order):
    with pytest.raises(BadArguments):
        check_order(order)
