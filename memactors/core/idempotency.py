"""Idempotency keys recognised for a window (DESIGN section 9): a retry with the same key gets
the first result back; the same key with a different request is a conflict.

One window rule for every holder (owners and the ledger writer alike): a key is recognised
while ``newest - window < its time``, where ``newest`` is the newest time this cache has seen
(event time, on the runtime's clock: a simulation's clock may run anywhere, so never the wall
clock). Past the window a key is a new key: its next use is a request of its own, named by
(key, time) where one use must be told from another (an erasure unpins the use that wrote the
erased memory, never a later use of the same key). Pure.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from collections import deque

from .randoms import random_bytes

CONFLICT = "conflict"

# The keys a runtime makes for writes that came without one: "m", 16 random consonants, "-",
# the item's position. Consonants and a short number only, so such a key holds no phone, card
# or id number, no token of any provider's shape and no word a rule reads as context ("otp",
# "pin"): the owners need not screen it again (screening a key costs as much as deciding its
# write). 20 letters to the power 16: 69 bits.
_CONSONANTS = "bcdfghjklmnpqrstvwxz"
_MADE = re.compile(r"m[bcdfghjklmnpqrstvwxz]{16}-[0-9]{1,7}", re.ASCII)


def made_key_prefix() -> str:
    """A fresh prefix for the keys of one call: ``f"{prefix}-{i}"``."""
    return _spelled(random_bytes(16))


def made_key_of(name: str) -> str:
    """The made key of one thing the runtime does once (a session item's promotion: the same
    item, the same key, so a retry is recognised), its consonants from a digest of ``name``."""
    return _spelled(hashlib.blake2b(name.encode("utf-8", "surrogatepass"), digest_size=16).digest()) + "-0"


def _spelled(raw: bytes) -> str:
    """A made key's prefix: "m" and 16 consonants, one from each of 16 bytes."""
    return "m" + "".join(_CONSONANTS[b % 20] for b in raw)


def is_made_key(key: object) -> bool:
    return isinstance(key, str) and _MADE.fullmatch(key) is not None


def caller_key(stored: str | None) -> str | None:
    """The key a caller gave, from the key the ledger holds for its write ("actor/key":
    ``WriteRequest.key``; ids and keys hold no "/"), or a stored key as it is."""
    return stored.rpartition("/")[2] if stored is not None else None


class IdempotencyCache:
    def __init__(self, window_us: int) -> None:
        self.window_us = int(window_us)
        self._seen: dict[str, tuple[bytes | None, bytes]] = {}  # key -> (fingerprint, result)
        self._when: dict[str, int] = {}  # key -> the time of its use in the window
        self._order: deque[tuple[int, str]] = deque()  # (time, key), oldest first
        self.newest = 0
        # Which use of a key wrote which memory, for the keys put here (an erasure unpins them
        # without asking the ledger); keys loaded from the ledger carry no such note.
        self._made: dict[str, tuple[str, int]] = {}  # memory id -> (key, time) (a key out of the window: stale)
        self._loaded: set[str] = set()

    def __len__(self) -> int:
        return len(self._seen)

    def __contains__(self, key: str) -> bool:
        return key in self._seen

    def get(self, key: str) -> tuple[bytes | None, bytes] | None:
        return self._seen.get(key)

    def lookup(self, key: str, fingerprint: bytes | None) -> bytes | str | None:
        """The stored result of a retry, ``CONFLICT`` when the key came back with a different
        request, or None for a key not seen (in the window)."""
        seen = self._seen.get(key)
        if seen is None:
            return None
        first, result = seen
        if first is not None and fingerprint is not None and not hmac.compare_digest(first, fingerprint):
            return CONFLICT
        return result

    def put(self, key: str, fingerprint: bytes | None, result: bytes, ts: int, made=()) -> None:
        """``made``: the memories the request's write events made (what ``keys_of`` answers from)."""
        if key not in self._seen:
            self._order.append((ts, key))
            self._when[key] = ts
        self._seen[key] = (fingerprint, result)
        for m in made:
            self._made[m] = (key, self._when[key])
        if ts > self.newest:
            self.newest = ts
            self._prune()

    def advance(self, now_us: int) -> None:
        """Time moved to ``now_us`` (a request's): keys older than the window are forgotten
        before it is looked up, not at the next put (a key reused days later was refused as a
        conflict until the runtime reopened, and accepted after)."""
        if now_us > self.newest:
            self.newest = now_us
            self._prune()

    def note_made(self, made: dict[str, tuple[str, int]]) -> None:
        """Memory id -> (key, time) of the write that made it, for keys put (or being put) here."""
        self._made.update(made)

    def unpin(self, uses) -> None:
        """Forget the requests of these uses, (key, time) (their results stay): a retry of an
        erased memory's write under its key must not confirm a guess of the erased text (the
        same text was the first result again, any other a conflict). Another use of the key,
        after the window of this one, is not touched."""
        for k, ts in uses:
            seen = self._seen.get(k)
            if seen is not None and self._when.get(k) == ts:
                self._seen[k] = (None, seen[1])

    def keys_of(self, memory_ids) -> list[tuple[str, int]] | None:
        """The uses, (key, time), of the keys (in the window) of the writes that made these
        memories; None while keys loaded from the ledger are in the window (what they made
        is the ledger's to say)."""
        if self._loaded:
            return None
        seen = self._seen
        return sorted({u for m in memory_ids if (u := self._made.get(m)) is not None and u[0] in seen})

    def load(self, rows: dict[str, tuple[bytes | None, bytes]], ts: dict[str, int] | None = None) -> None:
        """Keys read back from the ledger at start (already within the window)."""
        for k, v in rows.items():
            self._seen[k] = v
            self._loaded.add(k)
            t = (ts or {}).get(k, 0)
            self._order.append((t, k))
            self._when[k] = t
            self.newest = max(self.newest, t)

    def _prune(self) -> None:
        horizon = self.newest - self.window_us
        while self._order and self._order[0][0] < horizon:
            key = self._order.popleft()[1]
            self._seen.pop(key, None)
            self._when.pop(key, None)
            self._loaded.discard(key)
        if len(self._made) > 2 * len(self._seen) + 1024:  # notes of keys gone from the window, dropped now and then
            self._made = {m: u for m, u in self._made.items() if u[0] in self._seen}
