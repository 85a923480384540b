"""What recalls leave in the ledger: the evidence row of each recall, the access counts it
adds (times returned, times cited, the run of uncited returns a demotion reads), the citations a
caller reports, and what a sweep asks of them.

Mixed into ``memactors.store.ledger.Ledger``.
"""

from __future__ import annotations

import orjson
import pyarrow as pa

from ..core.errors import InvalidRecord, NotFound

_RECALL_COLUMNS = ("recall_id", "ts", "actor", "task_id", "purpose", "allowed_scopes", "visible_scopes",
                   "query_digest", "top_k", "hits", "filters", "removed")


class LedgerEvidence:
    """Needs ``_q``, ``_x`` and ``con`` of ``Ledger``."""

    def _log_recalls(self, rows: list[dict]) -> None:
        tbl = pa.table(
            {
                "recall_id": [r["recall_id"] for r in rows],
                "ts": pa.array([r["ts"] for r in rows], pa.int64()),
                "actor": [r["actor"] for r in rows],
                "task_id": [r["task_id"] for r in rows],
                "purpose": [r["purpose"] for r in rows],
                "allowed_scopes": [r["allowed_scopes"] for r in rows],
                "visible_scopes": [r["visible_scopes"] for r in rows],
                "query_digest": [r["query_digest"] for r in rows],
                "top_k": pa.array([r["top_k"] for r in rows], pa.int32()),
                "hits": [orjson.dumps(r["hits"]).decode() for r in rows],
                "filters": [orjson.dumps(r["filters"]).decode() for r in rows],
                "removed": [orjson.dumps(r["removed"]).decode() for r in rows],
            }
        )
        self.con.execute(f"INSERT INTO recalls SELECT {', '.join(_RECALL_COLUMNS)} FROM tbl").fetchall()
        hits = {}  # memory id -> (scope, times returned, newest time): one recall counts once per memory
        for r in rows:
            if "as_of_seq" in r["filters"]:  # recall(at=) a past point: a look at history, logged, not a use
                continue
            for h in r["hits"]:
                if h["scope"].startswith("l3:"):  # an L3 result (rt.retrieve): logged, never stored, not counted
                    continue
                scope, n, ts = hits.get(h["memory_id"], (h["scope"], 0, 0))
                hits[h["memory_id"]] = (scope, n + 1, max(ts, r["ts"]))
        if hits:
            ids = list(hits)
            acc = pa.table({"memory_id": ids, "scope": [hits[m][0] for m in ids],  # noqa: F841 - replacement scan
                            "n": pa.array([hits[m][1] for m in ids], pa.int32()),
                            "ts": pa.array([hits[m][2] for m in ids], pa.int64())})
            self.con.execute(
                """INSERT INTO access SELECT memory_id, scope, n, 0, ts, n, 1, 0 FROM acc
                   ON CONFLICT (memory_id) DO UPDATE SET retrieved_count = access.retrieved_count + excluded.retrieved_count,
                     last_accessed_at = greatest(access.last_accessed_at, excluded.last_accessed_at),
                     uncited_streak = access.uncited_streak + excluded.uncited_streak, ver = access.ver + 1"""
            ).fetchall()

    def access_changes(self, limit: int = 100_000) -> list[tuple]:
        """Access rows L2 has not seen: (memory_id, scope, retrieved_count, cited_count,
        last_accessed_at, uncited_streak, ver)."""
        return self._q("SELECT memory_id, scope, retrieved_count, cited_count, last_accessed_at, uncited_streak, ver "
                       "FROM access WHERE ver > synced LIMIT ?", [limit])

    def access_synced(self, pairs: list[tuple[str, int]]) -> None:
        """L2 has these (memory id, version) of the access rows."""
        if pairs:
            done = pa.table({"memory_id": [p[0] for p in pairs],  # noqa: F841 - replacement scan
                             "ver": pa.array([p[1] for p in pairs], pa.int64())})
            self.con.execute("UPDATE access SET synced = greatest(access.synced, done.ver) FROM done "
                             "WHERE access.memory_id = done.memory_id").fetchall()

    def touched_since(self, memory_ids: list[str], seq: int, ts: int) -> dict[str, int | None]:
        """Those of these memories with an event after ``seq`` or a recall at or after ``ts``
        (what a sweep planned as of that seq and time must check again), each with its last
        recall (None: never recalled). By a join: a sweep's share names thousands."""
        ids = pa.table({"memory_id": pa.array(memory_ids, pa.string())})  # noqa: F841 - replacement scan
        cur = self.con.cursor()
        try:
            return dict(cur.execute(
                "SELECT t.memory_id, a.last_accessed_at FROM (SELECT DISTINCT memory_id FROM ("
                "SELECT memory_id FROM events WHERE seq > ? UNION ALL "
                "SELECT memory_id FROM access WHERE last_accessed_at >= ?) JOIN ids USING (memory_id)) t "
                "LEFT JOIN access a USING (memory_id)", [seq, ts]).fetchall())
        finally:
            cur.close()

    def uncited_runs(self, min_streak: int, since_ts: int = 0) -> list[tuple[str, str, int]]:
        """(memory_id, scope, uncited_streak) of memories returned at least ``min_streak`` times
        in a row without a citation, recalled at or after ``since_ts`` (a run that has not grown
        since the last look needs no second one): the candidates for demotion. /global/ memories
        are not among them: every tenant recalls them, and one tenant's uncited recalls must not
        take a memory away from all the others."""
        return self._q("SELECT memory_id, scope, uncited_streak FROM access WHERE uncited_streak >= ? "
                       "AND last_accessed_at >= ? AND scope <> '/global/' ORDER BY memory_id",
                       [int(min_streak), int(since_ts)])

    def recall_log(self, recall_id: str) -> dict | None:
        rows = self._q(f"SELECT {', '.join(_RECALL_COLUMNS)} FROM recalls WHERE recall_id = ?", [recall_id])
        if not rows:
            return None
        d = dict(zip(_RECALL_COLUMNS, rows[0]))
        for k in ("hits", "filters", "removed"):
            d[k] = orjson.loads(d[k])
        return d

    def mark_cited(self, recall_id: str, memory_ids: list[str], ts: int) -> int:
        """Record which hits of a recall the model used. Only hits of that recall qualify."""
        log = self.recall_log(recall_id)
        if log is None:
            raise NotFound(f"no recall {recall_id} in the ledger")
        returned = {h["memory_id"] for h in log["hits"]}
        stray = sorted(set(memory_ids) - returned)
        if stray:
            raise InvalidRecord(f"{len(stray)} memory id(s) were not hits of recall {recall_id}")
        done = set(self.citations(recall_id))  # a retry, or a tool call's citation marked again: one use
        for mid in dict.fromkeys(memory_ids):
            if mid in done:
                continue
            self._x("INSERT INTO citations VALUES (?, ?, ?)", [recall_id, mid, ts])
            # Used, not merely retrieved: counted apart, and the run of uncited returns ends.
            self._x("UPDATE access SET cited_count = cited_count + 1, uncited_streak = 0, ver = ver + 1 "
                    "WHERE memory_id = ?", [mid])
        return len(set(memory_ids))

    def citations(self, recall_id: str) -> list[str]:
        rows = self._q("SELECT DISTINCT memory_id FROM citations WHERE recall_id = ? ORDER BY memory_id", [recall_id])
        return [r[0] for r in rows]
