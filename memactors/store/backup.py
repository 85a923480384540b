"""Backups of a data folder and their restore, at the storage level (DESIGN section 8; the
runtime's side, the hold on the owners' flushes and the schedule, is ``memactors.runtime.backup``
and ``memactors.engine.backup``).

A backup folder:

    DEST/
      ledger.duckdb       the ledger as one snapshot saw it, written row by row into a new file
                          (no freed blocks: a data key destroyed before the backup is not in it)
      l2/memories.lance   L2 at the version that snapshot's applied events describe, live rows
                          only, less those already erased (their bytes are not in it either)
      key/<id>.key .head  the folder's key and the anchor of the snapshot's last event
      backup.json         the manifest, written last: a folder without one is not a backup

The backup holds the folder's key (a restore on a machine that lost the key folder needs it):
keep backups where only those who may read the data can, as the key folder itself.
"""

from __future__ import annotations

import os
import re
import shutil
import time
import uuid

import orjson

from ..core import events as E
from ..core.errors import LedgerTampered, StoreError
from .ledger_key import LedgerKey, read_erased

_ID = re.compile(r"[0-9A-Za-z_-]{1,64}")  # a folder id (it names files in key folders)
_HASH = re.compile(r"[0-9a-f]{64}")
MANIFEST = "backup.json"
FORMAT = 1
LEDGER_FILE = "ledger.duckdb"
L2_DIR = "l2"
TABLE = "memories.lance"
KEY_DIR = "key"


class LedgerSnapshot:
    """One consistent read of the whole ledger, written out as a new ledger file. ``begin`` fixes
    the moment (cheap: run it while the owners' flushes are held); ``write`` copies every table
    as of then on a cursor of its own, while commits go on."""

    def __init__(self, ledger, dest_file: str) -> None:
        from .ledger import _DDL  # the one schema: the copy is a ledger like any other

        self.ledger = ledger
        self.cur = ledger.con.cursor()
        self.alias = f"backup_{uuid.uuid4().hex[:12]}"
        self.main = self.cur.execute("SELECT current_database()").fetchone()[0]
        self.cur.execute(f"ATTACH ? AS {self.alias}", [dest_file])
        self.cur.execute(f"USE {self.alias}")
        for ddl in _DDL:
            self.cur.execute(ddl)
        self.cur.execute(f'USE "{self.main}"')
        self.seq, self.hash, self.ts = 0, E.GENESIS, 0

    def begin(self) -> int:
        self.cur.execute("BEGIN TRANSACTION")
        row = self.cur.execute("SELECT seq, hash, ts FROM events ORDER BY seq DESC LIMIT 1").fetchone()
        if row is not None:  # the first read fixes the snapshot every later read of this cursor sees
            self.seq, self.hash, self.ts = int(row[0]), bytes(row[1]), int(row[2])
        return self.seq

    def erased(self) -> set[str]:
        """Memories erased as of the snapshot (L2 may not have applied every erasure yet)."""
        return {r[0] for r in self.cur.execute("SELECT DISTINCT memory_id FROM events WHERE action = 'forget'")
                .fetchall()}

    def write(self) -> dict:
        tables = [r[0] for r in self.cur.execute(
            "SELECT table_name FROM duckdb_tables() WHERE database_name = ? ORDER BY 1", [self.main]).fetchall()]
        for t in tables:
            self.cur.execute(f'INSERT INTO {self.alias}."{t}" BY NAME SELECT * FROM "{self.main}"."{t}"')
        events = self.cur.execute(f"SELECT count(*) FROM {self.alias}.events").fetchone()[0]
        self.cur.execute("COMMIT")
        self.close()
        return {"events": int(events), "tables": tables}

    def close(self) -> None:
        for sql in ("ROLLBACK", f"DETACH {self.alias}"):
            try:
                self.cur.execute(sql)
            except Exception:  # noqa: BLE001 - nothing open to roll back, or detached already
                pass
        self.cur.close()


def export_l2(l2_dir: str, version: int, dest_dir: str, exclude: set[str]) -> int:
    """L2 as it stood at Lance ``version``, live rows only, less ``exclude`` (erased since),
    written as a new dataset under ``dest_dir``: no deleted row's bytes, no older version. The
    table keeps its schema and metadata (embedder, dimension, record schema). Returns rows."""
    import lance
    import pyarrow as pa
    import pyarrow.compute as pc

    src = lance.dataset(os.path.join(l2_dir, TABLE), version=version)
    drop = pa.array(sorted(exclude), pa.string())
    rows = 0

    def batches():
        nonlocal rows
        for b in src.to_batches(batch_size=8192):
            if len(drop):
                b = b.filter(pc.invert(pc.is_in(b.column("memory_id"), value_set=drop)))
            if b.num_rows:
                rows += b.num_rows
                yield b

    os.makedirs(dest_dir, exist_ok=True)
    reader = pa.RecordBatchReader.from_batches(src.schema, batches())
    lance.write_dataset(reader, os.path.join(dest_dir, TABLE), schema=src.schema)
    return rows


def l2_version(l2_dir: str) -> int:
    import lance

    return int(lance.dataset(os.path.join(l2_dir, TABLE)).version)


def write_manifest(dest: str, info: dict) -> dict:
    """The manifest, last: sizes of every file, and what the backup holds."""
    files = {}
    for root, _, names in os.walk(dest):
        for n in names:
            p = os.path.join(root, n)
            files[os.path.relpath(p, dest)] = os.path.getsize(p)
    out = dict(info, format=FORMAT, created_at=int(time.time() * 1_000_000), files=len(files),
               bytes=sum(files.values()))
    tmp = os.path.join(dest, MANIFEST + ".tmp")
    with open(tmp, "wb") as f:
        f.write(orjson.dumps(out, option=orjson.OPT_INDENT_2))
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, os.path.join(dest, MANIFEST))
    return out


def read_manifest(src: str) -> dict:
    try:
        with open(os.path.join(src, MANIFEST), "rb") as f:
            m = orjson.loads(f.read())
    except FileNotFoundError:
        raise StoreError("that folder is not a complete backup (no backup.json: it was never finished)") from None
    except (OSError, orjson.JSONDecodeError) as exc:
        raise StoreError(f"the backup's manifest cannot be read ({type(exc).__name__})") from None
    if not isinstance(m, dict) or m.get("format") != FORMAT or not isinstance(m.get("folder_id"), str):
        raise StoreError("the backup's manifest is not one this version of memactors writes")
    if (not _ID.fullmatch(m["folder_id"]) or not isinstance(m.get("hash"), str) or not _HASH.fullmatch(m["hash"])
            or type(m.get("seq")) is not int):  # what restore reads from it, checked before it is used
        raise LedgerTampered("the backup's manifest was changed after it was written (its folder id, seq or hash "
                             "is malformed)")
    return m


# --- restore ---------------------------------------------------------------------------------------


def verify_backup(src: str, manifest: dict) -> dict:
    """The backup's ledger walked whole under the key and anchor it carries: chain, MACs,
    anchor, keys and idempotency tables. Raises LedgerTampered naming what failed."""
    from .ledger import Ledger

    import duckdb

    try:
        led = Ledger(os.path.join(src, LEDGER_FILE), os.path.join(src, KEY_DIR), read_only=True)
    except duckdb.Error:  # missing, not a DuckDB file, or a table gone: not a backup to restore
        raise StoreError("the backup's ledger file is missing or cannot be read") from None
    try:
        v = led.verify().to_dict()
    finally:
        led.con.close()
    if not v["ok"] or v["events"] != manifest.get("events") or led.last_seq != manifest.get("seq"):
        where = f"seq {v['first_bad_seq']}" if v.get("first_bad_seq") else f"table {v.get('table') or 'events'}"
        why = v["reason"] if not v["ok"] else "it holds other events than its manifest says"
        raise LedgerTampered(f"the backup does not verify ({where}: {why}); it was changed after it was written")
    return v


def restore_files(src: str, dest: str, key_dir: str) -> dict:
    """Bring a verified backup back as a new data folder ``dest``: the ledger under a new folder
    id with the same key (so its MACs, digests and pseudonyms hold), anchored in ``key_dir``;
    every memory its line erased after the backup (the erasure journal in ``key_dir``) erased
    again, its key destroyed and its row left out of L2, and the ledger file rewritten without
    the freed blocks. L2 is written anew with its indexes. Returns what was done."""
    import duckdb

    from . import lancedb_import  # noqa: F401 - before lancedb
    import lancedb

    from .lance_store import META_DIM, META_EMBEDDER, L2Store
    from .ledger import Ledger

    m = read_manifest(src)
    verify_backup(src, m)
    t0 = time.perf_counter()
    os.makedirs(dest, exist_ok=True)
    path = os.path.join(dest, LEDGER_FILE)
    shutil.copyfile(os.path.join(src, LEDGER_FILE), path)
    new_id = uuid.uuid4().hex
    con = duckdb.connect(path)
    try:
        con.execute("UPDATE meta SET value = ? WHERE key = 'folder_id'", [new_id.encode()]).fetchall()
        row = con.execute("SELECT value FROM meta WHERE key = 'lineage'").fetchone()
        lineage = bytes(row[0]).decode() if row else m["folder_id"]  # as the ledger reads it (verified above)
        held = dict(con.execute("""SELECT e.memory_id, any_value(e.scope) FROM events e
                                   WHERE e.action IN ('write', 'write_working')
                                     AND EXISTS (SELECT 1 FROM keys k WHERE k.memory_id = e.memory_id)
                                   GROUP BY e.memory_id""").fetchall())
    finally:
        con.close()
    old = LedgerKey.open(os.path.join(src, KEY_DIR), m["folder_id"], create=False)
    old.install(key_dir, new_id).write_head(m["seq"], bytes.fromhex(m["hash"]))
    journal = read_erased(key_dir, lineage)
    again = sorted((mid, held[mid]) for mid in (journal or set()) & set(held))
    led = Ledger(path, key_dir)
    try:
        led.erase_again(again, "erased after this backup was taken", "memactors-restore", f"restore-erasures-{new_id}")
        if again:
            led.compact_file()  # the destroyed keys' bytes must not stay in freed blocks
        seq, events = led.last_seq, led._q("SELECT count(*) FROM events")[0][0]  # noqa: SLF001
    finally:
        led.close()
    try:
        table = lancedb.connect(os.path.join(src, L2_DIR)).open_table(TABLE.removesuffix(".lance"))
    except (ValueError, OSError, RuntimeError):
        raise StoreError("the backup's L2 table is missing or cannot be read") from None
    meta = table.schema.metadata or {}
    data = table.to_arrow()
    if again:
        import pyarrow as pa
        import pyarrow.compute as pc

        data = data.filter(pc.invert(pc.is_in(data.column("memory_id"), value_set=pa.array([m for m, _ in again]))))
    store = L2Store(os.path.join(dest, L2_DIR), meta[META_EMBEDDER].decode(), int(meta[META_DIM]), replace_with=data)
    store.purge_old_versions()
    return {"path": dest, "folder_id": new_id, "lineage": lineage, "backup_seq": m["seq"], "seq": int(seq),
            "events": int(events), "rows": data.num_rows, "erased_again": len(again),
            "erasure_journal": journal is not None, "seconds": round(time.perf_counter() - t0, 3)}
