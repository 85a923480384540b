"""An owner's hot state without Ray: where each hot memory lives (``HotCache``), and semantic
dedup's per-scope vector cache (``NearCopies``): reused across batches, grown in place by each
committed batch (an uncommitted one leaves it as it was), and never missing a live memory."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memactors.engine.hot import HotCache, NearCopies
from memactors.engine.near import TIE
from memactors.core.versions import ScopeState

DIM = 8


def unit(i: int) -> np.ndarray:
    v = np.zeros(DIM, np.float32)
    v[i % DIM] = 1.0
    if i >= DIM:  # a second family of directions, still far from the first
        v[(i + 1) % DIM] = 1.0
        v /= np.linalg.norm(v)
    return v


def rec(mid: str, status: str = "active") -> dict:
    return {"memory_id": mid, "entity_key": None, "status": status, "content_hash": f"h-{mid}", "version": 1}


def batch(parent: ScopeState, writes: dict[str, np.ndarray], commit: bool = True) -> ScopeState:
    """What the owner does for one batch: stage, find near copies, add, keep, commit."""
    st = parent.stage()
    near = NearCopies(st, 0.95)
    for mid, v in writes.items():
        assert near.find(v) is None
        st.put(rec(mid), v)
        near.add(mid, v)
    if commit:
        near.keep()
        st.commit()
    return parent


def test_cache_is_reused_and_grown_in_place():
    s1 = batch(ScopeState(), {"a": unit(0), "b": unit(1)})
    buf = s1.near_cache.buf
    batch(s1, {"c": unit(2)})
    assert s1.near_cache.buf is buf  # room to spare: no copy
    assert s1.near_cache.ids == ["a", "b", "c"] and s1.gen == 2
    near = NearCopies(s1.stage(), 0.95)
    assert [near.find(unit(i)) for i in range(4)] == ["a", "b", "c", None]


@settings(max_examples=30, deadline=None)
@given(st.lists(st.integers(1, 4), min_size=1, max_size=12), st.integers(0, 2**31))
def test_a_cache_grown_batch_by_batch_summarises_its_rows_as_one_stacked_whole(sizes, seed):
    # one row a batch takes its own path (no np.stack, no np.linalg.norm): the screen's bounds
    # must be those of the rows stacked at once
    from memactors.engine.hot import _NearCache

    rng = np.random.default_rng(seed)
    rows = [v / np.linalg.norm(v) for v in rng.standard_normal((sum(sizes), 64)).astype(np.float32)]
    cache, at = _NearCache.of([], None, ["0"], rows[:1]), 1
    for k in sizes[1:]:
        cache.extend([str(i) for i in range(at, at + k)], rows[at:at + k])
        at += k
    whole = _NearCache.of([], None, [str(i) for i in range(at)], rows[:at])
    n = len(whole.ids)
    assert cache.ids == whole.ids and np.array_equal(cache.rows(), whole.rows())
    assert np.array_equal(cache.head[:n], whole.head[:n])
    assert np.allclose(cache.tail[:n], whole.tail[:n], rtol=1e-6, atol=0)


def test_a_batch_not_committed_changes_nothing():
    parent = batch(ScopeState(), {"a": unit(0)})
    cache, gen = parent.near_cache, parent.gen
    batch(parent, {"l": unit(1)}, commit=False)  # its ledger group failed: staged, never committed
    assert parent.near_cache is cache and cache.ids == ["a"] and parent.gen == gen
    assert set(parent.records) == {"a"} and set(parent.vectors) == {"a"}
    assert NearCopies(parent.stage(), 0.95).find(unit(1)) is None
    batch(parent, {"r": unit(2)})
    near = NearCopies(parent.stage(), 0.95)
    assert [near.find(unit(i)) for i in range(3)] == ["a", None, "r"]


def test_growth_past_the_buffer_keeps_every_row():
    st = ScopeState()
    for i in range(0, 40, 3):
        batch(st, {f"m{j}": unit(j) for j in range(i, min(i + 3, 12))} if i < 12 else {})
    near = NearCopies(st.stage(), 0.95)
    assert [near.find(unit(j)) for j in range(12)] == [f"m{j}" for j in range(12)]


def test_a_dead_memory_is_masked_and_a_live_one_outside_the_cache_rebuilds_it():
    s1 = batch(ScopeState(), {"a": unit(0), "b": unit(1)})
    s2 = s1.stage()
    s2.put(rec("a", "superseded"))  # gone from the hot state: its cached row must not match
    s2.put(rec("x"), unit(5))  # live, text-only, added outside NearCopies (e.g. revived)
    near = NearCopies(s2, 0.95)
    assert near.find(unit(0)) is None
    assert near.find(unit(5)) == "x"  # the cache missed it, so it was rebuilt
    assert near.find(unit(1)) == "b"
    s2.commit()  # committed without its batch's cache: the state's is dropped, not trusted
    assert s1.near_cache is None
    near = NearCopies(s1.stage(), 0.95)
    assert [near.find(unit(0)), near.find(unit(5)), near.find(unit(1))] == [None, "x", "b"]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from("ab"), st.sets(st.integers(0, 12), max_size=8), st.booleans()),
                max_size=12))
def test_where_names_the_scope_of_every_hot_memory_and_nothing_else(steps):
    # A state swapped in whole (install), a scope dropped (discard): ``where`` is updated by
    # what changed, and must equal what a full recount gives.
    cache = HotCache(10_000, DIM)
    for scope, mids, drop in steps:
        if drop:
            cache.discard(scope)
            continue
        state = ScopeState()
        for m in mids:
            state.put(rec(f"{scope}{m}"), unit(m))
        cache.install(scope, state)
        assert cache.where == {mid: s for s, stt in cache.states.items() for mid in stt.records}


def _brute(st: ScopeState, base: list, extra: list, v, threshold: float, similar_cos: float, k: int = 3):
    """find and similar by a scan in order: the reference the vectorised lookups must match
    (``base``: the scope's memories when the batch began; ``extra``: those it added since)."""
    live = [m for m in base if st.by_hash.get(st.records[m]["content_hash"]) == m]
    cos = {m: float(st.vectors[m] @ v) for m in live}
    # the scope's and the batch's own alike (as had they come earlier)
    cos.update({mid: float(x @ v) for mid, x in extra if st.by_hash.get(st.records[mid]["content_hash"]) == mid})
    over = {m: c for m, c in cos.items() if c >= threshold}
    found = None
    if over:  # the closest; of those equal to it (within float32's rounding), the oldest
        top = max(over.values())
        found = min((m for m, c in over.items() if c >= top - TIE), key=lambda m: (st.records[m].get("created_at") or 0, m))
    # the k closest live ones
    near = sorted((m for m in cos if cos[m] >= similar_cos), key=lambda m: -cos[m])
    # and those tied with the k-th (as equal, within float32's rounding)
    cut = cos[near[k - 1]] - TIE if len(near) >= k else None
    near = [m for i, m in enumerate(near) if i < k or cos[m] >= cut][: 4 * k]
    # a cosine on the tie's edge itself may fall either side: the lookups sum the same float32
    # products in another order (a matrix product), ~1e-7 apart (seed 32 of the test below: two
    # cosines 9.96e-6 apart, tied by one sum and not by the other)
    edge = set() if cut is None else {m for m in cos if abs(cos[m] - cut) < 1e-6}
    return found, near, edge


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(0, 40), st.integers(1, 30))
def test_lookups_match_a_scan_in_order(seed, n_old, n_new):
    _lookups_match_a_scan_in_order(seed, n_old, n_new)


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(NearCopies.SMALL + 1, 200), st.integers(1, 80))
def test_lookups_in_a_big_scope_match_a_scan_in_order(seed, n_old, n_new):
    """Past ``NearCopies.SMALL`` memories (and batch additions) ``similar`` ranks with numpy."""
    _lookups_match_a_scan_in_order(seed, n_old, n_new)


def _lookups_match_a_scan_in_order(seed, n_old, n_new):
    rng = np.random.default_rng(seed)
    vecs = rng.normal(size=(n_old + n_new + 5, DIM)).astype(np.float32)
    vecs[: n_old + n_new] += 2.0  # many candidates over the cuts, as in one busy scope
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    old = ScopeState()
    for i in range(n_old):
        old.put(rec(f"o{i}"), vecs[i])
    stt = old.stage()
    base = [m for m in old.by_hash.values() if m in old.vectors]
    near, extra = NearCopies(stt, 0.97, similar_cos=0.5), []
    probes = [vecs[n_old + n_new + j % 5] if j % 3 == 0 else vecs[n_old + j] for j in range(n_new)]
    if seed % 2:  # the batch's cosines from one product, as the owner asks: the same answers
        near.prefetch(probes)
    for j in range(n_new):
        v = vecs[n_old + j]
        probe = probes[j]
        want_found, want_near, edge = _brute(stt, base, extra, probe, 0.97, 0.5)
        got_near = near.similar(probe)
        assert near.find(probe) == want_found
        assert len(got_near) == len(set(got_near)) and set(got_near) ^ set(want_near) <= edge, (got_near, want_near)
        stt.put(rec(f"n{j}"), v)
        near.add(f"n{j}", v)
        extra.append((f"n{j}", v))


@pytest.mark.parametrize("prefetched", [False, True])
def test_similar_looks_past_the_best_candidates_no_longer_live(prefetched):
    """A scope held hot for long keeps the rows of memories since superseded (masked, not
    removed): when they are the closest ones, ``similar`` still names the closest live ones,
    as a scope loaded afresh would (only those rows) - a contradiction was missed otherwise."""
    rng = np.random.default_rng(7)
    probe = unit(0)
    old = ScopeState()
    n = NearCopies.SMALL + 20
    for i in range(n):  # the first 20 the closest to the probe, all of them over the cut
        v = probe + (0.01 if i < 20 else 0.3) * rng.normal(size=DIM).astype(np.float32)
        old.put(rec(f"m{i}"), v / np.linalg.norm(v))
    cos = {f"m{i}": float(old.vectors[f"m{i}"] @ probe) for i in range(n)}
    assert min(cos[f"m{i}"] for i in range(20)) > max(cos[f"m{i}"] for i in range(20, n)) > 0.5
    st = old.stage()  # a batch that supersedes the 20: their rows stay in the scope's cache
    NearCopies(st, 0.97, similar_cos=0.5).keep()
    keeper = NearCopies(st, 0.97, similar_cos=0.5)
    keeper.similar(unit(5))
    for i in range(20):
        st.put(rec(f"m{i}", "superseded"))
    keeper.keep()
    st.commit()
    assert len(old.near_cache.ids) == n
    near = NearCopies(old.stage(), 0.97, similar_cos=0.5)
    if prefetched:
        near.prefetch([probe, unit(3)])
    assert near.similar(probe) == sorted((f"m{i}" for i in range(20, n)), key=lambda m: -cos[m])[:3]


@pytest.mark.parametrize("committed", [0, 2, 5])
def test_similar_keeps_every_candidate_tied_with_the_third(committed):
    """Five memories with one vector (the same words in another order): all five are
    candidates, whichever of them the scope held before the batch and whichever it wrote."""
    v = unit(2)
    old = ScopeState()
    for i in range(committed):
        old.put(rec(f"t{i}"), v)
    st = old.stage()
    near = NearCopies(st, 0.999, similar_cos=0.5)
    for i in range(committed, 5):
        st.put(rec(f"t{i}"), v)
        near.add(f"t{i}", v)
    st.put(rec("far"), unit(3))
    assert sorted(near.similar(v)) == [f"t{i}" for i in range(5)]


def test_similar_ranks_the_batchs_own_writes_with_the_scopes():
    """A batch's earlier writes compete with the scope's memories by cosine: the closest
    three, wherever they came from, not the first ones over the cut."""
    st = ScopeState().stage()
    near = NearCopies(st, 0.99, similar_cos=0.5)
    probe = unit(0)
    for i, w in enumerate([0.6, 0.7, 0.8, 0.95, 0.9]):  # cosines with the probe, in the order written
        v = w * unit(0) + np.sqrt(1 - w * w) * unit(1 + i)
        st.put(rec(f"b{i}"), v)
        near.add(f"b{i}", v)
    assert near.similar(probe) == ["b3", "b4", "b2"]


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 60), st.integers(1, 30))
def test_hits_of_a_scored_scope_are_the_hits_one_by_one(seed, n, m):
    """``Scored.hits`` (the rows read at once) gives exactly what ``hit`` gives row by row:
    values, their Python types and the key order a caller serialises."""
    from memactors.core import records as R
    from memactors.core import scoring as S
    from memactors.engine.hot import HotIndex, hit

    rng = np.random.default_rng(seed)
    state = ScopeState()
    for i in range(n):
        r = {k: None for k in R.HIT_FIELDS}
        r.update(rec(f"m{i}", "stale" if rng.random() < 0.2 else "active"), content=f"text {i} tea",
                 search_text=f"text {i} tea", importance=float(rng.random()), updated_at=int(rng.integers(0, 10**15)),
                 soft_expires_at=int(rng.integers(0, 2 * 10**15)) if rng.random() < 0.3 else None,
                 hard_expires_at=int(rng.integers(10**15, 3 * 10**15)) if rng.random() < 0.3 else None)
        v = rng.normal(size=DIM).astype(np.float32)
        state.put(r, v / np.linalg.norm(v))
    idx = HotIndex(state, DIM)
    q = rng.normal(size=DIM).astype(np.float32)
    best, scored = idx.score(q / np.linalg.norm(q), S.QueryTerms(["tea", "text"]), 2 * 10**15, S.Weights(), m)
    live = np.flatnonzero(scored.ok)
    one_by_one = [hit(idx.recs[j], scored.fused[j], {k: float(v[j]) for k, v in scored.comps.items()},
                      scored.stale[j], scored.rel[j], scored.cos[j]) for j in live]
    at_once = scored.hits(live)
    assert at_once == one_by_one
    assert [list(h) for h in at_once] == [list(h) for h in one_by_one]
    assert [[type(v) for v in h.values()] for h in at_once] == [[type(v) for v in h.values()] for h in one_by_one]
    assert all(h in one_by_one for h in best) and len(best) == min(m, len(live))


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(NearCopies.SCREEN_FROM, 150), st.integers(0, 10))
def test_a_screened_lookup_finds_what_the_whole_product_finds(seed, n_old, n_dead):
    """A scope's cached matrix is screened by its rows' first quarter and the rest's norms:
    find() names what a scan in order names, for copies, probes a little either side of the
    threshold, far ones, and closest rows that are no longer live."""
    rng = np.random.default_rng(seed)
    dim = 384
    vecs = rng.normal(size=(n_old, dim)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    parent = ScopeState()
    first = NearCopies(parent.stage(), 0.95)
    st_ = first.state
    assert first.find(vecs[0]) is None  # built (empty), as an owner's first lookup builds it
    for i in range(n_old):
        st_.put(rec(f"o{i}"), vecs[i])
        first.add(f"o{i}", vecs[i])
    first.keep()
    st_.commit()
    stt = parent.stage()
    for i in rng.choice(n_old, size=min(n_dead, n_old), replace=False).tolist():
        stt.remove(f"o{i}")  # still a row of the cache: masked by find
    base = [m for m in parent.near_cache.ids if m in stt.records]
    near = NearCopies(stt, 0.95)
    for j in range(40):
        src = vecs[int(rng.integers(n_old))]
        noise = rng.normal(size=dim).astype(np.float32)
        if j % 2:  # moved in the first quarter only: the screen's bound is then the cosine itself
            noise[dim // 4:] = 0.0
        noise -= (noise @ src) * src
        noise /= np.linalg.norm(noise)
        c = (1.0, 0.97, 0.951, 0.9499, 0.95, 0.9501, 0.94, 0.5, 0.0)[j % 9]  # the probe's cosine with its source
        probe = (c * src + np.sqrt(max(0.0, 1 - c * c)) * noise).astype(np.float32)
        want, _, _ = _brute(stt, base, [], probe, 0.95, 2.0)
        assert near.find(probe) == want
    assert near._cache is not None and len(near.ids) >= NearCopies.SCREEN_FROM  # the screen was used


def _hit_rec(mid: str, rng, words=("tea", "coffee", "window", "seat", "rust", "ray")) -> dict:
    from memactors.core import records as R

    r = {k: None for k in R.HIT_FIELDS}
    r.update(rec(mid, "stale" if rng.random() < 0.2 else "active"),
             search_text=" ".join(rng.choice(words, size=int(rng.integers(1, 4)))),
             importance=float(rng.random()), updated_at=int(rng.integers(0, 10**15)),
             soft_expires_at=int(rng.integers(0, 2 * 10**15)) if rng.random() < 0.3 else None,
             hard_expires_at=int(rng.integers(10**15, 3 * 10**15)) if rng.random() < 0.3 else None,
             sensitivity=str(rng.choice(["internal", "confidential", "secret"])),
             category=str(rng.choice(["default", "preference", "policy"])), source_kind=str(rng.choice(["user", "tool"])))
    return r


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 12))
def test_an_index_grown_from_the_last_generation_is_the_index_built_whole(seed, rounds):
    """A scope's next hot index reuses the last one's rows when memories were only replaced or
    added (``HotIndex._grow``): the same rows, keyword postings, codes, positions and hit fields
    as an index built from nothing, whatever of the last one's lazy parts were built; and a
    generation that dropped a memory is built whole."""
    from memactors.engine.hot import HotIndex

    rng = np.random.default_rng(seed)
    state, ids, prev = ScopeState(), [], None
    for r in range(rounds):
        staged = state.stage()
        for _ in range(int(rng.integers(0, 6))):  # new memories
            mid = f"m{r}-{len(ids)}"
            ids.append(mid)
            v = rng.normal(size=DIM).astype(np.float32)
            staged.put(_hit_rec(mid, rng), v / np.linalg.norm(v))
        live = [m for m in ids if staged.get(m) is not None and staged.get(m)["status"] in ("active", "stale")]
        for mid in rng.permutation(live)[: int(rng.integers(0, 3))].tolist():  # replaced: a refresh, new words
            new = dict(staged.get(mid), updated_at=int(rng.integers(0, 10**15)), importance=float(rng.random()))
            if rng.random() < 0.3:
                new["search_text"] = "changed words"
            if rng.random() < 0.2:
                new["sensitivity"] = "secret-ish"
            staged.put(new, staged.vectors[mid])
        if live and rng.random() < 0.2:  # a memory leaves (superseded or removed): built whole
            mid = live[int(rng.integers(len(live)))]
            if rng.random() < 0.5:
                staged.remove(mid)
            else:
                staged.put(dict(staged.get(mid), status="superseded"), staged.vectors[mid])
        staged.commit()
        grown, whole = HotIndex(state, DIM, prev), HotIndex(state, DIM)
        assert grown.recs == whole.recs and [id(x) for x in grown.recs] == [id(x) for x in whole.recs]
        for f in ("mat", "hard", "soft", "updated", "importance", "stale_status"):
            a, b = getattr(grown, f), getattr(whole, f)
            assert a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b), f
        pa, pb = grown.postings(), whole.postings()
        assert pa.keys() == pb.keys() and all(np.array_equal(pa[t], pb[t]) and pa[t].dtype == pb[t].dtype for t in pa)
        ca, cb = grown._coded(), whole._coded()
        for col in ca:
            for name in set(ca[col][1]) | set(cb[col][1]):
                rows_a = ca[col][0] == ca[col][1].get(name, -1)
                rows_b = cb[col][0] == cb[col][1].get(name, -1)
                assert np.array_equal(rows_a, rows_b), (col, name)
        assert all(grown.position(m) == whole.position(m) for m in ids)
        assert [grown.base(j) for j in range(len(grown.recs))] == [whole.base(j) for j in range(len(whole.recs))]
        prev = HotIndex(state, DIM, prev)  # the runtime's own chain, its lazy parts built at random
        if rng.random() < 0.6:
            prev.postings()
        if rng.random() < 0.5:
            prev._coded()
        if rng.random() < 0.5:
            prev.position("m0-0")
        if rng.random() < 0.5 and prev.recs:
            prev.base(0)


@settings(max_examples=80, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 12), st.integers(1, 6), st.booleans())
def test_working_items_scored_as_an_index_are_their_score_rows_hits(seed, n, m, listing):
    """A scope's working items scored through ``HotIndex.of_items`` (as a recall scores them)
    give exactly the best ``m`` of ``score_rows`` over the items the recall keeps: values, ties
    (copies of one text at one time, by id), key order and types; a listing, the m newest."""
    from memactors.core import scoring as S
    from memactors.engine.hot import HotIndex, score_rows
    from memactors.engine.recall import _best_first

    rng = np.random.default_rng(seed)
    recs, vectors = [], {}
    for i in range(n):
        r = _hit_rec(f"w{int(rng.integers(100))}-{i}", rng)
        if rng.random() < 0.15:
            r["status"] = "pending"
        if i and rng.random() < 0.3:  # a copy of the last item: equal scores, ranked by id
            r = dict(recs[-1], memory_id=r["memory_id"])
            vectors[r["memory_id"]] = vectors[recs[-1]["memory_id"]]
        else:
            v = rng.normal(size=DIM).astype(np.float32)
            vectors[r["memory_id"]] = v / np.linalg.norm(v)
        recs.append(r)
    now = 2 * 10**15
    q = rng.normal(size=DIM).astype(np.float32)
    q = None if listing else q / np.linalg.norm(q)
    qterms = S.QueryTerms(["tea", "window", "ray"])
    served = [r for r in recs if r["status"] in ("active", "stale")]
    keep = rng.random(len(served)) < 0.8
    kept = [r for r, k in zip(served, keep) if k and (r["hard_expires_at"] is None or r["hard_expires_at"] > now)]
    cos = S.cosines(np.stack([vectors[r["memory_id"]] for r in kept]), q) if kept and q is not None \
        else np.zeros(len(kept))
    want = score_rows(kept, cos, None if listing else qterms, now, S.Weights())
    if listing:
        want = sorted(want, key=lambda h: (-h["updated_at"], h["memory_id"]))[:m]
    else:
        want = _best_first(want)[:m]
    idx = HotIndex.of_items(served, vectors, DIM)
    for _ in range(2):  # the second at the same time: its fixed terms kept
        got = idx.score(q, qterms, now, S.Weights(), m, keep)[0] if served else []
        got = sorted(got, key=lambda h: (-h["updated_at"], h["memory_id"])) if listing else _best_first(got)
        assert got == want
        assert [list(h) for h in got] == [list(h) for h in want]
        assert [[type(v) for v in h.values()] for h in got] == [[type(v) for v in h.values()] for h in want]
        assert [repr(h) for h in got] == [repr(h) for h in want]  # the same floats, -0.0 and all
