"""Decide's cost as one scope grows (issue 21: decide flat from 10 to 1,000s of memories a scope).

    MEMACTORS_HOST=process .venv/bin/python benchmarks/bench_scope_growth.py --writes 4000 --batch 500

Every write goes to one scope (the one-scope workload of bench_contradictions, its check off so
only dedup's lookups run); after each batch, the CPU of this process per write and each owner
stage's time per write (``rt.stats()`` timings) as the scope has grown.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_contradictions as B  # noqa: E402

import memactors  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--writes", type=int, default=4000)
    ap.add_argument("--batch", type=int, default=500)
    a = ap.parse_args()
    items = B.items("worst", a.writes)
    rows = []
    with memactors.connect("memory://", config={"lifecycle": {"text_contradiction_cosine": 2.0}}) as rt:
        rt.grant("bench", "/org/bench/", write=True)
        prev: dict = {}
        for i in range(0, a.writes, a.batch):
            c0 = time.process_time()
            rt.write_many(items[i:i + a.batch])
            cpu = time.process_time() - c0
            t = {k: v for o in rt.stats()["owners"] for k, v in o["timing_s"].items() if v}
            stages = {k: round((t[k] - prev.get(k, 0)) / a.batch * 1e6) for k in t}
            prev = t
            rows.append({"memories": i + a.batch, "cpu_us": round(cpu / a.batch * 1e6), **stages})
            print(json.dumps(rows[-1]), flush=True)
    print(json.dumps({"load_average_1m": os.getloadavg()[0], "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
