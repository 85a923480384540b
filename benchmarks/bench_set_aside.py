"""What erasing L1 items past their hard TTL costs a sweep (the ledger's set-aside index).

L1 working items never reach L2, which a sweep plans over; the ledger indexes their hard expiry
(and that of evicted memories) when a sweep next plans, reading each record once. This writes
``--n`` working items with a 5-day TTL on the process host, then times: the first plan (the
index built), a second plan (nothing new to index), the sweep that erases them all six days
later, and ``audit.verify`` (which recomputes the index from the records).

    python benchmarks/bench_set_aside.py --n 50000
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time

import memactors


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=50_000, help="working items written")
    args = ap.parse_args()
    root = tempfile.mkdtemp(prefix="memactors-set-aside-")
    os.environ.setdefault("MEMACTORS_KEY_DIR", os.path.join(root, "keys"))
    clock = memactors.ManualClock()
    rt = memactors.connect(os.path.join(root, "data"), host="process", clock=clock)
    try:
        rt.grant("ag", "/org/acme/", write=True)
        t0 = time.perf_counter()
        for k in range(0, args.n, 5000):
            rt.write_many([dict(scope=f"/org/acme/user/u{(k + i) % 50}/", actor="ag", pool="working", ttl_days=5,
                                text=f"working note {k + i} about the zebra count {k + i * 7}")
                           for i in range(min(5000, args.n - k))])
        out = {"n": args.n, "write_s": round(time.perf_counter() - t0, 2)}
        t0 = time.perf_counter()
        rt.gc(dry_run=True)
        out["first_plan_s"] = round(time.perf_counter() - t0, 2)
        t0 = time.perf_counter()
        rt.gc(dry_run=True)
        out["second_plan_s"] = round(time.perf_counter() - t0, 2)
        clock.advance(days=6)
        t0 = time.perf_counter()
        swept = rt.gc()
        out["sweep_s"], out["erased"] = round(time.perf_counter() - t0, 2), swept.by_rule["hard_expired"]
        t0 = time.perf_counter()
        out["verify_ok"] = rt.audit.verify()["ok"]
        out["verify_s"] = round(time.perf_counter() - t0, 2)
        print(out)
    finally:
        rt.close()
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
