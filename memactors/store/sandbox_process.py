"""audit.sql's queries in a process of their own, under an address-space limit
(``SandboxProcess``; the sandbox itself is ``memactors.store.sandbox``).

DuckDB does not count every allocation against its ``memory_limit``: a string function's output
is not (``repeat('x', 5e7)`` over one vector of 2,048 rows asks for ~100 GB at once), and in the
ledger's own process (the ledger writer, or the caller's process on the process host) such a
query would end it. In the worker the allocation fails at ``ADDRESS_SPACE``, DuckDB reports it,
and the query is refused (InvalidRecord); a worker that dies anyway is started again for the
next query, and the one that killed it is refused too.

Protocol: the parent writes a length-prefixed pickle of (query, params, tables) to the worker's
stdin; the worker answers on a descriptor of its own (DuckDB may print to stdout) with
("ok", rows) or ("err", message). The worker exits at its stdin's end (its parent gone).
"""

from __future__ import annotations

import os
import pickle
import select
import struct
import subprocess
import sys
import threading
import time

from ..core.errors import InvalidRecord
from . import sandbox

ADDRESS_SPACE = 4 << 30  # the worker's: DuckDB's 1 GB, a result's 256 MiB, Python and the tables' copies
WAIT_S = sandbox.TIMEOUT_S + 15.0  # the query interrupts itself at TIMEOUT_S; past this the worker is stuck
_LEN = struct.Struct("<Q")
_GONE = ("audit.sql: the query needed more memory or time than a query may use (its sandbox process ended); "
         "select fewer rows or columns, or aggregate")


class SandboxProcess:
    """One worker process, started on first use and again after it dies; one query at a time."""

    def __init__(self) -> None:
        self._proc: subprocess.Popen | None = None
        self._lock = threading.Lock()

    def run(self, query: str, params: list | None, tables: dict) -> list[tuple]:
        sandbox.check_select(query)  # refused here, before anything is sent
        if params is not None and not isinstance(params, (list, tuple)):
            raise InvalidRecord("audit.sql params must be a list")
        try:
            blob = pickle.dumps((query, None if params is None else list(params), tables), protocol=5)
        except Exception:  # noqa: BLE001 - an object a parameter cannot be
            raise InvalidRecord("audit.sql params are plain values (numbers, text, bytes, None)") from None
        with self._lock:
            for fresh in (False, True):
                proc = self._started()
                try:
                    proc.stdin.write(_LEN.pack(len(blob)) + blob)
                    proc.stdin.flush()
                except OSError:  # gone before this query (killed between two): once more, in a new one
                    self._stop()
                    if fresh:
                        raise InvalidRecord(_GONE) from None
                    continue
                try:
                    kind, value = pickle.loads(_read(proc.stdout, time.monotonic() + WAIT_S))
                except (OSError, EOFError, TimeoutError, pickle.UnpicklingError, ValueError):
                    self._stop()  # ended (or stuck) by this query: refused, never run again
                    raise InvalidRecord(_GONE) from None
                break
        if kind == "ok":
            return value
        raise InvalidRecord(value)

    def close(self) -> None:
        with self._lock:
            self._stop()

    def _started(self) -> subprocess.Popen:
        if self._proc is not None and self._proc.poll() is None:
            return self._proc
        self._stop()
        root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH")) if p))
        self._proc = subprocess.Popen([sys.executable, "-m", "memactors.store.sandbox_process", str(ADDRESS_SPACE)],
                                      stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                      env=env, close_fds=True)
        return self._proc

    def _stop(self) -> None:
        proc, self._proc = self._proc, None
        if proc is not None:
            for f in (proc.stdin, proc.stdout):
                try:
                    f.close()
                except OSError:
                    pass
            proc.kill()
            proc.wait()


def _read(f, deadline: float) -> bytes:
    """One length-prefixed message from ``f`` before ``deadline`` (TimeoutError, EOFError)."""
    fd, buf, need = f.fileno(), bytearray(), None
    while need is None or len(buf) < need:
        if need is None and len(buf) >= _LEN.size:
            need = _LEN.size + _LEN.unpack_from(buf)[0]
            continue
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            raise TimeoutError
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            raise EOFError
        buf += chunk
    return bytes(buf[_LEN.size:need])


def _serve(limit: int) -> None:
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(os.open(os.devnull, os.O_WRONLY), 1)  # whatever DuckDB prints goes nowhere, not into replies
    inp = sys.stdin.buffer
    while True:
        head = inp.read(_LEN.size)
        if len(head) < _LEN.size:
            return  # the parent is gone
        query, params, tables = pickle.loads(inp.read(_LEN.unpack(head)[0]))
        try:
            reply = ("ok", sandbox.run_select(query, params, tables))
        except InvalidRecord as exc:
            reply = ("err", str(exc))
        except MemoryError:
            reply = ("err", "audit.sql: it needs more memory than a query may use")
        except Exception as exc:  # noqa: BLE001 - named, never quoted: a message may hold the query
            reply = ("err", f"audit.sql: the query failed ({type(exc).__name__})")
        try:
            data = pickle.dumps(reply, protocol=5)
        except MemoryError:
            data = pickle.dumps(("err", "audit.sql: its result needs more memory than a query may use"))
        out.write(_LEN.pack(len(data)) + data)
        out.flush()


if __name__ == "__main__":
    _serve(int(sys.argv[1]))
