"""What an empty store costs to open: ``connect()`` time, the runtime's processes and their memory,
and what reaches the terminal; the same for ``memactors up``, a cold verb attached to it, and
``memactors down``.

    .venv/bin/python benchmarks/bench_startup.py --runs 3 [--config '{"runtime": {...}}'] [--writes N] [--json out.json]

Each run is a fresh Python process on a fresh folder, with Ray's default token authentication
(RAY_AUTH_MODE unset) and HOME in a temp folder, so Ray's token is written there and never into
the user's home. Memory is summed over every process of the runtime (the driver and all its
descendants; for ``up`` the head's): RSS counts shared pages once per process, PSS divides them
among the processes that share them (the fairer total). ``--writes N`` then times N writes
(the shared workload over 4 tenants) and the CPU the runtime's processes spent on them, the
figure owners and gate workers are sized by. Figures: benchmarks/RESULTS.md.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import orjson

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Runs in the child: open, measure the process tree, close.
CHILD = r"""
import os, sys, time, orjson
sys.path.insert(0, os.environ["BENCH_DIR"])
from bench_startup import cpu, tree
import memactors
cfg = orjson.loads(os.environ["BENCH_CONFIG"]) or None
t0 = time.monotonic()
rt = memactors.connect(os.environ["BENCH_DATA"], config=cfg)
took = time.monotonic() - t0
time.sleep(float(os.environ["BENCH_SETTLE"]))  # let prestarted workers finish starting
out = {"connect_s": took, "owners": rt.config.runtime.num_owners, "gate_workers": rt.config.runtime.gate_workers,
       **tree(os.getpid())}
n = int(os.environ["BENCH_WRITES"])
if n:  # the shared workload, users spread over 4 tenants (owners are picked by tenant)
    import workload
    scope = lambda u: f"/org/t{int(u[1:]) % 4}/user/{u}/"
    rt.grant_many([{"actor": "bench", "scope": f"/org/t{i}/", "write": True} for i in range(4)])
    items = [{"scope": scope(u), "text": t, "actor": "bench"} for u, t in workload.memories(n, 200)]
    cpu0, t0 = cpu(os.getpid()), time.monotonic()
    for i in range(0, n, 1000):
        rt.write_many(items[i:i + 1000])
    out.update(writes=n, write_s=time.monotonic() - t0, write_cpu_s=cpu(os.getpid()) - cpu0)
    out["writes_per_s"] = n / out["write_s"]
t0 = time.monotonic()
rt.close()
out["close_s"] = time.monotonic() - t0
with open(os.environ["BENCH_OUT"], "wb") as f:
    f.write(orjson.dumps(out))
"""


def _children() -> dict[int, list[int]]:
    kids: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat", "rb") as f:
                    ppid = int(f.read().rsplit(b")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            kids.setdefault(ppid, []).append(int(name))
    return kids


def descendants(pid: int) -> list[int]:
    kids, out, todo = _children(), [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(kids.get(p, []))
    return out


def _name(pid: int) -> str:
    with open(f"/proc/{pid}/cmdline", "rb") as f:
        argv = [a.decode(errors="replace") for a in f.read().split(b"\0") if a]
    if not argv:
        return "?"
    if argv[0].startswith("ray::"):
        return argv[0].split()[0]
    scripts = [a for a in argv[1:4] if a.endswith(".py")]
    return os.path.basename(scripts[0] if scripts else argv[0])


def _kb(pid: int, field: bytes, path: str) -> int:
    with open(f"/proc/{pid}/{path}", "rb") as f:
        for line in f:
            if line.startswith(field):
                return int(line.split()[1])
    return 0


def cpu(pid: int) -> float:
    """CPU seconds (user + system) spent so far by the processes under ``pid``, itself included."""
    ticks = 0
    for p in descendants(pid):
        try:
            with open(f"/proc/{p}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
            ticks += int(fields[11]) + int(fields[12])
        except (OSError, IndexError, ValueError):
            continue
    return ticks / os.sysconf("SC_CLK_TCK")


def tree(pid: int) -> dict:
    """Processes under ``pid`` (itself included): count, names, summed RSS and PSS in MB."""
    rows = []
    for p in descendants(pid):
        try:
            rows.append((_name(p), _kb(p, b"VmRSS:", "status"), _kb(p, b"Pss:", "smaps_rollup")))
        except OSError:
            continue  # gone meanwhile
    return {"processes": len(rows), "rss_mb": round(sum(r[1] for r in rows) / 1024),
            "pss_mb": round(sum(r[2] for r in rows) / 1024),
            "by_process_rss_mb": sorted(f"{n} {round(r / 1024)}" for n, r, _ in rows)}


AUTH_MODE: str | None = None  # --ray-auth-mode: None leaves RAY_AUTH_MODE unset (Ray's default: token)


def _env(home: str) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")}
    env.update(HOME=home, PYTHONPATH=ROOT, MEMACTORS_KEY_DIR=os.path.join(home, "keys"))
    if AUTH_MODE:
        env["RAY_AUTH_MODE"] = AUTH_MODE
    return env


def _noise(res: subprocess.CompletedProcess, keep_stdout: bool = False) -> list[str]:
    lines = (res.stderr or "").splitlines()
    if not keep_stdout:
        lines += (res.stdout or "").splitlines()
    return [ln for ln in lines if ln.strip()]


def embedded(tmp: str, config: dict | None, settle: float, writes: int = 0) -> dict:
    home, data, out = os.path.join(tmp, "home"), os.path.join(tmp, "data"), os.path.join(tmp, "out.json")
    os.makedirs(home, exist_ok=True)
    env = dict(_env(home), BENCH_DIR=os.path.dirname(os.path.abspath(__file__)), BENCH_DATA=data, BENCH_OUT=out,
               BENCH_CONFIG=orjson.dumps(config).decode(), BENCH_SETTLE=str(settle), BENCH_WRITES=str(writes))
    t0 = time.monotonic()
    res = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True, text=True, timeout=600)
    wall = time.monotonic() - t0
    if res.returncode != 0:
        raise SystemExit(f"connect failed:\n{res.stderr[-3000:]}")
    with open(out, "rb") as f:
        got = orjson.loads(f.read())
    return {**got, "process_wall_s": wall, "terminal_lines": _noise(res)}


def served(tmp: str) -> dict:
    """``memactors up``, a cold verb attached to it, ``memactors down``, and what outlived it."""
    home, data = os.path.join(tmp, "home"), os.path.join(tmp, "data")
    os.makedirs(home, exist_ok=True)
    env = _env(home)

    def cli(*args):
        t0 = time.monotonic()
        res = subprocess.run([sys.executable, "-m", "memactors.cli", *args, "--data", data, "--json"], env=env,
                             capture_output=True, text=True, timeout=600)
        return res, time.monotonic() - t0

    res, up_s = cli("up")
    out = {"up_s": up_s, "up_ok": res.returncode == 0, "up_terminal_lines": _noise(res, keep_stdout=True)}
    if res.returncode != 0:
        cli("down")
        return out
    info = orjson.loads(res.stdout)
    try:
        time.sleep(2)
        pids = descendants(info["ray_pid"])
        out.update({f"head_{k}": v for k, v in tree(info["ray_pid"]).items()})
        res, out["verb_s"] = cli("grants")
        out["verb_ok"], out["verb_terminal_lines"] = res.returncode == 0, _noise(res, keep_stdout=True)
    finally:
        res, out["down_s"] = cli("down")
    out["down_ok"] = res.returncode == 0
    time.sleep(1)
    out["left_after_down"] = sorted(_name(p) for p in pids if os.path.exists(f"/proc/{p}") and _alive(p))
    return out


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except OSError:
        return False


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--config", default="null", help="JSON config for connect() (e.g. runtime.num_owners)")
    ap.add_argument("--settle", type=float, default=3.0, help="seconds after connect() before memory is read")
    ap.add_argument("--writes", type=int, default=0, help="then time this many writes (4 tenants, batches of 1000)")
    ap.add_argument("--no-up", action="store_true", help="only the embedded default")
    ap.add_argument("--ray-auth-mode", default=None, help="RAY_AUTH_MODE for every process (default: unset)")
    ap.add_argument("--json", default=None)
    a = ap.parse_args()
    global AUTH_MODE
    AUTH_MODE = a.ray_auth_mode
    runs = []
    for _ in range(a.runs):
        tmp = tempfile.mkdtemp(prefix="memactors-bench-startup-")
        try:
            run = {"embedded": embedded(tmp, orjson.loads(a.config), a.settle, a.writes)}
            shutil.rmtree(os.path.join(tmp, "data"), ignore_errors=True)
            if not a.no_up:
                run["up"] = served(tmp)
            runs.append(run)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    med = {}
    for part in runs[0]:
        for k, v in runs[0][part].items():
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                med[f"{part}.{k}"] = round(statistics.median(r[part][k] for r in runs), 2)
    res = {"runs": runs, "median": med}
    print(orjson.dumps(res, option=orjson.OPT_INDENT_2).decode())
    if a.json:
        with open(a.json, "wb") as f:
            f.write(orjson.dumps(res, option=orjson.OPT_INDENT_2))


if __name__ == "__main__":
    main()
