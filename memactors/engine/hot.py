"""An owner's hot scopes: their live memories in memory, ready to score without a Lance query.

- ``HotIndex``: one scope's live memories, vectors stacked and postings of their
  ``search_text`` terms; every live memory of the scope is scored exactly (a scope holds
  hundreds, not millions), through ``memactors.core.scoring.score_arrays``, with the same
  keyword share a Lance row gets (``score_rows``).
- ``HotCache``: the scopes an owner keeps hot (least recently used first, bounded by a count
  of memories), a built index per scope, and where each hot memory lives.

A batch stages its scopes (``ScopeState.stage``) and commits them in place once its ledger
group is durable (``HotCache.commit``), under the cache's lock; a recall on another thread (the
direct path's socket, or the process host's caller) reads a scope only through a ``HotIndex``,
built under that lock from one committed generation. No Ray here: testable alone.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

import numpy as np

from ..core import records as R
from ..core import scoring as S
from ..core.project import apply_bulk
from ..core.versions import ScopeState
from ..core.visibility import ALL
from .near import SCREEN_MARGIN, NearCopies, _NearCache, head_width  # noqa: F401 - importers find them here

NO_EXPIRY = np.iinfo(np.int64).max


def hit(rec: dict, score: float, components: dict, stale: bool, relevance: float, similarity: float) -> dict:
    """A candidate as owners return it: the record's hit fields, its score (what ranks), its
    relevance (what the threshold judges: the score before the stale factor), components and
    similarity (the query's raw cosine to the memory's vector)."""
    h = hit_base(rec)
    h["score"] = float(score)
    h["relevance"] = float(relevance)
    h["similarity"] = float(similarity)
    h["components"] = components
    h["stale"] = bool(stale)
    return h


def hit_base(rec: dict) -> dict:
    """The record's fields a hit carries, its entity key and sensitivity for conflict
    resolution and its content hash for working copies (the caller's ``Hit`` has no such
    fields: ``runtime.results.hit_from`` takes what it names)."""
    out = {k: rec.get(k) for k in R.HIT_FIELDS}
    out["entity_key"] = rec.get("entity_key")
    out["sensitivity"] = rec.get("sensitivity")
    out["content_hash"] = rec.get("content_hash")  # what a working copy is told apart by (core.selection)
    return out


def entity_keys(cands: list[dict]) -> set[str]:
    """The facts these candidates state (a hashed key a candidate: carried, or derived)."""
    return {c.get("entity_key") or R.entity_key(c["subject"], c["predicate"])
            for c in cands if c.get("subject") is not None}


def score_rows(rows: list[dict], cosine, qterms: S.QueryTerms | None, now_us: int, weights: S.Weights) -> list[dict]:
    """Score loose candidates (working-pool items, Lance rows, records folded from the ledger)
    with the one scoring function, given their raw cosines; each keyword share is computed
    from the row's own terms (``qterms`` None: 0, for a listing)."""
    if not rows:
        return []
    stale = np.array([S.is_stale(r, now_us) for r in rows], dtype=bool)
    keyword = qterms.scores(S.doc_terms(r) for r in rows) if qterms is not None else np.zeros(len(rows))
    fused, comps, rel = S.score_arrays(cosine, keyword, np.array([float(r["updated_at"]) for r in rows]),
                                       [r["importance"] for r in rows], stale, now_us, weights)
    cos = np.asarray(cosine, dtype=np.float64)
    return [hit(r, fused[j], {k: float(v[j]) for k, v in comps.items()}, stale[j], rel[j], cos[j])
            for j, r in enumerate(rows)]


def _best(live: np.ndarray, rank: np.ndarray, m: int, recs: list[dict]) -> np.ndarray:
    """The ``m`` rows of ``live`` ranked highest, ties at the cut taken by memory id (as every
    later order breaks them: a scan of the same rows keeps the same ones), in row order."""
    r = rank[live]
    cut = -np.partition(-r, m - 1)[m - 1]
    above, tied = live[r > cut], live[r == cut]
    if above.size + tied.size > m:
        tied = np.array(sorted(tied.tolist(), key=lambda j: recs[j]["memory_id"])[: m - above.size], dtype=live.dtype)
    return np.sort(np.concatenate([above, tied]))


_CODED = (("sensitivity", "internal"), ("category", "default"), ("source_kind", ""))  # HotIndex._coded's columns


def _term_rows(recs: list[dict], rows) -> dict[str, list[int]]:
    """Term -> the rows (of ``rows``, in order) whose memory holds it."""
    acc: dict[str, list[int]] = {}
    for j in rows:
        for t in S.doc_terms(recs[j]):
            acc.setdefault(t, []).append(j)
    return acc


def _codes(recs: list[dict], rows, col: str, default: str, names: dict[str, int]) -> np.ndarray:
    """Each row's ``col`` as a small int, a new name given the next code (``names`` grows)."""
    return np.array([names.setdefault(recs[j].get(col) or default, len(names)) for j in rows], np.int32)


def _merged(before: np.ndarray, fresh: np.ndarray, changed: list[int]) -> np.ndarray:
    """``before``'s rows, those at ``changed`` replaced by ``fresh``'s first ones, then the rest
    of ``fresh`` appended (``HotIndex._grow``)."""
    out = np.concatenate((before, fresh[len(changed):]))
    if changed:
        out[changed] = fresh[: len(changed)]
    return out


class HotIndex:
    """One hot scope's live memories, ready to score. Built from one committed generation of a
    state; the next commit (or a new state) makes a new one."""

    __slots__ = ("state", "gen", "recs", "mat", "hard", "soft", "updated", "importance", "stale_status",
                 "_postings", "_codes", "_masks", "_pos", "_bases", "rivals", "_at")

    def __init__(self, state: ScopeState, dim: int, prev: HotIndex | None = None) -> None:
        self.state, self.gen = state, state.gen
        recs = self.recs = state.live()
        self.rivals: dict | None = None  # entity key -> its live records (built on first use)
        self._postings: dict[str, np.ndarray] | None = None
        self._codes: dict | None = None
        self._masks: dict = {}  # filter signature -> mask: an agent's recalls repeat one filter
        self._pos: dict[str, int] | None = None  # memory id -> its row (built on first use)
        self._bases: list | None = None  # each record's hit fields (hit_base), built when first hit
        self._at: tuple | None = None  # (now, weights, what scoring fixes at them): ``at``
        if prev is None or not self._grow(prev, dim):
            self._set_columns(*self._columns(recs, dim))

    @classmethod
    def of_items(cls, recs: list[dict], vectors: dict, dim: int) -> HotIndex:
        """An index of records outside a scope's state (its working items, ``WorkingPool.view``),
        scored as a hot scope's: the same hits as ``score_rows`` makes of them."""
        return cls(_Items(recs, vectors), dim)

    def _columns(self, recs: list[dict], dim: int) -> tuple:
        vectors = self.state.vectors
        mat = (np.stack([vectors[r["memory_id"]] for r in recs]).astype(np.float32, copy=False) if recs
               else np.zeros((0, dim), np.float32))
        return (mat, np.array([r["hard_expires_at"] or NO_EXPIRY for r in recs], dtype=np.int64),
                np.array([r["soft_expires_at"] or NO_EXPIRY for r in recs], dtype=np.int64),
                np.array([r["updated_at"] for r in recs], dtype=np.float64),
                np.array([r["importance"] for r in recs], dtype=np.float64),
                np.array([r["status"] == "stale" for r in recs], dtype=bool))

    def _set_columns(self, mat, hard, soft, updated, importance, stale) -> None:
        self.mat, self.hard, self.soft, self.updated, self.importance, self.stale_status = \
            mat, hard, soft, updated, importance, stale

    def _grow(self, prev: HotIndex, dim: int) -> bool:
        """This generation from the one before it when it kept the same memories in the same rows
        (some records replaced: a refresh, a counted access) and added rows at the end (new
        writes): only those rows are read, and the keyword postings, rows and hit fields carry
        over. A recall right after a write rebuilt a scope of 1,000 memories (10 ms). False when
        a memory left or moved (the whole build then)."""
        old, recs = prev.recs, self.recs
        k = len(old)
        if prev.state is not self.state or k == 0 or len(recs) < k:
            return False
        changed = [j for j, (a, b) in enumerate(zip(recs, old)) if a is not b]
        if any(recs[j]["memory_id"] != old[j]["memory_id"] for j in changed):
            return False
        if not changed and len(recs) == k:  # the same records (a commit of pending ones): all of it carries over
            self.recs = old
            self._set_columns(prev.mat, prev.hard, prev.soft, prev.updated, prev.importance, prev.stale_status)
            self._codes, self._postings, self._pos, self._bases = prev._codes, prev._postings, prev._pos, prev._bases
            self._masks, self.rivals = prev._masks, prev.rivals
            return True
        redo = changed + list(range(k, len(recs)))
        cols = self._columns([recs[j] for j in redo], dim)
        self._set_columns(*(_merged(before, fresh, changed) for before, fresh in zip(
            (prev.mat, prev.hard, prev.soft, prev.updated, prev.importance, prev.stale_status), cols)))
        if prev._codes is not None:  # a name's code is its first row's; a mask looks codes up by name
            self._codes = {}
            for col, default in _CODED:
                before, names = prev._codes[col]
                names = dict(names)
                self._codes[col] = (_merged(before, _codes(recs, redo, col, default, names), changed), names)
        post = prev._postings
        if post is not None and all(S.doc_terms(recs[j]) == S.doc_terms(old[j]) for j in changed):
            acc = _term_rows(recs, range(k, len(recs)))
            if acc:
                post = dict(post)
                for t, js in acc.items():
                    had = post.get(t)
                    add = np.asarray(js, dtype=np.intp)
                    post[t] = add if had is None else np.concatenate((had, add))
            self._postings = post
        if prev._pos is not None:
            self._pos = prev._pos if len(recs) == k else {
                **prev._pos, **{recs[j]["memory_id"]: j for j in range(k, len(recs))}}
        if prev._bases is not None:
            self._bases = prev._bases + [None] * (len(recs) - k)
            for j in changed:
                self._bases[j] = None
        return True

    def base(self, j: int) -> dict:
        """Record ``j``'s hit fields (``hit_base``), kept: a hit is a copy of it with its scores
        (the comprehension over HIT_FIELDS per hit was a third of a hot recall)."""
        if self._bases is None:
            self._bases = [None] * len(self.recs)
        b = self._bases[j]
        if b is None:
            b = self._bases[j] = hit_base(self.recs[j])
        return b

    def rival_map(self) -> dict[str, list[dict]]:
        """Entity key -> the scope's live records of that fact, by id: what conflict resolution
        asks of a scope (the state's ``live_ids``, read from this index's own records)."""
        if self.rivals is None:
            acc: dict[str, list[dict]] = {}
            for r in self.recs:
                if r.get("entity_key") is not None:
                    acc.setdefault(r["entity_key"], []).append(r)
            self.rivals = {k: sorted(v, key=lambda r: r["memory_id"]) for k, v in acc.items()}
        return self.rivals

    def position(self, memory_id: str) -> int | None:
        if self._pos is None:
            self._pos = {r["memory_id"]: j for j, r in enumerate(self.recs)}
        return self._pos.get(memory_id)

    def _coded(self) -> dict:
        """Sensitivity, category and source kind of each memory as small ints (built on first
        use): a recall's filter becomes a lookup per column, not a loop over records."""
        if self._codes is None:
            out = {}
            for col, default in _CODED:
                names: dict[str, int] = {}
                out[col] = (_codes(self.recs, range(len(self.recs)), col, default, names), names)
            self._codes = out
        return self._codes

    def mask(self, flt, scope: str) -> np.ndarray | None:
        """Which memories a ``core.visibility.RecallFilter`` lets through (None: all of them)."""
        allowed = flt.sensitivities.get(scope, frozenset())
        rule, where = flt.rule, flt.where
        if rule is None and where is None and allowed == ALL:
            return None
        key = (allowed, rule, where)
        got = self._masks.get(key)
        if got is None:
            if len(self._masks) >= 16:
                self._masks.clear()
            got = self._masks[key] = self._mask(flt, allowed, rule, where)
        return got

    def _mask(self, flt, allowed, rule, where) -> np.ndarray:
        n = len(self.recs)
        coded = self._coded()

        def among(col: str, values) -> np.ndarray:
            codes, names = coded[col]
            ok = np.zeros(len(names) + 1, dtype=bool)
            ok[[names[v] for v in values if v in names]] = True
            return ok[codes] if n else np.zeros(0, dtype=bool)

        keep = among("sensitivity", allowed)
        if rule is not None:
            if rule.categories is not None:
                keep &= among("category", rule.categories)
            if rule.source_kinds is not None:
                keep &= among("source_kind", rule.source_kinds)
        if where is not None:
            if where.category is not None:
                keep &= among("category", (where.category,))
            if where.source_kind is not None:
                keep &= among("source_kind", (where.source_kind,))
            if where.since is not None:
                keep &= self.updated >= where.since
            if where.until is not None:
                keep &= self.updated < where.until
            if where.subject is not None or where.predicate is not None:  # exact fields: few scopes ask
                keep &= np.fromiter((flt.keep(r) for r in self.recs), dtype=bool, count=n)
        return keep

    def postings(self) -> dict[str, np.ndarray]:
        """Term -> positions of the memories holding it (built on first use)."""
        if self._postings is None:
            acc = _term_rows(self.recs, range(len(self.recs)))
            self._postings = {t: np.asarray(p, dtype=np.intp) for t, p in acc.items()}
        return self._postings

    def at(self, now_us: int, weights: S.Weights) -> tuple:
        """(``scoring.fixed_terms``, stale, not hard-expired) of the memories at ``now_us``: kept
        for the next recall at the same time and weights (a simulated tick's recalls share
        both; the index is of one generation, so nothing else changes them). Read only."""
        got = self._at
        if got is None or got[0] != now_us or (got[1] is not weights and got[1] != weights):
            got = self._at = (now_us, weights, (
                S.fixed_terms(self.updated, self.importance, now_us, weights),
                self.stale_status | (self.soft <= now_us), self.hard > now_us))
        return got[2]

    def score(self, qvec: np.ndarray | None, qterms: S.QueryTerms, now_us: int, weights: S.Weights, m: int,
              keep: np.ndarray | None = None) -> tuple[list[dict], Scored | None]:
        """The ``m`` best live memories of the scope not hard-expired at ``now_us`` (and passing
        ``keep``, a recall filter's mask), scored, and the scope's scores (``Scored``: the hit
        of any other of them on demand, e.g. an entity-key rival conflict resolution needs).
        ``qvec`` None: a listing, the ``m`` newest."""
        if not self.recs:
            return [], None
        n = len(self.recs)
        fixed, stale, ok = self.at(now_us, weights)
        if qvec is None:
            cos, keyword = np.zeros(n), np.zeros(n)
        else:
            cos, keyword = S.cosines(self.mat, qvec), qterms.over_postings(self.postings(), n)
        fused, comps, rel = S.score_with(cos, keyword, fixed, stale, weights)
        if keep is not None:
            ok = ok & keep
        live = np.flatnonzero(ok)
        if live.size > m:  # dicts only for what can matter: building one per memory dominated
            live = _best(live, fused if qvec is not None else self.updated, m, self.recs)
        scored = Scored(self, fused, comps, stale, rel, cos, ok)
        return scored.hits(live), scored


class _Items:
    """Records and their vectors as a ``HotIndex`` reads a scope's state (``HotIndex.of_items``)."""

    __slots__ = ("recs", "vectors", "gen")

    def __init__(self, recs: list[dict], vectors: dict) -> None:
        self.recs, self.vectors, self.gen = recs, vectors, 0

    def live(self) -> list[dict]:
        return self.recs


class Scored:
    """One recall's scores of one hot scope: the hit of any of its memories, built when asked."""

    __slots__ = ("idx", "fused", "comps", "stale", "rel", "cos", "ok")

    def __init__(self, idx: HotIndex, fused, comps, stale, rel, cos, ok) -> None:
        self.idx, self.fused, self.comps, self.stale, self.rel, self.cos, self.ok = (idx, fused, comps, stale, rel,
                                                                                    cos, ok)

    def hit(self, j: int) -> dict:
        return hit(self.idx.recs[j], self.fused[j], {k: float(v[j]) for k, v in self.comps.items()}, self.stale[j],
                   self.rel[j], self.cos[j])

    def hits(self, js: np.ndarray) -> list[dict]:
        """The hits of rows ``js``, as ``hit`` makes them (the same values: each array's rows
        read once as Python numbers, not one numpy scalar at a time)."""
        if not len(js):
            return []
        fused, rel, cos = self.fused[js].tolist(), self.rel[js].tolist(), self.cos[js].tolist()
        stale = self.stale[js].tolist()
        names = list(self.comps)
        comps = list(zip(*(self.comps[k][js].tolist() for k in names)))
        base, out = self.idx.base, []
        for i, j in enumerate(js.tolist()):
            h = dict(base(j))
            h["score"], h["relevance"], h["similarity"] = fused[i], rel[i], cos[i]
            h["components"] = dict(zip(names, comps[i]))
            h["stale"] = stale[i]
            out.append(h)
        return out

    def hit_of(self, memory_id: str) -> dict | None:
        """The hit of this live memory (None: not live here, hard-expired or filtered out)."""
        j = self.idx.position(memory_id)
        return self.hit(j) if j is not None and self.ok[j] else None


class HotCache:
    """The hot scopes of one owner: states (LRU), their indexes, and where hot memories live."""

    def __init__(self, max_memories: int, dim: int) -> None:
        self.max_memories = int(max_memories)
        self.dim = int(dim)
        self.states: OrderedDict[str, ScopeState] = OrderedDict()
        self._indexes: dict[str, HotIndex] = {}
        self.where: dict[str, str] = {}  # memory id -> scope, for live and pending hot records
        # Held while a staged batch is written into its states (``commit``) and while an index is
        # built from one: a reader on another thread never sees a state half changed.
        self.lock = threading.Lock()

    def __contains__(self, scope: str) -> bool:
        return scope in self.states

    def get(self, scope: str) -> ScopeState | None:
        return self.states.get(scope)

    def touch(self, scope: str) -> None:
        if scope in self.states:
            self.states.move_to_end(scope)

    def install(self, scope: str, state: ScopeState) -> None:
        """Put a new state of a scope in (loaded, rebuilt): readers keep the index they hold."""
        if state.base is not None:
            raise ValueError("a staged state is committed, not installed")
        with self.lock:
            old = self.states.get(scope)
            self.states[scope] = state
            self.states.move_to_end(scope)
            if old is not None:
                for mid in old.records.keys() - state.records.keys():
                    if self.where.get(mid) == scope:
                        del self.where[mid]
            self.where.update(dict.fromkeys(state.records, scope))

    def commit(self, scope: str, staged: ScopeState) -> None:
        """Write a batch's staged state of a hot scope into it, in time proportional to what
        the batch changed."""
        base = staged.base
        if self.states.get(scope) is not base:  # dropped meanwhile (``drop_hot``): back in, as committed
            staged.commit()
            self.install(scope, base)
            return
        with self.lock:
            changed = staged.commit()
            for mid in changed:
                if mid in base.records:
                    self.where[mid] = scope
                elif self.where.get(mid) == scope:
                    del self.where[mid]
            self.states.move_to_end(scope)

    def apply_bulk(self, changes: list) -> None:
        """A bulk operation's committed changes (a sweep's share) on the hot states themselves,
        not staged first (``ScopeCore._decide_and_commit``), under the lock as a commit is."""
        with self.lock:
            apply_bulk(self.states.get, changes)
            for scope in {ch.scope for ch in changes}:
                if (state := self.states.get(scope)) is not None:
                    state.gen += 1  # its hot index is of the last generation
            where, states = self.where, self.states
            for ch in changes:  # the memories that left their scope's state leave the map
                if where.get(ch.memory_id) == ch.scope and ch.memory_id not in states[ch.scope].records:
                    del where[ch.memory_id]

    def discard(self, scope: str) -> None:
        """Drop a scope's state (its next use loads it again)."""
        old = self.states.pop(scope, None)
        self._indexes.pop(scope, None)
        if old is not None:
            for mid in old.records:
                if self.where.get(mid) == scope:
                    del self.where[mid]

    def index(self, scope: str) -> HotIndex | None:
        st = self.states.get(scope)
        if st is None:
            return None
        idx = self._indexes.get(scope)
        if idx is None or idx.state is not st or idx.gen != st.gen:
            with self.lock:  # built from one committed generation
                st = self.states.get(scope)
                if st is None:
                    return None
                idx = self._indexes.get(scope)
                if idx is None or idx.state is not st or idx.gen != st.gen:
                    idx = self._indexes[scope] = HotIndex(st, self.dim, idx)
        return idx

    def rivals(self, cands: list[dict], scopes: list[str]) -> list[dict]:
        """Live memories of these hot scopes sharing an entity key with a candidate (conflict
        resolution needs them even when they scored below the cut), as the scopes' indexes hold them."""
        keys = entity_keys(cands)
        if not keys:
            return []
        seen = {c["memory_id"] for c in cands}
        out = []
        for s in scopes:
            idx = self.index(s)
            if idx is None:
                continue
            rivals = idx.rival_map()
            for key in keys & rivals.keys():
                out += [r for r in rivals[key] if r["memory_id"] not in seen]
        return out

    def size(self) -> int:
        return sum(len(st.records) for st in self.states.values())

    def evict(self, busy: set[str]) -> None:
        """Drop least recently used scopes until within the bound; never a ``busy`` one (locked,
        or with changes not yet in L2)."""
        total = self.size()
        for s in list(self.states):
            if total <= self.max_memories:
                break
            if s in busy:
                continue
            st = self.states.pop(s)
            self._indexes.pop(s, None)
            total -= len(st.records)
            for mid in st.records:
                if self.where.get(mid) == s:
                    del self.where[mid]

    def clear(self) -> None:
        self.states.clear()
        self._indexes.clear()
        self.where.clear()

