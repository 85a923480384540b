"""Backups of a data folder and their restore, at the storage level (DESIGN section 8; the
runtime's side, the hold on the owners' flushes and the schedule, is ``memactors.runtime.backup``
and ``memactors.engine.backup``).

A backup folder:

    DEST/
      ledger.duckdb       the ledger as one snapshot saw it, written row by row into a new file
                          (no freed blocks: a data key destroyed before the backup is not in it)
      l2/memories.lance   L2 at the version that snapshot's applied events describe, live rows
                          only, less those already erased (their bytes are not in it either)
      key/<id>.head       the anchor of the snapshot's last event (seq, hash, MAC: no use
                          without the key)
      key/<id>.key.sealed only with a key passphrase: the folder's key sealed under it
                          (``store.key_seal``)
      backup.json         the manifest, written last: a folder without one is not a backup

The backup never holds the folder's key in clear (docs/threat-model.md): whoever holds a
backup could otherwise edit its ledger, recompute the MACs and the anchor, and have the
forgery restored. A restore takes the key from its key folder (under the backup's folder id),
or from the sealed copy when given the passphrase. Backups of format 1 (before this) hold
``key/<id>.key`` in clear; they still restore, and are as secret as the key itself.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
import time
import uuid

import orjson

from ..core import events as E
from ..core.errors import LedgerKeyMissing, LedgerTampered, StoreError
from .ledger_key import LedgerKey, read_erased

_ID = re.compile(r"[0-9A-Za-z_-]{1,64}")  # a folder id (it names files in key folders)
_HASH = re.compile(r"[0-9a-f]{64}")
MANIFEST = "backup.json"
FORMAT = 2  # 2: no key in clear ("key": "none" or "sealed"); 1: the key in clear in key/<id>.key
READS = (1, 2)
LEDGER_FILE = "ledger.duckdb"
L2_DIR = "l2"
TABLE = "memories.lance"
KEY_DIR = "key"
SEALED = ".key.sealed"


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
            if t == "erasing":  # a sweep's erasures whose keys are not deleted yet: their keys stay out
                continue
            src = self.ledger.live_keys if t == "keys" else f'"{self.main}"."{t}"'
            self.cur.execute(f'INSERT INTO {self.alias}."{t}" BY NAME SELECT * FROM {src}')
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


def write_anchor(dest: str, key: LedgerKey, seq: int, event_hash: bytes) -> None:
    """The anchor of the backup's last event in ``DEST/key/<id>.head``, made with the folder's
    key, which is not written there."""
    directory = os.path.join(dest, KEY_DIR)
    os.makedirs(directory, mode=0o700, exist_ok=True)
    key.at(directory).write_head(seq, event_hash)


def write_manifest(dest: str, info: dict) -> dict:
    """The manifest, last: sizes of every file, and what the backup holds."""
    files = {}
    for root, _, names in os.walk(dest):
        for n in names:
            p = os.path.join(root, n)
            if n != MANIFEST:
                files[os.path.relpath(p, dest)] = os.path.getsize(p)
    out = dict(info, format=FORMAT, files=len(files), bytes=sum(files.values()))
    out.setdefault("created_at", int(time.time() * 1_000_000))
    tmp = os.path.join(dest, MANIFEST + ".tmp")
    with open(tmp, "wb") as f:
        f.write(orjson.dumps(out, option=orjson.OPT_INDENT_2))
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, os.path.join(dest, MANIFEST))
    return out


def seal_key(dest: str, manifest: dict, key_dir: str, passphrase: str) -> dict:
    """Seal the folder's key (from ``key_dir``) under ``passphrase`` into the finished backup
    ``dest`` as ``key/<id>.key.sealed``, and rewrite its manifest to say so ("key": "sealed").
    The key is first checked against the backup's anchor: the one found must be the one the
    backup was made with. Returns the new manifest."""
    t0 = time.perf_counter()
    fid, directory = manifest["folder_id"], os.path.join(dest, KEY_DIR)
    key = LedgerKey.open(key_dir, fid, create=False)
    try:
        head = key.at(directory).read_head()
    except StoreError:
        head = None
    if head != (manifest["seq"], bytes.fromhex(manifest["hash"])):
        raise LedgerTampered(f"the ledger key {fid}.key in {key_dir} is not the one this backup's anchor was made "
                             "with: nothing was sealed")
    blob = key.sealed(passphrase)
    fd = os.open(os.path.join(directory, fid + SEALED), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(blob)
        f.flush()
        os.fsync(f.fileno())
    seconds = dict(manifest.get("seconds") or {}, seal=round(time.perf_counter() - t0, 3))
    info = {k: v for k, v in manifest.items() if k not in ("format", "files", "bytes", "path")}
    return write_manifest(dest, dict(info, key="sealed", seconds=seconds))


def read_manifest(src: str) -> dict:
    """The manifest of the backup ``src``, checked before restore uses it. Its ``key`` says
    what the backup holds of the key: "none", "sealed", or "clear" (format 1)."""
    try:
        with open(os.path.join(src, MANIFEST), "rb") as f:
            m = orjson.loads(f.read())
    except FileNotFoundError:
        raise StoreError("that folder is not a complete backup (no backup.json: it was never finished)") from None
    except (OSError, orjson.JSONDecodeError) as exc:
        raise StoreError(f"the backup's manifest cannot be read ({type(exc).__name__})") from None
    if not isinstance(m, dict) or m.get("format") not in READS or not isinstance(m.get("folder_id"), str):
        raise StoreError("the backup's manifest is not one this version of memactors writes")
    if (not _ID.fullmatch(m["folder_id"]) or not isinstance(m.get("hash"), str) or not _HASH.fullmatch(m["hash"])
            or type(m.get("seq")) is not int):  # what restore reads from it, checked before it is used
        raise LedgerTampered("the backup's manifest was changed after it was written (its folder id, seq or hash "
                             "is malformed)")
    if m["format"] == 1:
        m["key"] = "clear"
    elif m.get("key") not in ("none", "sealed"):
        raise LedgerTampered("the backup's manifest was changed after it was written (its key is neither none nor "
                             "sealed)")
    return m


# --- restore ---------------------------------------------------------------------------------------


def backup_key(src: str, manifest: dict, key_dir: str, passphrase: str | None) -> tuple[LedgerKey, str]:
    """The key to restore ``src`` with, and where it came from ("key_dir", "sealed", "clear").

    The key folder's ``<id>.key`` (the backed-up folder's id) comes first. With a passphrase,
    the backup's sealed key is opened too, and must equal the key folder's when both exist.
    A format-1 backup's clear key is used only when neither gives one (and never when a
    passphrase was given: a sealed backup turned into a format-1 one with a key of the
    attacker's is then refused). LedgerKeyMissing when no key is found; LedgerTampered when
    the passphrase does not open the sealed key, or the keys disagree."""
    fid, directory = manifest["folder_id"], os.path.join(src, KEY_DIR)
    try:
        held = LedgerKey.open(key_dir, fid, create=False)
    except LedgerKeyMissing:
        held = None
    sealed = None
    if passphrase is not None:
        try:
            with open(os.path.join(directory, fid + SEALED), "rb") as f:
                blob = f.read()
        except FileNotFoundError:
            blob = None
        except OSError as exc:
            raise StoreError(f"the backup's sealed key cannot be read ({type(exc).__name__})") from None
        if blob is None and held is None:
            raise LedgerKeyMissing(
                f"this backup holds no sealed key (it was made without a key passphrase), and the key folder "
                f"{key_dir} does not hold {fid}.key: restore needs the key folder of the backed-up data folder")
        if blob is not None:
            sealed = LedgerKey.unsealed(blob, fid, passphrase, key_dir)
            if held is not None and not held.same(sealed):
                raise LedgerTampered(f"the key sealed in this backup is not {fid}.key of the key folder {key_dir}: "
                                     "one of them is another folder's, or was replaced")
    if held is not None:
        return held, "key_dir"
    if sealed is not None:
        return sealed, "sealed"
    if manifest["key"] == "clear" and passphrase is None:
        try:
            return LedgerKey.open(directory, fid, create=False), "clear"
        except LedgerKeyMissing:
            pass
    hint = ("it holds its key sealed: give the key passphrase (key_passphrase=, --key-passphrase-env NAME)"
            if manifest["key"] == "sealed" else "or a backup made with a key passphrase")
    raise LedgerKeyMissing(f"restore needs the key folder of the backed-up data folder ({fid}.key is not in "
                           f"{key_dir}: set [runtime].key_dir or $MEMACTORS_KEY_DIR to it), {hint}")


def verify_backup(src: str, manifest: dict, key: LedgerKey, key_dir: str) -> dict:
    """The backup's ledger walked whole under ``key`` and the anchor the backup carries: chain,
    MACs, anchor, keys and idempotency tables. Raises LedgerTampered naming what failed. The
    ledger code reads a key from a folder: the key is staged for the walk in a private folder
    inside ``key_dir`` (where it is installed next anyway), removed after."""
    from .ledger import Ledger

    import duckdb

    fid = manifest["folder_id"]
    os.makedirs(key_dir, mode=0o700, exist_ok=True)
    stage = tempfile.mkdtemp(prefix=".restore-", dir=key_dir)
    try:
        key.install(stage, fid)
        head = os.path.join(src, KEY_DIR, f"{fid}.head")
        if os.path.isfile(head):
            shutil.copyfile(head, os.path.join(stage, f"{fid}.head"))
        try:
            led = Ledger(os.path.join(src, LEDGER_FILE), stage, read_only=True)
        except duckdb.Error:  # missing, not a DuckDB file, or a table gone: not a backup to restore
            raise StoreError("the backup's ledger file is missing or cannot be read") from None
        except LedgerKeyMissing:  # its ledger names another folder id than its manifest
            raise LedgerTampered("the backup's ledger is another data folder's than its manifest names: it was "
                                 "changed after it was written") from None
        try:
            v = led.verify().to_dict()
        finally:
            led.con.close()
    finally:
        shutil.rmtree(stage, ignore_errors=True)
    if not v["ok"] or v["events"] != manifest.get("events") or led.last_seq != manifest.get("seq"):
        where = f"seq {v['first_bad_seq']}" if v.get("first_bad_seq") else f"table {v.get('table') or 'events'}"
        why = v["reason"] if not v["ok"] else "it holds other events than its manifest says"
        raise LedgerTampered(f"the backup does not verify ({where}: {why}); it was changed after it was written")
    return v


def restore_files(src: str, dest: str, key_dir: str, passphrase: str | None = None, *,
                  accept_lost_erasures: bool = False) -> dict:
    """Bring a backup back as a new data folder ``dest``: the key found (``backup_key``:
    ``key_dir``, else the sealed copy opened with ``passphrase``) verifies the backup; the
    ledger goes under a new folder id with the same key (so its MACs, digests and pseudonyms
    hold), anchored in ``key_dir``; every memory its line erased after the backup (the erasure
    journal in ``key_dir``) is erased again, its key destroyed and its row left out of L2, and
    the ledger file rewritten without the freed blocks. L2 is written anew with its indexes.
    A key not found in ``key_dir`` means its journal is likely gone with it: with no journal
    there the restore is refused (StoreError) unless ``accept_lost_erasures``, for what the line
    erased after the backup would come back. Returns what was done (``key_from``: "key_dir",
    "sealed" or "clear")."""
    import duckdb

    from . import lancedb_import  # noqa: F401 - before lancedb
    import lancedb

    from ..core import records as R
    from .lance_store import META_DIM, META_EMBEDDER, SCHEMA_KEY, L2Store
    from .ledger import Ledger

    m = read_manifest(src)
    key, source = backup_key(src, m, key_dir, passphrase)
    verify_backup(src, m, key, key_dir)
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
    if source != "key_dir" and read_erased(key_dir, lineage) is None and not accept_lost_erasures:
        raise StoreError("the key folder holds neither this folder's key nor its erasure journal (lost with the key?): "
                         "memories erased after this backup was taken would come back. Restore with the key folder, "
                         "or accept that (accept_lost_erasures=True, --accept-lost-erasures) and erase them again")
    key.install(key_dir, new_id).write_head(m["seq"], bytes.fromhex(m["hash"]))
    try:
        journal = read_erased(key_dir, lineage)
        again = sorted((mid, held[mid]) for mid in (journal or set()) & set(held))
        led = Ledger(path, key_dir)
        try:
            led.erase_again(again, "erased after this backup was taken", "memactors-restore",
                            f"restore-erasures-{new_id}")
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
        version = int(meta.get(SCHEMA_KEY, b"1"))
        if version < R.SCHEMA_VERSION:  # a backup of an older runtime: its rows in today's schema
            data = R.upgraded(data, int(meta[META_DIM]))
        if again:
            import pyarrow as pa
            import pyarrow.compute as pc

            data = data.filter(pc.invert(pc.is_in(data.column("memory_id"),
                                                  value_set=pa.array([m for m, _ in again]))))
        store = L2Store(os.path.join(dest, L2_DIR), meta[META_EMBEDDER].decode(), int(meta[META_DIM]),
                        replace_with=data)
        store.purge_old_versions()
    except BaseException:
        drop_key(key_dir, new_id)  # the folder goes (the caller's new_folder): its key and anchor too
        raise
    return {"path": dest, "folder_id": new_id, "lineage": lineage, "backup_seq": m["seq"], "seq": int(seq),
            "events": int(events), "rows": data.num_rows, "erased_again": len(again),
            "erasure_journal": journal is not None, "key_from": source, "seconds": round(time.perf_counter() - t0, 3)}


def drop_key(key_dir: str, folder_id: str) -> None:
    """The key, anchor and home a failed restore installed for its new folder id, removed."""
    for suffix in (".key", ".head", ".home"):
        try:
            os.remove(os.path.join(key_dir, folder_id + suffix))
        except FileNotFoundError:
            pass
