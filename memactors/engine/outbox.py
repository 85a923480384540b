"""The L2 outbox: what the ledger has committed and Lance has not seen yet (DESIGN section 9).

For each touched memory it keeps the newest thing Lance must learn: a whole row (a new memory,
or one that must be written whole), a patch of some columns (a status change, a refresh), or a
deletion (erased, evicted); and the ledger seqs those changes came from, so that once Lance
has them the ledger can mark them applied. ``take`` hands out a batch, ``restore`` puts a
failed one back (as whole-row upserts: a row that may have landed is never appended twice).
No Ray, no Lance: testable alone.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(slots=True)
class Batch:
    new: dict[str, dict] = field(default_factory=dict)  # rows surely absent from Lance: append
    rows: dict[str, dict] = field(default_factory=dict)  # whole rows to upsert
    patches: dict[str, dict] = field(default_factory=dict)  # memory id -> columns to update in place
    deletes: set[str] = field(default_factory=set)
    vectors: dict = field(default_factory=dict)  # memory id -> vector, for new and whole rows
    seqs: list[int] = field(default_factory=list)
    # every scope a row, patch or deletion here belongs to (deletions carry no record): a scope
    # loaded from Lance while it is listed here would miss them (``StateMixin._load`` flushes first)
    touched: set[str] = field(default_factory=set)

    def __len__(self) -> int:
        return len(self.new) + len(self.rows) + len(self.patches) + len(self.deletes)

    def scopes(self) -> set[str]:
        return self.touched


def joined(batches: list[Batch]) -> Batch:
    """Several owners' batches as one for Lance (a sweep's joint flush): their memories are
    disjoint (each scope has one owner), so each part is the union. Seqs are left out: each
    owner marks its own once Lance has the whole."""
    out = Batch()
    for b in batches:
        out.new.update(b.new)
        out.rows.update(b.rows)
        out.patches.update(b.patches)
        out.deletes |= b.deletes
        out.vectors.update(b.vectors)
        out.touched |= b.touched
    return out


class L2Outbox:
    def __init__(self) -> None:
        self._b = Batch()

    def __len__(self) -> int:
        return len(self._b)

    def empty(self) -> bool:
        return not (len(self._b) or self._b.seqs)

    def row(self, rec: dict, vector, *, new: bool) -> None:
        """Lance must hold this whole row (``new``: it has never been there)."""
        b, mid = self._b, rec["memory_id"]
        b.touched.add(rec["scope"])
        b.deletes.discard(mid)
        b.patches.pop(mid, None)
        if new or mid in b.new:
            b.new[mid] = rec
        else:
            b.rows[mid] = rec
        if vector is not None:
            b.vectors[mid] = vector

    def patch(self, memory_id: str, scope: str, fields: dict) -> None:
        """Lance must update these columns of a row it holds (or will, from this batch)."""
        b = self._b
        if scope:
            b.touched.add(scope)
        if memory_id in b.new:
            b.new[memory_id] = {**b.new[memory_id], **fields}
        elif memory_id in b.rows:
            b.rows[memory_id] = {**b.rows[memory_id], **fields}
        elif memory_id not in b.deletes:
            b.patches[memory_id] = {**b.patches.get(memory_id, {"scope": scope}), **fields}

    def delete(self, memory_id: str, scope: str | None = None) -> None:
        b = self._b
        if scope:
            b.touched.add(scope)
        b.patches.pop(memory_id, None)
        b.rows.pop(memory_id, None)
        b.vectors.pop(memory_id, None)
        if b.new.pop(memory_id, None) is None:  # a row Lance never saw needs no delete
            b.deletes.add(memory_id)

    def seqs(self, seqs: list[int]) -> None:
        """Ledger seqs this outbox now answers for (marked applied once flushed)."""
        self._b.seqs.extend(seqs)

    def touches(self, facts: set[tuple[str, str]], memory_ids: set[str]) -> bool:
        """Whether Lance has yet to learn something of these facts ((scope, entity key) pairs)
        or of these rows: a row of theirs to write, or a patch or deletion of one of the ids."""
        b = self._b
        if any((r["scope"], r.get("entity_key")) in facts for r in (*b.new.values(), *b.rows.values())):
            return True
        return not memory_ids.isdisjoint(b.patches.keys() | b.deletes)

    def dirty_scopes(self) -> set[str]:
        return self._b.scopes()

    def take(self) -> Batch | None:
        if self.empty():
            return None
        b, self._b = self._b, Batch()
        return b

    def restore(self, b: Batch) -> None:
        """A batch Lance may have taken in part goes back, under what came since: whole rows as
        upserts (never appended twice), patches and deletes as they were."""
        later, self._b = self._b, Batch()
        for mid, rec in {**b.new, **b.rows}.items():
            self.row(rec, b.vectors.get(mid), new=False)
        for mid, p in b.patches.items():
            self.patch(mid, p.get("scope", ""), {k: v for k, v in p.items() if k != "scope"})
        for mid in b.deletes:
            self._b.deletes.add(mid)
        self._b.touched |= b.touched
        self._b.seqs = b.seqs + self._b.seqs
        for mid, rec in later.new.items():
            self.row(rec, later.vectors.get(mid), new=True)
        for mid, rec in later.rows.items():
            self.row(rec, later.vectors.get(mid), new=False)
        for mid, p in later.patches.items():
            self.patch(mid, p.get("scope", ""), {k: v for k, v in p.items() if k != "scope"})
        for mid in later.deletes:
            self.delete(mid)
        self._b.touched |= later.touched
        self._b.seqs.extend(later.seqs)
