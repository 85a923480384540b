"""Fused recall scoring: absolute component maps, fusion, staleness, BM25, conflicts (pure)."""

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
    kw = S.keyword_component([0.0, S.KEYWORD_K, 3 * S.KEYWORD_K, 1e9])
    assert kw[0] == 0.0 and kw[1] == pytest.approx(0.5) and kw[2] == pytest.approx(0.75) and kw[3] < 1.0
    rec = S.recency_component([NOW, NOW - 30 * DAY, NOW - 60 * DAY, NOW + DAY], NOW, half_life_days=30)
    assert rec.tolist() == pytest.approx([1.0, 0.5, 0.25, 1.0])
    assert S.importance_component([-1, 0.3, 2]).tolist() == [0.0, 0.3, 1.0]


def test_keyword_component_does_not_depend_on_the_other_candidates():
    # The same raw score maps to the same component whatever else the query returned
    # (min-max per query would give 1.0 to the best of a bad lot).
    a = S.keyword_component([2.0, 20.0])
    b = S.keyword_component([2.0, 0.1])
    assert a[0] == b[0]


def test_fuse_default_weights_and_stale_factor():
    comps = {"vector": [1.0, 1.0], "keyword": [1.0, 1.0], "recency": [1.0, 1.0], "importance": [1.0, 1.0]}
    out = S.fuse({k: np.array(v) for k, v in comps.items()}, S.DEFAULT_WEIGHTS, stale=[False, True])
    assert out.tolist() == pytest.approx([1.0, 0.5])
    one = S.fuse({"vector": np.array([0.5]), "keyword": np.array([0.0])})
    assert one[0] == pytest.approx(0.4 * 0.5)


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
        {"memory_id": "a", "cosine": 0.9, "bm25": 0.0, "updated_at": NOW, "importance": 0.5},
        {"memory_id": "b", "cosine": 0.9, "bm25": 16.0, "updated_at": NOW, "importance": 0.5},
        {"memory_id": "c", "cosine": 0.9, "bm25": 16.0, "updated_at": NOW, "importance": 0.5, "status": "stale"},
        {"memory_id": "d", "cosine": -0.5, "updated_at": None},
    ]
    out = S.score_candidates(cands, NOW)
    assert [d["memory_id"] for d in out] == ["b", "a", "c", "d"]
    b = out[0]
    assert b["components"]["keyword"] == pytest.approx(16 / (16 + S.KEYWORD_K))
    assert b["score"] == pytest.approx(0.4 * 0.9 + 0.3 * 16 / 24 + 0.2 * 1.0 + 0.1 * 0.5)
    assert out[2]["stale"] and out[2]["score"] == pytest.approx(b["score"] * S.STALE_FACTOR)
    assert out[3]["score"] == 0.0 and "cosine" in out[3]  # inputs are kept, not mutated in place
    assert "score" not in cands[0]
    soft = S.score_candidates([dict(cands[0], soft_expires_at=NOW - 1)], NOW)[0]
    assert soft["stale"]


def test_tokenize_english_and_chinese():
    assert S.tokenize("What did Tim sign, in 2023?") == ["tim", "sign", "2023"]
    assert S.tokenize("用户喜欢绿茶") == ["用户", "户喜", "喜欢", "欢绿", "绿茶"]
    assert S.tokenize("Alice 喜欢 tea") == ["alice", "喜欢", "tea"]
    assert S.tokenize("茶") == ["茶"]


def test_keyword_index_bm25():
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
