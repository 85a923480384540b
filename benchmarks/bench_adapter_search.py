"""The LangGraph store's search against the core's recall, same memories, same top 10.

    .venv/bin/python -m benchmarks.bench_adapter_search --n 20000

Each user's namespace maps to the user's scope (as in ``benchmarks.peers``); 300 searches
through ``MemactorsStore.search`` then the same 300 through ``rt.recall`` (no threshold).
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

import numpy as np

from benchmarks.workload import memories, queries


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=20_000)
    ap.add_argument("--queries", type=int, default=300)
    ap.add_argument("--host", default="process")
    a = ap.parse_args()

    import memactors
    from langgraph.store.base import PutOp
    from memactors.integrations.langgraph import MemactorsStore

    mems, qs = memories(a.n, 1000), queries(a.queries, 1000)
    with tempfile.TemporaryDirectory() as d, memactors.connect(os.path.join(d, "data"), host=a.host) as rt:
        rt.grant("lg-bench", "/org/bench/", write=True)
        store = MemactorsStore(rt, actor="lg-bench", root="/org/bench/",
                               scope_of=lambda ns: f"/org/bench/user/{ns[1]}/")
        for s in range(0, a.n, 1000):
            store.batch([PutOp(("users", u, "memories"), str(i), {"text": t, "user_id": u})
                         for i, (u, t) in enumerate(mems[s:s + 1000], s)])
        rt.flush()

        def timed(fn) -> np.ndarray:
            out = []
            for u, q in qs:
                t = time.perf_counter()
                fn(u, q)
                out.append(time.perf_counter() - t)
            return np.array(out) * 1e3

        lg = timed(lambda u, q: store.search(("users", u, "memories"), query=q, limit=10))
        core = timed(lambda u, q: rt.recall(q, actor="lg-bench", allowed_scopes=[f"/org/bench/user/{u}/"],
                                            top_k=10, threshold=0.0))
        for name, lat in (("MemactorsStore.search", lg), ("rt.recall", core)):
            print(f"{name:22} p50 {np.percentile(lat, 50):.2f}  p95 {np.percentile(lat, 95):.2f} ms")


if __name__ == "__main__":
    main()
