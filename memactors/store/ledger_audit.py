"""What the ledger shows a reader by clearance (DESIGN section 8): each memory's sensitivity,
indexed from its record or its tombstone when ``audit.sql`` is next asked, the proof of an
erasure, and the tables ``audit.sql`` reads, cut to the reader's grants and clearances.

Mixed into ``memactors.store.ledger.Ledger``.
"""

from __future__ import annotations

import orjson
import pyarrow as pa

from ..core import records as R


class LedgerAudit:
    """Needs ``_changes``, ``fold``, ``_q``, ``_x``, ``_insert``, ``_meta``, ``_set_meta``,
    ``_transaction``, ``con`` and ``last_seq`` of ``Ledger``."""

    def index_levels(self) -> None:
        """Bring the sensitivity index up to the last event: the records written since it was
        last brought up (each opened once, ever), and the tombstones of those erased before."""
        done = self._meta("levels")
        since, upto = int(done) if done is not None else 0, self.last_seq
        if upto <= since:
            return
        rows: dict[str, str] = {}
        for _, ch in self._changes("e.action IN ('write', 'write_working') AND e.seq > ? AND e.seq <= ?",
                                   [since, upto]):
            if ch is not None and ch.record and ch.record.get("sensitivity"):
                rows[ch.memory_id] = ch.record["sensitivity"]
        for mid, snap in self._q("SELECT memory_id, snapshot FROM events WHERE action = 'forget' AND seq > ? "
                                 "AND seq <= ?", [since, upto]):
            level = orjson.loads(bytes(snap)).get("sensitivity") if snap else None
            if level and mid not in rows:
                rows[mid] = level
        with self._transaction():
            if rows:
                self._insert("levels", {"memory_id": list(rows), "sensitivity": list(rows.values())})
            self._set_meta("levels", str(upto).encode())

    def erasure(self, memory_id: str) -> dict | None:
        """What the ledger can prove about a memory's erasure: its scope, the tombstone's seq
        (None if never forgotten) and whether its data key is gone. None for an unknown id."""
        rows = self._q("SELECT scope FROM events WHERE memory_id = ? ORDER BY seq LIMIT 1", [memory_id])
        if not rows:
            return None
        tomb = self._q("SELECT min(seq) FROM events WHERE memory_id = ? AND action = 'forget'", [memory_id])[0][0]
        has_key = self._q(f"SELECT count(*) FROM {self.live_keys} k WHERE memory_id = ?", [memory_id])[0][0] > 0
        return {"memory_id": memory_id, "scope": rows[0][0], "tombstone_seq": tomb, "key_destroyed": not has_key}

    def sensitivity_of(self, memory_id: str) -> str | None:
        """A memory's sensitivity (``levels_of``)."""
        return self.levels_of([memory_id]).get(memory_id)

    def levels_of(self, memory_ids: list[str]) -> dict[str, str | None]:
        """Each memory's sensitivity: its record's, or once erased what its tombstone kept (None
        for a tombstone from before they kept it, and for an id the ledger does not know)."""
        ids = sorted(set(memory_ids))
        if not ids:
            return {}
        # semi-joins, not list_contains (which scans the list once an event): a rollback plan asks for many
        recs = self.fold("e.memory_id IN (SELECT unnest(?::VARCHAR[]))", [ids]).records
        out = {m: recs[m].get("sensitivity") for m in ids if recs.get(m) is not None}
        rest = [m for m in ids if m not in out]
        if rest:
            for mid, snap in self._q("SELECT memory_id, arg_min(snapshot, seq) FROM events WHERE action = 'forget' "
                                     "AND memory_id IN (SELECT unnest(?::VARCHAR[])) GROUP BY memory_id", [rest]):
                out[mid] = orjson.loads(bytes(snap)).get("sensitivity") if snap else None
        return {m: out.get(m) for m in ids}

    def readable_tables(self, reads: list[tuple[str, str]], actor: str | None = None) -> dict[str, pa.Table]:
        """``events``, ``recalls`` and ``citations`` as an actor may read them, given its read
        grants as (scope prefix, clearance) pairs ("/" for /global/: every scope; canonical
        paths, so a prefix match is a segment match, and the longest match is the most specific
        grant, whose clearance holds there, as ``GrantTable.clearances``): events in scopes under
        a grant, of no memory or of a memory at or below that clearance; recalls whose every
        allowed scope lies under a grant and every hit is such a memory; and their citations.
        A memory whose sensitivity the ledger does not know counts as the highest. A recall's
        query digest only for its own actor (``actor``): another reader could test guesses of the
        query against the digests of recalls of its own. Never keys or idempotency."""
        params = clearance_params(reads)
        ev = self.read_arrow(f"""SELECT * FROM events e WHERE {EVENT_SHOWN} ORDER BY seq""", params)
        rc = self.read_arrow(f"SELECT * REPLACE (CASE WHEN r.actor = $4 THEN r.query_digest END AS query_digest) "
                             f"FROM recalls r WHERE {RECALL_SHOWN}", [*params, actor])
        ct = self.read_arrow(f"SELECT c.* FROM citations c WHERE c.recall_id IN (SELECT recall_id FROM recalls r "
                             f"WHERE {RECALL_SHOWN})", params)
        return {"events": ev, "recalls": rc, "citations": ct}


# The one clearance rule of the audit views (``audit.sql``, ``audit.actions``, ``audit.at``'s
# count), in SQL over $1..$3 (``clearance_params``): the reader's read grants as (scope prefix,
# clearance rank) rows, and the sensitivities in rank order. Canonical paths: a prefix match is
# a segment match, and the longest match is the most specific grant, whose clearance holds
# there, as ``GrantTable.clearances``.
_GRANTS = "(SELECT unnest($1::VARCHAR[]) p, unnest($2::INTEGER[]) c)"
# The clearance (a rank) that holds in a scope: the most specific grant's; NULL outside them all.
CLEARED = f"(SELECT g.c FROM {_GRANTS} g WHERE starts_with({{scope}}, g.p) ORDER BY length(g.p) DESC LIMIT 1)"
# A hit's: an ancestor no grant covers (a recall sees it, and /global/, through the scopes below
# it) takes the highest clearance of the grants below it, as ``GrantTable.clearances``.
_HIT_CLEARED = f"""coalesce({CLEARED.format(scope="h.hit.scope")}, (SELECT max(g.c) FROM {_GRANTS} g
                            WHERE starts_with(g.p, h.hit.scope) OR h.hit.scope = '/global/'))"""
# A memory's sensitivity (a rank) by the ``levels`` index; one it does not know counts as the highest.
RANK = f"""coalesce((SELECT max(list_position($3::VARCHAR[], l.sensitivity)) - 1 FROM levels l
                     WHERE l.memory_id = {{mid}}), {len(R.SENSITIVITIES) - 1})"""
# An event ``e`` is shown when its scope lies under a grant and it is of no memory or of one at or
# below the clearance there.
EVENT_SHOWN = f"""{CLEARED.format(scope="e.scope")} IS NOT NULL
                  AND (e.memory_id IS NULL OR {RANK.format(mid="e.memory_id")} <= {CLEARED.format(scope="e.scope")})"""
# A recall ``r`` is shown when every allowed scope lies under a grant and every hit is a memory at
# or below the clearance of its scope: whole or not at all.
RECALL_SHOWN = f"""NOT EXISTS (SELECT 1 FROM unnest(r.allowed_scopes) a(s) WHERE {CLEARED.format(scope="a.s")} IS NULL)
    AND NOT EXISTS (SELECT 1 FROM unnest(from_json(r.hits, '[{{"memory_id": "VARCHAR", "scope": "VARCHAR"}}]')) h(hit)
                    WHERE coalesce({RANK.format(mid="h.hit.memory_id")} > {_HIT_CLEARED}, true))"""


def clearance_params(reads: list[tuple[str, str]]) -> list:
    """$1..$3 of the clearance rule's SQL, from read grants as (scope prefix, clearance) pairs
    ("/" for /global/: every scope)."""
    return [[p for p, _ in reads], [R.SENSITIVITIES.index(c) for _, c in reads], list(R.SENSITIVITIES)]
