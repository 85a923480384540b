"""The governed runtime on the shared workload: write rate, ack latency, hot/cold recall, leaks.

    RAY_AUTH_MODE=disabled .venv/bin/python benchmarks/bench_core.py --n 100000 --json out.json

Everything a user gets is on: the gate, versions/dedup, the ledger (durable before ack), grants,
scope checks, the expiry filter, and the recall log. Figures go to benchmarks/RESULTS.md.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time

import numpy as np
import orjson

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
os.environ.setdefault("RAY_AUTH_MODE", "disabled")

import workload  # noqa: E402

import memactors  # noqa: E402
from memactors.testing import drop_hot  # noqa: E402

ORG = "bench"


TENANTS = 1  # --tenants: users spread over this many orgs (owners are picked by org)


def scope_of(user: str) -> str:
    org = ORG if TENANTS == 1 else f"{ORG}{int(user[1:]) % TENANTS}"
    return f"/org/{org}/user/{user}/"


def pct(xs, p):
    return float(np.percentile(np.asarray(xs) * 1000, p))


def run(n: int, n_users: int, n_queries: int, owners: int, data_dir: str, host: str = "ray",
        gate_workers: int | None = None) -> dict:
    mems = workload.memories(n, n_users)
    queries = workload.queries(n_queries, n_users)
    runtime = {"num_owners": owners} if gate_workers is None else {"num_owners": owners, "gate_workers": gate_workers}
    t0 = time.perf_counter()
    rt = memactors.connect(data_dir, config={"runtime": runtime}, host=host)
    out: dict = {"store": f"memactors ({host} host)", "n": n, "owners": rt.config.runtime.num_owners,
                 "gate_workers": rt.config.runtime.gate_workers, "tenants": TENANTS, "host": host,
                 "connect_s": round(time.perf_counter() - t0, 3)}
    try:
        orgs = sorted({scope_of(f"u{i:04d}").split("/")[2] for i in range(n_users)})
        rt.grant_many([{"actor": "bench-agent", "scope": f"/org/{o}/", "read": True, "write": True} for o in orgs])
        # 1. governed write path, batched
        items = [{"scope": scope_of(u), "text": t, "actor": "bench-agent"} for u, t in mems]
        t0 = time.perf_counter()
        decisions: dict[str, int] = {}
        for i in range(0, len(items), 1000):
            for r in rt.write_many(items[i : i + 1000]):
                decisions[r.decision] = decisions.get(r.decision, 0) + 1
        dt = time.perf_counter() - t0
        out["write_per_s"] = n / dt
        out["owner_stats_after_writes"] = rt.stats()["owners"]
        out["decisions"] = decisions
        t0 = time.perf_counter()
        rt.flush()
        out["l2_catch_up_s"] = time.perf_counter() - t0
        # 2. single-write acknowledgement
        lat = []
        for i in range(500):
            u = f"u{i % n_users:04d}"
            t0 = time.perf_counter()
            rt.write(scope_of(u), f"single write {i} about tea and {u}", actor="bench-agent")
            lat.append(time.perf_counter() - t0)
        out["ack_p50_ms"], out["ack_p99_ms"] = pct(lat, 50), pct(lat, 99)
        rt.flush()

        def recall_all():
            lat, cross, paths = [], 0, {}
            for u, q in queries:
                t0 = time.perf_counter()
                res = rt.recall(q, actor="bench-agent", task_id="bench", allowed_scopes=[scope_of(u)],
                                purpose="bench", top_k=10)
                lat.append(time.perf_counter() - t0)
                cross += sum(1 for h in res.hits if h.scope != scope_of(u))
                paths[res.path] = paths.get(res.path, 0) + 1
            return lat, cross, paths

        # 3. hot recall (the owners hold every written scope in memory), both paths
        recall_all()  # warm-up pass (and the compiled graph's build)
        lat, cross, paths = recall_all()
        out.update(hot_p50_ms=pct(lat, 50), hot_p95_ms=pct(lat, 95), cross_user_hits=cross, hot_paths=paths)
        if host == "ray":  # the compiled graph is Ray's: the plain actor call beside it
            rt.config.recall.compiled_path = False
            lat, cross_plain, _ = recall_all()
            rt.config.recall.compiled_path = True
            out.update(hot_plain_p50_ms=pct(lat, 50), hot_plain_p95_ms=pct(lat, 95))
            out["cross_user_hits"] += cross_plain
        # 4. cold recall: hot index dropped, every recall is a pre-filtered Lance query
        drop_hot(rt)
        lat, cross2, paths = recall_all()
        out.update(cold_p50_ms=pct(lat, 50), cold_p95_ms=pct(lat, 95), cold_paths=paths)
        out["cross_user_hits"] += cross2
        # 5. a bare pre-filtered LanceDB query on the same table, in this process
        import lancedb

        tbl = lancedb.connect(os.path.join(rt.data_dir, "l2")).open_table("memories")
        qv = rt.embedder.embed([q for _, q in queries])
        lat = []
        for (u, _), v in zip(queries * 2, np.concatenate([qv, qv])):  # first pass warms the cache
            t0 = time.perf_counter()
            tbl.search(v).distance_type("cosine").where(f"scope = '{scope_of(u)}'", prefilter=True).limit(10).to_arrow()
            lat.append(time.perf_counter() - t0)
        lat = lat[len(queries):]
        out.update(bare_lance_p50_ms=pct(lat, 50), bare_lance_p95_ms=pct(lat, 95))
        out["verify"] = rt.audit.verify()
    finally:
        rt.close()
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--users", type=int, default=1_000)
    ap.add_argument("--queries", type=int, default=500)
    ap.add_argument("--owners", type=int, default=2, help="scope owners (0: sized to the machine)")
    ap.add_argument("--gate-workers", type=int, default=None, help="gate workers (default: the config's default)")
    ap.add_argument("--tenants", type=int, default=1)
    ap.add_argument("--host", choices=("ray", "process"), default="ray")
    ap.add_argument("--rebuild", action="store_true", help="then time `memactors rebuild` of the ledger")
    ap.add_argument("--json", default=None)
    a = ap.parse_args()
    global TENANTS
    TENANTS = a.tenants
    d = tempfile.mkdtemp(prefix="memactors-bench-")
    try:
        res = run(a.n, a.users, a.queries, a.owners, os.path.join(d, "data"), host=a.host, gate_workers=a.gate_workers)
        if a.rebuild:
            from memactors.server import rebuild

            t0 = time.perf_counter()
            rb = rebuild(os.path.join(d, "data"))
            dt = time.perf_counter() - t0
            res["rebuild"] = {**rb, "wall_s": round(dt, 2), "events_per_s": round(rb["events"] / dt)}
    finally:
        shutil.rmtree(d, ignore_errors=True)
    print(orjson.dumps(res, option=orjson.OPT_INDENT_2).decode())
    if a.json:
        with open(a.json, "wb") as f:
            f.write(orjson.dumps(res, option=orjson.OPT_INDENT_2))


if __name__ == "__main__":
    main()
