"""The ledger as history (DESIGN section 8): state as of a seq, what depends on a memory, what
a rollback must change, and a fork's ledger.

Mixed into ``Ledger``. Every answer is a fold of decoded changes through the one projection
(``memactors.core.project.apply``); a memory whose data key was destroyed decodes to nothing, so
an erased memory never comes back in any view of the past. Point-in-time answers read the
events up to a seq (no bi-temporal copies in L2: the ledger holds every change already).
"""

from __future__ import annotations

import os
import re

import orjson

from ..core import events as E
from ..core import records as R
from ..core.erasure import CONTEXT
from ..core.errors import InvalidRecord, NotFound
from ..core.project import Rows, apply
from .entries import decode
from .ledger_audit import EVENT_SHOWN, clearance_params

# A version's successor, in clear in the status event that superseded it (the link survives
# the erasure of either: their records are sealed, this reason is not).
_SUCCESSOR = re.compile(r"^superseded by ([0-9a-f]{32})")
_GATED = (E.WRITE, E.WRITE_WORKING, E.REFRESH, E.MERGE)  # events a write made: its gate verdict applies


class LedgerHistory:
    """Needs ``_changes``, ``_q``, ``_x``, ``con`` and ``last_seq`` of ``Ledger``."""

    def seq_at(self, ts_us: int) -> int:
        """The newest seq committed at or before ``ts_us`` (0: before the first event), at the
        end of the change it belongs to (``whole``)."""
        seq = int(self._q("SELECT coalesce(max(seq), 0) FROM events WHERE ts <= ?", [int(ts_us)])[0][0])
        return self.whole(seq) if seq else 0

    def whole(self, seq: int) -> int:
        """The last seq of the change ``seq`` is part of. One write, forget, rollback or sweep
        share commits its events together, under one idempotency key and at consecutive seqs: a
        point inside them is a state that never stood (a write that superseded v1, seen before
        v1's status event, has two live versions)."""
        row = self._q("SELECT idem_key FROM events WHERE seq = ?", [int(seq)])
        if not row or row[0][0] is None:
            return int(seq)
        key = row[0][0]
        start, span = int(seq), 1024
        while True:  # windows: a min() over every later event scanned the whole tail
            nxt = self._q("SELECT min(seq) FROM events WHERE seq > ? AND seq <= ? "
                          "AND (idem_key IS NULL OR idem_key != ?)", [start, start + span, key])[0][0]
            if nxt is not None:
                return int(nxt) - 1
            if start + span >= self.last_seq:
                return int(self.last_seq)
            start, span = start + span, span * 2

    def ts_of(self, seq: int) -> int | None:
        rows = self._q("SELECT ts FROM events WHERE seq = ?", [int(seq)])
        return int(rows[0][0]) if rows else None

    def bounds(self, within: int | None = None) -> tuple:
        """(first seq, last seq, first ts) of the ledger; with ``within`` (a seq), also the
        end of the change it is part of (``whole``), where a point given as that seq stands."""
        row = self._q("SELECT coalesce(min(seq), 0), coalesce(max(seq), 0), coalesce(min(ts), 0) FROM events")[0]
        out = (int(row[0]), int(row[1]), int(row[2]))
        if within is None:
            return out
        return (*out, self.whole(within) if out[0] <= int(within) <= out[1] else int(within))

    def fold(self, where: str, params: list | None = None) -> Rows:
        rows = Rows()
        for _, ch in self._changes(where, params):
            if ch is not None:
                apply(rows, ch)
        return rows

    def state_at(self, scopes: list[str], upto: int) -> list[dict]:
        """Every record of ``scopes`` as it stood at seq ``upto`` (erased ones excluded: their
        keys are gone), live or not."""
        rows = self.fold("list_contains(?, e.scope) AND e.seq <= ? AND e.memory_id IS NOT NULL",
                         [sorted(set(scopes)), int(upto)])
        return list(rows.records.values())

    def subtree_at(self, prefix: str, upto: int) -> list[dict]:
        """Every record under the scope ``prefix`` as it stood at seq ``upto`` (erased ones
        excluded), live or not."""
        rows = self.fold("starts_with(e.scope, ?) AND e.seq <= ? AND e.memory_id IS NOT NULL", [prefix, int(upto)])
        return list(rows.records.values())

    def changed_under(self, prefix: str, seq: int, reads: list[tuple[str, str]]) -> int:
        """How many memories under ``prefix`` have an event after ``seq``, of those a reader
        with these read grants, as (scope prefix, clearance) pairs, is shown (``EVENT_SHOWN``:
        at or below its clearance in their scope; the ``levels`` index brought up first)."""
        if not reads:
            return 0
        return int(self._q(f"""SELECT count(*) FROM (
                                 SELECT memory_id, any_value(scope) AS scope FROM events
                                 WHERE seq > $4 AND starts_with(scope, $5) AND memory_id IS NOT NULL
                                 GROUP BY memory_id) e WHERE {EVENT_SHOWN}""",
                           [*clearance_params(reads), int(seq), prefix])[0][0])

    def changed_since(self, scopes: list[str], seq: int) -> list[str]:
        """Memories of ``scopes`` with an event after ``seq`` (written, changed or erased since):
        the ones whose row today is not their state then."""
        rows = self._q("SELECT DISTINCT memory_id FROM events WHERE seq > ? AND list_contains(?, scope) "
                       "AND memory_id IS NOT NULL", [int(seq), sorted(set(scopes))])
        return sorted(r[0] for r in rows)

    def as_of_inputs(self, scopes: list[str], seq: int) -> dict:
        """What a recall as of ``seq`` reads from the ledger, in one call: ``{"ts"`` (of that
        event), ``"changed"`` (``changed_since``), ``"then"`` (``records_at`` of those, and of
        the working-pool items written by then: L1 is in no L2 row to read)``}``."""
        changed = self.changed_since(scopes, seq)
        working = [r[0] for r in self._q("SELECT DISTINCT memory_id FROM events WHERE action = 'write_working' "
                                         "AND seq <= ? AND list_contains(?, scope)", [int(seq), sorted(set(scopes))])]
        return {"ts": self.ts_of(seq), "changed": changed, "then": self.records_at([*changed, *working], seq)}

    def records_at(self, memory_ids: list[str], seq: int) -> list[dict]:
        """These memories as they stood at ``seq`` (absent: not written yet, or erased since)."""
        if not memory_ids:
            return []
        rows = self.fold("list_contains(?, e.memory_id) AND e.seq <= ?", [sorted(set(memory_ids)), int(seq)])
        return list(rows.records.values())

    def dependents(self, memory_ids: list[str]) -> tuple[list[str], list[str]]:
        """(memories derived only from these, down every chain; memories derived from these and
        from others too). Derived: claimed from them (``derived_from``) or copied from them (a
        promotion, a demotion), as the provenance index holds it."""
        start = set(memory_ids)
        found: set[str] = set()
        frontier = sorted(start)
        while frontier:
            rows = self._q("SELECT DISTINCT memory_id FROM provenance WHERE list_contains(?, source) AND kind <> ?",
                           [frontier, CONTEXT])
            frontier = sorted({r[0] for r in rows} - found - start)
            found.update(frontier)
        srcs: dict[str, set[str]] = {}
        if found:
            for mid, src in self._q("SELECT memory_id, source FROM provenance WHERE list_contains(?, memory_id) "
                                    "AND kind <> ?", [sorted(found), CONTEXT]):
                srcs.setdefault(mid, set()).add(src)
        live = set(self.fold("list_contains(?, e.memory_id)", [sorted(found)]).records) if found else set()
        gone, grew = set(start), True
        while grew:  # a summary of a summary of an undone memory goes too
            grew = False
            for m in sorted(found & live):
                if m not in gone and srcs.get(m, set()) <= gone:
                    gone.add(m)
                    grew = True
        partly = [m for m in sorted(found & live) if m not in gone and srcs.get(m, set()) & gone]
        return sorted(gone - start), partly

    def rollback_targets(self, after: int | None = None, memory_ids: list[str] | None = None,
                         where: dict | None = None, cascade: bool = False, under: str | None = None) -> dict:
        """What a rollback changes: ``{"undo": [memory ids], "flag": [memory ids], "restore_at":
        seq or None}``.

        - ``after``: every memory changed after this seq goes back to its state at it.
        - ``memory_ids`` (+ ``cascade``: what was derived only from them; what was derived from
          them and from others is flagged for review): each is undone (taken out of recall), and
          what it superseded is reinstated.
        - ``where``: {"source_kind", "actor", "since", "until"} (times in microseconds), or
          "since_seq" / "until_seq" (ledger seqs): the writes matching it, as ``memory_ids``.

        ``under``: a scope; only memories in its subtree (a tenant's rollback).
        """
        sub, sub_params = ("starts_with(scope, ?)", [under]) if under else ("true", [])
        if after is not None:
            rows = self._q("SELECT DISTINCT memory_id FROM events WHERE seq > ? AND memory_id IS NOT NULL "
                           f"AND action NOT IN ('block', 'grant', 'mark') AND {sub}", [int(after), *sub_params])
            return {"undo": sorted(r[0] for r in rows), "flag": [], "restore_at": int(after)}
        ids = list(memory_ids or [])
        if ids:  # only memories the ledger knows (an erased one is known: it stays forgotten)
            known = {r[0] for r in self._q("SELECT DISTINCT memory_id FROM events WHERE list_contains(?, memory_id)",
                                           [sorted(set(ids))])}
            ids = [m for m in ids if m in known]
        if where:
            ids += self._matching_writes(where, under)
        flag: list[str] = []
        only: list[str] = []
        if cascade and ids:
            only, flag = self.dependents(ids)
            ids += only
        return {"undo": sorted(set(ids)), "cascaded": sorted(set(only) - set(memory_ids or [])), "flag": flag,
                "restore_at": None}

    def _matching_writes(self, where: dict, under: str | None) -> list[str]:
        unknown = set(where) - {"source_kind", "actor", "since", "until", "since_seq", "until_seq"}
        if unknown or not where:
            raise InvalidRecord("where takes source_kind, actor, since and until (ledger seqs or times)")
        conds, params = ["e.action = 'write'"], []
        if under:
            conds.append("starts_with(e.scope, ?)")
            params.append(under)
        # A seq is a point as at= reads it: since it, what the state at it does not hold yet;
        # until it, what it holds.
        for key, cond in (("since", "e.ts >= ?"), ("until", "e.ts < ?"), ("since_seq", "e.seq > ?"),
                          ("until_seq", "e.seq <= ?")):
            if key in where:
                conds.append(cond)
                params.append(int(where[key]))
        if "actor" in where:
            conds.append("e.actor = ?")
            params.append(where["actor"])
        out = []
        for _, ch in self._changes(" AND ".join(conds), params):
            if ch is not None and ("source_kind" not in where or ch.record["source_kind"] == where["source_kind"]):
                out.append(ch.memory_id)
        return out

    def now_and_then(self, memory_ids: list[str], at: int | None) -> dict[str, tuple[dict | None, dict | None]]:
        """memory id -> (record now, record at seq ``at``) (None where it did not exist or was
        erased); ``at`` None: only now."""
        if not memory_ids:
            return {}
        now = self.fold("list_contains(?, e.memory_id)", [sorted(set(memory_ids))])
        then = self.fold("list_contains(?, e.memory_id) AND e.seq <= ?", [sorted(set(memory_ids)), int(at)]) \
            if at is not None else None
        return {m: (now.get(m), then.get(m) if then is not None else None) for m in memory_ids}

    def let_go(self, memory_ids: list[str], reason: str | None) -> list[str]:
        """Those of ``memory_ids`` given a status change for ``reason`` (clear text), or (None)
        erased: one query of the events' clear columns, nothing unsealed (``now_and_then`` folds
        every event)."""
        if not memory_ids:
            return []
        which, params = ("action = 'forget'", []) if reason is None else ("action = 'status' AND reason = ?", [reason])
        return [m for (m,) in self._q(f"SELECT DISTINCT memory_id FROM events WHERE list_contains(?, memory_id) "
                                      f"AND {which} ORDER BY 1", [sorted(set(memory_ids)), *params])]

    def last_status_reason(self, memory_ids: list[str]) -> dict[str, str | None]:
        """memory id -> the clear reason of its newest status event (ids with none left out)."""
        if not memory_ids:
            return {}
        return dict(self._q("SELECT memory_id, arg_max(reason, seq) FROM events WHERE action = 'status' "
                            "AND list_contains(?, memory_id) GROUP BY memory_id", [sorted(set(memory_ids))]))

    def superseded_by(self, memory_ids: list[str]) -> dict[str, list[str]]:
        """memory id -> the ids whose supersession it caused (status events 'superseded by it')."""
        out: dict[str, list[str]] = {m: [] for m in memory_ids}
        if not memory_ids:
            return out
        # (a reviewer's resolution said "contradiction resolved for <id>" in ledgers written before)
        rows = self._q("""SELECT DISTINCT by_id, memory_id FROM (
                            SELECT memory_id, regexp_extract(reason,
                                '^(?:superseded by|contradiction resolved for) ([0-9a-f]+)', 1) AS by_id
                            FROM events WHERE action = 'status' AND (starts_with(reason, 'superseded by ')
                                                                     OR starts_with(reason, 'contradiction resolved for ')))
                          WHERE list_contains(?, by_id) ORDER BY 1, 2""", [sorted(set(memory_ids))])
        for by_id, mid in rows:
            out[by_id].append(mid)
        return out

    def successions(self, scope: str, memory_id: str) -> list[str]:
        """``memory_id`` and every id linked to it, either way and transitively, by the successions
        logged in clear in its scope ("superseded by <id>": an update, a judged contradiction):
        the versions of a text-only memory's fact, as ``fact_history`` finds them."""
        links = []
        for mid, reason in self._q("SELECT memory_id, reason FROM events WHERE scope = ? AND action = 'status' "
                                   "AND starts_with(reason, 'superseded by ')", [scope]):
            m = _SUCCESSOR.match(reason)
            if m:
                links.append((mid, m.group(1)))
        return sorted(_linked({memory_id}, links))

    def rollback_inputs(self, after: int | None, memory_ids: list[str] | None, where: dict | None, cascade: bool,
                        under: str | None) -> dict:
        """Everything a rollback plan reads, in one call: ``{"targets"`` (``rollback_targets``),
        ``"pairs"`` (now and at ``after`` of each target), and for a targeted rollback
        ``"older"`` (now, of what the targets superseded), ``"reinstates"`` (target -> what it
        superseded, through other targets) and ``"flagged"`` (now, of what is derived from them
        and others)``}``."""
        t = self.rollback_targets(after, memory_ids, where, cascade, under)
        undo = t["undo"]
        out = {"targets": t, "pairs": self.now_and_then(undo, after), "older": {}, "flagged": {}}
        if after is None:
            # What each undone memory superseded, through undone ones (v3 and v2 undone
            # together: v1 is what v3's undo brings back, v2 being undone too).
            sup, skip = self.superseded_by(undo), set(undo)
            reinstates: dict[str, list[str]] = {}
            for m in undo:
                found, seen, todo = set(), {m}, list(sup[m])
                while todo:
                    o = todo.pop()
                    if o in seen:
                        continue
                    seen.add(o)
                    if o in skip:
                        todo += sup.get(o, ())
                    else:
                        found.add(o)
                reinstates[m] = sorted(found)
            out["reinstates"] = reinstates
            out["older"] = self.now_and_then(sorted({o for f in reinstates.values() for o in f}), None)
            # why an evicted one left (only a sweep's superseded_old eviction is reinstated)
            out["older_why"] = self.last_status_reason(
                sorted(m for m, (was, _) in out["older"].items() if was is not None and was["status"] == "evicted"))
            out["flagged"] = self.now_and_then(t["flag"], None)
        return out

    def fact_history(self, scope: str, memory_id: str | None = None, entity_key: str | None = None) -> dict | None:
        """Every version of one fact of ``scope`` (the versions of ``memory_id``'s fact, or of
        the fact with ``entity_key``), each with all its events in seq order, its record as it
        stands (None once erased: its key is gone, its events stay) and the gate's verdict of
        each write (``gate_verdict``). Versions are found by entity key in the sealed records
        and by the successor links in clear (``superseded by``, an update's ``supersedes``), so
        an erased version linked to a live one is in the answer. None: no such memory or fact."""
        key_of, links = {}, []
        for mid, enc, snap, key in self._q(
                f"SELECT e.memory_id, e.encrypted, e.snapshot, k.key FROM events e LEFT JOIN {self.live_keys} k "
                "ON k.memory_id = e.memory_id WHERE e.scope = ? AND e.action IN ('write', 'write_working')", [scope]):
            ch = decode(E.WRITE, scope, mid, None, enc, bytes(snap), bytes(key) if key is not None else None)
            key_of[mid] = ch.record.get("entity_key") if ch is not None else None
            if ch is not None and ch.record.get("supersedes"):
                links.append((mid, ch.record["supersedes"]))
        for mid, reason in self._q("SELECT memory_id, reason FROM events WHERE scope = ? AND action = 'status' "
                                   "AND starts_with(reason, 'superseded by ')", [scope]):
            m = _SUCCESSOR.match(reason)
            if m:
                links.append((mid, m.group(1)))
        start = {memory_id} if memory_id is not None and memory_id in key_of else set()
        want = entity_key if entity_key is not None else key_of.get(memory_id)
        if want is not None:
            start |= {m for m, k in key_of.items() if k == want}
        if not start:
            return None
        ids = sorted(m for m in _linked(start, links) if m in key_of)
        events, current, idem = [], Rows(), set()
        for seq, ts, action, mid, version, actor, reason, enc, snap, idem_key, key in self._q(
                f"""SELECT e.seq, e.ts, e.action, e.memory_id, e.version, e.actor, e.reason, e.encrypted, e.snapshot,
                          e.idem_key, k.key FROM events e LEFT JOIN {self.live_keys} k ON k.memory_id = e.memory_id
                   WHERE list_contains(?, e.memory_id) ORDER BY e.seq""", [ids]):
            ch = decode(action, scope, mid, reason, enc, bytes(snap) if snap is not None else b"",
                        bytes(key) if key is not None else None, version)
            if ch is not None:
                apply(current, ch)
            if action in _GATED and idem_key is not None:
                idem.add(idem_key)
            events.append({"seq": int(seq), "ts": int(ts), "action": action, "memory_id": mid, "version": version,
                           "actor": actor, "reason": reason, "idem_key": idem_key,
                           "patch": ch.patch if ch is not None and ch.patch is not None else None})
        gates = {k: gate_verdict(bytes(r) if r is not None else None) for k, r in self._q(
            "SELECT idem_key, result FROM idempotency WHERE list_contains(?, idem_key)", [sorted(idem)])}
        return {"scope": scope, "ids": ids, "events": events, "records": {m: current.get(m) for m in ids},
                "gates": gates}

    def export_to(self, dest: str, upto: int) -> dict:
        """Copy the ledger up to seq ``upto`` into the (new, empty) ledger file ``dest``: events
        as they are (the chain stays intact and verifiable), the data keys of memories written
        by then and not erased since, idempotency rows and recall evidence up to then (the
        provenance index is rebuilt from those records when the fork's ledger is opened)."""
        if not 0 < upto <= self.last_seq:
            raise NotFound(f"seq {upto} is not in this ledger (1..{self.last_seq})")
        ts = self.ts_of(upto)
        self._x("ATTACH ? AS fork", [dest])
        try:
            cols = ", ".join(c for c in (*E.COLUMNS, "mac") if c != "mac")
            self._x(f"INSERT INTO fork.events SELECT {cols}, NULL FROM events WHERE seq <= ?", [int(upto)])
            self._x(f"""INSERT INTO fork.keys SELECT k.* FROM {self.live_keys} k WHERE k.memory_id IN (
                         SELECT memory_id FROM events WHERE seq <= ? AND action IN ('write', 'write_working'))""",
                    [int(upto)])
            # The provenance index is rebuilt from the fork's own records when it is adopted: rows
            # copied by memory would carry edges of events after ``upto`` (an item's copy_of patch).
            self._x("DELETE FROM fork.meta WHERE key = 'provenance'")
            # Fingerprints are keyed by this folder's key, which the fork does not share: a retry
            # in the fork gets the stored result back without its request being compared.
            self._x("""INSERT INTO fork.idempotency SELECT i.idem_key, i.ts, i.result, NULL FROM idempotency i
                         WHERE i.idem_key IN (SELECT idem_key FROM events WHERE seq <= ?)""", [int(upto)])
            self._x("INSERT INTO fork.recalls SELECT * FROM recalls WHERE ts <= ?", [ts])
            self._x("INSERT INTO fork.citations SELECT * FROM citations WHERE ts <= ?", [ts])
            self._x("INSERT INTO fork.actions SELECT * FROM actions WHERE ended_at <= ?", [ts])
            n = self._x("SELECT count(*) FROM fork.events")[0][0]
        finally:
            self._x("DETACH fork")
        return {"events": int(n), "upto": int(upto), "ts": ts}


def _linked(start: set[str], links: list[tuple[str, str]]) -> set[str]:
    """Every id reachable from ``start`` along ``links`` (either way): the versions of one fact."""
    near: dict[str, set[str]] = {}
    for a, b in links:
        near.setdefault(a, set()).add(b)
        near.setdefault(b, set()).add(a)
    found, todo = set(start), list(start)
    while todo:
        for m in near.get(todo.pop(), ()):
            if m not in found:
                found.add(m)
                todo.append(m)
    return found


def gate_verdict(result: bytes | None) -> dict | None:
    """The gate's verdict kept with a write (its idempotency result), as history shows it: the
    decision, and each hit's rule id, field and span. Nothing else: never a value, nor anything
    derived from one."""
    try:
        gate = (orjson.loads(result) or {}).get("gate") if result else None
    except (orjson.JSONDecodeError, AttributeError):
        return None
    if not isinstance(gate, dict) or not gate:
        return None
    return {"decision": gate.get("decision"),
            "hits": [{"rule": h.get("rule"), "field": h.get("field", "text"), "span": list(h.get("span") or [])}
                     for h in gate.get("hits", ()) if isinstance(h, dict)]}


def check_live_at(rec: dict, ts_us: int) -> bool:
    """Whether a record as it stood then was recallable at ``ts_us`` (a vault memory, or a
    working-pool item not yet released)."""
    hard = rec.get("hard_expires_at")
    return rec["status"] in R.LIVE and rec.get("pool") in R.POOLS and (hard is None or hard > ts_us)
