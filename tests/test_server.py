"""The data-folder layout and the `up`/`down` lifecycle in the library (memactors.server).

Everything but the last test runs without Ray: stand-in processes play the Ray head. The last
test runs `memactors up` with Ray's token authentication turned off, a few verbs and `memactors
down` end to end, in subprocesses; tests/test_server_edges.py runs the server with it on."""

from __future__ import annotations

import fcntl
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

import orjson
import pytest

import memactors
from memactors import head, server
from memactors.core.errors import MemactorsError, ServerError, StoreError
from memactors.store import layout, runtime_file
from memactors.store.layout import Layout, looks_like_data_folder

pytestmark = pytest.mark.ray  # what is Ray's: actors, kills, clusters, the server

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))


@pytest.fixture
def no_runtime(monkeypatch):
    def refuse(*a, **kw):
        raise AssertionError("a runtime was opened")

    monkeypatch.setattr(memactors, "connect", refuse)


def _sleeper(*argv: str, ignore_term: bool = False) -> subprocess.Popen:
    """A process in its own session whose command line carries ``argv`` (as a Ray head's does)."""
    code = "import signal, time\n"
    if ignore_term:
        code += "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
    code += "print('ready', flush=True)\ntime.sleep(60)\n"
    proc = subprocess.Popen([sys.executable, "-c", code, *argv], stdout=subprocess.PIPE, start_new_session=True)
    assert proc.stdout.readline().strip() == b"ready"  # its handlers are installed
    return proc


def _kill(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


def _write_info(data_dir, **info) -> None:
    os.makedirs(data_dir, exist_ok=True)
    with open(Layout(str(data_dir)).runtime_file, "wb") as f:
        f.write(orjson.dumps(info))


# --- layout ---------------------------------------------------------------------------------


def test_layout_names_every_path(tmp_path):
    lay = Layout(tmp_path)
    assert lay.data_dir == str(tmp_path)
    assert lay.ledger == str(tmp_path / "ledger.duckdb")
    assert lay.l2 == str(tmp_path / "l2")
    assert lay.lock == str(tmp_path / "lock")
    assert lay.runtime_file == str(tmp_path / "runtime.json")
    assert layout.L2_TABLE == "memories"


def test_resolve_gives_one_name_per_folder(tmp_path, monkeypatch):
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    monkeypatch.chdir(tmp_path)
    real = layout.resolve(tmp_path / "real")
    assert layout.resolve("link") == real == layout.resolve("./real/../real")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert layout.resolve("~/real") == real


def test_looks_like_data_folder_matches_and_refuses(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    data = tmp_path / "data"
    data.mkdir()
    (data / "ledger.duckdb").write_bytes(b"")
    (data / "l2").mkdir()
    assert looks_like_data_folder(empty) and looks_like_data_folder(data)
    locks_only = tmp_path / "locks_only"  # an `up` that failed before the ledger was made
    locks_only.mkdir()
    (locks_only / "up.lock").write_bytes(b"")
    assert looks_like_data_folder(locks_only)
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "todo.txt").write_text("keep me")
    only_l2 = tmp_path / "only_l2"
    (only_l2 / "l2").mkdir(parents=True)  # no ledger: not plainly ours
    file = tmp_path / "file"
    file.write_text("x")
    for path in (notes, only_l2, file, tmp_path / "missing"):
        assert not looks_like_data_folder(path), path


# --- runtime.json ---------------------------------------------------------------------------


def test_server_error_is_a_store_error():
    assert issubclass(ServerError, StoreError) and issubclass(ServerError, MemactorsError)
    assert memactors.ServerError is ServerError


def test_read_runtime_info(tmp_path):
    assert runtime_file.read(tmp_path) is None
    _write_info(tmp_path, address="127.0.0.1:1", namespace="n")
    assert runtime_file.read(tmp_path)["address"] == "127.0.0.1:1"
    for bad in (b"{not json", b"[1, 2]", b'{"address": 5}', b'{"namespace": "n"}'):
        (tmp_path / "runtime.json").write_bytes(bad)
        with pytest.raises(ServerError, match="runtime.json"):
            runtime_file.read(tmp_path)


def test_head_alive_only_for_our_running_head(tmp_path):
    temp_dir = str(tmp_path / "memactors-abc")
    head = _sleeper("start", f"--temp-dir={temp_dir}")
    other = _sleeper("start", "--temp-dir=/elsewhere")
    try:
        assert runtime_file.head_alive({"ray_pid": head.pid, "temp_dir": temp_dir})
        assert not runtime_file.head_alive({"ray_pid": other.pid, "temp_dir": temp_dir})  # a recycled pid
        assert not runtime_file.head_alive({"ray_pid": os.getpid(), "temp_dir": temp_dir})  # no "start"
    finally:
        _kill(head)
        _kill(other)
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    assert not runtime_file.head_alive({"ray_pid": gone.pid, "temp_dir": temp_dir})
    zombie = subprocess.Popen([sys.executable, "-c", "pass", "start", temp_dir])
    deadline = time.monotonic() + 30
    while not runtime_file.is_zombie(zombie.pid):  # exited, not yet reaped
        assert time.monotonic() < deadline
        time.sleep(0.05)
    try:
        assert not runtime_file.head_alive({"ray_pid": zombie.pid, "temp_dir": temp_dir})
    finally:
        zombie.wait()
    assert runtime_file.head_alive({"address": "10.0.0.1:6379"})  # written by hand: trust the address
    assert runtime_file.head_alive({"ray_pid": "123"})


def test_stop_head_stops_only_that_process():
    calm, stubborn, bystander = _sleeper(), _sleeper(ignore_term=True), _sleeper()
    try:
        assert head.stop(calm.pid, timeout=5) == "stopped"
        assert head.stop(stubborn.pid, timeout=0.5) == "killed"
        stubborn.wait(timeout=5)
        assert bystander.poll() is None
    finally:
        for p in (calm, stubborn, bystander):
            _kill(p)
    assert head.stop(calm.pid) == "already gone"


# --- up / down / open_runtime without a live head ------------------------------------------


def test_down_without_a_runtime_is_a_no_op(no_runtime, tmp_path):
    assert server.down(tmp_path) == {"status": "not_up", "data_dir": str(tmp_path.resolve())}


def test_down_cleans_up_after_a_dead_head(no_runtime, tmp_path):
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    ours = tempfile.mkdtemp(prefix="memactors-test-")
    _write_info(tmp_path, address="127.0.0.1:1", ray_pid=gone.pid, temp_dir=ours)
    res = server.down(tmp_path)
    assert res["status"] == "down" and "already gone" in res["steps"][0]
    assert not os.path.exists(Layout(str(tmp_path)).runtime_file)
    assert not os.path.exists(ours)


def test_down_removes_only_a_temp_dir_up_made(no_runtime, tmp_path):
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    other, outer = tempfile.mkdtemp(prefix="other-"), tempfile.mkdtemp(prefix="memactors-outer-")
    keep = [other, str(tmp_path / "memactors-nested"), os.path.join(outer, "memactors-inner")]
    try:
        for k in keep:
            os.makedirs(k, exist_ok=True)
            data = tmp_path / f"data-{os.path.basename(k)}"
            _write_info(data, address="127.0.0.1:1", ray_pid=gone.pid, temp_dir=k)
            assert server.down(data)["status"] == "down"
            assert os.path.isdir(k), k
    finally:
        shutil.rmtree(other, ignore_errors=True)
        shutil.rmtree(outer, ignore_errors=True)


def test_up_when_already_up_starts_nothing(no_runtime, tmp_path):
    temp_dir = str(tmp_path / "memactors-abc")
    head = _sleeper("start", f"--temp-dir={temp_dir}")
    try:
        _write_info(tmp_path, address="127.0.0.1:1", namespace="n", ray_pid=head.pid, temp_dir=temp_dir)
        res = server.up(tmp_path)
        assert res["status"] == "already_up" and res["ray_pid"] == head.pid
    finally:
        _kill(head)


def test_open_runtime_refuses_a_stale_runtime_json(no_runtime, tmp_path):
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    _write_info(tmp_path, address="127.0.0.1:1", ray_pid=gone.pid, temp_dir="/nonexistent/memactors-x")
    with pytest.raises(ServerError, match="no longer running") as exc:
        with server.open_runtime(str(tmp_path)):
            pass
    assert f"memactors down --data {tmp_path}" in str(exc.value)


def test_folder_in_use_follows_the_lock(tmp_path):
    assert not server.folder_in_use(tmp_path)  # no lock file
    lock = Layout(str(tmp_path)).lock
    open(lock, "w").close()
    assert not server.folder_in_use(tmp_path)  # nobody holds it
    # The ledger writer holds it from another process; flock is per open file, so hold it in a child.
    holder = subprocess.Popen([sys.executable, "-c", (
        "import fcntl, sys, time\nf = open(sys.argv[1], 'a+')\nfcntl.flock(f, fcntl.LOCK_EX)\n"
        "print('held', flush=True)\ntime.sleep(60)\n"), lock], stdout=subprocess.PIPE)
    try:
        assert holder.stdout.readline().strip() == b"held"
        assert server.folder_in_use(tmp_path)
    finally:
        holder.kill()
        holder.wait()
    assert not server.folder_in_use(tmp_path)
    with open(lock) as f:  # and the probe left it unlocked
        fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)


# --- end to end (starts a Ray head of its own) ----------------------------------------------


def _cli(*args: str, data: str, auth: str | None = None) -> subprocess.CompletedProcess:
    # HOME apart, so that no Ray token is ever written into the user's home.
    env = {k: v for k, v in os.environ.items() if k not in ("RAY_AUTH_MODE", "RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH")}
    env.update(PYTHONPATH=ROOT, HOME=os.path.join(os.path.dirname(data), "home"))
    if auth is not None:
        env["RAY_AUTH_MODE"] = auth
    return subprocess.run([sys.executable, "-m", "memactors.cli", *args, "--data", data, "--json"],
                          capture_output=True, text=True, env=env, timeout=180)


def test_up_with_auth_turned_off_verbs_attach_and_down_stops_that_head(tmp_path):
    """The one server test that must turn Ray's token authentication off: `up` under
    RAY_AUTH_MODE=disabled records it, and verbs attach without the variable (the other server
    tests, in test_server_edges.py, run with authentication on)."""
    data = str(tmp_path / "data")
    res = _cli("up", data=data, auth="disabled")
    assert res.returncode == 0, res.stderr
    info = orjson.loads(res.stdout)
    try:
        assert info["status"] == "up" and runtime_file.head_alive(info) and info["auth"] == "disabled"
        assert not os.path.exists(tmp_path / "home" / ".ray")  # no token made when none is used
        with open(Layout(data).runtime_file, "rb") as f:
            assert orjson.loads(f.read()) == {
                k: info[k] for k in ("address", "namespace", "ray_pid", "head_id", "temp_dir", "data_dir", "folder",
                                     "started_at", "auth")}
        assert orjson.loads(_cli("up", data=data).stdout)["status"] == "already_up"
        res = _cli("grant", "a1", "/org/acme/user/alice/", "--write", data=data)
        assert res.returncode == 0, res.stderr
        res = _cli("grants", data=data)
        # a fresh folder has no grants (sweeps need none): only a1's
        assert sorted(g["actor"] for g in orjson.loads(res.stdout)["grants"]) == ["a1"]
        assert _cli("audit", "verify", data=data).returncode == 0
        # the history verbs attach too (their answers: test_cli.py, on the process host)
        res = _cli("audit", "head", data=data)
        assert res.returncode == 0 and orjson.loads(res.stdout)["seq"] >= 1, res.stderr
    finally:
        res = _cli("down", data=data)
    assert res.returncode == 0, res.stderr
    down = orjson.loads(res.stdout)
    assert down["status"] == "down" and any("stopped" in s or "killed" in s for s in down["steps"]), down
    assert not runtime_file.head_alive(info)
    assert not os.path.exists(Layout(data).runtime_file) and not os.path.exists(info["temp_dir"])
    assert os.path.exists(Layout(data).ledger)


# --- authentication, sizing (no head) --------------------------------------------------------


@pytest.fixture
def no_ray_auth_env(monkeypatch, tmp_path):
    for k in ("RAY_AUTH_MODE", "RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH"):
        monkeypatch.delenv(k, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    return tmp_path / "home"


def test_head_auth_makes_rays_token_file_once_and_records_no_token(no_ray_auth_env, monkeypatch):
    from memactors.runtime import ray_link

    auth = ray_link.head_auth()
    path = no_ray_auth_env / ".ray" / "auth_token"
    token = path.read_text()
    assert auth == {"auth": "token", "token_file": str(path), "token_digest": ray_link._digest(token)}
    assert len(token) == 64 and int(token, 16) >= 0 and path.stat().st_mode & 0o077 == 0
    assert ray_link.head_auth() == auth and path.read_text() == token  # never replaced
    assert ray_link.head_env(auth) == {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN_PATH": str(path)}
    monkeypatch.setenv("RAY_AUTH_MODE", "disabled")
    assert ray_link.head_auth() == {"auth": "disabled"}
    monkeypatch.setenv("RAY_AUTH_MODE", "token")
    monkeypatch.setenv("RAY_AUTH_TOKEN_PATH", str(no_ray_auth_env / "missing"))
    with pytest.raises(ServerError, match="RAY_AUTH_TOKEN_PATH"):
        ray_link.head_auth()


def test_use_auth_refuses_a_changed_token_without_showing_it(no_ray_auth_env, monkeypatch):
    from memactors.runtime import ray_link

    auth = ray_link.head_auth()
    path = no_ray_auth_env / ".ray" / "auth_token"
    path.write_text("f" * 64)
    with pytest.raises(ServerError, match="not the one the runtime") as exc:
        ray_link.use_auth(auth, "DIR")
    assert "f" * 16 not in str(exc.value) and "memactors down" not in str(exc.value)
    path.unlink()
    with pytest.raises(ServerError, match="cannot read Ray's token file"):
        ray_link.use_auth(auth, "DIR")
    monkeypatch.setenv("RAY_AUTH_TOKEN", "a" * 64)
    with pytest.raises(ServerError, match="RAY_AUTH_TOKEN"):
        ray_link.use_auth({"auth": "token", "token_env": "RAY_AUTH_TOKEN", "token_digest": "0" * 16}, "DIR")


def test_probe_finds_a_listener_and_nobody(tmp_path):
    import socket

    from memactors.runtime.ray_link import probe

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        threading.Thread(target=lambda: s.accept()[0].sendall(b"\x00"), daemon=True).start()  # a server replies
        assert probe(f"127.0.0.1:{port}")
    assert not probe(f"127.0.0.1:{port}", timeout=1) and not probe("no-port") and not probe("127.0.0.1:x")


def test_probe_does_not_take_a_frozen_server_for_one_that_answers():
    """A GCS stopped with SIGSTOP: the kernel accepts its connections, nothing replies. The
    probe says nobody answers, so a verb fails in one line instead of waiting minutes in ray.init."""
    import socket

    from memactors.runtime.ray_link import probe

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()  # never accepts: the kernel completes the handshake, nothing ever replies
        t0 = time.monotonic()
        assert not probe(f"127.0.0.1:{s.getsockname()[1]}", timeout=0.5)
        assert time.monotonic() - t0 < 2


@pytest.mark.parametrize("cpus, owners, gates", [(1, 1, 1), (2, 1, 1), (4, 2, 1), (8, 4, 2), (64, 8, 4)])
def test_owners_and_gate_workers_are_sized_to_the_cluster(monkeypatch, cpus, owners, gates):
    import ray

    from memactors.core.config import RuntimeConfig
    from memactors.runtime import startup

    monkeypatch.setattr(ray, "cluster_resources", lambda: {"CPU": float(cpus)})
    rc = RuntimeConfig()
    startup.sized(rc)
    assert (rc.num_owners, rc.gate_workers) == (owners, gates)
    rc = RuntimeConfig(num_owners=3, gate_workers=0)  # a number set in the config wins
    startup.sized(rc)
    assert (rc.num_owners, rc.gate_workers) == (3, 0)


def test_a_copy_of_runtime_json_does_not_belong_to_the_copy(tmp_path):
    orig, copy = tmp_path / "orig", tmp_path / "copy"
    orig.mkdir()
    info = {"address": "127.0.0.1:1", "data_dir": str(orig), "folder": runtime_file.identity(str(orig))}
    assert runtime_file.belongs(info, str(orig))
    shutil.copytree(orig, copy)
    assert not runtime_file.belongs(info, str(copy))
    assert not runtime_file.belongs(dict(info, data_dir=str(copy)), str(copy))  # same path, another folder
    assert runtime_file.belongs({"address": "127.0.0.1:1"}, str(copy))  # written by hand: trusted
    runtime_file.write(str(copy), info)
    with pytest.raises(ServerError, match="copied from") as exc:
        runtime_file.attachable(str(copy), "COPY")
    assert "memactors down --data COPY" in str(exc.value)
