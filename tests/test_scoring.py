"""Fused recall scoring: absolute component maps, fusion, staleness, the keyword share, BM25 (the
benchmarks' baseline), conflicts (pure)."""

from __future__ import annotations

import ast
import pathlib

import numpy as np
import pytest

from memactors.core import scoring as S

DAY = S.US_PER_DAY
NOW = 1_767_225_600_000_000


def test_components_are_absolute_maps_into_unit_interval():
    assert S.vector_component([-1.0, -0.2, 0.0, 0.3, 1.0]).tolist() == [0.0, 0.0, 0.0, 0.3, 1.0]
    assert S.keyword_component([-0.1, 0.0, 0.5, 1.0, 2.0]).tolist() == [0.0, 0.0, 0.5, 1.0, 1.0]
    rec = S.recency_component([NOW, NOW - 30 * DAY, NOW - 60 * DAY, NOW + DAY], NOW, half_life_days=30)
    assert rec.tolist() == pytest.approx([1.0, 0.5, 0.25, 1.0])
    assert S.importance_component([-1, 0.3, 2]).tolist() == pytest.approx([0.0, 0.3, 1.0])  # as stored: float32


def test_keyword_share_depends_on_the_query_and_the_memory_alone():
    # No corpus statistics: the same memory gets the same share in a scope of one memory and
    # among a thousand, and whatever else the query returned (min-max, or BM25's IDF over a tiny
    # corpus, gave an exact match 0.15 in a scope of one).
    q = S.QueryTerms(S.tokenize("Alice prefers window seats"))
    exact = frozenset(S.tokenize("Alice prefers window seats"))
    assert q.score(exact) == 1.0
    assert q.score(frozenset(S.tokenize("Bob drinks coffee"))) == 0.0
    half = q.score(frozenset(S.tokenize("window seats are cold")))
    assert 0.0 < half < 1.0
    assert q.score(frozenset(S.tokenize("Alice prefers window seats on long flights, always"))) == 1.0
    zh = S.QueryTerms(S.tokenize("爱丽丝喜欢靠窗的座位"))
    assert zh.score(frozenset(S.tokenize("爱丽丝喜欢靠窗的座位"))) == 1.0
    assert 0.0 < zh.score(frozenset(S.tokenize("爱丽丝喜欢咖啡"))) < 0.5


def test_keyword_share_weighs_long_terms_and_drops_common_query_words():
    q = S.QueryTerms(S.tokenize("what's alice's favourite restaurant?"))
    assert q.terms == ("alice", "favourite", "restaurant")  # "what", "s" carry nothing
    assert q.score(frozenset(["restaurant"])) > q.score(frozenset(["alice"]))
    only_common = S.QueryTerms(S.tokenize("really, yeah"))
    assert only_common.terms == ("really", "yeah")  # nothing else left: the words themselves count
    assert S.QueryTerms([]).score(frozenset(["x"])) == 0.0
    assert S.term_weight("喜欢") == S.term_weight("abcd")  # a CJK character counts two


def test_keyword_share_over_postings_equals_the_per_row_share_exactly():
    rng = np.random.default_rng(3)
    vocab = [f"w{i}" for i in range(40)] + ["喜欢", "绿茶", "x"]
    docs = [frozenset(rng.choice(vocab, size=int(rng.integers(1, 12))).tolist()) for _ in range(200)]
    postings: dict = {}
    for i, d in enumerate(docs):
        for t in d:
            postings.setdefault(t, []).append(i)
    postings = {t: np.asarray(p) for t, p in postings.items()}
    for _ in range(30):
        q = S.QueryTerms(rng.choice(vocab, size=int(rng.integers(1, 6))).tolist())
        a = q.over_postings(postings, len(docs))
        b = q.scores(docs)
        assert a.tolist() == b.tolist()  # the same floats, not merely close


def test_a_rows_cosine_is_the_same_float_wherever_it_is_computed():
    """One memory's cosine, alone, among copies of itself, after a misaligned start: the same
    float (a matrix-vector product rounds a row by its position; equal scores then ranked apart
    in a hot index and in a scan of the same rows)."""
    rng = np.random.default_rng(5)
    for _ in range(20):
        v, q = rng.standard_normal((2, 384)).astype(np.float32)
        alone = float(S.cosines(v[None], q)[0])
        for n in (2, 3, 5, 9, 33, 130):
            for off in (0, 1, 3):
                buf = np.empty(n * 384 + off, np.float32)[off:].reshape(n, 384)
                buf[:] = v
                assert set(S.cosines(buf, q).tolist()) == {alone}


def test_fuse_default_weights_and_stale_factor():
    comps = {"vector": [1.0, 1.0], "keyword": [1.0, 1.0], "recency": [1.0, 1.0], "importance": [1.0, 1.0]}
    out = S.fuse({k: np.array(v) for k, v in comps.items()}, S.DEFAULT_WEIGHTS, stale=[False, True])
    assert out.tolist() == pytest.approx([1.0, 0.5])
    score, _, relevance = S.score_arrays([1.0, 1.0], [1.0, 1.0], [NOW, NOW], [1.0, 1.0], [False, True], NOW)
    assert relevance.tolist() == pytest.approx([1.0, 1.0])  # what the threshold judges
    assert score.tolist() == pytest.approx([1.0, 0.5])  # what ranks
    one = S.fuse({"vector": np.array([0.5]), "keyword": np.array([0.0])})
    assert one[0] == pytest.approx(0.4 * 0.5)


def _score_arrays_as_fused(cosine, keyword, updated, importance, stale, now_us, weights):
    """``score_arrays`` as it was before ``score_with``: each component, then ``fuse``."""
    comps = {"vector": S.vector_component(cosine), "keyword": S.keyword_component(keyword),
             "recency": S._nan_to_0(S.recency_component(updated, now_us)), "importance": S.importance_component(importance)}
    relevance = S.fuse(comps, weights)
    return np.where(np.asarray(stale, dtype=bool), relevance * S.STALE_FACTOR, relevance), comps, relevance


def _bits(a) -> bytes:
    return np.ascontiguousarray(a, dtype=np.float64).tobytes()  # -0.0 and NaNs told apart


@pytest.mark.parametrize("seed", range(40))
def test_score_arrays_gives_the_floats_of_its_components_fused(seed):
    """``score_arrays`` (``fixed_terms`` then ``score_with``, as a hot index asks) gives bit for bit
    what the components fused one by one give: odd values (-0.0, NaN, out of range, a future or
    missing update) and zero weights included."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(0, 40))
    odd = np.array([-0.0, 0.0, np.nan, -1.5, 1.5, 1.0, -1.0])
    cos = rng.uniform(-1.2, 1.2, n).astype(np.float32)
    kw = rng.uniform(0, 1, n)
    imp = rng.uniform(-0.2, 1.2, n)
    upd = (NOW - rng.integers(-5 * DAY, 400 * DAY, n)).astype(np.float64)
    for arr in (cos, kw, imp, upd):
        hit = rng.random(n) < 0.15
        arr[hit] = rng.choice(odd if arr is not upd else np.array([np.nan, float(NOW)]), int(hit.sum()))
    stale = rng.random(n) < 0.3
    w = rng.choice([0.0, 0.1, 0.25, 0.4, 1.0, 3.0], 4)
    weights = S.Weights(*w.tolist()) if w.sum() else S.DEFAULT_WEIGHTS
    want = _score_arrays_as_fused(cos, kw, upd, imp, stale, NOW, weights)
    got = S.score_arrays(cos, kw, upd, imp, stale, NOW, weights)
    fixed = S.fixed_terms(upd, imp, NOW, weights)
    again = S.score_with(cos, kw, fixed, stale, weights)  # fixed terms reused (a hot index's tick)
    for out in (got, again):
        assert _bits(out[0]) == _bits(want[0]) and _bits(out[2]) == _bits(want[2])
        assert list(out[1]) == list(want[1]) == list(S.COMPONENTS)
        assert all(_bits(out[1][k]) == _bits(want[1][k]) for k in S.COMPONENTS)


def test_weights_normalise_parse_and_refuse_nonsense():
    w = S.Weights.parse("2/1/1/0")
    assert w.normalised().as_tuple() == pytest.approx((0.5, 0.25, 0.25, 0.0))
    assert S.Weights.parse({"vector": 1, "keyword": 1, "recency": 0, "importance": 0}).normalised().vector == 0.5
    assert S.Weights.parse({"vector": 0.5}).keyword == 0.3  # unnamed components keep their defaults
    assert S.Weights.parse([0.4, 0.3, 0.2, 0.1]) == S.DEFAULT_WEIGHTS
    assert S.DEFAULT_WEIGHTS.label() == "0.4/0.3/0.2/0.1"
    for bad in ("1/2/3", "0/0/0/0", "-1/1/1/1", {"vectr": 1}):
        with pytest.raises(ValueError):
            S.Weights.parse(bad)


def test_score_candidates_ranks_and_records_components():
    cands = [
        {"memory_id": "a", "cosine": 0.9, "keyword": 0.0, "updated_at": NOW, "importance": 0.5},
        {"memory_id": "b", "cosine": 0.9, "keyword": 0.5, "updated_at": NOW, "importance": 0.5},
        {"memory_id": "c", "cosine": 0.9, "keyword": 0.5, "updated_at": NOW, "importance": 0.5, "status": "stale"},
        {"memory_id": "d", "cosine": -0.5, "updated_at": None},
    ]
    out = S.score_candidates(cands, NOW)
    assert [d["memory_id"] for d in out] == ["b", "a", "c", "d"]
    b = out[0]
    assert b["components"]["keyword"] == 0.5
    assert b["score"] == pytest.approx(0.4 * 0.9 + 0.3 * 0.5 + 0.2 * 1.0 + 0.1 * 0.5)
    assert out[2]["stale"] and out[2]["score"] == pytest.approx(b["score"] * S.STALE_FACTOR)
    assert out[2]["relevance"] == pytest.approx(b["score"])
    assert out[3]["score"] == 0.0 and "cosine" in out[3]  # inputs are kept, not mutated in place
    assert "score" not in cands[0]
    soft = S.score_candidates([dict(cands[0], soft_expires_at=NOW - 1)], NOW)[0]
    assert soft["stale"]


def test_tokenize_english_and_chinese():
    assert S.tokenize("What did Tim sign, in 2023?") == ["tim", "sign", "2023"]
    assert S.tokenize("用户喜欢绿茶") == ["用户", "户喜", "喜欢", "欢绿", "绿茶"]
    assert S.tokenize("Alice 喜欢 tea") == ["alice", "喜欢", "tea"]
    assert S.tokenize("茶") == ["茶"]


def test_keyword_index_bm25_the_benchmarks_baseline():
    ix = S.KeywordIndex()
    ix.add("1", S.tokenize("Alice likes green tea"))
    ix.add("2", S.tokenize("Bob likes coffee"))
    ix.add("3", S.tokenize("the weather is nice"))
    top = ix.top(S.tokenize("green tea?"), 3)
    assert [d for d, _ in top] == ["1"] and top[0][1] > 0
    both = ix.scores(S.tokenize("likes"))
    assert set(both) == {"1", "2"} and both["2"] > both["1"]  # shorter document, same tf
    ix.remove("1")
    assert ix.top(S.tokenize("green tea"), 3) == [] and len(ix) == 2
    ix.add("2", S.tokenize("Bob drinks tea"))  # re-adding replaces
    assert "2" in ix.scores(S.tokenize("tea")) and "2" not in ix.scores(S.tokenize("coffee"))
    cn = S.KeywordIndex()
    cn.add("x", S.tokenize("用户喜欢绿茶"))
    cn.add("y", S.tokenize("用户讨厌咖啡"))
    assert cn.top(S.tokenize("绿茶"), 2)[0][0] == "x"


def _rec(mid, scope, obj, *, conf=1.0, upd=NOW, subject="alice", predicate="drink"):
    return {"memory_id": mid, "scope": scope, "subject": subject, "predicate": predicate, "object": obj,
            "confidence": conf, "updated_at": upd, "version": 1}


def test_conflict_most_specific_scope_wins_and_is_flagged():
    org = _rec("o", "/org/acme/", "coffee", upd=NOW)
    user = _rec("u", "/org/acme/user/alice/", "tea", upd=NOW - 10 * DAY)
    other = {"memory_id": "z", "scope": "/org/acme/", "content": "no entity"}
    kept, removed, promoted = S.resolve_conflicts([org, other, user])
    assert [h["memory_id"] for h in kept] == ["z", "u"]
    assert kept[1]["conflict"] == {"overrides": ["o"], "reason": "more_specific_scope"}
    assert [r["memory_id"] for r in removed] == ["o"] and removed[0]["removed_by"] == "u"
    assert promoted == []


def test_conflict_same_scope_depth_confidence_then_newest():
    a = _rec("a", "/org/acme/user/alice/", "tea", conf=0.6, upd=NOW)
    b = _rec("b", "/org/acme/project/p/", "coffee", conf=1.0, upd=NOW - DAY)
    kept, removed, _ = S.resolve_conflicts([a, b])
    assert [h["memory_id"] for h in kept] == ["b"] and kept[0]["conflict"]["reason"] == "higher_confidence"
    c = _rec("c", "/org/acme/project/p/", "water", conf=0.6, upd=NOW - DAY)
    kept, _, _ = S.resolve_conflicts([a, c])
    assert [h["memory_id"] for h in kept] == ["a"] and kept[0]["conflict"]["reason"] == "newer"


def test_a_tie_past_scope_confidence_time_and_version_is_settled_the_same_whatever_the_ids():
    """Copies made at one instant (a demotion pass's) were settled by their random memory ids: the
    same calls on a fresh folder gave another value (a simulation's counters moved with it)."""
    import itertools

    winners = set()
    for ids in itertools.permutations(("m1", "m2", "m3")):
        recs = [_rec(ids[0], "/org/acme/user/alice/", "coffee"), _rec(ids[1], "/org/acme/user/bob/", "coffee"),
                _rec(ids[2], "/org/acme/user/alice/", "water")]
        kept, removed, _ = S.resolve_conflicts(recs)
        winner = next(h for h in kept if h.get("conflict"))
        winners.add((winner["scope"], winner["object"], winner["conflict"]["reason"],
                     tuple(sorted((r["scope"], r["object"]) for r in removed))))
    assert winners == {("/org/acme/user/bob/", "coffee", "tie_break", (("/org/acme/user/alice/", "water"),))}


def test_versions_of_one_scope_written_apart_are_both_kept_and_flagged():
    # Two live versions of one fact in one scope: their writers could not see each other. A reader
    # cleared for both sees both, each flagged; another scope's version resolves as before.
    s = "/org/acme/user/alice/"
    hi = dict(_rec("hi", s, "flagged", upd=NOW - DAY), sensitivity="restricted")
    lo = dict(_rec("lo", s, "valid", upd=NOW), sensitivity="confidential")
    kept, removed, _ = S.resolve_conflicts([lo, hi])
    assert [h["memory_id"] for h in kept] == ["lo", "hi"] and removed == []
    assert kept[0]["conflict"] == {"overrides": [], "reason": "written_apart", "with": ["hi"]}
    assert kept[1]["conflict"] == {"overrides": [], "reason": "written_apart", "with": ["lo"]}
    # At one sensitivity too: a writer decides against every version it may see, so a second live
    # one is a version it could not see (a write-only grant, a write above its clearance)
    same = dict(_rec("old", s, "expired", upd=NOW - 2 * DAY), sensitivity="confidential")
    kept, removed, _ = S.resolve_conflicts([lo, same])
    assert [h["memory_id"] for h in kept] == ["lo", "old"] and removed == []
    assert kept[0]["conflict"] == {"overrides": [], "reason": "written_apart", "with": ["old"]}
    # a session's working item beside the vault's version is ranked: the newer one stands
    item = dict(_rec("item", s, "now", upd=NOW + DAY), sensitivity="confidential", pool="working")
    kept, removed, _ = S.resolve_conflicts([lo, item])
    assert [h["memory_id"] for h in kept] == ["item"] and kept[0]["conflict"]["reason"] == "newer"
    org = dict(_rec("org", "/org/acme/", "unknown", upd=NOW), sensitivity="restricted")
    kept, removed, _ = S.resolve_conflicts([org, lo, hi])
    assert [h["memory_id"] for h in kept] == ["lo", "hi"] and [r["memory_id"] for r in removed] == ["org"]
    assert kept[0]["conflict"] == {"overrides": ["org"], "reason": "more_specific_scope"}


def test_agreement_is_not_a_conflict_and_rivals_are_promoted():
    same = [_rec("a", "/org/acme/", "Tea"), _rec("b", "/org/acme/user/alice/", "tea ")]
    kept, removed, _ = S.resolve_conflicts(same)
    assert len(kept) == 2 and not removed and all("conflict" not in h for h in kept)
    org_hit = _rec("o", "/org/acme/", "coffee")
    user_rival = _rec("u", "/org/acme/user/alice/", "tea")
    kept, removed, promoted = S.resolve_conflicts([org_hit], rivals=[user_rival])
    assert kept == [] and [r["memory_id"] for r in removed] == ["o"]
    assert [p["memory_id"] for p in promoted] == ["u"] and promoted[0]["conflict"]["overrides"] == ["o"]


def test_scoring_is_pure():
    src = pathlib.Path(S.__file__).read_text()
    imported = {n.module or "" for n in ast.walk(ast.parse(src)) if isinstance(n, ast.ImportFrom)}
    imported |= {a.name for n in ast.walk(ast.parse(src)) if isinstance(n, ast.Import) for a in n.names}
    allowed = {"__future__", "math", "re", "unicodedata", "collections", "dataclasses", "datetime", "numpy",
               "scopes", "errors", "numbers"}
    assert imported <= allowed, imported - allowed


def test_query_terms_of_is_query_terms_kept():
    toks = S.tokenize("Alice prefers window seats, always the window")
    got = S.QueryTerms.of(toks)
    want = S.QueryTerms(toks)
    assert (got.terms, got.weights, got.total) == (want.terms, want.weights, want.total)
    assert S.QueryTerms.of(list(toks)) is got  # kept: a repeated query's terms are not weighed again
