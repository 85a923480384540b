"""The L1 working pool: per scope, a bounded LRU with a session TTL (DESIGN section 2).

Items are records (pool ``working``) with their vectors kept beside them, and an index of the
scope each item is in (promotion looks items up by id, thousands a tick). Recall serves only
live items (``active`` or ``stale``): a write the gate held for review stays in the pool, but
is never recalled. Pure.
"""

from __future__ import annotations

from collections import OrderedDict

_SERVED = ("active", "stale")


class WorkingPool:
    def __init__(self, size: int = 200, ttl_us: int = 3_600_000_000) -> None:
        self.size = int(size)
        self.ttl_us = int(ttl_us)
        self._scopes: dict[str, OrderedDict[str, dict]] = {}
        self._vectors: dict[str, object] = {}
        self._where: dict[str, str] = {}  # memory id -> scope

    def put(self, rec: dict, vector=None) -> list[str]:
        """Add or refresh an item; return the ids pushed out by the LRU bound."""
        items = self._scopes.setdefault(rec["scope"], OrderedDict())
        items[rec["memory_id"]] = rec
        items.move_to_end(rec["memory_id"])
        self._where[rec["memory_id"]] = rec["scope"]
        if vector is not None:
            self._vectors[rec["memory_id"]] = vector
        evicted = []
        while len(items) > self.size:
            mid = items.popitem(last=False)[0]
            self._drop(mid)
            evicted.append(mid)
        return evicted

    def _drop(self, memory_id: str) -> None:
        self._vectors.pop(memory_id, None)
        self._where.pop(memory_id, None)

    def get(self, memory_id: str) -> dict | None:
        return self.find(memory_id)

    def vector(self, memory_id: str):
        return self._vectors.get(memory_id)

    def live(self, scope: str, now_us: int) -> list[dict]:
        """The scope's live items within their TTL and not hard-expired, dropping the expired ones."""
        items = self._scopes.get(scope)
        if not items:
            return []
        cutoff = now_us - self.ttl_us
        for mid in [m for m, r in items.items() if r["created_at"] < cutoff]:
            del items[mid]
            self._drop(mid)
        return [r for r in items.values() if r["status"] in _SERVED
                and (r["hard_expires_at"] is None or r["hard_expires_at"] > now_us)]

    def peek(self, scope: str, now_us: int) -> list[dict]:
        """Like ``live`` but changes nothing (safe from another thread)."""
        items = self._scopes.get(scope)
        if not items:
            return []
        cutoff = now_us - self.ttl_us
        return [r for r in list(items.values()) if r["created_at"] >= cutoff and r["status"] in _SERVED
                and (r["hard_expires_at"] is None or r["hard_expires_at"] > now_us)]

    def items(self, scope: str | None) -> list[dict]:
        """Every item of ``scope``, live or held, within its TTL or not."""
        return list(self._scopes.get(scope, {}).values()) if scope is not None else []

    def remove(self, memory_id: str, scope: str | None = None) -> dict | None:
        scope = scope if scope is not None else self._where.get(memory_id)
        rec = self._scopes.get(scope, {}).pop(memory_id, None) if scope is not None else None
        if rec is not None:
            self._drop(memory_id)
        return rec

    def find(self, memory_id: str) -> dict | None:
        scope = self._where.get(memory_id)
        return self._scopes[scope].get(memory_id) if scope is not None else None

    def __len__(self) -> int:
        return sum(len(v) for v in self._scopes.values())
