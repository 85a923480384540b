"""Backups and restores (``rt.backup(dest)``, ``memactors.runtime.backup.restore(src, to)``,
``[backup]`` for a schedule with retention). What a backup holds and how it stays consistent
while writes go on: ``memactors.engine.backup`` and ``memactors.store.backup``.

Erasure applies to backups: a backup never holds a data key destroyed before it was taken (the
ledger is copied row by row, not as a file), and every erasure is journaled outside the data
folder beside its key (``store.ledger_key.record_erased``), so restoring an older backup erases
again what was forgotten after it. RPO of a schedule: ``[backup].interval_s`` plus the time one
backup takes (a crash loses at most the writes acknowledged since the newest backup began).

A backup never holds the folder's key in clear (docs/threat-model.md): a restore takes it from
its key folder, so keep a copy of the key folder apart from the backups. For a disaster that
takes the key folder too, ``rt.backup(dest, key_passphrase=...)`` seals the key into the
backup under a passphrase (``store.key_seal``) and ``restore(..., key_passphrase=...)`` opens it.
"""

from __future__ import annotations

import logging
import os
import shutil
import threading
import time
from datetime import datetime, timezone

from ..core.errors import InvalidRecord, LedgerTampered, StoreError
from ..store import backup as B
from ..store.key_seal import check_passphrase
from ..store.ledger_key import key_dir as resolve_key_dir
from .paths import new_folder

log = logging.getLogger("memactors.backup")
PARTIAL = ".partial"


class BackupAPI:
    """Mixed into ``Runtime``."""

    def backup(self, dest: str | os.PathLike, *, key_passphrase: str | None = None) -> dict:
        """A consistent copy of this folder (ledger, L2 and the anchor of its last event) into
        the new, empty folder ``dest``, taken while the runtime runs: writes go on being
        acknowledged (the owners' L2 flushes pause for the instant the snapshot takes).

        The folder's key is not in it: a restore takes it from the key folder. With
        ``key_passphrase`` (text, at least 12 characters), the key is also sealed into the
        backup under it (scrypt and AES-GCM), for a restore that has lost the key folder; the
        key is read from this process's key folder (``[runtime].key_dir``). Whoever holds
        such a backup can try passphrases offline: use a long random one, kept apart.

        Returns the manifest: ``seq`` (the newest event it holds), ``rows``, ``events``,
        ``bytes``, ``key`` ("none" or "sealed"), ``seconds``. Restore it with
        ``memactors.runtime.backup.restore`` or ``memactors restore``."""
        self._check_open()
        if key_passphrase is not None:
            check_passphrase(key_passphrase)
        with new_folder(dest, "backup", outside=self.data_dir) as path:  # a failed backup leaves no folder
            self.flush()  # L2 and the recall evidence up to now: the copy needs less replay when restored
            out = self._calls.get(self._ledger.backup_to.remote(path),
                                  timeout=max(3600.0, self.config.runtime.call_timeout_s))
            if key_passphrase is not None:
                out = B.seal_key(path, out, self.config.runtime.key_dir, key_passphrase)
        return dict(out, path=path)


def restore(src: str | os.PathLike, to: str | os.PathLike, *, config=None, verify: bool = True,
            key_passphrase: str | None = None, accept_lost_erasures: bool = False) -> dict:
    """Bring the backup at ``src`` back as the new data folder ``to``.

    The key: the backup holds none in clear, so it is read from the key folder of ``config``
    (``[runtime].key_dir``, else $MEMACTORS_KEY_DIR, else ~/.memactors/keys) under the
    backed-up folder's id; with ``key_passphrase``, from the key the backup holds sealed
    (which must equal the key folder's when both exist). No key: LedgerKeyMissing. A
    passphrase that does not open the sealed key: LedgerTampered. A backup of format 1 (the
    key in clear) restores with the key it holds when the key folder lacks it.

    The backup is verified under that key first (chain, MACs, its anchor, its tables: a
    changed backup is refused with LedgerTampered), then restored under a new folder id with
    the same key, installed in that key folder, and everything its folder erased after the
    backup (that key folder's erasure journal) is erased again; a key opened from the backup
    with no journal in the key folder (the folder lost with the key) is refused with
    StoreError unless ``accept_lost_erasures``: what was erased after the backup would come
    back. ``verify``: open the result on
    the process host and run ``audit.verify()`` (ledger and L2) before returning. A refused or
    failed restore leaves no folder and no key behind. Open the result with
    ``memactors.connect(to)``; ``key_from`` says where the key came from ("key_dir",
    "sealed", "clear")."""
    from .facade import load_config

    if not isinstance(verify, bool) or not isinstance(accept_lost_erasures, bool):
        raise InvalidRecord("verify and accept_lost_erasures are true or false")
    if key_passphrase is not None:
        check_passphrase(key_passphrase)
    cfg = load_config(config)
    if not isinstance(src, (str, os.PathLike)) or not os.path.isdir(os.fspath(src)):
        raise StoreError("restore needs the folder of a backup (rt.backup / memactors backup made it)")
    src = os.path.realpath(os.fspath(src))
    kd = resolve_key_dir(cfg.runtime.key_dir)
    t0 = time.perf_counter()
    made_kd = not os.path.exists(kd)
    try:
        out = _restore(src, to, cfg, kd, verify, key_passphrase, accept_lost_erasures)
    except BaseException:
        if made_kd:  # a key folder this restore made, left empty: it goes too
            try:
                os.rmdir(kd)
            except OSError:
                pass
        raise
    out["seconds"] = round(time.perf_counter() - t0, 3)
    return out


def _restore(src: str, to, cfg, kd: str, verify: bool, key_passphrase: str | None, accept_lost_erasures: bool) -> dict:
    from .facade import connect

    with new_folder(to, "restore", outside=None) as dest:  # a refused or failed restore leaves no folder
        if os.path.commonpath([dest, src]) == src:
            raise StoreError("restore needs a folder outside the backup")
        out = B.restore_files(src, dest, kd, key_passphrase, accept_lost_erasures=accept_lost_erasures)
        if verify:
            cfg.runtime.key_dir, cfg.runtime.host, cfg.grants = kd, "process", []  # nothing granted by the check
            t1 = time.perf_counter()
            try:
                with connect(dest, config=cfg) as rt:
                    v = rt.audit.verify()
                if not v["ok"]:
                    raise LedgerTampered(f"the restored folder does not verify (table {v.get('table')}, "
                                         f"seq {v.get('first_bad_seq')}): {v.get('reason')}")
            except BaseException:
                B.drop_key(kd, out["folder_id"])
                raise
            out.update(verified=v, verify_seconds=round(time.perf_counter() - t1, 3))
    return out


class BackupSchedule:
    """``[backup].interval_s``: a backup into a new folder under ``[backup].dir`` every interval
    (wall-clock time: durability does not follow a simulated clock), written as
    ``<name>.partial`` and renamed once complete; the newest ``keep`` complete ones are kept, the
    rest (and partial ones a crash left) deleted. A failure is logged, announced as a
    ``backup_failed`` alert, and retried at the next interval.

    Scheduled backups hold no key ("key": "none"): a restore needs the key folder. There is no
    passphrase setting on purpose: a passphrase in a config file beside the backups would let
    whoever reads both open the key. Seal a key with ``rt.backup(dest, key_passphrase=...)`` or
    ``memactors backup DEST --key-passphrase-env NAME`` when you need one."""

    def __init__(self, rt, interval_s: float, folder: str, keep: int) -> None:
        self._rt, self._interval, self._keep = rt, interval_s, keep
        self.folder = os.path.realpath(os.path.expanduser(folder))
        if os.path.commonpath([self.folder, rt.data_dir]) == rt.data_dir:
            raise StoreError("[backup].dir must be outside the data folder")
        self._stop = threading.Event()
        self.runs, self.last, self.errors = 0, None, 0
        self._thread = threading.Thread(target=self._loop, name="memactors-backup-schedule", daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        while not self._stop.wait(self._interval):
            try:
                self.run_once()
            except Exception as exc:  # noqa: BLE001 - retried at the next interval
                if self._stop.is_set():
                    return
                self.errors += 1
                log.exception("scheduled backup failed; retrying at the next interval")
                self._rt._alerts.emit("backup_failed", error=type(exc).__name__)  # noqa: SLF001

    def run_once(self) -> dict:
        os.makedirs(self.folder, exist_ok=True)
        name = "backup-" + datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S%fZ")
        partial = os.path.join(self.folder, name + PARTIAL)
        out = self._rt.backup(partial)
        final = os.path.join(self.folder, name)
        os.replace(partial, final)
        self.runs += 1
        self.last = dict(out, path=final)
        self.prune()
        return self.last

    def complete(self) -> list[str]:
        """The complete backups under the folder, oldest first."""
        names = sorted(n for n in os.listdir(self.folder) if n.startswith("backup-") and not n.endswith(PARTIAL)
                       and os.path.exists(os.path.join(self.folder, n, B.MANIFEST)))
        return [os.path.join(self.folder, n) for n in names]

    def prune(self) -> None:
        for path in self.complete()[:-self._keep]:
            shutil.rmtree(path, ignore_errors=True)
        for n in os.listdir(self.folder):
            if n.startswith("backup-") and n.endswith(PARTIAL):  # a crash mid-backup left it
                shutil.rmtree(os.path.join(self.folder, n), ignore_errors=True)

    def stop(self) -> None:
        self._stop.set()


def start_schedule(rt) -> BackupSchedule | None:
    b = rt.config.backup
    return BackupSchedule(rt, b.interval_s, b.dir, b.keep) if b.interval_s > 0 else None

