"""The caller's order among the parts of one call (``Turns``). No Ray here.

A ``write_many`` longer than ``[runtime].write_batch_max`` reaches an owner as several calls
in flight at once. Each is prepared on its own (a gate worker each, a small last part in
place, as a hop costs more), so a later part could reach its scopes' locks first and be
decided first: a fact written twice in one call would then keep the older value live. The
facade tags each part ``order=(token, position)``; a part takes its locks only once every
earlier part of its call that this owner has taken in has its own, so decisions follow the
caller's list. A part refused for back pressure holds back the later ones (refused too,
until it is taken in): the facade resends refused parts, so none overtakes it.
"""

from __future__ import annotations

import asyncio

from ..core.errors import BackPressure, BadArguments

_REFUSED_MAX = 4096  # calls remembered with a refused part (a caller that gave up leaves one behind)


def check_order(order) -> tuple[str, int] | None:
    """``order`` as a caller (any Ray client) may send it: None, or ``(token, position)``."""
    if order is None:
        return None
    if not isinstance(order, (tuple, list)) or len(order) != 2 or not isinstance(order[0], str) \
            or not 0 < len(order[0]) <= 64 or type(order[1]) is not int or order[1] < 0:
        raise BadArguments("order is (token, position): a token of 1-64 characters and a position from 0")
    return order[0], order[1]


class Turns:
    __slots__ = ("_waiting", "_refused", "_moved")

    def __init__(self) -> None:
        self._waiting: dict[str, set[int]] = {}  # token -> positions taken in, not yet holding their locks
        self._refused: dict[str, int] = {}  # token -> its first part refused for back pressure, not yet taken in
        self._moved: dict[str, asyncio.Event] = {}  # token -> set when one of its parts moves on

    def arrive(self, order) -> tuple[str, int] | None:
        """Take a part in (before the call's first await: parts of one caller arrive in the
        order they were sent). Raises ``BackPressure`` while an earlier part of its call waits
        to be resent. Returns the ticket for ``turn`` and ``leave`` (None: no order asked)."""
        if order is None:
            return None
        token, pos = order
        first = self._refused.get(token)
        if first is not None and first < pos:
            raise BackPressure("an earlier part of this call was refused and is not yet resent; nothing of this part "
                               "was written, retry after a pause")
        if first == pos:
            del self._refused[token]
        self._waiting.setdefault(token, set()).add(pos)
        return token, pos

    def refuse(self, ticket: tuple[str, int] | None) -> None:
        """The part was refused for back pressure after ``arrive``: the later ones wait for it."""
        if ticket is None:
            return
        self.leave(ticket)
        token, pos = ticket
        if len(self._refused) >= _REFUSED_MAX and token not in self._refused:
            del self._refused[next(iter(self._refused))]
        self._refused[token] = min(pos, self._refused.get(token, pos))

    async def turn(self, ticket: tuple[str, int] | None) -> None:
        """Wait until no earlier part of the call, taken in here, is still short of its locks."""
        if ticket is None:
            return
        token, pos = ticket
        while any(p < pos for p in self._waiting.get(token, ())):
            moved = self._moved.get(token)
            if moved is None:
                moved = self._moved[token] = asyncio.Event()
            await moved.wait()

    def leave(self, ticket: tuple[str, int] | None) -> None:
        """The part holds its locks (or ended before it needed them): the later parts move on.
        Idempotent."""
        if ticket is None:
            return
        token, pos = ticket
        waiting = self._waiting.get(token)
        if waiting is None or pos not in waiting:
            return
        waiting.discard(pos)
        if not waiting:
            del self._waiting[token]
        moved = self._moved.pop(token, None)
        if moved is not None:
            moved.set()
