"""The ledger: an append-only DuckDB event table with a sha256 chain (DESIGN section 8).

One process owns the file (DuckDB locks it against every other process). Appends arrive as
*items*, each the events of one write, forget or grant with its idempotency key; a group of
items is committed in one transaction, inserted as Arrow tables. Memory content inside events
is AES-GCM ciphertext under a per-memory key kept in ``keys``; ``forget`` deletes the key in
the same transaction as the tombstone, so the chain still verifies and the content is gone.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import duckdb
import orjson
import pyarrow as pa

from ..core import events as E
from ..core.errors import InvalidRecord, NotFound
from . import cipher

_DDL = [
    "CREATE TABLE IF NOT EXISTS meta (key VARCHAR, value BLOB)",
    """CREATE TABLE IF NOT EXISTS events (
        seq BIGINT, ts BIGINT, scope VARCHAR, action VARCHAR, memory_id VARCHAR, version INTEGER,
        actor VARCHAR, reason VARCHAR, encrypted BOOLEAN, snapshot BLOB, idem_key VARCHAR,
        format INTEGER, prev_hash BLOB, hash BLOB)""",
    "CREATE TABLE IF NOT EXISTS keys (memory_id VARCHAR, key BLOB)",
    "CREATE TABLE IF NOT EXISTS l2_applied (seq BIGINT)",
    "CREATE TABLE IF NOT EXISTS idempotency (idem_key VARCHAR, ts BIGINT, result BLOB)",
    """CREATE TABLE IF NOT EXISTS recalls (
        recall_id VARCHAR, ts BIGINT, actor VARCHAR, task_id VARCHAR, purpose VARCHAR,
        allowed_scopes VARCHAR[], visible_scopes VARCHAR[], query_digest VARCHAR, top_k INTEGER,
        hits VARCHAR, filters VARCHAR, removed VARCHAR)""",
    "CREATE TABLE IF NOT EXISTS citations (recall_id VARCHAR, memory_id VARCHAR, ts BIGINT)",
]

_EVENT_SCHEMA = pa.schema(
    [
        ("seq", pa.int64()), ("ts", pa.int64()), ("scope", pa.string()), ("action", pa.string()),
        ("memory_id", pa.string()), ("version", pa.int32()), ("actor", pa.string()), ("reason", pa.string()),
        ("encrypted", pa.bool_()), ("snapshot", pa.binary()), ("idem_key", pa.string()), ("format", pa.int32()),
        ("prev_hash", pa.binary()), ("hash", pa.binary()),
    ]
)
_RECALL_COLUMNS = ("recall_id", "ts", "actor", "task_id", "purpose", "allowed_scopes", "visible_scopes",
                   "query_digest", "top_k", "hits", "filters", "removed")


@dataclass(slots=True)
class Item:
    """The events of one logical change, committed together or not at all."""

    idem_key: str
    result: bytes  # what a retry with the same key gets back (orjson)
    events: list[E.Event]
    keys: dict[str, bytes]  # new data keys, by memory id
    destroy_keys: list[str]  # memory ids whose keys die with this item (forget)
    applied: bool = False  # True when the events need no L2 replay (working pool, blocks, grants)


@dataclass(slots=True)
class VerifyResult:
    ok: bool
    events: int
    first_bad_seq: int | None
    reason: str

    def to_dict(self) -> dict:
        return {"ok": self.ok, "events": self.events, "first_bad_seq": self.first_bad_seq, "reason": self.reason}


class Ledger:
    def __init__(self, path: str) -> None:
        self.path = path
        self.con = duckdb.connect(path)
        for ddl in _DDL:
            self._x(ddl)
        row = self._x("SELECT max(seq) FROM events")[0]
        self.last_seq = int(row[0] or 0)
        if self.last_seq:
            h = self._x("SELECT hash FROM events WHERE seq = ?", [self.last_seq])[0][0]
            self.last_hash = bytes(h)
        else:
            self.last_hash = E.GENESIS
        self.digest_key = self._meta_secret("query_digest_key")

    def _x(self, sql: str, params: list | None = None) -> list[tuple]:
        # Run a statement to completion: DuckDB 2.0 refuses new work on a connection while a
        # result is still open.
        return self.con.execute(sql, params or []).fetchall()

    def _meta_secret(self, name: str) -> bytes:
        rows = self._x("SELECT value FROM meta WHERE key = ?", [name])
        if rows:
            return bytes(rows[0][0])
        value = os.urandom(32)
        self._x("INSERT INTO meta VALUES (?, ?)", [name, value])
        return value

    # --- writing -------------------------------------------------------------------------

    def commit(self, items: list[Item], known: dict[str, bytes]) -> list[tuple[str, bytes | list[int]]]:
        """Commit items in one transaction. Items whose key is in ``known`` (or repeated within
        the group) are not appended; they get ("dup", stored result). Others get ("ok", seqs)."""
        out: list[tuple[str, bytes | list[int]]] = []
        cols = {name: [] for name in _EVENT_SCHEMA.names}
        keys_mid, keys_val, destroy, applied, idem_rows = [], [], [], [], []
        seq, prev = self.last_seq, self.last_hash
        seen: dict[str, bytes] = {}
        for it in items:
            if it.idem_key in known or it.idem_key in seen:
                out.append(("dup", known.get(it.idem_key) or seen[it.idem_key]))
                continue
            seen[it.idem_key] = it.result
            seqs = []
            for e in it.events:
                seq += 1
                h = E.chain_hash(prev, seq, e)
                for name, v in (
                    ("seq", seq), ("ts", e.ts), ("scope", e.scope), ("action", e.action), ("memory_id", e.memory_id),
                    ("version", e.version), ("actor", e.actor), ("reason", e.reason), ("encrypted", e.encrypted),
                    ("snapshot", e.snapshot), ("idem_key", e.idem_key), ("format", E.FORMAT_VERSION),
                    ("prev_hash", prev), ("hash", h),
                ):
                    cols[name].append(v)
                prev = h
                seqs.append(seq)
            if it.applied:
                applied.extend(seqs)
            keys_mid.extend(it.keys)
            keys_val.extend(it.keys.values())
            destroy.extend(it.destroy_keys)
            idem_rows.append((it.idem_key, it.events[0].ts if it.events else 0, it.result))
            out.append(("ok", seqs))
        if not seen:
            return out
        # Arrow tables are read by DuckDB's replacement scan of these local names, so those
        # statements call con.execute here, in this frame (cheaper than register/unregister:
        # ~1.9 ms for the whole transaction of one small write).
        ev = pa.table(cols, schema=_EVENT_SCHEMA)  # noqa: F841
        idem = pa.table(  # noqa: F841
            {
                "idem_key": [r[0] for r in idem_rows],
                "ts": pa.array([r[1] for r in idem_rows], pa.int64()),
                "result": pa.array([r[2] for r in idem_rows], pa.binary()),
            }
        )
        newkeys = pa.table({"memory_id": keys_mid, "key": pa.array(keys_val, pa.binary())})  # noqa: F841
        self._x("BEGIN TRANSACTION")
        try:
            self.con.execute("INSERT INTO events SELECT * FROM ev").fetchall()
            if keys_mid:
                self.con.execute("INSERT INTO keys SELECT * FROM newkeys").fetchall()
            if destroy:
                self._x("DELETE FROM keys WHERE list_contains(?, memory_id)", [destroy])
            if applied:
                self._insert_applied(applied)
            self.con.execute("INSERT INTO idempotency SELECT * FROM idem").fetchall()
            self._x("COMMIT")
        except BaseException:
            self._x("ROLLBACK")
            raise
        self.last_seq, self.last_hash = seq, prev
        if destroy:
            # Fold the WAL into the file so the deleted key rows are not kept in a log segment.
            self._x("CHECKPOINT")
        return out

    def _insert_applied(self, seqs: list[int]) -> None:
        done = pa.table({"seq": pa.array(seqs, pa.int64())})  # noqa: F841 - read by the replacement scan
        self.con.execute("INSERT INTO l2_applied SELECT * FROM done").fetchall()

    def mark_applied(self, seqs: list[int]) -> None:
        if seqs:
            self._insert_applied(seqs)

    def log_recalls(self, rows: list[dict]) -> None:
        if not rows:
            return
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

    # --- reading -------------------------------------------------------------------------

    def newest_ts(self) -> int:
        return int(self.con.cursor().execute("SELECT coalesce(max(ts), 0) FROM events").fetchone()[0])

    def idempotency_since(self, ts: int) -> dict[str, bytes]:
        rows = self.con.cursor().execute("SELECT idem_key, result FROM idempotency WHERE ts >= ?", [ts]).fetchall()
        return {k: bytes(v) for k, v in rows}

    def unapplied(self) -> list[dict]:
        """Events not yet in L2, with content decrypted where its key still exists, in seq order."""
        rows = self.con.cursor().execute(
            """SELECT e.seq, e.scope, e.action, e.memory_id, e.encrypted, e.snapshot, k.key
               FROM events e
               LEFT JOIN keys k ON k.memory_id = e.memory_id
               WHERE e.action IN ('write', 'status', 'refresh', 'forget')
                 AND e.seq NOT IN (SELECT seq FROM l2_applied)
               ORDER BY e.seq"""
        ).fetchall()
        return [self._event_dict(*r) for r in rows]

    def working_since(self, ts: int) -> list[dict]:
        rows = self.con.cursor().execute(
            """SELECT e.seq, e.scope, e.action, e.memory_id, e.encrypted, e.snapshot, k.key
               FROM events e JOIN keys k ON k.memory_id = e.memory_id
               WHERE e.action = 'write_working' AND e.ts >= ? ORDER BY e.seq""",
            [ts],
        ).fetchall()
        return [self._event_dict(*r) for r in rows]

    @staticmethod
    def _event_dict(seq, scope, action, memory_id, encrypted, snapshot, key) -> dict:
        data = None
        if encrypted:
            if key is not None:
                data = orjson.loads(cipher.unseal(bytes(key), bytes(snapshot), memory_id.encode()))
        else:
            data = orjson.loads(bytes(snapshot)) if snapshot else None
        return {"seq": seq, "scope": scope, "action": action, "memory_id": memory_id, "data": data}

    def grants(self) -> list[dict]:
        rows = self.con.cursor().execute("SELECT snapshot FROM events WHERE action = 'grant' ORDER BY seq").fetchall()
        return [orjson.loads(bytes(r[0])) for r in rows]

    def erasure(self, memory_id: str) -> dict | None:
        """What the ledger can prove about a memory's erasure: its scope, the tombstone's seq
        (None if never forgotten) and whether its data key is gone. None for an unknown id."""
        cur = self.con.cursor()
        row = cur.execute("SELECT scope FROM events WHERE memory_id = ? ORDER BY seq LIMIT 1", [memory_id]).fetchone()
        if row is None:
            return None
        tomb = cur.execute("SELECT min(seq) FROM events WHERE memory_id = ? AND action = 'forget'",
                           [memory_id]).fetchone()[0]
        has_key = cur.execute("SELECT count(*) FROM keys WHERE memory_id = ?", [memory_id]).fetchone()[0] > 0
        return {"memory_id": memory_id, "scope": row[0], "tombstone_seq": tomb, "key_destroyed": not has_key}

    def readable_tables(self, prefixes: list[str] | None) -> dict[str, pa.Table]:
        """``events``, ``recalls`` and ``citations`` as an actor may read them: events in scopes
        under one of ``prefixes`` (the actor's read grants, canonical scope paths, so a prefix
        match is a segment match), recalls whose every allowed scope lies there, and their
        citations. ``None``: everything (a read grant on /global/). Never keys or idempotency."""
        cur = self.con.cursor()
        if prefixes is None:
            ev = cur.execute("SELECT * FROM events ORDER BY seq").to_arrow_table()
            rc = cur.execute("SELECT * FROM recalls").to_arrow_table()
            ct = cur.execute("SELECT * FROM citations").to_arrow_table()
        else:
            ev = cur.execute("""SELECT * FROM events e WHERE EXISTS (
                                  SELECT 1 FROM unnest(?::VARCHAR[]) g(p) WHERE starts_with(e.scope, g.p))
                                ORDER BY seq""", [prefixes]).to_arrow_table()
            covered = """NOT EXISTS (SELECT 1 FROM unnest(r.allowed_scopes) a(s) WHERE NOT EXISTS (
                           SELECT 1 FROM unnest(?::VARCHAR[]) g(p) WHERE starts_with(a.s, g.p)))"""
            rc = cur.execute(f"SELECT * FROM recalls r WHERE {covered}", [prefixes]).to_arrow_table()
            ct = cur.execute(f"""SELECT c.* FROM citations c WHERE c.recall_id IN (
                                   SELECT recall_id FROM recalls r WHERE {covered})""", [prefixes]).to_arrow_table()
        return {"events": ev, "recalls": rc, "citations": ct}

    def verify(self, chunk: int = 50_000) -> VerifyResult:
        prev, expect, count = E.GENESIS, 1, 0
        reader = self.con.cursor().execute(f"SELECT {', '.join(E.COLUMNS)} FROM events ORDER BY seq").to_arrow_reader(chunk)
        for batch in reader:
            bad, why, prev, expect = E.verify_rows(batch.to_pylist(), prev, expect)
            count += batch.num_rows
            if bad is not None:
                return VerifyResult(False, count, bad, why)
        if expect - 1 != self.last_seq and self.last_seq:
            return VerifyResult(False, count, expect, f"the chain ends at seq {expect - 1}, the ledger says {self.last_seq}")
        return VerifyResult(True, count, None, "ok")

    def recall_log(self, recall_id: str) -> dict | None:
        cur = self.con.cursor().execute(f"SELECT {', '.join(_RECALL_COLUMNS)} FROM recalls WHERE recall_id = ?", [recall_id])
        row = cur.fetchone()
        if row is None:
            return None
        d = dict(zip(_RECALL_COLUMNS, row))
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
        for mid in dict.fromkeys(memory_ids):
            self._x("INSERT INTO citations VALUES (?, ?, ?)", [recall_id, mid, ts])
        return len(set(memory_ids))

    def citations(self, recall_id: str) -> list[str]:
        rows = self.con.cursor().execute(
            "SELECT DISTINCT memory_id FROM citations WHERE recall_id = ? ORDER BY memory_id", [recall_id]).fetchall()
        return [r[0] for r in rows]

    def close(self) -> None:
        try:
            self._x("CHECKPOINT")
        finally:
            self.con.close()
