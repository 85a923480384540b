"""Storage faults: a full disk, a read-only folder, a truncated or deleted Lance data file, a
truncated DuckDB file, a stale lock. Each gives a typed ``StoreError`` (or a subclass, or a
``PartialWrite`` whose items can be resubmitted) that says what to do, or recovers by itself;
never a Ray exception or a raw library error; nothing half-written; and once the fault is
fixed the folder verifies and holds every acknowledged write.

The disk-full and read-only cases mount a small tmpfs (the tests run as root); where mounting
is not allowed they are skipped, saying so."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time

import pytest

import memactors
from memactors import server
from memactors.engine.naming import namespace_for
from memactors.testing import History

from chaoslib import check_history, lock_free, namespace_actors_gone, recorded_write

S = "/org/store/user/u/"
CFG = {"runtime": {"num_owners": 1, "l2_flush_interval_s": 0.1}}


@pytest.fixture
def tmpfs(tmp_path):
    """A 64 MiB tmpfs at tmp_path/mnt, unmounted afterwards."""
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    out = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64m", "tmpfs", str(mnt)], capture_output=True, text=True)
    if out.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here (needs root and mount rights): {out.stderr.strip()}")
    yield mnt
    subprocess.run(["umount", "-l", str(mnt)], capture_output=True)


def _remount(mnt, mode: str) -> None:
    subprocess.run(["mount", "-o", f"remount,{mode}", str(mnt)], check=True, capture_output=True)


def _fill(mnt) -> str:
    """Fill the file system with one file; returns its path."""
    path = os.path.join(mnt, "filler")
    with open(path, "wb") as f:
        try:
            while True:
                f.write(b"\0" * (1 << 20))
                f.flush()
        except OSError:
            pass
    return path


def _seed(rt, h, n=20, tag="before"):
    rt.grant_many([{"actor": "ag", "scope": S, "write": True}, {"actor": "checker", "scope": "/global/"}])
    res = [recorded_write(h, rt, scope=S, text=f"fact {tag} {i}", actor="ag", subject=f"s{i % 5}",
                          predicate="p", object=f"{tag}{i}", idempotency_key=f"{tag}-{i}") for i in range(n)]
    assert all(isinstance(r, memactors.WriteResult) for r in res)
    rt.flush()
    return res


def _reopened_clean(data, hist, scopes=(S,)):
    """The folder after the fault, checked on the process host (the same files and cores,
    no second Ray runtime to start)."""
    rt = memactors.connect(data, config=CFG, host="process")
    try:
        report = check_history(rt, hist, list(scopes))
        assert report.ok, report.summary()
        assert report.counts["writes"]["acked"] > 0
    finally:
        rt.close()
    assert lock_free(data)


def _assert_typed(exc: BaseException) -> None:
    assert isinstance(exc, memactors.MemactorsError), repr(exc)
    assert "Ray" not in type(exc).__name__ and "Traceback" not in str(exc)


def test_disk_full_then_freed(ray_session, tmpfs):
    data, hist = tmpfs / "data", tmpfs.parent / "hist"
    rt = memactors.connect(data, config=CFG)
    h = History(hist / "c.jsonl", client="c")
    try:
        _seed(rt, h)
        filler = _fill(tmpfs)
        out = [recorded_write(h, rt, scope=S, text=f"written on a full disk {i}", actor="ag",
                              idempotency_key=f"full-{i}") for i in range(8)]
        refused = [r for r in out if isinstance(r, BaseException)]
        for r in refused:
            _assert_typed(r)
            assert "disk" in str(r) or "space" in str(r), str(r)
        assert refused, "a full disk refused nothing"
        for call in (rt.flush, rt.audit.verify):  # fail typed or succeed; never a raw error
            try:
                call()
            except memactors.MemactorsError as exc:
                _assert_typed(exc)
        os.remove(filler)
        # Fixed: the same writes again, with the same keys, go through; none twice.
        again = [recorded_write(h, rt, scope=S, text=f"written on a full disk {i}", actor="ag",
                                idempotency_key=f"full-{i}") for i in range(8)]
        assert all(isinstance(r, memactors.WriteResult) for r in again), again
        assert rt.audit.verify()["ok"]
        report = check_history(rt, hist, [S])
        assert report.ok, report.summary()
    finally:
        h.close()
        rt.close()
    assert lock_free(data)
    _reopened_clean(data, hist)


def test_read_only_folder(ray_session, tmpfs):
    data, hist = tmpfs / "data", tmpfs.parent / "hist"
    rt = memactors.connect(data, config=CFG)
    with History(hist / "c.jsonl", client="c") as h:
        _seed(rt, h)
    rt.close()
    _remount(tmpfs, "ro")
    try:
        with pytest.raises(memactors.StoreError) as e:
            memactors.connect(data, config=CFG)
        assert "writable" in str(e.value) or "read-only" in str(e.value).lower(), str(e.value)
        assert lock_free(data) and namespace_actors_gone(namespace_for(str(data)))
    finally:
        _remount(tmpfs, "rw")
    _reopened_clean(data, hist)


def _live_data_files(data) -> list[str]:
    """The data files the newest Lance version reads. Files only older versions hold (a merge
    rewrote their rows) are kept for the retention and never read: damaging one harms nothing."""
    import lance

    folder = data / "l2" / "memories.lance"
    ds = lance.dataset(str(folder))
    return sorted(str(folder / "data" / os.path.basename(f.path)) for fr in ds.get_fragments() for f in fr.metadata.files)


@pytest.mark.parametrize("damage", ["truncate", pytest.param("delete", marks=pytest.mark.chaos)])
def test_damaged_lance_file(ray_session, tmp_path, damage):
    data, hist = tmp_path / "data", tmp_path / "hist"
    rt = memactors.connect(data, config=CFG)
    with History(hist / "c.jsonl", client="c") as h:
        _seed(rt, h)
    rt.close()
    victim = _live_data_files(data)[0]
    if damage == "truncate":
        os.truncate(victim, os.path.getsize(victim) // 2)
    else:
        os.remove(victim)
    with pytest.raises(memactors.StoreError) as e:
        memactors.connect(data, config=CFG)
    assert "memactors rebuild" in str(e.value)
    assert lock_free(data) and namespace_actors_gone(namespace_for(str(data)))
    server.rebuild(data, config=CFG, workers=1)  # what the message says: L2 again from the ledger alone
    _reopened_clean(data, hist)


def test_truncated_ledger(ray_session, tmp_path):
    data, hist = tmp_path / "data", tmp_path / "hist"
    rt = memactors.connect(data, config=CFG)
    with History(hist / "c.jsonl", client="c") as h:
        _seed(rt, h)
    rt.close()
    ledger = data / "ledger.duckdb"
    backup = tmp_path / "ledger.backup"
    shutil.copy(ledger, backup)
    os.truncate(ledger, os.path.getsize(ledger) // 2)
    with pytest.raises(memactors.StoreError) as e:
        memactors.connect(data, config=CFG)
    assert "backup" in str(e.value)
    assert lock_free(data) and namespace_actors_gone(namespace_for(str(data)))
    shutil.copy(backup, ledger)  # restored from the backup
    _reopened_clean(data, hist)


_HOLDER = """
import fcntl, sys, time
f = open(sys.argv[1], "a+")
fcntl.flock(f.fileno(), fcntl.LOCK_EX)
f.write("pid 4242 was here\\n"); f.flush()
print("held", flush=True)
time.sleep(600)
"""


def _hold_lock(path):
    p = subprocess.Popen([sys.executable, "-c", _HOLDER, str(path)], stdout=subprocess.PIPE, text=True)
    assert p.stdout.readline().strip() == "held"
    return p


def test_stale_lock(ray_session, tmp_path):
    data, hist = tmp_path / "data", tmp_path / "hist"
    rt = memactors.connect(data, config=CFG)
    with History(hist / "c.jsonl", client="c") as h:
        _seed(rt, h)
    rt.close()
    # A live holder: refused, saying what to do.
    holder = _hold_lock(data / "lock")
    try:
        with pytest.raises(memactors.DataFolderLocked) as e:
            memactors.connect(data, config=CFG)
        assert "memactors up" in str(e.value) or "stop it" in str(e.value)
        assert namespace_actors_gone(namespace_for(str(data)))
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait()
    # Its holder died (killed: no clean-up), leaving the file and its scribbles: not in the way.
    assert (data / "lock").exists()
    t0 = time.monotonic()
    _reopened_clean(data, hist)
    assert time.monotonic() - t0 < 60
