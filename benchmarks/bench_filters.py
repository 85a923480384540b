"""Recall latency with the governance filters on and off (issue 23): clearance, a purpose rule
and ``where=`` against the same recall without them, on the hot and the cold path.

    .venv/bin/python benchmarks/bench_filters.py --n 20000 --users 50 --queries 300 --json out.json

One data folder, one process-host runtime. "off": an actor whose grant is ``restricted``
(nothing to mask), no ``[recall.purposes]`` table, no ``where``. "on": an actor at the default
clearance (``confidential``), a purpose rule on categories, source kinds and sensitivities, and
``where={"category": ..., "since": ...}`` (fewer hits come back). "pass": every clause present
(a rule listing every value, ``where={"since": a day back}``) but every row passing: the filters'
own cost at the same hit count as "off". The two are interleaved query by query (the machine
is shared: a load spike hits both); the purpose table is switched on and off in the cores'
own configuration between queries, which only a benchmark does (it is a connect-time setting).
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

import workload  # noqa: E402

import memactors  # noqa: E402
from memactors.testing import actors, drop_hot  # noqa: E402

LEVELS = ("public", "internal", "confidential", "restricted")
CATS = ("preference", "entity_fact", "task_learning")
SOURCES = ("user_stated", "tool", "agent_inferred")
RULE = {"assist": {"categories": ["preference", "entity_fact"], "source_kinds": ["user_stated", "tool"],
                   "sensitivities": ["public", "internal", "confidential"]},
        # every clause present, every row passing: the filters' own cost at the same hit count
        "pass": {"categories": list(CATS), "source_kinds": list(SOURCES), "sensitivities": list(LEVELS)}}


def scope_of(user: str) -> str:
    return f"/org/bench/user/{user}/"


def _set_policy(rt, on: bool) -> None:
    table = RULE if on else {}
    rt.config.recall.purposes = table
    for h in actors(rt)["owners"]:
        h._obj.cfg.recall.purposes = table  # noqa: SLF001 - the process host's cores, in this process


def run(n: int, n_users: int, n_queries: int, data_dir: str) -> dict:
    mems = workload.memories(n, n_users)
    queries = workload.queries(n_queries, n_users)
    rt = memactors.connect(data_dir, config={"runtime": {"num_owners": 2}}, host="process")
    out: dict = {"n": n, "users": n_users, "queries": n_queries, "host": "process"}
    try:
        rt.grant_many([{"actor": "w", "scope": "/org/bench/", "write": True, "clearance": "restricted"},
                       {"actor": "off", "scope": "/org/bench/", "clearance": "restricted"},
                       {"actor": "on", "scope": "/org/bench/"}])
        items = [{"scope": scope_of(u), "text": t, "actor": "w", "sensitivity": LEVELS[i % 4],
                  "category": CATS[(i // 4) % 3], "source": SOURCES[(i // 12) % 3]} for i, (u, t) in enumerate(mems)]
        t0 = time.perf_counter()
        for i in range(0, len(items), 1000):
            rt.write_many(items[i:i + 1000])
        rt.flush()
        out["write_s"] = round(time.perf_counter() - t0, 1)
        since = rt.clock.now_us() - 86_400_000_000  # a day back: every row passes, the clause still runs

        modes = {"off": dict(actor="off", purpose="assist"),
                 "on": dict(actor="on", purpose="assist", where={"category": "preference", "since": since}),
                 "pass": dict(actor="off", purpose="pass", where={"since": since})}

        def one(u: str, q: str, mode: str) -> tuple[float, int]:
            _set_policy(rt, mode != "off")
            kw = modes[mode]
            t0 = time.perf_counter()
            res = rt.recall(q, task_id="bench", allowed_scopes=[scope_of(u)], top_k=10, **kw)
            return time.perf_counter() - t0, len(res.hits)

        def both(label: str) -> None:
            lat = {m: [] for m in modes}
            hits = dict.fromkeys(modes, 0)
            names = list(modes)
            for k, (u, q) in enumerate(queries * 2):  # the first pass warms caches and is dropped
                for mode in names[k % 3:] + names[:k % 3]:  # rotated: no mode always goes first
                    dt, nh = one(u, q, mode)
                    if k >= len(queries):
                        lat[mode].append(dt)
                        hits[mode] += nh
            for name in modes:
                xs = np.asarray(lat[name]) * 1000
                out[f"{label}_{name}_p50_ms"] = round(float(np.percentile(xs, 50)), 3)
                out[f"{label}_{name}_p95_ms"] = round(float(np.percentile(xs, 95)), 3)
                out[f"{label}_{name}_hits_per_recall"] = round(hits[name] / len(queries), 2)
            for name in ("on", "pass"):
                for p in ("p50", "p95"):
                    out[f"{label}_{name}_{p}_overhead_pct"] = round(
                        100 * (out[f"{label}_{name}_{p}_ms"] / out[f"{label}_off_{p}_ms"] - 1), 1)

        for u in sorted({u for u, _ in queries}):  # every queried scope hot
            rt.agent("w", scopes=[scope_of(u)]).list(limit=1)
        both("hot")
        drop_hot(rt)
        both("cold")
        _set_policy(rt, False)
    finally:
        rt.close()
    out["uptime"] = os.popen("uptime").read().strip()
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=20_000)
    ap.add_argument("--users", type=int, default=50)
    ap.add_argument("--queries", type=int, default=300)
    ap.add_argument("--json", default=None)
    a = ap.parse_args()
    d = tempfile.mkdtemp(prefix="memactors-bench-filters-")
    try:
        out = run(a.n, a.users, a.queries, os.path.join(d, "data"))
    finally:
        shutil.rmtree(d, ignore_errors=True)
    print(orjson.dumps(out, option=orjson.OPT_INDENT_2).decode())
    if a.json:
        with open(a.json, "wb") as f:
            f.write(orjson.dumps(out, option=orjson.OPT_INDENT_2))


if __name__ == "__main__":
    main()
