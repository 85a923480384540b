"""The vectors of recent queries: a recall and what follows it for the same query (the
LangGraph store's scores) embed it once. Keyed by a digest of the query as the caller wrote it
(no query text kept); the vector is always of the text the gate left. Small and bounded."""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict

import numpy as np

KEEP = 256


class QueryVectors:
    def __init__(self, embedder, gated, keep: int = KEEP) -> None:
        self._embedder = embedder
        self._gated = gated  # query -> the text the gate leaves of it
        self._keep = keep
        self._vecs: OrderedDict[bytes, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    def many(self, queries: list[str], texts: list[str] | None = None) -> list[np.ndarray]:
        """The vectors of ``queries``' gated texts (``texts``, when the caller has them already);
        the ones not kept are embedded in one call."""
        keys = [hashlib.blake2b(q.encode("utf-8", "surrogatepass"), digest_size=16).digest() for q in queries]
        with self._lock:
            found = [self._vecs.get(k) for k in keys]
            for k, v in zip(keys, found):
                if v is not None:
                    self._vecs.move_to_end(k)
        missing = [i for i, v in enumerate(found) if v is None]
        if missing:
            todo = [texts[i] if texts is not None else self._gated(queries[i]) for i in missing]
            for i, v in zip(missing, self._embedder.embed(todo)):
                found[i] = v
            with self._lock:
                for i in missing:
                    self._vecs[keys[i]] = found[i]
                while len(self._vecs) > self._keep:
                    self._vecs.popitem(last=False)
        return found
