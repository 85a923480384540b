"""A search's score as LangGraph's backends give it: the cosine similarity of the query to the
item's best-matching indexed field text (one text per field path; ``"$"``, the default, is the
whole value as JSON). Which items a search returns is the governed recall's choice; this says
how similar each is, and the store orders them by it.

The vectors come from the store's embedder (``IndexConfig["embed"]``, else the runtime's),
each field text embedded once (a bounded cache): the runtime's own vector is of the whole
record, which is what recall ranks by but not what LangGraph reports.
"""

from __future__ import annotations

import numpy as np

from . import mapping as M

CACHE_TEXTS = 10_000  # field texts' vectors kept (float32: 15 MB at 384 dimensions); past it the cache starts again


class FieldScores:
    def __init__(self, embed, default_fields: list[str] | None, runtime_embedder) -> None:
        self._embed = embed  # LangChain Embeddings, a function of a list of texts, or None
        self._fields = default_fields
        self._runtime = runtime_embedder
        self._vecs: dict[str, np.ndarray] = {}

    def of(self, query: str, hits: list) -> list[float]:
        """One score per ``(hit, item)`` of a query search."""
        if not hits:
            return []
        texts = [M.field_texts(d["value"], d.get("fields") or self._fields) for _, d in hits]
        q = self._learn({t for ts in texts for t in ts}, query)
        return [max((float(self._vecs[t] @ q) for t in ts), default=0.0) for ts in texts]

    def _learn(self, texts: set[str], query: str) -> np.ndarray:
        """Embed the texts not yet known, and the query (in the same call unless the embedder
        has a query embedding of its own, as LangChain's ``embed_query``): its unit vector."""
        new = [t for t in texts if t not in self._vecs]
        if len(self._vecs) + len(new) > CACHE_TEXTS:
            self._vecs.clear()
            new = list(texts)
        own_query = self._embed is not None and hasattr(self._embed, "embed_query")
        vecs = _units(self._documents(new if own_query else [query, *new]))
        if own_query:
            q = _units([self._embed.embed_query(query)])[0]
        else:
            q, vecs = vecs[0], vecs[1:]
        self._vecs.update(zip(new, vecs.astype(np.float32)))
        return q

    def _documents(self, texts: list[str]):
        if not texts:
            return []
        if self._embed is None:
            return self._runtime.embed(texts)
        return getattr(self._embed, "embed_documents", self._embed)(texts)


def _units(vs) -> np.ndarray:
    """Rows scaled to unit length (a zero row stays zero): cosines are then dot products."""
    m = np.asarray(vs, dtype=np.float64).reshape(len(vs), -1) if len(vs) else np.zeros((0, 1))
    n = np.linalg.norm(m, axis=1, keepdims=True)
    return m / np.where(n == 0, 1.0, n)
