"""What a session's own items say when read back (``Session.resume``, ``Session._drop_erased``):
the promotion candidate an item stands for, the plan's current step, and whether recall would
still serve an item. Pure."""

from __future__ import annotations

from ..core import promotion as P
from ..core import records as R


def candidate(rec: dict, tag: dict, gate) -> P.Candidate:
    """A working item read back from the ledger, as promotion sees it: the gate's verdict is
    found again by scanning the text as stored (the gate is deterministic; a redaction's
    placeholders no longer match, and redacted text is what promotion would store anyway)."""
    rep = gate.scan(rec["content"], rec["source_kind"])
    return P.Candidate(rec["memory_id"], rec["content"], rec["source_kind"], tag["turn"], tag["slot"],
                       rec.get("subject"), rec.get("predicate"), rec.get("object"), rec.get("category") or "default",
                       R.PENDING if rec["status"] == "pending" else rep.decision, tuple(rep.tags), rec["status"])


def place(steps: dict[str, int], plan: list) -> int:
    """The current step: the place the newest step item still held names (the plan's first when
    none is). An erased step item takes its place with it, in the live session as on resume
    (which reads only what the ledger holds): the plan's texts are their own items'."""
    n = next(reversed(steps.values()), 0)
    return min(n, max(len(plan) - 1, 0))


def served(rec: dict, now_us: int) -> bool:
    """Whether recall would still serve this record (live, not past its hard TTL)."""
    return rec.get("status") in R.LIVE and (rec.get("hard_expires_at") is None or rec["hard_expires_at"] > now_us)
