"""Where a write's CPU goes on the Ray host: every process's CPU over a run of governed writes.

    RAY_AUTH_MODE=disabled .venv/bin/python benchmarks/bench_write_cpu.py --n 30000 --users 1000

The issue-2 workload's ``--n`` memories over ``--users`` scopes, sent as ``write_many`` of 1,000
after one batch to warm up, then ``rt.flush()``. Each process's user and system CPU is read
from ``/proc/<pid>/stat`` before and after (Linux): the scope owners, the gate worker, the
ledger writer, the driver, Ray's raylet and GCS. Prints writes/s, CPU seconds and us a write
per process (owners summed), and the owners' stage timings (``rt.stats()``, wall).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sys
import tempfile
import time
from collections import Counter

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import workload  # noqa: E402

import memactors  # noqa: E402

_TICK = os.sysconf("SC_CLK_TCK")


def cpu_by_process() -> dict[int, tuple[str, float]]:
    """pid -> (command line, CPU seconds) of this process and every Ray process."""
    out = {}
    for pid in (int(p) for p in os.listdir("/proc") if p.isdigit()):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode(errors="replace")
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:  # gone meanwhile
            continue
        if pid == os.getpid() or "ray" in cmd:
            out[pid] = (cmd, (int(fields[11]) + int(fields[12])) / _TICK)
    return out


def name_of(pid: int, cmd: str) -> str:
    if pid == os.getpid():
        return "driver"
    m = re.match(r"ray::(\w+)", cmd)  # an actor's title (its class, then the method it runs)
    if m:
        return m.group(1)
    return os.path.basename(cmd.split(" ")[0]) or "other"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=30_000)
    ap.add_argument("--users", type=int, default=1_000)
    a = ap.parse_args()
    items = [{"scope": f"/org/bench/user/{u}/", "text": t, "actor": "a"} for u, t in workload.memories(a.n, a.users)]
    d = tempfile.mkdtemp()
    try:
        with memactors.connect(os.path.join(d, "data")) as rt:
            rt.grant_many([{"actor": "a", "scope": "/org/bench/", "read": True, "write": True}])
            rt.write_many(items[:1000])
            rt.flush()
            before, t0 = cpu_by_process(), time.perf_counter()
            for i in range(1000, len(items), 1000):
                rt.write_many(items[i:i + 1000])
            rt.flush()
            wall, after = time.perf_counter() - t0, cpu_by_process()
            stages: dict[str, float] = {}
            for o in rt.stats()["owners"]:
                for k, v in o["timing_s"].items():
                    stages[k] = stages.get(k, 0.0) + v
        n = len(items) - 1000
        cpu: Counter = Counter()
        for pid, (cmd, c) in after.items():
            cpu[name_of(pid, cmd)] += c - before.get(pid, (cmd, 0.0))[1]
        total = sum(cpu.values())
        print(json.dumps({
            "n": n, "writes_per_s": round(n / wall), "wall_s": round(wall, 2), "cores_busy": round(total / wall, 2),
            "cpu_s": {k: round(v, 2) for k, v in cpu.most_common() if v >= 0.01},
            "cpu_us_per_write": {k: round(v / n * 1e6) for k, v in cpu.most_common() if v >= 0.01},
            "total_cpu_us_per_write": round(total / n * 1e6),
            "owner_stage_us_per_write": {k: round(v / n * 1e6) for k, v in stages.items()},
            "load_average_1m": os.getloadavg()[0]}, indent=1))
    finally:
        shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    main()
