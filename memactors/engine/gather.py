"""What an owner gathers for promotion, demotion and review before deciding them (DESIGN
sections 2 and 6).

Mixed into ``ScopeCore``. The decide functions (``memactors.core.changes``) are pure: a
promotion needs the item's vector (the working pool keeps it; a cold or expired item is embedded
again), a demotion the vault memory's, and a promotion up the scope tree the source record
(from the hot state or the ledger: the source scope may be another owner's) and a read grant
on it, checked here against the ledger's grants. A review's approval needs the held write's
author (the actor of its write event, from the ledger): nobody approves their own held write.
"""

from __future__ import annotations

from ..core import changes as C
from ..core import records as R
from ..core.scopes import parse_scope


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
