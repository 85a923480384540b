"""Recall scoring (DESIGN section 5): the fused score, its components, and conflict resolution.

Pure: functions over plain dicts and NumPy arrays; no I/O, no Ray.

    relevance = a*vector + b*keyword + c*recency + d*importance
    score     = relevance (x STALE_FACTOR when stale)

The relevance threshold judges ``relevance``; ``score`` ranks. A stale memory (soft-expired, or
marked stale) asked for in its own words still passes the threshold and comes back, flagged,
below equally relevant fresh ones.

Every component is mapped to [0, 1] by a fixed, *absolute* function of one candidate's own raw
values (never min-max over a query's candidates, never statistics of a corpus), so a score
means the same for every query and on every path (an owner's hot index, Lance, the working
pool, an ``as_of`` fold, L3 results), and one relevance threshold can serve them all:

- vector:     ``max(0, cos)``: cosine of unit vectors lies in [-1, 1]; anti-correlated is as
  irrelevant as orthogonal, so negatives clip to 0.
- keyword:    the weighted share of the query's terms the memory's ``search_text`` holds
  (``QueryTerms``): 1 when it holds them all (an exact-text match, in a scope of any size),
  0 for none. A term weighs ``ln(1 + length)`` (longer words are rarer; a CJK character
  counts two), common words weigh nothing. No corpus statistics: BM25's IDF made an exact
  match in a scope of one memory score 0.15, and differed between the hot index and Lance.
- recency:    ``0.5 ** (age_days / half_life_days)`` of ``now - updated_at``: 1 when just
  written or refreshed, 0.5 one half-life later; a future ``updated_at`` (clock skew) is 1.
- importance: as stored (float32, 0..1), clipped.

Weights are normalised to sum to 1, so the fused score stays in [0, 1] whatever weights a
grid tries, and thresholds stay comparable across weight settings.
"""

from __future__ import annotations

import math
import numbers
import re
import unicodedata
from collections import Counter
from dataclasses import dataclass
from datetime import datetime

import numpy as np

from .errors import InvalidRecord
from .scopes import parse_scope

US_PER_DAY = 86_400_000_000
STALE_FACTOR = 0.5
HALF_LIFE_DAYS = 30.0
BM25_K1 = 1.2
BM25_B = 0.75
COMPONENTS = ("vector", "keyword", "recency", "importance")


@dataclass(frozen=True, slots=True)
class Weights:
    vector: float = 0.4
    keyword: float = 0.3
    recency: float = 0.2
    importance: float = 0.1

    def __post_init__(self) -> None:
        for name, v in zip(COMPONENTS, self.as_tuple()):
            _weight(v, name)
        total = sum(self.as_tuple())
        if not total > 0:
            raise InvalidRecord("weights must not all be zero")
        if not math.isfinite(total):  # [1e308] * 4: each finite, the sum is not, normalising gives NaN
            raise InvalidRecord("weights are too large: their sum must be a finite number")

    def as_tuple(self) -> tuple[float, float, float, float]:
        return (self.vector, self.keyword, self.recency, self.importance)

    def normalised(self) -> Weights:
        s = sum(self.as_tuple())
        return Weights(*(v / s for v in self.as_tuple()))

    @classmethod
    def parse(cls, value: Weights | dict | tuple | list | str) -> Weights:
        """From a Weights, a dict by component name (the others keep their defaults), 4 numbers
        (a list, tuple or 1-d array), or a string "0.4/0.3/0.2/0.1". Raises InvalidRecord (a
        ValueError) for anything else, describing it without echoing it."""
        if isinstance(value, Weights):
            return value
        if type(value) in (tuple, list) and len(value) == 4 and all(type(v) is float for v in value):
            key = tuple(value)  # 4 plain floats (the config's, a request's wire form): parsed once
            hit = _PARSED.get(key)
            if hit is None:
                hit = cls(*(_weight(v, name) for v, name in zip(key, COMPONENTS)))
                if len(_PARSED) >= 1024:
                    _PARSED.clear()
                _PARSED[key] = hit
            return hit
        if isinstance(value, dict):
            unknown = [k for k in value if not (isinstance(k, str) and k in COMPONENTS)]
            if unknown:
                raise InvalidRecord(f"weights has {len(unknown)} unknown component name(s); known: {', '.join(COMPONENTS)}")
            return cls(**{k: _weight(v, k) for k, v in value.items()})
        if isinstance(value, str):
            if len(value) > 200:
                raise InvalidRecord(f"weights as a string must be short, like 0.4/0.3/0.2/0.1, not {len(value)} characters")
            parts = [p for p in re.split(r"[/,\s]+", value.strip()) if p]
            if len(parts) != 4:
                raise InvalidRecord(f"weights need 4 numbers: vector/keyword/recency/importance, not {len(parts)}")
            return cls(*(_weight_str(p, name) for p, name in zip(parts, COMPONENTS)))
        if isinstance(value, np.ndarray) and value.ndim == 1:
            value = value.tolist()
        if not isinstance(value, (list, tuple)):
            raise InvalidRecord(f"weights must be 4 numbers, a dict by component or a string like 0.4/0.3/0.2/0.1, "
                                f"not {type(value).__name__}")
        if len(value) != 4:
            raise InvalidRecord(f"weights need 4 numbers: vector/keyword/recency/importance, not {len(value)}")
        return cls(*(_weight(v, name) for v, name in zip(value, COMPONENTS)))

    def label(self) -> str:
        return "/".join(f"{v:g}" for v in self.as_tuple())


def _weight(v: object, name: str) -> float:
    """One weight: a finite non-negative real number (not a bool, not a string), as a float."""
    if isinstance(v, bool) or not isinstance(v, numbers.Real):
        raise InvalidRecord(f"weight {name} must be a number, not {type(v).__name__}")
    try:
        f = float(v)
    except (OverflowError, ValueError, TypeError):
        raise InvalidRecord(f"weight {name} is too large") from None
    if not math.isfinite(f) or f < 0:
        raise InvalidRecord(f"weight {name} must be a non-negative finite number")
    return f


def _weight_str(part: str, name: str) -> float:
    try:
        f = float(part)
    except ValueError:
        raise InvalidRecord(f"weight {name} in the weights string is not a number") from None
    return _weight(f, name)


DEFAULT_WEIGHTS = Weights()
_PARSED: dict[tuple, Weights] = {}  # Weights.parse's memo of 4-float tuples (Weights is frozen)


# --- components ------------------------------------------------------------------------------


def cosines(vecs, q) -> np.ndarray:
    """Each row of ``vecs`` (unit float32 vectors) dotted with ``q``, one row at a time
    (``np.vecdot``): BLAS's matrix-vector product rounds a row's last bit by its position in
    the matrix, so equal scores ranked apart in a hot index and in a scan of the same rows.
    Row by row, a memory's cosine is the same wherever it is computed (as fast as ``@`` here)."""
    return np.vecdot(np.asarray(vecs, dtype=np.float32), np.asarray(q, dtype=np.float32))


def vector_component(cosine) -> np.ndarray:
    """Cosine in [-1, 1] -> [0, 1] as max(0, cos)."""
    return _clip01(np.asarray(cosine, dtype=np.float64))


def keyword_component(keyword) -> np.ndarray:
    """The keyword share (``QueryTerms.score``), already in [0, 1], clipped."""
    return _clip01(np.asarray(keyword, dtype=np.float64))


def recency_component(updated_at_us, now_us: int, half_life_days: float = HALF_LIFE_DAYS) -> np.ndarray:
    """Exponential decay with a half-life in days from ``updated_at`` (microseconds) to now."""
    age_days = np.maximum(now_us - np.asarray(updated_at_us, dtype=np.float64), 0.0) / US_PER_DAY
    return np.power(0.5, age_days / half_life_days)


def importance_component(importance) -> np.ndarray:
    # As stored (float32): a record fresh in memory (0.7) and its Lance row (0.699999988) agree.
    return _clip01(np.asarray(importance, dtype=np.float32).astype(np.float64))


def _clip01(x: np.ndarray) -> np.ndarray:
    """``np.clip(x, 0, 1)`` as two ufuncs (NaN stays NaN): np.clip's wrapper cost more than the
    arithmetic on a hot scope's few dozen rows, once per component per recall."""
    return np.minimum(np.maximum(x, 0.0), 1.0)


def fuse(components: dict[str, np.ndarray], weights: Weights = DEFAULT_WEIGHTS, stale=None) -> np.ndarray:
    """The fused score of mapped components (missing ones count 0), x STALE_FACTOR where stale."""
    raw = weights.as_tuple()
    total = sum(raw)  # normalised as ``Weights.normalised`` does, without checking them again per call
    n = len(next(iter(components.values()))) if components else 0
    out = np.zeros(n, dtype=np.float64)
    for name, wv in zip(COMPONENTS, raw):
        if wv and name in components:
            out += (wv / total) * np.asarray(components[name], dtype=np.float64)
    if stale is not None:
        out = np.where(np.asarray(stale, dtype=bool), out * STALE_FACTOR, out)
    return out


def _us(v) -> float:
    if v is None:
        return float("nan")
    if isinstance(v, datetime):
        return v.timestamp() * 1e6
    return float(v)


def is_stale(rec: dict, now_us: int) -> bool:
    """Stale: marked so by lifecycle, or past its soft expiry."""
    soft = rec.get("soft_expires_at")
    return rec.get("status") == "stale" or (soft is not None and _us(soft) <= now_us)


def score_arrays(cosine, keyword, updated_at_us, importance, stale, now_us: int, weights: Weights = DEFAULT_WEIGHTS,
                 *, half_life_days: float = HALF_LIFE_DAYS) -> tuple[np.ndarray, dict[str, np.ndarray], np.ndarray]:
    """The one scoring function: raw values as arrays in (``keyword``: ``QueryTerms.score``
    shares), ``(scores, mapped components, relevances)`` out. Hot, working-pool, cold, as-of and
    L3 candidates all come through here. ``relevances`` are the fused scores the threshold
    judges; ``scores`` rank, ``stale`` ones down-weighted (x STALE_FACTOR), never dropped. A
    missing ``updated_at`` (NaN) has recency 0."""
    return score_with(cosine, keyword, fixed_terms(updated_at_us, importance, now_us, weights, half_life_days),
                      stale, weights)


def fixed_terms(updated_at_us, importance, now_us: int, weights: Weights = DEFAULT_WEIGHTS,
                half_life_days: float = HALF_LIFE_DAYS) -> tuple:
    """What ``score_arrays`` computes of the rows and the time alone, whatever the query: the
    recency and importance components and their weighted terms of the fused score (None: weight
    0). A hot index keeps them while its recalls ask at one time (a simulated tick's do)."""
    recency = _nan_to_0(recency_component(updated_at_us, now_us, half_life_days))
    importance = importance_component(importance)
    shares = _shares(weights)
    return (recency, importance, None if shares[2] is None else shares[2] * recency,
            None if shares[3] is None else shares[3] * importance)


def score_with(cosine, keyword, fixed: tuple, stale, weights: Weights = DEFAULT_WEIGHTS
               ) -> tuple[np.ndarray, dict[str, np.ndarray], np.ndarray]:
    """``score_arrays`` given its ``fixed_terms`` (of the same weights): the same floats, ``fuse``'s
    additions in its order, half the numpy calls (a hot scope holds a few dozen rows: the calls,
    not the arithmetic, were the cost)."""
    recency, importance, w_recency, w_importance = fixed
    vector, kw = vector_component(cosine), keyword_component(keyword)
    shares = _shares(weights)
    relevance = np.zeros(len(vector), dtype=np.float64)
    if shares[0] is not None:
        relevance += shares[0] * vector
    if shares[1] is not None:
        relevance += shares[1] * kw
    if w_recency is not None:
        relevance += w_recency
    if w_importance is not None:
        relevance += w_importance
    comps = {"vector": vector, "keyword": kw, "recency": recency, "importance": importance}
    stale = np.asarray(stale, dtype=bool)
    return np.where(stale, relevance * STALE_FACTOR, relevance), comps, relevance


def _shares(weights: Weights) -> tuple:
    """Each weight over their sum as ``fuse`` scales it (None: a weight of 0, which ``fuse``
    skips), memoised per weights."""
    got = _SHARES.get(weights)
    if got is None:
        raw = weights.as_tuple()
        total = sum(raw)
        got = tuple((wv / total) if wv else None for wv in raw)
        if len(_SHARES) >= 1024:
            _SHARES.clear()
        _SHARES[weights] = got
    return got


_SHARES: dict = {}


def _nan_to_0(x: np.ndarray) -> np.ndarray:
    """A missing ``updated_at`` (NaN) -> recency 0; recency is in [0, 1], so np.nan_to_num's
    other replacements (infinities) never apply."""
    return np.where(np.isnan(x), 0.0, x)


def score_candidates(cands: list[dict], now_us: int, weights: Weights = DEFAULT_WEIGHTS, *,
                     half_life_days: float = HALF_LIFE_DAYS) -> list[dict]:
    """Score candidates (dicts with raw ``cosine``, ``keyword`` (a share in [0, 1]),
    ``updated_at``, ``importance``; a missing raw value counts 0). Returns new dicts with
    ``components``, ``stale``, ``relevance`` and ``score``, best first."""
    if not cands:
        return []
    stale = [is_stale(c, now_us) for c in cands]
    scores, comps, rel = score_arrays([c.get("cosine") or 0.0 for c in cands], [c.get("keyword") or 0.0 for c in cands],
                                      np.array([_us(c.get("updated_at")) for c in cands]),
                                      [c.get("importance") or 0.0 for c in cands], stale, now_us, weights,
                                      half_life_days=half_life_days)
    out = []
    for i, c in enumerate(cands):
        d = dict(c)
        d["components"] = {k: float(v[i]) for k, v in comps.items()}
        d["stale"] = stale[i]
        d["relevance"] = float(rel[i])
        d["score"] = float(scores[i])
        d["similarity"] = float(c.get("cosine") or 0.0)
        out.append(d)
    out.sort(key=lambda d: -d["score"])
    return out


# --- keyword side: tokens and BM25 -------------------------------------------------------------

# Han, kana, Hangul: no spaces between words, so they are indexed as character bigrams.
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af"
_TOKEN = re.compile(f"([{_CJK}]+)|([^\\W_{_CJK}]+)")
STOPWORDS = frozenset(
    "a an and are as at be been but by did do does for from had has have he her him his how i if in into is it "
    "its me my of on or our she so than that the their them then there they this to was we were what when where "
    "which who whom why will with you your".split()
)


def tokenize(text: str, stopwords: frozenset[str] = STOPWORDS) -> list[str]:
    """Words (NFKC, case-folded, stop words out) and CJK character bigrams (a lone CJK character
    is its own token): one tokenizer for English and Chinese text alike."""
    out = []
    for cjk, word in _TOKEN.findall(unicodedata.normalize("NFKC", text).casefold()):
        if cjk:
            out.extend([cjk] if len(cjk) == 1 else [cjk[i : i + 2] for i in range(len(cjk) - 1)])
        elif word not in stopwords:
            out.append(word)
    return out


# Query words too common to weigh in the keyword share (the index keeps them: only the query's
# side drops them, so stored search_text never changes): chat fillers, auxiliaries, pronouns,
# quantifiers and English contraction pieces ("alice's" -> "alice", "s").
QUERY_STOPWORDS = STOPWORDS | frozenset(
    "about above after again all almost also always am another any anyone anything around back because before "
    "being below between both can cannot could d didn doesn don done down during each either else enough even "
    "ever every few get gets go goes going gone got had hasn haven however isn just ll m many may maybe might "
    "more most much must never no nor not now off oh ok okay once one only other others out over own re really "
    "s same should since some something still such t than thanks thank through too under until up us ve very "
    "wasn way well weren whether while won would wouldn yeah yes yet".split()
)
_CJK_CHAR = re.compile(f"[{_CJK}]")


def term_weight(term: str) -> float:
    """A query term's weight in the keyword share: ``ln(1 + length)``, a CJK character counting
    two (a Han bigram carries about what a five-letter word does)."""
    return math.log1p(len(term) + len(_CJK_CHAR.findall(term)))


class QueryTerms:
    """A query's terms for the keyword share, prepared once per recall: its distinct tokens
    (``tokenize``'s) less ``QUERY_STOPWORDS`` (all of them if that leaves none), sorted, each
    with ``term_weight``. ``score(doc_terms)`` is the weighted share of them a document holds,
    summed in this fixed order, so every path computes the same float."""

    __slots__ = ("terms", "weights", "total")

    def __init__(self, qtokens: list[str]) -> None:
        distinct = sorted(set(qtokens))
        kept = [t for t in distinct if t not in QUERY_STOPWORDS] or distinct
        self.terms: tuple[str, ...] = tuple(kept)
        self.weights: tuple[float, ...] = tuple(term_weight(t) for t in kept)
        total = 0.0
        for w in self.weights:  # summed as score() sums: a document holding every term scores exactly 1.0
            total += w
        self.total = total

    @classmethod
    def of(cls, qtokens) -> QueryTerms:
        """``QueryTerms(qtokens)``, memoised (an agent's recalls repeat their queries; the weights'
        regex per term was a twentieth of a hot recall). Shared: read it, never change it."""
        key = tuple(qtokens)
        got = _QUERIES.get(key)
        if got is None:
            got = cls(key)
            if len(_QUERIES) >= 4096:
                _QUERIES.clear()
            _QUERIES[key] = got
        return got

    def score(self, doc_terms) -> float:
        """The share in [0, 1] of the query's weight whose terms ``doc_terms`` (a set) holds."""
        if not self.total:
            return 0.0
        s = 0.0
        for t, w in zip(self.terms, self.weights):
            if t in doc_terms:
                s += w
        return s / self.total

    def scores(self, docs) -> np.ndarray:
        """``score`` of each document (an iterable of sets of terms)."""
        return np.array([self.score(d) for d in docs], dtype=np.float64)

    def over_postings(self, postings: dict, n: int) -> np.ndarray:
        """``score`` of documents 0..n-1 of an index (term -> array of document positions):
        only the query's terms are looked at. The same floats as ``score`` per document (the
        same additions, in the same order)."""
        out = np.zeros(n, dtype=np.float64)
        if not self.total:
            return out
        for t, w in zip(self.terms, self.weights):
            p = postings.get(t)
            if p is not None:
                out[p] += w
        return out / self.total


_QUERIES: dict[tuple, QueryTerms] = {}  # QueryTerms.of's memo


def doc_terms(rec: dict) -> frozenset[str]:
    """The terms a memory is matched on: its ``search_text`` (tokens derived at write time), or
    its content tokenised when it has none."""
    st = rec.get("search_text")
    return frozenset(st.split() if st is not None else tokenize(rec.get("content") or ""))


class KeywordIndex:
    """An in-memory BM25 (Lucene's formula, k1=1.2, b=0.75) over tokenised documents, updated
    in place: what an owner's hot index needs beside its vector matrix."""

    def __init__(self) -> None:
        self.postings: dict[str, dict[str, int]] = {}  # term -> {doc id: term frequency}
        self.terms: dict[str, tuple[str, ...]] = {}  # doc id -> its distinct terms (for remove)
        self.lengths: dict[str, int] = {}
        self.total = 0

    def add(self, doc_id: str, tokens: list[str]) -> None:
        if doc_id in self.lengths:
            self.remove(doc_id)
        counts = Counter(tokens)
        for t, tf in counts.items():
            self.postings.setdefault(t, {})[doc_id] = tf
        self.terms[doc_id] = tuple(counts)
        self.lengths[doc_id] = len(tokens)
        self.total += len(tokens)

    def remove(self, doc_id: str) -> None:
        n = self.lengths.pop(doc_id, None)
        if n is None:
            return
        self.total -= n
        for t in self.terms.pop(doc_id):
            del self.postings[t][doc_id]
            if not self.postings[t]:
                del self.postings[t]

    def __len__(self) -> int:
        return len(self.lengths)

    def scores(self, query_tokens: list[str], k1: float = BM25_K1, b: float = BM25_B) -> dict[str, float]:
        """BM25 of every document sharing a term with the query (others score 0)."""
        n = len(self.lengths)
        if not n:
            return {}
        avgdl = self.total / n or 1.0
        out: dict[str, float] = {}
        for t in set(query_tokens):
            p = self.postings.get(t)
            if not p:
                continue
            idf = math.log(1.0 + (n - len(p) + 0.5) / (len(p) + 0.5))
            for d, tf in p.items():
                norm = tf + k1 * (1.0 - b + b * self.lengths[d] / avgdl)
                out[d] = out.get(d, 0.0) + idf * tf * (k1 + 1.0) / norm
        return out

    def top(self, query_tokens: list[str], k: int) -> list[tuple[str, float]]:
        s = self.scores(query_tokens)
        return sorted(s.items(), key=lambda kv: (-kv[1], kv[0]))[:k]


# --- conflicts across visible scopes ------------------------------------------------------------


def _norm(v: str | None) -> str:
    out = _NORMED.get(v)
    if out is None:
        if len(_NORMED) >= 65_536:  # a bound on memory (a clear is atomic under threads)
            _NORMED.clear()
        out = _NORMED[v] = _SPACE.sub(" ", unicodedata.normalize("NFKC", v or "").casefold()).strip()
    return out


_NORMED: dict = {}  # text -> _norm(text): subjects, predicates and objects recur in every recall's candidates


_SPACE = re.compile(r"\s+")


def _rank_key(rec: dict) -> tuple:
    # Most specific scope first, then highest confidence, then newest (a lower-confidence write
    # never overrides, as within one scope), then the higher version. Ties past those (copies
    # made at one instant: a demotion pass's) go by scope and value before the random memory id,
    # so the same calls on a fresh folder settle them the same way (a simulation's same seed,
    # same counters).
    return (parse_scope(rec["scope"]).depth, float(rec.get("confidence") or 0.0), _us(rec.get("updated_at")),
            int(rec.get("version") or 0), rec["scope"], _norm(rec.get("object")), rec["memory_id"])


def resolve_conflicts(hits: list[dict], rivals: list[dict] = ()) -> tuple[list[dict], list[dict], list[dict]]:
    """Resolve (subject, predicate) conflicts: among records with the same entity key and
    different objects, keep the most specific scope's, then the highest-confidence, newest one.

    ``hits`` are candidates in rank order; ``rivals`` are other visible active records with the
    same entity keys that did not make the candidate list (so a user's own preference still
    overrides an org default that out-scored it). Returns ``(kept, removed, promoted)``:
    ``kept`` keeps the order of ``hits`` and each winner of a conflict carries
    ``conflict = {"overrides": [memory ids], "reason": ...}``; ``removed`` are the losing hits,
    each with ``removed_by``; ``promoted`` are rivals that won over a hit (the caller scores
    them and decides whether they enter the result)."""
    groups: dict[tuple[str, str], list[dict]] = {}
    for rec in [*hits, *rivals]:
        if rec.get("subject") is not None and rec.get("predicate") is not None:
            groups.setdefault((_norm(rec["subject"]), _norm(rec["predicate"])), []).append(rec)
    winner_of: dict[str, dict] = {}  # loser memory id -> winner record
    flags: dict[str, dict] = {}
    for recs in groups.values():
        if len({_norm(r.get("object")) for r in recs}) < 2:
            continue  # same object everywhere: agreement, not a conflict
        best = max(recs, key=_rank_key)
        losers = [r for r in recs if _norm(r.get("object")) != _norm(best.get("object"))]
        if best.get("review") == "contradiction":
            # A close call waiting for a reviewer: its flagged versions in the same scope are all
            # shown, each flagged, none removed (the reviewer decides, not the ranking).
            pending = [r for r in losers if r.get("review") == "contradiction" and r["scope"] == best["scope"]]
            for r in [best, *pending]:
                flags[r["memory_id"]] = {"overrides": [], "reason": "contradiction_in_review",
                                         "with": sorted(x["memory_id"] for x in [best, *pending] if x is not r)}
            losers = [r for r in losers if r not in pending]
        # Two live versions of one scope's fact (no close call between them) were written apart:
        # each writer's decision supersedes every version it may see, so the later one could
        # not see the other (at a sensitivity above its clearance, or with a write-only grant).
        # Neither decided against the other: a reader cleared for both sees both, each flagged,
        # as for a close call (docs/governance.md). A working item beside the vault's version
        # is a session's newer sighting, not a version: the ranking decides.
        apart = [] if best.get("pool") == "working" else \
            [r for r in losers if r["scope"] == best["scope"] and r.get("pool") != "working"]
        if apart:
            for r in [best, *apart]:
                flags.setdefault(r["memory_id"], {"overrides": [], "reason": "written_apart",
                                                  "with": sorted(x["memory_id"] for x in [best, *apart] if x is not r)})
            losers = [r for r in losers if r not in apart]
        if not losers:
            continue
        top_loser = max(losers, key=_rank_key)
        kb, kl = _rank_key(best), _rank_key(top_loser)
        reason = ("more_specific_scope" if kb[0] > kl[0] else "higher_confidence" if kb[1] > kl[1]
                  else "newer" if kb[2] > kl[2] else "tie_break")
        for r in losers:
            winner_of[r["memory_id"]] = best
        flags[best["memory_id"]] = {"overrides": sorted(r["memory_id"] for r in losers), "reason": reason}
    kept, removed = [], []
    hit_ids = {h["memory_id"] for h in hits}
    for h in hits:
        w = winner_of.get(h["memory_id"])
        if w is not None:
            removed.append(dict(h, removed_by=w["memory_id"]))
        else:
            kept.append(dict(h, conflict=flags[h["memory_id"]]) if h["memory_id"] in flags else h)
    promoted, seen = [], set()
    for r in rivals:
        mid = r["memory_id"]
        if mid in flags and mid not in hit_ids and mid not in seen and hit_ids & set(flags[mid]["overrides"]):
            seen.add(mid)
            promoted.append(dict(r, conflict=flags[mid]))
    return kept, removed, promoted
