"""The LangGraph store's search against the core's recall, same memories, same top 10.

    .venv/bin/python -m benchmarks.bench_adapter_search --n 20000

Each user's namespace maps to the user's scope (as in ``benchmarks.peers``); 300 searches
through ``MemactorsStore.search`` and the same 300 through ``rt.recall`` (no threshold). One
untimed pass of each first (every scope's hot index built, as in a running agent), then
``--rounds`` timed passes of each, alternated, so neither side finds the other's work warm;
the figures are over every timed search of a side.
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
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--users", type=int, default=1000, help="namespaces (one scope each): n / users items each")
    a = ap.parse_args()

    import memactors
    from langgraph.store.base import PutOp
    from memactors.integrations.langgraph import MemactorsStore

    mems, qs = memories(a.n, a.users), queries(a.queries, a.users)
    with tempfile.TemporaryDirectory() as d, memactors.connect(os.path.join(d, "data"), host=a.host) as rt:
        rt.grant("lg-bench", "/org/bench/", write=True)
        store = MemactorsStore(rt, actor="lg-bench", root="/org/bench/",
                               scope_of=lambda ns: f"/org/bench/user/{ns[1]}/")
        for s in range(0, a.n, 1000):
            store.batch([PutOp(("users", u, "memories"), str(i), {"text": t, "user_id": u})
                         for i, (u, t) in enumerate(mems[s:s + 1000], s)])
        rt.flush()

        def timed(fn) -> list[float]:
            out = []
            for u, q in qs:
                t = time.perf_counter()
                fn(u, q)
                out.append((time.perf_counter() - t) * 1e3)
            return out

        sides = {"MemactorsStore.search": lambda u, q: store.search(("users", u, "memories"), query=q, limit=10),
                 "rt.recall": lambda u, q: rt.recall(q, actor="lg-bench", allowed_scopes=[f"/org/bench/user/{u}/"],
                                                     top_k=10, threshold=0.0)}
        for fn in sides.values():
            timed(fn)  # warm: hot indexes built
        lat: dict[str, list[float]] = {name: [] for name in sides}
        for r in range(a.rounds):
            for name in (list(sides) if r % 2 == 0 else list(sides)[::-1]):
                lat[name] += timed(sides[name])
        for name, v in lat.items():
            print(f"{name:22} p50 {np.percentile(v, 50):.2f}  p95 {np.percentile(v, 95):.2f} ms")
        lg, core = (np.percentile(lat[n], [50, 95]) for n in sides)
        print(f"adapter / core: p50 {lg[0] / core[0]:.2f}x  p95 {lg[1] / core[1]:.2f}x")


if __name__ == "__main__":
    main()
