"""The ungoverned baseline: LangGraph's ``SqliteStore`` (``[bench]`` extra) with the same hash
embedder memactors uses by default, driven the way a plain agent app drives it.

- A scope maps to a namespace of its segments plus a final ``"mem"`` label
  (``/org/a/user/u/`` -> ``("org", "a", "user", "u", "mem")``), so a prefix search of one scope
  never reaches its task scopes; a recall searches each allowed scope and its ancestors (the
  visibility memactors gives) and merges the hits by score.
- ``Observe`` -> ``put`` under a fresh key (an agent app appends memories); whatever arrives is
  stored: secrets, injected instructions, writes into other users' scopes. No TTL is set.
- ``Recall`` -> ``search`` with the query (vector search over the memory text).
- ``Forget`` -> ``search`` with a filter on subject and predicate, then ``delete`` of each key found.
Writes go in ``batch`` calls of ``PutOp`` (1,000 a call), searches in ``batch`` calls of ``SearchOp``:
LangGraph's batched path.
"""

from __future__ import annotations

import importlib
import os
import shutil
import tempfile
from collections.abc import Sequence

from .actions import Action, Forget, Observe, Recall
from .backend import TickResult, error_string, register_backend, visible_scopes

EXTRA_HINT = "pip install 'memactors[sim]'"
FORGET_SCAN_LIMIT = 10_000  # most memories one forget looks through in a scope
CHUNK = 1_000  # ops per batch() call: one multi-row INSERT of many more would pass SQLite's variable limit


def _sqlite_module():
    """A sqlite3 module that can load sqlite-vec: a Python built without loadable extensions
    (pyenv's default) needs pysqlite3-binary, which the [bench] extra pins."""
    import sqlite3

    if hasattr(sqlite3.Connection, "enable_load_extension"):
        return sqlite3
    try:
        return importlib.import_module("pysqlite3.dbapi2")
    except ImportError:
        raise ImportError("this Python's sqlite3 cannot load extensions and pysqlite3-binary is missing: "
                          + EXTRA_HINT) from None


def namespace(scope: str) -> tuple[str, ...]:
    """The namespace of a scope; LangGraph refuses labels with a '.' (ValueError)."""
    labels = tuple(s for s in scope.split("/") if s) + ("mem",)
    if any("." in s for s in labels):
        raise ValueError("LangGraph namespaces cannot hold an identifier with a '.'")
    return labels


class SqliteStoreBackend:
    """LangGraph ``SqliteStore`` on a file in ``path`` (a temporary folder if None, removed at
    close). Ungoverned: ``governed = False``, its counters are reported, never fatal."""

    governed = False

    def __init__(self, path: str | None = None, *, name: str = "langgraph-sqlite", dim: int = 384) -> None:
        self.name, self.dim = name, dim
        self._own_dir = path is None
        self.path = path
        self._store = self._conn = None
        self._n = 0
        self._written: set[tuple[str, ...]] = set()

    def setup(self, world) -> None:
        try:
            from langgraph.store.base import PutOp, SearchOp
            from langgraph.store.sqlite import SqliteStore
        except ImportError as e:
            raise ImportError(f"the LangGraph baseline needs langgraph-checkpoint-sqlite ({e.name} is missing): "
                              + EXTRA_HINT) from None
        from ..embed import HashEmbedder

        sqlite = _sqlite_module()
        self._PutOp, self._SearchOp = PutOp, SearchOp
        if self._own_dir:
            self.path = tempfile.mkdtemp(prefix="memactors-sim-sqlite-")
        os.makedirs(self.path, exist_ok=True)
        embedder = HashEmbedder(self.dim)
        index = {"dims": self.dim, "embed": lambda texts: embedder.embed(list(texts)).tolist(),
                 "fields": ["text"], "text_fields": ["text"]}
        # The settings of SqliteStore.from_conn_string, on a file as in real use.
        self._conn = sqlite.connect(os.path.join(self.path, "store.sqlite"), check_same_thread=False,
                                    isolation_level=None)
        self._store = SqliteStore(self._conn, index=index)
        self._store.setup()

    def apply(self, tick: int, now_us: int, actions: Sequence[Action]) -> TickResult:
        res = TickResult()
        puts = []
        for i, a in enumerate(actions):
            if isinstance(a, Observe):
                try:
                    ns = namespace(a.scope)
                except ValueError as e:
                    res.errors[i] = error_string(e)
                    continue
                self._n += 1
                puts.append(self._PutOp(ns, f"{tick}-{self._n}", {
                    "text": a.text, "scope": a.scope, "subject": a.subject, "predicate": a.predicate,
                    "object": a.object, "source": a.source, "agent": a.agent}))
                self._written.add(ns)
        self._batch(puts)
        searches, owners = [], []
        for i, a in enumerate(actions):
            if isinstance(a, Recall):
                try:
                    nss = [namespace(s) for s in visible_scopes(a.allowed_scopes)]
                except ValueError as e:
                    res.errors[i] = error_string(e)
                    continue
                for ns in nss:
                    if ns not in self._written:
                        continue  # a namespace never written to (``/global/``, say) has nothing to find
                    searches.append(self._SearchOp(ns, query=a.query, limit=a.top_k))
                    owners.append(i)
        if searches:
            merged: dict[int, list] = {}
            for i, items in zip(owners, self._batch(searches)):
                merged.setdefault(i, []).extend(items)
            for i, items in merged.items():  # recalls whose namespaces are all empty get no entry: no hits
                items.sort(key=lambda it: -(it.score or 0.0))
                res.hits[i] = [_hit(it) for it in items[:actions[i].top_k]]
        self._forget(actions, res)
        return res

    def _forget(self, actions: Sequence[Action], res: TickResult) -> None:
        finds, owners = [], []
        for i, a in enumerate(actions):
            if isinstance(a, Forget):
                try:
                    ns = namespace(a.scope)
                except ValueError as e:
                    res.errors[i] = error_string(e)
                    continue
                finds.append(self._SearchOp(ns, filter={"subject": a.subject, "predicate": a.predicate},
                                            limit=FORGET_SCAN_LIMIT))
                owners.append(i)
        if not finds:
            return
        deletes = [self._PutOp(tuple(it.namespace), it.key, None) for items in self._batch(finds) for it in items]
        self._batch(deletes)
        res.info["forgotten"] = len(deletes)

    def _batch(self, ops: list) -> list:
        out: list = []
        for start in range(0, len(ops), CHUNK):
            out += self._store.batch(ops[start:start + CHUNK])
        return out

    def sweep(self, now_us: int) -> dict | None:
        return None  # no TTL configured: the plain store keeps everything until deleted

    def storage_paths(self) -> list[str]:
        return [self.path] if self.path else []

    def counts(self) -> dict[str, dict[str, int]]:
        if self._conn is None:
            return {}
        (n,) = self._conn.execute("SELECT COUNT(*) FROM store").fetchone()
        return {"store": {"stored": int(n)}}

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = self._store = None
        if self._own_dir and self.path:
            shutil.rmtree(self.path, ignore_errors=True)
            self.path = None


def _hit(it) -> dict:
    v = it.value
    return {"memory_id": "/".join(it.namespace) + ":" + it.key, "scope": v.get("scope"), "content": v.get("text", ""),
            "subject": v.get("subject"), "predicate": v.get("predicate"), "object": v.get("object"),
            "score": float(it.score) if it.score is not None else None}


register_backend("langgraph-sqlite", lambda workdir: SqliteStoreBackend(workdir))
