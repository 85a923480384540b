"""What an owner scores a recall with: hot scopes in memory, cold scopes through Lance.

Hot: a ``HotIndex`` per scope holds the active memories' vectors stacked and a BM25 index of
their ``search_text``; every live memory of the scope is scored exactly (a scope holds
hundreds, not millions). Cold: Lance's pre-filtered vector search and its native full-text
search over ``search_text`` each bring candidates; the union is scored the same way. The
fused score and its absolute component mappings are ``memactors.core.scoring``'s.
"""

from __future__ import annotations

import numpy as np

from ..core import scoring as S
from ..core.versions import ScopeState, entity_key

HIT_FIELDS = ("memory_id", "scope", "content", "subject", "predicate", "object", "version", "pool", "source_kind",
              "confidence", "importance", "created_at", "updated_at")
NO_EXPIRY = np.iinfo(np.int64).max


def hit(rec: dict, score: float, components: dict | None = None, stale: bool = False) -> dict:
    h = {k: rec.get(k) for k in HIT_FIELDS}
    h["score"] = float(score)
    h["components"] = components or {}
    h["stale"] = stale
    return h


def _tokens(rec: dict) -> list[str]:
    st = rec.get("search_text")
    return st.split() if st is not None else S.tokenize(rec["content"])


class HotIndex:
    """One hot scope's active memories, ready to score. Built from one state; a swapped-in
    state makes a new one (states are never edited in place)."""

    __slots__ = ("state", "recs", "mat", "hard", "soft", "updated", "importance", "stale_status", "_kidx", "_pos")

    def __init__(self, state: ScopeState, dim: int) -> None:
        self.state = state
        recs = self.recs = state.active()
        self.mat = np.stack([r["vector"] for r in recs]).astype(np.float32) if recs else np.zeros((0, dim), np.float32)
        self.hard = np.array([r["hard_expires_at"] or NO_EXPIRY for r in recs], dtype=np.int64)
        self.soft = np.array([r["soft_expires_at"] or NO_EXPIRY for r in recs], dtype=np.int64)
        self.updated = np.array([r["updated_at"] for r in recs], dtype=np.float64)
        self.importance = np.array([r["importance"] for r in recs], dtype=np.float64)
        self.stale_status = np.array([r["status"] == "stale" for r in recs], dtype=bool)
        self._kidx: S.KeywordIndex | None = None
        self._pos: dict[str, int] = {}

    def keyword_index(self) -> S.KeywordIndex:
        if self._kidx is None:  # built on first use; one tokenised field per memory
            kidx = S.KeywordIndex()
            for i, r in enumerate(self.recs):
                kidx.add(r["memory_id"], _tokens(r))
                self._pos[r["memory_id"]] = i
            self._kidx = kidx
        return self._kidx

    def score(self, qvec: np.ndarray, qtokens: list[str], now_us: int, weights: S.Weights, m: int) -> list[dict]:
        """The ``m`` best live memories of the scope, plus every live one with an entity key
        (conflict resolution may need it), each with its fused score and components."""
        if not self.recs:
            return []
        bm25 = np.zeros(len(self.recs))
        kidx = self.keyword_index()
        for mid, s in kidx.scores(qtokens).items():
            bm25[self._pos[mid]] = s
        comps = {
            "vector": S.vector_component(self.mat @ qvec),
            "keyword": S.keyword_component(bm25),
            "recency": S.recency_component(self.updated, now_us),
            "importance": S.importance_component(self.importance),
        }
        stale = self.stale_status | (self.soft <= now_us)
        fused = S.fuse(comps, weights, stale)
        live = np.flatnonzero(self.hard > now_us)
        if live.size > m:  # dicts only for what can matter: building one per memory dominated
            best = live[np.argpartition(-fused[live], m - 1)[:m]]
            keyed = [j for j in live if self.recs[j].get("subject") is not None]
            live = np.union1d(best, np.asarray(keyed, dtype=np.int64))
        return [hit(self.recs[j], fused[j], {k: float(v[j]) for k, v in comps.items()}, bool(stale[j])) for j in live]


def score_rows(rows: list[dict], now_us: int, weights: S.Weights) -> list[dict]:
    """Score loose candidates (working pool items, Lance rows) that carry raw ``cosine`` and
    ``bm25`` (missing: 0), with the same mappings as the hot index."""
    return [hit(c, c["score"], c["components"], c["stale"]) for c in S.score_candidates(rows, now_us, weights)]


def rivals_of(cands: list[dict], states: dict[str, ScopeState]) -> list[dict]:
    """Active memories of hot scopes sharing an entity key with a candidate: conflict
    resolution needs them even when they scored below the cut."""
    keys = {entity_key(c) for c in cands if c.get("subject") is not None}
    if not keys:
        return []
    seen = {c["memory_id"] for c in cands}
    out = []
    for st in states.values():
        for key, mid in st.by_entity.items():
            if key in keys and mid not in seen:
                out.append(st.records[mid])
    return out
