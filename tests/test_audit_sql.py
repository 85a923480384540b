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
from memactors.store.sandbox_process import SandboxProcess

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
    real = SandboxProcess.run

    def slow(self, *args, **kw):
        release.wait(5)
        return real(self, *args, **kw)

    monkeypatch.setattr(SandboxProcess, "run", slow)
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


def test_memory_duckdb_does_not_count_is_refused_and_the_runtime_lives_on(tmp_path):
    # repeat('x', 5e7) over one vector of 2,048 rows asks for ~100 GB at once, outside DuckDB's
    # memory_limit: in the ledger's own process it would have ended it (the caller's process, on
    # this host). The sandbox's process hits its address-space limit and the query is refused.
    s = "/org/acme/user/alice/"
    with memactors.connect(str(tmp_path / "data"), host="process") as rt:
        rt.grant("ag", s, write=True)
        rt.write(s, "Alice drinks green tea", actor="ag")
        with pytest.raises(InvalidRecord, match="memory"):
            rt.audit.sql("SELECT repeat('x', 50000000) FROM range(2048)", actor="ag")
        assert rt.audit.sql("SELECT count(*) FROM events", actor="ag") == [(2,)]
        rt.write(s, "Alice drinks black tea too", actor="ag")
        assert rt.audit.verify()["ok"]


def test_a_sandbox_process_that_dies_refuses_its_query_and_is_started_again():
    sp = SandboxProcess()
    try:
        assert sp.run("SELECT count(*) FROM events", None, TABLES) == [(3,)]
        sp._proc.kill()  # noqa: SLF001 - between two queries
        sp._proc.wait()  # noqa: SLF001
        assert sp.run("SELECT count(*) FROM events", None, TABLES) == [(3,)]
        proc = sp._proc  # noqa: SLF001 - and during one
        threading.Timer(0.5, proc.kill).start()
        with pytest.raises(InvalidRecord, match="sandbox process ended"):
            sp.run("SELECT count(*) FROM range(100000000) a, range(100000) b", None, TABLES)
        assert sp.run("SELECT max(seq) FROM events", None, TABLES) == [(3,)]
        with pytest.raises(InvalidRecord):  # refused before anything is sent
            sp.run("DELETE FROM events", None, TABLES)
        with pytest.raises(InvalidRecord, match="plain values"):
            sp.run("SELECT ?", [threading.Lock()], TABLES)
    finally:
        sp.close()
    assert sp._proc is None  # noqa: SLF001


def test_a_recalls_query_digest_is_shown_to_its_own_actor_only():
    # The digest is keyed, but any reader can have the runtime digest guesses (its own recalls):
    # another reader of a recall's evidence never sees its query's digest, through audit.sql or
    # the evidence, so it cannot test guesses against it.
    s = "/org/dg/user/alice/"
    with memactors.connect("memory://") as rt:
        rt.grant("admin", s)
        rt.grant("bot", s)
        r = rt.recall("does alice have hiv", actor="admin", task_id="t", allowed_scopes=[s], purpose="p")
        rt.recall("does alice have hiv", actor="bot", task_id="t", allowed_scopes=[s], purpose="p")
        q = "SELECT actor, query_digest FROM recalls ORDER BY actor"
        mine = rt.audit.sql(q, actor="admin")
        theirs = rt.audit.sql(q, actor="bot")
        assert dict(mine)["admin"] is not None and dict(mine)["bot"] is None
        assert dict(theirs)["admin"] is None and dict(theirs)["bot"] == dict(mine)["admin"]  # the same query
        assert rt.explain(r.recall_id, actor="admin")["query_digest"] is not None
        assert rt.explain(r.recall_id, actor="bot")["query_digest"] is None


def test_a_lone_surrogate_in_the_query_is_refused_typed(tmp_path):
    """Half a UTF-16 pair in the SQL made DuckDB's parser raise a TypeError."""
    with pytest.raises(InvalidRecord, match="lone surrogate"):
        sandbox.check_select("select '\ud800'")
    with memactors.connect("memory://") as rt:
        rt.grant("a1", "/org/sq/", write=True)
        with pytest.raises(InvalidRecord, match="lone surrogate"):
            rt.audit.sql("select '\ud800'", actor="a1")
        assert rt.audit.sql("select 1", actor="a1") == [(1,)]
