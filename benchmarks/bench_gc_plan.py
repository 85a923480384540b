"""The GC sweep's plan phase (dry run) over a 1,000,000-memory L2 dataset, in one run:

    RAY_AUTH_MODE=disabled .venv/bin/python benchmarks/bench_gc_plan.py --n 1000000 --out benchmarks/out/gc_plan.json

For two datasets of the same world, a first sweep (nothing swept for a year: most memories
are due) and a daily sweep (yesterday's sweep applied: few are due), each twice, pinned (every
scanning process held on one core: one worker is one core) and unpinned (Lance decodes on
helper threads, so one unpinned worker uses more than one core):
1. a bare scan of the plan's columns (the floor), in this process;
2. the plan with 1 and with 2 Ray workers on a local Ray of 2 CPUs, runs interleaved so all
   see the same machine load; best of ``--repeat`` wall times, plus the tasks' CPU seconds
   (rows per CPU-second is the per-core rate, and stays honest on a machine shared with others),
   the slowest task's time and what the driver and Ray add;
then 3. the first-sweep plan on a two-node ``ray.cluster_utils.Cluster`` (one CPU each):
identical to the one-node plan?

Data (seeded, vectorised; ``generate``): 1,000 tenants, a simulated year ending at "now", the
memory schema of L2 with categories drawn per memory and expiries from their TTL policies
(``core.lifecycle.ttl_policy``), 5% per-write TTL overrides, refreshes, superseded version chains,
every status, confidences by source kind, recall times, and an extra ``contradicted`` flag on
1.5% of live memories (the L2 schema has none yet; the plan reads it when present). Vectors are
zeros of dimension 8: the plan never reads them, and the bytes estimate counts what is stored.
No sweep ran during the year, so this is a first sweep: many memories are due.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time

import numpy as np
import orjson
import pyarrow as pa
import pyarrow.compute  # noqa: F401 - pa.compute

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
os.environ.setdefault("RAY_AUTH_MODE", "disabled")

from memactors.core import gc_plan as G  # noqa: E402
from memactors.core.clock import US_PER_DAY, ManualClock  # noqa: E402
from memactors.core.lifecycle import CATEGORIES, ttl_policy  # noqa: E402
from memactors.core.records import SOURCE_CONFIDENCE, fill_columns, memory_schema  # noqa: E402

DAY = US_PER_DAY
START = ManualClock().now_us()  # 2026-01-01
NOW = START + 365 * DAY
DIM = 8
P_CATEGORY = [0.30, 0.15, 0.15, 0.15, 0.05, 0.20]  # CATEGORIES order
P_SOURCE = [0.30, 0.05, 0.15, 0.20, 0.15, 0.07, 0.05, 0.03]  # SOURCE_CONFIDENCE order
SENTENCES = [("the user prefers " + "short answers about the project schedule " * (1 + i % 4))[: 40 + (i * 37) % 120]
             for i in range(256)]


def generate(n: int, tenants: int = 1000, seed: int = 0) -> pa.Table:
    """n memories of the L2 schema (+ ``contradicted``) as they stand at NOW after a year."""
    rng = np.random.default_rng(seed)
    # Version chains: most memories stand alone, some were updated 1-3 times.
    lengths = rng.choice([1, 2, 3, 4], size=n, p=[0.75, 0.15, 0.07, 0.03])
    lengths = lengths[: np.searchsorted(np.cumsum(lengths), n) + 1]
    chain = np.repeat(np.arange(len(lengths)), lengths)[:n]
    first = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    pos = np.arange(n) - first[chain]
    last_in_chain = np.r_[chain[1:] != chain[:-1], True]
    # Each chain starts in the year; each later version comes some weeks after the one before.
    gap = np.where(pos == 0, 0, rng.exponential(40 * DAY, n)).astype(np.int64)
    start = START + rng.integers(0, 365 * DAY, len(lengths))
    created = np.minimum(start[chain] + _cumsum_within(gap, chain), NOW - 60_000_000)
    nxt = np.r_[created[1:], NOW]  # when the next version superseded this one
    # Policies by category, some overridden per write; live memories may have been refreshed.
    cat = rng.choice(len(CATEGORIES), size=len(lengths), p=P_CATEGORY)[chain]
    soft_d = np.array([_days(ttl_policy(c)[0]) for c in CATEGORIES])[cat]
    hard_d = np.array([_days(ttl_policy(c)[1]) for c in CATEGORIES])[cat]
    override = rng.random(n)
    short = override < 0.04
    hard_d = np.where(short, rng.uniform(1, 60, n), np.where(override > 0.99, np.nan, hard_d))
    soft_d = np.where(short, np.minimum(soft_d, hard_d), soft_d)  # never stays never; a soft TTL is cut to the hard one
    refreshed = last_in_chain & (rng.random(n) < 0.25)
    written = np.where(refreshed, created + (rng.random(n) * (NOW - created)).astype(np.int64), created)
    updated = np.where(last_in_chain, written, nxt)  # superseding sets updated_at
    soft = written + np.nan_to_num(soft_d * DAY, nan=0).astype(np.int64)
    hard = written + np.nan_to_num(hard_d * DAY, nan=0).astype(np.int64)
    # Status: superseded unless last; the last mostly active, a few stale, pending or already gone.
    live = np.array(["active", "stale", "pending", "evicted", "tombstoned"])[
        rng.choice(5, n, p=[0.90, 0.04, 0.02, 0.02, 0.02])]
    status = np.where(last_in_chain, live, "superseded")
    # Recalls: a third never recalled; the rest last recalled some time after their write.
    recalled = rng.random(n) >= 0.35
    last_access = updated + (rng.random(n) * (NOW - updated)).astype(np.int64)
    last_access = np.where(last_in_chain, last_access, created + (rng.random(n) * (nxt - created)).astype(np.int64))
    src = rng.choice(len(SOURCE_CONFIDENCE), n, p=P_SOURCE)
    conf = np.array(list(SOURCE_CONFIDENCE.values()), dtype=np.float32)[src]
    conf = np.where(rng.random(n) < 0.04, rng.uniform(0.05, 0.3, n), conf).astype(np.float32)
    # Scopes: 1,000 tenants, 20 users each; user, task, org and project scopes, a little /global/.
    org, user, kind = rng.integers(0, tenants, n), rng.integers(0, 20, n), rng.random(n)
    scopes = [
        "/global/" if k < 0.002 else
        f"/org/t{o:04d}/" if k < 0.10 else
        f"/org/t{o:04d}/project/p{u % 5}/" if k < 0.13 else
        f"/org/t{o:04d}/user/u{u}/task/k{u % 7}/" if k < 0.25 else
        f"/org/t{o:04d}/user/u{u}/"
        for o, u, k in zip(org.tolist(), user.tolist(), kind.tolist())
    ]
    ids = np.frombuffer(rng.bytes(16 * n), dtype="S16")
    ts = pa.timestamp("us", tz="UTC")
    content = pa.array(SENTENCES).take(pa.array(rng.integers(0, len(SENTENCES), n)))
    cols = {
        "memory_id": pa.array([b.hex() for b in ids.tolist()]),
        "scope": pa.array(scopes),
        "subject": pa.nulls(n, pa.string()), "predicate": pa.nulls(n, pa.string()), "object": pa.nulls(n, pa.string()),
        "content": content,
        "source_kind": pa.array(np.array(list(SOURCE_CONFIDENCE))[src]),
        "source_id": pa.nulls(n, pa.string()),
        "confidence": pa.array(conf),
        "sensitivity": pa.array(np.full(n, "internal")),
        "pool": pa.array(np.full(n, "vault")),
        "status": pa.array(status),
        "version": pa.array((pos + 1).astype(np.int32)),
        "supersedes": pa.nulls(n, pa.string()),
        "content_hash": pa.array(np.full(n, "0" * 64)),
        "vector": pa.FixedSizeListArray.from_arrays(pa.array(np.zeros(n * DIM, np.float32)), DIM),
        "importance": pa.array(np.full(n, 0.5, np.float32)),
        "created_at": pa.array(created, ts),
        "updated_at": pa.array(updated, ts),
        "last_accessed_at": pa.array(last_access, ts, mask=~recalled),
        "retrieved_count": pa.array(np.where(recalled, rng.poisson(3, n) + 1, 0).astype(np.int32)),
        "soft_expires_at": pa.array(soft, ts, mask=np.isnan(soft_d)),
        "hard_expires_at": pa.array(hard, ts, mask=np.isnan(hard_d)),
        "search_text": content,
    }
    table = fill_columns(cols, n, DIM)
    return table.append_column("contradicted", pa.array(last_in_chain & (rng.random(n) < 0.015)))


def _days(v):
    return np.nan if v is None else v


def _cumsum_within(values: np.ndarray, group: np.ndarray) -> np.ndarray:
    total = np.cumsum(values)
    starts = np.r_[0, np.flatnonzero(group[1:] != group[:-1]) + 1]
    offset = np.repeat(total[starts] - values[starts], np.diff(np.r_[starts, len(values)]))
    return total - offset


def daily(n: int, tenants: int, seed: int) -> pa.Table:
    """The same world swept every day: what yesterday's sweep evicted is gone (and so is what
    was already evicted or tombstoned), what it marked stale is stale. n rows."""
    from memactors.core.lifecycle import ACTIONS, evaluate

    t = generate(int(n * 2.2), tenants, seed)
    _, action = evaluate(t, NOW - DAY)
    gone = pa.array(np.isin(t["status"].to_numpy(zero_copy_only=False), ["evicted", "tombstoned"]))
    keep = pa.compute.and_(pa.array(action != ACTIONS.index("evict")), pa.compute.invert(gone))
    stale = pa.array(action == ACTIONS.index("stale"))
    t = t.set_column(t.schema.get_field_index("status"), t.schema.field("status"),
                     pa.compute.if_else(stale, "stale", t["status"]))
    return t.filter(keep).slice(0, n)


def measure(path: str, repeat: int, pinned: bool, workers=(1, 2)) -> dict:
    """Bare scans and plans, interleaved so that each sees the same machine load; best wall
    time of ``repeat``, and the CPU seconds of the same runs. ``pinned``: every scanning process
    on one core (task i on core i, the bare scan on core 0), so that one worker is one core."""
    from memactors.actors.sweep_plan import bare_scan, plan_dataset

    columns = [*G.PLAN_COLUMNS, "contradicted"]
    plan_dataset(path, NOW, workers=max(workers))  # warm-up: worker processes up, lance imported
    bare, plans = [], {w: [] for w in workers}
    load0 = os.getloadavg()[0]
    for _ in range(repeat):
        bare.append(bare_scan(path, columns, pin_core=0 if pinned else None))
        for w in workers:
            plans[w].append(plan_dataset(path, NOW, workers=w, pin_cores=pinned))
    n = plans[workers[0]][0].rows_scanned
    out = {"rows": n, "planned": plans[workers[0]][0].planned, "load_avg_1min": [load0, os.getloadavg()[0]],
           "identical": len({p.digest() for ps in plans.values() for p in ps}) == 1}
    bw, bc = min(b["seconds"] for b in bare), min(b["cpu_seconds"] for b in bare)
    out["bare_scan"] = {"wall_s": bw, "cpu_s": bc, "rows_per_s": n / bw, "rows_per_cpu_s": n / bc,
                        "wall_s_all": [round(b["seconds"], 4) for b in bare]}
    for w, ps in plans.items():
        wall, cpu = min(p.seconds for p in ps), min(p.source["cpu_seconds"] for p in ps)
        out[f"plan_{w}_workers"] = {
            "wall_s": wall, "rows_per_s": n / wall, "task_cpu_s": cpu, "rows_per_cpu_s": n / cpu,
            "task_wall_s": min(max(p.source["task_seconds"]) for p in ps),
            # what the driver and Ray add: listing fragments, submitting, fetching, merging
            "overhead_s": min(p.seconds - max(p.source["task_seconds"]) for p in ps),
            "wall_s_all": [round(p.seconds, 4) for p in ps], "median_wall_s": statistics.median(p.seconds for p in ps)}
    a, b = out[f"plan_{workers[0]}_workers"], out[f"plan_{workers[-1]}_workers"]
    out["speedup"] = a["wall_s"] / b["wall_s"]
    out["speedup_median"] = a["median_wall_s"] / b["median_wall_s"]
    out["plan_vs_bare_wall"] = a["wall_s"] / bw
    out["plan_vs_bare_cpu"] = a["task_cpu_s"] / bc
    out["_plan"] = plans[workers[0]][0]
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--tenants", type=int, default=1000)
    ap.add_argument("--rows-per-fragment", type=int, default=131_072)
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default="benchmarks/out/gc_plan.json")
    ap.add_argument("--data", default=None, help="folder for the datasets (default: a temporary one)")
    args = ap.parse_args()

    import ray
    from ray.cluster_utils import Cluster

    from memactors.actors.sweep_plan import plan_dataset

    folder = args.data or tempfile.mkdtemp(prefix="gc-plan-")
    paths = {"first_sweep": os.path.join(folder, "first.lance"), "daily_sweep": os.path.join(folder, "daily.lance")}
    out: dict = {"n": args.n, "tenants": args.tenants, "rows_per_fragment": args.rows_per_fragment,
                 "repeat": args.repeat, "now_us": NOW, "cpus": os.cpu_count()}
    try:
        t0 = time.perf_counter()
        tables = {"first_sweep": generate(args.n, args.tenants, args.seed),
                  "daily_sweep": daily(args.n, args.tenants, args.seed + 1)}
        out["generate_s"] = time.perf_counter() - t0
        # Ray first: once lance is loaded it warns on every fork, and starting Ray forks.
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
        import lance

        for name, table in tables.items():
            shutil.rmtree(paths[name], ignore_errors=True)
            lance.write_dataset(table, paths[name], max_rows_per_file=args.rows_per_fragment,
                                max_rows_per_group=args.rows_per_fragment)
        del tables
        ds = lance.dataset(paths["first_sweep"])
        out["fragments"] = len(ds.get_fragments())
        out["dataset_bytes"] = sum(f.file_size_bytes or 0 for fr in ds.get_fragments() for f in fr.metadata.files)
        # The reference: the rules over the whole table at once, in this process.
        whole = ds.to_table(columns=[*G.PLAN_COLUMNS, "contradicted"])
        c0 = time.process_time()
        reference = G.plan_columns(whole, NOW)
        out["whole_table_rules_cpu_s"] = time.process_time() - c0
        del whole

        for name, path in paths.items():
            out[name] = {mode: measure(path, args.repeat, mode == "pinned") for mode in ("pinned", "unpinned")}
        out["identical_to_whole_table"] = out["first_sweep"]["pinned"]["_plan"].same_decisions(reference)
        ray.shutdown()

        # Two nodes, one CPU each: the tasks spread over both; the plan must not change.
        cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False})
        cluster.add_node(num_cpus=1)
        try:
            ray.init(address=cluster.address, log_to_driver=False, configure_logging=False)
            cluster.wait_for_nodes()
            plan_dataset(paths["first_sweep"], NOW, workers=2)  # warm-up
            runs = [plan_dataset(paths["first_sweep"], NOW, workers=2) for _ in range(3)]
            out["two_nodes"] = {"nodes_used": max(p.source["nodes"] for p in runs),
                                "wall_s": min(p.seconds for p in runs),
                                "identical": all(p.digest() == reference.digest() for p in runs)}
        finally:
            ray.shutdown()
            cluster.shutdown()
    finally:
        if not args.data:
            shutil.rmtree(folder, ignore_errors=True)
    plans = {name: [out[name][m].pop("_plan") for m in ("pinned", "unpinned")][0] for name in paths if name in out}
    report(out, plans)
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    out["plans"] = {name: p.to_dict() for name, p in plans.items()}
    with open(args.out, "wb") as f:
        f.write(orjson.dumps(out, option=orjson.OPT_INDENT_2 | orjson.OPT_SERIALIZE_NUMPY))
    print(f"\nJSON: {args.out}")


def report(out: dict, plans: dict) -> None:
    if "first_sweep" in plans:
        print(plans["first_sweep"].summary(max_tenants=5))
        print()
    print(f"{out['n']:,} memories, {out['fragments']} fragments, {out['dataset_bytes'] / 1e6:.0f} MB; best of {out['repeat']}")
    print(f"{'':44} {'wall s':>7} {'rows/s':>11} {'rows/CPU-s':>11}")
    for name in ("first_sweep", "daily_sweep"):
        for mode in ("pinned", "unpinned"):
            m = out[name][mode]
            print(f"{name}, {mode} ({m['planned'] / m['rows']:.1%} of rows planned; load avg {m['load_avg_1min'][0]:.1f})")
            for label, key in (("  bare scan (this process)", "bare_scan"), ("  plan, 1 worker", "plan_1_workers"),
                               ("  plan, 2 workers", "plan_2_workers")):
                r = m[key]
                cpu = r.get("cpu_s", r.get("task_cpu_s"))
                print(f"{label:44} {r['wall_s']:>7.3f} {r['rows_per_s']:>11,.0f} {m['rows'] / cpu:>11,.0f}")
            print(f"  speed-up 2 vs 1 workers {m['speedup']:.2f}x (medians {m['speedup_median']:.2f}x); plan vs bare "
                  f"{m['plan_vs_bare_wall']:.2f}x wall, {m['plan_vs_bare_cpu']:.2f}x CPU; identical plans: {m['identical']}")
            one, two = m["plan_1_workers"], m["plan_2_workers"]
            print(f"  slowest task / driver+Ray overhead: 1 worker {one['task_wall_s']:.3f} / {one['overhead_s']:.3f} s, "
                  f"2 workers {two['task_wall_s']:.3f} / {two['overhead_s']:.3f} s")
    print(f"first sweep plan = rules over the whole table at once: {out['identical_to_whole_table']}")
    if "two_nodes" in out:
        t = out["two_nodes"]
        print(f"two-node Cluster: {t['nodes_used']} nodes used, {t['wall_s']:.3f} s, identical plan: {t['identical']}")


if __name__ == "__main__":
    main()
