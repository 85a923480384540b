"""Semantic dedup's per-scope vector cache (``NearCopies``, ``_NearCache``): an owner's batch of
writes looks up near copies of each write's vector among a scope's live text-only memories.
Moved out of ``hot`` (which re-exports it) to keep that module to the hot index. No Ray here."""

from __future__ import annotations

import math

import numpy as np

from ..core.versions import Layer, ScopeState


class NearCopies:
    """Semantic dedup for one scope during one batch: the live text-only memories' vectors,
    stacked once, and those the batch adds; ``find(vector)`` names one at or above the cosine
    threshold (or None). Built lazily: a scope whose batch has no text-only write pays nothing.
    The stacked matrix is kept on the state (``near_cache``) and reused by the next batch while
    it still covers every live text-only memory (stacking a scope's vectors each batch made
    writes slow down as scopes grew; so did checking the cache id by id, and copying it whole to
    add a batch's rows: the check is a set's, and rows go into the buffer's spare capacity)."""

    __slots__ = ("state", "threshold", "ids", "mat", "_cache", "_extra_ids", "_extra", "similar_cos", "_last",
                 "_xbuf", "_xlast", "_pre")

    def __init__(self, state: ScopeState, threshold: float, similar_cos: float = 2.0) -> None:
        self.state, self.threshold, self.similar_cos = state, float(threshold), float(similar_cos)
        self._last: tuple | None = None  # (vector, cosines): find and similar share one product
        self.ids: list[str] | None = None
        self.mat = None
        self._cache: _NearCache | None = None
        self._extra_ids: list[str] = []
        self._extra: list[np.ndarray] = []
        self._xbuf = None  # this batch's added vectors stacked (room to grow): one product per lookup
        self._xlast: tuple | None = None  # (vector, count, cosines) against them
        self._pre: dict | None = None  # id(vector) -> (vector, its cosines): the batch's, from one product

    def _live_text(self, mid: str) -> bool:
        rec = self.state.records.get(mid)
        return rec is not None and self.state.by_hash.get(rec["content_hash"]) == mid

    def _build(self) -> None:
        cached = self.state.near_cache
        # by_hash's values are exactly the live text-only ids: the cache may also hold dead ones
        # (masked in find), never miss a live one. A committed state's cache covers its ids
        # (``ScopeState.commit`` drops one that does not): a staged one checks what it added.
        by_hash = self.state.by_hash
        if cached is not None and (all(m in cached.idset for m in by_hash.added()) if isinstance(by_hash, Layer)
                                   else cached.idset.issuperset(by_hash.values())):
            self._cache, self.ids, self.mat = cached, cached.ids, cached.rows()
            return
        self.ids = [m for m in self.state.by_hash.values() if m in self.state.vectors]
        self.mat = np.stack([self.state.vectors[m] for m in self.ids]) if self.ids else None

    @classmethod
    def for_batch(cls, staged: dict, vectors: list[tuple], lifecycle) -> dict[str, NearCopies]:
        """One per scope of ``staged`` that the batch's ``(scope, vector)`` pairs write to, its
        cosines fetched at once (``prefetch``)."""
        by_scope: dict[str, list] = {}
        for scope, vector in vectors:
            if vector is not None and scope in staged:
                by_scope.setdefault(scope, []).append(vector)
        out = {}
        for scope, vs in by_scope.items():
            out[scope] = cls(staged[scope], lifecycle.dedup_cosine, lifecycle.text_contradiction_cosine)
            out[scope].prefetch(vs)
        return out

    SMALL = 64  # up to this many live memories, similar() ranks them in Python (measured: 2x faster)
    # A batch's product of at most this many cosines is made at once (4M float32: 16 MB).
    PREFETCH_MAX = 4_000_000

    def prefetch(self, vectors: list) -> None:
        """The cosines of this batch's vectors against the scope's live ones as one matrix
        product (a lookup then reads its row): a product per write cost as much as the rest of
        decide once a scope held a few thousand memories."""
        if self.threshold > 1.0 and self.similar_cos > 1.0:
            return
        vs = [v for v in vectors if v is not None]
        if not vs:
            return
        if self.ids is None:
            self._build()
        if self.mat is None or len(vs) * len(self.ids) > self.PREFETCH_MAX or len(vs) < 2:
            return
        prod = np.stack(vs) @ self.mat.T
        ranked = self._ranked(prod) if self.similar_cos <= 1.0 and prod.shape[1] > self.SMALL else None
        self._pre = {id(v): (v, prod[k], None if ranked is None else ranked[k]) for k, v in enumerate(vs)}

    SIMILAR_K = 3  # similar()'s k: its best 4k candidates are ranked for the whole batch at once

    def _ranked(self, prod) -> list[list[int]]:
        """Per row of ``prod``: the columns at cosine >= ``similar_cos`` among its best
        ``4 * SIMILAR_K``, best first (equal cosines by column), as similar() ranks one row;
        for the whole batch in a few calls, where one row at a time cost four numpy calls a
        write (a third of the contradiction check in a scope of 1,000)."""
        kk = 4 * self.SIMILAR_K
        top = np.argpartition(-prod, kk, axis=1)[:, :kk] if prod.shape[1] > kk else \
            np.broadcast_to(np.arange(prod.shape[1]), prod.shape).copy()
        top.sort(axis=1)  # column order first: the stable sort below then breaks ties by column
        vals = np.take_along_axis(prod, top, axis=1)
        order = np.argsort(-vals, axis=1, kind="stable")
        top, vals = np.take_along_axis(top, order, axis=1), np.take_along_axis(vals, order, axis=1)
        counts = (vals >= self.similar_cos).sum(axis=1).tolist()
        return [row[:c] for row, c in zip(top.tolist(), counts)]

    def _prefetched(self, vector):
        """``vector``'s cosines from the batch's product (``prefetch``), or None."""
        pre = self._pre.get(id(vector)) if self._pre else None
        return pre[1] if pre is not None and pre[0] is vector else None

    def _cos(self, vector):
        if self._last is None or self._last[0] is not vector:
            cos = self._prefetched(vector)
            if cos is None and self.mat is not None:
                cos = self.mat @ vector
            self._last = (vector, cos)
        return self._last[1]

    SCREEN_FROM = 32  # rows from which find() screens (below, the whole product is as cheap)

    def _find_cos(self, vector):
        """(rows, their cosines) for find(): every row (rows None) when the cosines are known
        already (similar() or the batch's product) or the scope is small; else only the rows
        the cache's screen lets through, so that most of the matrix is never read."""
        known = self._last is not None and self._last[0] is vector or self._prefetched(vector) is not None
        if known or self._cache is None or len(self.ids) < self.SCREEN_FROM:
            return None, self._cos(vector)
        rows = self._cache.screen(vector, self.threshold)
        return rows, (self.mat[rows] @ vector if len(rows) else np.zeros(0, self.mat.dtype))

    def _xcos(self, vector):
        """Cosines of ``vector`` against the vectors this batch added (None: none yet)."""
        n = len(self._extra)
        if n == 0:
            return None
        if self._xlast is None or self._xlast[0] is not vector or self._xlast[1] != n:
            self._xlast = (vector, n, self._xbuf[:n] @ vector)
        return self._xlast[2]

    def similar(self, vector, k: int = 3) -> list[str]:
        """The ``k`` live text-only memories closest to ``vector`` at cosine >= ``similar_cos``,
        best first: candidates for a text-only contradiction. Those this batch wrote before
        are ranked with the scope's own, as they would be had they come in an earlier call, and
        memories no longer live never take a candidate's place: the outcome of a write does not
        depend on how the writes were batched or how long the scope has been held hot."""
        if self.similar_cos > 1.0 or vector is None:
            return []
        if self.ids is None:
            self._build()
        cut = self.similar_cos
        cos = self._cos(vector)
        xc = self._xcos(vector)  # this batch's own (None: none yet)
        n = len(cos) if cos is not None else 0
        capped = n + (len(xc) if xc is not None else 0) > self.SMALL
        limit = 4 * k if capped else None  # the best 4k first: sorting every candidate cost more than the check
        pre = self._pre.get(id(vector)) if self._pre and k == self.SIMILAR_K else None
        if pre is not None and pre[0] is vector and pre[2] is not None:
            order = pre[2]  # ranked with the batch's product (prefetch)
        else:
            order = _over(cos, cut, limit) if cos is not None else ()
        if not len(order) and xc is None:  # most writes: nothing over the cut
            return []
        at = (lambda j: cos[j] if j < n else xc[j - n])  # noqa: E731 - a column's cosine
        merged = self._merged(order, cos, xc, cut, limit, n)
        out = self._live(merged, n, k, [], at)
        if limit is not None and len(merged) >= limit and (len(out) < k or len(out) == limit):
            # more over the cut than the best 4k, and some of those not live or all of them tied: the rest
            out = self._live(self._merged(_over(cos, cut, None) if cos is not None else (), cos, xc, cut, None, n),
                             n, k, out[:k], at)
        return [m for m, _ in out]

    def _merged(self, order, cos, xc, cut: float, limit: int | None, n: int) -> list[int]:
        """``order`` (columns of the scope's rows) and this batch's rows over ``cut`` (columns
        from ``n``), best first, equal cosines by column."""
        if xc is None:
            return order
        extra = [(float(xc[j]), n + j) for j in _over(xc, cut, limit)]
        if not extra:
            return order
        merged = [j for _, j in sorted([(float(cos[j]), j) for j in order] + extra, key=lambda t: (-t[0], t[1]))]
        return merged[:limit] if limit is not None else merged

    def _live(self, order, n: int, k: int, found: list, at) -> list[tuple[str, float]]:
        """``found``, then the live ones of ``order`` (best first) as (id, cosine) up to ``k``,
        and those tied with the k-th (up to ``4k``; ``TIE``): which of equals was kept depended
        on the order the scope's rows were written in (a permutation of the same words has the
        same vector)."""
        out = list(found)
        seen = {m for m, _ in out}
        records, by_hash, ids, xids = self.state.records, self.state.by_hash, self.ids, self._extra_ids
        for j in order:
            if len(out) >= k and (len(out) >= 4 * k or float(at(j)) < out[k - 1][1] - TIE):
                break
            mid = ids[j] if j < n else xids[j - n]
            rec = records.get(mid)  # _live_text, inline: once per candidate
            if rec is not None and by_hash.get(rec["content_hash"]) == mid and mid not in seen:
                out.append((mid, float(at(j))))
                seen.add(mid)
        return out

    def find(self, vector) -> str | None:
        """The closest live text-only memory at cosine >= ``threshold`` (``near_copies``' first)."""
        found = self.near_copies(vector)
        return found[0] if found else None

    def near_copies(self, vector) -> list[str]:
        """The live text-only memories at cosine >= ``threshold`` (the scope's and this batch's),
        closest first, equals (``TIE``) oldest first: a write merges into the first that says
        what it says. Which of two memories with one vector (the same words in another order)
        came first in the scope's rows decided it before, so a reopened runtime merged a write
        its predecessor had kept apart."""
        if self.threshold > 1.0 or vector is None:
            return []
        if self.ids is None:
            self._build()
        cands = []  # (cosine, id)
        thr = self.threshold
        if self.mat is not None:
            rows, cos = self._find_cos(vector)
            if len(cos) and cos[cos.argmax()] >= thr:  # most writes have none: one reduction
                ids = self.ids if rows is None else [self.ids[r] for r in rows.tolist()]
                cands += [(float(cos[j]), ids[j]) for j in (cos >= thr).nonzero()[0].tolist()]
        xc = self._xcos(vector)
        if xc is not None and xc[xc.argmax()] >= thr:
            cands += [(float(xc[j]), self._extra_ids[j]) for j in (xc >= thr).nonzero()[0].tolist()]
        if not cands:  # the usual write
            return []
        # (float64, as the threshold: numpy compared the float32 cosines in float32)
        live = sorted((c for c in cands if c[0] >= thr and self._live_text(c[1])), key=lambda c: -c[0])
        recs, out, group = self.state.records, [], []
        for c, mid in live:
            if group and c < group[0][0] - TIE:
                out += _oldest_first(group, recs)
                group = []
            group.append((c, mid))
        return out + _oldest_first(group, recs)

    def add(self, memory_id: str, vector) -> None:
        n = len(self._extra)
        if self._xbuf is None or n == len(self._xbuf):
            grown = np.empty((max(64, 2 * n), len(vector)), np.asarray(vector).dtype)
            if n:
                grown[:n] = self._xbuf[:n]
            self._xbuf = grown
        self._xbuf[n] = vector
        self._extra_ids.append(memory_id)
        self._extra.append(vector)

    def keep(self) -> None:
        """Leave this batch's matrix (with what it added) on the staged state for the next
        batch: called once the batch is durable, just before the state is committed."""
        if self.ids is None:
            return
        if self._cache is not None:
            self.state.near_cache = self._cache.extend(self._extra_ids, self._extra)
        else:
            self.state.near_cache = _NearCache.of(self.ids, self.mat, self._extra_ids, self._extra)


class _NearCache:
    """A scope's stacked text-only vectors: ``ids`` and the first ``len(ids)`` rows of ``buf``,
    which has room to grow. One per committed state, extended in place by the next committed
    batch (scopes commit one batch after another: a batch's lookups read rows its own batch
    never changes), so a batch pays for its rows, not for the scope's.

    Beside the rows, each row's first ``head_width`` components (``head``, contiguous) and the
    norm of the rest (``tail``): ``a.v <= a_head.v_head + |a_tail| |v_tail|`` (Cauchy-Schwarz),
    so dedup's lookup reads a quarter of the matrix to rule out the rows that cannot reach its
    threshold (``NearCopies.find``): the whole matrix of a busy runtime's scope is out of the
    CPU's caches, and reading it was most of a lookup."""

    __slots__ = ("ids", "idset", "buf", "head", "tail")

    def __init__(self, ids: list[str], idset: set[str], buf: np.ndarray) -> None:
        self.ids, self.idset, self.buf = ids, idset, buf
        n, w = len(ids), head_width(buf.shape[1])
        self.head = np.empty((len(buf), w), buf.dtype)
        self.tail = np.empty(len(buf), buf.dtype)
        self._summarise(0, n)

    def _summarise(self, lo: int, hi: int) -> None:
        w = self.head.shape[1]
        self.head[lo:hi] = self.buf[lo:hi, :w]
        if hi - lo == 1:  # the usual batch of a busy runtime: one write a scope
            self.tail[lo] = _norm(self.buf[lo, w:])
        else:
            self.tail[lo:hi] = np.linalg.norm(self.buf[lo:hi, w:], axis=1)

    @classmethod
    def of(cls, ids: list[str], mat, extra_ids: list[str], extra: list) -> _NearCache | None:
        rows = ([mat] if mat is not None else []) + ([np.stack(extra)] if extra else [])
        if not rows:
            return None
        stacked = np.vstack(rows)
        buf = np.empty((max(16, 2 * len(stacked)), stacked.shape[1]), stacked.dtype)
        buf[: len(stacked)] = stacked
        every = list(ids) + list(extra_ids)
        return cls(every, set(every), buf)

    def rows(self) -> np.ndarray:
        return self.buf[: len(self.ids)]

    def extend(self, extra_ids: list[str], extra: list) -> _NearCache:
        if not extra:
            return self
        n, k = len(self.ids), len(extra)
        if n + k > len(self.buf):  # full: a copy of the rows, with room (amortised O(1) a row)
            cap = max(16, 2 * (n + k))
            self.buf, self.head, self.tail = (_with_room(a, n, cap) for a in (self.buf, self.head, self.tail))
        if k == 1:  # one write a scope: np.stack cost 1.8 us of 3.4
            self.buf[n] = extra[0]
        else:
            self.buf[n: n + k] = np.stack(extra)
        self._summarise(n, n + k)
        self.ids.extend(extra_ids)
        self.idset.update(extra_ids)
        return self

    def screen(self, vector, threshold: float) -> np.ndarray:
        """The rows whose cosine with ``vector`` may reach ``threshold`` (a superset: the bound
        above, less a margin for float32 rounding); the others are certainly below it."""
        n, w = len(self.ids), self.head.shape[1]
        bound = self.head[:n] @ vector[:w]
        bound += self.tail[:n] * _norm(vector[w:])
        return (bound >= threshold - SCREEN_MARGIN).nonzero()[0]


def _over(cos, cut: float, limit: int | None) -> list[int]:
    """Columns of ``cos`` at or above ``cut``, best first (equal cosines by column): the best
    ``limit`` of them (None: all)."""
    if len(cos) <= NearCopies.SMALL:  # a few memories (the usual scope): numpy's per-call cost dominates
        c = cos.tolist()
        # most writes have no candidate: one max() instead of a filtered sort
        if not c or max(c) < cut:
            return []
        order = sorted([j for j, x in enumerate(c) if x >= cut], key=c.__getitem__, reverse=True)
        return order[:limit] if limit is not None else order
    # methods, not np.flatnonzero / argpartition / argsort: the same calls without numpy's
    # Python wrappers (a tenth of the worst case's check)
    idx = (cos >= cut).nonzero()[0]
    if limit is not None and len(idx) > limit:
        idx = idx[(-cos[idx]).argpartition(limit)[:limit]]
    return idx[(-cos[idx]).argsort(kind="stable")].tolist()


def _oldest_first(group: list[tuple[float, str]], records) -> list[str]:
    """Ids of equally close memories, the oldest first (then by id)."""
    return [m for _, m in sorted(group, key=lambda c: (records[c[1]].get("created_at") or 0, c[1]))]


def _norm(v: np.ndarray) -> float:
    """One vector's norm (np.linalg.norm's wrapper costs 2 us more)."""
    return math.sqrt(float(v @ v))


def _with_room(a: np.ndarray, n: int, cap: int) -> np.ndarray:
    """``a``'s first ``n`` rows in a new array of ``cap`` rows."""
    out = np.empty((cap, *a.shape[1:]), a.dtype)
    out[:n] = a[:n]
    return out


# Cosines this close are equal: one pair's cosine from a matrix product and from a single
# vector's differ in float32's last bits (the sums run in another order).
TIE = 1e-5
SCREEN_MARGIN = 1e-4  # float32 sums of a few hundred terms err by ~1e-6: far inside it


def head_width(dim: int) -> int:
    """Components kept apart for the screen: a quarter (96 of 384 passed 0.4% of the issue-2
    workload's pairs of one scope at the default 0.95; 48 passed 8%)."""
    return max(1, dim // 4)
