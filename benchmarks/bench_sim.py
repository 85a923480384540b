"""Tick time of the batch simulation as the number of agents grows (1,000 -> 10,000 -> 50,000).

    PYTHONPATH=. python benchmarks/bench_sim.py --agents 1000,10000,50000 --backend dict
    PYTHONPATH=. python benchmarks/bench_sim.py --agents 1000,10000 --backend langgraph-sqlite --ticks 3
    PYTHONPATH=. python benchmarks/bench_sim.py --agents 10000 --backend memactors --backend langgraph-sqlite
    PYTHONPATH=. python benchmarks/bench_sim.py --agents 1000,10000,50000 --backend memactors
    PYTHONPATH=. python benchmarks/bench_sim.py --recall-many 1000     # recall_many vs a loop of recall

The load is one observation and one recall per agent per tick: every user restates one of their
preferences each tick and the scripted assistant observes it, then recalls before answering (no
probes, no tasks, pages, pastes or chit-chat). Tick 0 is the warm-up (users state all their
preferences and orgs their policies) and is reported apart. The simulation's own cost (drawing
the world, running the policies) is reported beside each backend's tick time, which excludes it.
Each row carries the backend's governance counters (all must be 0 for memactors) and, when the
memactors and langgraph-sqlite backends ran side by side, the ratio of their p50 tick times.

``--recall-many N``: N recall requests (N agents, one memory-rich scope each) answered by one
``recall_many`` and by N single ``recall`` calls, the same requests, on one runtime.
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np
import orjson

from memactors.sim import BACKENDS, ScriptedPolicy, WorldConfig, run

USERS_PER_TENANT = 100
ONE_EACH = {"mention": 1.0, "task_start": 0.0, "paste": 0.0, "chitchat": 0.0, "forget_per_day": 0.0,
            "preference_change_per_day": 0.0, "policy_change_per_day": 0.0}


def bench(agents: int, names: list[str], ticks: int, workdir: str) -> list[dict]:
    cfg = WorldConfig.from_dict({"seed": 1, "tenants": max(1, agents // USERS_PER_TENANT),
                                 "users_per_tenant": min(agents, USERS_PER_TENANT), "days": ticks,
                                 "onboarding_days": 0, "sweep_every_days": 0, "counts_every_ticks": ticks,
                                 "rates": ONE_EACH})
    backends = [BACKENDS[n](os.path.join(workdir, f"{n}-{agents}")) for n in names]
    policy = ScriptedPolicy(seed=1, probe_rate=0.0, follow_injection_rate=0.0)
    report = run(cfg, backends, policy=policy, progress=False, scan_storage=False)
    sim_s = (report.runner["world_s"] + report.runner["policy_s"]) / cfg.ticks
    out = []
    for b in report.backends:
        if b["skipped"]:
            out.append({"agents": cfg.agents, "backend": b["name"], "skipped": b["skipped"]})
            continue
        steady = b["ticks"][1:] or b["ticks"]
        ms = np.array([r["apply_s"] for r in steady]) * 1e3
        ops = sum(r["ops"] for r in steady)
        out.append({"agents": cfg.agents, "backend": b["name"], "ticks": len(steady),
                    "ops_per_tick": ops // len(steady), "tick_ms_p50": round(float(np.percentile(ms, 50)), 1),
                    "tick_ms_p95": round(float(np.percentile(ms, 95)), 1),
                    "ops_per_s": round(float(ops / (ms.sum() / 1e3)), 1),
                    "warmup_tick_ms": round(b["ticks"][0]["apply_s"] * 1e3, 1),
                    "sim_ms_per_tick": round(sim_s * 1e3, 1), "errors": b["totals"]["errors"],
                    "counters_nonzero": {k: v for k, v in b["counters"].items() if v}})
    p50 = {r["backend"]: r["tick_ms_p50"] for r in out if "tick_ms_p50" in r}
    if "memactors" in p50 and "langgraph-sqlite" in p50:
        for r in out:
            if r["backend"] == "memactors":
                r["tick_vs_sqlite"] = round(p50["memactors"] / p50["langgraph-sqlite"], 3)
    return out


def bench_recall_many(n: int, workdir: str, repeats: int = 3) -> dict:
    """One recall_many of n requests against n single recalls, same requests, same runtime."""
    import time

    import memactors
    from memactors.core.clock import ManualClock

    rt = memactors.connect(os.path.join(workdir, f"recall-many-{n}"), clock=ManualClock(),
                           config={"runtime": {"num_owners": 2}})
    try:
        users = [f"/org/t{i % 20:03d}/user/u{i:05d}/" for i in range(n)]
        rt.grant_many([{"actor": f"a{i}", "scope": u, "write": True} for i, u in enumerate(users)])
        rt.write_many([{"scope": u, "text": f"user {i} prefers {w} tea and lives in city {i % 97}", "actor": f"a{i}"}
                       for i, u in enumerate(users) for w in ("green", "black")])
        reqs = [{"query": f"what tea does user {i} drink", "actor": f"a{i}", "task_id": "t", "purpose": "bench",
                 "allowed_scopes": [u]} for i, u in enumerate(users)]
        rt.recall_many(reqs[:50])  # warm
        best_many = best_loop = float("inf")
        for _ in range(repeats):
            t = time.perf_counter()
            many = rt.recall_many(reqs)
            best_many = min(best_many, time.perf_counter() - t)
            t = time.perf_counter()
            loop = [rt.recall(**r) for r in reqs]
            best_loop = min(best_loop, time.perf_counter() - t)
        same = all([h.memory_id for h in a.hits] == [h.memory_id for h in b.hits] for a, b in zip(many, loop))
        return {"requests": n, "recall_many_s": round(best_many, 3), "loop_s": round(best_loop, 3),
                "recall_many_per_s": round(n / best_many, 1), "loop_per_s": round(n / best_loop, 1),
                "speedup": round(best_loop / best_many, 2), "same_hits": same}
    finally:
        rt.close()


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--agents", default="1000,10000,50000", help="comma-separated agent counts")
    p.add_argument("--backend", action="append", help=f"one of {sorted(BACKENDS)} (repeat); default dict")
    p.add_argument("--ticks", type=int, default=4, help="ticks per size, the first one a warm-up")
    p.add_argument("--workdir", default="benchmarks/out/sim-work")
    p.add_argument("--json", default="benchmarks/out/sim_scaling.json")
    p.add_argument("--recall-many", type=int, metavar="N", help="recall_many vs a loop of recall, N requests")
    a = p.parse_args(argv)
    if a.recall_many:
        print(orjson.dumps(bench_recall_many(a.recall_many, a.workdir)).decode(), flush=True)
        return 0
    names = a.backend or ["dict"]
    rows = []
    for n in (int(x) for x in a.agents.split(",")):
        for row in bench(n, names, a.ticks, a.workdir):
            rows.append(row)
            print(orjson.dumps(row).decode(), flush=True)
    os.makedirs(os.path.dirname(a.json) or ".", exist_ok=True)
    with open(a.json, "wb") as f:
        f.write(orjson.dumps(rows, option=orjson.OPT_INDENT_2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
