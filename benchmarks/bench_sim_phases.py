"""Where the simulation's memactors tick goes (issue 21: the simulation tick), phase by phase.

    .venv/bin/python benchmarks/bench_sim_phases.py --host ray

The default world (`make run`'s: 1,000 assistants, seed 7, 14 ticks) on the memactors backend
alone; each phase of its ticks timed (sessions started, the tick's writes, recalls, turns
ended, forgets, tasks completed; sweeps and counts beside them), in seconds over the run.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import shutil
import tempfile
import time

from memactors.runtime import session as S
from memactors.sim import backend_memactors as BM
from memactors.sim import runner
from memactors.sim.world import WorldConfig

SPENT: dict[str, float] = collections.defaultdict(float)


def _timed(owner, name: str, label: str) -> None:
    f = getattr(owner, name)

    def g(*args, **kwargs):
        t0 = time.perf_counter()
        try:
            return f(*args, **kwargs)
        finally:
            SPENT[label] += time.perf_counter() - t0

    setattr(owner, name, g)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--host", default="ray", choices=("process", "ray"))
    ap.add_argument("--days", type=int, default=14)
    a = ap.parse_args()
    for name in ("start_all", "flush_all", "end_turn_all", "complete_all"):
        _timed(S, name, name)  # the backend imports them from the module at each tick
    for name, label in (("_recalls", "recalls"), ("_forgets", "forgets"), ("apply", "ticks (all phases)"),
                        ("sweep", "sweeps"), ("counts", "counts")):
        _timed(BM.MemactorsBackend, name, label)
    d = tempfile.mkdtemp()
    try:
        backend = BM.MemactorsBackend(d, config={"runtime": {"host": a.host}})
        t0 = time.perf_counter()
        runner.run(WorldConfig(seed=7, days=a.days), [backend], progress=False, scan_storage=False)
        wall = time.perf_counter() - t0
    finally:
        shutil.rmtree(d, ignore_errors=True)
    print(json.dumps({"host": a.host, "wall_s": round(wall, 1),
                      "phases_s": {k: round(v, 2) for k, v in sorted(SPENT.items(), key=lambda kv: -kv[1])},
                      "load_average_1m": os.getloadavg()[0]}, indent=1))


if __name__ == "__main__":
    main()
