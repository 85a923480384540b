"""The GC sweep's plan phase on Ray (DESIGN sections 7 and 9): the dry run over L2.

``plan_dataset`` pins one version of the Lance dataset, cuts its fragments into row ranges,
deals the ranges out to ``workers`` Ray tasks in order, and each task scans its ranges
reading only the narrow columns the rules need (no vectors, no content) and runs
``core.lifecycle``'s rules on each batch. The partial plans come back in range order, so the
merged plan is the same whatever the worker count or the node layout. Nothing is changed:
applying a plan is the owners' job (ledger events, then one Lance delete per table).

Tasks open the dataset themselves (by path and version): nothing but names and numbers is
shipped to them, and Ray workers are spawned processes, so nothing forks after Lance is loaded.
The path must be readable from every node (a shared folder or an object-store URI).
"""

from __future__ import annotations

import os
import time
from contextlib import contextmanager
from dataclasses import dataclass

from ..core.config import Config, LifecycleConfig
from ..core.errors import InvalidRecord
from ..core.gc_plan import PLAN_COLUMNS, Plan, PlanBuilder, merge
from ..core.lifecycle import lifecycle_config

BATCH_ROWS = 65_536  # rows per scanned batch: the rule arrays stay in cache
MIN_RANGE_ROWS = 65_536  # a range smaller than this costs more in task overhead than it saves


@dataclass(frozen=True, slots=True)
class Range:
    """Rows ``offset .. offset+limit`` (live rows, deletions skipped) of one fragment."""

    fragment_id: int
    offset: int
    limit: int
    row_bytes: float  # estimated stored bytes per row in this fragment (all columns)


def resolve_dataset(uri_or_path: str) -> str:
    """The Lance dataset behind a path: the dataset itself, or the memories table inside a
    LanceDB folder (an L2 store's folder)."""
    # Imported here: lancedb hooks every fork once loaded, and a driver may start Ray after this.
    from ..store.lance_store import TABLE

    if not isinstance(uri_or_path, (str, os.PathLike)):
        raise InvalidRecord("the dataset must be given as a path or URI string")
    path = os.fspath(uri_or_path)
    inner = os.path.join(path, f"{TABLE}.lance")
    if "://" not in path and not os.path.isdir(os.path.join(path, "_versions")) and os.path.isdir(inner):
        return inner
    return path


def ranges(fragments, workers: int) -> list[Range]:
    """Each fragment as one or more row ranges, so ``workers`` tasks can share the rows evenly
    even when compaction has left a few large fragments. In fragment order."""
    live = [(f, f.metadata.num_rows) for f in fragments]
    total = sum(n for _, n in live)
    step = max(MIN_RANGE_ROWS, -(-total // max(1, workers * 2)))  # two ranges a worker: evens out the tail
    out = []
    for frag, n in live:
        md = frag.metadata
        size = sum((d.file_size_bytes or 0) for d in md.files)
        row_bytes = size / md.physical_rows if md.physical_rows else 0.0
        for offset in range(0, n, step):
            out.append(Range(frag.fragment_id, offset, min(step, n - offset), row_bytes))
    return out


def deal(items: list[Range], workers: int) -> list[list[Range]]:
    """Consecutive groups of ranges, about the same number of rows in each (at most
    ``workers`` groups, none empty)."""
    total = sum(r.limit for r in items)
    groups: list[list[Range]] = []
    target = total / max(1, workers)
    acc = 0
    for r in items:
        if not groups or (acc >= target * len(groups) and len(groups) < workers):
            groups.append([])
        groups[-1].append(r)
        acc += r.limit
    return groups


@contextmanager
def _on_core(core: int | None):
    """Keep this process on one CPU core for the block (Linux), then give its cores back. Lance
    decodes on helper threads, so an unpinned scan uses more than the one CPU a task reserves."""
    if core is None or not hasattr(os, "sched_setaffinity") or not os.path.isdir("/proc/self/task"):
        yield
        return
    # Every thread: affinity is per thread on Linux, and Lance's pool threads already exist.
    before = {}
    for tid in os.listdir("/proc/self/task"):
        try:
            before[int(tid)] = os.sched_getaffinity(int(tid))
        except OSError:  # the thread ended meanwhile
            pass
    cores = sorted(os.sched_getaffinity(0))
    for tid in before:
        try:
            os.sched_setaffinity(tid, {cores[core % len(cores)]})
        except OSError:
            pass
    try:
        yield
    finally:
        for tid, mask in before.items():
            try:
                os.sched_setaffinity(tid, mask)
            except OSError:
                pass


def _plan_ranges(uri: str, version: int, items: list[Range], now_us: int, lc: LifecycleConfig,
                 columns: list[str], core: int | None = None) -> Plan:
    """One task's share: scan its ranges batch by batch and keep what the rules pick."""
    import lance  # in the worker: the driver ships names and numbers only

    with _on_core(core):
        cpu0, wall0 = time.process_time(), time.perf_counter()
        ds = lance.dataset(uri, version=version)
        builder = PlanBuilder(now_us, lc)
        for r in items:
            frag = ds.get_fragment(r.fragment_id)
            for batch in frag.to_batches(columns=columns, offset=r.offset, limit=r.limit, batch_size=BATCH_ROWS):
                builder.add(batch, r.row_bytes)
        plan = builder.finish()
        plan.source = {"cpu_seconds": time.process_time() - cpu0, "task_seconds": time.perf_counter() - wall0,
                       "node": _node()}
    return plan


def _node() -> str | None:
    import sys

    ray = sys.modules.get("ray")  # never imported for this: the process host plans without Ray
    return ray.get_runtime_context().get_node_id() if ray is not None and ray.is_initialized() else None


_TASK = []


def _plan_task():
    """``_plan_ranges`` as a Ray task (made on first use: importing this module needs no Ray)."""
    if not _TASK:
        import ray

        _TASK.append(ray.remote(num_cpus=1, max_retries=2)(_plan_ranges))
    return _TASK[0]


def plan_in_process(uri_or_path: str, now_us: int, cfg: LifecycleConfig | Config | None = None, *,
                    workers: int | None = None) -> Plan:
    """``plan_dataset``'s plan, scanned in this process (the process host): the same ranges in
    the same order, so the same plan."""
    lc = lifecycle_config(cfg)
    wall0 = time.perf_counter()
    uri = resolve_dataset(uri_or_path)
    import lance

    ds = lance.dataset(uri)
    columns = list(PLAN_COLUMNS) + (["contradicted"] if "contradicted" in ds.schema.names else [])
    items = ranges(ds.get_fragments(), workers or 1)
    parts = [_plan_ranges(uri, ds.version, g, int(now_us), lc, columns) for g in deal(items, workers or 1)]
    plan = merge(parts, now_us=int(now_us))
    plan.seconds = time.perf_counter() - wall0
    plan.source = {"dataset": uri, "version": ds.version, "fragments": len(ds.get_fragments()), "ranges": len(items),
                   "workers": len(parts), "nodes": 1, "cpu_seconds": sum(p.source["cpu_seconds"] for p in parts),
                   "task_seconds": [round(p.source["task_seconds"], 6) for p in parts]}
    return plan


def plan_dataset(uri_or_path: str, now_us: int, cfg: LifecycleConfig | Config | None = None, *,
                 workers: int | None = None, pin_cores: bool = False) -> Plan:
    """The dry-run plan of a GC sweep over the Lance dataset at ``uri_or_path`` (a dataset, or
    an L2 store's LanceDB folder) at ``now_us`` (from the injected clock).

    ``workers``: Ray tasks to split the scan into; None = ``[lifecycle].plan_workers``, and if
    that is 0, the CPUs the Ray cluster offers. Starts a local Ray if none is running (Ray's
    default). The plan's ``source`` names the dataset version scanned, the ranges, the workers,
    the nodes used and the tasks' CPU seconds.

    ``pin_cores`` is for measurement: task i keeps its process on core i (modulo the node's
    cores) while it runs, so that one worker is one core. Leave it off in production: two
    sweeps at once would share cores."""
    lc = lifecycle_config(cfg)
    if isinstance(now_us, bool) or not isinstance(now_us, int):
        raise InvalidRecord("now_us must be an integer (microseconds since the epoch)")
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
        raise InvalidRecord("workers must be a positive integer")
    import ray

    wall0 = time.perf_counter()
    uri = resolve_dataset(uri_or_path)
    if not ray.is_initialized():
        ray.init()
    import lance  # after Ray's processes are started: lance warns on any fork once loaded

    ds = lance.dataset(uri)
    n_workers = workers or lc.plan_workers or max(1, int(ray.cluster_resources().get("CPU", 1)))
    columns = list(PLAN_COLUMNS) + (["contradicted"] if "contradicted" in ds.schema.names else [])
    items = ranges(ds.get_fragments(), n_workers)
    groups = deal(items, n_workers)
    # SPREAD: on a cluster the tasks go to different nodes, so more nodes scan in parallel.
    refs = [_plan_task().options(scheduling_strategy="SPREAD").remote(uri, ds.version, g, int(now_us), lc, columns,
                                                                    i if pin_cores else None)
            for i, g in enumerate(groups)]
    parts = ray.get(refs)
    plan = merge(parts, now_us=int(now_us))
    plan.seconds = time.perf_counter() - wall0
    plan.source = {
        "dataset": uri, "version": ds.version, "fragments": len(ds.get_fragments()), "ranges": len(items),
        "workers": len(groups), "nodes": len({p.source.get("node") for p in parts}),
        "cpu_seconds": sum(p.source["cpu_seconds"] for p in parts),
        "task_seconds": [round(p.source["task_seconds"], 6) for p in parts],
    }
    return plan


def bare_scan(uri_or_path: str, columns: list[str] | tuple[str, ...] = PLAN_COLUMNS, *,
              pin_core: int | None = None) -> dict:
    """The floor a plan is measured against: the same fragment scans of ``columns``, in this
    process (on core ``pin_core`` only, if given), doing nothing with the rows. Returns rows,
    wall seconds and CPU seconds."""
    import lance

    ds = lance.dataset(resolve_dataset(uri_or_path))
    with _on_core(pin_core):
        cpu0, wall0 = time.process_time(), time.perf_counter()
        rows = 0
        for frag in ds.get_fragments():
            for batch in frag.to_batches(columns=list(columns), batch_size=BATCH_ROWS):
                rows += batch.num_rows
        return {"rows": rows, "seconds": time.perf_counter() - wall0, "cpu_seconds": time.process_time() - cpu0}
