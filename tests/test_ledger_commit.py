"""The ledger's commit stores the same rows whichever way it sends them to DuckDB: a few rows
as parameters (a single write's commit), more as an Arrow table (``Ledger._insert``)."""

from __future__ import annotations

import pytest

from memactors.core import events as E
from memactors.core import records as R
from memactors.core.idempotency import IdempotencyCache
from memactors.core.project import Change
from memactors.store import ledger as L
from memactors.store.entries import Entry, encode

SCOPE = "/org/acme/user/u1/"
TS = 1_700_000_000_000_000
# What a commit writes that does not depend on its random data keys (sealed snapshots and the
# hashes over them differ from one ledger to another).
EVENT_COLUMNS = "seq, ts, scope, action, memory_id, version, actor, reason, encrypted, idem_key, format"


def _entries(k: int, n: int) -> dict:
    """``n`` entries: each a write (a data key, provenance for every other one, L2 to apply it
    or not) and a status change without a record."""
    out = []
    for i in range(n):
        req = R.WriteRequest(SCOPE, f"note {k}-{i} about tea", "agent").validate()
        rec = R.build_record(req, req.text, f"{k:016x}{i:016x}", TS + i)
        if i % 2:
            rec["derived_from"] = [f"{k:016x}{0:016x}"]
        changes = [Change(E.WRITE, SCOPE, rec["memory_id"], record=rec),
                   Change(E.STATUS, SCOPE, rec["memory_id"], patch={"status": "stale"}, reason="aged", of_version=1)]
        out.append(Entry(f"key-{k}-{i}", "agent", TS + i, changes, b'{"decision":"accepted"}', bytes([i]) * 32,
                         [], [True, bool(i % 2)]))
    return encode(out)


def _rows(led: L.Ledger) -> dict:
    q = led.con.execute
    return {
        "events": q(f"SELECT {EVENT_COLUMNS}, mac IS NULL, typeof(snapshot), typeof(hash), typeof(prev_hash) "
                    "FROM events ORDER BY seq").fetchall(),
        "keys": q("SELECT memory_id, typeof(key), octet_length(key) FROM keys ORDER BY memory_id").fetchall(),
        "idempotency": q("SELECT * FROM idempotency ORDER BY idem_key").fetchall(),
        "applied": q("SELECT seq FROM l2_applied ORDER BY seq").fetchall(),
        "provenance": q("SELECT * FROM provenance ORDER BY memory_id, source").fetchall(),
    }


def _commit_all(path, sizes: list[int]) -> tuple[dict, list]:
    path.mkdir()
    led = L.Ledger(str(path / "ledger.duckdb"), str(path / "keys"))
    try:
        known = IdempotencyCache(86_400_000_000)
        results = [led.commit(_entries(k, n), known) for k, n in enumerate(sizes)]
        results.append(led.commit(_entries(0, sizes[0]), known))  # a retry: answered, nothing appended
        assert led.verify().ok
        return _rows(led), results
    finally:
        led.close()


@pytest.mark.parametrize("sizes", [[1, 1, 2, 3], [2, 5, 1]])
def test_a_few_rows_as_parameters_are_stored_as_the_arrow_path_stores_them(tmp_path, monkeypatch, sizes):
    small, small_results = _commit_all(tmp_path / "small", sizes)
    monkeypatch.setattr(L, "SMALL_INSERT", 0)  # every insert through Arrow
    arrow, arrow_results = _commit_all(tmp_path / "arrow", sizes)
    assert small == arrow and small_results == arrow_results
    assert len(small["events"]) == 2 * sum(sizes) and len(small["idempotency"]) == sum(sizes)
    assert small["applied"] and small["provenance"]  # both side tables were written
    assert small_results[-1][0][0] == "dup"


def test_an_idempotency_cache_says_which_keys_made_which_memories_only_while_it_knows_them_all():
    """An erasure unpins the keys of the writes that made its memories: the owner's cache
    answers for keys it put (no ledger call), never for keys it loaded from the ledger, and
    forgets what a key made once the key leaves the window."""
    from memactors.core.idempotency import IdempotencyCache

    c = IdempotencyCache(window_us=100)
    c.put("k1", b"f1", b"r1", 10, ["m1"])
    c.put("k2", b"f2", b"r2", 20, ["m2", "m3"])
    c.put("k3", b"f3", b"r3", 30)  # made nothing (a forget, a sweep)
    assert c.keys_of(["m3", "m1", "m9"]) == [("k1", 10), ("k2", 20)]
    c.unpin(c.keys_of(["m1"]))
    assert c.lookup("k1", b"other") == b"r1"  # no longer a test of a guess of what m1 said
    c.put("k4", b"f4", b"r4", 125)  # k1 and k2 leave the window
    assert c.keys_of(["m1", "m2"]) == []
    loaded = IdempotencyCache(window_us=100)
    loaded.load({"k5": (b"f5", b"r5")}, {"k5": 50})
    loaded.put("k6", b"f6", b"r6", 60, ["m6"])
    assert loaded.keys_of(["m6"]) is None  # k5's writes are the ledger's to say
    loaded.put("k7", b"f7", b"r7", 151)  # k5 leaves the window
    assert loaded.keys_of(["m6"]) == [("k6", 60)]


def test_a_key_used_again_past_its_window_is_another_request_for_lookups_and_erasures():
    """Past the window a key is new (forgotten at the next request's time, not at the next
    put); erasing what its old use wrote unpins that use only, never the new one."""
    from memactors.core.idempotency import CONFLICT, IdempotencyCache

    c = IdempotencyCache(window_us=100)
    c.put("k", b"old", b"r-old", 10, ["m-old"])
    c.advance(500)  # a request 490 later: k is out of the window before it is looked up
    assert c.lookup("k", b"new") is None
    c.put("k", b"new", b"r-new", 500, ["m-new"])
    c.unpin([("k", 10)])  # the old memory erased (a sweep, years later): its use named by its time
    assert c.lookup("k", b"other") == CONFLICT  # the new use still tells a retry from another request
    c.unpin(c.keys_of(["m-new"]))
    assert c.lookup("k", b"other") == b"r-new"
    c.advance(400)  # time never goes back
    assert c.newest == 500


def test_an_erasure_unpins_its_writes_keys_in_the_window_and_the_purge_every_fingerprint_past_it(tmp_path):
    """The erased memories' writes' fingerprints are nulled in the table (a keyed digest of the
    erased text) without reading the events when the ledger noted the keys itself: those in the
    window by name (this batch's too); every one older than the window at the purge
    (``unpin_aged``: no retry is recognised past it, so none is read again). Keys loaded from
    the table at start: the events say, as before."""
    W = 1_000_000

    def write(key, mid, ts):
        req = R.WriteRequest(SCOPE, f"note {mid}", "agent").validate()
        rec = R.build_record(req, req.text, mid, ts)
        return Entry(key, "agent", ts, [Change(E.WRITE, SCOPE, mid, record=rec)], b"{}", b"f" * 32, [], [True])

    def forget(key, mid, ts):
        return Entry(key, "agent", ts, [Change(E.FORGET, SCOPE, mid, patch={"status": "tombstoned"}, reason="x")],
                     b"{}", b"g" * 32, [mid], [True])

    def fps(led):
        return dict(led.con.execute("SELECT idem_key, fingerprint IS NOT NULL FROM idempotency").fetchall())

    (tmp_path / "keys").mkdir()
    led = L.Ledger(str(tmp_path / "ledger.duckdb"), str(tmp_path / "keys"))
    try:
        known = IdempotencyCache(W)
        m = [f"{i:032x}" for i in range(5)]
        led.commit(encode([write("old1", m[0], TS), write("old2", m[1], TS)]), known)
        led.commit(encode([write("new3", m[2], TS + 2 * W), write("new4", m[3], TS + 2 * W)]), known)
        led.commit(encode([write("new5", m[4], TS + 2 * W), forget("f5", m[4], TS + 2 * W),
                           forget("f3", m[2], TS + 2 * W)]), known)
        got = fps(led)
        assert got["new3"] is False and got["new5"] is False  # erased: by name, this batch's too
        assert got["new4"] is True and got["f3"] is True and got["old1"] is True
        led.unpin_aged(known.newest - known.window_us)  # the purge
        got = fps(led)
        assert got["old1"] is False and got["old2"] is False  # past the window: every one
        assert got["new4"] is True and got["f3"] is True  # in the window, not erased: kept
        assert known.lookup("new3", b"x" * 32) == b"{}"  # no longer a test of a guess
        assert known.lookup("new4", b"x" * 32) == "conflict"
    finally:
        led.close()
    led = L.Ledger(str(tmp_path / "ledger.duckdb"), str(tmp_path / "keys"))  # keys loaded: the events say
    try:
        known = IdempotencyCache(W)
        rows, ts = led.idempotency_since(TS)
        known.load(rows, ts)
        led.commit(encode([forget("f4", m[3], TS + 2 * W)]), known)
        assert fps(led)["new4"] is False
    finally:
        led.close()
