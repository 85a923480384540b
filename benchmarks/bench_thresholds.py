"""The threshold harness on LoCoMo: prepared once, scored with 1 and with 2 workers.

    RAY_AUTH_MODE=disabled .venv/bin/python benchmarks/bench_thresholds.py \
        --dataset ../shared/data/locomo --workers 1,2 --repeat 5 --out benchmarks/out/thresholds

One Ray (started here) and one fresh data folder with no recall floor: the five conversations
and the governance set are written and every question recalled once (``prepare``: what no
threshold changes). The grid (default: 10 thresholds x 5 top_k = 50 configurations, 1,000
paired bootstrap resamples each) is then scored ``--repeat`` times per worker count, the
counts interleaved so that load from elsewhere on the machine hits both alike. Harness wall
time for N workers = prepare + the median scoring time with N workers.

Prints recall@5 / recall@10 by category for the store's embedder and BM25, the governance
counters, the gate's exclusions, evidence parsing and the wall times; full outputs (JSON,
markdown, PNG) go to OUT/workers-N/.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time

import orjson

import memactors
from memactors.bench import DEFAULT_GRID
from memactors.bench.harness import NO_FLOOR, prepare, score
from memactors.bench.locomo import CATEGORIES


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", default="../shared/data/locomo")
    ap.add_argument("--grid", default=DEFAULT_GRID)
    ap.add_argument("--workers", default="1,2", help="comma-separated worker counts")
    ap.add_argument("--repeat", type=int, default=5, help="scoring runs per worker count (interleaved)")
    ap.add_argument("--out", default="benchmarks/out/thresholds")
    ap.add_argument("--no-progress", action="store_true")
    ap.add_argument("--beta", type=float, default=1.0, help="recommend by F-beta (1: F1)")
    args = ap.parse_args()
    import ray

    ray.init(address="local", include_dashboard=False, log_to_driver=False, configure_logging=False)
    workers = [int(x) for x in args.workers.split(",")]
    with tempfile.TemporaryDirectory(prefix="memactors-bench-") as tmp:
        t0 = time.perf_counter()
        rt = memactors.connect(os.path.join(tmp, "data"), config=NO_FLOOR)
        t_conn = time.perf_counter() - t0
        try:
            prep = prepare(rt, args.dataset, grid=args.grid, progress=not args.no_progress)
        finally:
            rt.close()
    runs = {n: [] for n in workers}
    for r in range(args.repeat):
        for n in workers if r % 2 == 0 else workers[::-1]:
            rep = score(prep, num_workers=n, out_dir=os.path.join(args.out, f"workers-{n}"),
                        progress=not args.no_progress, beta=args.beta)
            runs[n].append(rep["timings"])
            last = rep
    med = {n: {k: statistics.median(t[k] for t in ts) for k in ("score_s", "grid_s", "warmup_s")}
           for n, ts in runs.items()}
    summary = {"connect_s": round(t_conn, 3), "prepare": {k: round(v, 3) for k, v in prep.timings.items()},
               "load_average_1m_at_end": os.getloadavg()[0], "repeats": args.repeat,
               "by_workers": {str(n): {"harness_wall_s": round(prep.timings["prepare_s"] + m["score_s"], 3),
                                       "score_s_median": round(m["score_s"], 3),
                                       "grid_s_median": round(m["grid_s"], 3),
                                       "grid_s_all": [t["grid_s"] for t in runs[n]],
                                       "warmup_s_median": round(m["warmup_s"], 3)} for n, m in med.items()}}
    if len(workers) >= 2:
        a, b = str(workers[0]), str(workers[1])
        wa, wb = summary["by_workers"][a], summary["by_workers"][b]
        summary["speedup"] = {"harness": round(wa["harness_wall_s"] / wb["harness_wall_s"], 3),
                              "grid": round(wa["grid_s_median"] / wb["grid_s_median"], 3)}
    ray.shutdown()
    by_k = {}
    for row in last["configs"]:
        k = row["config"]["top_k"]
        if k in (5, 10) and k not in by_k:
            by_k[k] = {"memactors": row["topk"]["by_category"], "memactors_overall": row["topk"]["overall"]["recall"]}
    for k in by_k:
        bm = last["bm25"]["by_top_k"][str(k)]
        by_k[k].update(bm25=bm["by_category"], bm25_overall=bm["overall"]["recall"])
    summary.update(recall_by_category={str(k): {
        "memactors": {CATEGORIES[int(c)]: round(v["recall"], 3) for c, v in d["memactors"].items()},
        "memactors_overall_1_4": round(d["memactors_overall"], 3),
        "bm25": {CATEGORIES[int(c)]: round(v["recall"], 3) for c, v in d["bm25"].items()},
        "bm25_overall_1_4": round(d["bm25_overall"], 3)} for k, d in by_k.items()},
        gate=last["gate"], evidence={k: last["dataset"]["evidence"][k] for k in ("unparseable_count", "unparseable",
                                                                                "repaired", "dangling")},
        governance=last["governance"], recommendation={"config": last["recommendation"]["config"],
                                                       "why": last["recommendation"]["why"]},
        embedder=last["retrieval"]["embedder"], bm25=last["bm25"]["implementation"])
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "summary.json"), "wb") as f:
        f.write(orjson.dumps(summary, option=orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS))
    sys.stdout.write(orjson.dumps(summary, option=orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS).decode() + "\n")


if __name__ == "__main__":
    main()
