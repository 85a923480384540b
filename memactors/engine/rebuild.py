"""Rebuild L2 from the ledger alone (``memactors rebuild``): the ledger is the source of truth,
L2 a projection of it (DESIGN section 8).

Each memory's events are independent of every other memory's, so the ledger is read once,
split by memory id into one part per worker, and each part folded through the one projection
(``memactors.core.project.apply``) by ``fold_part``, which also decrypts and embeds. Without Ray
the workers (child processes, or this one) write their rows as fragments of the new table
themselves and one commit makes those the table (``store.l2_parts``); Ray tasks
(``memactors.actors.rebuild_tasks``: the nodes of a cluster may not share the folder) hand back
Arrow tables, written here as one. Then the indexes are built, the old table's versions cleaned
(nothing of the old table stays readable), all with pylance (``store.l2_parts``: LanceDB is not
imported), and the ledger marks every event applied. Run with the folder closed (the ledger
file is locked while a runtime has it open).
"""

from __future__ import annotations

import functools
import os
import threading
import time
from typing import TYPE_CHECKING, NamedTuple

import numpy as np
import orjson
import pyarrow as pa

from ..core import records as R
from ..core.config import Config
from ..embed import get_embedder
from ..store.entries import fold_rows
from ..store.layout import L2_DIR, L2_TABLE
from ..store.ledger_key import key_dir

if TYPE_CHECKING:
    from ..store.ledger import Ledger

SPLIT_EVENTS = 20_000  # a ledger this large is folded in parts, one per CPU (unless workers says)
# Ledger bytes from which it surely holds SPLIT_EVENTS (an event and its key take ~1 KB): the
# children are started before it is opened and counted.
SPLIT_BYTES = SPLIT_EVENTS * 1_000
_COLUMNS = "e.seq, e.action, e.scope, e.memory_id, e.reason, e.encrypted, e.snapshot, k.key"


def fold_part(events: pa.Table, embedder: tuple[str, int]) -> pa.Table:
    """Fold one part of the ledger (whole memories, in seq order) into its L2 rows, by memory id."""
    out = fold_rows(events)
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


class Target(NamedTuple):
    """Where the workers write their rows (the new L2 table's folder) and how they embed."""

    uri: str
    embedder: tuple[str, int]


def write_part(events: pa.Table, access: pa.Table, target: Target) -> dict:
    """Fold one part and write its rows as fragments of the new table: their metadata and rows."""
    return _write(with_access(fold_part(events, target.embedder), access), target)


def _write(table: pa.Table, target: Target) -> dict:
    from ..store.l2_parts import with_embedder, write_part as write

    schema = with_embedder(table.schema, *target.embedder)
    return {"fragments": write(table.replace_schema_metadata(schema.metadata), target.uri), "rows": table.num_rows}


# A fold is ``fold(n, read, target)``: ``read()`` gives the ``n`` parts (an iterator: each
# is read from the ledger as it is asked for, so a worker starts on its part while the next is
# read) and the access counts, so that a fold can get its workers going meanwhile.

def in_process(n: int, read, target: Target) -> list[dict]:
    parts, access = read()
    return [write_part(p, access, target) for p in parts]


def in_processes(n: int, read, target: Target, children: list | None = None) -> list[dict]:
    """The parts folded and written in ``n - 1`` child processes and this one, without Ray (the
    process host's rebuild): a child imports only the fold and pylance (no lancedb), about
    0.1-0.3 s; a local Ray would take seconds to start. ``children``: some started already
    (``spawn``, by ``rebuild`` before it opens the ledger: their imports overlap its open and
    read). This process folds the last part (read last) itself: it would only wait meanwhile,
    and one child fewer is one import and one part through a pipe fewer. Each child is
    ``python -m memactors.engine.rebuild`` reading its part and the access counts as Arrow
    streams on stdin and writing its fragments' metadata to stdout: through pipes, so the
    parts' data keys never touch a disk; no fork (lance is not fork-safe) and, unlike
    multiprocessing's spawn, no second run of the caller's own script."""
    children = list(children or [])
    for extra in children[max(0, n - 1):]:  # started for more parts than the ledger needs
        _stop(extra)
    if n < 2:
        return in_process(n, read, target)
    procs = children[:n - 1]
    procs += spawn(n - 1 - len(procs), target)
    out, failed = [], None
    try:
        parts, access = read()
        parts = iter(parts)
        # A thread each, started as each part is read: a child starts folding once its part is
        # in, not once the parts after it are read; each reads its whole input before it writes.
        feeders = []
        for proc, part in zip(procs, parts):  # zip asks procs first: the last part stays in parts
            feeders.append(threading.Thread(target=_feed, args=(proc.stdin, part, access), daemon=True))
            feeders[-1].start()
        try:
            out.append(write_part(next(parts), access, target))
        except Exception as exc:  # noqa: BLE001 - reported as a worker's failure, after the others
            failed = f"a rebuild worker failed (the part folded in this process): {exc!r}"[:2000]
        for proc in procs:
            res = proc.stdout.read()
            err = proc.stderr.read()
            if proc.wait() != 0 or not res:
                failed = failed or f"a rebuild worker failed ({proc.returncode}): {err.decode(errors='replace')[-2000:]}"
            else:
                out.append(orjson.loads(res))
        for t in feeders:
            t.join()
    finally:
        for proc in procs:
            _stop(proc)
    if failed:
        from ..store.l2_parts import drop_parts

        drop_parts(target.uri, [o["fragments"] for o in out])  # files no version reads: not left behind
        raise RuntimeError(failed)
    return out


def spawn(k: int, target: Target) -> list:
    """``k`` children of ``in_processes``, started: each waits on its stdin for a part."""
    import subprocess
    import sys

    return [subprocess.Popen([sys.executable, "-m", __name__, target.embedder[0], str(target.embedder[1]), target.uri],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            for _ in range(k)]


def _stop(proc) -> None:
    if proc.poll() is None:
        proc.kill()
    proc.wait()


def _feed(stream, part: pa.Table, access: pa.Table) -> None:
    try:
        _send(stream, part)
        _send(stream, access)
        stream.close()
    except (BrokenPipeError, OSError):  # the child died: its exit status says why
        pass


def _send(stream, table: pa.Table) -> None:
    with pa.ipc.new_stream(stream, table.schema) as w:
        w.write_table(table)


def _large(data_dir: str) -> bool:
    try:
        return os.path.getsize(os.path.join(data_dir, "ledger.duckdb")) >= SPLIT_BYTES
    except OSError:
        return False


def _commit(target: Target, parts: list[list[str]]) -> None:
    """The workers' fragments made the whole L2 table (or, failing that, removed), then its
    indexes built and the old table's versions removed."""
    from ..store.l2_parts import commit_parts, drop_parts, finish_table, with_embedder

    os.makedirs(os.path.dirname(target.uri), exist_ok=True)
    try:
        commit_parts(target.uri, with_embedder(R.memory_schema(target.embedder[1]), *target.embedder), parts)
    except BaseException:
        drop_parts(target.uri, parts)
        raise
    finish_table(target.uri)


def rebuild(data_dir: str, config: Config | None = None, *, workers: int | None = None,
            ledger: Ledger | None = None, fold=in_process, cpus: int = 1) -> dict:
    """Rebuild ``data_dir``'s L2 from its ledger; returns figures (events, rows, seconds,
    events/s). ``ledger``: the ledger writer's own open ledger (a rebuild at connect), else the
    file is opened here (the folder must not be open by a runtime). ``fold(n, read, target)``
    folds the ``n`` parts ``read()`` gives (``workers`` of them, default ``cpus``) for a
    ``Target``: it returns what each worker wrote (``write_part``'s) or, from Ray tasks, Arrow
    tables of rows (``with_access`` applied)."""
    cfg = config or Config()
    t0 = time.perf_counter()
    target = Target(os.path.join(data_dir, L2_DIR, f"{L2_TABLE}.lance"), (cfg.embedder.name, cfg.embedder.dim))
    own = ledger is None
    early = []
    if fold is in_processes and own and (workers or cpus) > 1 and _large(data_dir):
        # the children start now: their imports overlap the ledger's open and read (a child
        # started after them held its part back 0.2 s at 100k events)
        early = spawn((workers or cpus) - 1, target)
        fold = functools.partial(in_processes, children=early)
    try:
        if own:
            from ..store.ledger import Ledger  # here: a worker (this module's __main__) needs no DuckDB

            ledger = Ledger(os.path.join(data_dir, "ledger.duckdb"), key_dir(cfg.runtime.key_dir))
        upto = ledger.last_seq
        # a small ledger folds faster in one part than a worker starts
        n = workers or (max(1, int(cpus)) if ledger.count_events(upto) >= SPLIT_EVENTS else 1)
        t_read = 0.0

        def parts():
            nonlocal t_read
            for w in range(n):
                yield ledger.read_arrow(
                    f"""SELECT {_COLUMNS} FROM events e LEFT JOIN {ledger.live_keys} k ON k.memory_id = e.memory_id
                        WHERE e.seq <= {int(upto)} AND e.memory_id IS NOT NULL AND hash(e.memory_id) % {n} = {w}
                        ORDER BY e.seq""")
                t_read = time.perf_counter() - t0  # at the last part: the whole read

        def read():
            access = ledger.read_arrow("SELECT memory_id, retrieved_count, cited_count, last_accessed_at FROM access")
            return parts(), access

        folded = fold(n, read, target)
        t_fold = time.perf_counter() - t0 - t_read
        if folded and isinstance(folded[0], pa.Table):  # Ray tasks' rows, written here
            folded = [_write(pa.concat_tables(folded).sort_by("memory_id"), target)]
        rows = sum(f["rows"] for f in folded)
        _commit(target, [f["fragments"] for f in folded])
        ledger.mark_all_applied(upto)
        n_events = ledger.count_events(upto)
    finally:
        for proc in early:  # any a failure before the fold left waiting
            _stop(proc)
        if own and ledger is not None:
            ledger.close()
    secs = time.perf_counter() - t0
    return {"events": int(n_events), "rows": rows, "workers": n, "seconds": round(secs, 3),
            "read_s": round(t_read, 3), "fold_embed_s": round(t_fold, 3),
            "events_per_s": round(n_events / secs) if secs else None}


if __name__ == "__main__":  # a worker of ``in_processes``: a part and the access counts in, fragments out
    import sys

    part = pa.ipc.open_stream(sys.stdin.buffer).read_all()
    access = pa.ipc.open_stream(sys.stdin.buffer).read_all()
    written = write_part(part, access, Target(sys.argv[3], (sys.argv[1], int(sys.argv[2]))))
    sys.stdout.buffer.write(orjson.dumps(written))
