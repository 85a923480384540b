"""Time as an injectable dependency: simulations and tests jump days ahead deterministically.

Timestamps are integers, microseconds since the Unix epoch (UTC), the unit of the Arrow schema.
"""

from __future__ import annotations

import math
import numbers
import time
from typing import Protocol

from .errors import InvalidRecord

US_PER_SECOND = 1_000_000
US_PER_DAY = 86_400 * US_PER_SECOND
# The latest time a ManualClock may show: 9999-12-31T23:59:59.999999Z (a datetime can still show
# it, and a timestamp plus a TTL stays far inside the 64-bit integers of the ledger and L2).
MAX_US = 253_402_300_800 * US_PER_SECOND - 1


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
        self._now = _checked(start_us)
        self._listeners: list = []

    def now_us(self) -> int:
        return self._now

    def advance(self, *, days: float = 0, seconds: float = 0) -> int:
        if not all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
                   for v in (days, seconds)) or days < 0 or seconds < 0:
            raise InvalidRecord("advance takes finite non-negative days and seconds (time only moves forward)")
        step = days * US_PER_DAY + seconds * US_PER_SECOND
        if step > MAX_US - self._now:
            raise InvalidRecord("advance would move the clock past the year 9999")
        self._now += int(step)
        self._tell()
        return self._now

    def set(self, now_us: int) -> None:
        self._now = _checked(now_us)
        self._tell()

    def subscribe(self, callback) -> None:
        """Call ``callback(now_us)`` whenever the clock moves."""
        self._listeners.append(callback)

    def _tell(self) -> None:
        for cb in list(self._listeners):
            cb(self._now)

    def __getstate__(self):  # listeners are the runtime's, never shipped to another process
        return {"_now": self._now, "_listeners": []}


def _checked(now_us: object) -> int:
    """A time for a ManualClock: whole microseconds from 1970 to the year 9999 (a float outside
    the 64-bit integers, or a string, was stored until a write failed on it, untyped)."""
    if not isinstance(now_us, numbers.Integral) or isinstance(now_us, bool) or not 0 <= now_us <= MAX_US:
        raise InvalidRecord("a ManualClock's time is an int of microseconds since 1970-01-01, up to the year 9999")
    return int(now_us)
