"""The long-lived local runtime of one data folder: start it (``up``), stop it (``down``), and
open a runtime for a piece of work (``open_runtime``: attach to it, or start an embedded one).

``up`` starts a Ray head of its own, with its own temp dir under the system temp dir and free
ports, so a plain ``ray.init()`` elsewhere on the machine never attaches to it; opens the data
folder with detached ledger and owner actors; and records where it is in ``DIR/runtime.json``
(written atomically). ``down`` stops exactly that head, by the process id recorded there, never
with a machine-wide ``ray stop``.

Importing this module does not import Ray: the runtime is imported when a function needs it.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import orjson

import memactors
from memactors.engine.naming import namespace_for
from memactors.core.errors import ServerError
from memactors.store.layout import Layout, resolve

if TYPE_CHECKING:
    from memactors.runtime import Runtime

HEAD_LOG = "head.log"
UP_TIMEOUT_S = 90.0
DOWN_TIMEOUT_S = 30.0


# --- runtime.json ---------------------------------------------------------------------------


def read_runtime_info(data_dir: str | os.PathLike) -> dict | None:
    """The contents of ``DIR/runtime.json`` (``address``, ``namespace``, ``ray_pid``,
    ``temp_dir``, ``data_dir``, ``started_at``), or None when no runtime is up. Raises
    ServerError when the file is unreadable or names no address."""
    path = Layout(resolve(data_dir)).runtime_file
    try:
        with open(path, "rb") as f:
            info = orjson.loads(f.read())
    except FileNotFoundError:
        return None
    except (OSError, orjson.JSONDecodeError) as exc:
        raise ServerError(f"cannot read {path}: {exc}; remove it or run `memactors down`") from None
    if not isinstance(info, dict) or not isinstance(info.get("address"), str):
        raise ServerError(f"{path} has no address; remove it or run `memactors down`")
    return info


def _write_runtime_info(data_dir: str, info: dict) -> None:
    # Atomic: a verb reading it concurrently sees the whole file or none.
    path = Layout(data_dir).runtime_file
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(orjson.dumps(info, option=orjson.OPT_INDENT_2))
    os.replace(tmp, path)


def _remove_runtime_info(data_dir: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.remove(Layout(data_dir).runtime_file)


# --- the Ray head process -------------------------------------------------------------------


def _is_zombie(pid: int) -> bool:
    with contextlib.suppress(OSError):
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().split(b")")[-1].split()[0] == b"Z"
    return False


def head_alive(info: dict) -> bool:
    """True when the ``ray start --block`` process that ``info`` (from runtime.json) names still
    runs and is ours: its command line names our temp dir, so a recycled pid is not mistaken
    for it. Without a pid (a file written by hand or another tool) the address is trusted."""
    pid = info.get("ray_pid")
    if not isinstance(pid, int) or pid <= 0:
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            cmd = f.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return True  # no /proc: the pid check is all we have
    if _is_zombie(pid):
        return False
    temp_dir = info.get("temp_dir")
    return "start" in cmd and (not temp_dir or temp_dir in cmd)


def head_log(info: dict) -> str:
    """Where the Ray head of ``info`` writes its output."""
    return os.path.join(str(info.get("temp_dir") or ""), HEAD_LOG)


def _temp_dir_for(data_dir: str) -> str:
    # Short on purpose: Ray puts unix sockets under it (paths are limited to ~107 bytes).
    return os.path.join(tempfile.gettempdir(), namespace_for(data_dir))


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _ray_script() -> str:
    here = os.path.join(os.path.dirname(sys.executable), "ray")
    if os.path.exists(here):
        return here
    found = shutil.which("ray")
    if not found:
        raise ServerError("cannot find the `ray` command next to this Python or on PATH")
    return found


def _client_server_available() -> bool:
    try:
        from ray.scripts.scripts import get_ray_client_dependency_error
    except ImportError:
        return False
    return get_ray_client_dependency_error() is None


def _log_tail(path: str, n: int = 15) -> str:
    with contextlib.suppress(OSError):
        with open(path, "rb") as f:
            return "\n".join(f.read().decode(errors="replace").splitlines()[-n:])
    return ""


def _start_head(temp_dir: str) -> tuple[subprocess.Popen, str]:
    """Start ``ray start --head --block`` on free ports with ``temp_dir``; return the process
    and its address once it is up. Raises ServerError (and stops it) when it does not come up."""
    addr_file = os.path.join(temp_dir, "ray_current_cluster")
    with contextlib.suppress(FileNotFoundError):
        os.remove(addr_file)
    cmd = [_ray_script(), "start", "--head", "--block", f"--port={_free_port()}", "--include-dashboard=false",
           "--disable-usage-stats", f"--temp-dir={temp_dir}", f"--dashboard-agent-listen-port={_free_port()}"]
    if _client_server_available():
        cmd.append(f"--ray-client-server-port={_free_port()}")
    env = dict(os.environ, RAY_GRACEFUL_SHUTDOWN_DRAIN_TIMEOUT_S="0")
    env.pop("RAY_ADDRESS", None)
    log_path = os.path.join(temp_dir, HEAD_LOG)
    with open(log_path, "ab") as log:
        # Its own session (process group): `down` can kill the whole group if SIGTERM is not enough.
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                start_new_session=True, env=env, close_fds=True)
    try:
        deadline = time.monotonic() + UP_TIMEOUT_S
        while not os.path.exists(addr_file):
            if proc.poll() is not None:
                raise ServerError(f"ray start exited with code {proc.returncode}; see {log_path}: "
                                  + _log_tail(log_path, 1))
            if time.monotonic() > deadline:
                raise ServerError(f"ray start did not come up within {UP_TIMEOUT_S:.0f}s; see {log_path}")
            time.sleep(0.1)
        time.sleep(0.05)  # the address file is written in one go; let it land
        with open(addr_file) as f:
            return proc, f.read().strip()
    except BaseException:
        _stop_head(proc.pid, timeout=10)
        raise


def _stop_head(pid: int, timeout: float = DOWN_TIMEOUT_S) -> str:
    """Stop one ``ray start --block`` process (it stops its own node's processes on SIGTERM);
    SIGKILL its process group (created by ``up``) if it does not finish in time. Returns what
    happened: "stopped", "killed" or "already gone"."""
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return "already gone"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return "stopped"
        if _is_zombie(pid):
            return "stopped"
        time.sleep(0.1)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)
    return "killed"


def _remove_temp_dir(info: dict) -> None:
    # Only a folder `up` made: directly under the system temp dir, named memactors-<digest>.
    temp_dir = info.get("temp_dir")
    if (isinstance(temp_dir, str) and os.path.dirname(temp_dir) == tempfile.gettempdir()
            and os.path.basename(temp_dir).startswith("memactors-")):
        shutil.rmtree(temp_dir, ignore_errors=True)


# --- up / down ------------------------------------------------------------------------------


def up(data_dir: str | os.PathLike, *, config: Any = None) -> dict:
    """Start the long-lived runtime of ``data_dir`` (created if missing) and return
    ``{"status": "up", **runtime_info, "seconds"}``; when it is already up, return
    ``{"status": "already_up", **runtime_info}``. A stale runtime.json (its head gone) is
    replaced. ``config`` is passed to ``memactors.connect`` for the actors it starts.
    Raises ServerError when the Ray head does not come up (it is stopped again)."""
    data_dir = resolve(data_dir)
    info = read_runtime_info(data_dir)
    if info is not None and head_alive(info):
        return {"status": "already_up", **info}
    if info is not None:
        _remove_runtime_info(data_dir)  # stale: its head is gone
    os.makedirs(data_dir, exist_ok=True)
    t0 = time.monotonic()
    temp_dir = _temp_dir_for(data_dir)
    os.makedirs(temp_dir, exist_ok=True)
    proc, address = _start_head(temp_dir)
    ok = False
    try:
        rt = memactors.connect(data_dir, address=address, detached=True, config=config)
        info = {"address": address, "namespace": rt.namespace, "ray_pid": proc.pid, "temp_dir": temp_dir,
                "data_dir": data_dir, "started_at": time.time()}
        _write_runtime_info(data_dir, info)
        rt.close()  # runtime.json exists: this only detaches, the actors stay up
        ok = True
    finally:
        if not ok:
            _remove_runtime_info(data_dir)
            _stop_head(proc.pid, timeout=10)
    return {"status": "up", **info, "seconds": round(time.monotonic() - t0, 2)}


def down(data_dir: str | os.PathLike) -> dict:
    """Stop the long-lived runtime of ``data_dir``: flush, checkpoint the ledger and release its
    lock, stop the actors, stop its Ray head (only that one, by the recorded pid), remove
    runtime.json and the head's temp dir. Returns ``{"status": "down", "data_dir", "steps",
    "seconds"}``, or ``{"status": "not_up", "data_dir"}`` when none is up. Never raises for a
    head that is already gone (that is cleaned up)."""
    data_dir = resolve(data_dir)
    info = read_runtime_info(data_dir)
    if info is None:
        return {"status": "not_up", "data_dir": data_dir}
    t0 = time.monotonic()
    steps: list[str] = []
    if head_alive(info):
        try:
            rt = memactors.connect(data_dir, address=info["address"], detached=True)
            _remove_runtime_info(data_dir)  # now close() flushes, shuts the ledger down and kills the actors
            rt.close()
            steps.append("actors stopped, ledger checkpointed")
        except Exception as exc:  # noqa: BLE001 - stopping the head below is what matters now
            steps.append(f"could not stop the actors cleanly ({type(exc).__name__}); stopping the head")
        pid = info.get("ray_pid")
        if isinstance(pid, int) and pid > 0:
            steps.append(f"ray head {pid}: {_stop_head(pid)}")
        else:
            steps.append("runtime.json names no ray pid: the Ray cluster was left running")
    else:
        steps.append("its ray head was already gone; cleaned up")
    _remove_runtime_info(data_dir)
    _remove_temp_dir(info)
    return {"status": "down", "data_dir": data_dir, "steps": steps, "seconds": round(time.monotonic() - t0, 2)}


# --- one piece of work ----------------------------------------------------------------------


@contextlib.contextmanager
def open_runtime(data_dir: str | os.PathLike) -> Iterator[tuple[Runtime, str]]:
    """Yield ``(runtime, mode)``: attached to the ``up`` runtime of ``data_dir`` when there is
    one (mode "attached"), else an embedded runtime started for this piece of work (mode
    "embedded", on a new local Ray, never whatever ``ray start`` left behind). Closing at the
    end detaches from an ``up`` runtime and stops an embedded one. Raises ServerError when
    runtime.json names a runtime that is gone or unreachable. Messages name ``data_dir`` as
    given, so the command they suggest is the one the caller typed."""
    shown = os.fspath(data_dir)
    path = resolve(data_dir)
    info = read_runtime_info(path)
    if info is not None:
        if not head_alive(info):
            raise ServerError(f"{Layout(path).runtime_file} names a runtime that is no longer running; "
                              f"run `memactors down --data {shown}` to clean up")
        try:
            rt = memactors.connect(path, address=info["address"], detached=True)
        except ConnectionError as exc:
            raise ServerError(f"cannot reach the runtime at {info['address']} ({exc}); "
                              f"run `memactors down --data {shown}` to clean up") from None
        mode = "attached"
    else:
        rt = memactors.connect(path, address="local")
        mode = "embedded"
    try:
        yield rt, mode
    finally:
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
    be open by a runtime (its ledger is locked then): ServerError says so."""
    import ray

    from .actors.rebuild_tasks import rebuild as _rebuild
    from .runtime import load_config

    path = resolve(data_dir)
    if not os.path.exists(Layout(path).ledger):
        raise ServerError(f"{os.fspath(data_dir)} has no ledger to rebuild from")
    if folder_in_use(path):
        raise ServerError(f"{os.fspath(data_dir)} is open by a runtime; close it (or `memactors down`) first")
    cfg = load_config(config)
    from .store.ledger_key import key_dir

    cfg.runtime.key_dir = key_dir(cfg.runtime.key_dir)
    started = not ray.is_initialized()
    if started:
        ray.init(address="local", include_dashboard=False, log_to_driver=False, configure_logging=False)
    try:
        return _rebuild(path, cfg, workers=workers)
    finally:
        if started:
            ray.shutdown()
