"""The ledger writer's commit alone (issue #8): a sweep's status events committed in batches of
20,000 into a ledger that already holds ``--prefill`` events, no Ray, no owners. What an applied
sweep's ledger side costs without the owners sharing the cores.

    .venv/bin/python benchmarks/bench_ledger_commit.py --prefill 1200000 --events 900000

``--writes N``: instead, the issue-2 workload's N writes (a record each, as an owner decides
them) in the owner's chunks of ``ledger_chunk``: the owner's encoding and the writer's commit,
each in us a write (wall and this process's CPU), the ledger's share of a write's cost.

    .venv/bin/python benchmarks/bench_ledger_commit.py --writes 100000
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from memactors.core import events as E  # noqa: E402
from memactors.core.idempotency import IdempotencyCache  # noqa: E402
from memactors.core.project import Change  # noqa: E402
from memactors.store.entries import Entry, encode  # noqa: E402
from memactors.store.ledger import Ledger  # noqa: E402

BATCH = 20_000
PATCH = {"status": "evicted"}


def batch(k: int, n: int) -> dict:
    changes = [Change(E.STATUS, f"/org/t{i % 500:04d}/user/u0/", f"{k:08x}{i:024x}", patch=PATCH,
                      reason="gc: soft_expired_unused") for i in range(n)]
    return encode([Entry(f"gc-bench-{k}", "lifecycle", 10**15, changes, b'{"decision":"swept"}', None, [], [True] * n)])


def writes(n: int, chunk: int | None = None) -> None:
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import orjson
    import workload

    from memactors.core import records as R
    from memactors.core.config import Config

    chunk = chunk or Config().runtime.ledger_chunk
    entries = []
    for u, text in workload.memories(n, 1_000):
        req = R.WriteRequest(f"/org/bench/user/{u}/", text, "a").validate()
        rec = R.build_record(req, text, R.new_memory_id(), 10**15)
        result = orjson.dumps({"decision": "accepted", "memory_id": rec["memory_id"], "scope": req.scope})
        entries.append(Entry(R.new_memory_id(), "a", 10**15, [Change(E.WRITE, req.scope, rec["memory_id"], record=rec)],
                             result, os.urandom(16), [], [True]))
    root = tempfile.mkdtemp(prefix="memactors-ledger-")
    try:
        os.makedirs(os.path.join(root, "keys"))
        led = Ledger(os.path.join(root, "ledger.duckdb"), os.path.join(root, "keys"),
                     wal_max_mb=Config().runtime.ledger_wal_max_mb)  # as the runtime opens it
        known = IdempotencyCache(86_400 * 10**6)
        wall, cpu = {"encode": 0.0, "commit": 0.0}, {"encode": 0.0, "commit": 0.0}
        for start in range(0, n, chunk):
            w, c = time.perf_counter(), time.process_time()
            b = encode(entries[start:start + chunk])
            w2, c2 = time.perf_counter(), time.process_time()
            led.commit(b, known)
            wall["encode"] += w2 - w
            cpu["encode"] += c2 - c
            wall["commit"] += time.perf_counter() - w2
            cpu["commit"] += time.process_time() - c2
        led.close()
        print({"writes": n, "chunk": chunk, "us_per_write_wall": {k: round(v / n * 1e6, 1) for k, v in wall.items()},
               "us_per_write_cpu": {k: round(v / n * 1e6, 1) for k, v in cpu.items()}})
    finally:
        shutil.rmtree(root, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--prefill", type=int, default=1_200_000)
    ap.add_argument("--events", type=int, default=900_000)
    ap.add_argument("--writes", type=int, default=0)
    ap.add_argument("--chunk", type=int, default=None, help="writes a commit (default: the owner's ledger_chunk)")
    a = ap.parse_args()
    if a.writes:
        return writes(a.writes, a.chunk)
    root = tempfile.mkdtemp(prefix="memactors-ledger-")
    try:
        os.makedirs(os.path.join(root, "keys"))
        led = Ledger(os.path.join(root, "ledger.duckdb"), os.path.join(root, "keys"), wal_max_mb=128)
        known = IdempotencyCache(86_400 * 10**6)
        for k in range(a.prefill // BATCH):
            led.commit(batch(k, BATCH), known)
        led.checkpoint()
        batches = [batch(10**6 + k, BATCH) for k in range(a.events // BATCH)]
        times = []
        t0 = time.perf_counter()
        for b in batches:
            t1 = time.perf_counter()
            led.commit(b, known)
            times.append(time.perf_counter() - t1)
        dt = time.perf_counter() - t0
        led.close()
        times.sort()
        print({"prefill": a.prefill, "events": len(batches) * BATCH, "seconds": round(dt, 2),
               "events_per_s": round(len(batches) * BATCH / dt), "commit_median_s": round(times[len(times) // 2], 3),
               "commit_max_s": round(times[-1], 3)})
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
