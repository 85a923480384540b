"""From scored candidates to what a recall returns (DESIGN section 5), counting what each rule
removed, for the evidence log. Pure.

Order: conflicts first (a losing org default must not take a slot), working items that copy a
better hit's text, then the relevance
threshold (on each hit's ``relevance``: a stale hit is judged before its x0.5, which only
ranks it), then the item count and the token budget (push and pull share this path).
"""

from __future__ import annotations

from .budget import select
from .errors import InvalidRecord
from .records import content_hash
from .scoring import resolve_conflicts


def finalize(cands: list[dict], *, threshold: float, max_items: int, token_budget: int | None) -> tuple[list[dict], dict]:
    """``cands`` best first (each with ``score``). Returns (selected, info): the counts each rule
    removed, the tokens used, the best relevance the threshold removed (``best_below``, None when
    it removed none) and the conflicts won."""
    kept, lost, _ = resolve_conflicts(cands)
    kept, copies = _without_working_copies(kept)
    passed = [h for h in kept if h.get("relevance", h["score"]) >= threshold]
    chosen, info = select(passed, max_items=max_items, token_budget=token_budget)
    removed = {"conflict": len(lost), "duplicate": copies, "threshold": len(kept) - len(passed),
               "max_items": info["removed"]["max_items"], "budget": info["removed"]["budget"]}
    below = [h.get("relevance", h["score"]) for h in kept if h.get("relevance", h["score"]) < threshold]
    return chosen, {"removed": removed, "tokens": info["tokens"], "best_below": max(below) if below else None,
                    "conflicts": [
        {"winner": h["memory_id"], **h["conflict"]} for h in chosen if h.get("conflict")]}


def _without_working_copies(hits: list[dict]) -> tuple[list[dict], int]:
    """Working items that say the text of a better hit of their scope (as dedup reads it) left
    out: they are never deduplicated at write (a session's turns may each see the same tool
    output), and copies would take the slots of other memories. A vault memory is always kept.
    Returns (kept, how many were left out)."""
    if not any(h.get("pool") == "working" for h in hits):  # most recalls: nothing to read twice
        return hits, 0
    seen, out = set(), []
    for h in hits:
        text = h.get("content")
        # the record's own hash where the hit carries it (hot and working hits), as dedup reads it
        key = (h.get("scope"), h.get("content_hash") or content_hash(text)) if isinstance(text, str) else None
        if key is not None and key in seen and h.get("pool") == "working":
            continue
        if key is not None:
            seen.add(key)
        out.append(h)
    return out, len(hits) - len(out)


def finish(cands: list[dict], how: dict) -> tuple[list[dict], dict, int]:
    """``cands`` (best first) finished as a recall's request says (``how``: its ``exclude``d
    ids, ``threshold``, ``top_k``, ``token_budget``): (selected, info as ``finalize`` gives it,
    the candidates counted). The facade finishes every owner's candidates with it, and an owner
    holding every candidate its own: the same result by construction."""
    try:
        exclude = set(how["exclude"])
        threshold, top_k = float(how["threshold"]), int(how["top_k"])
        budget = None if how["token_budget"] is None else int(how["token_budget"])
    except (KeyError, TypeError, ValueError):
        raise InvalidRecord("a recall's finish takes exclude, threshold, top_k and token_budget") from None
    if exclude:
        cands = [h for h in cands if h["memory_id"] not in exclude]
    chosen, info = finalize(cands, threshold=threshold, max_items=top_k, token_budget=budget)
    return chosen, info, len(cands)
