"""What a batch of erasures reads before it is decided, read once for the whole batch (DESIGN
section 9: gather, then decide purely).

Mixed into ``ScopeCore``. An erasure (``ForgetOp``) reads its memory's record, every version of
its fact from L2 (``erase="fact"``) and the provenance closure from the ledger; one at a time
that was an L2 query and a ledger query per erasure (~10 ms each here). For a batch of two or
more, ``_gather_erasures`` makes one of each: the versions of all the batch's facts in one Lance
query, the provenance of all their roots in one ledger call (a superset for each erasure:
``core.erasure.closure`` follows edges from its own roots only). L2 is flushed first only when
the outbox holds something of those facts (``_versions``). None of this sees the batch's
own staged changes, exactly as the one-at-a-time reads did not: L2 and the ledger hold only
what is committed.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from ..store import filters as F


@dataclass(slots=True)
class Gathered:
    records: dict[str, dict | None] = field(default_factory=dict)  # memory id -> record from the ledger
    versions: dict[tuple[str, str], list[dict]] = field(default_factory=dict)  # (scope, entity key) -> rows
    roots: frozenset = frozenset()  # the memory ids ``provenance`` covers
    provenance: tuple | None = None  # (records, edges) for ``roots``


class ErasureMixin:
    async def _gather_erasures(self, ops: list, staged: dict) -> Gathered | None:
        """One read of each kind for the erasures among ``ops`` (None: fewer than two)."""
        ops = [op for op in ops if "provenance" in op.GATHER]
        if len(ops) < 2:
            return None
        out = Gathered()
        recs: dict[str, dict | None] = {}
        cold = []
        for op in ops:
            st = staged.get(self.hot.where.get(op.memory_id))
            rec = (st.get(op.memory_id) if st is not None else None) or self.working.find(op.memory_id)
            if rec is None:
                cold.append(op.memory_id)
            recs[op.memory_id] = rec
        if cold:
            out.records = await self._records(cold)
            recs.update(out.records)
        facts = sorted({(r["scope"], r["entity_key"]) for op in ops if op.all_versions
                        for r in [recs[op.memory_id]] if r is not None and r.get("entity_key")})
        if facts:
            for row in await self._versions(facts):
                out.versions.setdefault((row["scope"], row["entity_key"]), []).append(row)
            for f in facts:
                out.versions.setdefault(f, [])
        roots = {mid for mid, r in recs.items() if r is not None}
        roots |= {v["memory_id"] for vs in out.versions.values() for v in vs}
        if roots:
            out.roots = frozenset(roots)
            out.provenance = await self.ledger.provenance(sorted(roots))
        return out

    async def _versions(self, facts: list[tuple[str, str]]) -> list[dict]:
        """Every version of these facts: the rows L2 holds, read once it holds all that is
        committed of them, and the versions it does not (``_off_l2_versions``).
        The outbox is flushed first only when it holds something of theirs (a flush of every
        pending write was most of an erasure's time); under the flush lock, so no batch is
        half way to Lance while L2 and the outbox are compared. The caller holds the facts'
        scope locks: nothing new of them is committed meanwhile."""
        async with self._flush_lock:
            rows = await asyncio.to_thread(self.l2.versions_of_many, facts)
            current = not self.outbox.touches(set(facts), {r["memory_id"] for r in rows})
        if not current:
            await self._flush()  # versions still in the outbox must be in L2 to be found
            rows = await asyncio.to_thread(self.l2.versions_of_many, facts)
        return rows + await self._off_l2_versions(facts, rows)

    async def _off_l2_versions(self, facts: list[tuple[str, str]], rows: list[dict]) -> list[dict]:
        """The versions of these facts that L2 does not hold, from the ledger: an evicted one (a
        rollback undid it, a sweep evicted or archived it: its row left L2, its data key stays
        so a rollback can reinstate it) and an L1 item of the fact (L2 never holds one). Each
        is a version of the fact as its history shows it; an erasure of the fact that left one
        left its text readable (history) and restorable (a rollback ``at=`` an earlier point).
        Read: the scopes' memory ids from the ledger, less those L2 holds and L1 items, whose
        records this core has; only what is left is decoded."""
        want = set(facts)
        scopes = sorted({s for s, _ in facts})
        out = {r["memory_id"]: r for s in scopes for r in self.working.items(s)
               if (r["scope"], r.get("entity_key")) in want}
        ids = set(await self.ledger.history_call("changed_since", scopes, 0))
        ids -= {r["memory_id"] for s in scopes for r in self.working.items(s)}
        ids -= {r["memory_id"] for r in rows}
        if ids:
            where = F.scope_in(scopes)
            rows = await asyncio.to_thread(self.l2._select, where, ["memory_id"])
            held = rows.column("memory_id").to_pylist()
            ids -= set(held)
        if ids:
            for mid, rec in (await self._records(sorted(ids))).items():
                if rec is not None and rec.get("status") != "tombstoned" \
                        and (rec["scope"], rec.get("entity_key")) in want:
                    out[mid] = rec
        return [out[m] for m in sorted(out)]

    async def _linked_versions(self, rec: dict, state) -> list[dict]:
        """The other versions of a text-only memory's fact: those its updates linked (no subject
        and predicate to find them by), as its history shows them; not yet erased."""
        ids = [m for m in await self.ledger.successions(rec["scope"], rec["memory_id"]) if m != rec["memory_id"]]
        found = {m: r for m, r in (await self._records(ids)).items() if r is not None} if ids else {}
        # A held update names what it updates only inside its record: the state holds it (pending).
        known = {*found, rec["memory_id"]}
        found.update((r["memory_id"], r) for r in state.records.values()
                     if r["status"] == "pending" and r.get("supersedes") in known)
        return list(found.values())
