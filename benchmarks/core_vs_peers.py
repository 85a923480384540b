"""Issue 2's side-by-side: the governed runtime and its peers on one workload, in one run.

    .venv/bin/python -m benchmarks.core_vs_peers --n 100000 --out benchmarks/out/core_vs_peers.json

Peers need the [bench] extra (`make bench`). Each store gets the same embedder and workload:
n short English/Chinese memories over 1,000 users sharing one vocabulary, then 500 recalls,
each scoped to one user, top 10.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile

from benchmarks import bench_core, peers
from benchmarks.workload import memories, queries
from memactors.embed import HashEmbedder


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--mem0-n", type=int, default=10_000)
    ap.add_argument("--users", type=int, default=1_000)
    ap.add_argument("--queries", type=int, default=500)
    ap.add_argument("--peers", default="langgraph-sqlite,langgraph-inmemory,mem0")
    ap.add_argument("--out", default=None)
    ap.add_argument("--hosts", default="ray,process", help="memactors hosts to run, in this order")
    a = ap.parse_args()
    mems = memories(max(a.n, a.mem0_n), a.users)
    qs = queries(a.queries, a.users)
    results = []
    for peer in [p for p in a.peers.split(",") if p]:
        n = a.mem0_n if peer == "mem0" else a.n
        with tempfile.TemporaryDirectory(prefix=f"bench-{peer}-") as tmp:
            r = peers.PEERS[peer](mems[:n], qs, HashEmbedder(384), tmp)
        print(json.dumps(r), flush=True)
        results.append(r)
    ours_all = []
    for host in [h for h in a.hosts.split(",") if h]:
        with tempfile.TemporaryDirectory(prefix=f"bench-memactors-{host}-") as tmp:
            ours = bench_core.run(a.n, a.users, a.queries, 2, os.path.join(tmp, "data"), host=host)
        print(json.dumps(ours), flush=True)
        results.append(ours)
        ours_all.append(ours)
    sqlite = next((r for r in results if "sqlite" in r.get("store", "").lower() and "skipped" not in r), None)
    lines = ["| store | n | writes/s | recall p50 ms | recall p95 ms | cross-user hits |", "|---|---|---|---|---|---|"]
    for r in results:
        if "skipped" in r:
            lines.append(f"| {r['store']} | skipped: {r['skipped']} | | | | |")
            continue
        p50 = r.get("hot_p50_ms", r.get("recall_p50_ms"))
        p95 = r.get("hot_p95_ms", r.get("recall_p95_ms"))
        lines.append(f"| {r['store']} | {r['n']:,} | {r['write_per_s']:,.0f} | {p50:.2f} | {p95:.2f} | {r['cross_user_hits']} |")
    if sqlite:
        lines.append("")
        for ours in ours_all:
            lines.append(f"ratios to SqliteStore, {ours['host']} host: writes {ours['write_per_s'] / sqlite['write_per_s']:.2f}x, "
                         f"hot recall p95 {ours['hot_p95_ms'] / sqlite['recall_p95_ms']:.2f}x (lower is better), "
                         f"cold recall p95 {ours['cold_p95_ms'] / ours['bare_lance_p95_ms']:.2f}x a bare pre-filtered "
                         f"Lance query, ack p99 {ours['ack_p99_ms']:.1f} ms")
    print("\n".join(lines))
    if a.out:
        os.makedirs(os.path.dirname(a.out) or ".", exist_ok=True)
        with open(a.out, "w") as f:
            json.dump({"results": results, "table": lines}, f, indent=2)


if __name__ == "__main__":
    main()
