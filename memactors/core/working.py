"""The L1 working pool: per scope, a bounded LRU whose items live as long as their session (DESIGN
section 2). Past the bound, an item of no session goes first, then the oldest item of the
session holding most of the scope's items: a session's items stay while it is open.

Items are records (pool ``working``) with their vectors kept beside them, and an index of the
scope each item is in (promotion looks items up by id, thousands a tick). Recall serves only
live items (``active`` or ``stale``): a write the gate held for review stays in the pool (the
review queue lists it), but is never recalled. An item leaves the pool when a committed change
takes it out of L1 (promoted, released at the end of its session, archived, erased).

Lifetime (``ttl_us``, ``[runtime].session_ttl_s``): a session's own items (the record's
``session`` field) stay while their session is active, however long ago each was written: they
age from the session's newest item, so only a session idle for longer than ``ttl_us`` (one that
was never completed) is let go. Any other item (a direct write to the pool, a demoted copy)
ages from its own creation. Pure.
"""

from __future__ import annotations

from collections import OrderedDict

_SERVED = ("active", "stale")
KEPT = (*_SERVED, "pending")  # statuses an item keeps its place in L1 with


def session_id(rec: dict) -> str | None:
    s = rec.get("session")
    return s["id"] if s else None


def within_lifetime(recs: list[dict], now_us: int, ttl_us: int) -> list[dict]:
    """``recs`` but the working-pool items a pool would have let go by ``now_us`` (``WorkingPool``'s
    lifetime rule, a session's newest item taken from ``recs``): what a recall as of a past point
    serves of L1, as the pool served it then. Vault records pass as they are."""
    newest: dict[str, int] = {}
    for r in recs:
        if r.get("pool") == "working" and (sid := session_id(r)) is not None:
            newest[sid] = max(newest.get(sid, 0), r["created_at"])
    cutoff = now_us - ttl_us
    return [r for r in recs if r.get("pool") != "working" or _aged_from(r, newest) >= cutoff]


def _aged_from(rec: dict, newest: dict[str, int]) -> int:
    """When an item's lifetime runs from: its session's newest item's creation (``newest``:
    session id -> that), else its own."""
    sid = session_id(rec)
    return newest.get(sid, rec["created_at"]) if sid is not None else rec["created_at"]


def _victim(items: OrderedDict) -> str:
    """The item the LRU bound pushes out: the least recently used one of no session, else the
    least recently used one of the session holding most of the scope's items (a session's items
    stay while it is open: another busy session of the scope gives up its own oldest first)."""
    counts: dict[str | None, int] = {}
    for mid, rec in items.items():
        sid = session_id(rec)
        if sid is None:
            return mid
        counts[sid] = counts.get(sid, 0) + 1
    busiest = max(counts, key=counts.__getitem__)  # the first of the most: dict order is LRU order
    return next(mid for mid, rec in items.items() if session_id(rec) == busiest)


class WorkingPool:
    def __init__(self, size: int = 200, ttl_us: int = 3_600_000_000) -> None:
        self.size = int(size)
        self.ttl_us = int(ttl_us)
        self._scopes: dict[str, OrderedDict[str, dict]] = {}
        self._vectors: dict[str, object] = {}
        self._where: dict[str, str] = {}  # memory id -> scope
        self._newest: dict[str, int] = {}  # session id -> created_at of its newest item held
        self._members: dict[str, int] = {}  # session id -> items held
        self._changes: dict[str, int] = {}  # scope -> changes to its items so far (``view``)
        self._views: dict[str, tuple] = {}  # scope -> (its changes then, ``view``'s build of its items)

    def put(self, rec: dict, vector=None) -> list[str]:
        """Add or refresh an item; return the ids pushed out by the LRU bound."""
        items = self._scopes.setdefault(rec["scope"], OrderedDict())
        mid = rec["memory_id"]
        if mid not in items:
            sid = session_id(rec)
            if sid is not None:
                self._members[sid] = self._members.get(sid, 0) + 1
                self._newest[sid] = max(self._newest.get(sid, 0), rec["created_at"])
        items[mid] = rec
        items.move_to_end(mid)
        self._where[mid] = rec["scope"]
        if vector is not None:
            self._vectors[mid] = vector
        evicted = []
        while len(items) > self.size:
            old_id = _victim(items)
            old = items.pop(old_id)
            self._drop(old_id, old)
            evicted.append(old_id)
        self._changed(rec["scope"])
        return evicted

    def _changed(self, scope: str) -> None:
        """A scope's items changed (after the change: a view built meanwhile is not kept)."""
        self._changes[scope] = self._changes.get(scope, 0) + 1

    def view(self, scope: str, build):
        """``build(items, vectors)`` of the scope's servable items (``active`` or ``stale``, in
        the pool's order, whatever their lifetime) and the pool's vectors by id, kept until
        they change: a recall scores a session's items with it (stacking their vectors and
        scoring them row by row per recall cost a sixth of an owner's recall). Their lifetime
        is not in it: it moves with the recall's time and other scopes' items (``within``)."""
        if not self._scopes.get(scope):  # None: no items (most scopes a recall sees)
            self._views.pop(scope, None)
            return None
        n = self._changes.get(scope, 0)  # read first: a change while building is a newer count
        got = self._views.get(scope)
        if got is not None and got[0] == n:
            return got[1]
        out = build([r for r in self.items(scope) if r["status"] in _SERVED], self._vectors)
        self._views[scope] = (n, out)
        return out

    def within(self, recs: list[dict], now_us: int) -> list[bool]:
        """Whether each of these items is within its lifetime at ``now_us`` (``peek``'s rule)."""
        cutoff, newest = now_us - self.ttl_us, self._newest
        return [_aged_from(r, newest) >= cutoff for r in recs]

    def _drop(self, memory_id: str, rec: dict) -> None:
        self._vectors.pop(memory_id, None)
        self._where.pop(memory_id, None)
        sid = session_id(rec)
        if sid is not None:
            left = self._members.get(sid, 1) - 1
            if left:
                self._members[sid] = left
            else:
                self._members.pop(sid, None)
                self._newest.pop(sid, None)

    def _alive(self, rec: dict, cutoff: int) -> bool:
        return _aged_from(rec, self._newest) >= cutoff

    def get(self, memory_id: str) -> dict | None:
        return self.find(memory_id)

    def vector(self, memory_id: str):
        return self._vectors.get(memory_id)

    def live(self, scope: str, now_us: int) -> list[dict]:
        """The scope's live items within their lifetime and not hard-expired, dropping the expired ones."""
        items = self._scopes.get(scope)
        if not items:
            return []
        cutoff = now_us - self.ttl_us
        gone = [(m, r) for m, r in items.items() if not self._alive(r, cutoff)]
        for mid, rec in gone:
            del items[mid]
            self._drop(mid, rec)
        if gone:
            self._changed(scope)
        return [r for r in items.values() if r["status"] in _SERVED
                and (r["hard_expires_at"] is None or r["hard_expires_at"] > now_us)]

    def peek(self, scope: str, now_us: int) -> list[dict]:
        """Like ``live`` but changes nothing (safe from another thread)."""
        return [r for r in self._within(scope, now_us) if r["status"] in _SERVED
                and (r["hard_expires_at"] is None or r["hard_expires_at"] > now_us)]

    def held(self, scope: str, now_us: int) -> list[dict]:
        """The scope's items the gate held for review (``pending``), within their lifetime."""
        return [r for r in self._within(scope, now_us) if r["status"] == "pending"]

    def _within(self, scope: str, now_us: int) -> list[dict]:
        items = self._scopes.get(scope)
        if not items:
            return []
        cutoff = now_us - self.ttl_us
        return [r for r in list(items.values()) if self._alive(r, cutoff)]

    def patch(self, memory_id: str, fields: dict) -> bool:
        """A committed patch of an item held here (False: not held). An item whose new status
        is not one L1 keeps (promoted, released, archived) leaves the pool."""
        rec = self.find(memory_id)
        if rec is None:
            return False
        new = {**rec, **fields}
        if new["status"] in KEPT:
            self._scopes[rec["scope"]][memory_id] = new  # in place: a status change is no use of it
            self._changed(rec["scope"])
        else:
            self.remove(memory_id, rec["scope"])
        return True

    def items(self, scope: str | None) -> list[dict]:
        """Every item of ``scope``, live or held, within its TTL or not."""
        return list(self._scopes.get(scope, {}).values()) if scope is not None else []

    def remove(self, memory_id: str, scope: str | None = None) -> dict | None:
        scope = scope if scope is not None else self._where.get(memory_id)
        rec = self._scopes.get(scope, {}).pop(memory_id, None) if scope is not None else None
        if rec is not None:
            self._drop(memory_id, rec)
            self._changed(scope)
        return rec

    def find(self, memory_id: str) -> dict | None:
        scope = self._where.get(memory_id)
        return self._scopes[scope].get(memory_id) if scope is not None else None

    def __len__(self) -> int:
        return sum(len(v) for v in self._scopes.values())
