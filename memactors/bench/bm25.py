"""The BM25 baseline over the same turns, one index per conversation (its scope).

``bm25s`` (the ``[bench]`` extra) when it is installed: English stop words, no stemming, its
default Lucene BM25 (k1=1.5, b=0.75). Without it, the project's own pure BM25
(``memactors.core.scoring.KeywordIndex``, k1=1.2, b=0.75) stands in, and the report says so.
Documents with a zero score (no query term in common) are not returned.
"""

from __future__ import annotations

import numpy as np

from ..core import scoring


def _bm25s():
    try:
        import bm25s
    except ImportError:
        return None
    return bm25s


def implementation() -> str:
    mod = _bm25s()
    return f"bm25s {mod.__version__}" if mod is not None else "memactors KeywordIndex (bm25s not installed)"


def rank(docs: list[str], queries: list[str], k: int) -> list[list[tuple[int, float]]]:
    """For each query, up to ``k`` (document index, BM25 score), best first, scores > 0."""
    if not docs or not queries:
        return [[] for _ in queries]
    k = min(k, len(docs))
    mod = _bm25s()
    if mod is None:
        ix = scoring.KeywordIndex()
        for i, d in enumerate(docs):
            ix.add(str(i), scoring.tokenize(d))
        return [[(int(d), s) for d, s in ix.top(scoring.tokenize(q), k)] for q in queries]
    retriever = mod.BM25()
    retriever.index(mod.tokenize(docs, stopwords="en", show_progress=False), show_progress=False)
    # Queries as strings: words unseen in the corpus simply score nothing.
    qtok = mod.tokenize(queries, stopwords="en", show_progress=False, return_ids=False)
    idx, sc = retriever.retrieve(qtok, k=k, show_progress=False, n_threads=0)
    return [[(int(i), float(s)) for i, s in zip(row, srow) if s > 0]
            for row, srow in zip(np.asarray(idx), np.asarray(sc))]
