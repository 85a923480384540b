"""``rt.audit.sql`` against an actor trying to read files, exhaust memory or stall the runtime:
the sandbox reads no file (DuckDB's temp directory included), bounds what one query may take,
and a slow query never holds up writes."""

from __future__ import annotations

import os
import threading
import time

import pyarrow as pa
import pytest

import memactors
from memactors.core.errors import BackPressure, InvalidRecord
from memactors.store import sandbox

TABLES = {"events": pa.table({"seq": [1, 2, 3]})}


def test_the_temp_directory_duckdb_always_allows_is_not_readable(tmp_path, monkeypatch):
    # DuckDB lets a query read its temp directory (.tmp under the working directory) even with
    # external access off: another program's files there were readable through audit.sql.
    (tmp_path / ".tmp").mkdir()
    (tmp_path / ".tmp" / "notes.txt").write_text("SECRET-IN-TMP\n")
    monkeypatch.chdir(tmp_path)
    for q in ("SELECT * FROM read_csv('.tmp/notes.txt', header = false)",
              f"SELECT * FROM read_csv('{tmp_path}/.tmp/notes.txt', header = false)",
              "SELECT * FROM glob('.tmp/*')"):
        with pytest.raises(InvalidRecord) as e:
            sandbox.run_select(q, None, TABLES)
        assert "SECRET" not in str(e.value)
    assert sandbox.run_select("SELECT current_setting('allowed_directories')", None, TABLES) == [([],)]
    assert sandbox.run_select("SELECT count(*) FROM events", None, TABLES) == [(3,)]  # what it may read, it reads


def test_a_result_too_large_is_refused_not_buffered():
    with pytest.raises(InvalidRecord) as e:
        sandbox.run_select("SELECT repeat('x', 1000) FROM range(100)", None, TABLES, max_bytes=50_000)
    assert "MiB" in str(e.value) and "xxx" not in str(e.value)
    rows = sandbox.run_select("SELECT repeat('x', 1000) FROM range(40)", None, TABLES, max_bytes=50_000)
    assert len(rows) == 40
    assert len(sandbox.run_select("SELECT * FROM range(3000)", None, TABLES, max_rows=2500)) == 2500  # as before
    threads, memory = sandbox.run_select("SELECT current_setting('threads'), current_setting('memory_limit')",
                                         None, TABLES)[0]
    assert threads == 1 and memory.endswith("iB")


def test_slow_audit_queries_never_hold_up_writes(monkeypatch):
    # Each query used to take one of the default executor's threads, which commits run on: a
    # handful of 30 s queries stalled every tenant's writes for 30 s.
    release = threading.Event()
    real = sandbox.run_select

    def slow(*args, **kw):
        release.wait(5)
        return real(*args, **kw)

    monkeypatch.setattr(sandbox, "run_select", slow)
    s = "/org/acme/user/alice/"
    with memactors.connect("memory://") as rt:
        rt.grant("ag", s, write=True)
        rt.write(s, "Alice drinks green tea", actor="ag")
        outcomes: list = []

        def query():
            try:
                outcomes.append(rt.audit.sql("SELECT count(*) FROM events", actor="ag"))
            except BackPressure as exc:
                outcomes.append(exc)

        n = min(32, (os.cpu_count() or 1) + 4) + 2  # more than the default executor's threads
        threads = [threading.Thread(target=query) for _ in range(n)]
        for t in threads:
            t.start()
        time.sleep(0.3)
        t0 = time.monotonic()
        rt.write(s, "Alice drinks black tea too", actor="ag")
        took = time.monotonic() - t0
        release.set()
        for t in threads:
            t.join(30)
        assert took < 2.0, took
        assert sum(isinstance(o, BackPressure) for o in outcomes) == max(0, n - 16)  # SQL_QUEUE waiting at most
        # The grant and one write, or two: a query copies the rows when its turn comes.
        assert all(o in ([(2,)], [(3,)]) for o in outcomes if not isinstance(o, BackPressure))
        assert rt.audit.verify()["ok"]
