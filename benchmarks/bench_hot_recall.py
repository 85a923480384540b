"""Hot recall, one at a time and as one ``recall_many`` (issue 21: hot recall p95).

    .venv/bin/python benchmarks/bench_hot_recall.py --n 30000 --host process

The issue-2 workload's memories (``--users`` scopes) written, flushed, then ``--queries``
recalls each over its user's scope: a warm-up pass, then the timed pass one recall at a time
(p50 / p95 ms) and the same requests as one ``recall_many`` (us a recall).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import workload  # noqa: E402

import memactors  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=30_000)
    ap.add_argument("--users", type=int, default=1_000)
    ap.add_argument("--queries", type=int, default=2_000)
    ap.add_argument("--host", default="process", choices=("process", "ray"))
    a = ap.parse_args()
    mems, queries = workload.memories(a.n, a.users), workload.queries(a.queries, a.users)
    d = tempfile.mkdtemp()
    try:
        with memactors.connect(os.path.join(d, "data"), host=a.host) as rt:
            rt.grant_many([{"actor": "a", "scope": "/org/bench/", "read": True, "write": True}])
            for i in range(0, a.n, 1000):
                rt.write_many([{"scope": f"/org/bench/user/{u}/", "text": t, "actor": "a"} for u, t in mems[i:i + 1000]])
            rt.flush()
            reqs = [{"query": q, "actor": "a", "task_id": "bench", "allowed_scopes": [f"/org/bench/user/{u}/"],
                     "purpose": "bench", "top_k": 10} for u, q in queries]

            def one_by_one() -> np.ndarray:
                lat = []
                for rq in reqs:
                    t0 = time.perf_counter()
                    rt.recall(rq["query"], actor="a", task_id="bench", allowed_scopes=rq["allowed_scopes"],
                              purpose="bench", top_k=10)
                    lat.append(time.perf_counter() - t0)
                return np.asarray(lat) * 1000

            one_by_one()  # warm-up: every scope's index built
            lat = one_by_one()
            t0 = time.perf_counter()
            rt.recall_many(reqs)
            many_us = (time.perf_counter() - t0) / len(reqs) * 1e6
        print(json.dumps({"host": a.host, "n": a.n, "queries": len(reqs), "hot_p50_ms": round(float(np.percentile(lat, 50)), 3),
                          "hot_p95_ms": round(float(np.percentile(lat, 95)), 3), "recall_many_us": round(many_us),
                          "load_average_1m": os.getloadavg()[0]}))
    finally:
        shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    main()
