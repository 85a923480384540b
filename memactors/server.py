"""The long-lived local runtime of one data folder: start it (``up``), stop it (``down``), and
open a runtime for a piece of work (``open_runtime``: attach to it, or start an embedded one).

``up`` starts a Ray head of its own (``memactors.head``: its own temp dir under the system temp
dir, free ports, Ray's token authentication on unless the user turned it off), so a plain
``ray.init()`` elsewhere on the machine never attaches to it; opens the data folder with
detached ledger and owner actors; and records where it is in ``DIR/runtime.json``
(``memactors.store.runtime_file``). ``down`` stops exactly that head, by the process id
recorded there, then whatever it left behind, never with a machine-wide ``ray stop``. Both
hold ``DIR/up.lock`` while they work, so two at once on one folder start one head.

Importing this module does not import Ray: the runtime is imported when a function needs it.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import secrets
import shlex
import sys
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import memactors

from . import head
from .core.errors import ServerError, StoreError
from .store import runtime_file
from .store.layout import Layout, resolve

if TYPE_CHECKING:
    from memactors.runtime import Runtime

LOCK_WAIT_S = head.UP_TIMEOUT_S + 90.0  # an `up` in progress: its head's start, then its actors'


@contextlib.contextmanager
def _exclusive(data_dir: str, shown: str) -> Iterator[None]:
    """Hold ``DIR/up.lock`` (an flock: released when this process ends, however it ends),
    after another ``up`` or ``down`` of the folder has finished, waiting at most LOCK_WAIT_S."""
    with open(Layout(data_dir).up_lock, "a+b") as f:
        deadline = time.monotonic() + LOCK_WAIT_S
        while True:
            try:
                fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise ServerError(f"another `memactors up` or `down` of {shown} has been running for "
                                      f"{LOCK_WAIT_S:.0f} s; wait for it to finish") from None
                time.sleep(0.2)
        try:
            yield
        finally:
            fcntl.flock(f.fileno(), fcntl.LOCK_UN)


def _clear_stale(data_dir: str, info: dict) -> list[str]:
    """Clean up after a runtime.json that names no live runtime of this folder. A copy's file
    (a ``cp -r`` of a live folder) is removed and nothing else: the head and the temp dir it
    names are the original's. A dead head's leftovers are stopped and its temp dir removed."""
    runtime_file.remove(data_dir)
    if not runtime_file.belongs(info, data_dir):
        return [f"runtime.json was copied from {info.get('data_dir')}: removed it; that runtime is left running"]
    left = head.stop_leftovers(info)
    head.remove_temp_dir(info)
    return [f"{left} processes its head left behind: stopped"] if left else []


# --- up / down ------------------------------------------------------------------------------


def up(data_dir: str | os.PathLike, *, config: Any = None) -> dict:
    """Start the long-lived runtime of ``data_dir`` (created if missing) and return
    ``{"status": "up", **runtime_info, "seconds"}``; when it is already up, return
    ``{"status": "already_up", **runtime_info}`` and start nothing. A stale runtime.json (its
    head gone, or copied from another folder) is replaced. ``config`` is passed to
    ``memactors.connect`` for the actors it starts. Raises ServerError when the Ray head does
    not come up (it is stopped again)."""
    from .runtime import ray_link

    shown = os.fspath(data_dir)
    data_dir = resolve(data_dir)
    os.makedirs(data_dir, exist_ok=True)
    with _exclusive(data_dir, shown):
        info = runtime_file.read(data_dir)
        if info is not None:
            if runtime_file.belongs(info, data_dir) and runtime_file.head_alive(info):
                return {"status": "already_up", **info}
            _clear_stale(data_dir, info)
        auth = ray_link.head_auth()
        t0 = time.monotonic()
        temp_dir = head.temp_dir_for(data_dir)
        os.makedirs(temp_dir, exist_ok=True)
        head_id = secrets.token_hex(8)
        proc, address = head.start(temp_dir, {**ray_link.head_env(auth), head.MARK: head_id})
        ok = False
        try:
            ray_link.use_auth(auth, shown)
            rt = memactors.connect(data_dir, address=address, detached=True, config=config)
            info = {"address": address, "namespace": rt.namespace, "ray_pid": proc.pid, "head_id": head_id,
                    "temp_dir": temp_dir, "data_dir": data_dir, "folder": runtime_file.identity(data_dir),
                    "started_at": time.time(), **auth}
            runtime_file.write(data_dir, info)
            rt.close()  # runtime.json exists: this only detaches, the actors stay up
            ok = True
        finally:
            if not ok:
                runtime_file.remove(data_dir)
                head.stop(proc.pid, timeout=10)
                head.stop_leftovers({"head_id": head_id})
    return {"status": "up", **info, "seconds": round(time.monotonic() - t0, 2)}


def down(data_dir: str | os.PathLike) -> dict:
    """Stop the long-lived runtime of ``data_dir``: flush, checkpoint the ledger and release its
    lock, stop the actors, stop its Ray head (only that one, by the recorded pid) and whatever
    that head left running, remove runtime.json and the head's temp dir. Returns ``{"status":
    "down", "data_dir", "steps", "seconds"}``, or ``{"status": "not_up", "data_dir"}`` when none
    is up. A copy's runtime.json is removed and nothing is stopped; a head already gone is
    cleaned up after; an address nobody answers is given up on within seconds."""
    shown = os.fspath(data_dir)
    data_dir = resolve(data_dir)
    if not os.path.exists(Layout(data_dir).runtime_file):
        return {"status": "not_up", "data_dir": data_dir}
    with _exclusive(data_dir, shown):
        info = runtime_file.read(data_dir)
        if info is None:
            return {"status": "not_up", "data_dir": data_dir}
        t0 = time.monotonic()
        if not runtime_file.belongs(info, data_dir):
            steps = _clear_stale(data_dir, info)
        elif runtime_file.head_alive(info):
            steps = _stop(data_dir, shown, info)
        else:
            steps = ["its ray head was already gone; cleaned up", *_clear_stale(data_dir, info)]
    return {"status": "down", "data_dir": data_dir, "steps": steps, "seconds": round(time.monotonic() - t0, 2)}


def _stop(data_dir: str, shown: str, info: dict) -> list[str]:
    from .runtime.ray_link import probe

    pid = info.get("ray_pid")
    if not isinstance(pid, int) and not probe(info["address"]):  # no head to watch, and nobody there
        runtime_file.remove(data_dir)
        return [f"nothing answers at {info['address']} and runtime.json names no ray pid: removed it, "
                "nothing else to stop"]
    steps: list[str] = []
    try:
        rt = memactors.connect(shown, detached=True)  # attaches through runtime.json
        runtime_file.remove(data_dir)  # now close() flushes, shuts the ledger down and kills the actors
        rt.close()
        steps.append("actors stopped, ledger checkpointed")
    except Exception as exc:  # noqa: BLE001 - stopping the head below is what matters now
        why = str(exc).splitlines()[0] if isinstance(exc, memactors.MemactorsError) and str(exc) else \
            type(exc).__name__
        steps.append(f"could not stop the actors cleanly ({why}); stopping the head")
    if isinstance(pid, int) and pid > 0:
        steps.append(f"ray head {pid}: {head.stop(pid)}")
    else:
        steps.append("runtime.json names no ray pid: the Ray cluster was left running")
    left = head.stop_leftovers(info)
    if left:
        steps.append(f"{left} processes the head left behind: stopped")
    runtime_file.remove(data_dir)
    head.remove_temp_dir(info)
    return steps


# --- one piece of work ----------------------------------------------------------------------


@contextlib.contextmanager
def open_runtime(data_dir: str | os.PathLike, *, create: bool = False) -> Iterator[tuple[Runtime, str]]:
    """Yield ``(runtime, mode)``: attached to the ``up`` runtime of ``data_dir`` when there is
    one (mode "attached"), else an embedded runtime started for this piece of work (mode
    "embedded", on the process host: never whatever ``ray start`` left behind). Closing at the
    end detaches from an ``up`` runtime and stops an embedded one. Raises ServerError when
    runtime.json names a runtime that is gone, unreachable or another folder's (a copy's file).
    Messages name ``data_dir`` as given, so the command they suggest is the one the caller typed.
    A folder without a ledger is refused (StoreError) unless ``create``: a verb that only reads
    or changes what is there never makes a folder at a mistyped path and reports it empty."""
    shown = os.fspath(data_dir)
    if runtime_file.attachable(resolve(data_dir), shown) is not None:
        rt, mode = memactors.connect(shown, detached=True), "attached"
    elif not create and not os.path.exists(Layout(resolve(data_dir)).ledger):
        raise StoreError(f"{shown} is not a memactors data folder (no ledger); `memactors grant ACTOR SCOPE "
                         f"--data {shlex.quote(shown)}` starts one")
    else:
        # One verb's work needs no cluster: the process host opens the folder in this process
        # (about a second, no Ray processes); MEMACTORS_HOST=ray asks for a new local Ray instead.
        rt, mode = memactors.connect(shown, host=os.environ.get("MEMACTORS_HOST") or "process"), "embedded"
    try:
        yield rt, mode
    except BaseException:
        # The work's own error is the one to report: closing over a damaged ledger fails too
        # (its flush reads the same file), and that error would replace it.
        with contextlib.suppress(memactors.MemactorsError):
            rt.close()
        raise
    rt.close()


def folder_in_use(data_dir: str | os.PathLike) -> bool:
    """True when a runtime holds ``data_dir``'s lock (the ledger writer's flock) right now."""
    lock = Layout(resolve(data_dir)).lock
    if not os.path.exists(lock):
        return False
    with open(lock, "rb") as f:  # flock needs no write access: a read-only folder is checked too
        try:
            fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return True
        fcntl.flock(f.fileno(), fcntl.LOCK_UN)
    return False


def rebuild(data_dir: str | os.PathLike, *, config=None, workers: int | None = None) -> dict:
    """Rebuild the folder's L2 from its ledger alone (``memactors rebuild``). The folder must not
    be open by a runtime (its ledger is locked then): ServerError says so. The ledger's parts
    are folded in Ray tasks when this process is connected to Ray or $MEMACTORS_HOST is "ray"
    (a local Ray is started then), else in child processes (``engine.rebuild.in_processes``), one
    per CPU, as the process host
    serves the other verbs."""
    from .runtime import load_config

    path = resolve(data_dir)
    if not os.path.exists(Layout(path).ledger):
        raise ServerError(f"{os.fspath(data_dir)} has no ledger to rebuild from")
    if folder_in_use(path):
        raise ServerError(f"{os.fspath(data_dir)} is open by a runtime; close it (or `memactors down`) first")
    cfg = load_config(config)
    from .store.ledger_key import key_dir

    cfg.runtime.key_dir = key_dir(cfg.runtime.key_dir)
    on_ray = "ray" in sys.modules and sys.modules["ray"].is_initialized()  # never imported: not connected
    if not on_ray and (os.environ.get("MEMACTORS_HOST") or "process") != "ray":
        from .engine import rebuild as RB

        return RB.rebuild(path, cfg, workers=workers, fold=RB.in_processes, cpus=os.cpu_count() or 1)
    import ray

    from .actors.rebuild_tasks import rebuild as _rebuild

    started = not ray.is_initialized()
    if started:
        from .runtime import ray_link

        ray_link.local()
    try:
        return _rebuild(path, cfg, workers=workers)
    finally:
        if started:
            ray.shutdown()
