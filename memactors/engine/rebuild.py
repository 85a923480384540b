"""Rebuild L2 from the ledger alone (``memactors rebuild``): the ledger is the source of truth,
L2 a projection of it (DESIGN section 8).

Each memory's events are independent of every other memory's, so the ledger is read once,
split by memory id into one part per worker, and each part folded through the one projection
(``memactors.core.project.apply``) by ``fold_part``, which also decrypts and embeds: in Ray
tasks on the Ray host (``memactors.actors.rebuild_tasks``), in this process otherwise; the parts
come back as Arrow tables and are written as one new L2 table. Then the old table's versions are
cleaned (nothing of the old table stays readable), the indexes built, and the ledger marks
every event applied. Run with the folder closed (the ledger file is locked while a runtime
has it open).
"""

from __future__ import annotations

import os
import threading
import time

import numpy as np
import pyarrow as pa

from ..core import records as R
from ..core.config import Config
from ..core.project import Rows, apply
from ..embed import get_embedder
from ..store.entries import decode
from ..store.ledger import Ledger
from ..store.ledger_key import key_dir

SPLIT_EVENTS = 20_000  # a ledger this large is folded in parts, one per CPU (unless workers says)
_COLUMNS = "e.seq, e.action, e.scope, e.memory_id, e.reason, e.encrypted, e.snapshot, k.key"


def fold_part(events: pa.Table, embedder: tuple[str, int]) -> pa.Table:
    """Fold one part of the ledger (whole memories, in seq order) into its L2 rows."""
    rows = Rows()
    cols = {c: events.column(c).to_pylist() for c in events.column_names}
    for i in range(events.num_rows):
        ch = decode(cols["action"][i], cols["scope"][i], cols["memory_id"][i], cols["reason"][i],
                    cols["encrypted"][i], cols["snapshot"][i] or b"", cols["key"][i])
        if ch is not None:
            apply(rows, ch)
    out = rows.l2_rows()
    vecs = get_embedder(*embedder).embed([R.embedded_text(r) for r in out]) if out else np.zeros((0, embedder[1]))
    return R.to_arrow(out, vecs, embedder[1])


def with_access(table: pa.Table, access: pa.Table) -> pa.Table:
    """The rows with the access counts the ledger keeps beside the events (recalls and citations,
    what the owners' flushes patch into L2 as they go): a rebuilt L2 has them too."""
    if not access.num_rows or not table.num_rows:
        return table
    import pyarrow.compute as pc

    at = pc.index_in(table.column("memory_id"), value_set=access.column("memory_id"))
    has = pc.is_valid(at)
    for name in ("retrieved_count", "cited_count", "last_accessed_at"):
        col = table.column(name)
        vals = access.column(name).cast(pa.int64() if name == "last_accessed_at" else col.type)
        if name == "last_accessed_at":
            vals = vals.cast(col.type)
        taken = pc.take(vals, pc.fill_null(at, 0))
        table = table.set_column(table.schema.get_field_index(name), table.schema.field(name),
                                 pc.if_else(has, taken, col))
    return table


def in_process(parts: list[pa.Table], embedder: tuple[str, int]) -> list[pa.Table]:
    return [fold_part(p, embedder) for p in parts]


def in_processes(parts: list[pa.Table], embedder: tuple[str, int]) -> list[pa.Table]:
    """The parts folded in as many child processes, without Ray (the process host's rebuild):
    a child imports only the fold (no lancedb), about half a second, where a local Ray takes
    seconds to start. Each is ``python -m memactors.engine.rebuild`` reading its part as an
    Arrow stream on stdin and writing its rows to stdout: through pipes, so the parts' data keys
    never touch a disk; no fork (lance is not fork-safe) and, unlike multiprocessing's spawn, no
    second run of the caller's own script."""
    if len(parts) < 2:
        return in_process(parts, embedder)
    import subprocess
    import sys

    procs = [subprocess.Popen([sys.executable, "-m", __name__, embedder[0], str(embedder[1])],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE) for _ in parts]
    try:
        # Each child reads its whole part before it writes: feeding them in turn cannot deadlock.
        for proc, part in zip(procs, parts):
            _send(proc.stdin, part)
            proc.stdin.close()
        out = []
        for proc in procs:
            table = pa.ipc.open_stream(proc.stdout).read_all() if proc.stdout.peek(1) else None
            err = proc.stderr.read()
            if proc.wait() != 0 or table is None:
                raise RuntimeError(f"a rebuild worker failed ({proc.returncode}): {err.decode(errors='replace')[-2000:]}")
            out.append(table)
        return out
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
            proc.wait()


def _send(stream, table: pa.Table) -> None:
    with pa.ipc.new_stream(stream, table.schema) as w:
        w.write_table(table)


def _import_l2() -> None:
    try:
        from ..store import lance_store  # noqa: F401
    except Exception:  # noqa: BLE001 - imported again where it is used, and raised there
        pass


def rebuild(data_dir: str, config: Config | None = None, *, workers: int | None = None,
            ledger: Ledger | None = None, fold=in_process, cpus: int = 1) -> dict:
    """Rebuild ``data_dir``'s L2 from its ledger; returns figures (events, rows, seconds,
    events/s). ``ledger``: the ledger writer's own open ledger (a rebuild at connect), else the
    file is opened here (the folder must not be open by a runtime). ``fold(parts, embedder)``
    folds the parts (``workers`` of them, default ``cpus``)."""
    cfg = config or Config()
    t0 = time.perf_counter()
    # lancedb's import (~0.7 s) runs while the ledger is read and folded (this thread mostly
    # waits on DuckDB and the workers' pipes then), not after them.
    loading = threading.Thread(target=_import_l2, name="memactors-import-lancedb", daemon=True)
    loading.start()
    own = ledger is None
    if own:
        ledger = Ledger(os.path.join(data_dir, "ledger.duckdb"), key_dir(cfg.runtime.key_dir))
    try:
        upto = ledger.last_seq
        # a small ledger folds faster in one part than a worker starts
        n = workers or (max(1, int(cpus)) if ledger.count_events(upto) >= SPLIT_EVENTS else 1)
        parts = []
        for w in range(n):
            tbl = ledger.con.cursor().sql(
                f"""SELECT {_COLUMNS} FROM events e LEFT JOIN keys k ON k.memory_id = e.memory_id
                    WHERE e.seq <= {int(upto)} AND e.memory_id IS NOT NULL AND hash(e.memory_id) % {n} = {w}
                    ORDER BY e.seq""").to_arrow_table()
            parts.append(tbl)
        t_read = time.perf_counter() - t0
        table = pa.concat_tables(fold(parts, (cfg.embedder.name, cfg.embedder.dim))).sort_by("memory_id")
        table = with_access(table, ledger.con.cursor().sql(
            "SELECT memory_id, retrieved_count, cited_count, last_accessed_at FROM access").to_arrow_table())
        t_fold = time.perf_counter() - t0 - t_read
        loading.join()
        from ..store.lance_store import L2Store  # lancedb only where it is needed

        l2 = L2Store(os.path.join(data_dir, "l2"), cfg.embedder.name, cfg.embedder.dim,
                     cache_mb=cfg.runtime.l2_cache_mb, replace_with=table)
        l2.purge_old_versions()
        ledger.mark_all_applied(upto)
        n_events = ledger.count_events(upto)
    finally:
        if own:
            ledger.close()
    secs = time.perf_counter() - t0
    return {"events": int(n_events), "rows": table.num_rows, "workers": n, "seconds": round(secs, 3),
            "read_s": round(t_read, 3), "fold_embed_s": round(t_fold, 3),
            "events_per_s": round(n_events / secs) if secs else None}


if __name__ == "__main__":  # a worker of ``in_processes``: a part in on stdin, its rows out on stdout
    import sys

    part = pa.ipc.open_stream(sys.stdin.buffer).read_all()
    _send(sys.stdout.buffer, fold_part(part, (sys.argv[1], int(sys.argv[2]))))
