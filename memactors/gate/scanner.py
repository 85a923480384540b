"""The gate's one entry point: ``Gate.scan(text, source_kind)`` returns a report and a decision.

A report holds rule ids, spans and risks, never the matched values. Text that is redacted
comes back with typed placeholders; blocked text comes back as nothing at all.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .rules import BLOCK, RULES, Rule


@dataclass(frozen=True, slots=True)
class Hit:
    rule: str
    category: str
    start: int
    end: int
    risk: float

    def to_dict(self) -> dict:
        return {"rule": self.rule, "category": self.category, "span": [self.start, self.end], "risk": self.risk}


@dataclass(slots=True)
class GateReport:
    decision: str  # accepted | redacted | blocked
    text: str | None  # the text to store (redacted), None when blocked
    hits: list[Hit] = field(default_factory=list)
    risk: float = 0.0

    @property
    def tags(self) -> list[str]:
        return sorted({h.category for h in self.hits})

    def summary(self) -> dict:
        """What may be logged: decision, rule ids, spans, risk. Never a value."""
        return {"decision": self.decision, "risk": self.risk, "tags": self.tags, "hits": [h.to_dict() for h in self.hits]}


class Gate:
    """Runs every registered rule whose pre-scan fires, then decides."""

    def __init__(self, rules: dict[str, Rule] | None = None) -> None:
        self.rules = list((rules or RULES).values())

    def scan(self, text: str, source_kind: str = "user_stated") -> GateReport:
        hits: list[Hit] = []
        for rule in self.rules:
            if not rule.prescan(text):
                continue
            for start, end in rule.finditer(text):
                hits.append(Hit(rule.id, rule.category, start, end, rule.risk))
        if not hits:
            return GateReport("accepted", text)
        risk = max(h.risk for h in hits)
        if any(RULES[h.rule].action == BLOCK for h in hits if h.rule in RULES):
            return GateReport("blocked", None, hits, risk)
        return GateReport("redacted", _redact(text, hits), hits, risk)

    def redact_all(self, text: str) -> str:
        """Every hit replaced by its placeholder, blocked kinds included: for text that is used
        but never stored (recall queries)."""
        hits = [Hit(r.id, r.category, a, b, r.risk) for r in self.rules if r.prescan(text) for a, b in r.finditer(text)]
        return _redact(text, hits) if hits else text

    def scan_many(self, texts: list[str], source_kind: str = "user_stated") -> list[GateReport]:
        return [self.scan(t, source_kind) for t in texts]


def _redact(text: str, hits: list[Hit]) -> str:
    out, pos = [], 0
    for h in sorted(hits, key=lambda h: h.start):
        if h.start < pos:  # overlapping hits: the earlier one already covers it
            continue
        out.append(text[pos : h.start])
        out.append(RULES[h.rule].placeholder)
        pos = h.end
    out.append(text[pos:])
    return "".join(out)
