"""Promotion L1 -> L2 and demotion L2 -> L1, as rules over working-pool items and the write
gate's verdicts (DESIGN section 2). Pure: the session gathers the items, the owner applies what
these functions decide (``PromoteOp``, ``DemoteOp``).

Never promoted (checked first, in this order; the first that applies is the reason):

- ``risky``: the gate blocked it, held it for review (``pending``) for what it says, or tagged
  it ``secret``, ``code`` or ``injection``;
- ``chitchat``: the gate tagged it ``low_value``;
- ``risky`` again: anything else the gate kept ``working_only``;
- ``intermediate_reasoning``: the agent's own reasoning and notes (slots ``reasoning`` and
  ``scratchpad``, source kinds ``agent_inferred`` and ``pattern``);
- ``untrusted_source``: web pages and documents (a page repeated three times must not become
  a fact: they reach the vault only through an explicit write and a reviewer's approval, as the
  gate holds them by default; ``pending_source``), and anything held for its source (a source
  added to the gate's ``pending_sources``);
- ``transient_tool_output``: tool output without structured fields (subject, predicate, object).

Promoted (the first rule that applies names the promotion):

- ``explicit``: the user's (or an admin's, ``config_change``) explicit preference or
  instruction: structured fields, or category ``preference`` / ``instruction``, or a task
  constraint. Free text is never guessed to be a preference: the caller says so;
- ``structured_tool_data``: a tool's structured result (subject, predicate and object set);
- ``seen_in_turns``: the same fact (the same subject, predicate and object, or the same
  normalised text) observed in at least ``min_turns`` (3) distinct turns of the session.

Anything else stays in L1 (reason ``no_rule``). Of several new items stating one fact, only
the newest a rule promotes is promoted (the vault would only refresh it again).

Demotion: a live vault memory returned ``n`` times in a row without being cited (the ledger's
``uncited_streak``; a citation resets it) goes back to the working pool as a copy made from it;
that copy, returned ``n`` times again without a citation, is archived (see ``demotion``).
"""

from __future__ import annotations

from dataclasses import dataclass

from . import records as R

RISKY_DECISIONS = frozenset({R.BLOCKED, R.PENDING, R.WORKING_ONLY})
RISKY_TAGS = frozenset({"secret", "code", "injection"})
CHITCHAT_TAGS = frozenset({"low_value"})
REASONING_SLOTS = frozenset({"reasoning", "scratchpad"})
REASONING_SOURCES = frozenset({"agent_inferred", "pattern"})
UNTRUSTED = frozenset({"web", "document"})
EXPLICIT_SOURCES = frozenset({"user_stated", "config_change"})
EXPLICIT_CATEGORIES = frozenset({"preference", "instruction"})
SLOTS = ("observation", "constraint", "goal", "reasoning", "scratchpad")

NEVER = ("risky", "chitchat", "intermediate_reasoning", "untrusted_source", "transient_tool_output")
RULES = ("explicit", "structured_tool_data", "seen_in_turns")
MIN_TURNS = 3
DEMOTE_AFTER = 5


@dataclass(frozen=True, slots=True)
class Candidate:
    """A working-pool item as promotion sees it: the record's fields that matter, the turn it
    was observed in, its L0 slot and the gate's verdict on it."""

    memory_id: str
    content: str
    source_kind: str
    turn: int
    slot: str = "observation"
    subject: str | None = None
    predicate: str | None = None
    object: str | None = None
    category: str = "default"
    gate_decision: str = R.ACCEPTED
    gate_tags: tuple[str, ...] = ()
    status: str = "active"

    @property
    def structured(self) -> bool:
        return self.subject is not None and self.predicate is not None and self.object is not None


@dataclass(frozen=True, slots=True)
class Verdict:
    """What promotion decided for one item: promote or not, the rule that decided, and the
    category the vault memory gets."""

    memory_id: str
    promote: bool
    rule: str
    category: str | None = None


def fact_key(c: Candidate) -> str:
    """What makes two observations the same fact: subject, predicate and object (normalised),
    or else the normalised text."""
    if c.structured:
        return "f:" + R.entity_key(c.subject, c.predicate) + ":" + R.normalise(c.object)
    return "t:" + R.content_hash(c.content)


def refusal(c: Candidate) -> str | None:
    """The never-promoted rule that applies to ``c``, or None."""
    # Held only for its source (the gate's pending_sources): named for that (the rule below), not
    # "risky"; any such source is untrusted, a configured one (a tool, the user) as much as the web.
    by_source = "pending_source" in c.gate_tags
    if (c.gate_decision == R.BLOCKED or (c.gate_decision == R.PENDING or c.status == "pending") and not by_source
            or RISKY_TAGS.intersection(c.gate_tags)):
        return "risky"
    if CHITCHAT_TAGS.intersection(c.gate_tags):  # the gate keeps chit-chat working_only: name it for what it is
        return "chitchat"
    if c.gate_decision in RISKY_DECISIONS and not by_source:
        return "risky"
    if c.slot in REASONING_SLOTS or c.source_kind in REASONING_SOURCES:
        return "intermediate_reasoning"
    if c.source_kind in UNTRUSTED or by_source:
        return "untrusted_source"
    if c.source_kind == "tool" and not c.structured:
        return "transient_tool_output"
    return None


def _explicit(c: Candidate) -> str | None:
    """The category of an explicit preference or instruction, or None."""
    if c.source_kind not in EXPLICIT_SOURCES:
        return None
    if c.category in EXPLICIT_CATEGORIES:
        return c.category
    if c.slot == "constraint":
        return "instruction"
    if c.structured:
        return "instruction" if c.source_kind == "config_change" else "preference"
    return None


def _category(c: Candidate, default: str) -> str:
    """A category the caller chose wins over the rule's default."""
    return c.category if c.category not in ("default", "observation") else default


def decide(new: list[Candidate], history: list[Candidate] = (), *, min_turns: int = MIN_TURNS) -> list[Verdict]:
    """A verdict for each item of ``new`` (in order). ``history``: the session's earlier items
    (already decided; they count towards ``seen_in_turns`` but are never promoted again)."""
    turns: dict[str, set[int]] = {}
    for c in (*history, *new):
        if refusal(c) is None:
            turns.setdefault(fact_key(c), set()).add(c.turn)
    ruled = []  # (item, refusal or rule, category or None)
    for c in new:
        why = refusal(c)
        if why is not None:
            ruled.append((c, why, None))
            continue
        explicit = _explicit(c)
        if explicit is not None:
            ruled.append((c, "explicit", _category(c, explicit)))
        elif c.source_kind == "tool" and c.structured:
            ruled.append((c, "structured_tool_data", _category(c, "observation")))
        elif len(turns.get(fact_key(c), ())) >= min_turns:
            ruled.append((c, "seen_in_turns", _category(c, "task_learning")))
        else:
            ruled.append((c, "no_rule", None))
    # Per fact, the newest item a rule promotes (a later one wins a tie): a refused or unruled
    # copy after it (the same text from a page, the agent restating a tool's result) must not
    # take the promotion away from it, or the fact never reached the vault.
    newest: dict[str, Candidate] = {}
    for c, rule, _ in ruled:
        k = fact_key(c)
        if rule in RULES and (k not in newest or c.turn >= newest[k].turn):
            newest[k] = c
    out = []
    for c, rule, cat in ruled:
        if rule not in RULES:
            out.append(Verdict(c.memory_id, False, rule))
        elif newest[fact_key(c)] is not c:
            out.append(Verdict(c.memory_id, False, "newer_item_of_same_fact"))
        else:
            out.append(Verdict(c.memory_id, True, rule, cat))
    return out


def demotion(rec: dict, uncited_streak: int, n: int = DEMOTE_AFTER) -> str | None:
    """What an uncited run does to a memory: "demote" for a live vault memory returned ``n``
    times in a row without a citation; "archive" for a demoted copy (a live working item made
    from a vault memory) returned ``n`` times again without one; None otherwise (below the
    streak, pending, already gone, or an ordinary session observation)."""
    if rec is None or uncited_streak < n or rec.get("status") not in R.LIVE:
        return None
    if rec.get("pool") == "vault":
        return "demote"
    if rec.get("pool") == "working" and rec.get("derived_from"):
        return "archive"
    return None
