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
import re
import uuid
from contextlib import contextmanager
from dataclasses import dataclass

import duckdb
import orjson
import pyarrow as pa

from ..core import events as E
from ..core.erasure import CLAIM, COPY, edges_of
from ..core.errors import LedgerTampered, StoreError
from ..core.idempotency import CONFLICT, IdempotencyCache
from ..core.project import Change
from . import ledger_races
from .entries import decode, prov_record, seal_all
from .ledger_actions import ACTIONS_DDL, LedgerActions
from .ledger_audit import LedgerAudit
from .ledger_expiry import EXPIRY_DDL, LedgerExpiry
from .ledger_checks import LedgerChecks, VerifyResult, verify_folder  # noqa: F401 - re-exported
from .ledger_evidence import LedgerEvidence
from .ledger_history import LedgerHistory
from .ledger_lineage import LedgerLineage
from .ledger_key import DIGEST, FINGERPRINT, PSEUDONYM, LedgerKey, record_erased
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
    # Data keys of erased memories whose delete waits for the end of the sweep that erased them
    # (``Ledger.finish_erasures``): every reader takes keys through ``LIVE_KEYS``, so a key named
    # here opens nothing from the tombstone's commit on, as if deleted then.
    "CREATE TABLE IF NOT EXISTS erasing (memory_id VARCHAR)",
    "CREATE TABLE IF NOT EXISTS l2_applied (seq BIGINT)",
    "CREATE TABLE IF NOT EXISTS idempotency (idem_key VARCHAR, ts BIGINT, result BLOB, fingerprint BLOB)",
    "ALTER TABLE idempotency ADD COLUMN IF NOT EXISTS fingerprint BLOB",
    """CREATE TABLE IF NOT EXISTS recalls (
        recall_id VARCHAR, ts BIGINT, actor VARCHAR, task_id VARCHAR, purpose VARCHAR,
        allowed_scopes VARCHAR[], visible_scopes VARCHAR[], query_digest VARCHAR, top_k INTEGER,
        hits VARCHAR, filters VARCHAR, removed VARCHAR)""",
    "CREATE TABLE IF NOT EXISTS citations (recall_id VARCHAR, memory_id VARCHAR, ts BIGINT)",
    # Access per memory, derived from recalls and citations (rebuildable from them): what GC
    # rules and demotion read. ``ver`` counts changes; ``synced`` is the version L2 has.
    """CREATE TABLE IF NOT EXISTS access (memory_id VARCHAR PRIMARY KEY, scope VARCHAR, retrieved_count INTEGER,
        cited_count INTEGER, last_accessed_at BIGINT, uncited_streak INTEGER, ver BIGINT, synced BIGINT)""",
    # Provenance by id (core.erasure: copy, context, claim), written with the record's event and
    # derived from the sealed records (rebuildable from them): what an erasure follows.
    "CREATE TABLE IF NOT EXISTS provenance (memory_id VARCHAR, source VARCHAR, kind VARCHAR)",
    # Each memory's sensitivity, from its record (or its tombstone), indexed when audit.sql is
    # next asked (``index_levels``: the write path pays nothing), up to the seq meta 'levels' holds:
    # what audit.sql shows a reader checks its clearance against.
    "CREATE TABLE IF NOT EXISTS levels (memory_id VARCHAR, sensitivity VARCHAR)",
    ACTIONS_DDL,  # what each completed tool call depended on (store.ledger_actions)
    EXPIRY_DDL,  # the set-aside memories' hard expiry, indexed when a sweep plans (store.ledger_expiry)
]

_EVENT_SCHEMA = pa.schema(
    [
        ("seq", pa.int64()), ("ts", pa.int64()), ("scope", pa.string()), ("action", pa.string()),
        ("memory_id", pa.string()), ("version", pa.int32()), ("actor", pa.string()), ("reason", pa.string()),
        ("encrypted", pa.bool_()), ("snapshot", pa.binary()), ("idem_key", pa.string()), ("format", pa.int32()),
        ("prev_hash", pa.binary()), ("hash", pa.binary()), ("mac", pa.binary()),
    ]
)
_KEY_SCHEMA = pa.schema([("memory_id", pa.string()), ("key", pa.binary())])
_IDEM_SCHEMA = pa.schema([("idem_key", pa.string()), ("ts", pa.int64()), ("result", pa.binary()),
                          ("fingerprint", pa.binary())])
_APPLIED_SCHEMA = pa.schema([("seq", pa.int64())])
_ERASING_SCHEMA = pa.schema([("memory_id", pa.string())])
SMALL_INSERT = 2  # rows up to which ``Ledger._insert`` sends them as parameters
# Meta: the folder's id (names its key outside the folder) and the ledger format. Format 2 is
# the keyed ledger; format 1 (no key, no MACs) is upgraded in place when first opened.
LEDGER_FORMAT = 2
_FOLDER_ID = re.compile(rb"[0-9A-Za-z_-]{1,64}")  # what a folder id or lineage may be (uuid4().hex)


# The data keys every reader may use: those of memories not erased. An erasure deletes its key
# in the tombstone's transaction, or (a sweep's: ``Entry.keys_later``) names it in ``erasing`` in
# that transaction and deletes it at the sweep's end (``Ledger.finish_erasures``).
LIVE_KEYS = "(SELECT * FROM keys ANTI JOIN erasing USING (memory_id))"

# The idempotency keys of the writes that made some memories (``write_keys_of``, ``_unpin``).
# (a semi-join, not list_contains: a sweep erases thousands of memories a commit)
_WRITE_KEYS = ("SELECT idem_key, ts FROM events WHERE action IN ('write', 'write_working') "
               "AND idem_key IS NOT NULL AND memory_id IN (SELECT unnest(?::VARCHAR[]))")


def another_programs(tables: set[str]) -> bool:
    """Whether a DuckDB file of these tables is another program's database: tables, none of them
    the ledger's ``events`` (an empty file is a new ledger)."""
    return bool(tables) and "events" not in tables


class Ledger(LedgerChecks, LedgerHistory, LedgerLineage, LedgerActions, LedgerAudit, LedgerExpiry, LedgerEvidence):
    _erasing = 0  # rows in ``erasing`` (their keys' delete waits for ``finish_erasures``)
    live_keys = LIVE_KEYS  # what readers take data keys from (``keys`` alone: a read-only older folder)

    def __init__(self, path: str, key_dir: str, *, read_only: bool = False, adopt: bool = False,
                 wal_max_mb: int = 16) -> None:
        """Open (creating or upgrading) the ledger file; ``read_only`` opens an existing one
        for ``verify`` alone (no checks at open, nothing written); ``adopt`` vouches for the
        events found with this folder's key (a fork's, just copied in by ``export_to``).
        ``wal_max_mb``: DuckDB checkpoints inside a commit once its log reaches this size (the
        writer checkpoints earlier, when idle: ``checkpoint``)."""
        self.path = path
        self.wal_max_mb = int(wal_max_mb)
        self._connect(read_only)
        if read_only:
            try:
                tables = {r[0] for r in self._x("SELECT table_name FROM information_schema.tables")}
                if "erasing" not in tables:  # a folder from before it (nothing can be pending there)
                    self.live_keys = "keys"
                self._open_read_only(key_dir)
            except BaseException:
                self.con.close()
                raise
            return
        self._refuse_foreign()
        for ddl in _DDL:
            self._x(ddl)
        # A sweep's key deletes left undone (its process died before the sweep's end): done now.
        self._erasing = int(self._x("SELECT count(*) FROM erasing")[0][0])
        self.finish_erasures()
        row = self._x("SELECT max(seq) FROM events")[0]
        self.last_seq = int(row[0] or 0)
        if self.last_seq:
            h = self._x("SELECT hash FROM events WHERE seq = ?", [self.last_seq])[0][0]
            self.last_hash = E.blob(h)
        else:
            self.last_hash = E.GENESIS
        try:
            self.key = self._open_key(key_dir)
            self.lineage = self._lineage()
            if adopt:
                self._adopt()
            elif self._is_copy():
                self._become_copy()
            self.open_check()
        except BaseException:
            self.con.close()  # a refused ledger stays closed: `audit verify` may open it next
            raise
        self.digest_key = self.key.subkey(DIGEST)
        self.fingerprint_key = self.key.subkey(FINGERPRINT)
        self.pseudonym_key = self.key.subkey(PSEUDONYM)
        if self._meta("provenance") is None:
            self._index_provenance()

    def _connect(self, read_only: bool = False) -> None:
        self.con = duckdb.connect(self.path, read_only=read_only)
        if not read_only:
            self._x(f"SET checkpoint_threshold = '{self.wal_max_mb}MiB'")
            # Most of the ledger is ciphertext and hashes, which nothing compresses: DuckDB's
            # dict_fsst spent most of each checkpoint analysing them (4.1 s against 0.9 s to
            # fold 100k events into a 1.1 GB ledger; 17 s against 3.7 s to write 1.09M events,
            # the file 9% larger without it).
            self._x("SET disabled_compression_methods = 'dict_fsst'")

    def _refuse_foreign(self) -> None:
        """A DuckDB file of other tables and none of ours is another program's database that
        happens to be named ledger.duckdb: refused before a table is added to it."""
        if another_programs({r[0] for r in self._x("SELECT table_name FROM information_schema.tables")}):
            self.con.close()
            raise StoreError(f"{self.path} is a DuckDB database of another program (it holds none of the ledger's "
                             "tables): point --data at a memactors data folder")

    def _open_read_only(self, key_dir: str) -> None:
        row = self._x("SELECT max(seq) FROM events")[0]
        self.last_seq = int(row[0] or 0)
        folder_id = self._folder_id("folder_id")
        if folder_id is None or self._meta("ledger_format") is None:
            raise LedgerTampered(f"the ledger at {self.path} has no folder id or format: not a keyed ledger")
        self.key = LedgerKey.open(key_dir, folder_id, create=False)
        self.lineage = self._folder_id("lineage") or folder_id

    def _folder_id(self, name: str) -> str | None:
        """The folder id (or lineage) kept in ``meta``: it names files in the key folder, so
        one edited into something else (a path, bytes that are not text) is refused."""
        got = self._meta(name)
        if got is None:
            return None
        if not _FOLDER_ID.fullmatch(got):
            raise LedgerTampered(f"the ledger at {self.path} holds a malformed {name.replace('_', ' ')}: it was "
                                 "changed outside memactors")
        return got.decode()

    def _lineage(self) -> str:
        """The folder's line (its first folder id; a restore keeps it): names its erasure
        journal outside the folder (``ledger_key.record_erased``)."""
        got = self._folder_id("lineage")
        if got is None:
            self._x("INSERT INTO meta VALUES ('lineage', ?)", [self.key.folder_id.encode()])
            return self.key.folder_id
        return got

    def _open_key(self, key_dir: str) -> LedgerKey:
        folder_id = self._folder_id("folder_id")
        if folder_id is None:
            folder_id = uuid.uuid4().hex
            self._x("INSERT INTO meta VALUES ('folder_id', ?)", [folder_id.encode()])
        fmt = self._meta("ledger_format")
        if fmt is None and self._x("SELECT count(*) FROM events WHERE mac IS NOT NULL")[0][0]:
            # MACs are only ever written with the format mark (below, in one transaction): a
            # keyed ledger whose mark was deleted must not be trusted as found and re-keyed.
            raise LedgerTampered(f"the ledger at {self.path} carries MACs but no ledger format: its format mark "
                                 "was deleted outside memactors (restore the data folder from a backup)")
        key = LedgerKey.open(key_dir, folder_id, create=fmt is None)
        if fmt is None:
            # A new ledger, or one from before keys: trust it as found (first use), vouch for
            # its chain through the newest event, and anchor that.
            self._x("BEGIN TRANSACTION")
            try:
                if self.last_seq:
                    marks = {seq: key.mac(seq, bytes(h)) for seq, h in
                             self._x("SELECT seq, hash FROM events WHERE action = 'grant' OR seq = ?",
                                     [self.last_seq])}
                    for seq, mac in marks.items():
                        self._x("UPDATE events SET mac = ? WHERE seq = ?", [mac, seq])
                    key.write_head(self.last_seq, self.last_hash)
                self._x("INSERT INTO meta VALUES ('ledger_format', ?)", [str(LEDGER_FORMAT).encode()])
                self._x("COMMIT")
            except BaseException:
                self._x("ROLLBACK")
                raise
        return key

    def _index_provenance(self) -> None:
        """Fill the provenance index from the records themselves, and the status patches that
        folded a working item into a vault memory (a ledger from before it, once)."""
        rows = []
        for _, ch in self._changes("e.action IN ('write', 'write_working', 'status')"):
            linked = prov_record(ch) if ch is not None else None
            if linked is not None:
                rows += edges_of(linked)
        with self._transaction():
            self._x("DELETE FROM provenance")
            if rows:
                self._insert_provenance(rows)
            self._x("INSERT INTO meta VALUES ('provenance', ?)", [b"1"])

    def _insert_provenance(self, rows: list[tuple[str, str, str]]) -> None:
        self._insert("provenance", {"memory_id": [r[0] for r in rows], "source": [r[1] for r in rows],
                                    "kind": [r[2] for r in rows]})

    def _insert(self, table: str, columns: dict[str, list], schema: pa.Schema | None = None) -> None:
        """Append rows, given as ``columns`` (every column of ``table``, in its order, of one
        length). Up to ``SMALL_INSERT`` rows go as one parameterised VALUES statement, more as
        an Arrow table DuckDB reads in place: a statement's fixed cost is most of a single
        write's commit, and the parameters' is about half the Arrow scan's (RESULTS)."""
        n = len(next(iter(columns.values())))
        if n <= SMALL_INSERT:
            row = "(" + ", ".join("?" * len(columns)) + ")"
            params = [v for i in range(n) for v in (c[i] for c in columns.values())]
            self.con.execute(f"INSERT INTO {table} VALUES {', '.join([row] * n)}", params).fetchall()
            return
        rows = pa.table(columns, schema=schema)  # noqa: F841 - read by DuckDB's replacement scan, in this frame
        self.con.execute(f"INSERT INTO {table} SELECT * FROM rows").fetchall()

    def _meta(self, name: str) -> bytes | None:
        rows = self._x("SELECT value FROM meta WHERE key = ?", [name])
        return bytes(rows[0][0]) if rows else None

    def _set_meta(self, name: str, value: bytes) -> None:
        """Replace one meta value (inside the caller's transaction)."""
        self._x("DELETE FROM meta WHERE key = ?", [name])
        self._x("INSERT INTO meta VALUES (?, ?)", [name, value])

    def _q(self, sql: str, params: list | None = None) -> list[tuple]:
        """A read on a cursor of its own: reads run beside the commit thread, and a DuckDB
        connection refuses a second caller instead of waiting."""
        cur = self.con.cursor()
        try:
            return cur.execute(sql, params or []).fetchall()
        finally:
            cur.close()

    def read_arrow(self, sql: str, params: list | None = None) -> pa.Table:
        """A read as an Arrow table (``.sql()``: straight from the relation, where ``execute()``
        copies the rows), on a cursor of its own closed at once (as ``_q``'s: a cursor left to the
        garbage collector keeps its connection, and what it holds, open until then)."""
        cur = self.con.cursor()
        try:
            return cur.sql(sql, params=params).to_arrow_table()
        finally:
            cur.close()

    @contextmanager
    def _transaction(self):
        """Statements run in one transaction: all of them committed, or none."""
        self._x("BEGIN TRANSACTION")
        try:
            yield
            self._x("COMMIT")
        except BaseException:
            try:
                self._x("ROLLBACK")
            except duckdb.Error:  # DuckDB already aborted it (disk full): report the first error
                pass
            raise

    def _x(self, sql: str, params: list | None = None) -> list[tuple]:
        # Run a statement to completion: DuckDB 2.0 refuses new work on a connection while a
        # result is still open.
        return self.con.execute(sql, params or []).fetchall()

    # --- writing -------------------------------------------------------------------------

    def commit(self, batch: dict, known: IdempotencyCache) -> list[tuple[str, object]]:
        """Commit a batch of entries (``memactors.store.entries.encode``) in one transaction.
        An entry whose idempotency key ``known`` holds (or that repeats within the batch) is not
        appended: it gets ("dup", stored result), or ("conflict", None) when it carries another
        request, or ("stale", None) when it raced an erasure or a copy of the same memory
        (``ledger_races``). Others get ("ok", their seqs). Record payloads are sealed here, each
        under a fresh data key; changes L2 need not apply are marked applied in the same
        transaction."""
        n_items = len(batch["idem_key"])
        if batch["ts"]:
            known.advance(max(batch["ts"]))  # the window as of these events
        out: list[tuple[str, object]] = []
        take = []  # (item index, first event index, event count) of the entries appended
        pos, seen = 0, {}
        for i in range(n_items):
            k, fp, n = batch["idem_key"][i], batch["fingerprint"][i], batch["n_events"][i]
            prior = known.lookup(k, fp)
            if prior is None and k in seen:
                prior = CONFLICT if not _same(seen[k], fp) else batch["result"][i]
            if prior is not None:
                out.append(("conflict", None) if prior == CONFLICT else ("dup", prior))
            else:
                seen[k] = fp
                take.append((i, pos, n))
                out.append(None)
            pos += n
        for i in ledger_races.stale(batch, take, self._x, self.live_keys) if take else ():
            out[i] = ("stale", None)  # decided against a copy or an erasure committed since
        take = [t for t in take if out[t[0]] is None]
        if not take:
            return out
        names = ("ts", "scope", "action", "memory_id", "version", "actor", "reason", "payload", "l2")
        if len(take) == n_items:  # the usual case, no retry among them: every event, as sent
            ev_idx = range(pos)
            col = {name: batch[name] for name in names}
        else:
            ev_idx = [j for _, first, n in take for j in range(first, first + n)]
            col = {name: [batch[name][j] for j in ev_idx] for name in names}
        idem_of = [batch["idem_key"][i] for i, _, n in take for _ in range(n)]
        snapshots, encrypted, key_ids, keys = seal_all(col["action"], col["memory_id"], col["payload"])
        seq0, prev = self.last_seq, self.last_hash
        n_ev = len(ev_idx)
        hashes = E.chain(prev, seq0, col["ts"], col["scope"], col["action"], col["actor"], col["memory_id"],
                         col["version"], col["reason"], encrypted, snapshots, idem_of)
        seqs = list(range(seq0 + 1, seq0 + 1 + n_ev))
        prevs = [prev, *hashes[:-1]] if n_ev else []
        macs = [self.key.mac(s, h) if a == E.GRANT else None for s, h, a in zip(seqs, hashes, col["action"])]
        prev = hashes[-1] if n_ev else prev
        seq = seqs[-1] if seqs else seq0
        if seqs:
            # One MAC per commit, on its last event, vouches for the chain up to it (grant
            # events carry their own as well: the open check verifies every grant cheaply).
            macs[-1] = self.key.mac(seq, prev)
        ev = {"seq": seqs, "ts": col["ts"], "scope": col["scope"], "action": col["action"],
              "memory_id": col["memory_id"], "version": col["version"], "actor": col["actor"],
              "reason": col["reason"], "encrypted": encrypted, "snapshot": snapshots, "idem_key": idem_of,
              "format": [E.FORMAT_VERSION] * len(seqs), "prev_hash": prevs, "hash": hashes, "mac": macs}
        items = [i for i, _, _ in take]
        idem = {"idem_key": [batch["idem_key"][i] for i in items],
                "ts": [batch["ts"][first] if n else 0 for _, first, n in take],
                "result": [batch["result"][i] for i in items],
                "fingerprint": [batch["fingerprint"][i] for i in items]}
        destroy = [m for i in items for m in batch["destroy"][i]]
        later = batch.get("keys_later") or ()
        erasing = [m for i in items if i < len(later) and later[i] for m in batch["destroy"][i]]
        if destroy:  # journaled first: a backup restored later erases them again, even if this folder is lost
            record_erased(self.key.directory, self.lineage, destroy)
        applied = [s for s, need in zip(seqs, col["l2"]) if not need]
        taken = set(ev_idx) if len(take) != n_items else None
        prov = [p[1:] for p in batch.get("prov", ()) if taken is None or p[0] in taken]
        unpinned: list[tuple[str, int]] = []
        with self._transaction():
            if seqs:
                self._insert("events", ev, _EVENT_SCHEMA)
            if key_ids:
                self._insert("keys", {"memory_id": key_ids, "key": keys}, _KEY_SCHEMA)
            self._insert("idempotency", idem, _IDEM_SCHEMA)  # before an erasure's unpin: it may be this batch's
            if destroy:
                if erasing:  # a sweep's: named now, deleted at the sweep's end (``finish_erasures``)
                    self._insert("erasing", {"memory_id": erasing}, _ERASING_SCHEMA)
                later_ids = set(erasing)
                now = [m for m in destroy if m not in later_ids]
                if now:
                    self._x("DELETE FROM keys WHERE memory_id IN (SELECT unnest(?::VARCHAR[]))", [now])
                unpinned = self._unpin(destroy, known, col, idem_of)
            if applied:
                self._insert_applied(applied)
            if prov:
                self._insert_provenance(prov)
        self._erasing += len(erasing)
        if seqs:
            self.last_seq, self.last_hash = seq, prev
            self.key.write_head(seq, prev)
        # which key's write made which memory: an erasure's unpin needs no read of the events
        known.note_made({m: (key, t) for a, m, key, t in zip(col["action"], col["memory_id"], idem_of, col["ts"])
                         if a in E.RECORD_WRITES})
        k = 0
        for i, first, n in take:
            out[i] = ("ok", seqs[k:k + n])
            known.put(batch["idem_key"][i], batch["fingerprint"][i], batch["result"][i],
                      batch["ts"][first] if n else known.newest)
            k += n
        known.unpin(unpinned)
        return out

    def finish_erasures(self) -> int:
        """Delete the data keys ``erasing`` names (a sweep's erasures, committed with their
        tombstones), in one statement: one delete a sweep rather than one a commit, each a join
        over the whole keys table (~30 ms at 1M keys, 33 of them in a 1M sweep). Returns how
        many were named.

        Why waiting is safe: from the tombstone's commit on, every reader takes keys through
        ``LIVE_KEYS``, which leaves these out (history, ``recall(at=)``, rollback, the audit
        views, a rebuild, a fork's copy, the race check of a copy against an erasure, verify),
        so no payload of an erased memory is decrypted after its tombstone, as when the key was
        deleted there. The tombstone and its ``erasing`` row commit together, the ids are
        journaled before them (``record_erased``), and a ledger opened with rows left here
        (its process died mid-sweep) deletes their keys before anything reads it. The bytes:
        a deleted row stays in DuckDB's freed blocks until the purge rewrites the file
        (``compact_file``, which runs this first), so the file held the key either way until then."""
        if not self._erasing:
            return 0
        with self._transaction():
            n = self._x("SELECT count(*) FROM erasing")[0][0]
            self._x("DELETE FROM keys WHERE memory_id IN (SELECT memory_id FROM erasing)")
            self._x("DELETE FROM erasing")
        self._erasing = 0
        return int(n)

    def write_keys_of(self, memory_ids: list[str]) -> list[tuple[str, int]]:
        """The uses, (idempotency key, time), of the writes that made these memories."""
        return list(dict.fromkeys((r[0], r[1]) for r in self._q(_WRITE_KEYS, [sorted(set(memory_ids))])))

    def _unpin(self, erased: list[str], known: IdempotencyCache, col: dict, idem_of) -> list[tuple[str, int]]:
        """In an erasure's transaction: the requests of the erased memories' writes forgotten
        (``IdempotencyCache.unpin``; their results stay). Returns their uses, (key, time): a
        key used again past the window of the erased write's use is another request, kept. The
        window's uses are those ``known`` noted (this batch's included); a write older than the
        window is no cache's, and its fingerprint goes at the purge with every other one that
        old (``unpin_aged``). Only while keys loaded at start are in the window are the events
        read for them: a sweep erases thousands a commit, and each read scans the events."""
        uses = known.keys_of(erased)
        if uses is None:
            return [(r[0], r[1]) for r in self._x(
                f"UPDATE idempotency SET fingerprint = NULL FROM ({_WRITE_KEYS}) w "
                "WHERE idempotency.idem_key = w.idem_key AND idempotency.ts = w.ts "
                "RETURNING idempotency.idem_key, idempotency.ts", [erased])]
        gone = set(erased)
        uses = sorted({*uses, *((k, t) for a, m, k, t in zip(col["action"], col["memory_id"], idem_of, col["ts"])
                                if m in gone and a in E.RECORD_WRITES)})
        if uses:
            self._x("UPDATE idempotency SET fingerprint = NULL FROM (SELECT unnest(?::VARCHAR[]) AS k, "
                    "unnest(?::BIGINT[]) AS t) u WHERE idempotency.idem_key = u.k AND idempotency.ts = u.t",
                    [[k for k, _ in uses], [t for _, t in uses]])
        return uses

    def unpin_aged(self, before_ts: int) -> None:
        """Every request fingerprint older than ``before_ts`` (the idempotency window's start)
        nulled: no retry is recognised past the window, so none is read again, and an erased
        memory's write leaves no keyed digest of its text (a purge's step)."""
        self._x("UPDATE idempotency SET fingerprint = NULL WHERE fingerprint IS NOT NULL AND ts < ?", [int(before_ts)])

    def wal_bytes(self) -> int:
        try:
            return os.path.getsize(self.path + ".wal")
        except OSError:
            return 0

    def checkpoint(self) -> None:
        """Fold the write-ahead log into the file (what DuckDB would otherwise do inside some
        later commit, holding it up for as long)."""
        self._x("CHECKPOINT")

    def _insert_applied(self, seqs: list[int]) -> None:
        self._insert("l2_applied", {"seq": seqs}, _APPLIED_SCHEMA)

    def mark_all_applied(self, upto: int) -> None:
        """Every event up to ``upto`` is in L2 (after a rebuild)."""
        self._x("INSERT INTO l2_applied SELECT seq FROM events WHERE seq <= ? "
                "AND seq NOT IN (SELECT seq FROM l2_applied)", [int(upto)])

    def applied_count(self) -> int:
        return int(self._q("SELECT count(*) FROM l2_applied")[0][0])

    def count_events(self, upto: int | None = None) -> int:
        return int(self._q("SELECT count(*) FROM events WHERE seq <= ?",
                           [int(self.last_seq if upto is None else upto)])[0][0])

    def log_side(self, recalls: list[dict], applied: list[int]) -> None:
        """Recall evidence (with the access counts it adds) and the events L2 applied, in one
        transaction: a recall's row and its counts are in together or not at all, and one commit
        (one log sync) serves them all."""
        if not recalls and not applied:
            return
        with self._transaction():
            if recalls:
                self._log_recalls(recalls)
            if applied:
                self._insert_applied(applied)

    # --- reading -------------------------------------------------------------------------

    def newest_ts(self) -> int:
        return int(self._q("SELECT coalesce(max(ts), 0) FROM events")[0][0])

    def idempotency_since(self, ts: int) -> tuple[dict[str, tuple[bytes | None, bytes]], dict[str, int]]:
        """Idempotency keys written since ``ts``: (key -> (request fingerprint, stored result),
        key -> time)."""
        rows = self._q("SELECT idem_key, fingerprint, result, ts FROM idempotency WHERE ts >= ?", [ts])
        return ({k: (bytes(f) if f is not None else None, bytes(v)) for k, f, v, _ in rows},
                {k: t for k, _, _, t in rows})

    def idempotency_of(self, keys: list[str]) -> tuple[dict[str, tuple[bytes | None, bytes]], dict[str, int]]:
        """These keys' stored results, as ``idempotency_since`` (absent: never committed)."""
        rows = self._q("SELECT idem_key, fingerprint, result, ts FROM idempotency WHERE list_contains(?, idem_key)",
                       [sorted(set(keys))])
        return ({k: (bytes(f) if f is not None else None, bytes(v)) for k, f, v, _ in rows},
                {k: t for k, _, _, t in rows})

    _DECODE = """SELECT e.seq, e.action, e.scope, e.memory_id, e.reason, e.encrypted, e.snapshot, k.key
                 FROM events e LEFT JOIN {keys} k ON k.memory_id = e.memory_id"""

    def _changes(self, where: str, params: list | None = None) -> list[tuple[int, Change | None]]:
        rows = self._q(f"{self._DECODE.format(keys=self.live_keys)} WHERE {where} ORDER BY e.seq", params)
        return [(r[0], decode(r[1], r[2], r[3], r[4], r[5], bytes(r[6]) if r[6] is not None else b"",
                              bytes(r[7]) if r[7] is not None else None)) for r in rows]

    def unapplied(self, scopes: list[str] | None = None) -> list[tuple[int, Change | None]]:
        """Events L2 has not applied yet, decoded (content None where its key is destroyed), in
        seq order: what a restarted owner replays. ``scopes`` narrows them."""
        where = "e.seq NOT IN (SELECT seq FROM l2_applied)"
        if scopes is None:
            return self._changes(where)
        return self._changes(f"{where} AND list_contains(?, e.scope)", [sorted(scopes)])

    def working_since(self, ts: int) -> list[tuple[int, Change | None]]:
        """Working-pool items written since ``ts``, and erasures and status changes after that
        (an archived item leaves the pool): the L1 pool a restarted owner rebuilds."""
        return self._changes("e.ts >= ? AND e.action IN ('write_working', 'forget', 'status')", [ts])

    def working_in(self, scopes: list[str], before: int | None = None) -> list[tuple[int, Change | None]]:
        """Every working-pool item ever written in ``scopes`` (before ``before`` when given), with
        the erasures and status changes of those items: what a session's resume folds (its first
        items may be days old), and the older items of a session a restarted owner still holds."""
        def items(t: str) -> str:
            return f"{t}.scope IN (SELECT unnest(?)) AND {t}.action = 'write_working'" + \
                (f" AND {t}.ts < ?" if before is not None else "")

        params = [sorted(scopes)] + ([int(before)] if before is not None else [])
        return self._changes(f"({items('e')}) OR (e.action IN ('forget', 'status') AND e.memory_id IN "
                             f"(SELECT w.memory_id FROM events w WHERE {items('w')}))", params + params)

    def authors_of(self, memory_ids: list[str]) -> dict[str, str]:
        """The actor who wrote each of these memories (its write event's actor)."""
        rows = self._q("SELECT memory_id, any_value(actor) FROM events WHERE list_contains(?, memory_id) "
                       "AND action IN ('write', 'write_working') GROUP BY memory_id", [sorted(set(memory_ids))])
        return dict(rows)

    def history(self, memory_ids: list[str]) -> list[tuple[int, Change | None]]:
        """Every event of these memories, decoded, in seq order: enough to project them from the
        ledger alone."""
        return self._changes("list_contains(?, e.memory_id)", [sorted(set(memory_ids))])

    def event_batches(self, upto: int | None = None, chunk: int = 20_000):
        """Every event up to ``upto`` (default: the newest), with its data key, as Arrow batches
        in seq order: what a rebuild folds."""
        last = int(upto if upto is not None else self.last_seq)
        cur = self.con.cursor()
        return cur.sql(f"""SELECT e.seq, e.action, e.scope, e.memory_id, e.reason, e.encrypted, e.snapshot, k.key
                           FROM events e LEFT JOIN {self.live_keys} k ON k.memory_id = e.memory_id
                           WHERE e.seq <= {last} ORDER BY e.seq""").to_arrow_reader(chunk)

    def provenance(self, roots: list[str]) -> tuple[dict[str, dict], list[tuple[str, str, str]]]:
        """What an erasure of ``roots`` must weigh (``core.erasure.closure``): every memory linked
        to them down any provenance edge, or up a copy edge, transitively, as it stands now
        (erased ones excluded), and every edge of those. Records carry no content."""
        found, frontier = set(roots), sorted(set(roots))
        while frontier:
            rows = self._q("SELECT memory_id, source FROM provenance WHERE list_contains(?, source) "
                           "OR (kind = ? AND list_contains(?, memory_id))", [frontier, COPY, frontier])
            frontier = sorted({m for r in rows for m in r} - found)
            found.update(frontier)
        ids = sorted(found)
        edges = [tuple(r) for r in self._q("SELECT DISTINCT memory_id, source, kind FROM provenance "
                                           "WHERE list_contains(?, memory_id)", [ids])]
        keep = ("memory_id", "scope", "version", "status", "pool", "sensitivity", "derived_from", "copy_of", "context_of")
        records = {m: {k: r.get(k) for k in keep} for m, r in self.fold("list_contains(?, e.memory_id)",
                                                                         [ids]).records.items()}
        # Claim sources erased before: a stub each (its scope, tombstoned), so that a memory
        # claimed from them and from one erased now goes with it (``closure``).
        claimed = sorted({src for _, src, kind in edges if kind == CLAIM} - records.keys())
        if claimed:
            for m, scope in self._q("SELECT memory_id, any_value(scope) FROM events WHERE action = 'forget' "
                                    "AND list_contains(?, memory_id) GROUP BY memory_id", [claimed]):
                records[m] = {"memory_id": m, "scope": scope, "status": "tombstoned"}
        return records, edges

    def scopes_of(self, memory_ids: list[str]) -> dict[str, str]:
        """The scope of each memory id the ledger knows (the index for routing by memory id)."""
        rows = self._q("SELECT memory_id, any_value(scope) FROM events WHERE list_contains(?, memory_id) "
                       "GROUP BY memory_id", [sorted(set(memory_ids))])
        return dict(rows)

    def grants(self) -> list[dict]:
        return [g for _, g in self.grants_since(0)]

    def mark_of(self, name: str) -> int | None:
        """The newest value of the watermark ``name`` (``core.ops.MarkOp``), or None."""
        rows = self._q("SELECT snapshot FROM events WHERE action = 'mark' AND reason = ? ORDER BY seq DESC LIMIT 1",
                       [f"watermark {name}"])
        return int(orjson.loads(bytes(rows[0][0]))["value"]) if rows else None

    def grants_since(self, seq: int) -> list[tuple[int, dict]]:
        """Each grant event after ``seq`` as its snapshot, with ``by``: a grant given without a
        reason keeps the snapshot it always had (no ``by``), but its event's actor is the
        granting actor all the same."""
        rows = self._q("SELECT seq, actor, snapshot FROM events WHERE action = 'grant' AND seq > ? ORDER BY seq", [seq])
        out = []
        for s, actor, b in rows:
            g = orjson.loads(bytes(b))
            g.setdefault("by", actor)
            out.append((s, g))
        return out

    def l2_expected(self, digests: bool = False) -> pa.Table:
        """(memory_id, scope) of every row L2 should hold by the events it has applied: vault
        writes, less those erased, less those whose newest applied status is ``evicted``.
        ``digests``: with each row's ``governed_digest`` too, from the applied events folded
        (their records opened with their data keys: a key swapped by hand fails here)."""
        if digests:
            from ..core.records import DIGESTS, governed_digest
            from .entries import fold_rows

            folded = self.take_fold()  # the full walk just opened every record, if nothing changed since
            if folded is None:
                events = self.read_arrow(
                    f"""SELECT e.action, e.scope, e.memory_id, e.reason, e.encrypted, e.snapshot, k.key
                       FROM events e LEFT JOIN {self.live_keys} k ON k.memory_id = e.memory_id
                       WHERE e.memory_id IS NOT NULL AND e.seq IN (SELECT seq FROM l2_applied) ORDER BY e.seq""")
                folded = {r["memory_id"]: governed_digest(r) for r in fold_rows(events)}
            # Which rows: the events say (as without digests). A row's digest: its record folded,
            # None where it no longer opens (erased, its key destroyed, L2's delete yet to come).
            rows = self.l2_expected()
            ids = rows.column("memory_id").to_pylist()
            return pa.table({"memory_id": ids, "scope": rows.column("scope"),
                             "digest": [folded.get(m) for m in ids]}, schema=DIGESTS)
        return self.read_arrow(
            """WITH ap AS (SELECT e.* FROM events e SEMI JOIN l2_applied a ON a.seq = e.seq),
                    w AS (SELECT memory_id, any_value(scope) AS scope FROM ap WHERE action = 'write'
                          GROUP BY memory_id),
                    f AS (SELECT DISTINCT memory_id FROM ap WHERE action = 'forget'),
                    st AS (SELECT memory_id, arg_max(s, seq) AS status FROM (
                             SELECT memory_id, seq, CASE WHEN NOT encrypted AND action IN
                                 ('status', 'refresh', 'merge', 'annotate')
                               THEN json_extract_string(decode(snapshot), '$.status') END AS s FROM ap)
                           WHERE s IS NOT NULL GROUP BY memory_id)
               SELECT w.memory_id, w.scope FROM w LEFT JOIN st USING (memory_id)
               WHERE w.memory_id NOT IN (SELECT memory_id FROM f) AND coalesce(st.status, '') <> 'evicted'""")

    def counters(self) -> dict:
        """Lifecycle counters, from the events and the recall log: what happened, by kind."""
        by_action = dict(self._q("SELECT action, count(*) FROM events GROUP BY action"))
        # a sweep's changes by rule: status changes, and the erasures of memories past their hard TTL
        gc = dict(self._q("SELECT substr(reason, 5), count(*) FROM events WHERE action IN ('status', 'forget') "
                          "AND reason LIKE 'gc: %' GROUP BY 1"))
        swept = self._q("SELECT count(*) FROM events WHERE action = 'forget' AND reason LIKE 'gc: %'")[0][0]
        auto = self._q("SELECT count(*) FROM events WHERE reason LIKE '%contradiction resolved by a confidence gap%'")
        queued = self._q("SELECT count(*) FROM events WHERE action = 'annotate' AND reason LIKE 'contradicted by %'")
        resolved = self._q("SELECT count(*) FROM events WHERE action = 'annotate' "
                           "AND reason LIKE 'contradiction resolved%'")
        recalls, hits = self._q("SELECT count(*), coalesce(sum(json_array_length(hits)), 0) FROM recalls")[0]
        cited = self._q("SELECT count(*) FROM citations")[0][0]
        evicted = {r: n for r, n in gc.items() if r in ("hard_expired", "soft_expired_unused", "superseded_old",
                                                         "staleness_evict")}
        return {
            "writes": by_action.get("write", 0) + by_action.get("write_working", 0),
            "blocks": by_action.get("block", 0),
            "dedups": {"refreshed": by_action.get("refresh", 0), "merged": by_action.get("merge", 0)},
            "contradictions": {"auto": auto[0][0], "queued": queued[0][0], "resolved": resolved[0][0]},
            "evictions": evicted, "stale_marks": {r: n for r, n in gc.items() if r not in evicted},
            "forgets": by_action.get("forget", 0) - swept, "grants": by_action.get("grant", 0),
            "reads": int(recalls), "hits": int(hits), "citations": int(cited), "events": sum(by_action.values()),
        }

    def unpurged(self) -> bool:
        """Whether an erasure was committed after the last purge finished (``mark_purged``): its
        bytes may still be in old Lance versions and freed blocks of this file."""
        done = self._meta("purged_seq")
        return bool(self._q("SELECT 1 FROM events WHERE action = 'forget' AND seq > ? LIMIT 1",
                            [int(done) if done else 0]))

    def mark_purged(self, seq: int) -> None:
        """Every erasure up to ``seq`` is purged (kept in the file: a purge due when a runtime
        closed or died is done when the folder is next opened)."""
        with self._transaction():
            self._set_meta("purged_seq", str(int(seq)).encode())

    def disk_bytes(self) -> int:
        """The ledger's bytes on disk: the file and its write-ahead log."""
        return os.path.getsize(self.path) + self.wal_bytes()

    def compact_file(self) -> dict:
        """Rewrite the ledger file with its live rows only. DuckDB leaves deleted rows' bytes in
        freed blocks: a destroyed data key would stay readable in the file until this runs (the
        last step of an erasure's purge). The rewrite is atomic (a new file, then a rename).
        Both sizes are taken with the write-ahead log folded in: measured before the checkpoint,
        a young file (its rows still in the log) read as if the purge had grown it."""
        self.finish_erasures()  # the keys a sweep named go before the rewrite, not into it
        self._x("CHECKPOINT")
        before = self.disk_bytes()
        tmp = self.path + ".compact"
        for leftover in (tmp, tmp + ".wal"):
            if os.path.exists(leftover):
                os.remove(leftover)
        db = self._x("SELECT current_database()")[0][0]
        self._x("ATTACH ? AS fresh", [tmp])
        try:
            self._x(f'COPY FROM DATABASE "{db}" TO fresh')
        finally:
            self._x("DETACH fresh")
        self.con.close()
        os.replace(tmp, self.path)
        self._connect()
        return {"bytes_before": before, "bytes_after": self.disk_bytes()}

    def close(self) -> None:
        try:
            self.finish_erasures()
            self._x("CHECKPOINT")
        finally:
            self.con.close()


def _same(a: bytes | None, b: bytes | None) -> bool:
    return a is None or b is None or hmac.compare_digest(a, b)
