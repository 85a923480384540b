"""Time as an injectable dependency: simulations and tests jump days ahead deterministically.

Timestamps are integers, microseconds since the Unix epoch (UTC), the unit of the Arrow schema.
"""

from __future__ import annotations

import time
from typing import Protocol

US_PER_SECOND = 1_000_000
US_PER_DAY = 86_400 * US_PER_SECOND


class Clock(Protocol):
    def now_us(self) -> int: ...


class SystemClock:
    """Wall-clock time."""

    def now_us(self) -> int:
        return time.time_ns() // 1000

    def __reduce__(self):
        return (SystemClock, ())


class ManualClock:
    """A clock that moves only when told to. A runtime connected with it subscribes, so moving
    it moves time for the whole runtime: facade, owners and sweeps."""

    def __init__(self, start_us: int = 1_767_225_600 * US_PER_SECOND) -> None:  # 2026-01-01
        self._now = int(start_us)
        self._listeners: list = []

    def now_us(self) -> int:
        return self._now

    def advance(self, *, days: float = 0, seconds: float = 0) -> int:
        if not all(isinstance(v, (int, float)) and not isinstance(v, bool) and v == v for v in (days, seconds)) \
                or days < 0 or seconds < 0:
            raise ValueError("advance takes non-negative days and seconds (time only moves forward)")
        self._now += int(days * US_PER_DAY + seconds * US_PER_SECOND)
        self._tell()
        return self._now

    def set(self, now_us: int) -> None:
        self._now = int(now_us)
        self._tell()

    def subscribe(self, callback) -> None:
        """Call ``callback(now_us)`` whenever the clock moves."""
        self._listeners.append(callback)

    def _tell(self) -> None:
        for cb in list(self._listeners):
            cb(self._now)

    def __getstate__(self):  # listeners are the runtime's, never shipped to another process
        return {"_now": self._now, "_listeners": []}

