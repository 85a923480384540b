"""Throughput of the default embedder on one core: texts/s on ~200-character texts.

    .venv/bin/python benchmarks/bench_embed.py
"""

from __future__ import annotations

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import workload  # noqa: E402

from memactors.embed import HashEmbedder  # noqa: E402


def main() -> None:
    mems = [t for _, t in workload.memories(100_000, 1_000)]
    # 200 characters each: workload memories (English and Chinese) joined, then cut.
    texts, cur = [], ""
    for m in mems:
        cur = f"{cur} {m}" if cur else m
        if len(cur) >= 200:
            texts.append(cur[:200])
            cur = ""
    texts = texts[:20_000]
    e = HashEmbedder(384)
    e.embed(texts[:100])
    best = 0.0
    for _ in range(3):
        t0 = time.perf_counter()
        for i in range(0, len(texts), 1000):  # the owner embeds a batch per call
            e.embed(texts[i : i + 1000])
        best = max(best, len(texts) / (time.perf_counter() - t0))
    avg = sum(map(len, texts)) / len(texts)
    print(f'{{"embedder": "{e.name}", "dim": {e.dim}, "texts": {len(texts)}, "avg_chars": {avg:.0f}, '
          f'"texts_per_s_one_core": {best:.0f}}}')


if __name__ == "__main__":
    main()
