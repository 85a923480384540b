"""Free text the runtime keeps in clear beside the memories (a grant's reason, a tool's name, the reason an
operation states for a change): through the write gate first, like everything that reaches a log
(DESIGN section 6)."""

from __future__ import annotations

from ..core.errors import InvalidRecord

MAX_REASON_CHARS = 1000  # as the operations' own check (memactors.core.ops)


def gated_text(gate, text: object, what: str, max_chars: int = MAX_REASON_CHARS, source: str = "config_change"
               ) -> object:
    """``text`` as the gate leaves it (redacted where it must be); a text the gate would block
    or hold is refused with InvalidRecord naming its tags, never its words. Anything that is
    not a short str is returned unchanged, for the operation's own check to refuse."""
    if not isinstance(text, str) or not text.strip() or len(text) > max_chars:
        return text
    rep = gate.scan(text, source)
    if rep.decision in ("blocked", "pending"):
        raise InvalidRecord(f"{what} did not pass the write gate ({rep.decision}: "
                            f"{', '.join(rep.tags) or 'no tags'})")
    return rep.text
