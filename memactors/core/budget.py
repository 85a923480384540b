"""Recall budgets (DESIGN section 5): a CJK-aware token estimate and the push/pull selector.

Pure: no I/O, no Ray, no tokenizer download. The estimate is deliberately simple and a little
generous (an over-estimate keeps a prompt inside its window; an under-estimate overflows it):

- CJK (Han, kana, Hangul, CJK and full-width punctuation): 1 token per character. BPE
  tokenizers of current models spend about 0.7-1.5 tokens on a Chinese character, while the
  usual ``len(text) / 4`` rule would count a 2,000-character Chinese memory as 500 tokens.
- everything else: 1 token per 4 characters (spaces included), rounded up: the usual figure
  for English prose.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Callable, Iterable

PUSH_MAX_ITEMS = 5
PUSH_TOKEN_BUDGET = 2_000
# Rendering one recalled item into a prompt (bullet, scope tag, line break) costs a few tokens.
ITEM_OVERHEAD_TOKENS = 4

# Counted one token each: Han (and its radicals, strokes, extensions, compatibility forms), kana,
# Bopomofo, Hangul syllables and jamo (a text is read NFC first), CJK punctuation, enclosed
# and fullwidth forms. Over-counting is safe (a budget kept); under-counting is not.
_CJK = re.compile("[\u1100-\u11ff\u2e80-\u2fdf\u2ff0-\u2fff\u3000-\u303f\u3040-\u30ff\u3100-\u312f"
                  "\u3130-\u318f\u3190-\u31ff\u3200-\u33ff\u3400-\u4dbf\u4e00-\u9fff\ua960-\ua97f"
                  "\uac00-\ud7af\ud7b0-\ud7ff\uf900-\ufaff\ufe30-\ufe4f\uff00-\uffef\U0001f200-\U0001f2ff"
                  "\U00020000-\U0003134f\U00031350-\U000323af]")


def estimate_tokens(text: str) -> int:
    """Tokens ``text`` will take in a prompt: CJK characters 1 each, other text 4 characters a token."""
    if not text:
        return 0
    if not text.isascii():  # decomposed Hangul (NFD, as some input methods send it) counted as its syllables
        text = unicodedata.normalize("NFC", text)
    cjk = len(_CJK.findall(text))
    return cjk + math.ceil((len(text) - cjk) / 4)


def select(items: Iterable[dict], *, max_items: int = PUSH_MAX_ITEMS, token_budget: int | None = PUSH_TOKEN_BUDGET,
           text: Callable[[dict], str] = lambda h: h.get("content") or "",
           overhead: int = ITEM_OVERHEAD_TOKENS) -> tuple[list[dict], dict]:
    """Pick items, best first (``items`` must come ranked), while at most ``max_items`` are
    taken and their tokens (estimate + ``overhead`` each) stay within ``token_budget``
    (None: no budget). An item that does not fit is skipped and the next, shorter one may still
    fit: a long memory never crowds out the rest. Push recall (task start: 5 items, 2,000
    tokens) and pull recall (``max_items=top_k``, optional budget) both come through here.

    Returns ``(selected, info)``; ``info`` = ``{"tokens": used, "removed": {"budget": n,
    "max_items": m}}`` so the recall evidence can say what the budget took out."""
    if max_items < 0 or (token_budget is not None and token_budget < 0):
        raise ValueError("max_items and token_budget must not be negative")
    selected: list[dict] = []
    used = over_budget = over_count = 0
    for it in items:
        if len(selected) >= max_items:
            over_count += 1
            continue
        cost = estimate_tokens(text(it)) + overhead
        if token_budget is not None and used + cost > token_budget:
            over_budget += 1
            continue
        selected.append(it)
        used += cost
    return selected, {"tokens": used, "removed": {"budget": over_budget, "max_items": over_count}}
