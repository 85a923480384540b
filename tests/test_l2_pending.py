"""A new folder's L2 table is opened by its first flush, not at connect (``engine/l2_pending``):
until then every verb answers as it would over an empty table, and nothing is lost or missed."""

from __future__ import annotations

import os
import subprocess
import sys

import memactors
from memactors.engine.l2_pending import l2_table_exists
from memactors.runtime.backup import restore

# A long flush interval: the first flush is the test's own (or close's).
CFG = {"runtime": {"num_owners": 2, "l2_flush_interval_s": 3600}}
S = "/org/acme/user/u/"


def _open(path):
    rt = memactors.connect(str(path), config=CFG, host="process")
    rt.grant("ag", S, write=True)
    return rt


def _recall(rt, q):
    return rt.recall(q, actor="ag", task_id="t", allowed_scopes=[S], purpose="p", top_k=5).hits


def test_writes_are_recalled_before_and_after_the_first_flush(tmp_path):
    rt = _open(tmp_path / "data")
    try:
        l2 = str(tmp_path / "data" / "l2")
        st = rt.stats()  # it flushes first: nothing to flush, so still no table, and no rows
        assert st["memories"]["rows"] == 0 and st["memories"]["by_status"] == {} and not l2_table_exists(l2)
        w = rt.write(S, "the deploy window is Tuesday", actor="ag")
        assert not l2_table_exists(l2)
        assert [h.memory_id for h in _recall(rt, "when is the deploy window?")] == [w.memory_id]
        assert rt.stats()["memories"]["by_status"] == {"active": 1}  # flushed by stats: the table exists
        assert l2_table_exists(l2)
        rt._calls.get([o.drop_hot.remote() for o in rt._owners])  # noqa: SLF001 - served from Lance now
        assert [h.memory_id for h in _recall(rt, "when is the deploy window?")] == [w.memory_id]
    finally:
        rt.close()
    rt = memactors.connect(str(tmp_path / "data"), config=CFG, host="process")  # an existing table: opened at start
    try:
        assert [h.memory_id for h in _recall(rt, "when is the deploy window?")] == [w.memory_id]
    finally:
        rt.close()


def test_close_flushes_what_no_flush_wrote_yet(tmp_path):
    rt = _open(tmp_path / "data")
    w = rt.write(S, "the office moved to Leeds", actor="ag")
    rt.close()
    assert l2_table_exists(str(tmp_path / "data" / "l2"))
    rt = memactors.connect(str(tmp_path / "data"), config=CFG, host="process")
    try:
        rt._calls.get([o.drop_hot.remote() for o in rt._owners])  # noqa: SLF001
        assert [h.memory_id for h in _recall(rt, "where is the office?")] == [w.memory_id]
        assert rt.audit.verify()["ok"]
    finally:
        rt.close()


def test_verify_gc_forget_and_backup_of_a_folder_never_flushed(tmp_path):
    rt = _open(tmp_path / "data")
    try:
        assert rt.audit.verify()["ok"]
        assert rt.gc(dry_run=True).plan.rows.num_rows == 0
        assert rt.gc().applied["events"] == 0
        w = rt.write(S, "my locker number is 4411", actor="ag", subject="me", predicate="locker_number", object="4411")
        out = rt.forget(w.memory_id, actor="ag", reason="asked", erase="fact")
        assert (out["decision"], out["forgotten"]) == ("forgotten", [w.memory_id])
        assert _recall(rt, "what is my locker number?") == []
        manifest = rt.backup(tmp_path / "bak")
        assert manifest["rows"] == 0
    finally:
        rt.close()
    got = restore(tmp_path / "bak", tmp_path / "restored")
    assert got["verified"]["ok"]
    rt = memactors.connect(str(tmp_path / "restored"), config=CFG, host="process")
    try:
        rt.grant("ag", S, write=True)
        assert _recall(rt, "what is my locker number?") == []
    finally:
        rt.close()


def test_connect_and_a_first_write_load_no_lancedb(tmp_path):
    script = ("import sys, memactors; rt = memactors.connect(sys.argv[1], host='process'); "
              "rt.grant('ag', '/org/acme/', write=True); rt.write('/org/acme/', 'a first note', actor='ag'); "
              "print('lancedb' in sys.modules); rt.close(); "
              "import os; print(os.path.isdir(os.path.join(sys.argv[1], 'l2', 'memories.lance')))")
    out = subprocess.run([sys.executable, "-c", script, str(tmp_path / "data")], capture_output=True, text=True,
                         timeout=300, env=dict(os.environ, MEMACTORS_HOST="process"))
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["False", "True"]  # loaded only to flush at close; the row is on disk
