"""Recall budgets: the CJK-aware token estimate and the push/pull selector (pure)."""

from __future__ import annotations

import pytest

from memactors.core import budget as B


def test_estimate_counts_cjk_per_character_and_latin_per_four():
    assert B.estimate_tokens("") == 0
    assert B.estimate_tokens("abcd") == 1
    assert B.estimate_tokens("abcde") == 2
    assert B.estimate_tokens("用户喜欢绿茶") == 6
    assert B.estimate_tokens("用户喜欢绿茶。") == 7  # CJK punctuation is a token too
    assert B.estimate_tokens("Alice 喜欢 tea") == 2 + 3  # 2 CJK + ceil(9 / 4)
    zh = "我" * 2000
    assert B.estimate_tokens(zh) == 2000  # len/4 would say 500
    assert B.estimate_tokens("word " * 400) == 500


def _items(*lengths):
    return [{"memory_id": str(i), "content": "x" * n} for i, n in enumerate(lengths)]


def test_push_defaults_cap_items_and_tokens():
    sel, info = B.select(_items(*[40] * 8))
    assert len(sel) == B.PUSH_MAX_ITEMS
    assert info["removed"] == {"budget": 0, "max_items": 3}
    assert info["tokens"] == 5 * (10 + B.ITEM_OVERHEAD_TOKENS)


def test_budget_skips_a_long_item_and_keeps_order():
    items = _items(400, 4000, 400)  # 100, 1000, 100 tokens (+ overhead)
    sel, info = B.select(items, max_items=5, token_budget=300)
    assert [s["memory_id"] for s in sel] == ["0", "2"]
    assert info["removed"] == {"budget": 1, "max_items": 0} and info["tokens"] <= 300


def test_cjk_budget_is_not_underestimated():
    items = [{"content": "用" * 1200}, {"content": "户" * 1200}, {"content": "a" * 1200}]
    sel, info = B.select(items, token_budget=2000)
    # 1,200 Chinese characters are ~1,200 tokens (len/4 would say 300 and let all three in).
    assert [s["content"][0] for s in sel] == ["用", "a"] and info["tokens"] == 1204 + 304


def test_pull_without_budget_and_custom_text():
    sel, info = B.select(_items(10, 10, 10), max_items=2, token_budget=None)
    assert len(sel) == 2 and info["removed"]["max_items"] == 1
    sel, _ = B.select([{"t": "abcd"}], text=lambda h: h["t"], overhead=0, token_budget=1)
    assert len(sel) == 1
    with pytest.raises(ValueError):
        B.select([], max_items=-1)


def test_copies_of_one_text_in_one_scope_take_one_slot():
    # Working items are never deduplicated at write: a recall leaves out those that copy a better
    # hit's text in their scope (as dedup reads it), counts them, keeps another scope's and a vault memory.
    from memactors.core.selection import finalize

    def hit(mid, scope, text, score, pool="working"):
        return {"memory_id": mid, "scope": scope, "content": text, "score": score, "relevance": score, "pool": pool}

    a, b = "/org/o/user/a/", "/org/o/user/b/"
    cands = [hit("1", a, "The hotel Avenida is near the station", 0.9), hit("2", a, "the hotel avenida is near the station.", 0.8),
             hit("3", b, "The hotel Avenida is near the station", 0.7), hit("4", a, "The hotel Avenida has a pool", 0.6),
             hit("5", a, "The hotel Avenida is near the station", 0.5),
             hit("6", a, "The hotel Avenida is near the station", 0.4, pool="vault")]  # a vault memory: always kept
    chosen, info = finalize(cands, threshold=0.0, max_items=10, token_budget=None)
    assert [h["memory_id"] for h in chosen] == ["1", "3", "4", "6"] and info["removed"]["duplicate"] == 2


def test_every_cjk_script_counts_a_token_a_character_decomposed_hangul_as_its_syllables():
    import unicodedata

    for text in ("ㅋㅋㅋㅋ", "ㄅㄆㄇㄈ", "㈜㈜㈜㈜", "⼀⼁⼂⼃", "ㇰㇱㇲㇳ", "㍿㍿㍿㍿", "︵︶︷︸", "안녕하세"):
        assert B.estimate_tokens(text) == 4, text
    korean = "안녕하세요 반갑습니다"
    assert B.estimate_tokens(unicodedata.normalize("NFD", korean)) == B.estimate_tokens(korean) == 10 + 1
