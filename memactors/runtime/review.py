"""``rt.review``: the review queues. Writes the gate held as ``pending`` (instructions from
untrusted sources: ``pending``, ``approve``, ``reject``), and memories due for their category's
periodic review (``[lifecycle.ttl.*].review_days``, flagged by the sweep: ``due``, ``confirm``,
``retire``). Listing needs a read grant on the scope; deciding needs a write grant. Each
decision is an operation on the one change path (``ReviewOp``, ``ReviewDueOp``)."""

from __future__ import annotations

from ..core.grants import GrantTable
from ..core.ops import ReviewDueOp, ReviewOp
from ..core.scopes import parse_scope
from .arguments import typed_calls


@typed_calls("rt.review")
class Review:
    def __init__(self, rt) -> None:
        self._rt = rt

    def pending(self, scope: str, *, actor: str) -> list[dict]:
        """Held writes of ``scope``, oldest first."""
        return self._list(scope, actor, "pending")

    def due(self, scope: str, *, actor: str) -> list[dict]:
        """Memories of ``scope`` due for their periodic review (entity facts every 180 days,
        instructions every 90, by default), oldest first: still recalled as they are."""
        return self._list(scope, actor, "periodic")

    def confirm(self, memory_id: str, *, actor: str, reason: str) -> dict:
        """A memory due for review still holds: its review clock restarts (refreshed now)."""
        return self._rt._by_memory(ReviewDueOp(memory_id, self._rt._ids.id(actor, "actor"), reason, True,
                                               self._rt._new_key()))

    def retire(self, memory_id: str, *, actor: str, reason: str) -> dict:
        """A memory due for review no longer holds: evicted (out of recall; its history stays in
        the ledger, and a rollback can bring it back)."""
        return self._rt._by_memory(ReviewDueOp(memory_id, self._rt._ids.id(actor, "actor"), reason, False,
                                               self._rt._new_key()))

    def _list(self, scope: str, actor: str, kind: str) -> list[dict]:
        rt = self._rt
        s = str(parse_scope(rt._ids.scope(scope)))  # noqa: SLF001
        actor = rt._ids.id(actor, "actor")  # noqa: SLF001
        GrantTable.make(actor, s)
        return rt._calls.get(rt._owner(s).review_list.remote([s], actor, kind, rt.clock.now_us()))

    def approve(self, memory_id: str, *, actor: str, reason: str) -> dict:
        """The held write takes effect now, through versions and dedup like any write."""
        return self._rt._by_memory(ReviewOp(memory_id, self._rt._ids.id(actor, "actor"), reason, True,
                                            self._rt._new_key()))

    def reject(self, memory_id: str, *, actor: str, reason: str) -> dict:
        """The held write is erased (its data key destroyed); the decision stays in the ledger."""
        return self._rt._by_memory(ReviewOp(memory_id, self._rt._ids.id(actor, "actor"), reason, False,
                                            self._rt._new_key()))
