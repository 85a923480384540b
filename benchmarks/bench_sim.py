"""Tick time of the batch simulation as the number of agents grows (1,000 -> 10,000 -> 50,000).

    PYTHONPATH=. python benchmarks/bench_sim.py --agents 1000,10000,50000 --backend dict
    PYTHONPATH=. python benchmarks/bench_sim.py --agents 1000,10000 --backend langgraph-sqlite --ticks 3

The load is one observation and one recall per agent per tick: every user restates one of their
preferences each tick and the scripted assistant observes it, then recalls before answering (no
probes, no tasks, pages, pastes or chit-chat). Tick 0 is the warm-up (users state all their
preferences and orgs their policies) and is reported apart. The simulation's own cost (drawing
the world, running the policies) is reported beside each backend's tick time, which excludes it.
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
                    "sim_ms_per_tick": round(sim_s * 1e3, 1), "errors": b["totals"]["errors"]})
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--agents", default="1000,10000,50000", help="comma-separated agent counts")
    p.add_argument("--backend", action="append", help=f"one of {sorted(BACKENDS)} (repeat); default dict")
    p.add_argument("--ticks", type=int, default=4, help="ticks per size, the first one a warm-up")
    p.add_argument("--workdir", default="benchmarks/out/sim-work")
    p.add_argument("--json", default="benchmarks/out/sim_scaling.json")
    a = p.parse_args(argv)
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
