"""The direct path of the Ray host: a driver on an owner's node asks it over a local socket
(hot recalls, and a call's writes when they are few: a single write's acknowledgement).

A plain actor call costs a task submission each way (p50 1.9 / p95 4.1 ms for a hot recall
here). Ray's compiled graphs cut that to about a third, but their channels busy-wait: an owner
that had served one compiled recall kept a core at 100% from then on, idle or not (measured:
1.01 cores; and a cold recall's Lance query lost a core to the waiting driver, p95 27.5 against
20.2 ms). This path is the same call without either cost: the owner listens on a Unix socket
and answers ``recall_direct`` requests in a thread of its own; the driver connects when it
runs on the same node, authenticated by a random key it got through an (authenticated) actor
call (``multiprocessing.connection``'s challenge: no key, no connection), and blocks in
``recv`` while it waits. On Linux the socket is in the abstract namespace, so nothing is left
on disk by an owner that is killed (Ray kills its workers without running exit handlers: a
file per socket piled up in /tmp); elsewhere it is a file in a folder of mode 0700. Anything else
(another node, a failure, an owner restarting) falls back to the plain actor call.

The same is done for a small ``write_batch`` (a call of a few writes, an agent's single write):
the plain call's two task submissions were about 1.5 ms of its acknowledgement. The owner's
loop does the write as for any caller; a failure of the path (not a refusal) sends the same
writes with the same idempotency keys by the plain call, which never writes twice.

Requests and answers are JSON (orjson), never pickle: a peer that knows the key can send
nothing but data.
"""

from __future__ import annotations

import atexit
import logging
import os
import secrets
import shutil
import sys
import tempfile
import threading
import time
from multiprocessing.connection import Client, Listener

import numpy as np
import orjson

from ..core import errors
from ..core.errors import MemactorsError

log = logging.getLogger("memactors.hot_socket")

_OPTS = orjson.OPT_SERIALIZE_NUMPY
RETRY_AFTER_S = 5.0  # a failed path is tried again after this long (the plain call meanwhile)


def _node_id() -> str:
    import ray

    return ray.get_runtime_context().get_node_id()


class HotServer:
    """The owner's side: a listener thread, a thread per connection, each request answered by
    ``serve(request) -> dict`` (the core's ``recall_direct``, which reads hot state only
    under the hot cache's lock and never changes it)."""

    def __init__(self, serve, write=None) -> None:
        self._serve = serve
        self._write = write  # write(cols, now) -> results, run on the owner's loop (None: recalls only)
        self.key = os.urandom(32)
        if sys.platform.startswith("linux"):  # abstract: no file, gone with the process however it ends
            self._dir, self.path = None, f"\0memactors-hot-{os.getpid()}-{secrets.token_hex(8)}"
        else:
            self._dir = tempfile.mkdtemp(prefix="memactors-hot-")  # 0700: this user's processes only
            self.path = os.path.join(self._dir, "owner.sock")
            atexit.register(self.close)
        self._listener = Listener(self.path, family="AF_UNIX", authkey=self.key)
        self.node = _node_id()
        threading.Thread(target=self._accept, name="memactors-hot-accept", daemon=True).start()

    def endpoint(self) -> dict:
        return {"node": self.node, "path": self.path, "key": self.key.hex()}

    def _accept(self) -> None:
        while True:
            try:
                conn = self._listener.accept()  # the key's challenge first: a stranger is refused here
            except OSError:
                return  # closed
            except Exception:  # noqa: BLE001 - a failed handshake (wrong key): keep listening
                continue
            threading.Thread(target=self._handle, args=(conn,), name="memactors-hot-conn", daemon=True).start()

    def _handle(self, conn) -> None:
        with conn:
            while True:
                try:
                    req = orjson.loads(conn.recv_bytes())
                except (EOFError, OSError):
                    return
                except orjson.JSONDecodeError:
                    return  # not ours to guess at: the client falls back
                try:
                    out = self._answer(req)
                except Exception:  # noqa: BLE001 - the client takes the plain path for this one
                    log.exception("a call on the direct path failed")
                    out = {"not_ready": True}
                try:
                    conn.send_bytes(orjson.dumps(out, option=_OPTS))
                except (OSError, ValueError):
                    return

    def _answer(self, req: dict) -> dict:
        if req.get("op") == "write":
            if self._write is None:
                return {"not_ready": True}
            try:
                return {"results": self._write(req["cols"], req["now"])}
            except MemactorsError as exc:  # a refusal (bad input, back pressure): the caller's to see
                return {"raise": errors.encode(exc)}
        if req.get("qvec") is not None:
            req["qvec"] = np.asarray(req["qvec"], dtype=np.float32)
        return self._serve(req)

    def close(self) -> None:
        try:
            self._listener.close()
        finally:
            if self._dir is not None:
                shutil.rmtree(self._dir, ignore_errors=True)


class HotClient:
    """The driver's side, per owner: connects on first use when the owner is on this node; any
    failure means None (the caller makes the plain actor call) and a new try a while later."""

    def __init__(self, owner, timeout_s: float) -> None:
        self.owner = owner
        self.timeout_s = timeout_s
        self.conn = None
        self.lock = threading.Lock()  # one request at a time on a connection
        self.retry_at = 0.0

    def call(self, args: dict) -> dict | None:
        """The owner's answer to a recall, or None when this path is not available now."""
        return self._ask(args)

    def write(self, cols: dict, now: int) -> list | None:
        """``write_batch(cols, now)`` on the owner: its results, its typed refusal raised, or
        None (the path is not available: make the plain call, with the same keys)."""
        out = self._ask({"op": "write", "cols": cols, "now": now})
        if out is None:
            return None
        if "raise" in out:
            raise errors.decode(out["raise"])
        return out["results"]

    def _ask(self, msg: dict) -> dict | None:
        if time.monotonic() < self.retry_at:
            return None
        with self.lock:
            try:
                if self.conn is None and not self._connect():
                    return None
                self.conn.send_bytes(orjson.dumps(msg, option=_OPTS))
                if not self.conn.poll(self.timeout_s):
                    raise TimeoutError("no answer on the direct path")
                out = orjson.loads(self.conn.recv_bytes())
            except Exception:  # noqa: BLE001 - any failure: the plain path now, this one again later
                self._drop()
                self.retry_at = time.monotonic() + RETRY_AFTER_S
                return None
        return None if out.get("not_ready") else out

    def _connect(self) -> bool:
        import ray

        ep = ray.get(self.owner.hot_endpoint.remote(), timeout=self.timeout_s)
        if ep is None or ep["node"] != _node_id():  # another node: the plain call is the path
            self.retry_at = float("inf")
            return False
        self.conn = Client(ep["path"], family="AF_UNIX", authkey=bytes.fromhex(ep["key"]))
        return True

    def _drop(self) -> None:
        if self.conn is not None:
            try:
                self.conn.close()
            except OSError:
                pass
            self.conn = None

    def teardown(self) -> None:
        with self.lock:
            self._drop()
