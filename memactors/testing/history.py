"""An append-only record of what a workload asked and what it was told (a Jepsen-style history).

One JSON object a line, in a file outside the data folder, so that a crash of the runtime (or
of the driver itself) leaves the record behind for the checker. Every operation is an
``invoke`` line, then at most one completion line with the same ``op_id``:

- ``ok``: acknowledged; for a write its memory id, version, decision and status;
- ``fail``: the call raised (``error`` is the exception's type name). ``definite`` is true only
  when the error promises that nothing was written (a single-item call refused with a
  ValidationError, AccessDenied, BackPressure or NotFound); any other failure leaves the
  operation *indeterminate*: it may or may not have taken effect;
- ``info``: a timeout or a crash the caller noticed: indeterminate as well.

An invoke with no completion (the driver died) is indeterminate too. Invokes are made durable
(written, flushed, fsynced) *before* the operation is sent: a write the ledger holds but the
history never invoked is then a real phantom, never a record lost with a killed driver.

Each process (or thread) appends to its own file; ``read_history`` merges several files in
time order. Timestamps are ``time.time_ns()``: comparable across processes on one machine.

Texts are recorded as a sha256 digest unless ``keep_text=True``: histories are for test
workloads, and a digest of a short text can be guessed, so never record real user data.
"""

from __future__ import annotations

import hashlib
import heapq
import os
import threading
import time
import uuid
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterable, Iterator

import orjson

from ..core.errors import AccessDenied, BackPressure, NotFound, ValidationError
from ..core.scopes import parse_scope

FORMAT = 1
OPS = ("write", "forget", "recall")
TYPES = ("invoke", "ok", "fail", "info")
# Errors that promise nothing was written, when the call carried one item.
_NOTHING_WRITTEN = (ValidationError, AccessDenied, BackPressure, NotFound)


def canonical_scope(scope: Any) -> Any:
    """The scope as the runtime spells it ('/org/a/user/b/'), or the value unchanged if it is not one."""
    try:
        return str(parse_scope(scope))
    except (ValidationError, TypeError):
        return scope


def text_digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def is_definite(exc: BaseException, *, single: bool = True) -> bool:
    """Whether ``exc`` promises that the call wrote nothing (only said of single-item calls:
    a batch spread over several owners may have been written in part)."""
    return single and isinstance(exc, _NOTHING_WRITTEN)


class History:
    """Append-only JSONL recorder for one client.

    ``History(path, client="c1")`` opens ``path`` for appending. Records outside a ``batch()``
    are written and fsynced one by one; inside ``with h.batch():`` they are written and fsynced
    together when the block ends. Leave the batch before sending the operations it invoked.
    Thread-safe; still, give each process its own file.
    """

    def __init__(self, path: str | os.PathLike, client: str | None = None, *, keep_text: bool = False,
                 fsync: bool = True) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.client = client or f"p{os.getpid()}"
        self.keep_text = keep_text
        self._fsync = fsync
        self._session = uuid.uuid4().hex[:8]  # op ids stay unique when a restarted client appends again
        self._n = 0
        self._open: dict[str, str] = {}  # op id -> op, until completed
        self._buf: list[bytes] = []
        self._depth = 0
        self._lock = threading.RLock()
        self._f = open(self.path, "ab")

    # --- plumbing --------------------------------------------------------------------------

    def _emit(self, rec: dict) -> None:
        line = orjson.dumps(rec) + b"\n"
        with self._lock:
            self._buf.append(line)
            if self._depth == 0:
                self._sync()

    def _sync(self) -> None:
        if not self._buf:
            return
        self._f.write(b"".join(self._buf))
        self._buf.clear()
        self._f.flush()
        if self._fsync:
            os.fsync(self._f.fileno())

    @contextmanager
    def batch(self) -> Iterator[History]:
        """Group records: one write and one fsync when the (outermost) block ends."""
        with self._lock:
            self._depth += 1
        try:
            yield self
        finally:
            with self._lock:
                self._depth -= 1
                if self._depth == 0:
                    self._sync()

    def sync(self) -> None:
        with self._lock:
            self._sync()

    def close(self) -> None:
        with self._lock:
            self._sync()
            self._f.close()

    def __enter__(self) -> History:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # --- the four record types -------------------------------------------------------------

    def invoke(self, op: str, **fields: Any) -> str:
        """Record an operation about to be sent; returns its ``op_id``."""
        if op not in OPS:
            raise ValidationError(f"history op must be one of {OPS}")
        with self._lock:
            self._n += 1
            op_id = f"{self.client}:{self._session}:{self._n}"
            self._open[op_id] = op
        self._emit({"type": "invoke", "op": op, "op_id": op_id, "client": self.client, "ts": time.time_ns(),
                    **fields})
        return op_id

    def _complete(self, kind: str, op_id: str, fields: dict) -> None:
        with self._lock:
            op = self._open.pop(op_id, None)
        if op is None:
            raise ValidationError("history: completion for an operation that is not open")
        self._emit({"type": kind, "op": op, "op_id": op_id, "client": self.client, "ts": time.time_ns(), **fields})

    def ok(self, op_id: str, **fields: Any) -> None:
        self._complete("ok", op_id, fields)

    def fail(self, op_id: str, error: BaseException | str, *, definite: bool | None = None,
             single: bool = True) -> None:
        """The call raised. ``definite`` defaults to ``is_definite(error, single=single)``."""
        if definite is None:
            definite = is_definite(error, single=single) if isinstance(error, BaseException) else False
        name = error if isinstance(error, str) else type(error).__name__
        self._complete("fail", op_id, {"error": name, "definite": bool(definite)})

    def info(self, op_id: str, reason: str) -> None:
        """A timeout or crash: the operation stays indeterminate."""
        self._complete("info", op_id, {"reason": reason})

    # --- typed helpers -----------------------------------------------------------------------

    def write_invoke(self, scope: str, text: str, *, actor: str, subject: str | None = None,
                     predicate: str | None = None, object: str | None = None, idempotency_key: str | None = None,
                     pool: str = "vault", source: str = "user_stated", **_: Any) -> str:
        """Takes the arguments of ``rt.write`` (extra ones are ignored)."""
        fields = {"scope": canonical_scope(scope), "actor": actor, "subject": subject, "predicate": predicate,
                  "object": object, "idempotency_key": idempotency_key, "pool": pool, "source": source,
                  "text_sha256": text_digest(text)}
        if self.keep_text:
            fields["text"] = text
        return self.invoke("write", **fields)

    def write_ok(self, op_id: str, result: Any) -> None:
        """``result``: a WriteResult or its ``to_dict()``."""
        d = result.to_dict() if hasattr(result, "to_dict") else dict(result)
        self.ok(op_id, **{k: d.get(k) for k in ("memory_id", "version", "decision", "status", "supersedes",
                                                "scope")})

    def forget_invoke(self, memory_id: str, *, actor: str) -> str:
        return self.invoke("forget", memory_id=memory_id, actor=actor)

    def forget_ok(self, op_id: str, result: dict) -> None:
        self.ok(op_id, memory_id=result.get("memory_id"), decision=result.get("decision"),
                scope=canonical_scope(result.get("scope")))

    def recall_invoke(self, scopes: list[str], *, actor: str, query: str) -> str:
        return self.invoke("recall", scopes=[canonical_scope(s) for s in scopes], actor=actor,
                           query_sha256=text_digest(query))

    def recall_ok(self, op_id: str, result: Any) -> None:
        """``result``: a RecallResult (or a dict with ``hits``)."""
        hits = result.hits if hasattr(result, "hits") else result["hits"]
        self.ok(op_id, hits=[{"memory_id": _get(h, "memory_id"), "scope": _get(h, "scope"),
                              "version": _get(h, "version")} for h in hits])


def _get(obj: Any, key: str) -> Any:
    return obj[key] if isinstance(obj, dict) else getattr(obj, key)


# --- reading --------------------------------------------------------------------------------


def _files(paths: Iterable[str | os.PathLike]) -> list[Path]:
    out: list[Path] = []
    for p in paths:
        p = Path(p)
        out += sorted(p.glob("*.jsonl")) if p.is_dir() else [p]
    return out


def read_history(*paths: str | os.PathLike) -> list[dict]:
    """The events of one or more history files (or folders of ``*.jsonl``), merged by time;
    each file keeps its own order (a clock step back never reorders one client's events). A
    torn last line (the writer was killed mid-line) is dropped; a bad line elsewhere raises
    ValidationError naming the file and line number."""
    per_file = []
    for path in _files(paths):
        lines = path.read_bytes().split(b"\n")
        events = []
        for li, line in enumerate(lines):
            if not line.strip():
                continue
            try:
                ev = orjson.loads(line)
                if not isinstance(ev, dict) or ev.get("type") not in TYPES or "op_id" not in ev:
                    raise ValueError
            except ValueError:
                if li == len(lines) - 1:  # no newline after it: torn by a crash mid-write
                    break
                raise ValidationError(f"history {path}: line {li + 1} is not a history event") from None
            events.append(ev)
        per_file.append(events)
    return list(heapq.merge(*per_file, key=lambda ev: int(ev.get("ts", 0))))
