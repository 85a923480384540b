"""The memories a sweep cannot see in L2 whose hard TTL has passed (DESIGN section 7).

A sweep plans over L2. A memory set aside with its data key kept is not there: evicted by a
rule (soft-expired and unused, superseded long ago, stale), archived by demotion; nor is any L1
working item (live in its session, released, superseded by its promotion, or let go with no
event: its session idle past ``session_ttl_s``, pushed out of a full pool). Its text stays in the ledger (so a
rollback can bring it back) until its hard TTL passes; then it is erased like any memory past
it (a tombstone, its data key destroyed). The ``set_aside`` index says which: each set-aside
memory's hard expiry, read from its record once (when a sweep next plans, so the write path
pays nothing), with the seq of the event that set it aside. A later event of the memory
(revived, erased, set aside again) makes its row stale: the query skips it, and the next index
of a memory set aside again replaces it. ``audit.verify`` recomputes the rows in force from the
records (the index is not chained: emptied by hand, memories would outlive their TTL unseen).

Mixed into ``memactors.store.ledger.Ledger``.
"""

from __future__ import annotations

from ..core import project
from ..core.project import Rows, apply
from .entries import decode

EXPIRY_DDL = "CREATE TABLE IF NOT EXISTS set_aside (memory_id VARCHAR, scope VARCHAR, hard BIGINT, seq BIGINT)"

# What L2 never holds, by the newest event in the range: a vault memory evicted (its status
# event: status patches are in clear), and every L1 working item, whatever became of it (one
# may leave the pool with no event of its own: its session idle past session_ttl_s, pushed out
# by the pool's size, a demoted copy let go), each read again at its newest event.
_SET_ASIDE = """
    WITH s AS (SELECT seq, memory_id, action, snapshot FROM events
               WHERE seq > ? AND seq <= ? AND memory_id IS NOT NULL AND action <> 'forget')
    SELECT max(seq), memory_id FROM s
    WHERE memory_id IN (SELECT memory_id FROM events WHERE action = 'write_working')
       OR (action = 'status' AND json_extract_string(decode(snapshot), '$.status') = 'evicted')
    GROUP BY memory_id"""
_RECORDS = """SELECT e.seq, e.action, e.scope, e.memory_id, e.reason, e.encrypted, e.snapshot, k.key
              FROM events e LEFT JOIN {keys} k ON k.memory_id = e.memory_id
              WHERE e.memory_id IN (SELECT unnest(?::VARCHAR[])) AND e.seq <= ? ORDER BY e.seq"""  # Ledger.live_keys
# A row in force: nothing has happened to its memory since it was set aside.
_IN_FORCE = "NOT EXISTS (SELECT 1 FROM events e WHERE e.memory_id = a.memory_id AND e.seq > a.seq)"


def set_aside_rows(q, since: int, upto: int, keys: str = "keys") -> tuple[list[str], list[tuple[str, str, int, int]]]:
    """(ids set aside in seqs ``since``..``upto``, their rows: (memory id, scope, hard expiry,
    seq)) from the events through the query function ``q(sql, params)``: each record folded as
    it stood at ``upto``. One still set aside with a hard expiry gets a row; one erased or back
    in L2 since gets none."""
    found = q(_SET_ASIDE, [since, upto])
    if not found:
        return [], []
    ids = sorted(m for _, m in found)
    rows = Rows()
    for r in q(_RECORDS.format(keys=keys), [ids, upto]):
        ch = decode(r[1], r[2], r[3], r[4], r[5], bytes(r[6]) if r[6] is not None else b"",
                    bytes(r[7]) if r[7] is not None else None)
        if ch is not None:  # None: a record whose key an erasure destroyed
            apply(rows, ch)
    out = []
    for seq, mid in found:
        rec = rows.get(mid)
        if rec is not None and not project.in_l2(rec) and rec.get("hard_expires_at") is not None:
            out.append((mid, rec["scope"], int(rec["hard_expires_at"]), int(seq)))
    return ids, out


def set_aside_problem(q, covered: int, table: list[tuple], keys: str = "keys") -> str | None:
    """The index's rows in force against what the records imply up to ``covered`` (the seq its
    mark says it reached): ``table`` holds (memory id, scope, hard, seq) of the rows in force."""
    _, want = set_aside_rows(q, 0, covered, keys)
    if want:
        last = dict(q("SELECT memory_id, max(seq) FROM events WHERE memory_id IN (SELECT unnest(?::VARCHAR[])) "
                      "GROUP BY memory_id", [[w[0] for w in want]]))
        want = [w for w in want if last.get(w[0]) == w[3]]  # in force: its last event set it aside
    have = {tuple(r) for r in table}
    if have != set(want):
        return (f"the set-aside index holds {len(have)} rows in force where the records imply {len(want)}: "
                "rows were changed (memories past their hard TTL would not be erased)")
    return None


class LedgerExpiry:
    """Needs ``_q``, ``_x``, ``_insert``, ``_meta``, ``_set_meta``, ``_transaction`` and
    ``last_seq`` of ``Ledger``."""

    def set_aside_past_hard(self, now_us: int, *, dry_run: bool = False) -> list[tuple[str, str]]:
        """(memory id, scope) of each memory no L2 row holds whose hard TTL has passed at
        ``now_us`` and whose data key is still kept, by scope then id. The index is brought up
        to the last event first; a dry run writes nothing, so it folds what the index lacks here."""
        done = self._meta("set_aside")
        since, upto = (int(done) if done is not None else 0), self.last_seq
        late: list[tuple[str, str]] = []
        if upto > since:
            ids, rows = set_aside_rows(self._q, since, upto, self.live_keys)
            if dry_run:  # each folded with its key (set_aside_rows), each its memory's last event but a forget
                late = [(m, s) for m, s, hard, _ in rows if hard <= now_us]
            else:
                self._index_set_aside(ids, rows, upto)
        # (a memory with events since the index has no old row in force: _IN_FORCE)
        due = [tuple(r) for r in self._q(
            f"""SELECT a.memory_id, a.scope FROM set_aside a
                WHERE a.hard <= ? AND EXISTS (SELECT 1 FROM {self.live_keys} k WHERE k.memory_id = a.memory_id)
                  AND {_IN_FORCE}
                ORDER BY a.scope, a.memory_id""", [int(now_us)])]
        return sorted(due + late, key=lambda r: (r[1], r[0])) if late else due

    def _index_set_aside(self, ids: list[str], rows: list[tuple], upto: int) -> None:
        """Bring the index up to ``upto``: the memories set aside since it was last brought up
        (``ids``), each record folded once (``rows``)."""
        with self._transaction():
            if ids:
                self._x("DELETE FROM set_aside WHERE memory_id IN (SELECT unnest(?::VARCHAR[]))", [ids])
            if rows:
                self._insert("set_aside", dict(zip(("memory_id", "scope", "hard", "seq"), map(list, zip(*rows)))))
            self._set_meta("set_aside", str(upto).encode())

    def _set_aside_in_force(self, cur) -> list[tuple]:
        return cur.execute(f"SELECT a.memory_id, a.scope, a.hard, a.seq FROM set_aside a WHERE {_IN_FORCE}").fetchall()
