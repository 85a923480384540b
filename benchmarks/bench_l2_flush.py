"""The L2 flush alone (issue 21: "the L2 flush as cheap as its engine allows"): the issue-2
workload's records appended to a Lance table as an owner's flushes append them, no Ray, no
owner, nothing else on the cores. Per row: the records made columns (``to_arrow``, Python),
Lance's append, the index catch-up every ``l2_reindex_rows`` and the compaction of small
fragments, each wall and CPU time (this process, all its threads).

    .venv/bin/python benchmarks/bench_l2_flush.py --n 100000 --batch 5000

The owners' ``l2_flush`` timing in ``rt.stats()`` is wall time in a thread beside the owner's
own Python, so on the process host it includes waiting for the GIL; this is the stage's own cost.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import workload  # noqa: E402

from memactors.core import records as R  # noqa: E402
from memactors.core.config import Config  # noqa: E402
from memactors.core.scoring import tokenize  # noqa: E402
from memactors.embed import get_embedder  # noqa: E402
from memactors.engine.outbox import L2Outbox  # noqa: E402
from memactors.store.lance_store import L2Store  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--users", type=int, default=1_000)
    ap.add_argument("--batch", type=int, default=Config().runtime.l2_flush_max_rows)
    a = ap.parse_args()
    cfg = Config()
    emb = get_embedder(cfg.embedder.name, cfg.embedder.dim)
    mems = workload.memories(a.n, a.users)
    recs = []
    for u, text in mems:
        req = R.WriteRequest(f"/org/bench/user/{u}/", text, "a").validate()
        recs.append(R.build_record(req, text, R.new_memory_id(), 10**15, search_text=" ".join(tokenize(text))))
    vecs = emb.embed([t for _, t in mems])
    root = tempfile.mkdtemp(prefix="memactors-l2-")
    wall = {"to_arrow": 0.0, "append": 0.0, "reindex": 0.0, "compact": 0.0}
    cpu = dict.fromkeys(wall, 0.0)

    def timed(stage, fn):
        w, c = time.perf_counter(), time.process_time()
        out = fn()
        wall[stage] += time.perf_counter() - w
        cpu[stage] += time.process_time() - c
        return out

    try:
        store = L2Store(os.path.join(root, "l2"), emb.name, emb.dim)
        unindexed = 0
        for start in range(0, a.n, a.batch):
            box = L2Outbox()
            for i in range(start, min(start + a.batch, a.n)):
                box.row(recs[i], vecs[i], new=True)
            batch = box.take()
            ids = list(batch.new)
            tbl = timed("to_arrow", lambda: R.to_arrow([batch.new[m] for m in ids], store._vectors(batch, ids), emb.dim))
            timed("append", lambda: store._retrying(lambda: store.table.add(tbl)))
            if start == 0:
                timed("reindex", store._ensure_indexes)
            unindexed += len(ids)
            if unindexed >= cfg.runtime.l2_reindex_rows:
                timed("reindex", store.reindex)
                unindexed = 0
            timed("compact", lambda: store.compact_small(cfg.runtime.l2_compact_fragments,
                                                        cfg.lifecycle.compact_small_fragment_rows))
        print(json.dumps({"n": a.n, "batch": a.batch,
                          "us_per_row_wall": {k: round(v / a.n * 1e6, 1) for k, v in wall.items()},
                          "us_per_row_cpu": {k: round(v / a.n * 1e6, 1) for k, v in cpu.items()},
                          "total_us_per_row_wall": round(sum(wall.values()) / a.n * 1e6, 1),
                          "total_us_per_row_cpu": round(sum(cpu.values()) / a.n * 1e6, 1),
                          "load_average_1m": os.getloadavg()[0]}))
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
