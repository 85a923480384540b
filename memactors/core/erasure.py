"""What one erasure takes with it, along the provenance (DESIGN section 8). Pure.

A memory's provenance has three kinds of edges (``edges``: (memory id, source id, kind)):

- ``copy``: the runtime copied the source's text into the memory (a promotion, a demotion),
  or took a working item out of L1 as a copy of a vault memory (the session's other items of
  a promoted fact, an item whose promotion only refreshed the memory: the item's status patch
  names it in ``copy_of``).
  Copies are one text in several places, so erasing any of them erases all of them, in every
  scope and owner: down (copies of an erased memory) and up (what an erased copy was copied
  from).
- ``context``: the memory's retrieval context carried the source's text, so its words are
  indexed with the memory. Down only: erasing the source erases the memory that carries its
  words; erasing that memory leaves the source.
- ``claim``: the caller said the memory was made from the source (``derived_from``, checked
  against the caller's read grants). A claim is the caller's word, so it never erases across
  scopes: a memory claimed from erased sources only, all of its own scope, is erased with
  them; any other memory claiming an erased source is kept and flagged for whoever must
  re-derive it.

``closure`` returns what to erase and what to flag; ``changes.decide_forget`` turns that into
ledger changes. Records are those the ledger still holds, and the claim sources of those it
erased before, each as a stub of its scope with the status ``tombstoned``: a summary of two
sources erased one after the other goes with the second, as it would with both at once.
"""

from __future__ import annotations

COPY, CONTEXT, CLAIM = "copy", "context", "claim"
KINDS = (COPY, CONTEXT, CLAIM)


def edges_of(rec: dict) -> list[tuple[str, str, str]]:
    """The provenance edges a record carries (what the ledger indexes when it commits it)."""
    mid = rec["memory_id"]
    copies = set(rec.get("copy_of") or ())
    out = [(mid, s, COPY) for s in sorted(copies)]
    out += [(mid, s, CONTEXT) for s in sorted(set(rec.get("context_of") or ()) - copies)]
    out += [(mid, s, CLAIM) for s in sorted(set(rec.get("derived_from") or ()) - copies)]
    return out


def follows(edge: tuple, erased: set[str]) -> bool:
    """Whether an erasure of ``erased`` follows ``edge`` ((memory id, source, kind)): down a copy
    or carried words from an erased source, up a copy from an erased copy (``closure``)."""
    mid, src, kind = edge
    return (kind != CLAIM and src in erased) or (kind == COPY and mid in erased)


def closure(roots: list[dict], records: dict[str, dict], edges: list[tuple[str, str, str]]
            ) -> tuple[list[dict], list[dict]]:
    """(records to erase, roots first; records to flag) when ``roots`` are erased. ``records``:
    the candidates by id (any the edges name that still exist), ``edges``: every edge among them."""
    erased = {r["memory_id"]: r for r in roots}
    before = {m: r for m, r in records.items() if r.get("status") == "tombstoned"}  # erased earlier
    claims: dict[str, set[str]] = {}
    for mid, src, kind in edges:
        if kind == CLAIM:
            claims.setdefault(mid, set()).add(src)
    grew = True
    while grew:
        grew = False
        for mid, src, kind in edges:
            if kind == CLAIM:
                continue
            if src in erased and mid not in erased and mid in records and mid not in before:
                erased[mid] = records[mid]  # down: a copy, or words carried
                grew = True
            elif kind == COPY and mid in erased and src not in erased and src in records and src not in before:  # up
                erased[src] = records[src]
                grew = True
        for mid, srcs in claims.items():  # a summary of a summary of an erased memory goes too
            rec = records.get(mid)
            if rec is None or mid in erased or mid in before or not srcs <= erased.keys() | before.keys():
                continue
            if srcs & erased.keys() and all((erased.get(s) or before[s])["scope"] == rec["scope"] for s in srcs):
                erased[mid] = rec
                grew = True
    flagged = [records[m] for m, srcs in sorted(claims.items())
               if m not in erased and m in records and m not in before and srcs & erased.keys()]
    return list(erased.values()), flagged
