"""`memactors up` end to end with Ray's token authentication ON (Ray's default), and its edges:
two `up`s at once, a copy of a live folder, an address nobody answers, a head killed with
SIGKILL, a client attached while the runtime goes away.

Every command runs in a subprocess whose environment leaves RAY_AUTH_MODE unset (the conftest
sets it for in-process Ray only) and points HOME at a temp folder, so Ray's token is written
there and never into the user's home. Every test stops what it started; the ``heads`` fixture
kills whatever a failing test left behind, so no Ray process outlives the module."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import orjson
import pytest

from memactors import server
from memactors.engine.naming import namespace_for
from memactors.store import runtime_file
from memactors.store.layout import Layout, resolve

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
_RAY_VARS = ("RAY_AUTH_MODE", "RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH", "RAY_ADDRESS")


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    home = tmp_path_factory.mktemp("home")
    out = {k: v for k, v in os.environ.items() if k not in _RAY_VARS}
    out.update(HOME=str(home), PYTHONPATH=ROOT)
    return out


def _sid(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
    except OSError:
        return None
    return None if fields[0] == b"Z" else int(fields[3])


def _pids() -> list[int]:
    return [int(p) for p in os.listdir("/proc") if p.isdigit()]


_SESSIONS: dict[str, int] = {}  # data folder -> the session of its head (`up` starts it in one of its own)


def head_processes(data: str) -> list[int]:
    """Every live process of the Ray head ``up`` started for ``data``: its session (recorded at
    `up`), and the sessions of processes whose command line names its temp dir (workers and
    agents rename themselves, but stay in the head's session)."""
    temp_dir = os.path.join(tempfile.gettempdir(), namespace_for(resolve(data)))
    sessions = {_SESSIONS.get(data)}
    for pid in _pids():
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if temp_dir.encode() in f.read():
                    sessions.add(_sid(pid))
        except OSError:
            continue
    sessions.discard(None)
    return [p for p in _pids() if _sid(p) in sessions]


def _clean(env, started: list[str]) -> None:
    for data in started:
        if os.path.exists(Layout(data).runtime_file):
            subprocess.run([sys.executable, "-m", "memactors.cli", "down", "--data", data], env=env,
                           capture_output=True, timeout=180)
        for pid in head_processes(data):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


@pytest.fixture
def heads(env):
    """Data folders whose heads this test starts; at teardown `down`, then SIGKILL of anything left."""
    started: list[str] = []
    yield started
    _clean(env, started)


@pytest.fixture(scope="module")
def served(env, tmp_path_factory):
    """One runtime the tests that leave it running share (a head costs 15-40 s to start here)."""
    started: list[str] = []
    data = str(tmp_path_factory.mktemp("served") / "data")
    try:
        yield data, up(env, started, data)
    finally:
        _clean(env, started)


def cli(env, *args: str, data: str, timeout: float = 180) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "memactors.cli", *args, "--data", data, "--json"],
                          capture_output=True, text=True, env=env, timeout=timeout)


def up(env, heads, data: str) -> dict:
    heads.append(data)
    res = cli(env, "up", data=data)
    assert res.returncode == 0, res.stderr
    assert res.stderr == "", res.stderr  # quiet: no Ray notice on the terminal
    info = orjson.loads(res.stdout)
    _SESSIONS[data] = info["ray_pid"]
    return info


def down(env, data: str) -> dict:
    res = cli(env, "down", data=data)
    assert res.returncode == 0, res.stderr
    return orjson.loads(res.stdout)


def _wait_gone(data: str, timeout: float = 30) -> list[int]:
    deadline = time.monotonic() + timeout
    while (left := head_processes(data)) and time.monotonic() < deadline:
        time.sleep(0.5)
    return left


def _one_line_error(res: subprocess.CompletedProcess) -> str:
    assert res.returncode == 2, (res.returncode, res.stdout, res.stderr)
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), res.stderr
    return lines[0]


# --- authentication on ----------------------------------------------------------------------


def test_up_and_verbs_under_default_token_auth(env, served):
    data, info = served
    token_file = os.path.join(env["HOME"], ".ray", "auth_token")
    with open(token_file) as f:
        token = f.read().strip()
    with open(Layout(data).runtime_file) as f:
        recorded = f.read()
    assert info["auth"] == "token" and info["token_file"] == token_file
    assert token not in recorded  # the file Ray reads it from, never the token itself
    assert os.stat(token_file).st_mode & 0o077 == 0  # written by `up`: readable by its user only

    res = cli(env, "grant", "a1", "/org/acme/user/alice/", "--write", data=data)
    assert res.returncode == 0 and res.stderr == "", res.stderr
    # The Python API attaches with nothing set either: connect(detached=True) finds runtime.json.
    code = ("import sys, memactors\nrt = memactors.connect(sys.argv[1], detached=True)\n"
            "rt.write('/org/acme/user/alice/', 'Alice likes tea', actor='a1')\nrt.close()\nprint('ok')\n")
    res = subprocess.run([sys.executable, "-c", code, data], capture_output=True, text=True, env=env, timeout=180)
    assert res.returncode == 0 and res.stdout.strip() == "ok" and res.stderr == "", res.stderr
    assert cli(env, "audit", "verify", data=data).returncode == 0

    # A token that no longer matches: one line that says what happened, and the runtime left up.
    with open(token_file, "w") as f:
        f.write("0" * 64)
    try:
        line = _one_line_error(cli(env, "grants", data=data, timeout=120))
        assert "token" in line and "memactors down" not in line and token not in line
    finally:
        with open(token_file, "w") as f:
            f.write(token)
    assert runtime_file.head_alive(info) and cli(env, "grants", data=data).returncode == 0


# --- M5: two `up`s at once -------------------------------------------------------------------


def test_two_ups_at_once_start_one_head(env, heads, tmp_path):
    data = str(tmp_path / "data")
    heads.append(data)
    cmd = [sys.executable, "-m", "memactors.cli", "up", "--data", data, "--json"]
    procs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
             for _ in range(2)]
    outs = [p.communicate(timeout=240) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], [o[1] for o in outs]
    res = [orjson.loads(o[0]) for o in outs]
    _SESSIONS[data] = res[0]["ray_pid"]
    assert sorted(r["status"] for r in res) == ["already_up", "up"], res
    assert res[0]["ray_pid"] == res[1]["ray_pid"]
    starts = [p for p in head_processes(data) if _cmdline(p).startswith(sys.executable) and " start " in _cmdline(p)]
    assert len(starts) == 1, [_cmdline(p) for p in starts]  # one `ray start` process, one head
    down(env, data)
    assert not _wait_gone(data)


def _cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


# --- M6: a copy of a live folder -------------------------------------------------------------


def test_a_copy_of_a_live_folder_is_not_its_runtime(env, served, tmp_path):
    data, info = served
    copy = str(tmp_path / "copy")
    shutil.copytree(data, copy)  # as `cp -r` would: runtime.json and all
    line = _one_line_error(cli(env, "grants", data=copy))
    assert "copy" in line and data in line  # never attached to the original's runtime
    out = down(env, copy)
    assert out["status"] == "down" and runtime_file.head_alive(info), out  # the original runs on
    assert not os.path.exists(Layout(copy).runtime_file)
    assert cli(env, "grants", data=data).returncode == 0


# --- L8: an address nobody answers; a head killed with SIGKILL --------------------------------


def test_an_unreachable_runtime_is_one_line_in_bounded_time(env, tmp_path):
    data = str(tmp_path / "data")
    os.makedirs(data)
    with socket_free_port() as port:  # nothing listens there once the probe socket is closed
        pass
    with open(Layout(data).runtime_file, "wb") as f:  # no ray_pid: written by hand, or another tool
        f.write(orjson.dumps({"address": f"127.0.0.1:{port}", "namespace": namespace_for(resolve(data))}))
    for verb in ("grants", "stats"):
        t0 = time.monotonic()
        try:
            res = cli(env, verb, data=data, timeout=60)
        except subprocess.TimeoutExpired:
            pytest.fail(f"`memactors {verb}` hung on an unreachable address")
        line = _one_line_error(res)
        assert f"127.0.0.1:{port}" in line and time.monotonic() - t0 < 45, line
    t0 = time.monotonic()
    try:
        res = cli(env, "down", data=data, timeout=60)
    except subprocess.TimeoutExpired:
        pytest.fail("`memactors down` hung on an unreachable address")
    assert res.returncode == 0, res.stderr
    assert not os.path.exists(Layout(data).runtime_file) and time.monotonic() - t0 < 45


class socket_free_port:
    def __enter__(self) -> int:
        import socket

        self.s = socket.socket()
        self.s.bind(("127.0.0.1", 0))
        return self.s.getsockname()[1]

    def __exit__(self, *exc) -> None:
        self.s.close()


def test_down_after_the_head_was_killed_leaves_no_process(env, heads, tmp_path):
    data = str(tmp_path / "data")
    info = up(env, heads, data)
    assert len(head_processes(data)) >= 6  # the head, GCS, raylet, agents, actors
    os.kill(info["ray_pid"], signal.SIGKILL)
    # Its GCS and raylet die with it (within ~0.1 s); what outlives them is left for `down`.
    deadline = time.monotonic() + 10
    while [p for p in head_processes(data) if not _cmdline(p).startswith("ray::")] and time.monotonic() < deadline:
        time.sleep(0.05)
    out = down(env, data)
    assert out["status"] == "down", out
    left = _wait_gone(data, timeout=3)  # stopped by `down`, not by luck: agents outlive a dead raylet
    assert not left, [_cmdline(p) for p in left]  # dashboard and runtime-env agents included
    assert not server.folder_in_use(data) and not os.path.exists(Layout(data).runtime_file)


# --- M7: a client attached while the runtime goes away ----------------------------------------

CLIENT = r"""
import os, sys, time
from memactors import server
from memactors.core.errors import Unavailable
data, go = sys.argv[1], sys.argv[2]
with server.open_runtime(data) as (rt, mode):
    print(mode, flush=True)
    while not os.path.exists(go):
        time.sleep(0.1)
    t0 = time.monotonic()
    try:
        rt.write("/org/acme/user/alice/", "Alice likes tea", actor="a1")
        print("written", flush=True)
    except Unavailable as exc:
        print(type(exc).__name__, round(time.monotonic() - t0, 1), flush=True)
print("closed", flush=True)
"""


def test_an_attached_client_gets_unavailable_when_the_runtime_goes_down(env, heads, tmp_path):
    data, go = str(tmp_path / "data"), str(tmp_path / "go")
    up(env, heads, data)
    assert cli(env, "grant", "a1", "/org/acme/user/alice/", "--write", data=data).returncode == 0
    client = subprocess.Popen([sys.executable, "-c", CLIENT, data, go], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, env=env)
    try:
        assert client.stdout.readline().strip() == "attached"
        stopped = down(env, data)
        open(go, "w").close()
        t0 = time.monotonic()
        out, err = client.communicate(timeout=60)
        left_in = time.monotonic() - t0
    except subprocess.TimeoutExpired:
        client.kill()
        pytest.fail("the attached client blocked after `memactors down`")
    finally:
        if client.poll() is None:
            client.kill()
    lines = out.split()
    assert client.returncode == 0, err  # not ended by Ray
    assert lines[0] == "Unavailable" and float(lines[1]) < 15 and lines[2] == "closed", out
    # ...and closed and exited at once (Ray's driver shutdown waited 5 s for the gone GCS to take
    # its task events, in close() and again at exit: head.SYSTEM_CONFIG)
    assert left_in < 3, left_in
    assert "actors stopped, ledger checkpointed" in stopped["steps"], stopped
    assert not _wait_gone(data)  # every process of the runtime, Ray's agents included
    assert not os.path.exists(Layout(data).ledger + ".wal") and not server.folder_in_use(data)


def test_a_port_taken_before_the_head_binds_it_is_tried_again_on_others(tmp_path, monkeypatch):
    # The head's ports are found free, then bound by Ray a moment later: another process may take
    # one in between (seen once in a full run: the GCS's port). Forced here: the first port
    # handed out is held open, so the first try fails as that race does.
    import socket

    from memactors import head

    held = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    held.bind(("127.0.0.1", 0))
    held.listen()
    taken, real, calls = held.getsockname()[1], head._free_port, []  # noqa: SLF001

    def first_taken() -> int:
        calls.append(1)
        return taken if len(calls) == 1 else real()

    monkeypatch.setattr(head, "_free_port", first_taken)
    temp_dir = tempfile.mkdtemp(prefix="mha-", dir="/tmp")
    try:
        proc, address = head.start(temp_dir, {})
        try:
            assert proc.poll() is None and address and str(taken) not in address
            # the first try did fail on the taken port, and the second handed out other ports
            assert head._gcs_port_taken(temp_dir, set()) and len(calls) >= 4  # noqa: SLF001
        finally:
            head.stop(proc.pid)
    finally:
        held.close()
        shutil.rmtree(temp_dir, ignore_errors=True)
