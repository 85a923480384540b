"""L0: the working slots of one reasoning turn, rendered into the prompt (DESIGN section 2).

Slots and their limits:

- task goal, the plan and its current step (and the next one);
- recent observations: at most ``MAX_RECENT`` (5); a new one pushes out the oldest
  non-critical one, so critical observations are kept first (only when all five are critical
  does the oldest critical one go);
- constraints: at most ``MAX_CONSTRAINTS`` (8), never scrolled out (a ninth is refused, not
  swapped in: a constraint that silently fell out of the window is the failure L0 exists to
  prevent);
- scratchpad: trimmed from the front past ``SCRATCHPAD_CHARS`` (500) characters (the newest
  notes stay).

``to_prompt()`` renders the slots deterministically (the same state gives the same text). Every
text in a slot is untrusted (a tool result, a web page, a note derived from them): ``quote``
indents its every line break (any of the ones Unicode and ``str.splitlines`` know), so no line
of it starts at the left margin, where L0's own sections ("## ...") and items ("- ...") start.
Given a token budget (the CJK-aware estimate of ``memactors.core.budget``) it gives up the
scratchpad first, then non-critical observations (oldest first); goal, step and constraints are
never dropped. Pure: no I/O.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from . import validate as V
from .budget import estimate_tokens
from .errors import InvalidRecord
from .records import MAX_CONTENT_CHARS

MAX_RECENT = 5
MAX_CONSTRAINTS = 8
SCRATCHPAD_CHARS = 500
ERASED = "(erased)"  # what L0 shows where an erased goal, plan step or note stood
MAX_PLAN_STEPS = 50
SHOWN_CHARS = 1_000  # an observation is shown up to this many characters (its whole text is in L1)
MAX_SOURCE_CHARS = 64
INDENT = "    "  # what follows a line break inside a slot's text
_BREAKS = re.compile("\r\n|[\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]")


def quote(text: str) -> str:
    """``text`` as L0 shows it: each line break followed by ``INDENT``, so that none of its lines
    can open a section or an item of its own (a tool result's "\\n## Constraints ..." stays text)."""
    return _BREAKS.sub("\n" + INDENT, text)


@dataclass(frozen=True, slots=True)
class Observation:
    """What the agent saw in one turn: ``source`` (e.g. "user", "tool:search"), the text as
    the write gate left it, its importance, whether it is critical, the turn and the order of
    arrival (``seq``), and the L1 item it was written to."""

    source: str
    content: str
    importance: float = 0.5
    critical: bool = False
    turn: int = 0
    seq: int = 0
    memory_id: str | None = None


def check_source(source: object) -> str:
    """An observation's source label: 1-64 printable ASCII characters without spaces."""
    if not isinstance(source, str) or not 0 < len(source) <= MAX_SOURCE_CHARS or not source.isascii() \
            or not source.isprintable() or " " in source:
        raise InvalidRecord(f"source must be 1-{MAX_SOURCE_CHARS} printable ASCII characters without spaces "
                            f"(got {V.got(source)})")
    return source


@dataclass(slots=True)
class L0:
    """The slots of one session's L0 (see the module docstring)."""

    goal: str
    plan: list[str] = field(default_factory=list)
    step: int = 0  # index into plan of the current step
    constraints: list[str] = field(default_factory=list)
    observations: list[Observation] = field(default_factory=list)
    scratchpad: str = ""  # what the prompt shows of the notes: their last SCRATCHPAD_CHARS characters
    seq: int = 0  # observations seen so far (orders them)
    # The notes the scratchpad is made of, oldest first, (L1 item or None, text): only those still
    # (partly) within its last SCRATCHPAD_CHARS characters. An erased note is found by its item,
    # whole, even when the window cut its start (a text search would miss that part, and cut
    # into other notes holding the same words).
    notes: list[tuple[str | None, str]] = field(default_factory=list)

    @classmethod
    def new(cls, goal: str, plan=(), constraints=()) -> L0:
        """Checked slots for a task: ``goal`` (text), ``plan`` (at most 50 step texts) and
        ``constraints`` (at most 8 texts). Raises InvalidRecord."""
        l0 = cls(V.text(goal, "goal", MAX_CONTENT_CHARS))
        l0.plan = V.str_list(plan, "plan", max_len=MAX_PLAN_STEPS, max_chars=MAX_CONTENT_CHARS)
        if not isinstance(constraints, (list, tuple)):
            raise InvalidRecord(f"constraints must be a list of texts, not {V.got(constraints)}")
        for c in constraints:
            l0.add_constraint(c)
        return l0

    # --- changing the slots --------------------------------------------------------------

    def add_constraint(self, text: object) -> bool:
        """Add a constraint (never scrolled out). Returns False when it is already there; raises
        InvalidRecord when ``MAX_CONSTRAINTS`` are held."""
        t = V.text(text, "constraint", MAX_CONTENT_CHARS)
        if t in self.constraints:
            return False
        if len(self.constraints) >= MAX_CONSTRAINTS:
            raise InvalidRecord(f"L0 holds at most {MAX_CONSTRAINTS} constraints and never drops one; "
                                "merge or remove constraints first")
        self.constraints.append(t)
        return True

    def remove_constraint(self, text: str) -> bool:
        if text in self.constraints:
            self.constraints.remove(text)
            return True
        return False

    def texts(self) -> set[str]:
        """Every text L0 shows (goal, plan steps, constraints, observations)."""
        return {self.goal, *self.plan, *self.constraints, *(o.content for o in self.observations)}

    def erase(self, slot: str, text: str) -> None:
        """An erased goal, plan step, constraint or note leaves what L0 shows: a constraint goes,
        the goal and a step read ``ERASED`` (the plan keeps its places), a note is cut out."""
        if slot == "constraint":
            self.remove_constraint(text)
        elif slot == "goal" and self.goal == text:
            self.goal = ERASED
        elif slot in ("plan", "step"):
            self.plan = [ERASED if p == text else p for p in self.plan]
        elif slot == "scratchpad":
            self._set_notes([(m, t) for m, t in self.notes if t != text])

    def drop(self, memory_ids: set[str]) -> int:
        """Take out the observations whose L1 items are ``memory_ids`` (erased: a forgotten
        memory leaves the prompt too); a note of them is cut out, whole, even where the
        scratchpad's window had cut its start (as a session resumed from the ledger, which no
        longer holds it, shows it). Returns how many observations went."""
        kept = [o for o in self.observations if o.memory_id not in memory_ids]
        n = len(self.observations) - len(kept)
        self.observations = kept
        if any(m in memory_ids for m, _ in self.notes):
            self._set_notes([(m, t) for m, t in self.notes if m not in memory_ids])
        return n

    def observe(self, obs: Observation) -> Observation | None:
        """Add an observation (its ``seq`` is assigned here). Returns the one pushed out, if
        any: the oldest non-critical one, else the oldest."""
        self.seq += 1
        self.observations.append(replace(obs, seq=self.seq))
        if len(self.observations) <= MAX_RECENT:
            return None
        pool = [o for o in self.observations if not o.critical] or self.observations
        victim = min(pool, key=lambda o: o.seq)
        self.observations.remove(victim)
        return victim

    def note(self, text: object, memory_id: str | None = None) -> None:
        """Append to the scratchpad (``memory_id``: the note's L1 item, so an erasure finds it);
        past ``SCRATCHPAD_CHARS`` the oldest characters go."""
        t = V.text(text, "note", MAX_CONTENT_CHARS)
        self._set_notes([*self.notes, (memory_id, t)])

    def _set_notes(self, notes: list[tuple[str | None, str]]) -> None:
        # Only the notes still within the window are kept (a note wholly out of it is never shown).
        while len(notes) > 1 and sum(len(t) + 1 for _, t in notes[1:]) - 1 >= SCRATCHPAD_CHARS:
            notes = notes[1:]
        self.notes = notes
        self.scratchpad = "\n".join(t for _, t in notes)[-SCRATCHPAD_CHARS:]

    def advance(self, steps: int = 1) -> None:
        """Move to a later step of the plan (not past its end)."""
        steps = V.integer(steps, "steps", 0, MAX_PLAN_STEPS)
        self.step = min(self.step + steps, max(len(self.plan) - 1, 0))

    @property
    def current_step(self) -> str | None:
        return self.plan[self.step] if self.plan else None

    @property
    def next_step(self) -> str | None:
        return self.plan[self.step + 1] if self.step + 1 < len(self.plan) else None

    def focus(self) -> str:
        """What the task is about now (the push recall's query): the goal and the current step."""
        return self.goal if self.current_step is None else f"{self.goal}\n{self.current_step}"

    # --- rendering -----------------------------------------------------------------------

    def ordered_observations(self) -> list[Observation]:
        """Critical first, then the others; each group in order of arrival."""
        return sorted(self.observations, key=lambda o: (not o.critical, o.seq))

    def to_prompt(self, token_budget: int | None = None) -> str:
        """The slots as prompt text, deterministic. Within ``token_budget`` (None: no budget)
        the scratchpad goes first, then non-critical observations oldest first; goal, plan step
        and constraints always stay (so the result may still exceed a budget too small for them)."""
        obs = self.ordered_observations()
        pad = self.scratchpad
        text = self._render(obs, pad)
        if token_budget is None or estimate_tokens(text) <= token_budget:
            return text
        pad = ""
        text = self._render(obs, pad)
        for o in sorted((o for o in obs if not o.critical), key=lambda o: o.seq):
            if estimate_tokens(text) <= token_budget:
                break
            obs = [x for x in obs if x is not o]
            text = self._render(obs, pad)
        return text

    def _render(self, obs: list[Observation], pad: str) -> str:
        lines = ["## Task", f"Goal: {quote(self.goal)}"]
        if self.plan:
            lines.append("Plan:")
            for i, s in enumerate(self.plan):
                mark = "done" if i < self.step else "current" if i == self.step else "next" if i == self.step + 1 \
                    else "later"
                lines.append(f"{'>' if i == self.step else ' '} {i + 1}. {quote(s)} [{mark}]")
        if self.constraints:
            lines.append("## Constraints (always apply)")
            lines += [f"- {quote(c)}" for c in self.constraints]
        if obs:
            lines.append("## Recent observations")
            for o in obs:
                body = o.content if len(o.content) <= SHOWN_CHARS else o.content[:SHOWN_CHARS] + " [...]"
                lines.append(f"- {'[critical] ' if o.critical else ''}({o.source}, turn {o.turn}) {quote(body)}")
        if pad:
            lines += ["## Scratchpad", INDENT + quote(pad)]
        return "\n".join(lines)

    def tokens(self) -> int:
        return estimate_tokens(self.to_prompt())
