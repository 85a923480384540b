"""A ledger file damaged on disk (bytes overwritten: a block that fails DuckDB's checksum), on
the process host: ``audit verify`` reports it (not ok, naming the table), and every other call
that reads the damaged block raises a typed error, never DuckDB's own. Also ``python -m
memactors`` and the quoting of the ``--data`` a message suggests."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import time

import duckdb
import pytest
from click.testing import CliRunner

import memactors
from memactors import LedgerTampered, MemactorsError, ServerError, StoreError
from memactors.store.ledger import verify_folder

S = "/org/acme/user/alice/"
CFG = {"runtime": {"num_owners": 1}}
HEADER, BLOCK = 3 * 4096, 262144  # DuckDB's file header, and its block size (each block led by its checksum)


def _folder(data_dir: str) -> str:
    with memactors.connect(data_dir, config=CFG) as rt:
        rt.grant("agent", S, write=True)
        for i in range(2):
            rt.write(S, f"alice note {i} about hiking", actor="agent")
    return data_dir


def _pad(data_dir: str, table: str, n: int = 20_000) -> None:
    """Rows enough for ``table`` to fill blocks of its own (a small table shares its block with
    others, and damage there would show at open in another table). Rows the runtime writes
    itself, or harmless ones: recall evidence, access counts L2 has yet to take (of memories
    it does not hold), seqs applied past the ledger's end, idempotency keys nobody sends."""
    now = int(time.time() * 1_000_000)
    rows = {
        "recalls": f"""SELECT 'pad-' || i, {now}, 'agent', 'task', 'answer', ['{S}'], ['{S}'], 'digest-' || i, 5,
                              '[{{"memory_id": "pad-' || i || '", "scope": "{S}", "score": 0.5}}]', '{{}}', '[]'
                       FROM range({n}) t(i)""",
        "access": f"SELECT printf('%032d', i), '{S}', 1, 0, {now}, 1, 2, 1 FROM range({n}) t(i)",
        "l2_applied": f"SELECT 1000000000 + i FROM range({n}) t(i)",
        "idempotency": f"SELECT 'pad-' || i, {now}, '{{}}'::BLOB, NULL FROM range({n}) t(i)",
    }[table]
    con = duckdb.connect(os.path.join(data_dir, "ledger.duckdb"))
    con.execute(f"INSERT INTO {table} {rows}").fetchall()
    con.execute("CHECKPOINT").fetchall()
    con.close()


def _damage(data_dir: str, table: str, column: str | None = None) -> None:
    """Overwrite bytes inside a segment of ``table`` (of ``column``, if given) in a block no
    other table uses."""
    path = os.path.join(data_dir, "ledger.duckdb")
    con = duckdb.connect(path, read_only=True)
    blocks: dict[str, set[int]] = {}
    segments = []
    for (t,) in con.execute("SELECT table_name FROM duckdb_tables()").fetchall():
        for name, block, offset, size in con.execute(
                f"""SELECT column_name, block_id, block_offset, count FROM pragma_storage_info('{t}')
                    WHERE block_id >= 0 AND persistent""").fetchall():
            blocks.setdefault(t, set()).add(block)
            if t == table and column in (None, name):
                segments.append((block, offset, size))
    con.close()
    others = set().union(*(b for t, b in blocks.items() if t != table))
    block, offset = next((b, o) for b, o, n in segments if b not in others and n > 1000)
    with open(path, "r+b") as f:
        f.seek(HEADER + block * BLOCK + 8 + offset + 64)
        f.write(b"\xde\xad\xbe\xef" * 64)


def _damaged(tmp_path, table: str, column: str | None = None) -> str:
    data_dir = _folder(str(tmp_path / "data"))
    _pad(data_dir, table)
    _damage(data_dir, table, column)
    return data_dir


def _not_duckdb(exc: BaseException) -> None:
    assert isinstance(exc, MemactorsError), type(exc)
    assert "duckdb" not in type(exc).__module__


def test_verify_reads_every_table_and_reports_a_damaged_one(tmp_path):
    """The red team's case: evidence tables are read by nothing at open nor, before, by the
    walk, so verify said ok and the next stats() raised DuckDB's error."""
    data_dir = _damaged(tmp_path, "recalls", "hits")  # what stats() counts
    rt = memactors.connect(data_dir, config=CFG)
    try:
        v = rt.audit.verify()
        assert v["ok"] is False and v["table"] == "recalls" and "damaged" in v["reason"]
        assert v["events"] > 0
        with pytest.raises(LedgerTampered, match="damaged"):
            rt.stats()
    finally:
        try:
            rt.close()
        except Exception as exc:  # noqa: BLE001 - checked: typed, if anything
            _not_duckdb(exc)
    assert verify_folder(data_dir)["table"] == "recalls"


def test_closing_over_a_damaged_table_raises_a_typed_error(tmp_path):
    """Close flushes, and the flush reads the access counts: DuckDB's error came out of close()."""
    data_dir = _damaged(tmp_path, "access", "memory_id")
    rt = memactors.connect(data_dir, config=CFG)
    v = rt.audit.verify()
    assert v["ok"] is False and v["table"] == "access"
    with pytest.raises(LedgerTampered, match="damaged"):
        rt.close()
    rt.close()  # closed all the same: a second close is quiet
    with pytest.raises(memactors.RuntimeClosed):
        rt.stats()


@pytest.mark.parametrize("table", ["l2_applied", "idempotency"])
def test_a_damaged_table_read_at_open_refuses_with_ledger_tampered(tmp_path, table):
    """l2_applied (read by the owners' replay) came out as DuckDB's error, or as its "connection
    is busy" when the ledger was shut while another owner still read; idempotency as a
    StoreError that left the file open read-write, so verify_folder could not open it."""
    data_dir = _damaged(tmp_path, table)
    with pytest.raises(LedgerTampered, match="damaged"):
        memactors.connect(data_dir, config=CFG)
    v = verify_folder(data_dir)  # in the same process: the refused runtime left the file closed
    assert v["ok"] is False and v["table"] == table


@pytest.mark.parametrize("table", ["recalls", "access", "idempotency"])
def test_cli_audit_verify_prints_the_failed_verdict_and_exits_1(tmp_path, table):
    from memactors import cli as cli_mod

    data_dir = _damaged(tmp_path, table)
    res = CliRunner().invoke(cli_mod.cli, ["audit", "verify", "--json", "--data", data_dir])
    assert res.exit_code == 1, (res.output, res.exception)
    v = json.loads(res.output)
    assert v["ok"] is False and v["table"] == table and "damaged" in v["reason"]


@pytest.mark.parametrize("how", ["overwritten", "cut short"])
def test_cli_audit_verify_exits_1_for_a_ledger_file_that_is_not_one(tmp_path, how):
    # Exit code 1 means broken, however the file is: overwritten with other bytes or cut short.
    from memactors import cli as cli_mod

    data_dir = _folder(str(tmp_path / "d"))
    path = os.path.join(data_dir, "ledger.duckdb")
    if how == "overwritten":
        with open(path, "wb") as f:
            f.write(b"not a database\n")
    else:
        with open(path, "r+b") as f:
            f.truncate(4096)
    res = CliRunner().invoke(cli_mod.cli, ["audit", "verify", "--json", "--data", data_dir])
    assert res.exit_code == 1, (res.output, res.exception)
    v = json.loads(res.output)
    assert v["ok"] is False and "damaged" in v["reason"]
    with pytest.raises(LedgerTampered, match="damaged"):
        memactors.connect(data_dir, config=CFG, host="process")


def test_open_runtime_reports_the_work_s_error_not_close_s(tmp_path):
    from memactors.server import open_runtime

    data_dir = _damaged(tmp_path, "access")
    with pytest.raises(KeyError, match="the work's own"):
        with open_runtime(data_dir):
            raise KeyError("the work's own")


def test_process_host_types_a_duckdb_error_that_gets_out():
    from memactors.runtime.process_host import ProcessHost

    host = ProcessHost()
    damaged = host.typed(duckdb.Error("Corrupt database file: computed checksum 1 does not match stored checksum 2"))
    assert isinstance(damaged, LedgerTampered)
    other = host.typed(duckdb.IOException("IO Error: No space left on device"))
    assert type(other) is StoreError
    mine = NotImplementedError("x")
    assert host.typed(mine) is mine


def test_python_dash_m_memactors_runs_the_cli():
    res = subprocess.run([sys.executable, "-m", "memactors", "--help"], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    assert "Usage: " in res.stdout and "audit" in res.stdout


def test_suggested_data_paths_are_quoted(tmp_path):
    from memactors.runtime import ray_link
    from memactors.server import open_runtime
    from memactors.store import runtime_file

    shown = str(tmp_path / "my data")
    with pytest.raises(StoreError) as err:
        with open_runtime(shown):
            pass
    assert f"--data {shlex.quote(shown)}`" in str(err.value)

    os.makedirs(shown)
    runtime_file.write(shown, {"address": "127.0.0.1:1", "data_dir": "/elsewhere"})
    with pytest.raises(ServerError) as err:
        runtime_file.attachable(shown, shown)
    assert f"down --data {shlex.quote(shown)}`" in str(err.value)
    runtime_file.write(shown, {"address": "127.0.0.1:1", "data_dir": shown, "ray_pid": 2 ** 22 + 12345})
    with pytest.raises(ServerError) as err:
        runtime_file.attachable(shown, shown)
    assert f"down --data {shlex.quote(shown)}`" in str(err.value)

    with pytest.raises(ServerError) as err:
        ray_link._attach({"address": "127.0.0.1:1"}, "ns", shown)  # nothing answers there
    assert f"down --data {shlex.quote(shown)}`" in str(err.value)
