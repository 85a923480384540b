"""A sweep's erasures delete their data keys at the sweep's end, not in every commit
(``Entry.keys_later``, ``Ledger.finish_erasures``): from the tombstone's commit on, the key
named in ``erasing`` opens nothing (every reader takes keys through ``Ledger.live_keys``), a
process that dies before the delete leaves it to the next open, and a sweep that has returned
has deleted them."""

from __future__ import annotations

import duckdb

import memactors
from memactors.core import events as E
from memactors.core import records as R
from memactors.core.idempotency import IdempotencyCache
from memactors.core.project import Change
from memactors.store import ledger as L
from memactors.store.entries import Entry, encode

SCOPE = "/org/acme/user/u1/"
TS = 1_700_000_000_000_000


def _write(key: str, mid: str, text: str) -> Entry:
    req = R.WriteRequest(SCOPE, text, "agent").validate()
    rec = R.build_record(req, req.text, mid, TS)
    return Entry(key, "agent", TS, [Change(E.WRITE, SCOPE, mid, record=rec)], b"{}", b"f" * 32, [], [True])


def _swept(key: str, mids: list[str]) -> Entry:
    changes = [Change(E.FORGET, SCOPE, m, patch={"status": "tombstoned"}, reason="past its hard TTL") for m in mids]
    return Entry(key, "memactors-lifecycle", TS + 1, changes, b"{}", None, list(mids), [True] * len(mids),
                 keys_later=True)


def _ledger(tmp_path, **kw) -> L.Ledger:
    return L.Ledger(str(tmp_path / "ledger.duckdb"), str(tmp_path / "keys"), **kw)


def _keys(led: L.Ledger) -> set[str]:
    return {r[0] for r in led.con.execute("SELECT memory_id FROM keys").fetchall()}


def _erasing(led: L.Ledger) -> set[str]:
    return {r[0] for r in led.con.execute("SELECT memory_id FROM erasing").fetchall()}


def _opens(led: L.Ledger, mid: str) -> bool:
    """Whether the memory's write still decodes (its content readable) through the ledger's readers."""
    return any(ch is not None and ch.action == E.WRITE and ch.record for _, ch in led.history([mid]))


def _setup(tmp_path) -> tuple[L.Ledger, IdempotencyCache, list[str]]:
    (tmp_path / "keys").mkdir()
    led = _ledger(tmp_path)
    known = IdempotencyCache(86_400_000_000)
    mids = [f"{i:032x}" for i in range(3)]
    led.commit(encode([_write(f"w{i}", m, f"note {i} about tea") for i, m in enumerate(mids)]), known)
    led.commit(encode([_swept("gc-1", mids[:2])]), known)
    return led, known, mids


def test_a_swept_key_opens_nothing_from_the_tombstones_commit_and_is_deleted_at_the_sweeps_end(tmp_path):
    led, known, mids = _setup(tmp_path)
    try:
        assert _erasing(led) == set(mids[:2]) and set(mids) <= _keys(led)  # named, not deleted yet
        assert not _opens(led, mids[0]) and not _opens(led, mids[1]) and _opens(led, mids[2])
        assert led.erasure(mids[0])["key_destroyed"] and not led.erasure(mids[2])["key_destroyed"]
        assert led.verify().ok  # a key named in erasing beside its tombstone is no key put back
        # a copy that read the swept memory as live (decided before the sweep's commit) is stale
        req = R.WriteRequest("/org/acme/user/u2/", "note 0 about tea", "agent").validate()
        copy = R.build_record(req, req.text, f"{9:032x}", TS + 2)
        entry = Entry("promote-1", "agent", TS + 2, [Change(E.WRITE, "/org/acme/user/u2/", copy["memory_id"],
                                                             record=copy)], b"{}", b"p" * 32, [], [True],
                      live_read=[mids[0]])
        assert led.commit(encode([entry]), known) == [("stale", None)]
        assert led.finish_erasures() == 2
        assert _erasing(led) == set() and _keys(led) == {mids[2]}
        assert led.finish_erasures() == 0 and led.verify().ok
    finally:
        led.close()


def test_a_crash_between_the_tombstones_and_the_key_delete_still_erases(tmp_path):
    """The process dies after the sweep's commit and before ``finish_erasures``: a read-only
    look (``audit verify``) finds nothing to open and nothing tampered; the next open deletes
    the keys before anything reads them."""
    led, _, mids = _setup(tmp_path)
    led.con.close()  # no close(): a process that died (close() would finish them)
    ro = _ledger(tmp_path, read_only=True)
    try:
        assert _erasing(ro) == set(mids[:2]) and set(mids) <= _keys(ro)
        assert not _opens(ro, mids[0]) and _opens(ro, mids[2])
        assert ro.verify().ok
    finally:
        ro.con.close()
    led = _ledger(tmp_path)
    try:
        assert _erasing(led) == set() and _keys(led) == {mids[2]}
        assert led.verify().ok
    finally:
        led.close()


def test_close_finishes_them_and_a_read_only_open_of_an_older_folder_needs_no_erasing_table(tmp_path):
    led, _, mids = _setup(tmp_path)
    led.close()
    con = duckdb.connect(str(tmp_path / "ledger.duckdb"))
    try:
        assert con.execute("SELECT count(*) FROM erasing").fetchone()[0] == 0
        assert {r[0] for r in con.execute("SELECT memory_id FROM keys").fetchall()} == {mids[2]}
        con.execute("DROP TABLE erasing")  # a folder from before the table
    finally:
        con.close()
    ro = _ledger(tmp_path, read_only=True)
    try:
        assert ro.live_keys == "keys" and ro.verify().ok and _opens(ro, mids[2]) and not _opens(ro, mids[0])
    finally:
        ro.con.close()


def test_a_fork_or_backup_taken_before_the_delete_copies_no_swept_key(tmp_path):
    led, _, mids = _setup(tmp_path)
    try:
        (tmp_path / "fork").mkdir()
        dest = tmp_path / "fork" / "ledger.duckdb"
        fork = duckdb.connect(str(dest))
        for ddl in L._DDL:  # noqa: SLF001 - the fork's empty ledger, as fork_to makes it
            fork.execute(ddl)
        fork.close()
        led.export_to(str(dest), led.last_seq)
        con = duckdb.connect(str(dest))
        try:
            assert {r[0] for r in con.execute("SELECT memory_id FROM keys").fetchall()} == {mids[2]}
        finally:
            con.close()
        from memactors.store.backup import LedgerSnapshot

        snap = LedgerSnapshot(led, str(tmp_path / "backup.duckdb"))
        snap.begin()
        snap.write()
        con = duckdb.connect(str(tmp_path / "backup.duckdb"))
        try:
            assert {r[0] for r in con.execute("SELECT memory_id FROM keys").fetchall()} == {mids[2]}
            assert con.execute("SELECT count(*) FROM erasing").fetchone()[0] == 0
        finally:
            con.close()
    finally:
        led.close()


def test_a_sweep_that_returned_has_deleted_its_erasures_keys(tmp_path):
    clock = memactors.ManualClock()
    rt = memactors.connect(str(tmp_path / "d"), host="process", clock=clock)
    try:
        rt.grant("agent", "/org/acme/user/alice/", write=True)
        gone = rt.write("/org/acme/user/alice/", "the locker number is 4411", actor="agent", ttl_days=1)
        kept = rt.write("/org/acme/user/alice/", "alice likes green tea", actor="agent",
                        ttl_days="never", soft_ttl_days="never")
        clock.advance(days=3)
        res = rt.gc()
        assert res.by_rule["hard_expired"] == 1
        led = rt._actors.ledger._obj.ledger  # noqa: SLF001 - the process host's own ledger object
        assert _erasing(led) == set()
        held = _keys(led)
        assert gone.memory_id not in held and kept.memory_id in held
        assert rt.audit.verify()["ok"]
    finally:
        rt.close()
