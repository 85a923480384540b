"""Lifecycle sweeps applied, measured (issue #8): a store built through the public API over a
simulated year, then the dry-run plan (1 and 2 workers), the applied sweep (evictions/s with
ledger events, Lance delete, compaction and version cleanup reported apart), recall and write
latency while a sweep runs, and a long run of flush cycles with sweeps on (file and version
counts).

    RAY_AUTH_MODE=disabled .venv/bin/python benchmarks/bench_gc.py --n 1000000 --json out.json

The store: ``--tenants`` orgs with 4 users each; every simulated day a share of the writes,
categories mixed (each with its TTL policy), 5% with a short per-write TTL, 20% updates of a
fact (superseded chains), sources mixed (confidence), a few recalls per day (access times).
The plan phase alone over a generated 1M L2 table is ``bench_gc_plan.py``.
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

AGENT = "gc-agent"
CATS = ["preference", "task_learning", "observation", "entity_fact", "default"]
SOURCES = ["user_stated", "tool", "agent_inferred", "web", "document"]


def pct(xs, p):
    return round(float(np.percentile(np.asarray(xs) * 1000, p)), 2) if xs else None


def folder_counts(data_dir: str) -> dict:
    files = sum(len(fs) for _, _, fs in os.walk(data_dir))
    versions_dir = os.path.join(data_dir, "l2", "memories.lance", "_versions")
    versions = len(os.listdir(versions_dir)) if os.path.isdir(versions_dir) else None
    size = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(data_dir) for f in fs)
    return {"files": files, "lance_versions": versions, "mb": round(size / 1e6, 1)}


def cpu_s(pid) -> float:
    """CPU seconds (user + system) process ``pid`` on this machine has used so far."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def owners_cpu_s(rt) -> list[float]:
    """CPU seconds each owner process has used so far (they run on this machine)."""
    return [cpu_s(pid) for pid in rt._calls.get([o.pid.remote() for o in rt._owners])]


def ledger_cpu_s() -> float | None:
    """CPU seconds the ledger writer's process has used so far (found by its Ray process name;
    None when there is not exactly one on this machine)."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if f.read().startswith(b"ray::LedgerWriter"):
                    found.append(cpu_s(pid))
        except OSError:  # a process gone meanwhile
            continue
    return found[0] if len(found) == 1 else None


def owners_rss_mb(rt) -> list[float]:
    """Resident memory of each owner process (they run on this machine)."""
    out = []
    for pid in rt._calls.get([o.pid.remote() for o in rt._owners]):
        with open(f"/proc/{pid}/statm") as f:
            out.append(round(int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20))
    return out


def build(rt, clock, n: int, tenants: int, days: int, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    texts = [t for _, t in workload.memories(min(n, 20_000), 1)]
    users = [f"/org/t{t:04d}/user/u{u}/" for t in range(tenants) for u in range(4)]
    per_day = n // days
    t0, written, i = time.perf_counter(), 0, 0
    progress, last = [], (0.0, 0)
    for day in range(days):
        k = per_day if day < days - 1 else n - written
        us = rng.integers(0, len(users), k)
        cat = rng.integers(0, len(CATS), k)
        src = rng.integers(0, len(SOURCES), k)
        fact = rng.random(k) < 0.2
        short = rng.random(k) < 0.05
        items = []
        for j in range(k):
            it = {"scope": users[us[j]], "text": f"{texts[(i + j) % len(texts)]} (#{i + j})", "actor": AGENT,
                  "category": CATS[cat[j]], "source": SOURCES[src[j]]}
            if fact[j]:
                it.update(subject=f"u{us[j]}", predicate=f"pref{(i + j) % 7}", object=f"value {i + j}")
            if short[j]:
                it["ttl_days"] = float(rng.integers(5, 60))
            items.append(it)
        for b in range(0, k, 2000):
            rt.write_many(items[b: b + 2000])
        written += k
        i += k
        for q in range(5):  # a few recalls a day: access times and counts
            u = users[int(rng.integers(0, len(users)))]
            rt.recall(texts[int(rng.integers(0, len(texts)))][:40], actor=AGENT, task_id="gc", allowed_scopes=[u],
                      purpose="bench", top_k=5)
        clock.advance(days=365 / days)
        if written - last[1] >= n // 10 or day == days - 1:  # the rate as the store grows
            now = time.perf_counter() - t0
            progress.append({"written": written, "s": round(now, 1), "owners_rss_mb": owners_rss_mb(rt),
                             "writes_per_s": round((written - last[1]) / (now - last[0]))})
            print(progress[-1], file=sys.stderr, flush=True)
            last = (now, written)
    rt.flush()
    return {"written": written, "build_s": round(time.perf_counter() - t0, 1),
            "writes_per_s": round(written / (time.perf_counter() - t0)), "progress": progress}


def latency_during(rt, users, fn) -> dict:
    """Hot recall and single-write latency quiet, then while ``fn`` runs in another thread."""
    def probe(limit=200):
        rl, wl, k = [], [], 0
        while k < limit:
            u = users[k % len(users)]
            t0 = time.perf_counter()
            rt.recall("coffee and tea in the city", actor=AGENT, task_id="gc", allowed_scopes=[u], purpose="bench",
                      top_k=5)
            rl.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            rt.write(u, f"probe write {k} while sweeping", actor=AGENT)
            wl.append(time.perf_counter() - t0)
            k += 1
        return rl, wl

    probe(limit=50)  # warm: these scopes hot
    rq, wq = probe()
    box: dict = {}
    th = threading.Thread(target=lambda: box.update(res=fn()))
    th.start()
    rl, wl = [], []
    while th.is_alive():
        a, b = probe(limit=5)
        rl += a
        wl += b
    th.join()
    return {"quiet_recall_p95_ms": pct(rq, 95), "quiet_write_p95_ms": pct(wq, 95),
            "during_recall_p95_ms": pct(rl, 95), "during_write_p95_ms": pct(wl, 95),
            "during_samples": len(rl), "recall_ratio_p95": round(pct(rl, 95) / pct(rq, 95), 2) if rl else None,
            "result": box.get("res")}


def run(n: int, tenants: int, days: int, cycles: int, seed: int, root: str, retention_s: float = 30.0,
        hot: int | None = None) -> dict:
    data = os.path.join(root, "data")
    clock = memactors.ManualClock()
    cfg = {"runtime": {"num_owners": 2}, "lifecycle": {"sweep_interval_s": 0}}
    if hot is not None:
        cfg["runtime"]["hot_cache_max_memories"] = hot
    rt = memactors.connect(data, clock=clock, config=cfg)
    out: dict = {"n": n, "tenants": tenants, "days": days}
    try:
        rt.grant(AGENT, "/global/", read=True, write=True)
        out["build"] = build(rt, clock, n, tenants, days, seed)
        out["folder_after_build"] = folder_counts(data)
        out["owners_after_build"] = rt._calls.get([o.stats.remote() for o in rt._owners])
        clock.advance(days=30)
        # 1. the plan (dry run), 1 and 2 workers
        for w in (1, 2):
            t0 = time.perf_counter()
            plan = rt.gc(dry_run=True, workers=w)
            dt = time.perf_counter() - t0
            out[f"plan_{w}w"] = {"s": round(dt, 2), "records_per_s": round(n / dt), "by_rule": plan.by_rule,
                                 "seconds": plan.seconds}
        # 2. the applied sweep, alone on the runtime
        users = [f"/org/t{t:04d}/user/u0/" for t in range(min(tenants, 20))]
        t0, cpu0, led0 = time.perf_counter(), owners_cpu_s(rt), ledger_cpu_s()
        res = rt.gc()
        wall = time.perf_counter() - t0
        owners_cpu = [round(b - a, 2) for a, b in zip(cpu0, owners_cpu_s(rt))]  # the maintenance step's too
        led1 = ledger_cpu_s()
        ev = (res.applied or {}).get("events", 0)
        secs = res.seconds
        out["sweep"] = {"by_rule": res.by_rule, "events": ev, "wall_s": round(wall, 2), "seconds": secs,
                        "apply_parts": (res.applied or {}).get("seconds"),
                        "evictions_per_s_apply": round(ev / secs["apply_seconds"]) if secs.get("apply_seconds") else None,
                        "evictions_per_s_excl_maintenance": round(ev / (secs["seconds"] - secs.get("maintenance_seconds", 0)))
                        if ev else None, "maintenance": res.maintenance, "owners_cpu_s": owners_cpu,
                        "ledger_cpu_s": round(led1 - led0, 2) if None not in (led0, led1) else None}
        # The "whole sweep" leaves compaction out (reported apart), not version cleanup.
        compaction = (res.maintenance or {}).get("compaction_seconds", 0.0)
        out["sweep"]["seconds_excl_compaction"] = round(secs["seconds"] - compaction, 2)
        out["sweep"]["evictions_per_s_excl_compaction"] = round(ev / (secs["seconds"] - compaction)) if ev else None
        out["folder_after_sweep"] = folder_counts(data)
        # 3. a second sweep 60 simulated days on, with recall/write latency probed while it runs
        clock.advance(days=60)
        lat = latency_during(rt, users, lambda: rt.gc())
        res2 = lat.pop("result")
        lat["sweep_events"] = (res2.applied or {}).get("events", 0)
        lat["sweep_seconds"] = res2.seconds
        out["latency_during_sweep"] = lat
        out["verify_ok"] = rt.audit.verify()["ok"]
        # 4. long run: flush cycles with sweeps on (every 50 cycles, a simulated day apart). Lance
        # versions are kept for version_retention_s of wall time (default a day); the run takes
        # minutes, so it keeps them --retention seconds to show the steady state a day's
        # retention reaches.
        rt.config.lifecycle.version_retention_s = retention_s
        out["long_run_version_retention_s"] = retention_s
        t0 = time.perf_counter()
        counts = []
        for c in range(cycles):
            rt.write_many([{"scope": users[(c + j) % len(users)], "text": f"cycle {c} note {j} about the plan",
                            "actor": AGENT, "ttl_days": 2.0} for j in range(20)])
            rt.flush()
            if c % 50 == 49:
                clock.advance(days=1)
                rt.gc()
                counts.append({"cycle": c + 1, **folder_counts(data)})
        out["long_run"] = {"cycles": cycles, "s": round(time.perf_counter() - t0, 1), "counts": counts}
    finally:
        rt.close()
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--tenants", type=int, default=1000)
    ap.add_argument("--days", type=int, default=365)
    ap.add_argument("--cycles", type=int, default=1000)
    ap.add_argument("--retention", type=float, default=30.0,
                    help="version_retention_s (wall seconds) for the long run: short, so that it spans several")
    ap.add_argument("--hot", type=int, default=None,
                    help="hot_cache_max_memories per owner (default: the config's); size it to hold the store")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", default=None)
    a = ap.parse_args()
    d = tempfile.mkdtemp(prefix="memactors-bench-")
    try:
        t0 = time.perf_counter()
        res = run(a.n, a.tenants, a.days, a.cycles, a.seed, d, a.retention, a.hot)
        res["total_s"] = round(time.perf_counter() - t0, 1)
        res["load_avg"] = os.getloadavg()
    finally:
        shutil.rmtree(d, ignore_errors=True)
    text = orjson.dumps(res, option=orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS, default=str)
    print(text.decode())
    if a.json:
        with open(a.json, "wb") as f:
            f.write(text)


if __name__ == "__main__":
    main()
