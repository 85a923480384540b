"""How a process joins Ray: quietly, with Ray's token authentication on, within a bounded time.

- A new local Ray (the embedded default): ``RAY_AUTH_MODE=token`` unless the user chose a mode,
  set the way Ray sets it itself when the mode is unset, minus its notice on the terminal. The
  token stays in Ray's own file (``~/.ray/auth_token``, or wherever RAY_AUTH_TOKEN_PATH points).
- A folder's ``up`` runtime: the mode and Ray's token file as its runtime.json records them
  (with a digest of the token, never the token, so a changed token is told apart from a network
  problem); the GCS port is probed first and Ray's own connect attempts are bounded. Ray would
  end this process 60 s after losing the runtime's GCS; it is told not to, and calls notice
  that the runtime went away themselves (``Link.alive``, used by ``calls.Calls``).
- A cluster given by address: Ray's own rules for authentication, the same probe, typed errors.
"""

from __future__ import annotations

import hashlib
import os
import secrets
import shlex
import socket
import tempfile
import time
import warnings
from collections.abc import Iterator
from contextlib import contextmanager

from ..core.errors import ServerError, Unavailable
from ..store.layout import Layout
from ..store import runtime_file

MODE, TOKEN, TOKEN_PATH = "RAY_AUTH_MODE", "RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH"
PROBE_S = 3.0  # a local GCS that does not accept a connection in this long is not there
# Ray's connect attempts (about a second each; its default is 20, each up to 20 s when
# nothing answers) and how long it keeps a driver whose GCS went away (its default is 60 s,
# then it ends the process with exit code 1).
_TRIES = ("RAY_gcs_server_port_wait_time_s", "5")
_KEEP = ("RAY_gcs_rpc_server_reconnect_timeout_s", str(365 * 86_400))
_INIT = dict(include_dashboard=False, log_to_driver=False, configure_logging=False)


# --- Ray's token ----------------------------------------------------------------------------


def default_token_file() -> str:
    """Where Ray keeps its token when neither RAY_AUTH_TOKEN nor RAY_AUTH_TOKEN_PATH says otherwise."""
    return os.path.join(os.path.expanduser("~"), ".ray", "auth_token")


def _digest(token: str) -> str:
    # Tells two tokens apart; a 256-bit random token cannot be recovered from it.
    return hashlib.sha256(token.strip().encode()).hexdigest()[:16]


def _ensure_default_token() -> str:
    """Ray's default token file, created if missing as ``ray get-auth-token --generate`` would
    (the same 256-bit hex token), but readable by its user only; never replaced."""
    path = default_token_file()
    if not os.path.exists(path):
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".auth_token.")
        try:
            with os.fdopen(fd, "w") as f:
                f.write(secrets.token_hex(32))
            try:
                os.link(tmp, path)  # atomic and never over a token another process just wrote
            except FileExistsError:
                pass
        finally:
            os.remove(tmp)
    return path


def _read_token(path: str, why: str) -> str:
    try:
        with open(path) as f:
            token = f.read().strip()
    except OSError as exc:
        raise ServerError(f"cannot read Ray's token file {path} ({exc.strerror}); {why}") from None
    if not token:
        raise ServerError(f"Ray's token file {path} is empty; {why}")
    return token


def head_auth() -> dict:
    """How a new ``up`` head authenticates, as runtime.json records it: ``{"auth": "disabled"}``
    when the user turned Ray's token authentication off, else ``{"auth": "token"}`` with the
    token's file (Ray's default one is created if missing) or ``"token_env"`` when it comes from
    RAY_AUTH_TOKEN, and the token's digest."""
    mode = os.environ.get(MODE, "token").lower()
    if mode != "token":
        return {"auth": mode}
    if os.environ.get(TOKEN):
        return {"auth": "token", "token_env": TOKEN, "token_digest": _digest(os.environ[TOKEN])}
    path = os.path.abspath(os.environ.get(TOKEN_PATH) or _ensure_default_token())
    token = _read_token(path, f"write a token there (`ray get-auth-token --generate`) or unset {TOKEN_PATH}")
    return {"auth": "token", "token_file": path, "token_digest": _digest(token)}


def head_env(auth: dict) -> dict:
    """The environment a head started with ``auth`` needs (every process of it inherits it)."""
    env = {MODE: auth["auth"]}
    if auth.get("token_file"):
        env[TOKEN_PATH] = auth["token_file"]
    return env


def use_auth(auth: dict, shown: str) -> None:
    """Make this process authenticate as the runtime recorded with ``auth`` requires (before
    ``ray.init``). Raises ServerError when its token cannot be read or is not the runtime's."""
    if "auth" not in auth:
        return  # a file from before the mode was recorded: Ray's own rules
    changed = (f"Ray's token {{}} is not the one the runtime of {shown} was started with (it changed since "
               "`memactors up`); put that token back to attach")
    if auth.get("token_file"):
        token = _read_token(auth["token_file"], f"the runtime of {shown} authenticates with it")
        if auth.get("token_digest") not in (None, _digest(token)):
            raise ServerError(changed.format(f"in {auth['token_file']}"))
        os.environ[TOKEN_PATH] = auth["token_file"]
        os.environ.pop(TOKEN, None)  # it would win over the file
    elif auth.get("token_env"):
        if not os.environ.get(TOKEN):
            raise ServerError(f"the runtime of {shown} authenticates with {TOKEN}, which this process does not set")
        if auth.get("token_digest") not in (None, _digest(os.environ[TOKEN])):
            raise ServerError(changed.format(f"in {TOKEN}"))
    os.environ[MODE] = auth["auth"]
    _refresh()


def _refresh() -> None:
    """Ray caches its mode and token at first use; this is how Ray itself refreshes both when
    it turns token authentication on (ray._private.authentication)."""
    from ray._raylet import AuthenticationTokenLoader, Config

    Config.initialize("")
    AuthenticationTokenLoader.instance().reset_cache()


def _default_auth() -> None:
    # What ray.init does when RAY_AUTH_MODE is unset, without the notice (and with a token
    # file readable by its user only).
    if os.environ.get(MODE) is None:
        if not os.environ.get(TOKEN) and not os.environ.get(TOKEN_PATH):
            _ensure_default_token()
        os.environ[MODE] = "token"
        _refresh()


# --- joining --------------------------------------------------------------------------------


# An HTTP/2 client preface and an empty SETTINGS frame: a gRPC server (Ray's GCS) replies at once.
_H2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + bytes.fromhex("000000040000000000")


def probe(address: str, timeout: float = PROBE_S) -> bool:
    """True when a server answers at ``host:port``: it accepts a TCP connection and replies to an
    HTTP/2 preface (or closes). A stopped (frozen) GCS is accepted by the kernel but never replies,
    and ``ray.init`` would wait minutes on it."""
    host, _, port = address.rpartition(":")
    try:
        with socket.create_connection((host, int(port)), timeout=timeout) as s:
            s.sendall(_H2_PREFACE)
            s.recv(1)  # its SETTINGS, or its closing: something runs there
            return True
    except (OSError, ValueError):
        return False


@contextmanager
def _env(*pairs: tuple[str, str]) -> Iterator[None]:
    # Read by Ray while it connects; the user's own value wins, and the process is left as it was.
    saved = {k: os.environ.get(k) for k, _ in pairs}
    for k, v in pairs:
        os.environ.setdefault(k, v)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


class Link:
    """This process's tie to a folder's ``up`` runtime: whether that runtime still runs."""

    def __init__(self, info: dict, shown: str) -> None:
        self.info, self.shown = info, shown
        self._checked, self._ok = 0.0, True

    def alive(self) -> bool:
        if isinstance(self.info.get("ray_pid"), int):
            return runtime_file.head_alive(self.info)
        if time.monotonic() - self._checked > 1.0:  # no pid to watch: its GCS port, once a second
            self._ok, self._checked = probe(self.info["address"]), time.monotonic()
        return self._ok

    def gone(self) -> Unavailable:
        return Unavailable(f"the runtime of {self.shown} at {self.info['address']} went away (stopped, or its head "
                           "ended); nothing further was done: start it again (`memactors up`) and connect again")


def local(namespace: str | None = None) -> None:
    """A new local Ray for this process, quiet, with token authentication as Ray's default."""
    import ray

    from ..head import SYSTEM_CONFIG

    _default_auth()
    with warnings.catch_warnings():
        # lance's and lancedb's at-fork hooks (imported by a process-host runtime here before) warn
        # at each fork Ray makes to start its servers; those children exec Ray's binaries at once.
        warnings.filterwarnings("ignore", message="lancedb fork support", category=RuntimeWarning)
        warnings.filterwarnings("ignore", message="lance is not fork-safe", category=UserWarning)
        ray.init(address="local", namespace=namespace, _system_config=dict(SYSTEM_CONFIG), **_INIT)


def join(data_dir: str, shown: str, address: str | None, namespace: str, detached: bool) -> Link | None:
    """``ray.init`` for a runtime of ``data_dir``. Attached to the folder's ``up`` runtime (a
    detached connect without an address, or that runtime's own address): returns its Link. Else
    a new local Ray (no address, or "local") or the cluster at ``address``: returns None."""
    info = None
    if address is None and detached:
        info = runtime_file.attachable(data_dir, shown)
    elif address not in (None, "local", "auto") and "://" not in address:
        found = runtime_file.read(data_dir)
        if (found and found["address"] == address and runtime_file.belongs(found, data_dir)
                and runtime_file.head_alive(found)):
            info = found
    if info is not None:
        _attach(info, namespace, shown)
        return Link(info, shown)
    import ray

    if address in (None, "local"):
        local(namespace)
        return None
    if "://" not in address and address != "auto" and not probe(address):
        raise Unavailable(f"nothing answers at {address}: no Ray cluster is reachable there; check the address")
    try:
        with _env(_TRIES):
            ray.init(address=address, namespace=namespace, **_INIT)
    except (ConnectionError, RuntimeError, ray.exceptions.RayError) as exc:
        raise Unavailable(f"cannot join the Ray cluster at {address} ({type(exc).__name__}); check the address and, "
                          f"with token authentication, the token ({TOKEN} or {TOKEN_PATH})") from None
    return None


def _attach(info: dict, namespace: str, shown: str) -> None:
    import ray

    address = info["address"]
    use_auth(info, shown)
    log = os.path.join(str(info.get("temp_dir") or ""), "head.log")
    if not probe(address):
        if isinstance(info.get("ray_pid"), int):  # head_alive held a moment ago
            raise ServerError(f"the runtime of {shown} does not answer at {address} although its head "
                              f"(pid {info['ray_pid']}) runs; wait a moment and retry, or see {log}")
        raise ServerError(f"nothing answers at {address}, the address in {Layout(shown).runtime_file}: its runtime "
                          f"is gone; run `memactors down --data {shlex.quote(shown)}` to clean up")
    try:
        with _env(_TRIES, _KEEP):
            ray.init(address=address, namespace=namespace, **_INIT)
    except (ConnectionError, RuntimeError, ray.exceptions.RayError) as exc:
        raise ServerError(f"the runtime of {shown} at {address} refused this process ({type(exc).__name__}): it must "
                          f"use the same Ray and Ray token as the runtime (runtime.json names them); see {log}") from None
