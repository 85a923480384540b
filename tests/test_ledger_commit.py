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
    assert c.keys_of(["m3", "m1", "m9"]) == ["k1", "k2"]
    c.unpin(c.keys_of(["m1"]))
    assert c.lookup("k1", b"other") == b"r1"  # no longer a test of a guess of what m1 said
    c.put("k4", b"f4", b"r4", 125)  # k1 and k2 leave the window
    assert c.keys_of(["m1", "m2"]) == []
    loaded = IdempotencyCache(window_us=100)
    loaded.load({"k5": (b"f5", b"r5")}, {"k5": 50})
    loaded.put("k6", b"f6", b"r6", 60, ["m6"])
    assert loaded.keys_of(["m6"]) is None  # k5's writes are the ledger's to say
    loaded.put("k7", b"f7", b"r7", 151)  # k5 leaves the window
    assert loaded.keys_of(["m6"]) == ["k6"]
