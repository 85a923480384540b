"""What a session's own items say when read back (``Session.resume``, ``Session._drop_erased``):
the promotion candidate an item stands for, the plan's current step, and whether recall would
still serve an item; and the ledger marks that keep a session's turn and step."""

from __future__ import annotations

from ..core import promotion as P
from ..core import records as R
from ..core.errors import MemactorsError
from ..core.grants import SYSTEM_ACTOR
from ..core.ops import MarkOp
from ..core.versions import expired


def candidate(rec: dict, tag: dict, gate) -> P.Candidate:
    """A working item read back from the ledger, as promotion sees it: the gate's verdict is
    found again by scanning the text as stored (the gate is deterministic; a redaction's
    placeholders no longer match, and redacted text is what promotion would store anyway)."""
    rep = gate.scan(rec["content"], rec["source_kind"])
    return P.Candidate(rec["memory_id"], rec["content"], rec["source_kind"], tag["turn"], tag["slot"],
                       rec.get("subject"), rec.get("predicate"), rec.get("object"), rec.get("category") or "default",
                       R.PENDING if rec["status"] == "pending" else rep.decision, tuple(rep.tags), rec["status"])


def place(steps: dict[str, int], plan: list, marked: int | None = None) -> int:
    """The current step: the place the session's step mark names (``marked``: its last
    ``advance()``), else (a session from before step marks) the one the newest step item still
    held names, else the plan's first; the same in the live session as on resume (which reads
    only what the ledger holds). A step item copies its plan item's text, so erasing the text
    erases both; the mark keeps the place."""
    n = max(next(reversed(steps.values()), 0), marked or 0)
    return min(n, max(len(plan) - 1, 0))


def served(rec: dict, now_us: int) -> bool:
    """Whether recall would still serve this record (live, not past its hard TTL)."""
    return rec.get("status") in R.LIVE and not expired(rec, now_us)


def turn_mark(session_id: str) -> str:
    """The name of a session's turn mark: the turn its last ``end_turn()`` moved it to."""
    return f"session-turn:{session_id}"


def step_mark(session_id: str) -> str:
    """The name of a session's step mark: the place in the plan its last ``advance()`` moved to."""
    return f"session-step:{session_id}"


def record_marks(rt, sessions: list, name, value: int | None, what: str) -> None:
    """Each session's mark ``name(id)`` set to ``value`` (None: its next turn), one call."""
    ops = []
    for s in sessions:
        v = s.turn + 1 if value is None else value
        ops.append(MarkOp(name(s.id), v, SYSTEM_ACTOR, f"{what}-{s.id}-{v}").validate())
    if not ops:
        return
    try:
        rt._submit_by_scope(ops)  # noqa: SLF001
    except MemactorsError as exc:
        for s in sessions:
            s.errors.append(f"{type(exc).__name__}: the {what} was not recorded: {exc}")
