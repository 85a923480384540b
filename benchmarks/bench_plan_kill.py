"""A GC plan worker killed mid-plan, in a loop that prints each victim's figures (the rounds
of ``tests/chaos/test_plan_worker.py``, which asserts them):

    RAY_AUTH_MODE=disabled .venv/bin/python benchmarks/bench_plan_kill.py --rounds 20

For each victim (``scan``: a scan task's worker; ``plan``: the sweep's plan task): rounds,
how many kills hit a running task, how many plans equal the uninterrupted one, wall time."""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "chaos"))
sys.path.insert(0, str(ROOT))
os.environ.setdefault("RAY_AUTH_MODE", "disabled")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--seed", type=int, default=20261201)
    args = ap.parse_args()
    import ray

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    import lance
    import test_plan_worker as T

    from memactors.actors import sweep_plan as SP
    from memactors.core.clock import ManualClock

    now = ManualClock().advance(days=400)
    path = os.path.join(tempfile.mkdtemp(prefix="plan-kill-"), "memories.lance")
    lance.write_dataset(T._table(T.ROWS, now), path, max_rows_per_file=T.ROWS // 6)
    t0 = time.perf_counter()
    reference = SP.plan_dataset(path, now, workers=2)
    print(f"{T.ROWS:,} rows; uninterrupted plan {time.perf_counter() - t0:.2f} s")
    rng = random.Random(args.seed)
    for victim in sorted(T.VICTIMS):
        rs = [T._round((path, now, reference), victim, rng) for _ in range(args.rounds)]
        secs = [r["seconds"] for r in rs]
        print(f"{victim}: rounds {len(rs)}, killed while running {sum(bool(r.get('hit')) for r in rs)}, "
              f"plan equal {sum(r['same'] and r['rows'] == T.ROWS for r in rs)}, "
              f"wall p50 {statistics.median(secs):.2f} s, max {max(secs):.2f} s")
    ray.shutdown()


if __name__ == "__main__":
    main()
