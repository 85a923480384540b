"""An erasure and a copy of the same memory decided at the same time, settled where every
commit is ordered: the ledger writer (DESIGN section 8).

A copy of a memory into another scope (``rt.promote``) and an erasure of it hold different
scopes' locks, maybe on different owners, so each may decide against what the ledger held
before the other committed:

- the copy read its source live, then the erasure committed: the copy would keep an erased
  memory's text. The entry names the memories it read live outside its locks (``live_read``);
  one erased since (its data key gone, or erased earlier in this commit) makes it stale.
- the erasure read the provenance, then the copy committed: the erasure's closure would miss
  the copy. The entry carries the provenance edges it read (``edges_read``: every edge of
  every memory its closure weighed, so every edge touching what it erases); an edge touching
  what it erases committed since (or earlier in this commit) that it did not read makes it
  stale.

A stale entry is not appended: the owner decides it again against the ledger as it now is
(the erasure then takes the copy with it; the copy finds its source gone).
"""

from __future__ import annotations

from ..core.erasure import CONTEXT, COPY, follows
from ..core.project import RECORD_ACTIONS

_COPYING = (COPY, CONTEXT)  # the edges a copy commits that an erasure follows


def stale(batch: dict, take: list[tuple[int, int, int]], run, keys: str = "keys") -> set[int]:
    """The items of ``take`` ((item index, first event index, event count), in commit order)
    to refuse as stale, read against the ledger as committed (``run(sql, params)``: rows;
    ``keys``: the data keys not erased, ``Ledger.live_keys``)."""
    live_read = batch.get("live_read")
    edges_read = batch.get("edges_read")
    checked = [i for i, _, _ in take if (live_read and live_read[i]) or (edges_read and edges_read[i] is not None)]
    if not checked:
        return set()
    item_of = {j: i for i, first, n in take for j in range(first, first + n)}
    added: dict[int, list[tuple]] = {}  # item -> the edges it commits
    for j, mid, src, kind in batch.get("prov", ()):
        if kind in _COPYING and j in item_of:
            added.setdefault(item_of[j], []).append((mid, src, kind))
    reads = {m for i in checked if live_read and live_read[i] for m in live_read[i]}
    alive = set()
    if reads:  # a memory this commit writes has its key in this commit
        written = {batch["memory_id"][j] for j in item_of if batch["action"][j] in RECORD_ACTIONS}
        alive = _keyed(run, sorted(reads - written), keys) | (reads & written)
    closing = {i: set(batch["destroy"][i]) for i in checked if edges_read and edges_read[i] is not None}
    erasing = set().union(*closing.values()) if closing else set()
    committed = _edges_touching(run, sorted(erasing)) if erasing else []
    out, erased_here, added_here = set(), set(), []
    for i, _, _ in take:
        if live_read and live_read[i] and any(m in erased_here or m not in alive for m in live_read[i]):
            out.add(i)
            continue
        gone = closing.get(i)
        if gone:
            read = {tuple(e) for e in edges_read[i]}
            if any(follows(e, gone) and e not in read for e in (*committed, *added_here)):
                out.add(i)
                continue
        erased_here.update(batch["destroy"][i])
        added_here += added.get(i, ())
    return out


def _keyed(run, memory_ids: list[str], keys: str) -> set[str]:
    """Those of these memories that still have a data key (not erased: a sweep's erasure names
    its key in ``erasing`` before the key is deleted, and ``keys`` leaves those out)."""
    return {r[0] for r in run(f"SELECT DISTINCT memory_id FROM {keys} k WHERE list_contains(?, memory_id)",
                              [memory_ids])}


def _edges_touching(run, memory_ids: list[str]) -> list[tuple]:
    """The committed edges an erasure of these memories follows (``core.erasure.follows``)."""
    return [tuple(r) for r in run("SELECT memory_id, source, kind FROM provenance WHERE (kind IN (?, ?) AND "
                                  "list_contains(?, source)) OR (kind = ? AND list_contains(?, memory_id))",
                                  [COPY, CONTEXT, memory_ids, COPY, memory_ids])]
