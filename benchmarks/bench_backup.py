"""Backup while writes go on, and restore, measured (issue 23).

    RAY_AUTH_MODE=disabled .venv/bin/python benchmarks/bench_backup.py --n 100000 --json out.json

The store is the shared workload (benchmarks/workload.py) written through the governed path.
Then a writer thread keeps writing (``write_many`` batches of new memories) through windows
of the same run: without a backup, during ``rt.backup``, without again, ... (``--rounds``
backups); writes/s during each backup are compared with the mean of the windows around it. Last, the backup is
restored into a new folder (verified: the restored folder opened once and ``audit.verify()``).
Figures go to benchmarks/RESULTS.md.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import threading
import time

import numpy as np
import orjson

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
os.environ.setdefault("RAY_AUTH_MODE", "disabled")

import workload  # noqa: E402

import memactors  # noqa: E402

ORG, AGENT = "bench", "bench-agent"


def scope_of(user: str) -> str:
    return f"/org/{ORG}/user/{user}/"


def dir_bytes(path: str) -> int:
    return sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(path) for f in fs)


class Writer:
    """Writes batches of new memories until stopped; keeps each batch's (end time, size, seconds)."""

    def __init__(self, rt, texts: list[tuple[str, str]], batch: int) -> None:
        self.rt, self.texts, self.batch = rt, texts, batch
        self.done: list[tuple[float, int, float]] = []
        self._stop = threading.Event()
        self._i = 0
        self.thread = threading.Thread(target=self._loop, daemon=True)

    def _loop(self) -> None:
        while not self._stop.is_set():
            items = []
            for _ in range(self.batch):
                u, t = self.texts[self._i % len(self.texts)]
                items.append({"scope": scope_of(u), "text": f"{t} (later note {self._i})", "actor": AGENT})
                self._i += 1
            t0 = time.perf_counter()
            self.rt.write_many(items)
            t1 = time.perf_counter()
            self.done.append((t1, len(items), t1 - t0))

    def rate(self, start: float, end: float) -> dict:
        """Writes acknowledged in [start, end), per second, and batch latencies then."""
        got = [(n, s) for t, n, s in self.done if start <= t < end]
        lat = [s * 1000 for _, s in got] or [0.0]
        return {"writes": sum(n for n, _ in got), "seconds": round(end - start, 2),
                "writes_per_s": round(sum(n for n, _ in got) / (end - start), 1),
                "batch_p50_ms": round(float(np.percentile(lat, 50)), 1),
                "batch_p95_ms": round(float(np.percentile(lat, 95)), 1)}

    def start(self) -> None:
        self.thread.start()

    def stop(self) -> None:
        self._stop.set()
        self.thread.join()


def run(n: int, n_users: int, owners: int, host: str, window_s: float, batch: int, rounds: int, root: str) -> dict:
    data_dir = os.path.join(root, "data")
    mems = workload.memories(n, n_users)
    rt = memactors.connect(data_dir, host=host, config={"runtime": {"num_owners": owners}})
    out: dict = {"n": n, "users": n_users, "owners": owners, "host": host, "load_before": os.getloadavg()}
    try:
        rt.grant(AGENT, f"/org/{ORG}/", read=True, write=True)
        items = [{"scope": scope_of(u), "text": t, "actor": AGENT} for u, t in mems]
        t0 = time.perf_counter()
        for i in range(0, len(items), 1000):
            rt.write_many(items[i: i + 1000])
        rt.flush()
        out["build_s"] = round(time.perf_counter() - t0, 1)
        out["folder_bytes"] = dir_bytes(data_dir)
        out["head_seq"] = rt.audit.head()["seq"]

        w = Writer(rt, mems, batch)
        w.start()
        time.sleep(2.0)  # past the writer's start-up
        marks = [time.perf_counter()]  # window, backup, window, backup, ..., window
        backups = []
        for r in range(rounds):
            time.sleep(window_s)
            marks.append(time.perf_counter())
            backups.append(rt.backup(os.path.join(root, f"backup-{r}")))
            marks.append(time.perf_counter())
        time.sleep(window_s)
        marks.append(time.perf_counter())
        w.stop()
        out["rounds"] = []
        for r, m in enumerate(backups):
            w0, b0, b1, w1 = marks[2 * r: 2 * r + 4]
            before, during, after = w.rate(w0, b0), w.rate(b0, b1), w.rate(b1, w1)
            around = (before["writes_per_s"] + after["writes_per_s"]) / 2
            out["rounds"].append({"backup_s": round(b1 - b0, 2), "manifest_seconds": m["seconds"], "bytes": m["bytes"],
                                  "seq": m["seq"], "events": m["events"], "rows": m["rows"],
                                  "writes_before": before, "writes_during": during, "writes_after": after,
                                  "during_over_around": round(during["writes_per_s"] / around, 3) if around else None})
        ratios = sorted(x["during_over_around"] for x in out["rounds"])
        out["during_over_around_median"] = ratios[len(ratios) // 2]
        out["writes_total"] = sum(x for _, x, _ in w.done)
        last = os.path.join(root, f"backup-{rounds - 1}")
    finally:
        rt.close()
    t0 = time.perf_counter()
    res = memactors.restore(last, os.path.join(root, "restored"),
                            config={"runtime": {"num_owners": owners}})
    out["restore"] = {"seconds": round(time.perf_counter() - t0, 2), "files_seconds": res["seconds"] -
                      res.get("verify_seconds", 0), "verify_seconds": res.get("verify_seconds"),
                      "verified": res["verified"]["ok"], "rows": res["rows"], "events": res["events"],
                      "bytes": dir_bytes(os.path.join(root, "restored"))}
    out["load_after"] = os.getloadavg()
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--users", type=int, default=1_000)
    ap.add_argument("--owners", type=int, default=2)
    ap.add_argument("--host", default="ray", choices=["ray", "process"])
    ap.add_argument("--window", type=float, default=20.0, help="seconds of writes measured before and after")
    ap.add_argument("--batch", type=int, default=100, help="writes per write_many call of the writer")
    ap.add_argument("--rounds", type=int, default=3, help="backups taken, each between two measured windows")
    ap.add_argument("--json", default=None)
    a = ap.parse_args()
    d = tempfile.mkdtemp(prefix="memactors-bench-backup-")
    try:
        t0 = time.perf_counter()
        res = run(a.n, a.users, a.owners, a.host, a.window, a.batch, a.rounds, d)
        res["total_s"] = round(time.perf_counter() - t0, 1)
    finally:
        shutil.rmtree(d, ignore_errors=True)
    print(orjson.dumps(res, option=orjson.OPT_INDENT_2).decode())
    if a.json:
        with open(a.json, "wb") as f:
            f.write(orjson.dumps(res, option=orjson.OPT_INDENT_2))


if __name__ == "__main__":
    main()
