"""Undo and prove, measured (issue #9): targeted rollback with its cascade, point-in-time
recall against cold recall, fork against copying the folder, forget-to-purged and purge cost.

    RAY_AUTH_MODE=disabled .venv/bin/python benchmarks/bench_history.py --n 100000 --json out.json

The store is the shared workload (benchmarks/workload.py) written through the governed path;
"poisoned" memories each have 10 items derived from them (``derived_from``), and more writes
come after them. Figures go to benchmarks/RESULTS.md.
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

ORG, AGENT, ADMIN = "bench", "bench-agent", "bench-admin"


def scope_of(user: str) -> str:
    return f"/org/{ORG}/user/{user}/"


def pct(xs, p):
    return round(float(np.percentile(np.asarray(xs) * 1000, p)), 2)


def dir_bytes(path: str) -> int:
    return sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(path) for f in fs)


def write_all(rt, items) -> None:
    for i in range(0, len(items), 1000):
        rt.write_many(items[i: i + 1000])


def purge_cost(rt, scope: str, k: int = 10) -> dict:
    """Forget k memories, then purge now: the latency of each step (forget-to-purged)."""
    made = rt.write_many([{"scope": scope, "text": f"purge probe {i}: the locker code is {i * 7}", "actor": AGENT}
                          for i in range(k)])
    rt.flush()
    t0 = time.perf_counter()
    for r in made:
        rt.forget(r.memory_id, actor=AGENT, reason="bench")
    t_forget = time.perf_counter() - t0
    t0 = time.perf_counter()
    res = rt.purge()
    t_purge = time.perf_counter() - t0
    return {"forget_each_ms": round(t_forget / k * 1000, 2), "purge_s": round(t_purge, 2),
            "forget_to_purged_s": round(t_forget / k + t_purge, 2), "l2": res["l2"],
            "ledger_bytes": [res["ledger"]["bytes_before"], res["ledger"]["bytes_after"]]}


def run(n: int, n_users: int, n_queries: int, n_poison: int, owners: int, root: str) -> dict:
    data_dir = os.path.join(root, "data")
    mems = workload.memories(n, n_users)
    queries = workload.queries(n_queries, n_users)
    rt = memactors.connect(data_dir, config={"runtime": {"num_owners": owners}})
    out: dict = {"n": n, "users": n_users, "owners": owners, "purge_by_size": {}}
    try:
        rt.grant(AGENT, f"/org/{ORG}/", read=True, write=True)
        rt.grant(ADMIN, f"/org/{ORG}/", read=True, write=True)
        items = [{"scope": scope_of(u), "text": t, "actor": AGENT} for u, t in mems]
        half = len(items) // 2
        t0 = time.perf_counter()
        checkpoints = sorted({n // 4, half})
        done = 0
        for cp in checkpoints:  # purge cost against the table's size as it grows
            write_all(rt, items[done:cp])
            done = cp
            rt.flush()
            out["purge_by_size"][cp] = purge_cost(rt, scope_of("u0000"))
        seq_half = rt.audit.head()["seq"]
        # Poisoned memories, each with 10 derived items, then the rest of the workload after them.
        poisons = []
        for p in range(n_poison):
            u = f"u{p:04d}"
            src = rt.write(scope_of(u), f"note {p}: the vendor portal moved to a new address", actor=AGENT,
                           source="web")
            derived = rt.write_many([{"scope": scope_of(u), "text": f"from note {p}: {mems[(p * 10 + j) * 997 % n][1]}",
                                      "actor": AGENT, "derived_from": [src.memory_id]} for j in range(10)])
            poisons.append((u, src.memory_id, [d.memory_id for d in derived]))
        write_all(rt, items[done:])
        out["build_s"] = round(time.perf_counter() - t0, 1)
        rt.flush()
        out["purge_by_size"][n] = purge_cost(rt, scope_of("u0000"))
        out["head_seq"] = rt.audit.head()["seq"]

        # 1. targeted rollback of one memory and its 10 derived items
        t0 = time.perf_counter()
        out["verify_ok"] = rt.audit.verify()["ok"]
        out["verify_s"] = round(time.perf_counter() - t0, 3)
        dry, applied, untouched = [], [], True
        for u, mid, derived in poisons:
            before = {m["memory_id"]: m["status"] for m in rt.audit.at(out["head_seq"], actor=ADMIN,
                                                                       scope=scope_of(u), limit=10**6)["memories"]}
            t0 = time.perf_counter()
            plan = rt.rollback(memory_id=mid, cascade=True, actor=ADMIN, reason="bench", dry_run=True)
            dry.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            res = rt.rollback(memory_id=mid, cascade=True, actor=ADMIN, reason="bench")
            applied.append(time.perf_counter() - t0)
            assert res.counts() == plan.counts() == {"undo": 11}, res.counts()
            after = {m["memory_id"]: m["status"] for m in rt.audit.at(rt.audit.head()["seq"], actor=ADMIN,
                                                                      scope=scope_of(u), limit=10**6)["memories"]}
            gone = {mid, *derived}
            untouched &= all(after[k] == v for k, v in before.items() if k not in gone)
            untouched &= all(after[k] == "evicted" for k in gone)
        out["rollback"] = {"memories_each": 11, "rounds": len(applied), "dry_run_p50_ms": pct(dry, 50),
                           "applied_p50_ms": pct(applied, 50), "applied_max_ms": pct(applied, 100),
                           "later_writes_untouched": untouched}

        # 2. point-in-time recall against present-time cold recall
        def recall_all(**kw):
            lat = []
            for u, q in queries:
                t0 = time.perf_counter()
                rt.recall(q, actor=AGENT, task_id="bench", allowed_scopes=[scope_of(u)], purpose="bench",
                          top_k=10, **kw)
                lat.append(time.perf_counter() - t0)
            return lat

        rt.flush()
        drop_hot(rt)
        recall_all()  # warm Lance's caches: both measured passes run warm
        drop_hot(rt)
        cold = recall_all()
        as_of = recall_all(as_of=seq_half)
        as_of_head = recall_all(as_of=rt.audit.head()["seq"])
        out["as_of"] = {"queries": len(queries), "cold_p50_ms": pct(cold, 50), "cold_p95_ms": pct(cold, 95),
                        "as_of_half_p50_ms": pct(as_of, 50), "as_of_half_p95_ms": pct(as_of, 95),
                        "as_of_head_p50_ms": pct(as_of_head, 50), "as_of_head_p95_ms": pct(as_of_head, 95),
                        "ratio_p95_half": round(pct(as_of, 95) / pct(cold, 95), 2),
                        "ratio_p95_head": round(pct(as_of_head, 95) / pct(cold, 95), 2)}

        # 3. fork against copying the folder
        rt.flush()
        t0 = time.perf_counter()
        shutil.copytree(data_dir, os.path.join(root, "copy"))
        copy_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        f = rt.fork(os.path.join(root, "fork"))
        fork_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        fm = rt.fork(os.path.join(root, "fork-half"), at=seq_half)
        fork_half_s = time.perf_counter() - t0
        out["fork"] = {"fork_s": round(fork_s, 2), "events": f["events"], "rows": f["rows"],
                       "fork_half_s": round(fork_half_s, 2), "rows_half": fm["rows"], "copy_s": round(copy_s, 2),
                       "folder_mb": round(dir_bytes(data_dir) / 1e6, 1),
                       "fork_mb": round(dir_bytes(os.path.join(root, "fork")) / 1e6, 1),
                       "detail": {k: v for k, v in f.items() if k.endswith("_s")}}
    finally:
        rt.close()
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--users", type=int, default=1_000)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--poison", type=int, default=5)
    ap.add_argument("--owners", type=int, default=2)
    ap.add_argument("--json", default=None)
    a = ap.parse_args()
    d = tempfile.mkdtemp(prefix="memactors-bench-")
    try:
        t0 = time.perf_counter()
        res = run(a.n, a.users, a.queries, a.poison, a.owners, d)
        res["total_s"] = round(time.perf_counter() - t0, 1)
        res["load_avg"] = os.getloadavg()
    finally:
        shutil.rmtree(d, ignore_errors=True)
    print(orjson.dumps(res, option=orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS).decode())
    if a.json:
        with open(a.json, "wb") as f:
            f.write(orjson.dumps(res, option=orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS))


if __name__ == "__main__":
    main()
