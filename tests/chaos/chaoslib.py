"""Fault injection for the chaos tests and ``benchmarks/bench_chaos.py``: one *round* of a
fault is a recorded workload against a data folder, the fault at a random moment mid-burst,
then the checks every round must pass:

- the history checker (``memactors.testing``) finds nothing: no acknowledged write lost or
  duplicated, versions contiguous, one active version per fact, ``verify()`` ok;
- the folder reopens with a plain ``memactors.connect`` and verifies;
- after ``close()`` nothing holds the folder (its lock's flock is free) and no process of the
  round's actors (or of a killed Ray) is left.

Crash faults (``FAULTS``): ``owner``, ``ledger``, ``gate``, ``embed`` (SIGKILL of that actor's
process while the runtime runs in this process; Ray restarts it), ``flush_gap`` (every owner
and the ledger writer killed together while Lance trails the ledger by a long flush interval),
``driver`` (a driver process on this Ray killed mid-burst: its actors die with it) and
``ray`` (a driver process with a local Ray of its own, killed with every process of that Ray);
``sweep``, ``rollback``, ``purge`` (an owner or the ledger writer killed while that operation
lands: ``op_faults``) and ``sweep_driver`` (the driver process running a sweep killed).

Actor process ids come from Ray's actor table (``ray._private.state``): no actor needs a
``pid()`` method for this.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from dataclasses import asdict, dataclass, field
from pathlib import Path

import orjson

from op_faults import OPS

HERE = Path(__file__).resolve().parent
DRIVER = HERE / "driver.py"
ROOT = HERE.parent.parent

IN_PROCESS = ("owner", "ledger", "gate", "embed", "flush_gap")
SUBPROCESS = ("driver", "ray")
FAULTS = IN_PROCESS + SUBPROCESS + OPS  # OPS: a sweep, a rollback, a purge as it lands (op_faults)


def config_for(fault: str) -> dict:
    """A small runtime; for ``gate`` every write batch of 8 or more goes through the gate pool,
    so a killed gate worker is noticed; ``embed`` adds one embedding actor; ``flush_gap`` keeps
    Lance far behind the ledger."""
    # One owner and no gate worker unless the fault needs them: each actor is a process to start.
    rc = {"num_owners": 1, "gate_workers": 0, "l2_flush_interval_s": 0.2, "call_timeout_s": 60.0}
    if fault == "gate":
        rc.update(gate_workers=1, gate_pool_min_batch=8)
    if fault == "embed":
        rc["embed_workers"] = 1
    if fault == "flush_gap":
        rc["l2_flush_interval_s"] = 60.0
    return {"runtime": rc}


# --- processes ------------------------------------------------------------------------------


def actor_info(handle) -> dict:
    """Ray's actor-table entry of ``handle``: ``Pid``, ``State``, ``NumRestarts``."""
    from ray._private import state

    return state.actors(actor_id=handle._actor_id.hex())  # noqa: SLF001 - test code


def actor_pid(handle, timeout: float = 60.0) -> int:
    """The live process id of an actor (waits while Ray restarts it)."""
    deadline = time.monotonic() + timeout
    while True:
        info = actor_info(handle)
        if info.get("State") == "ALIVE" and info.get("Pid") and alive(info["Pid"]):
            return int(info["Pid"])
        if time.monotonic() > deadline:
            raise TimeoutError(f"actor not alive after {timeout:.0f}s: {info.get('State')}")
        time.sleep(0.05)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().split(b")")[-1].split()[0] != b"Z"
    except OSError:
        return False


def procs_with(marker: str) -> list[int]:
    """Processes whose command line contains ``marker`` (a round's unique temp dir)."""
    out = []
    for d in os.listdir("/proc"):
        if not d.isdigit() or int(d) == os.getpid():
            continue
        try:
            with open(f"/proc/{d}/cmdline", "rb") as f:
                cmd = f.read()
        except OSError:
            continue
        if marker.encode() in cmd and alive(int(d)):
            out.append(int(d))
    return out


def children() -> dict[int, list[int]]:
    """Parent pid -> child pids, from /proc."""
    out: dict[int, list[int]] = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/stat", "rb") as f:
                    ppid = int(f.read().split(b")")[-1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            out.setdefault(ppid, []).append(int(d))
    return out


def tree(roots) -> set[int]:
    """``roots`` and all their descendants."""
    kids, seen, todo = children(), set(), list(roots)
    while todo:
        p = todo.pop()
        if p not in seen:
            seen.add(p)
            todo += kids.get(p, [])
    return seen


def kill_all_at_once(root: int, marker: str) -> set[int]:
    """Freeze (SIGSTOP) ``root``'s whole process tree and every process naming ``marker``,
    again until no new one appears, then SIGKILL them all: a whole Ray dies at one instant,
    and no orphan is reparented out of sight first. Returns the pids killed."""
    frozen: set[int] = set()
    while True:
        found = (tree([root, *frozen]) | set(procs_with(marker))) - {os.getpid()}
        new = found - frozen
        if not new:
            break
        for p in new:
            try:
                os.kill(p, signal.SIGSTOP)
            except ProcessLookupError:
                pass
        frozen |= new
    kill(frozen)
    return frozen


def wait_gone(pids, timeout: float = 30.0) -> list[int]:
    """Wait until none of ``pids`` runs; returns those still running at the timeout."""
    deadline = time.monotonic() + timeout
    left = [p for p in pids if alive(p)]
    while left and time.monotonic() < deadline:
        time.sleep(0.05)
        left = [p for p in left if alive(p)]
    return left


def lock_free(data_dir: str | os.PathLike) -> bool:
    from memactors.server import folder_in_use

    return not folder_in_use(data_dir)


def kill(pids) -> None:
    for p in pids:
        try:
            os.kill(p, signal.SIGKILL)
        except ProcessLookupError:
            pass


def start_driver(spec: dict, *, new_session: bool = False) -> subprocess.Popen:
    """Start ``driver.py`` on ``spec`` (written where it says, or next to its ``out``)."""
    near = spec.get("out") or spec.get("log")
    path = spec.get("spec") or (f"{near}.spec.json" if near else
                                os.path.join(tempfile.gettempdir(), f"chaos-spec-{uuid.uuid4().hex[:8]}.json"))
    with open(path, "wb") as f:
        f.write(orjson.dumps(spec))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    env.setdefault("RAY_AUTH_MODE", "disabled")
    log = open(spec.get("log") or os.devnull, "ab")
    return subprocess.Popen([sys.executable, str(DRIVER), path], env=env, stdin=subprocess.DEVNULL, stdout=log,
                            stderr=subprocess.STDOUT, start_new_session=new_session, close_fds=True)


def run_driver(spec: dict, timeout: float = 300.0) -> dict:
    """Run ``driver.py`` to the end and return its ``out`` JSON (raises with its log on failure)."""
    spec = dict(spec)
    spec.setdefault("out", os.path.join(tempfile.gettempdir(), f"chaos-out-{uuid.uuid4().hex[:8]}.json"))
    spec.setdefault("log", spec["out"] + ".log")
    p = start_driver(spec)
    try:
        rc = p.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        kill([p.pid])
        raise
    if rc != 0 or not os.path.exists(spec["out"]):
        tail = Path(spec["log"]).read_text(errors="replace")[-3000:] if os.path.exists(spec["log"]) else ""
        raise RuntimeError(f"driver exited with {rc}:\n{tail}")
    return orjson.loads(Path(spec["out"]).read_bytes())


# --- one round --------------------------------------------------------------------------------


@dataclass
class Round:
    fault: str
    index: int
    ok: bool = False
    acked: int = 0
    indeterminate: int = 0
    lost: int = 0
    duplicated: int = 0
    chain: int = 0
    other: int = 0
    recovery_s: float | None = None
    reopened: bool = False
    lock_free: bool = False
    strays: int = 0
    summary: str = ""
    problems: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return asdict(self)


def scopes_for(fault: str) -> list[str]:
    from memactors.testing import unique_org

    org = unique_org(f"x{fault[:3]}")
    return [f"/org/{org}/user/alice/", f"/org/{org}/user/bob/"]


def judge(rnd: Round, events: list[dict], collected, t_fault_ns: int) -> None:
    """Fill ``rnd`` from the checker's report and the history (recovery: the fault to the
    first acknowledgement of a write invoked after it)."""
    report = collected.check(events)
    a = report.anomalies
    rnd.acked = report.counts["writes"]["acked"]
    rnd.indeterminate = report.counts["writes"]["indeterminate"]
    rnd.lost, rnd.duplicated, rnd.chain = len(a["lost"]), len(a["duplicated"]), len(a["chain"])
    rnd.other = sum(len(v) for k, v in a.items() if k not in ("lost", "duplicated", "chain"))
    rnd.summary = report.summary()
    invoked = {e["op_id"]: e["ts"] for e in events if e["type"] == "invoke" and e["op"] == "write"}
    acks = sorted(e["ts"] for e in events if e["type"] == "ok" and e["op"] == "write"
                  and invoked.get(e["op_id"], 0) > t_fault_ns)
    if acks and rnd.recovery_s is None:
        rnd.recovery_s = (acks[0] - t_fault_ns) / 1e9
    if not report.ok:
        rnd.problems.append("checker: " + report.summary())


class Load:
    """Client threads driving a ``Workload`` until stopped: one writes one op at a time, the
    others in ``write_many`` batches, each recorded in its own history file."""

    def __init__(self, rt, scopes: list[str], hist: Path, seed: int, kinds=("single", "batched", "batched")):
        from memactors.testing import History, Workload

        self.rt, self.stop = rt, threading.Event()
        self.wl = Workload(scopes, actor="agent", seed=seed, gate_mix=True, working=0.05)
        self.hists = [History(hist / f"c{i}.jsonl", client=f"c{i}") for i in range(len(kinds))]
        self.threads = [threading.Thread(target=self._run, args=(h, k), daemon=True) for h, k in zip(self.hists, kinds)]
        self.errors: list[BaseException] = []

    def _run(self, h, kind: str) -> None:
        seen: list[str] = []
        i = 0
        try:
            while not self.stop.is_set():
                if kind == "batched":
                    self.wl.run_batched(self.rt, h, 40, batch=20, start=i)
                else:
                    self.wl.run(self.rt, h, 10, start=i, seen=seen)
                i += 40 if kind == "batched" else 10
        except BaseException as exc:  # noqa: BLE001 - reported by the round
            self.errors.append(exc)

    def __enter__(self) -> Load:
        for t in self.threads:
            t.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop.set()
        for t in self.threads:
            t.join(timeout=180)
        for h in self.hists:
            h.close()


def _targets(rt, fault: str, scopes: list[str]) -> list:
    from memactors.testing import actors, owner_for

    a = actors(rt)
    if fault == "owner":
        return [owner_for(rt, scopes[0])]
    if fault == "ledger":
        return [a["ledger"]]
    if fault == "gate":
        return list(a["gate"])
    if fault == "embed":
        return list(a["embed"])
    if fault == "flush_gap":
        return [*a["owners"], a["ledger"]]
    raise ValueError(fault)


def _all_pids(rt) -> list[int]:
    from memactors.testing import actors

    a = actors(rt)
    hs = [*a["owners"], a["ledger"], *a["gate"], *a["embed"]]
    return [int(i["Pid"]) for i in map(actor_info, hs) if i.get("Pid")]


def _reopen_and_close(rnd: Round, data: Path, cfg: dict) -> None:
    """The folder after the round, opened on the process host: the same cores, ledger and Lance
    files (so the same replay and checks), without starting a second set of actors; the round's
    own runtime showed its processes gone after close()."""
    import memactors

    rt = memactors.connect(data, config=cfg, host="process")
    try:
        v = rt.audit.verify()
        rnd.reopened = bool(v["ok"])
        if not v["ok"]:
            rnd.problems.append(f"verify after reopening: {v}")
    finally:
        rt.close()
    _after_close(rnd, data, [])  # the lock is free again; a process host starts no process


def _after_close(rnd: Round, data: Path, pids: list[int]) -> None:
    rnd.lock_free = lock_free(data)
    if not rnd.lock_free:
        rnd.problems.append("the data folder's lock is still held after close()")
    left = wait_gone(pids, 30)
    rnd.strays += len(left)
    if left:
        rnd.problems.append(f"{len(left)} actor processes still run after close()")


def in_process_round(base: Path, fault: str, index: int, rng: random.Random) -> Round:
    """One round of an actor fault on a runtime in this process (on the test's Ray)."""
    import memactors
    from memactors.testing import collect, read_history

    rnd = Round(fault, index)
    data, cfg = base / "data", config_for(fault)
    scopes = scopes_for(fault)
    hist = base / f"hist-{index}"
    rt = memactors.connect(data, config=cfg)
    pids: list[int] = []
    try:
        rt.grant_many([{"actor": "agent", "scope": scopes[0].rsplit("/user/", 1)[0] + "/", "write": True},
                       {"actor": "checker", "scope": "/global/"}])
        targets = _targets(rt, fault, scopes)
        with Load(rt, scopes, hist, seed=rng.randrange(1 << 30)) as load:
            time.sleep(rng.uniform(0.2, 1.5))
            victims = [actor_pid(t) for t in targets]
            t_fault = time.time_ns()
            kill(victims)
            # Keep the load on until a write invoked after the fault is acknowledged (or 60 s).
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline and not _acked_after(hist, t_fault):
                time.sleep(0.05)
            time.sleep(rng.uniform(0.1, 0.5))
        if load.errors:
            rnd.problems.append(f"a client thread raised {type(load.errors[0]).__name__}: {load.errors[0]}")
        events = read_history(hist)
        judge(rnd, events, collect(rt, scopes, actor="checker"), t_fault)
        pids = _all_pids(rt)
    finally:
        rt.close()
    _after_close(rnd, data, pids)
    _reopen_and_close(rnd, data, cfg)
    rnd.ok = not rnd.problems
    return rnd


def _acked_after(hist: Path, t_fault: int) -> bool:
    from memactors.testing import read_history

    events = read_history(hist)
    invoked = {e["op_id"]: e["ts"] for e in events if e["type"] == "invoke" and e["op"] == "write"}
    return any(e["type"] == "ok" and e["op"] == "write" and invoked.get(e["op_id"], 0) > t_fault for e in events)


def subprocess_round(base: Path, fault: str, index: int, rng: random.Random) -> Round:
    """One round of ``driver`` (a driver on this Ray killed) or ``ray`` (a driver with a Ray of
    its own, killed with every process of that Ray); then a fresh connect in this process."""
    import ray

    import memactors
    from memactors.testing import collect, read_history

    rnd = Round(fault, index)
    data, cfg = base / "data", config_for(fault)
    scopes = scopes_for(fault)
    hist = base / f"hist-{index}"
    tag = uuid.uuid4().hex[:8]
    ready = base / f"ready-{index}"
    temp_dir = f"/tmp/mcr-{tag}" if fault == "ray" else None  # short: Ray's socket paths are limited
    spec = {"data": str(data), "hist": str(hist), "config": cfg, "mode": "work", "client": f"d{index}",
            "seed": rng.randrange(1 << 30), "scopes": scopes, "ops": 1_000_000, "grant": True,
            "threads": ["single", "batched", "batched"], "ready": str(ready), "log": str(base / f"driver-{index}.log"),
            "address": ray.get_runtime_context().gcs_address if fault == "driver" else None, "temp_dir": temp_dir,
            "spec": str(base / f"spec-{index}.json")}
    proc = start_driver(spec, new_session=True)
    try:
        deadline = time.monotonic() + 120
        while not ready.exists():
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"driver did not start: {Path(spec['log']).read_text(errors='replace')[-2000:]}")
            time.sleep(0.05)
        time.sleep(rng.uniform(0.3, 2.0))
        t_fault = time.time_ns()
        if temp_dir:  # the driver and every process of its Ray, at one instant
            killed = kill_all_at_once(proc.pid, temp_dir)
        else:
            killed = {proc.pid}
            kill([proc.pid])
    finally:
        if proc.poll() is None:
            kill([proc.pid])
        proc.wait(timeout=30)
    if temp_dir:
        left = wait_gone(set(procs_with(temp_dir)) | killed, 10)
        rnd.strays += len(left)
        if left:
            rnd.problems.append(f"{len(left)} processes of the killed Ray still run")
    rt = memactors.connect(data, config=cfg)
    pids: list[int] = []
    try:
        probe = rt.write(scopes[0], f"probe after the crash {tag}", actor="agent")
        rnd.recovery_s = (time.time_ns() - t_fault) / 1e9
        if probe.decision != "accepted":
            rnd.problems.append(f"probe write: {probe.decision}")
        events = read_history(hist)
        c = collect(rt, scopes, actor="checker")
        c.store_rows = [r for r in c.store_rows if r["memory_id"] != probe.memory_id]
        c.ledger_events = [e for e in c.ledger_events if e.get("memory_id") != probe.memory_id]
        judge(rnd, events, c, t_fault)
        pids = _all_pids(rt)
    finally:
        rt.close()
    _after_close(rnd, data, pids)
    _reopen_and_close(rnd, data, cfg)
    if temp_dir:
        import shutil

        shutil.rmtree(temp_dir, ignore_errors=True)
    rnd.ok = not rnd.problems
    return rnd


def run_round(base: Path, fault: str, index: int, rng: random.Random) -> Round:
    base.mkdir(parents=True, exist_ok=True)
    if fault in OPS:
        from op_faults import op_round

        return op_round(base, fault, index, rng)
    if fault in IN_PROCESS:
        return in_process_round(base, fault, index, rng)
    return subprocess_round(base, fault, index, rng)


def run_fault(base: Path, fault: str, rounds: int, seed: int = 0) -> list[Round]:
    """``rounds`` rounds of ``fault`` on one data folder under ``base`` (reopened each round)."""
    rng = random.Random(f"{fault}:{seed}")
    return [run_round(base, fault, i, rng) for i in range(rounds)]


def rounds_from_env(default: int) -> int:
    return int(os.environ.get("CHAOS_ROUNDS", default))


# --- small recorded histories (storage faults, batches) ---------------------------------------


def recorded_write(h, rt, **args):
    """``rt.write(**args)`` recorded in history ``h``; returns the result or the exception
    (only the project's typed errors are caught: anything else is a failure of the test)."""
    import memactors

    op = h.write_invoke(**args)
    try:
        r = rt.write(**args)
    except memactors.MemactorsError as exc:
        h.fail(op, exc)
        return exc
    h.write_ok(op, r)
    return r


def check_history(rt, hist: Path, scopes: list[str]):
    """The checker's report on the history under ``hist`` for ``scopes`` (actor "checker")."""
    from memactors.testing import collect, read_history

    return collect(rt, scopes, actor="checker").check(read_history(hist))


def namespace_actors_gone(namespace: str) -> bool:
    """True when no actor of the folder's namespace is alive (by its published names)."""
    import ray

    from memactors.engine.naming import LEDGER, owner_name

    for name in (LEDGER, owner_name(0), owner_name(1)):
        try:
            ray.get_actor(name, namespace=namespace)
            return False
        except ValueError:
            pass
    return True


# --- a long-lived runtime (`memactors up`) for several driver processes -----------------------

_UP = """
import sys, orjson
import memactors
from memactors import server
info = server.up(sys.argv[1], config=orjson.loads(sys.argv[2]))
if grants := orjson.loads(sys.argv[3]):  # attached as any client is: no driver process just for these
    with memactors.connect(sys.argv[1], detached=True, config=orjson.loads(sys.argv[2])) as rt:
        rt.grant_many(grants)
print(orjson.dumps(info).decode(), flush=True)
"""


def up(data: Path, config: dict, grants: list[dict] | None = None) -> dict:
    """``memactors up`` for ``data`` with ``config`` (in a process of its own: this process's
    Ray is another cluster), then ``grants`` made on it; returns its runtime.json."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    out = subprocess.run([sys.executable, "-c", _UP, str(data), orjson.dumps(config).decode(),
                          orjson.dumps(grants or []).decode()], env=env, capture_output=True, text=True, timeout=300)
    if out.returncode != 0:
        if os.path.exists(data / "runtime.json"):  # up, but the grants failed: no head left behind
            down(data)
        raise RuntimeError(f"up failed: {out.stderr[-3000:]}")
    return orjson.loads(out.stdout.strip().splitlines()[-1])


def down(data: Path) -> dict:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    out = subprocess.run([sys.executable, "-m", "memactors.cli", "down", "--data", str(data), "--json"], env=env,
                         capture_output=True, text=True, timeout=300)
    if out.returncode != 0:
        raise RuntimeError(f"down failed: {out.stderr[-3000:]}")
    return orjson.loads(out.stdout)


def collected_from(out: dict):
    """A ``Collected`` from a collect-mode driver's output."""
    from memactors.testing import Collected

    return Collected(out["ledger_events"], out["store_rows"], out["verify"], out.get("notes", []))


# --- batches and overload ---------------------------------------------------------------------


def vm_hwm_mb(pid: int) -> float | None:
    """Peak resident memory (VmHWM) of a process, in MiB."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


class Flood:
    """Client threads each writing ``write_many`` calls of ``size`` items into ``scopes`` (one
    tenant: one owner) for ``seconds``, resubmitting ``err.items`` of every ``PartialWrite``
    (same idempotency keys) until each item is acknowledged. Every call is recorded in a
    history of its own. ``stats`` counts calls, partial writes, resubmitted items and the
    invariants of each PartialWrite that did not hold."""

    def __init__(self, rt, scopes: list[str], hist: Path, *, threads: int, size: int, seconds: float,
                 actor: str = "agent", tag: str = "") -> None:
        from memactors.testing import History

        self.rt, self.scopes, self.size, self.seconds, self.actor = rt, scopes, size, seconds, actor
        self.tag = tag or uuid.uuid4().hex[:6]
        self.hists = [History(hist / f"f{i}.jsonl", client=f"f{i}", fsync=False) for i in range(threads)]
        self.lock = threading.Lock()
        self.stats = {"calls": 0, "partial": 0, "resubmitted": 0, "acked": 0, "bad_partial": 0, "other_errors": 0,
                      "unfinished": 0}
        self.errors: list[str] = []

    def _items(self, client: str, n: int) -> list[dict]:
        out = []
        for j in range(self.size):
            k = f"{self.tag}-{client}-{n}-{j}"
            it = {"scope": self.scopes[j % len(self.scopes)], "text": f"item {k} note", "actor": self.actor,
                  "idempotency_key": k}
            if j % 3 == 0:  # a few facts written by every client: versions contend
                it.update(subject=f"s{j % 7}", predicate="p", object=f"o-{k}", text=f"s{j % 7} p o-{k}")
            out.append(it)
        return out

    def _client(self, h) -> None:
        import memactors

        deadline = time.monotonic() + self.seconds
        n = 0
        while time.monotonic() < deadline:
            items = self._items(h.client, n)
            n += 1
            for attempt in range(200):
                with h.batch():
                    ids = [h.write_invoke(**it) for it in items]
                with self.lock:
                    self.stats["calls"] += 1
                try:
                    res = self.rt.write_many(items)
                except memactors.PartialWrite as e:
                    self._check_partial(e, items)
                    with h.batch():
                        for i, op in enumerate(ids):
                            r = e.results[i] if i < len(e.results) else None
                            if r is not None:
                                h.write_ok(op, r)
                            else:
                                h.fail(op, e)
                    with self.lock:
                        self.stats["partial"] += 1
                        self.stats["resubmitted"] += len(e.items)
                        self.stats["acked"] += sum(r is not None for r in e.results)
                    items = list(e.items)
                    time.sleep(0.05)
                    continue
                except memactors.MemactorsError as e:  # typed, but not a batch answer: all unknown
                    with h.batch():
                        for op in ids:
                            h.fail(op, e)
                    with self.lock:
                        self.stats["other_errors"] += 1
                    self.errors.append(f"{type(e).__name__}: {e}")
                    time.sleep(0.2)
                    continue
                with h.batch():
                    for op, r in zip(ids, res):
                        h.write_ok(op, r)
                with self.lock:
                    self.stats["acked"] += len(res)
                break
            else:
                with self.lock:
                    self.stats["unfinished"] += len(items)

    def _check_partial(self, e, items: list[dict]) -> None:
        ok = (len(e.results) == len(items) and e.failed == sorted(i for i, r in enumerate(e.results) if r is None)
              and [it["idempotency_key"] for it in e.items] == [items[i]["idempotency_key"] for i in e.failed]
              and bool(e.failed))
        if not ok:
            with self.lock:
                self.stats["bad_partial"] += 1

    def run(self) -> dict:
        t0 = time.monotonic()
        threads = [threading.Thread(target=self._client, args=(h,)) for h in self.hists]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        for h in self.hists:
            h.close()
        self.stats["seconds"] = time.monotonic() - t0
        self.stats["items_per_s"] = self.stats["acked"] / self.stats["seconds"]
        return self.stats


def sample_inflight(rt, stop: threading.Event, out: dict) -> None:
    """Until ``stop``: the largest ``inflight`` any owner reported, and peak memory of the owners
    and the ledger writer (VmHWM, read at the end)."""
    from memactors.testing import actors

    a = actors(rt)
    peak = 0
    while not stop.is_set():
        try:
            peak = max([peak, *(s["inflight"] for s in rt.stats())])
        except Exception:  # noqa: BLE001 - a sample missed under load is no finding
            pass
        time.sleep(0.05)
    out["max_inflight"] = peak
    out["owner_hwm_mb"] = [vm_hwm_mb(actor_pid(o)) for o in a["owners"]]
    out["ledger_hwm_mb"] = vm_hwm_mb(actor_pid(a["ledger"]))


def overload(rt, scopes: list[str], hist: Path, *, threads: int = 8, size: int = 100, seconds: float = 6.0) -> dict:
    """Unloaded throughput (one client), then sustained overload (``threads`` clients), then
    recovery (single-write latency after the load stops). Returns the figures."""
    base = Flood(rt, scopes, hist / "unloaded", threads=1, size=size, seconds=max(2.0, seconds / 3), tag="u").run()
    stop, mem = threading.Event(), {}
    sampler = threading.Thread(target=sample_inflight, args=(rt, stop, mem))
    sampler.start()
    flood = Flood(rt, scopes, hist / "overload", threads=threads, size=size, seconds=seconds, tag="o")
    loaded = flood.run()
    stop.set()
    sampler.join()
    lat = []
    quiet = f"{scopes[0]}task/recovery/"  # outside the checked scopes: these writes have no history
    for i in range(10):
        t = time.perf_counter()
        rt.write(quiet, f"after the storm {i} {uuid.uuid4().hex[:6]}", actor="agent")
        lat.append(time.perf_counter() - t)
    lat.sort()
    return {"unloaded_items_per_s": base["items_per_s"], "overload_items_per_s": loaded["items_per_s"],
            "overload": loaded, "errors": flood.errors[:5], "recovery_write_p50_s": lat[len(lat) // 2],
            "recovery_write_max_s": lat[-1], **mem}
