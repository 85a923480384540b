"""A recall right after a write to the same scope, against recalls of a quiet scope (issue 21:
hot recall, as a live agent uses it: observe, then recall).

    RAY_AUTH_MODE=disabled .venv/bin/python benchmarks/bench_recall_after_write.py --memories 1000 --host process

One scope holds ``--memories`` of the issue-2 workload's memories; then ``--rounds`` recalls of a
quiet scope, and as many rounds of one write followed (after ``--gap`` seconds) by one recall,
each timed from the caller. A write makes the scope's next hot index (a new generation): the
figure is what building it costs the recall that follows.
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
os.environ.setdefault("RAY_AUTH_MODE", "disabled")

import workload  # noqa: E402

import memactors  # noqa: E402

SCOPE = "/org/bench/user/u0001/"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--memories", type=int, default=1000)
    ap.add_argument("--rounds", type=int, default=100)
    ap.add_argument("--gap", type=float, default=0.02, help="seconds between a write and its recall")
    ap.add_argument("--host", choices=("ray", "process"), default="process")
    a = ap.parse_args()
    d = tempfile.mkdtemp(prefix="memactors-bench-")
    rt = memactors.connect(d, host=a.host)
    try:
        rt.grant_many([{"actor": "agent", "scope": "/org/bench/", "read": True, "write": True}])
        texts = [t for _, t in workload.memories(a.memories * 3, 3)][: a.memories]
        for i in range(0, len(texts), 500):
            rt.write_many([{"scope": SCOPE, "text": t, "actor": "agent"} for t in texts[i: i + 500]])

        def recall() -> float:
            t0 = time.perf_counter()
            rt.recall("what does the user like to drink", actor="agent", task_id="bench", allowed_scopes=[SCOPE],
                      purpose="bench", top_k=10)
            return time.perf_counter() - t0

        for _ in range(20):
            recall()
        quiet = [recall() for _ in range(a.rounds)]
        after = []
        for i in range(a.rounds):
            rt.write(SCOPE, f"new fact number {i} about tea and biscuits {i * 7}", actor="agent")
            time.sleep(a.gap)
            after.append(recall())
        ms = lambda xs, p: round(float(np.percentile(xs, p)) * 1e3, 2)  # noqa: E731
        print(json.dumps({"host": a.host, "memories": a.memories, "quiet_p50_ms": ms(quiet, 50),
                          "quiet_p95_ms": ms(quiet, 95), "after_write_p50_ms": ms(after, 50),
                          "after_write_p95_ms": ms(after, 95)}))
    finally:
        rt.close()
        shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    main()
