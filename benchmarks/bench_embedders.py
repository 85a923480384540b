"""Embedders side by side: paraphrase probes (tests/fixtures/paraphrases.json) and write cost.

    .venv/bin/python benchmarks/bench_embedders.py [--embedders hash-ngram-v1,use-multilingual-v3] \
        [--writes 2000] --out benchmarks/out/embedders.json

For each embedder that is installed: every memory of the set is written into one scope of a
``memory://`` runtime (process host; 110 memories, English and Chinese), then every question is
recalled once through the public API with the default weights and threshold: top-1 (its memory
first), top-3, and how many questions got nothing back. "cosine top-1" ranks by the embedder's
cosine alone. Writes: ``--writes`` texts (chat-like, English and Chinese) through ``write_many`` in
batches of 500 on a fresh runtime, CPU seconds of this process (``time.process_time``: the
machine is shared, wall time is not a measure here) per write, and writes per CPU-second.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

import numpy as np

import memactors
from memactors.embed import get_embedder

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCOPE = "/org/bench/user/probe/"
DIMS = {"use-multilingual-v3": 512}


def _cfg(name: str) -> dict:
    return {"embedder": {"name": name, "dim": DIMS.get(name, 384)}, "runtime": {"l2_flush_interval_s": 0.5}}


def paraphrases(name: str, pairs: list[dict]) -> dict:
    rt = memactors.connect("memory://", config=_cfg(name))
    try:
        rt.grant("bench", SCOPE, write=True)
        ids = [r.memory_id for r in rt.write_many([{"scope": SCOPE, "text": p["memory"], "actor": "bench"}
                                                   for p in pairs])]
        out = {"top1": 0, "top3": 0, "empty": 0, "by_lang": {}}
        for p, mid in zip(pairs, ids):
            hits = rt.recall(p["question"], actor="bench", task_id="t", allowed_scopes=[SCOPE], purpose="bench",
                             top_k=3).hits
            lang = out["by_lang"].setdefault(p["lang"], {"n": 0, "top1": 0, "empty": 0})
            lang["n"] += 1
            got = [h.memory_id for h in hits]
            out["top1"] += bool(got and got[0] == mid)
            lang["top1"] += bool(got and got[0] == mid)
            out["top3"] += mid in got
            out["empty"] += not got
            lang["empty"] += not got
    finally:
        rt.close()
    emb = get_embedder(name, DIMS.get(name, 384))
    m = emb.embed([p["memory"] for p in pairs])
    q = emb.embed([p["question"] for p in pairs])
    out["cosine_top1"] = int((np.argmax(q @ m.T, axis=1) == np.arange(len(pairs))).sum())
    out["n"] = len(pairs)
    return out


def write_cost(name: str, n: int) -> dict:
    words = ("alice bob carol dave prefers likes window seat coffee tea flight hotel meeting report friday monday "
             "project budget review garden dog cat music book travel").split()
    zh = "爱丽丝 喜欢 靠窗 座位 咖啡 绿茶 会议 报告 周五 项目 预算 花园 小狗 音乐 旅行".split()
    rng = np.random.default_rng(7)
    texts = [(" ".join(rng.choice(words, 12)) if i % 3 else "".join(rng.choice(zh, 8))) + f" {i}" for i in range(n)]
    rt = memactors.connect("memory://", config=_cfg(name))
    try:
        rt.grant("bench", SCOPE, write=True)
        rt.write(SCOPE, "warm up", actor="bench")
        cpu0, wall0 = time.process_time(), time.perf_counter()
        for i in range(0, n, 500):
            rt.write_many([{"scope": SCOPE, "text": t, "actor": "bench"} for t in texts[i:i + 500]])
        cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
    finally:
        rt.close()
    return {"writes": n, "cpu_s": round(cpu, 3), "wall_s": round(wall, 3), "cpu_ms_per_write": round(1e3 * cpu / n, 3),
            "writes_per_cpu_s": round(n / cpu, 1)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--embedders", default="hash-ngram-v1,use-multilingual-v3,all-minilm-l6-v2")
    ap.add_argument("--writes", type=int, default=2000)
    ap.add_argument("--out", default="benchmarks/out/embedders.json")
    args = ap.parse_args()
    with open(os.path.join(ROOT, "tests", "fixtures", "paraphrases.json"), encoding="utf-8") as f:
        pairs = json.load(f)["pairs"]
    report = {"load_average_1m": os.getloadavg()[0]}
    for name in args.embedders.split(","):
        try:
            get_embedder(name, DIMS.get(name, 384))
        except memactors.ConfigError as exc:
            report[name] = {"skipped": str(exc)}
            continue
        report[name] = {"paraphrases": paraphrases(name, pairs), "write": write_cost(name, args.writes)}
        print(name, json.dumps(report[name]), file=sys.stderr)
    os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(report, f, indent=2)
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
