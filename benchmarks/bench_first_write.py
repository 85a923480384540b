"""``connect()`` to the first write on the process host, each run a fresh Python process on a
new folder: import, connect, grant, write, timed apart; and whether lancedb was loaded by then.

    .venv/bin/python benchmarks/bench_first_write.py --runs 3

Figures: benchmarks/RESULTS.md.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile

import orjson

CHILD = r"""
import sys, time, orjson
t0 = time.perf_counter()
import memactors
t1 = time.perf_counter()
rt = memactors.connect(sys.argv[1], host="process")
t2 = time.perf_counter()
rt.grant("bench", "/org/acme/", write=True)
t3 = time.perf_counter()
rt.write("/org/acme/", "the deploy window is Tuesday", actor="bench")
t4 = time.perf_counter()
lancedb = "lancedb" in sys.modules
rt.close()
print(orjson.dumps({"import": t1 - t0, "connect": t2 - t1, "grant": t3 - t2, "write": t4 - t3,
                    "total": t4 - t0, "lancedb_loaded": lancedb}).decode())
"""


def one() -> dict:
    with tempfile.TemporaryDirectory() as d:
        out = subprocess.run([sys.executable, "-c", CHILD, os.path.join(d, "data")], capture_output=True,
                             text=True, timeout=300, check=True)
        return orjson.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    runs = [one() for _ in range(args.runs)]
    for r in runs:
        print("  ".join(f"{k} {v:.3f}" if isinstance(v, float) else f"{k} {v}" for k, v in r.items()))
    totals = ", ".join(f"{r['total']:.2f}" for r in runs)
    print(f"total: {totals} s")


if __name__ == "__main__":
    main()
