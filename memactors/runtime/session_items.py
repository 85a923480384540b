"""What a session's own items say when read back (``Session.resume``, ``Session._drop_erased``):
what a resumed session holds again (``read_back``), the promotion candidate an item stands
for, the plan's current step, and whether recall would still serve an item; and the ledger
marks that keep a session's turn and step."""

from __future__ import annotations

from ..core import promotion as P
from ..core import records as R
from ..core.errors import MemactorsError
from ..core.grants import SYSTEM_ACTOR
from ..core.ops import MarkOp
from ..core.l0 import Observation
from ..core.versions import expired
from ..core.working import KEPT

SHOWN_SLOTS = ("goal", "plan", "step", "constraint", "scratchpad")  # L0 shows their text as written
HELD = "(held for review by the write gate)"  # what L0 shows of an item the gate held, in every slot


def candidate(rec: dict, tag: dict, gate) -> P.Candidate:
    """A working item read back from the ledger, as promotion sees it: the gate's verdict is
    found again by scanning the text as stored (the gate is deterministic; a redaction's
    placeholders no longer match, and redacted text is what promotion would store anyway)."""
    rep = gate.scan(rec["content"], rec["source_kind"])
    return P.Candidate(rec["memory_id"], rec["content"], rec["source_kind"], tag["turn"], tag["slot"],
                       rec.get("subject"), rec.get("predicate"), rec.get("object"), rec.get("category") or "default",
                       R.PENDING if rec["status"] == "pending" else rep.decision, tuple(rep.tags), rec["status"])


def read_back(s, items: list[dict], gate) -> None:
    """A resumed session ``s`` (its L0 made with goal and plan) given back what its own
    ``items`` (the ledger's records, in the order written) held: its item ids, those gone from
    L1, the texts L0 shows, constraints, steps, plan ids, notes and observations, and the
    promotion candidates of the turn it is in (``_new``) and of earlier turns (``_history``)."""
    l0 = s.l0
    for r in items:
        t, mid = r["session"], r["memory_id"]
        s._items.append(mid)
        if r["status"] not in KEPT:
            s._gone.add(mid)
        text = HELD if r["status"] == "pending" else r["content"]
        if t["slot"] in SHOWN_SLOTS:
            s._shown[mid] = (t["slot"], text)
        if t["slot"] == "constraint":
            l0.constraints.append(text)
        elif t["slot"] == "step":
            s._steps[mid] = t["n"]
        elif t["slot"] == "plan" and r["status"] in KEPT:
            s._plan_ids[t["n"]] = mid
        elif t["slot"] == "scratchpad":
            l0.note(text, mid)
        elif t["slot"] in ("observation", "reasoning"):
            l0.observe(Observation(r.get("source_id") or "agent", text, float(r["importance"]), t["critical"],
                                   t["turn"], memory_id=mid))
        if t["slot"] not in ("plan", "step", "goal"):
            # Through promotion already, unless from the current turn and still in L1 (re-decided
            # at its end: a promotion's idempotency key makes a repeat a no-op).
            c = candidate(r, t, gate)
            (s._new if t["turn"] == s.turn and mid not in s._gone else s._history).append(c)


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
