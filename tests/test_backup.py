"""Backups and restores: a consistent copy taken while writes go on, restored verified into a
new folder; erasure applies to backups (nothing erased before a backup is in it, anything
erased after it is erased again on restore, down to the bytes); a changed backup is refused;
a schedule keeps the newest; and, on Ray, a runtime killed after a backup is restored with
everything acknowledged before the backup (the history checker says so)."""

from __future__ import annotations

import os
import threading
import time

import duckdb
import orjson
import pytest

import memactors
from memactors.core.errors import InvalidRecord, LedgerKeyMissing, LedgerTampered, StoreError
from memactors.store import key_seal
from memactors.testing import History, Workload, collect, crash, history_scopes, read_history

S = "/org/acme/user/alice/"
CFG = {"runtime": {"num_owners": 2, "l2_flush_interval_s": 0.2}}


def files_contain(folder: str, needle: bytes) -> list[str]:
    """Every file under ``folder`` whose bytes hold ``needle``."""
    hits = []
    for root, _, names in os.walk(folder):
        for n in names:
            p = os.path.join(root, n)
            with open(p, "rb") as f:
                if needle in f.read():
                    hits.append(os.path.relpath(p, folder))
    return hits


def data_key(rt, memory_id: str) -> bytes:
    """The memory's data key, read where the process host keeps the ledger (what an attacker
    with the file would look for in a backup)."""
    led = rt._actors.ledger._obj.ledger  # noqa: SLF001 - the process host's own ledger object
    return bytes(led._q("SELECT key FROM keys WHERE memory_id = ?", [memory_id])[0][0])  # noqa: SLF001


@pytest.fixture
def rt(tmp_path):
    r = memactors.connect(str(tmp_path / "data"), config=CFG)
    r.grant("agent", S, write=True)
    yield r
    r.close()


def recall_ids(r, q="alice", scope=S):
    return {h.memory_id for h in r.recall(q, actor="agent", task_id="t", allowed_scopes=[scope], purpose="test",
                                          top_k=100, threshold=0.0).hits}


def test_backup_and_restore_a_folder(rt, tmp_path):
    words = ["garden", "piano", "bicycle", "harbour", "lantern", "orchard", "violin", "meadow", "glacier", "canyon",
             "falcon", "pottery", "saffron", "tundra", "compass", "quarry", "ember", "willow", "basalt", "marble"]
    kept = [rt.write(S, f"alice once wrote about the {w} near her {w[::-1]} place", actor="agent") for w in words]
    fact = rt.write(S, "alice drinks tea", actor="agent", subject="alice", predicate="drinks", object="tea")
    m = rt.backup(str(tmp_path / "bk"))
    assert m["rows"] == 21 and m["seq"] == rt.audit.head()["seq"] and m["bytes"] > 0
    assert m["seconds"]["hold"] < 5 and os.path.exists(tmp_path / "bk" / "backup.json")
    after = rt.write(S, "alice bought a bike", actor="agent")  # not in the backup
    out = memactors.restore(str(tmp_path / "bk"), str(tmp_path / "restored"))
    assert out["verified"]["ok"] and out["backup_seq"] == m["seq"] and out["rows"] == 21
    with memactors.connect(str(tmp_path / "restored"), config=CFG) as r2:
        got = recall_ids(r2)
        assert {k.memory_id for k in kept} | {fact.memory_id} <= got and after.memory_id not in got
        assert r2.history(fact.memory_id, actor="agent")["versions"][0]["content"] == "alice drinks tea"
        assert r2.grants("agent")  # grants came back with the ledger
        r2.write(S, "alice moved to York", actor="agent")  # the restored folder is a folder like any other
        assert r2.audit.verify()["ok"]
    assert rt.audit.verify()["ok"]  # the original is untouched, and both live on (a new folder id, same key)


def test_writes_are_acknowledged_while_a_backup_runs(rt, tmp_path):
    for i in range(300):
        rt.write(S, f"alice filler {i}", actor="agent")
    acked, stop = [], threading.Event()

    def writer():
        i = 0
        while not stop.is_set():
            acked.append((time.monotonic(), rt.write(S, f"alice during {i}", actor="agent").memory_id))
            i += 1

    t = threading.Thread(target=writer)
    t.start()
    time.sleep(0.3)
    t0 = time.monotonic()
    m = rt.backup(str(tmp_path / "bk"))
    t1 = time.monotonic()
    stop.set()
    t.join()
    assert any(t0 < ts < t1 for ts, _ in acked), "no write was acknowledged while the backup ran"
    memactors.restore(str(tmp_path / "bk"), str(tmp_path / "restored"))
    with memactors.connect(str(tmp_path / "restored"), config=CFG) as r2:
        before = [mid for ts, mid in acked if ts < t0]
        assert before
        for mid in before:  # everything acknowledged before the backup began (recall's top_k would cap a check)
            assert r2.history(mid, actor="agent")["versions"], mid
        assert recall_ids(r2, "alice during") & set(before)
        assert len(recall_ids(r2, "alice during filler")) <= m["rows"]


def test_a_key_destroyed_before_the_backup_is_not_in_it(rt, tmp_path):
    gone = rt.write(S, "alice's locker number is zebra-quartz-7731", actor="agent")
    rt.write(S, "alice likes tea", actor="agent")
    rt.flush()
    key = data_key(rt, gone.memory_id)
    rt.forget(gone.memory_id, actor="agent", reason="the user asked")  # no purge: bytes may linger in the folder
    rt.backup(str(tmp_path / "bk"))
    assert files_contain(str(tmp_path / "bk"), key) == []
    assert files_contain(str(tmp_path / "bk"), b"zebra-quartz") == []


def test_an_erasure_after_the_backup_is_applied_again_on_restore(rt, tmp_path):
    victim = rt.write(S, "alice's locker number is otter-basalt-9042", actor="agent")
    kept = rt.write(S, "alice likes tea", actor="agent")
    rt.flush()
    key = data_key(rt, victim.memory_id)
    rt.backup(str(tmp_path / "bk"))
    assert files_contain(str(tmp_path / "bk"), key)  # it was live then: the backup holds its key
    rt.forget(victim.memory_id, actor="agent", reason="the user asked")
    rt.close()  # the folder itself need not exist any more: the journal lives beside the key
    out = memactors.restore(str(tmp_path / "bk"), str(tmp_path / "restored"))
    assert out["erased_again"] == 1 and out["erasure_journal"]
    dest = str(tmp_path / "restored")
    assert files_contain(dest, key) == [] and files_contain(dest, b"otter-basalt") == []
    with memactors.connect(dest, config=CFG) as r2:
        assert recall_ids(r2) == {kept.memory_id}
        proof = r2.audit.erased(victim.memory_id, actor="agent")
        assert proof["key_destroyed"] and proof["tombstone_seq"] is not None
        v = r2.history(victim.memory_id, actor="agent")["versions"][0]
        assert v["erased"] and v["changes"][-1]["reason"] == "erased after this backup was taken"
        assert r2.audit.verify()["ok"]
        r2.forget(kept.memory_id, actor="agent", reason="and this")
    # An erasure made in the restored folder applies to the backup too (the same line).
    out = memactors.restore(str(tmp_path / "bk"), str(tmp_path / "again"))
    assert out["erased_again"] == 2


def _edited_backup(rt, bk: str) -> str:
    """A backup of ``rt`` whose first event was edited after it was written."""
    rt.backup(bk)
    con = duckdb.connect(os.path.join(bk, "ledger.duckdb"))
    con.execute("UPDATE events SET reason = 'edited' WHERE seq = 1").fetchall()
    con.close()
    return bk


def test_a_changed_backup_is_refused(rt, tmp_path):
    rt.write(S, "alice likes tea", actor="agent")
    bk = _edited_backup(rt, str(tmp_path / "bk"))
    with pytest.raises(LedgerTampered):
        memactors.restore(bk, str(tmp_path / "r1"))
    assert not os.path.exists(tmp_path / "r1" / "ledger.duckdb")
    bk2 = str(tmp_path / "bk2")
    rt.backup(bk2)
    man = orjson.loads(open(os.path.join(bk2, "backup.json"), "rb").read())
    with open(os.path.join(bk2, "backup.json"), "wb") as f:
        f.write(orjson.dumps(dict(man, seq=man["seq"] - 1)))  # claims less than it holds
    with pytest.raises(LedgerTampered):
        memactors.restore(bk2, str(tmp_path / "r2"))
    os.remove(os.path.join(bk2, "backup.json"))
    with pytest.raises(StoreError):
        memactors.restore(bk2, str(tmp_path / "r3"))


def test_a_damaged_backup_is_refused_typed(rt, tmp_path):
    """What restore reads before it verifies (the manifest's hash, the ledger file, the L2 table)
    damaged: a typed refusal, never a ValueError or DuckDB's IOException, and no folder left."""
    import shutil

    rt.write(S, "alice likes tea", actor="agent")
    good = str(tmp_path / "bk")
    rt.backup(good)
    man = orjson.loads(open(os.path.join(good, "backup.json"), "rb").read())

    def damaged(name, change):
        bk = str(tmp_path / name)
        shutil.copytree(good, bk)
        change(bk)
        return bk

    cases = [
        damaged("hash", lambda bk: open(os.path.join(bk, "backup.json"), "wb").write(orjson.dumps(dict(man, hash="zz")))),
        damaged("id", lambda bk: open(os.path.join(bk, "backup.json"), "wb").write(
            orjson.dumps(dict(man, folder_id="../elsewhere")))),
        damaged("ledger", lambda bk: open(os.path.join(bk, "ledger.duckdb"), "wb").write(b"not a database" * 100)),
        damaged("l2", lambda bk: shutil.rmtree(os.path.join(bk, "l2"))),
    ]
    for bk in cases:
        with pytest.raises(StoreError):
            memactors.restore(bk, str(tmp_path / "r"))
        assert not os.path.exists(tmp_path / "r")


def test_bad_destinations_are_refused_typed(rt, tmp_path):
    for bad in (None, 3, b"/tmp/x", "", "a\0b"):
        with pytest.raises(InvalidRecord):
            rt.backup(bad)
    with pytest.raises(StoreError):
        rt.backup(os.path.join(rt.data_dir, "inside"))
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x").write_text("x")
    with pytest.raises(StoreError):
        rt.backup(str(tmp_path / "full"))
    rt.backup(str(tmp_path / "bk"))
    with pytest.raises(StoreError):
        memactors.restore(str(tmp_path / "bk"), str(tmp_path / "full"))
    with pytest.raises(StoreError):
        memactors.restore(str(tmp_path / "bk"), str(tmp_path / "bk" / "inside"))
    with pytest.raises(StoreError):
        memactors.restore(str(tmp_path / "nothing-here"), str(tmp_path / "r"))
    with pytest.raises(InvalidRecord):
        memactors.restore(str(tmp_path / "bk"), str(tmp_path / "r"), verify="yes")


def test_a_refused_restore_or_fork_leaves_no_folder_behind(rt, tmp_path):
    """A failed fork, backup or restore takes back the folder it made (an empty one there is a
    retry's `not empty` refusal waiting to happen), with the parents it made for it."""
    rt.write(S, "alice likes tea", actor="agent")
    for at in ("bogus", 10**9, 0):
        with pytest.raises((InvalidRecord, memactors.NotFound)):
            rt.fork(str(tmp_path / "forks" / "f"), at=at)
        assert not os.path.exists(tmp_path / "forks")
    (tmp_path / "empty").mkdir()
    with pytest.raises(memactors.NotFound):
        rt.fork(str(tmp_path / "empty"), at=10**9)
    assert os.listdir(tmp_path / "empty") == []  # found empty: left empty, not removed
    bk = _edited_backup(rt, str(tmp_path / "bk"))
    with pytest.raises(LedgerTampered):
        memactors.restore(bk, str(tmp_path / "r" / "r1"))
    with pytest.raises(StoreError):
        memactors.restore(str(tmp_path / "empty"), str(tmp_path / "r" / "r1"))  # not a backup
    assert not os.path.exists(tmp_path / "r")
    rt.fork(str(tmp_path / "forks" / "f"))  # the retry finds a new folder
    assert memactors.restore(rt.backup(str(tmp_path / "bk2"))["path"], str(tmp_path / "r" / "r1"))["verified"]["ok"]


def test_a_purge_and_a_backup_take_turns(rt, tmp_path):
    a = rt.write(S, "alice keeps her spare umbrella in the hall", actor="agent")
    rt.forget(a.memory_id, actor="agent", reason="x")
    errors = []
    t = threading.Thread(target=lambda: errors.extend([] if rt.purge() else ["no purge result"]))
    t.start()
    m = rt.backup(str(tmp_path / "bk"))
    t.join()
    assert not errors and memactors.restore(m["path"], str(tmp_path / "r"))["verified"]["ok"]


def test_scheduled_backups_keep_the_newest(tmp_path):
    folder = tmp_path / "backups"
    cfg = dict(CFG, backup={"interval_s": 0.3, "dir": str(folder), "keep": 2})
    with memactors.connect(str(tmp_path / "data"), config=cfg) as r:
        r.grant("agent", S, write=True)
        deadline = time.monotonic() + 60
        while r._backups.runs < 4 and time.monotonic() < deadline:  # noqa: SLF001
            r.write(S, f"alice note {r._backups.runs}", actor="agent")  # noqa: SLF001
            time.sleep(0.1)
        assert r._backups.runs >= 4  # noqa: SLF001
        newest = r._backups.last["path"]  # noqa: SLF001
    names = sorted(os.listdir(folder))
    assert len(names) == 2 and not any(n.endswith(".partial") for n in names)
    assert memactors.restore(newest, str(tmp_path / "r"))["verified"]["ok"]


def test_a_schedule_needs_its_folder():
    with pytest.raises(memactors.ConfigError):
        memactors.Config.from_dict({"backup": {"interval_s": 60}})
    with pytest.raises(memactors.ConfigError):
        memactors.Config.from_dict({"backup": {"keep": 0}})


def test_async_backup(rt, tmp_path):
    import asyncio

    rt.write(S, "alice likes tea", actor="agent")
    m = asyncio.run(rt.abackup(str(tmp_path / "bk")))
    assert m["rows"] == 1


def test_cli_backup_and_restore(rt, tmp_path, monkeypatch):
    import contextlib

    from click.testing import CliRunner

    from memactors.cli import cli

    rt.write(S, "alice likes tea", actor="agent")

    @contextlib.contextmanager
    def this_runtime(data):
        yield rt, "attached"

    monkeypatch.setattr("memactors.server.open_runtime", this_runtime)
    res = CliRunner().invoke(cli, ["backup", str(tmp_path / "bk"), "--json", "--data", rt.data_dir])
    assert res.exit_code == 0, res.output
    assert orjson.loads(res.output)["rows"] == 1
    res = CliRunner().invoke(cli, ["restore", str(tmp_path / "bk"), "--to", str(tmp_path / "r")])
    assert res.exit_code == 0, res.output
    assert "erased again" in res.output and "yes" in res.output
    res = CliRunner().invoke(cli, ["restore", str(tmp_path / "bk"), "--to", str(tmp_path / "r")])
    assert res.exit_code == 2  # not an empty folder: one line, no traceback


@pytest.mark.ray
def test_a_runtime_killed_after_a_backup_is_restored_with_everything_acknowledged_before_it(ray_session, tmp_path):
    """Writes, forgets and recalls run while the backup is taken; then the runtime is killed.
    The restore holds every operation acknowledged before the backup began (the checker treats
    those completed later as in flight: present or absent), and verify() passes."""
    rt = memactors.connect(str(tmp_path / "data"), host="ray", config=CFG)
    rt.grant("agent", "/org/acme/", write=True)
    rt.grant("checker", "/global/")
    h = History(tmp_path / "hist" / "c1.jsonl", client="c1")
    wl = Workload(["/org/acme/user/alice/", "/org/acme/user/bob/"], actor="agent", seed=7)
    seen: list[str] = []
    wl.run(rt, h, 200, seen=seen)  # acknowledged before the backup
    counts = {}
    t = threading.Thread(target=lambda: counts.update(wl.run(rt, h, 300, start=200, seen=seen)))
    t.start()  # and these go on while it is taken
    time.sleep(0.5)
    began = time.time_ns()
    m = rt.backup(str(tmp_path / "bk"))
    t.join()
    assert counts["ok"] > 100
    crash(rt)
    out = memactors.restore(m["path"], str(tmp_path / "restored"), config=CFG)
    assert out["verified"]["ok"]
    # Completions after the backup began may or may not be in it: the checker judges them in flight.
    events = [e for e in read_history(tmp_path / "hist") if e["type"] == "invoke" or e["ts"] < began]
    # The kill was Ray's; what is checked now is the folder: on the process host, no second Ray start.
    r2 = memactors.connect(str(tmp_path / "restored"), config=CFG, host="process")
    try:
        report = collect(r2, history_scopes(events), actor="checker").check(events)
        assert r2.audit.verify()["ok"]
    finally:
        r2.close()
    assert report.ok, report.summary()
    assert report.counts["writes"]["acked"] > 50


def test_a_restore_prints_nothing_of_lances_own(tmp_path, capfd):
    """Restoring writes a new L2 table: Lance's own log lines (a warning that the table it
    overwrites is not there yet) never reach the terminal."""
    with memactors.connect(str(tmp_path / "d"), host="process") as r:
        r.grant("agent", S, write=True)
        r.write(S, "alice keeps bees on the roof", actor="agent")
        r.backup(str(tmp_path / "bk"))
    capfd.readouterr()
    assert memactors.restore(str(tmp_path / "bk"), str(tmp_path / "r"))["rows"] == 1
    err = capfd.readouterr().err
    assert "lance" not in err.lower() and "WARN" not in err, err


# --- the ledger key and backups -------------------------------------------------------------------
#
# A backup holds the anchor, never the key in clear: whoever holds a backup could otherwise edit
# its ledger, recompute MACs and anchor, and have the forgery restored. Restore reads the key from
# its key folder, or opens the copy a key passphrase sealed into the backup.

PW = "correct horse battery staple"


@pytest.fixture
def fast_seal(monkeypatch):
    """A cheaper scrypt for the tests that seal to be refused (one test keeps the real cost)."""
    monkeypatch.setattr(key_seal, "N", 2**14)


def ledger_key(rt):
    """(folder id, the key's secret) of ``rt``'s folder, read from its key folder."""
    fid = rt._actors.ledger._obj.ledger.key.folder_id  # noqa: SLF001 - the process host's own ledger object
    with open(os.path.join(rt.config.runtime.key_dir, f"{fid}.key"), "rb") as f:
        return fid, bytes.fromhex(f.read().decode().strip())


def holds_key(folder: str, secret: bytes) -> list[str]:
    """The files under ``folder`` that hold the key: raw, or as hex in either case."""
    return sorted({*files_contain(folder, secret), *files_contain(folder, secret.hex().encode()),
                   *files_contain(folder, secret.hex().upper().encode())})


def keys_in(folder) -> list[str]:
    """The keys and anchors in a key folder (not the records of where each folder lives)."""
    return sorted(f for f in os.listdir(folder) if not f.endswith(".home"))


def keys_cfg(folder) -> dict:
    return dict(CFG, runtime=dict(CFG["runtime"], key_dir=str(folder)))


def manifest(bk: str) -> dict:
    with open(os.path.join(bk, "backup.json"), "rb") as f:
        return orjson.loads(f.read())


def rewrite_manifest(bk: str, **changes) -> None:
    m = {k: v for k, v in dict(manifest(bk), **changes).items() if v is not None}
    with open(os.path.join(bk, "backup.json"), "wb") as f:
        f.write(orjson.dumps(m))


def refused(src, to, exc, **kw) -> str:
    """Restore refused with ``exc``: no folder left at ``to``, nothing left in the key folder."""
    kd = (kw.get("config") or {}).get("runtime", {}).get("key_dir") or os.environ["MEMACTORS_KEY_DIR"]
    before = sorted(os.listdir(kd)) if os.path.isdir(kd) else None
    with pytest.raises(exc) as e:
        memactors.restore(src, to, **kw)
    assert not os.path.exists(to)
    assert (sorted(os.listdir(kd)) if os.path.isdir(kd) else None) == before  # no key, no staging folder
    return str(e.value)


def test_a_default_backup_holds_no_key(rt, tmp_path):
    rt.write(S, "alice likes tea", actor="agent")
    fid, secret = ledger_key(rt)
    bk = str(tmp_path / "bk")
    m = rt.backup(bk)
    assert m["key"] == "none" and manifest(bk)["key"] == "none" and manifest(bk)["format"] == 2
    assert holds_key(bk, secret) == [] and os.listdir(os.path.join(bk, "key")) == [f"{fid}.head"]
    # The key folder it is given lacks the key: refused, typed, saying what restore needs.
    msg = refused(bk, str(tmp_path / "r0"), LedgerKeyMissing, config=keys_cfg(tmp_path / "empty-keys"))
    assert "key folder of the backed-up data folder" in msg and "key passphrase" in msg
    assert not os.path.exists(tmp_path / "empty-keys")
    # A copy of the key folder (the key alone) is what it needs.
    (tmp_path / "copied-keys").mkdir()
    (tmp_path / "copied-keys" / f"{fid}.key").write_text(secret.hex())
    out = memactors.restore(bk, str(tmp_path / "r1"), config=keys_cfg(tmp_path / "copied-keys"))
    assert out["verified"]["ok"] and out["key_from"] == "key_dir" and out["rows"] == 1
    assert keys_in(tmp_path / "copied-keys") == sorted([f"{fid}.key", f"{out['folder_id']}.key",
                                                        f"{out['folder_id']}.head"])
    with memactors.connect(str(tmp_path / "r1"), config=keys_cfg(tmp_path / "copied-keys")) as r2:
        assert len(recall_ids(r2)) == 1 and r2.audit.verify()["ok"]


def _rechain(bk: str, attacker_secret: bytes | None = None) -> None:
    """What an attacker holding only the backup does: edit the first event, recompute every
    hash after it and the manifest's hash; with a key of their own, the MACs and the anchor too,
    that key put in the backup in clear as format 1 held it."""
    from memactors.core import events as E
    from memactors.store.ledger_key import LedgerKey

    m = manifest(bk)
    forger = LedgerKey(attacker_secret, m["folder_id"], os.path.join(bk, "key")) if attacker_secret else None
    con = duckdb.connect(os.path.join(bk, "ledger.duckdb"))
    rows = con.execute(f"SELECT {', '.join(E.COLUMNS)}, mac FROM events ORDER BY seq").fetchall()
    prev = E.GENESIS
    for r in rows:
        d = dict(zip((*E.COLUMNS, "mac"), r))
        if d["seq"] == 1:
            d["reason"] = "edited"
        e = E.Event(d["ts"], d["scope"], d["action"], d["actor"], d["memory_id"], d["version"], d["reason"],
                    d["encrypted"], bytes(d["snapshot"]), d["idem_key"])
        h = E.chain_hash(prev, d["seq"], e)
        mac = forger.mac(d["seq"], h) if forger and d["mac"] is not None else d["mac"]
        con.execute("UPDATE events SET reason = ?, prev_hash = ?, hash = ?, mac = ? WHERE seq = ?",
                    [d["reason"], prev, h, mac, d["seq"]]).fetchall()
        prev = h
    con.close()
    if forger:
        forger.write_head(m["seq"], prev)
        forger.install(os.path.join(bk, "key"))
        rewrite_manifest(bk, hash=prev.hex(), format=1, key=None)
    else:
        rewrite_manifest(bk, hash=prev.hex())


def test_a_key_less_backup_edited_and_rechained_is_refused(rt, tmp_path, fast_seal):
    for i in range(3):
        rt.write(S, f"alice note {i}", actor="agent")
    bk = str(tmp_path / "bk")
    rt.backup(bk, key_passphrase=PW)
    _rechain(bk)  # the hashes recomputed; the MACs and the anchor need the key the attacker lacks
    assert "does not verify" in refused(bk, str(tmp_path / "r1"), LedgerTampered)
    assert "does not verify" in refused(bk, str(tmp_path / "r2"), LedgerTampered,
                                        config=keys_cfg(tmp_path / "k2"), key_passphrase=PW)
    # Their own key, MACs and anchor, the backup turned into a format-1 one: the key folder's key
    # refuses it, and so does a restore given the passphrase (it never takes a clear key then).
    bk2 = str(tmp_path / "bk2")
    rt.backup(bk2, key_passphrase=PW)
    _rechain(bk2, os.urandom(32))
    refused(bk2, str(tmp_path / "r3"), LedgerTampered)
    refused(bk2, str(tmp_path / "r4"), LedgerTampered, config=keys_cfg(tmp_path / "k4"), key_passphrase=PW)
    os.remove(os.path.join(bk2, "key", manifest(bk2)["folder_id"] + ".key.sealed"))
    refused(bk2, str(tmp_path / "r5"), LedgerKeyMissing, config=keys_cfg(tmp_path / "k5"), key_passphrase=PW)
    # The forgery itself is sound: with nothing to check it against (no key folder, no
    # passphrase), a backup carrying its key in clear restores it. Hence no clear key in a backup.
    out = memactors.restore(bk2, str(tmp_path / "r6"), config=keys_cfg(tmp_path / "k6"), accept_lost_erasures=True)
    assert out["key_from"] == "clear" and out["verified"]["ok"]


def test_a_sealed_backup_restores_without_the_key_folder(rt, tmp_path):
    """The real scrypt cost, once: sealing and opening each stay well under a second."""
    rt.write(S, "alice keeps bees on the roof", actor="agent")
    fid, secret = ledger_key(rt)
    bk = str(tmp_path / "bk")
    m = rt.backup(bk, key_passphrase=PW)
    assert m["key"] == "sealed" and manifest(bk)["key"] == "sealed" and m["seconds"]["seal"] < 1.0
    assert sorted(os.listdir(os.path.join(bk, "key"))) == [f"{fid}.head", f"{fid}.key.sealed"]
    assert holds_key(bk, secret) == []  # the sealed file holds it encrypted only
    sealed = orjson.loads(open(os.path.join(bk, "key", f"{fid}.key.sealed"), "rb").read())
    assert sealed["kdf"] == "scrypt" and sealed["n"] >= 2**15 and sealed["cipher"] == "aes-256-gcm"
    keys = tmp_path / "new-keys"  # the machine lost its key folder, and the erasure journal in it
    msg = refused(bk, str(tmp_path / "r"), StoreError, config=keys_cfg(keys), key_passphrase=PW)
    assert "erasure journal" in msg and "accept_lost_erasures" in msg
    t0 = time.perf_counter()
    out = memactors.restore(bk, str(tmp_path / "r"), config=keys_cfg(keys), key_passphrase=PW, accept_lost_erasures=True)
    assert out["verified"]["ok"] and out["key_from"] == "sealed" and out["rows"] == 1
    assert time.perf_counter() - t0 < 10
    assert keys_in(keys) == sorted([f"{out['folder_id']}.key", f"{out['folder_id']}.head"])
    with memactors.connect(str(tmp_path / "r"), config=keys_cfg(keys)) as r2:
        assert len(recall_ids(r2, "bees")) == 1 and r2.audit.verify()["ok"]
        assert r2.grants("agent")


def test_a_sealed_restore_erases_again_what_the_key_folders_journal_names(rt, tmp_path, fast_seal):
    # The key gone from the key folder but its erasure journal there: the sealed key restores,
    # and what was erased after the backup is erased again (no acceptance needed).
    kept = rt.write(S, "alice keeps bees on the roof", actor="agent")
    gone = rt.write(S, "alice hides a spare key under the mat", actor="agent")
    fid, _ = ledger_key(rt)
    bk = str(tmp_path / "bk")
    rt.backup(bk, key_passphrase=PW)
    rt.forget(gone.memory_id, actor="agent", reason="asked")
    kd = rt.config.runtime.key_dir
    journal = [f for f in os.listdir(kd) if f.endswith(".erased")]
    assert journal
    keys = tmp_path / "keys"
    keys.mkdir()
    for f in journal:  # the journal survives, the key does not
        (keys / f).write_bytes(open(os.path.join(kd, f), "rb").read())
    out = memactors.restore(bk, str(tmp_path / "r"), config=keys_cfg(keys), key_passphrase=PW)
    assert out["key_from"] == "sealed" and out["erased_again"] == 1 and out["erasure_journal"]
    with memactors.connect(str(tmp_path / "r"), config=keys_cfg(keys)) as r2:
        assert recall_ids(r2, "alice") == {kept.memory_id}


def test_a_sealed_key_opens_only_with_its_passphrase(rt, tmp_path, fast_seal):
    import shutil

    rt.write(S, "alice likes tea", actor="agent")
    fid, secret = ledger_key(rt)
    for bad in ("short", "", 12345, b"twelve bytes!!"):
        with pytest.raises(InvalidRecord):
            rt.backup(str(tmp_path / "b0"), key_passphrase=bad)
        assert not os.path.exists(tmp_path / "b0")
    good = str(tmp_path / "bk")
    rt.backup(good, key_passphrase=PW)
    assert holds_key(good, secret) == []
    keys = keys_cfg(tmp_path / "keys")  # no key there: only the sealed one can restore it
    msg = refused(good, str(tmp_path / "r"), LedgerTampered, config=keys, key_passphrase=PW + "!")
    assert "passphrase does not open" in msg
    for bad in ("too short", 7, b"bytes passphrase"):
        refused(good, str(tmp_path / "r"), InvalidRecord, config=keys, key_passphrase=bad)
    assert "sealed" in refused(good, str(tmp_path / "r"), LedgerKeyMissing, config=keys)  # it needs the passphrase
    path = os.path.join("key", f"{fid}.key.sealed")
    blob = open(os.path.join(good, path), "rb").read()
    at = blob.index(b'"ciphertext"') + 20  # one hex digit of the ciphertext, changed
    flips = {"ciphertext": blob[:at] + (b"0" if blob[at:at + 1] != b"0" else b"1") + blob[at + 1:],
             "structure": b"[" + blob[1:], "another folder": blob.replace(fid.encode(), b"f" * len(fid))}
    for name, changed in flips.items():
        bk = str(tmp_path / name.replace(" ", "-"))
        shutil.copytree(good, bk)
        with open(os.path.join(bk, path), "wb") as f:
            f.write(changed)
        refused(bk, str(tmp_path / "r"), LedgerTampered, config=keys, key_passphrase=PW)
    out = memactors.restore(good, str(tmp_path / "r"), config=keys, key_passphrase=PW,
                            accept_lost_erasures=True)  # untouched: it opens
    assert out["key_from"] == "sealed" and out["verified"]["ok"]
    # Both the key folder's key and the sealed one: they must be the same key.
    out = memactors.restore(good, str(tmp_path / "r2"), key_passphrase=PW)
    assert out["key_from"] == "key_dir" and out["verified"]["ok"]
    (tmp_path / "other-keys").mkdir()
    (tmp_path / "other-keys" / f"{fid}.key").write_text(os.urandom(32).hex())
    assert "is not" in refused(good, str(tmp_path / "r3"), LedgerTampered, config=keys_cfg(tmp_path / "other-keys"),
                               key_passphrase=PW)


def test_a_backup_of_the_previous_record_schema_restores(rt, tmp_path):
    """A backup taken before record schema 6 holds the session as a struct column in L2: its
    rows come back in today's schema (pyarrow cannot cast the struct to text)."""
    import lancedb
    import pyarrow as pa

    from memactors.core import records as R

    rt.write(S, "alice likes green tea", actor="agent")
    bk = str(tmp_path / "bk")
    rt.backup(bk)
    db = lancedb.connect(os.path.join(bk, "l2"))
    old = db.open_table("memories").to_arrow()
    at = old.schema.get_field_index("session")
    old = old.set_column(at, pa.field("session", R.SESSION), pa.nulls(old.num_rows, R.SESSION))
    meta = {**(old.schema.metadata or {}), b"memactors.schema_version": b"5"}
    db.create_table("memories", data=old.replace_schema_metadata(meta), mode="overwrite")
    out = memactors.restore(bk, str(tmp_path / "r"))
    assert out["verified"]["ok"] and out["rows"] == 1
    with memactors.connect(str(tmp_path / "r"), config=CFG) as r2:
        assert len(recall_ids(r2, "tea")) == 1


def test_a_format_1_backup_with_the_key_in_clear_still_restores(rt, tmp_path):
    """Written the way format 1 wrote it: the key in clear in key/<id>.key, no "key" field."""
    from memactors.store.ledger_key import LedgerKey

    rt.write(S, "alice likes tea", actor="agent")
    fid, _ = ledger_key(rt)
    bk = str(tmp_path / "bk")
    rt.backup(bk)
    LedgerKey.open(rt.config.runtime.key_dir, fid, create=False).install(os.path.join(bk, "key"))
    rewrite_manifest(bk, format=1, key=None)
    out = memactors.restore(bk, str(tmp_path / "r"), config=keys_cfg(tmp_path / "keys"), accept_lost_erasures=True)
    assert out["key_from"] == "clear" and out["verified"]["ok"] and out["rows"] == 1
    out = memactors.restore(bk, str(tmp_path / "r2"))  # the key folder has it too: that one is used
    assert out["key_from"] == "key_dir" and out["verified"]["ok"]
    rewrite_manifest(bk, format=3)
    refused(bk, str(tmp_path / "r3"), StoreError)


def test_cli_backup_and_restore_with_a_key_passphrase(rt, tmp_path, monkeypatch, fast_seal):
    import contextlib

    from click.testing import CliRunner

    from memactors.cli import cli

    rt.write(S, "alice likes tea", actor="agent")
    _, secret = ledger_key(rt)

    @contextlib.contextmanager
    def this_runtime(data):
        yield rt, "attached"

    monkeypatch.setattr("memactors.server.open_runtime", this_runtime)
    run = CliRunner().invoke
    res = run(cli, ["backup", str(tmp_path / "plain"), "--data", rt.data_dir])
    assert res.exit_code == 0 and "restore needs the key folder" in res.output, res.output
    res = run(cli, ["backup", str(tmp_path / "bk"), "--key-passphrase-env", "BK_PW", "--data", rt.data_dir])
    assert res.exit_code == 2 and "BK_PW" in res.output and not os.path.exists(tmp_path / "bk")  # not set
    res = run(cli, ["backup", str(tmp_path / "bk"), "--key-passphrase-env", "BK_PW", "--data", rt.data_dir],
              env={"BK_PW": "short"})
    assert res.exit_code == 2 and not os.path.exists(tmp_path / "bk")
    res = run(cli, ["backup", str(tmp_path / "bk"), "--key-passphrase-env", "BK_PW", "--data", rt.data_dir],
              env={"BK_PW": PW})
    assert res.exit_code == 0 and "sealed" in res.output, res.output
    assert holds_key(str(tmp_path / "bk"), secret) == []
    keys = str(tmp_path / "keys")
    args = ["restore", str(tmp_path / "bk"), "--to", str(tmp_path / "r"), "--key-passphrase-env", "BK_PW"]
    res = run(cli, args, env={"BK_PW": PW + "?", "MEMACTORS_KEY_DIR": keys})
    assert res.exit_code == 2 and "passphrase does not open" in res.output and not os.path.exists(tmp_path / "r")
    res = run(cli, args[:4], env={"MEMACTORS_KEY_DIR": keys})
    assert res.exit_code == 2 and "passphrase" in res.output and not os.path.exists(tmp_path / "r")
    res = run(cli, args + ["--json"], env={"BK_PW": PW, "MEMACTORS_KEY_DIR": keys})
    assert res.exit_code == 2 and "--accept-lost-erasures" in res.output and not os.path.exists(tmp_path / "r")
    res = run(cli, args + ["--json", "--accept-lost-erasures"], env={"BK_PW": PW, "MEMACTORS_KEY_DIR": keys})
    assert res.exit_code == 0, res.output
    got = orjson.loads(res.output)
    assert got["key_from"] == "sealed" and got["verified"]["ok"]
    assert os.path.exists(os.path.join(keys, got["folder_id"] + ".key"))
