"""Free text the runtime keeps in clear beside the memories (a grant's reason): through the
write gate first, like everything that reaches a log (DESIGN section 6)."""

from __future__ import annotations

from ..core.errors import InvalidRecord

MAX_REASON_CHARS = 1000  # as the operations' own check (memactors.core.ops)


def gated_reason(gate, text: object, what: str) -> object:
    """``text`` as the gate leaves it (redacted where it must be); a text the gate would block
    or hold is refused with InvalidRecord naming its tags, never its words. Anything that is
    not a short str is returned unchanged, for the operation's own check to refuse."""
    if not isinstance(text, str) or not text.strip() or len(text) > MAX_REASON_CHARS:
        return text
    rep = gate.scan(text, "config_change")
    if rep.decision in ("blocked", "pending"):
        raise InvalidRecord(f"the reason of {what} did not pass the write gate ({rep.decision}: "
                            f"{', '.join(rep.tags) or 'no tags'})")
    return rep.text
