"""The caller's order among the parts of one call (``Turns``). No Ray here.

A ``write_many`` longer than ``[runtime].write_batch_max`` reaches an owner as several calls
in flight at once. Each is prepared on its own (a gate worker each, a small last part in
place, as a hop costs more), and Ray does not start an async actor's calls in the order they
were sent (a big part's arguments travel through the object store, a small one's inline), so a
later part could reach its scopes' locks first and be decided first: a fact written twice in
one call would then keep the older value live. The facade tags each part ``order=(token,
position, count)``; a part takes its locks only once every earlier part of its call holds its
own or has ended, so decisions follow the caller's list. A part refused for back pressure holds
back the later ones (refused too when they arrive, until it is taken in): the facade resends
refused parts, so none overtakes it.

The caller says what it knows: ``order=(token, position, count, low)``, where every part below
``low`` has ended for it (answered or failed), so a part resent to an owner that restarted
since does not wait for parts the old one decided; a part that failed without an answer is
released by an empty part with its own order (``release``). An earlier part that never comes
(its caller gone) is waited for at most ``wait_s``.
"""

from __future__ import annotations

import asyncio

from ..core.errors import BackPressure, BadArguments

_REFUSED_MAX = 4096  # calls remembered with a refused part (a caller that gave up leaves one behind)
_CALLS_MAX = 65_536  # calls remembered with parts under way (a caller that gave up leaves one behind)


def check_order(order) -> tuple[str, int, int, int] | None:
    """``order`` as a caller (any Ray client) may send it: None, ``(token, position, count)``
    or ``(token, position, count, low)``; returned with its ``low`` (0 when not given)."""
    if order is None:
        return None
    if not isinstance(order, (tuple, list)) or len(order) not in (3, 4) or not isinstance(order[0], str) \
            or not 0 < len(order[0]) <= 64 or any(type(v) is not int for v in order[1:]) \
            or not 0 <= order[1] < order[2] or (len(order) == 4 and not 0 <= order[3] <= order[1]):
        raise BadArguments("order is (token, position, count[, low]): a token of 1-64 characters, a position from 0 "
                           "and below the count of the call's parts, and the parts below low ended (at most the "
                           "position)")
    return order[0], order[1], order[2], order[3] if len(order) == 4 else 0


class Turns:
    __slots__ = ("_done", "_low", "_refused", "_moved")

    def __init__(self) -> None:
        self._done: dict[str, set[int]] = {}  # token -> positions past their locks, beyond ``_low``
        self._low: dict[str, int] = {}  # token -> every position below it is past its locks
        self._refused: dict[str, int] = {}  # token -> its first part refused for back pressure, not yet taken in
        self._moved: dict[str, asyncio.Event] = {}  # token -> set when one of its parts moves on

    def arrive(self, order) -> tuple[str, int, int] | None:
        """Take a part in. Raises ``BackPressure`` while an earlier part of its call waits to be
        resent. Returns the ticket for ``turn``, ``refuse`` and ``leave`` (None: no order)."""
        if order is None:
            return None
        first = self._refused.get(order[0])
        if first is not None and first < order[1]:
            raise BackPressure("an earlier part of this call was refused and is not yet resent; nothing of this part "
                               "was written, retry after a pause")
        return self._take(order)

    def release(self, order) -> None:
        """A part its caller saw fail without an answer (it may never have come here): the
        later parts go on without it."""
        if order is not None:
            self.leave(self._take(order))

    def _take(self, order) -> tuple[str, int, int]:
        token, pos, count = order[:3]
        low = order[3] if len(order) > 3 else 0
        if self._refused.get(token) == pos:
            del self._refused[token]
        if token not in self._low and len(self._low) >= _CALLS_MAX:
            old = next(iter(self._low))
            self._low.pop(old)
            self._done.pop(old, None)
        self._low.setdefault(token, 0)
        ticket = token, pos, count
        if low > self._low[token]:  # the caller saw those end (some maybe at this owner's last run)
            self._move(ticket, range(self._low[token], low))
        return ticket

    def refuse(self, ticket) -> None:
        """The part was refused for back pressure: the later ones wait for it (and ``leave``
        must not be called for this ticket)."""
        if ticket is None:
            return
        token, pos, _ = ticket
        if len(self._refused) >= _REFUSED_MAX and token not in self._refused:
            del self._refused[next(iter(self._refused))]
        self._refused[token] = min(pos, self._refused.get(token, pos))

    async def turn(self, ticket, wait_s: float) -> None:
        """Wait until every earlier part of the call holds its locks or has ended (at most
        ``wait_s``: an earlier part that never comes does not hold this one for ever)."""
        if ticket is None:
            return
        token, pos, _ = ticket
        try:
            # asyncio.timeout, not wait_for: wait_for (3.11) lost a cancel that came as the event
            # was set, and a part cut by close() then went on to decide and commit
            async with asyncio.timeout(wait_s):
                while self._low.get(token, pos) < pos:
                    moved = self._moved.get(token)
                    if moved is None:
                        moved = self._moved[token] = asyncio.Event()
                    await moved.wait()
        except TimeoutError:
            return

    def leave(self, ticket) -> None:
        """The part holds its locks (or ended before it needed them): the later parts move on.
        Idempotent; a call is forgotten once all its parts have left."""
        if ticket is None:
            return
        self._move(ticket, (ticket[1],))

    def _move(self, ticket, positions) -> None:
        token, _, count = ticket
        low = self._low.get(token)
        if low is None:
            return
        done = self._done.setdefault(token, set())
        done.update(p for p in positions if p >= low)
        while low in done:
            done.discard(low)
            low += 1
        self._low[token] = low
        if low >= count:
            del self._low[token]
            self._done.pop(token, None)
        elif not done:
            del self._done[token]
        moved = self._moved.pop(token, None)
        if moved is not None:
            moved.set()
