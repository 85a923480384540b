"""Dedup's lookup in a busy runtime's scopes (issue 21: decide per write), screened and whole.

    .venv/bin/python benchmarks/bench_dedup_lookup.py --users 1000 --per-user 110

The issue-2 workload's memories, one scope a user, each scope's text-only vectors cached as an
owner leaves them after a committed batch; then one lookup (``NearCopies.find``, the default
0.95) a scope in random order, as a batch of one write a scope makes them: a scope's matrix is
out of the CPU's caches by the time its next write comes. Reported: microseconds a lookup (the
staged view and the cache check included) with the screen (the rows' first quarter and the
rest's norms, ``_NearCache.screen``) and with every row's cosine, alternately, and whether both
named the same memories.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import workload  # noqa: E402

from memactors.core.versions import ScopeState  # noqa: E402
from memactors.embed.hashing import HashEmbedder  # noqa: E402
from memactors.engine.hot import NearCopies  # noqa: E402


def scopes(users: int, per_user: int) -> tuple[list[ScopeState], list[np.ndarray]]:
    by: dict[str, list[str]] = {}
    for u, t in workload.memories(users * per_user, users):
        by.setdefault(u, []).append(t)
    emb, states, probes = HashEmbedder(384), [], []
    for u, texts in by.items():
        vecs = emb.embed(texts)
        parent = ScopeState()
        near = NearCopies(parent.stage(), 0.95)
        near.find(vecs[0])  # built, as an owner's first lookup builds it
        for i in range(len(texts) - 1):
            near.state.put({"memory_id": f"{u}-{i}", "entity_key": None, "status": "active",
                            "content_hash": f"{u}-{i}", "version": 1}, vecs[i])
            near.add(f"{u}-{i}", vecs[i])
        near.keep()
        near.state.commit()
        states.append(parent)
        probes.append(vecs[-1])  # the scope's next write
    return states, probes


def lookups(states, probes, order) -> tuple[float, list]:
    t0, found = time.perf_counter(), []
    for k in order:
        found.append(NearCopies(states[k].stage(), 0.95, 0.4).find(probes[k]))
    return (time.perf_counter() - t0) / len(order) * 1e6, found


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--users", type=int, default=1000)
    ap.add_argument("--per-user", type=int, default=110)
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    states, probes = scopes(a.users, a.per_user)
    order = np.random.default_rng(0).permutation(len(states))
    screen_from, out = NearCopies.SCREEN_FROM, {"screened_us": [], "whole_us": []}
    same = True
    for _ in range(a.rounds):
        NearCopies.SCREEN_FROM = 1 << 30
        whole, want = lookups(states, probes, order)
        NearCopies.SCREEN_FROM = screen_from
        screened, got = lookups(states, probes, order)
        out["whole_us"].append(round(whole, 2))
        out["screened_us"].append(round(screened, 2))
        same = same and got == want
    print(json.dumps({"scopes": len(states), "rows_per_scope": round(float(np.mean(
        [len(s.near_cache.ids) for s in states])), 1), **out, "same_answers": same}))


if __name__ == "__main__":
    main()
