"""The Ray head of ``memactors up``: started on free ports with a temp dir of its own, stopped by
its pid, and every process it started found again, however it ended.

The head runs in a session of its own with a mark in its environment (``MEMACTORS_HEAD=<id>``,
the id recorded in runtime.json). Every process of the head inherits both, also once
re-parented after the head was killed; so ``down`` finds them by the mark, or by the session
and a file open under the head's temp dir (a process that renamed itself over its
environment), never by a name, a port or a pid alone, any of which could have been recycled.

Importing this module does not import Ray.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from types import MappingProxyType

from .engine.naming import namespace_for
from .core.errors import ServerError
from .store.runtime_file import gone, is_zombie

HEAD_LOG = "head.log"
MARK = "MEMACTORS_HEAD"
UP_TIMEOUT_S = 90.0
DOWN_TIMEOUT_S = 30.0
# Ray settings of every Ray this package starts (an `up` head: each process of it and every
# driver that attaches takes them from its GCS). A driver's shutdown flushes its task events to
# the GCS for up to 5 s: when the runtime went down first (`memactors down`, a killed head),
# every attached process hung that long in close() and again at exit.
# Read-only: ``ray.init`` writes its session's spilling directory into the dict it is handed, so
# each call gets a copy (``dict(SYSTEM_CONFIG)``); a second local Ray in one process had spilled
# into the first one's session folder, with Ray's warning on stderr.
SYSTEM_CONFIG = MappingProxyType({"task_events_shutdown_flush_timeout_ms": 300})


def temp_dir_for(data_dir: str) -> str:
    # Short on purpose: Ray puts unix sockets under it (paths are limited to ~107 bytes).
    return os.path.join(tempfile.gettempdir(), namespace_for(data_dir))


def log_path(info: dict) -> str:
    """Where the Ray head of ``info`` (runtime.json) writes its output."""
    return os.path.join(str(info.get("temp_dir") or ""), HEAD_LOG)


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


# What Ray's head prints when a port found free was taken before it bound it (another process's
# ephemeral port in between): worth another try on other free ports.
_PORT_TAKEN = ("Failed to start the grpc server", "Address already in use")
_START_TRIES = 3


def start(temp_dir: str, env: dict) -> tuple[subprocess.Popen, str]:
    """Start ``ray start --head --block`` on free ports with ``temp_dir`` and ``env`` added to
    this process's environment; return the process and its address once it is up. A port taken
    between being found free and being bound is tried again on others (up to three times).
    Raises ServerError (and stops it) when it does not come up."""
    for attempt in range(1, _START_TRIES + 1):
        try:
            return _start_once(temp_dir, env)
        except _PortTaken as exc:
            if attempt == _START_TRIES:
                raise ServerError(str(exc)) from None
    raise AssertionError("unreachable")


class _PortTaken(ServerError):
    pass


def _sessions(temp_dir: str) -> set[str]:
    with contextlib.suppress(OSError):
        return {n for n in os.listdir(temp_dir) if n.startswith("session_2")}
    return set()


def _gcs_port_taken(temp_dir: str, earlier: set[str]) -> bool:
    """Whether this start's GCS (a session not in ``earlier``) said its port was taken: Ray's
    ``ray start`` waits on a GCS that will never come, about 40 s, before it gives up itself."""
    for session in _sessions(temp_dir) - earlier:
        with contextlib.suppress(OSError):
            with open(os.path.join(temp_dir, session, "logs", "gcs_server.out"), "rb") as f:
                if any(s in f.read().decode(errors="replace") for s in _PORT_TAKEN):
                    return True
    return False


def _start_once(temp_dir: str, env: dict) -> tuple[subprocess.Popen, str]:
    addr_file = os.path.join(temp_dir, "ray_current_cluster")
    with contextlib.suppress(FileNotFoundError):
        os.remove(addr_file)
    # No autoscaler monitor and no log monitor: one node that never scales, and no driver of
    # ours reads workers' logs (log_to_driver=False); two processes and ~180 MB fewer.
    cmd = [_ray_script(), "start", "--head", "--block", f"--port={_free_port()}", "--include-dashboard=false",
           "--disable-usage-stats", "--no-monitor", "--include-log-monitor=false", f"--temp-dir={temp_dir}",
           f"--dashboard-agent-listen-port={_free_port()}", f"--system-config={json.dumps(dict(SYSTEM_CONFIG))}"]
    if _client_server_available():
        cmd.append(f"--ray-client-server-port={_free_port()}")
    env = dict(os.environ, RAY_GRACEFUL_SHUTDOWN_DRAIN_TIMEOUT_S="0", **env)
    env.pop("RAY_ADDRESS", None)
    log_path_ = os.path.join(temp_dir, HEAD_LOG)
    earlier = _sessions(temp_dir)
    with open(log_path_, "ab") as log:
        # Its own session (process group): `down` can kill the whole group if SIGTERM is not enough.
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                start_new_session=True, env=env, close_fds=True)
    try:
        deadline = time.monotonic() + UP_TIMEOUT_S
        while not os.path.exists(addr_file):
            if _gcs_port_taken(temp_dir, earlier):
                raise _PortTaken(f"a port of the head was taken before it was bound; see {log_path_}")
            if proc.poll() is not None:
                raise ServerError(f"ray start exited with code {proc.returncode}; see {log_path_}: "
                                  + _log_tail(log_path_, 1))
            if time.monotonic() > deadline:
                raise ServerError(f"ray start did not come up within {UP_TIMEOUT_S:.0f}s; see {log_path_}")
            time.sleep(0.1)
        time.sleep(0.05)  # the address file is written in one go; let it land
        with open(addr_file) as f:
            return proc, f.read().strip()
    except _PortTaken:
        # A head that never came up has nothing to drain, and `ray start` waiting on a GCS that
        # will not come ignores SIGTERM: its process group goes at once (it took the full 10 s).
        stop(proc.pid, timeout=0.5)
        raise
    except BaseException:
        stop(proc.pid, timeout=10)
        raise


def stop(pid: int, timeout: float = DOWN_TIMEOUT_S) -> str:
    """Stop one ``ray start --block`` process (it stops its own node's processes on SIGTERM);
    SIGKILL its process group (created by ``start``) if it does not finish in time. Returns what
    happened: "stopped", "killed" or "already gone"."""
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return "already gone"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if gone(pid):
            return "stopped"
        time.sleep(0.1)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)
    return "killed"


def _session(pid: int) -> int | None:
    with contextlib.suppress(OSError, IndexError, ValueError):
        with open(f"/proc/{pid}/stat", "rb") as f:
            return int(f.read().rsplit(b")", 1)[1].split()[3])
    return None


def _opens_under(pid: int, folder: str) -> bool:
    with contextlib.suppress(OSError):
        for fd in os.listdir(f"/proc/{pid}/fd"):
            with contextlib.suppress(OSError):
                if os.readlink(f"/proc/{pid}/fd/{fd}").startswith(folder + os.sep):
                    return True
    return False


def processes(info: dict) -> list[int]:
    """The live processes of the head ``info`` names: those that carry its mark, and those in
    its session that hold a file open under its temp dir (Ray's agents rename themselves over
    their environment, so their mark can be gone; their log files stay open)."""
    head_id, sid, temp_dir = info.get("head_id"), info.get("ray_pid"), info.get("temp_dir")
    mark = f"{MARK}={head_id}".encode() if isinstance(head_id, str) and head_id else None
    sid = sid if isinstance(sid, int) and sid > 0 and isinstance(temp_dir, str) and temp_dir else None
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == os.getpid():
            continue
        pid = int(name)
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                marked = mark is not None and mark in f.read().split(b"\0")
        except OSError:  # gone meanwhile, or another user's
            continue
        if (marked or (sid is not None and _session(pid) == sid and _opens_under(pid, temp_dir))) \
                and not is_zombie(pid):
            found.append(pid)
    return found


def stop_leftovers(info: dict, grace: float = 3.0, timeout: float = 15.0) -> int:
    """Stop every process the head of ``info`` left: SIGTERM when first seen, SIGKILL once it
    has had ``grace`` seconds, and the same for any that appears meanwhile (a dying raylet
    restarts its agents), until none is left or ``timeout``. Ray's dashboard and runtime-env
    agents outlive a head killed with SIGKILL. Returns how many were stopped."""
    first: dict[int, float] = {}
    start = time.monotonic()
    while (pids := processes(info)) and time.monotonic() - start < timeout:
        now = time.monotonic()
        for pid in pids:
            sig = signal.SIGTERM if pid not in first else signal.SIGKILL if now - first[pid] > grace else None
            first.setdefault(pid, now)
            if sig is not None:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, sig)
        time.sleep(0.2)
    return len(first)


def remove_temp_dir(info: dict) -> None:
    # Only a folder `up` made: directly under the system temp dir, named memactors-<digest>.
    temp_dir = info.get("temp_dir")
    if (isinstance(temp_dir, str) and os.path.dirname(temp_dir) == tempfile.gettempdir()
            and os.path.basename(temp_dir).startswith("memactors-")):
        shutil.rmtree(temp_dir, ignore_errors=True)
