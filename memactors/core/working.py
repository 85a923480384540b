"""The L1 working pool: per scope, a bounded LRU with a session TTL (DESIGN section 2)."""

from __future__ import annotations

from collections import OrderedDict


class WorkingPool:
    def __init__(self, size: int = 200, ttl_us: int = 3_600_000_000) -> None:
        self.size = int(size)
        self.ttl_us = int(ttl_us)
        self._scopes: dict[str, OrderedDict[str, dict]] = {}

    def put(self, rec: dict) -> list[str]:
        """Add or refresh an item; return the ids pushed out by the LRU bound."""
        items = self._scopes.setdefault(rec["scope"], OrderedDict())
        items[rec["memory_id"]] = rec
        items.move_to_end(rec["memory_id"])
        evicted = []
        while len(items) > self.size:
            evicted.append(items.popitem(last=False)[0])
        return evicted

    def live(self, scope: str, now_us: int) -> list[dict]:
        items = self._scopes.get(scope)
        if not items:
            return []
        cutoff = now_us - self.ttl_us
        for mid in [m for m, r in items.items() if r["created_at"] < cutoff]:
            del items[mid]
        return [r for r in items.values() if r["hard_expires_at"] is None or r["hard_expires_at"] > now_us]

    def peek(self, scope: str, now_us: int) -> list[dict]:
        """Like ``live`` but changes nothing (safe from another thread)."""
        items = self._scopes.get(scope)
        if not items:
            return []
        cutoff = now_us - self.ttl_us
        return [r for r in list(items.values())
                if r["created_at"] >= cutoff and (r["hard_expires_at"] is None or r["hard_expires_at"] > now_us)]

    def remove(self, memory_id: str, scope: str | None = None) -> dict | None:
        for s, items in ([(scope, self._scopes.get(scope, {}))] if scope else self._scopes.items()):
            rec = items.pop(memory_id, None)
            if rec is not None:
                return rec
        return None

    def find(self, memory_id: str) -> dict | None:
        for items in self._scopes.values():
            if memory_id in items:
                return items[memory_id]
        return None

    def __len__(self) -> int:
        return sum(len(v) for v in self._scopes.values())
