"""The hot state's cost per ``ScopeState.put`` as facts gain versions (each new version
supersedes the last: two puts), pure, no I/O.

    .venv/bin/python benchmarks/bench_scope_put.py --facts 200 --versions 3,20,100

A put counts the fact's versions on record (``ScopeState.versions``) so that the next version
is one above the highest: this measures what that costs as superseded versions pile up.
"""

from __future__ import annotations

import argparse
import time

from memactors.core.versions import ScopeState


def run(facts: int, per_fact: int) -> float:
    st, live, n = ScopeState(), {}, 0
    t0 = time.perf_counter()
    for v in range(1, per_fact + 1):
        for k in range(facts):
            rec = {"memory_id": f"m{k}-{v}", "entity_key": f"k{k}", "version": v, "status": "active",
                   "content_hash": f"h{k}-{v}", "pool": "vault"}
            old = live.get(k)
            if old is not None:
                st.put({**old, "status": "superseded"})
                n += 1
            st.put(rec)
            live[k] = rec
            n += 1
    return (time.perf_counter() - t0) / n * 1e6


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--facts", type=int, default=200)
    ap.add_argument("--versions", default="3,20,100")
    ap.add_argument("--repeat", type=int, default=5)
    a = ap.parse_args()
    for per in (int(x) for x in a.versions.split(",")):
        best = min(run(a.facts, per) for _ in range(a.repeat))
        print(f"{per:>4} versions a fact: {best:.2f} us per put")


if __name__ == "__main__":
    main()
