"""``rt.review``: the queue of writes the gate held as ``pending`` (instructions from untrusted
sources). Listing needs a read grant on the scope; deciding needs a write grant. Each decision
is an operation on the one change path (``ReviewOp``)."""

from __future__ import annotations

from ..core.grants import GrantTable
from ..core.ops import ReviewOp
from ..core.scopes import parse_scope


class Review:
    def __init__(self, rt) -> None:
        self._rt = rt

    def pending(self, scope: str, *, actor: str) -> list[dict]:
        rt = self._rt
        s = str(parse_scope(rt._ids.scope(scope)))  # noqa: SLF001
        actor = rt._ids.id(actor, "actor")  # noqa: SLF001
        GrantTable.make(actor, s)
        return rt._calls.get(rt._owner(s).review_list.remote([s], actor))

    def approve(self, memory_id: str, *, actor: str, reason: str) -> dict:
        """The held write takes effect now, through versions and dedup like any write."""
        return self._rt._by_memory(ReviewOp(memory_id, self._rt._ids.id(actor, "actor"), reason, True,
                                            self._rt._new_key()))

    def reject(self, memory_id: str, *, actor: str, reason: str) -> dict:
        """The held write is erased (its data key destroyed); the decision stays in the ledger."""
        return self._rt._by_memory(ReviewOp(memory_id, self._rt._ids.id(actor, "actor"), reason, False,
                                            self._rt._new_key()))
