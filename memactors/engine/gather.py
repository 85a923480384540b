"""What an owner gathers for promotion, demotion and review before deciding them (DESIGN
sections 2 and 6).

Mixed into ``ScopeCore``. The decide functions (``memactors.core.changes``) are pure: a
promotion needs the item's vector (the working pool keeps it; a cold or expired item is embedded
again), a demotion the vault memory's, and a promotion up the scope tree the source record
(from the hot state or the ledger: the source scope may be another owner's) and a read grant
on it, checked here against the ledger's grants. A review's approval needs the held write's
author (the actor of its write event, from the ledger): nobody approves their own held write.
A sweep or a rollback that takes a memory out of recall in a scope not held hot needs that
scope's memories flagged "contradiction" (from L2), to end a contradiction left one-sided.
"""

from __future__ import annotations

import asyncio

from ..core import changes as C
from ..core import records as R
from ..core.lifecycle import ACTION_OF, EVICT
from ..core.ops import RollbackOp, SweepOp
from ..core.scopes import parse_scope
from ..core.versions import CONTRADICTION_FLAG
from ..store import filters as F


class SessionMixin:
    async def _gather_more(self, op, ctx: C.Ctx) -> None:
        """Complete ``ctx`` with what the operation's ``GATHER`` names beyond its record: the
        author of the memory it names, a source memory in another scope (and the read grant on
        it), the memory's vector, the gate's verdict on its text."""
        need = op.GATHER
        if "author" in need:
            if op.approve and ctx.record is not None:
                ctx.author = (await self.ledger.authors_of([op.memory_id])).get(op.memory_id)
        if "source" in need:
            scope = self.hot.where.get(op.memory_id)
            st = self.hot.get(scope) if scope is not None else None
            rec = (st.get(op.memory_id) if st is not None else None) or await self._record(op.memory_id)
            if rec is not None and rec.get("sensitivity") not in self.grants.sees(op.actor, parse_scope(rec["scope"])):
                # It may promote only what it may read, at its clearance there (a copy in a scope of
                # higher clearance would show it); one who may not learns nothing of the id.
                rec = None
            ctx.record = rec
        if "vector" not in need:
            return
        rec = ctx.record
        if rec is None or rec.get("content") is None:
            return
        mid = rec["memory_id"]
        vec = self.working.vector(mid)
        if vec is None:
            src = self.hot.get(rec["scope"])
            vec = src.vectors.get(mid) if src is not None else None
        if vec is None:
            vec = (await self._embed([R.embedded_text(rec)]))[0]
        if "verdict" in need:  # the promotion rules ask what the gate says of the item as stored
            rep = self.gate.scan(rec["content"], rec["source_kind"])
            ctx.prepared = C.Prepared(rep.decision, None, {}, rep.summary(), vector=vec)
        else:
            ctx.prepared = C.Prepared(R.ACCEPTED, None, {}, {}, vector=vec)

    async def _flagged_cold(self, ops: list, hot) -> dict:
        """For a sweep or a rollback (operations over many scopes) that takes a memory out of
        recall in a scope not held hot: that scope's live memories flagged "contradiction", from
        L2 (current for a cold scope: the sweep and the rollback flush first, and a write loads
        its scope), so a side left alone sheds its flag there too (``core.changes``)."""
        scopes = set()
        for op in ops:
            if isinstance(op, SweepOp):
                scopes |= {s for _, s, code in op.rows if ACTION_OF[code] == EVICT}
            elif isinstance(op, RollbackOp):
                scopes |= {s for _, s, now, target in op.rows if now.get("review") == CONTRADICTION_FLAG
                           and now.get("status") in R.LIVE and target.get("status") not in R.LIVE
                           # or brought back flagged: its rivals are read to see whether any is left
                           or target.get("review") == CONTRADICTION_FLAG and target.get("status") in R.LIVE}
        asked = sorted(s for s in scopes if s not in hot and s in self.l2_scopes)
        out: dict = {}
        for i in range(0, len(asked), 500):
            where = (f"{F.scope_in(asked[i:i + 500])} AND {F.status_in(sorted(R.LIVE))} "
                     f"AND review = {F.quote(CONTRADICTION_FLAG)}")
            tbl = await asyncio.to_thread(self.l2._select, where,  # noqa: SLF001
                                          ["memory_id", "scope", "status", "review", "entity_key", "content",
                                           "version"])
            for r in tbl.to_pylist():
                out.setdefault(r["scope"], _Flagged()).records[r["memory_id"]] = r
        return out


class _Flagged:
    """A cold scope's flagged live records, as much of a ``ScopeState`` as ending a
    contradiction reads."""

    __slots__ = ("records",)

    def __init__(self) -> None:
        self.records: dict[str, dict] = {}

    def get(self, memory_id: str) -> dict | None:
        return self.records.get(memory_id)
