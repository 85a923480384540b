"""Governed writes/s and the owner's time per write by stage (issue 21: the CPU budget a write).

    .venv/bin/python benchmarks/bench_write_stages.py --n 30000 --users 1000 --host process

The issue-2 workload's ``--n`` memories over ``--users`` scopes (30 users: 1,000 memories a
scope at 30,000), sent as ``write_many`` of 1,000; writes/s, then each owner stage's seconds
over the run (``rt.stats()``: prepare, decide, ledger wait, L2 flush) and per write in us.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import workload  # noqa: E402

import memactors  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=30_000)
    ap.add_argument("--users", type=int, default=1_000)
    ap.add_argument("--host", default="process", choices=("process", "ray"))
    a = ap.parse_args()
    mems = workload.memories(a.n, a.users)
    items = [{"scope": f"/org/bench/user/{u}/", "text": t, "actor": "a"} for u, t in mems]
    d = tempfile.mkdtemp()
    try:
        with memactors.connect(os.path.join(d, "data"), host=a.host) as rt:
            rt.grant_many([{"actor": "a", "scope": "/org/bench/", "read": True, "write": True}])
            t0 = time.perf_counter()
            for i in range(0, len(items), 1000):
                rt.write_many(items[i:i + 1000])
            dt = time.perf_counter() - t0
            stages: dict[str, float] = {}
            for o in rt.stats()["owners"]:
                for k, v in o["timing_s"].items():
                    stages[k] = stages.get(k, 0.0) + v
        print(json.dumps({"host": a.host, "n": a.n, "users": a.users, "writes_per_s": round(a.n / dt),
                          "stage_s": {k: round(v, 3) for k, v in stages.items()},
                          "stage_us_per_write": {k: round(v / a.n * 1e6) for k, v in stages.items()},
                          "load_average_1m": os.getloadavg()[0]}))
    finally:
        shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    main()
