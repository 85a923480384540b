"""A single write's acknowledgement, and what the ledger's commit of it costs (issue 21: ack p99).

    .venv/bin/python benchmarks/bench_ack.py --n 20000 --host process

After ``--n`` writes of the issue-2 workload, ``--singles`` writes one at a time: p50 / p99 of
the acknowledgement, the owner's stages per write (``rt.stats()``) and, on the process host,
the ledger's commit timed in parts (its SQL statements, the anchor file) by wrapping them.
``--recalling R``: meanwhile a thread recalls R a second, in batches of ``--recall-batch`` (an
agent app serving recalls as it writes, or a simulation's tick beside a live agent); 0 for none.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import shutil
import sys
import tempfile
import threading
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import workload  # noqa: E402

import memactors  # noqa: E402
from memactors.store import ledger as L  # noqa: E402
from memactors.store import ledger_key as K  # noqa: E402

SPENT: dict[str, float] = collections.defaultdict(float)


def _timed(cls, name: str) -> None:
    f = getattr(cls, name)

    def g(*args, **kwargs):
        t0 = time.perf_counter()
        try:
            return f(*args, **kwargs)
        finally:
            SPENT[f"{cls.__name__}.{name}"] += time.perf_counter() - t0

    setattr(cls, name, g)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=20_000)
    ap.add_argument("--singles", type=int, default=500)
    ap.add_argument("--host", default="process", choices=("process", "ray"))
    ap.add_argument("--recalling", type=int, default=0, help="recalls a second made meanwhile by a thread")
    ap.add_argument("--recall-batch", type=int, default=64, help="recalls a recall_many call")
    a = ap.parse_args()
    for cls, name in ((L.Ledger, "commit"), (L.Ledger, "_x"), (K.LedgerKey, "write_head")):
        _timed(cls, name)  # in this process only: the process host's ledger
    mems = workload.memories(a.n, 1000)
    d = tempfile.mkdtemp()
    try:
        with memactors.connect(os.path.join(d, "data"), host=a.host) as rt:
            rt.grant_many([{"actor": "a", "scope": "/org/bench/", "read": True, "write": True}])
            for i in range(0, a.n, 1000):
                rt.write_many([{"scope": f"/org/bench/user/{u}/", "text": t, "actor": "a"} for u, t in mems[i:i + 1000]])
            rt.flush()
            before = {k: v for o in rt.stats()["owners"] for k, v in o["timing_s"].items()}
            SPENT.clear()
            stop, recalled = threading.Event(), [0]

            def recalling():
                reqs = [{"query": f"what about tea {j}", "actor": "a", "task_id": "t",
                         "allowed_scopes": [f"/org/bench/user/u{j * 7 % 1000:04d}/"], "purpose": "p"} for j in range(a.recall_batch)]
                t_next = time.perf_counter()
                while not stop.is_set():
                    rt.recall_many(reqs)
                    recalled[0] += len(reqs)
                    t_next += len(reqs) / a.recalling
                    time.sleep(max(0.0, t_next - time.perf_counter()))

            beside = threading.Thread(target=recalling, daemon=True)
            if a.recalling:
                beside.start()
                time.sleep(0.5)
            lat = []
            for i in range(a.singles):
                u = f"u{i % 1000:04d}"
                t0 = time.perf_counter()
                rt.write(f"/org/bench/user/{u}/", f"single write {i} about tea and {u}", actor="a")
                lat.append(time.perf_counter() - t0)
            stop.set()
            if a.recalling:
                beside.join()
            after = {k: v for o in rt.stats()["owners"] for k, v in o["timing_s"].items()}
        lat_ms = np.asarray(lat) * 1000
        per = lambda s: round(s / a.singles * 1e3, 3)  # noqa: E731 - ms a write
        print(json.dumps({"host": a.host, "ack_p50_ms": round(float(np.percentile(lat_ms, 50)), 2),
                          "ack_p99_ms": round(float(np.percentile(lat_ms, 99)), 2), "recalled_beside": recalled[0],
                          "owner_ms_per_write": {k: per(after[k] - before.get(k, 0.0)) for k in after},
                          "ledger_ms_per_write": {k: per(v) for k, v in SPENT.items()},
                          "load_average_1m": os.getloadavg()[0]}))
    finally:
        shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    main()
