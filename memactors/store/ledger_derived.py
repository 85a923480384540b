"""The ledger's derived tables against the records they are derived from (``audit.verify``).

Beside its chained events the ledger keeps two indexes derived from them: ``provenance`` (the
edges an erasure's cascade follows: copies, context, claims; ``core.erasure``) and ``levels``
(each memory's sensitivity, which audit views check a reader's clearance against;
``LedgerAudit.index_levels``). Neither is chained, so someone with write access to the data
folder could empty the first (a forget would no longer reach promoted copies and derived
summaries) or lower the second (a public reader would see a restricted memory's events). The
full walk opens every record once (``fold``: the same pass gives the L2 rows the applied events
fold into, ``Ledger.l2_expected``) and compares what the records imply with both tables here.

What cannot be compared is left alone: an erased memory's record no longer opens, so its own
edges are unknown (they are inert: the cascade only follows a memory it can still read), and a
tombstone from before they kept the sensitivity says nothing of the level.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..core import events as E
from ..core.erasure import edges_of
from ..core.project import RECORD_ACTIONS, Rows, apply
from ..core.records import governed_digest
from .entries import decode, prov_record

# Every event of a memory with its data key and whether L2 has applied it, in seq order: what
# ``fold`` reads (in the transaction that reads the tables it is compared with).
FOLD_SQL = """SELECT e.seq, e.action, e.scope, e.memory_id, e.reason, e.encrypted, e.snapshot, k.key,
                     e.seq IN (SELECT seq FROM l2_applied) AS applied
              FROM events e LEFT JOIN {keys} k ON k.memory_id = e.memory_id
              WHERE e.memory_id IS NOT NULL ORDER BY e.seq"""  # keys: Ledger.live_keys


@dataclass(slots=True)
class Fold:
    """What the records imply, folded once."""

    digests: dict[str, bytes] = field(default_factory=dict)  # L2 row -> governed digest (applied events)
    edges: dict[str, set[tuple[str, str]]] = field(default_factory=dict)  # memory -> {(source, kind)}
    written: dict[str, int] = field(default_factory=dict)  # memory -> seq of its record
    levels: dict[str, str] = field(default_factory=dict)  # memory -> its record's sensitivity (opened)
    tombs: dict[str, str] = field(default_factory=dict)  # erased memory -> the sensitivity its tombstone kept
    erased: set[str] = field(default_factory=set)


def fold(reader) -> Fold:
    """Fold the batches of ``FOLD_SQL``. A record that does not open under its data key raises
    LedgerTampered (the key was swapped)."""
    out, rows = Fold(), Rows()
    for batch in reader:
        cols = {c: batch.column(c).to_pylist() for c in batch.schema.names}
        for i in range(batch.num_rows):
            action, mid = cols["action"][i], cols["memory_id"][i]
            ch = decode(action, cols["scope"][i], mid, cols["reason"][i], cols["encrypted"][i],
                        cols["snapshot"][i] or b"", cols["key"][i])
            if action in RECORD_ACTIONS:
                out.written.setdefault(mid, cols["seq"][i])
            elif action == E.FORGET:
                out.erased.add(mid)
                if ch is not None and ch.patch and ch.patch.get("sensitivity"):
                    out.tombs[mid] = ch.patch["sensitivity"]
            if ch is None:  # a record whose key an erasure destroyed
                continue
            if cols["applied"][i]:
                apply(rows, ch)
            if ch.record is not None and ch.record.get("sensitivity"):
                out.levels[mid] = ch.record["sensitivity"]
            linked = prov_record(ch)
            if linked is not None:
                for m, src, kind in edges_of(linked):
                    out.edges.setdefault(m, set()).add((src, kind))
    out.digests = {r["memory_id"]: governed_digest(r) for r in rows.l2_rows()}
    return out


def provenance_problem(f: Fold, table: list[tuple[str, str, str]]) -> str | None:
    """The provenance rows against the edges the records carry: every edge of a memory whose
    record opens must be there, and no other (a changed row is one of each)."""
    have: dict[str, set[tuple[str, str]]] = {}
    for mid, src, kind in table:
        have.setdefault(mid, set()).add((src, kind))
    missing = extra = 0
    example = None
    for mid in sorted((f.edges.keys() | have.keys()) - f.erased):
        want, got = f.edges.get(mid, set()), have.get(mid, set())
        if want != got:
            missing, extra = missing + len(want - got), extra + len(got - want)
            example = example or mid
    if example is None:
        return None
    return (f"the provenance index disagrees with the sealed records: {missing} edges missing, {extra} edges the "
            f"records do not hold (e.g. memory {example}): rows were deleted, added or changed (an erasure "
            "follows these edges to copies and derived memories)")


def levels_problem(f: Fold, covered: int, last: int, table: list[tuple[str, str]]) -> str | None:
    """The levels rows against the sensitivities the records (or tombstones) hold: a row for
    every memory written up to ``covered`` (the seq the index was brought up to), and no row
    of another level or of a memory never written. (A row of a memory written later is let be
    if its level is right: a ledger from when each record wrote its own row holds those.)"""
    if covered > last:
        return (f"the levels index claims to cover seq {covered} but the ledger ends at seq {last}: its mark was "
                "changed")
    have: dict[str, set[str]] = {}
    for mid, level in table:
        have.setdefault(mid, set()).add(level)
    missing = changed = extra = 0
    example = None
    for mid in sorted(have.keys() | {m for m, s in f.written.items() if s <= covered}):
        want = f.levels.get(mid) or f.tombs.get(mid)
        if mid not in f.written:
            extra += 1
        elif want is None or have.get(mid) == {want}:  # unknown (an old tombstone), or as it should be
            continue
        elif mid in have:
            changed += 1
        else:
            missing += 1
        example = example or mid
    if example is None:
        return None
    return (f"the levels index disagrees with the sealed records: {missing} memories missing, {changed} with "
            f"another sensitivity, {extra} never written (e.g. memory {example}): rows were deleted, changed or "
            "added (audit views show a memory's events by these levels)")
