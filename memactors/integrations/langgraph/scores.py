"""A search's score as LangGraph's backends give it: the cosine similarity of the query to the
item's best-matching indexed field text (one text per field path; ``"$"``, the default, is the
whole value as JSON). Which items a search returns is the governed recall's choice; this says
how similar each is, and the store orders them by it.

The vectors come from the store's embedder (``IndexConfig["embed"]``, else the runtime's),
each field text embedded once (a bounded cache); the query is the text the gate left of it,
and with the runtime's embedder its vector is the one the recall made. With the runtime's
embedder a put whose value has one indexed text is written with that text as its ``embed_text``
(its vector is of it, and marked ``embedded`` in the item), so the recall's similarity is its
score; for any other item (several texts, or another embedder) each text is embedded here.
"""

from __future__ import annotations

import numpy as np

from . import mapping as M
from .embed import wraps

CACHE_TEXTS = 10_000  # field texts' vectors kept (float32: 15 MB at 384 dimensions); past it the cache starts again


class FieldScores:
    def __init__(self, rt, index: dict | None) -> None:
        embed = (index or {}).get("embed")
        runtime = rt.embedder
        # With the runtime's embedder, a record written with one indexed text has its vector
        # made of that text (``embed_text``): the recall's similarity is the score already.
        self.runtime = embed is None or wraps(runtime, embed)
        if self.runtime:
            self._documents = runtime.embed
            self._query = lambda q: rt._query_vectors.many([q])[0]
        else:  # an embedder of the store's own, beside the runtime's
            docs = getattr(embed, "embed_documents", embed)
            ask = getattr(embed, "embed_query", None) or (lambda t: docs([t])[0])
            self._documents = docs
            self._query = lambda q: ask(rt.gate.redact_all(q))
        self._fields = M.index_fields(index)
        self._vecs: dict[str, np.ndarray] = {}

    def of(self, query: str, hits: list) -> list[float]:
        """One score per ``(hit, item)`` of a query search."""
        known = [h.similarity if self.runtime and d.get("embedded") else None for h, d in hits]
        rest = [i for i, s in enumerate(known) if s is None]
        if not rest:
            return known
        texts = [M.field_texts(hits[i][1]["value"], hits[i][1].get("fields") or self._fields) for i in rest]
        self._learn({t for ts in texts for t in ts})
        q = _units([self._query(query)])[0]
        for i, ts in zip(rest, texts):
            known[i] = max((float(self._vecs[t] @ q) for t in ts), default=0.0)
        return known

    def embed_text(self, texts: list[str]) -> str | None:
        """The text a put's record is embedded from, when its vector can be its score: the
        value's one indexed text (of ``texts``, its ``field_texts``), with the runtime's
        embedder (None: the record's own text)."""
        return texts[0] if self.runtime and len(texts) == 1 and texts[0] else None

    def _learn(self, texts: set[str]) -> None:
        new = [t for t in texts if t not in self._vecs]
        if not new:
            return
        if len(self._vecs) + len(new) > CACHE_TEXTS:
            self._vecs.clear()
            new = list(texts)
        self._vecs.update(zip(new, _units(self._documents(new)).astype(np.float32)))


def _units(vs) -> np.ndarray:
    """Rows scaled to unit length (a zero row stays zero): cosines are then dot products."""
    m = np.asarray(vs, dtype=np.float64).reshape(len(vs), -1)
    n = np.linalg.norm(m, axis=1, keepdims=True)
    return m / np.where(n == 0, 1.0, n)
