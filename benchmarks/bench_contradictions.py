"""What the text-only contradiction check costs a write, off against on (issue 22, goal < 5%).

    MEMACTORS_HOST=process .venv/bin/python benchmarks/bench_contradictions.py --writes 20000 --rounds 2

Two workloads on the process host, each written with ``[lifecycle].text_contradiction_cosine``
at 2.0 (no candidate passes the cut: the check is off) and at the default 0.4, interleaved
``--rounds`` times; the figure is the CPU of this process per write (``time.process_time``:
the process host runs everything in it), the median of the rounds. Beside it, the CPU spent
inside the check itself in each round (``check_us``; ``check_us_off``: the same call with the
check off, the timers and a return) and the difference's share of the "on" round's CPU per
write (``check_share``): the two runs' totals differ by more noise than the check costs.

- ``shared``: the benchmark workload (``workload.memories``: short bilingual memories over 1,000
  users, so about ``writes / 1000`` memories per scope);
- ``worst``: every write in one scope, words drawn from a 25-word vocabulary, so nearly every
  write has candidates over the cut and the cue check runs on each.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import workload  # noqa: E402

import memactors  # noqa: E402
from memactors.core import contradictions as CC  # noqa: E402
from memactors.core import versions as V  # noqa: E402
from memactors.engine import hot as H  # noqa: E402

WORDS = ("alice bob carol dave prefers likes window seat coffee tea flight hotel meeting report friday monday "
         "project budget review garden dog cat music book travel").split()
ZH = "爱丽丝 喜欢 靠窗 座位 咖啡 绿茶 会议 报告 周五 项目 预算 花园 小狗 音乐 旅行".split()


def items(kind: str, n: int) -> list[dict]:
    if kind == "shared":
        return [{"scope": f"/org/bench/user/{u}/", "text": t, "actor": "bench"} for u, t in workload.memories(n, 1000)]
    rng = np.random.default_rng(7)
    return [{"scope": "/org/bench/user/one/", "actor": "bench",
             "text": (" ".join(rng.choice(WORDS, 12)) if i % 3 else "".join(rng.choice(ZH, 8))) + f" {i}"}
            for i in range(n)]


class Timed:
    """The CPU spent inside the check (``versions._text_contradictions``: its candidates from
    the hot index and the cue comparison), summed: the check's own share of a write, measured
    in the run itself rather than as the difference of two noisy runs. A write's cosines
    against its scope (``NearCopies._cos``) are left out: dedup computes the same product when
    the check is off, and shares it when the check asks first. The timers' own cost stays in."""

    def __init__(self) -> None:
        self.s, self.calls, self.inside = 0.0, 0, False
        self._fn, self._cos = V._text_contradictions, H.NearCopies._cos

    def __call__(self, *args):
        t0 = time.thread_time()  # this thread's CPU: the decide loop runs in one thread
        self.inside = True
        try:
            return self._fn(*args)
        finally:
            self.inside = False
            self.s += time.thread_time() - t0
            self.calls += 1

    def cos(self, near, vector):
        if not self.inside:
            return self._cos(near, vector)
        t0 = time.thread_time()
        try:
            return self._cos(near, vector)
        finally:
            self.s -= time.thread_time() - t0

    def __enter__(self) -> Timed:
        V._text_contradictions = self
        H.NearCopies._cos = lambda near, vector: self.cos(near, vector)
        return self

    def __exit__(self, *exc) -> None:
        V._text_contradictions, H.NearCopies._cos = self._fn, self._cos


def cost(batch: list[dict], cut: float) -> tuple[float, dict, float]:
    """CPU seconds per write, the writes' decisions (a found contradiction changes what is
    written: both memories flagged, one more change each, so "on" pays for that too) and the
    CPU seconds per write inside the check."""
    decisions: dict[str, int] = {}
    # Each run from cold: the cue cache outlives a runtime (it is the module's), and every round
    # writes the same texts, so a later round would find every text's cues already made.
    CC._parts.cache_clear()
    CC._KINDS.clear()
    with memactors.connect("memory://", config={"lifecycle": {"text_contradiction_cosine": cut}}) as rt, \
            Timed() as check:
        rt.grant("bench", "/org/bench/", write=True)
        rt.write("/org/bench/user/warm/", "warm up", actor="bench")
        check.s = 0.0
        cpu0 = time.process_time()
        for i in range(0, len(batch), 1000):
            for r in rt.write_many(batch[i:i + 1000]):
                decisions[r.decision] = decisions.get(r.decision, 0) + 1
        return (time.process_time() - cpu0) / len(batch), decisions, check.s / len(batch)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--writes", type=int, default=20_000, help="writes of the shared workload")
    ap.add_argument("--worst-writes", type=int, default=3_000, help="writes of the one-scope worst case")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--json", default=None)
    a = ap.parse_args()
    report = {"load_average_1m_start": os.getloadavg()[0]}
    for kind, n in (("shared", a.writes), ("worst", a.worst_writes)):
        batch = items(kind, n)
        runs: dict[str, list[float]] = {"off": [], "on": []}
        inside: dict[str, list[float]] = {"off": [], "on": []}  # CPU per write inside the check, per round
        share: list[float] = []  # on: (inside, less the off round's) over the round's CPU per write
        decided = {}
        for _ in range(a.rounds):
            for label, cut in (("off", 2.0), ("on", 0.4)):
                per_write, decided[label], in_check = cost(batch, cut)
                runs[label].append(per_write)
                inside[label].append(in_check)
                if label == "on":  # less what the call costs with the check off (the timers, a call)
                    share.append((in_check - inside["off"][-1]) / per_write)
        off, on = statistics.median(runs["off"]), statistics.median(runs["on"])
        report[kind] = {"writes": n, "off_us": round(off * 1e6, 1), "on_us": round(on * 1e6, 1),
                        "extra": f"{100 * (on / off - 1):+.1f}%",
                        "check_us": round(statistics.median(inside["on"]) * 1e6, 1),
                        "check_us_off": round(statistics.median(inside["off"]) * 1e6, 1),
                        "check_share": f"{100 * statistics.median(share):.1f}%",
                        "runs_us": {k: [round(x * 1e6, 1) for x in v] for k, v in runs.items()},
                        "check_share_runs": [f"{100 * x:.1f}%" for x in share],
                        "decisions": decided}
        print(kind, json.dumps(report[kind]), flush=True)
    report["load_average_1m_end"] = os.getloadavg()[0]
    if a.json:
        with open(a.json, "w") as f:
            json.dump(report, f, indent=2)
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
