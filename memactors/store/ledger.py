"""The ledger: an append-only DuckDB event table with a sha256 chain (DESIGN section 8).

One process owns the file (DuckDB locks it against every other process). Appends arrive as
*items*, each the events of one write, forget or grant with its idempotency key; a group of
items is committed in one transaction, inserted as Arrow tables. Memory content inside events
is AES-GCM ciphertext under a per-memory key kept in ``keys``; ``forget`` deletes the key in
the same transaction as the tombstone, so the chain still verifies and the content is gone.
"""

from __future__ import annotations

import hmac
import os
import uuid
from dataclasses import dataclass

import duckdb
import orjson
import pyarrow as pa

from ..core import events as E
from ..core.errors import InvalidRecord, LedgerTampered, NotFound, StoreError
from . import cipher
from .ledger_key import DIGEST, FINGERPRINT, LedgerKey
from .ledger_key import key_dir as resolve_key_dir

_DDL = [
    "CREATE TABLE IF NOT EXISTS meta (key VARCHAR, value BLOB)",
    """CREATE TABLE IF NOT EXISTS events (
        seq BIGINT, ts BIGINT, scope VARCHAR, action VARCHAR, memory_id VARCHAR, version INTEGER,
        actor VARCHAR, reason VARCHAR, encrypted BOOLEAN, snapshot BLOB, idem_key VARCHAR,
        format INTEGER, prev_hash BLOB, hash BLOB, mac BLOB)""",
    # Folders from before the ledger key: the MAC column is added, then filled (see _open_key).
    "ALTER TABLE events ADD COLUMN IF NOT EXISTS mac BLOB",
    "CREATE TABLE IF NOT EXISTS keys (memory_id VARCHAR, key BLOB)",
    "CREATE TABLE IF NOT EXISTS l2_applied (seq BIGINT)",
    "CREATE TABLE IF NOT EXISTS idempotency (idem_key VARCHAR, ts BIGINT, result BLOB, fingerprint BLOB)",
    "ALTER TABLE idempotency ADD COLUMN IF NOT EXISTS fingerprint BLOB",
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
        ("prev_hash", pa.binary()), ("hash", pa.binary()), ("mac", pa.binary()),
    ]
)
# Meta: the folder's id (names its key outside the folder) and the ledger format. Format 2 is
# the keyed ledger; format 1 (no key, no MACs) is upgraded in place when first opened.
LEDGER_FORMAT = 2
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
    fingerprint: bytes | None = None  # keyed digest of the request: a reused key with another write conflicts


@dataclass(slots=True)
class VerifyResult:
    ok: bool
    events: int
    first_bad_seq: int | None
    reason: str
    table: str | None = None  # the table that disagrees with the events, when that is the finding

    def to_dict(self) -> dict:
        return {"ok": self.ok, "events": self.events, "first_bad_seq": self.first_bad_seq, "reason": self.reason,
                "table": self.table}


class Ledger:
    def __init__(self, path: str, key_dir: str, *, read_only: bool = False) -> None:
        """Open (creating or upgrading) the ledger file; ``read_only`` opens an existing one
        for ``verify`` alone (no checks at open, nothing written)."""
        self.path = path
        self.con = duckdb.connect(path, read_only=read_only)
        if read_only:
            try:
                self._open_read_only(key_dir)
            except BaseException:
                self.con.close()
                raise
            return
        for ddl in _DDL:
            self._x(ddl)
        row = self._x("SELECT max(seq) FROM events")[0]
        self.last_seq = int(row[0] or 0)
        if self.last_seq:
            h = self._x("SELECT hash FROM events WHERE seq = ?", [self.last_seq])[0][0]
            self.last_hash = bytes(h)
        else:
            self.last_hash = E.GENESIS
        try:
            self.key = self._open_key(key_dir)
            self.open_check()
        except BaseException:
            self.con.close()  # a refused ledger stays closed: `audit verify` may open it next
            raise
        self.digest_key = self.key.subkey(DIGEST)
        self.fingerprint_key = self.key.subkey(FINGERPRINT)

    def _open_read_only(self, key_dir: str) -> None:
        row = self._x("SELECT max(seq) FROM events")[0]
        self.last_seq = int(row[0] or 0)
        folder_id = self._meta("folder_id")
        if folder_id is None or self._meta("ledger_format") is None:
            raise LedgerTampered(f"the ledger at {self.path} has no folder id or format: not a keyed ledger")
        self.key = LedgerKey.open(key_dir, folder_id.decode(), create=False)

    def _open_key(self, key_dir: str) -> LedgerKey:
        folder_id = self._meta("folder_id")
        if folder_id is None:
            folder_id = uuid.uuid4().hex
            self._x("INSERT INTO meta VALUES ('folder_id', ?)", [folder_id.encode()])
        else:
            folder_id = folder_id.decode()
        fmt = self._meta("ledger_format")
        key = LedgerKey.open(key_dir, folder_id, create=fmt is None)
        if fmt is None:
            # A new ledger, or one from before keys: trust it as found (first use), vouch for
            # its chain through the newest event, and anchor that.
            if self.last_seq:
                marks = {seq: key.mac(seq, bytes(h)) for seq, h in
                         self._x("SELECT seq, hash FROM events WHERE action = 'grant' OR seq = ?", [self.last_seq])}
                for seq, mac in marks.items():
                    self._x("UPDATE events SET mac = ? WHERE seq = ?", [mac, seq])
                key.write_head(self.last_seq, self.last_hash)
            self._x("INSERT INTO meta VALUES ('ledger_format', ?)", [str(LEDGER_FORMAT).encode()])
        return key

    def _meta(self, name: str) -> bytes | None:
        rows = self._x("SELECT value FROM meta WHERE key = ?", [name])
        return bytes(rows[0][0]) if rows else None

    def _q(self, sql: str, params: list | None = None) -> list[tuple]:
        """A read on a cursor of its own: reads run beside the commit thread, and a DuckDB
        connection refuses a second caller instead of waiting."""
        cur = self.con.cursor()
        try:
            return cur.execute(sql, params or []).fetchall()
        finally:
            cur.close()

    def _x(self, sql: str, params: list | None = None) -> list[tuple]:
        # Run a statement to completion: DuckDB 2.0 refuses new work on a connection while a
        # result is still open.
        return self.con.execute(sql, params or []).fetchall()

    # --- writing -------------------------------------------------------------------------

    def commit(self, items: list[Item], known: dict[str, tuple[bytes | None, bytes]]
               ) -> list[tuple[str, bytes | list[int]]]:
        """Commit items in one transaction. Items whose key is in ``known`` (fingerprint, result)
        or repeated within the group are not appended: they get ("dup", stored result), or
        ("conflict", stored result) when the fingerprints differ. Others get ("ok", seqs)."""
        out: list[tuple[str, bytes | list[int]]] = []
        cols = {name: [] for name in _EVENT_SCHEMA.names}
        keys_mid, keys_val, destroy, applied, idem_rows = [], [], [], [], []
        seq, prev = self.last_seq, self.last_hash
        seen: dict[str, tuple[bytes | None, bytes]] = {}
        for it in items:
            first = known.get(it.idem_key) or seen.get(it.idem_key)
            if first is not None:
                fp, result = first
                same = fp is None or it.fingerprint is None or hmac.compare_digest(fp, it.fingerprint)
                out.append(("dup" if same else "conflict", result))
                continue
            seen[it.idem_key] = (it.fingerprint, it.result)
            seqs = []
            for e in it.events:
                seq += 1
                h = E.chain_hash(prev, seq, e)
                for name, v in (
                    ("seq", seq), ("ts", e.ts), ("scope", e.scope), ("action", e.action), ("memory_id", e.memory_id),
                    ("version", e.version), ("actor", e.actor), ("reason", e.reason), ("encrypted", e.encrypted),
                    ("snapshot", e.snapshot), ("idem_key", e.idem_key), ("format", E.FORMAT_VERSION),
                    ("prev_hash", prev), ("hash", h), ("mac", self.key.mac(seq, h) if e.action == E.GRANT else None),
                ):
                    cols[name].append(v)
                prev = h
                seqs.append(seq)
            if it.applied:
                applied.extend(seqs)
            keys_mid.extend(it.keys)
            keys_val.extend(it.keys.values())
            destroy.extend(it.destroy_keys)
            idem_rows.append((it.idem_key, it.events[0].ts if it.events else 0, it.result, it.fingerprint))
            out.append(("ok", seqs))
        if not seen or seq == self.last_seq:
            return out
        # One MAC per commit, on its last event, vouches for the chain up to it (grant events
        # carry their own as well: the open check verifies every grant cheaply).
        cols["mac"][-1] = self.key.mac(seq, prev)
        # Arrow tables are read by DuckDB's replacement scan of these local names, so those
        # statements call con.execute here, in this frame (cheaper than register/unregister:
        # ~1.9 ms for the whole transaction of one small write).
        ev = pa.table(cols, schema=_EVENT_SCHEMA)  # noqa: F841
        idem = pa.table(  # noqa: F841
            {
                "idem_key": [r[0] for r in idem_rows],
                "ts": pa.array([r[1] for r in idem_rows], pa.int64()),
                "result": pa.array([r[2] for r in idem_rows], pa.binary()),
                "fingerprint": pa.array([r[3] for r in idem_rows], pa.binary()),
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
        self.key.write_head(seq, prev)
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

    def idempotency_since(self, ts: int) -> dict[str, tuple[bytes | None, bytes]]:
        """Idempotency keys written since ``ts``: key -> (request fingerprint, stored result)."""
        rows = self.con.cursor().execute(
            "SELECT idem_key, fingerprint, result FROM idempotency WHERE ts >= ?", [ts]).fetchall()
        return {k: (bytes(f) if f is not None else None, bytes(v)) for k, f, v in rows}

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

    def l2_expected(self) -> pa.Table:
        """(memory_id, scope) of every row L2 should hold by the events it has applied: vault
        writes, less what was erased."""
        return self.con.cursor().sql(
            """SELECT memory_id, any_value(scope) AS scope FROM events e
               WHERE action = 'write' AND seq IN (SELECT seq FROM l2_applied)
                 AND NOT EXISTS (SELECT 1 FROM events f WHERE f.memory_id = e.memory_id AND f.action = 'forget'
                                 AND f.seq IN (SELECT seq FROM l2_applied))
               GROUP BY memory_id""").to_arrow_table()

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
        """Walk the chain up to the newest committed event (a snapshot: commits meanwhile are
        not mistaken for breaks), check every stored MAC and that the last event has one, the
        anchor outside the folder, and the tables that must agree with the events."""
        upto = self.last_seq
        prev, expect, count, vouched = E.GENESIS, 1, 0, 0
        cols = ", ".join((*E.COLUMNS, "mac"))
        reader = self.con.cursor().sql(f"SELECT {cols} FROM events WHERE seq <= {int(upto)} ORDER BY seq"
                                       ).to_arrow_reader(chunk)
        for batch in reader:
            rows = batch.to_pylist()
            bad, why, prev, expect = E.verify_rows(rows, prev, expect)
            if bad is not None:
                return VerifyResult(False, count, bad, why)
            for r in rows:
                if r["mac"] is not None:
                    if not self.key.check(r["seq"], bytes(r["hash"]), r["mac"]):
                        return VerifyResult(False, count, vouched + 1, f"the ledger key does not vouch for seq "
                                            f"{vouched + 1}..{r['seq']}: events were forged or re-chained")
                    vouched = r["seq"]
                elif r["action"] == E.GRANT:
                    return VerifyResult(False, count, r["seq"], "a grant event without its MAC (forged)")
            count += batch.num_rows
        if expect - 1 != upto:
            return VerifyResult(False, count, expect, f"the chain ends at seq {expect - 1}, the ledger says {upto}")
        if vouched != upto:
            return VerifyResult(False, count, vouched + 1,
                                f"events after seq {vouched} are not vouched for by the ledger key (appended by hand?)")
        problem = self._check_anchor() or self._check_tables()
        if problem is not None:
            return VerifyResult(False, count, *problem)
        return VerifyResult(True, count, None, "ok")

    def open_check(self) -> None:
        """What opening checks, cheaply, before anything is served: the anchor, the events
        after it (chain and MAC), every grant's own MAC, and the keys and idempotency tables.
        The full walk is ``verify()``. Raises LedgerTampered naming the seq or table."""
        problem = self._check_anchor()
        if problem is None:
            head = self.key.read_head()
            start = head[0] if head else 0
            prev = bytes(self._q("SELECT hash FROM events WHERE seq = ?", [start])[0][0]) if start else E.GENESIS
            cols = ", ".join((*E.COLUMNS, "mac"))
            tail = [dict(zip((*E.COLUMNS, "mac"), r)) for r in
                    self._q(f"SELECT {cols} FROM events WHERE seq > ? ORDER BY seq", [start])]
            bad, why, _, _ = E.verify_rows(tail, prev, start + 1)
            if bad is not None:
                problem = (bad, why)
            elif tail and not self.key.check(tail[-1]["seq"], bytes(tail[-1]["hash"]), tail[-1]["mac"]):
                problem = (start + 1, f"events {start + 1}..{tail[-1]['seq']} are not vouched for by the ledger key")
        if problem is None:
            problem = self._check_grants() or self._check_tables()
        if problem is not None:
            seq, why, *table = problem
            where = f"seq {seq}" if seq is not None else f"table {table[0]}"
            raise LedgerTampered(f"the ledger at {self.path} fails its check at {where}: {why}; it was changed "
                                 "outside memactors. `memactors audit verify` shows the finding; restore the "
                                 "data folder from a backup")

    def _check_anchor(self) -> tuple | None:
        head = self.key.read_head()
        if head is None:
            return (1, "the ledger has events but no anchor") if self.last_seq else None
        seq, h = head
        last = self._q("SELECT max(seq) FROM events")[0][0] or 0
        if seq > last:
            return (last + 1, f"the ledger ends at seq {last} but its anchor says {seq}: events were deleted")
        row = self._q("SELECT hash FROM events WHERE seq = ?", [seq])
        if not row or bytes(row[0][0]) != h:
            return (seq, "the event does not match the anchor kept outside the data folder")
        return None

    def _check_grants(self) -> tuple | None:
        """Every grant event's content hashes to its stored hash, which its own MAC vouches for."""
        cols = ", ".join((*E.COLUMNS, "mac"))
        for row in self._q(f"SELECT {cols} FROM events WHERE action = 'grant' ORDER BY seq"):
            r = dict(zip((*E.COLUMNS, "mac"), row))
            bad, why, _, _ = E.verify_rows([r], bytes(r["prev_hash"]), r["seq"])
            if bad is not None:
                return (bad, f"grant event: {why}")
            if not self.key.check(r["seq"], bytes(r["hash"]), r["mac"]):
                return (r["seq"], "a grant event the ledger key does not vouch for (forged)")
        return None

    def _check_tables(self) -> tuple | None:
        """Tables the events imply: a key for every memory written and not erased, an
        idempotency row for every key an event carries."""
        cur = self.con.cursor()
        n, example = cur.execute(
            """SELECT count(*), min(e.seq) FROM events e
               WHERE e.action IN ('write', 'write_working') AND e.encrypted
                 AND NOT EXISTS (SELECT 1 FROM keys k WHERE k.memory_id = e.memory_id)
                 AND NOT EXISTS (SELECT 1 FROM events f WHERE f.memory_id = e.memory_id AND f.action = 'forget')"""
        ).fetchone()
        if n:
            return (None, f"{n} memories written and never erased have no data key (first at seq {example}): "
                          "keys were deleted", "keys")
        n, example = cur.execute(
            """SELECT count(*), min(e.seq) FROM (SELECT idem_key, min(seq) AS seq FROM events
                 WHERE idem_key IS NOT NULL GROUP BY idem_key) e
               WHERE NOT EXISTS (SELECT 1 FROM idempotency i WHERE i.idem_key = e.idem_key)"""
        ).fetchone()
        if n:
            return (None, f"{n} idempotency keys carried by events have no row (first at seq {example}): "
                          "rows were deleted", "idempotency")
        return None

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


def verify_folder(data_dir: str, key_dir: str = "") -> dict:
    """Verify a data folder's ledger without a runtime (the runtime refuses to open a ledger
    that fails its checks; this says where). The folder must not be open by a runtime."""
    path = os.path.join(data_dir, "ledger.duckdb")
    if not os.path.exists(path):
        raise StoreError(f"no ledger in {data_dir}")
    try:
        led = Ledger(path, resolve_key_dir(key_dir), read_only=True)
    except duckdb.Error as exc:
        raise StoreError(f"cannot open {path} read-only ({(str(exc).splitlines() or ['?'])[0][:120]}); "
                         "if a runtime has it open, use runtime.audit.verify()") from None
    try:
        return led.verify().to_dict()
    finally:
        led.con.close()
