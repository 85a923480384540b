"""The chaos report: every crash fault in a loop, concurrency, batches, overload and fuzzing, as
one table anyone can rerun:

    RAY_AUTH_MODE=disabled .venv/bin/python benchmarks/bench_chaos.py --rounds 20

(JSON to ``benchmarks/out/chaos.json``; ``--faults owner,ledger`` for a subset, ``--skip``
any of ``crash,concurrency,batches,overload,fuzz``.) It runs the same code as the tests in
``tests/chaos/`` (``chaoslib``), with the full loops:

- per crash fault (``chaoslib.FAULTS``): rounds, acknowledged writes checked, lost,
  duplicated, chain failures, other anomalies, rounds that failed any check (reopen, lock,
  stray processes), and recovery p50/p95: the fault to the first acknowledgement of a write
  invoked after it (for ``driver`` and ``ray``: to the first write of a fresh ``connect``);
- concurrency: driver processes on one ``memactors up`` runtime, checked afterwards;
- batches: threads flooding one owner with a queue of 30, resubmitting ``PartialWrite`` items;
- overload: throughput under sustained overload against unloaded, the owners' queue bound,
  peak memory (VmHWM) of the owners and the ledger writer, single-write latency afterwards;
- fuzzing: cases run per public method and CLI verb, raw errors found.

Goal: 0 in every lost/duplicated/chain column, every round clean, no raw error.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "chaos"))
sys.path.insert(0, str(ROOT))
os.environ.setdefault("RAY_AUTH_MODE", "disabled")
os.environ.setdefault("MEMACTORS_KEY_DIR", tempfile.mkdtemp(prefix="chaos-keys-"))

import chaoslib  # noqa: E402


def pct(xs: list[float], q: float) -> float | None:
    xs = sorted(x for x in xs if x is not None)
    if not xs:
        return None
    return xs[min(len(xs) - 1, int(round(q * (len(xs) - 1))))]


def crash_rows(base: Path, faults: list[str], rounds: int, seed: int) -> list[dict]:
    rows = []
    for fault in faults:
        t0 = time.monotonic()
        rs = chaoslib.run_fault(base / fault, fault, rounds, seed=seed)
        rec = [r.recovery_s for r in rs]
        rows.append({"fault": fault, "rounds": len(rs), "acked": sum(r.acked for r in rs),
                     "indeterminate": sum(r.indeterminate for r in rs), "lost": sum(r.lost for r in rs),
                     "duplicated": sum(r.duplicated for r in rs), "chain": sum(r.chain for r in rs),
                     "other": sum(r.other for r in rs), "failed_rounds": sum(not r.ok for r in rs),
                     "recovery_p50_s": pct(rec, 0.5), "recovery_p95_s": pct(rec, 0.95),
                     "seconds": round(time.monotonic() - t0, 1),
                     "problems": [p for r in rs for p in r.problems][:5]})
        print(_row(rows[-1]), flush=True)
    return rows


def _row(r: dict) -> str:
    f = lambda x: "-" if x is None else f"{x:.2f}"  # noqa: E731
    return (f"{r['fault']:<12}{r['rounds']:>7}{r['acked']:>9}{r['lost']:>6}{r['duplicated']:>6}{r['chain']:>7}"
            f"{r['other']:>7}{r['failed_rounds']:>8}{f(r['recovery_p50_s']):>9}{f(r['recovery_p95_s']):>9}")


HEAD = (f"{'fault':<12}{'rounds':>7}{'acked':>9}{'lost':>6}{'dup':>6}{'chain':>7}{'other':>7}{'failed':>8}"
        f"{'rec p50':>9}{'rec p95':>9}")


def concurrency(base: Path, runs: int) -> dict:
    from test_concurrency import _run

    out = {"runs": 0, "acked": 0, "anomalies": 0, "failed": [], "seconds": 0.0}
    t0 = time.monotonic()
    for r in range(runs):
        try:
            c = _run(base / f"r{r}", n_drivers=4, ops=150, seed=300 + r)
            out["acked"] += c["writes"]["acked"]
            out["anomalies"] += sum(c["anomalies"].values())
        except Exception as exc:  # noqa: BLE001 - reported
            out["failed"].append(f"{type(exc).__name__}: {str(exc)[:500]}")
        out["runs"] += 1
    out["seconds"] = round(time.monotonic() - t0, 1)
    return out


def batches(base: Path, runs: int) -> dict:
    from test_batches import _flood_round

    out = {"runs": 0, "acked": 0, "partial_writes": 0, "resubmitted": 0, "bad_partial": 0, "failed": []}
    for r in range(runs):
        try:
            s = _flood_round(base / f"r{r}", threads=8, size=120, seconds=6.0)
            for k, k2 in (("acked", "acked"), ("partial_writes", "partial"), ("resubmitted", "resubmitted"),
                          ("bad_partial", "bad_partial")):
                out[k] += s[k2]
        except Exception as exc:  # noqa: BLE001
            out["failed"].append(f"{type(exc).__name__}: {str(exc)[:500]}")
        out["runs"] += 1
    return out


def overload(base: Path, seconds: float) -> dict:
    import memactors
    from memactors.testing import unique_org

    cfg = {"runtime": {"num_owners": 1, "l2_flush_interval_s": 0.2, "owner_queue_max": 200, "call_timeout_s": 5.0}}
    rt = memactors.connect(base / "data", config=cfg)
    try:
        org = unique_org("ov")
        scopes = [f"/org/{org}/user/u{i}/" for i in range(40)]
        rt.grant_many([{"actor": "agent", "scope": f"/org/{org}/", "write": True},
                       {"actor": "checker", "scope": "/global/"}])
        fig = chaoslib.overload(rt, scopes, base / "hist", threads=8, size=100, seconds=seconds)
        from memactors.testing import collect, read_history

        report = collect(rt, scopes, actor="checker").check(read_history(base / "hist" / "unloaded",
                                                                         base / "hist" / "overload"))
        fig["checker_ok"] = report.ok
        fig["anomalies"] = {k: len(v) for k, v in report.anomalies.items() if v}
    finally:
        rt.close()
    return fig


def fuzz(examples: int) -> dict:
    out = Path(tempfile.mkdtemp(prefix="chaos-fuzz-")) / "fuzz.json"
    env = dict(os.environ, CHAOS_FUZZ_EXAMPLES=str(examples), CHAOS_FUZZ_OUT=str(out),
               PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    t0 = time.monotonic()
    p = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(ROOT / "tests" / "chaos" /
                                                                                             "test_fuzz.py")],
                       env=env, capture_output=True, text=True, cwd=ROOT)
    res = orjson.loads(out.read_bytes()) if out.exists() else {"cases": {}, "raw": {}, "leaks": {}}
    res["passed"] = p.returncode == 0
    res["seconds"] = round(time.monotonic() - t0, 1)
    if p.returncode != 0:
        res["tail"] = p.stdout[-2000:]
    return res


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=20, help="rounds per crash fault")
    ap.add_argument("--faults", default=",".join(chaoslib.FAULTS))
    ap.add_argument("--skip", default="", help="comma list of crash,concurrency,batches,overload,fuzz")
    ap.add_argument("--concurrency-runs", type=int, default=5)
    ap.add_argument("--batch-runs", type=int, default=5)
    ap.add_argument("--overload-s", type=float, default=20.0)
    ap.add_argument("--fuzz-examples", type=int, default=300)
    ap.add_argument("--seed", type=int, default=int(time.time()))
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "out" / "chaos.json"))
    args = ap.parse_args()
    skip = set(filter(None, args.skip.split(",")))
    import ray

    ray.init(address="local", num_cpus=4, include_dashboard=False, log_to_driver=False, configure_logging=False)
    base = Path(tempfile.mkdtemp(prefix="chaos-bench-"))
    report: dict = {"seed": args.seed, "rounds": args.rounds, "started": time.time()}
    try:
        if "crash" not in skip:
            print(HEAD, flush=True)
            report["crash"] = crash_rows(base / "crash", [f for f in args.faults.split(",") if f], args.rounds,
                                         args.seed)
        if "concurrency" not in skip:
            report["concurrency"] = concurrency(base / "concurrency", args.concurrency_runs)
            print("concurrency:", {k: v for k, v in report["concurrency"].items()}, flush=True)
        if "batches" not in skip:
            report["batches"] = batches(base / "batches", args.batch_runs)
            print("batches:", report["batches"], flush=True)
        if "overload" not in skip:
            report["overload"] = overload(base / "overload", args.overload_s)
            o = report["overload"]
            print(f"overload: unloaded {o['unloaded_items_per_s']:.0f} items/s, under overload "
                  f"{o['overload_items_per_s']:.0f} items/s ({o['overload']['partial']} partial writes, "
                  f"{o['overload']['resubmitted']} items resubmitted), owner queue peak {o['max_inflight']} "
                  f"(bound 200), peak RSS owners {o['owner_hwm_mb']} MiB, ledger {o['ledger_hwm_mb']:.0f} MiB, "
                  f"single write afterwards p50 {o['recovery_write_p50_s'] * 1000:.1f} ms; checker "
                  f"{'ok' if o['checker_ok'] else o['anomalies']}", flush=True)
        if "fuzz" not in skip:
            report["fuzz"] = fuzz(args.fuzz_examples)
            f = report["fuzz"]
            print(f"fuzz: {sum(f['cases'].values())} cases, raw errors {sum(map(len, f['raw'].values()))}, "
                  f"echoes {sum(map(len, f['leaks'].values()))}, passed {f['passed']}", flush=True)
            for m, n in sorted(f["cases"].items()):
                print(f"  {m:<22}{n:>6}")
    finally:
        ray.shutdown()
        report["seconds"] = round(time.time() - report["started"], 1)
        os.makedirs(os.path.dirname(args.out), exist_ok=True)
        with open(args.out, "wb") as fh:
            fh.write(orjson.dumps(report, option=orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS))
        print(f"wrote {args.out}")
    bad = any(r["lost"] or r["duplicated"] or r["chain"] or r["failed_rounds"] for r in report.get("crash", []))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
