"""What the gate does with a hit: per sensitivity, per category, per rule, per source kind.

The defaults (``DEFAULTS``; a ``[gate]`` config section maps onto ``GatePolicy.from_dict``):

- ``sensitivity``: restricted -> ``block`` (secrets, resident IDs), confidential -> ``redact``
  (phone, e-mail, bank card, one-time code, unnamed high-entropy literal), internal -> ``redact``
  (IPv4 in a personal context);
- ``category``: code -> ``working_only`` (dangerous code under analysis stays in L1),
  injection -> ``pending`` (held for review, never recalled), low_value -> ``working_only``
  (chit-chat and tool noise are never promoted to L2);
- ``rules``: per rule id, wins over category and sensitivity (e.g. ``{"pii.email": "allow"}``);
  the special categories of personal data (``SPECIAL_CATEGORY_RULES``) and the identifiers an
  organisation or a platform gives a person (``KEPT_IDENTIFIER_RULES``: employee, student, member
  numbers, social handles) are ``allow`` by default: kept as written, reported, and their memory
  raised to ``confidential``;
- ``sources``: per source kind, the same three maps, winning over the global ones
  (e.g. ``{"tool": {"category": {"low_value": "allow"}}}``);
- ``injection_sources``: the source kinds the injection rules run for: every kind but the
  user's own words (``user_stated``, ``config_change``);
- ``untrusted_sources``: tagged ``untrusted_source`` in the report (DESIGN section 3); the
  instruction rule (``injection.instruction``) runs for these only;
- ``pending_sources``: what these sources write waits for a reviewer (``pending``, tagged
  ``pending_source``) whatever it says: ``web`` and ``document`` by default (DESIGN section 13);
  a blocked text stays blocked;
- ``pseudonymise_identifiers``: a scope segment, actor, task id or idempotency key that looks
  like personal data or a secret is stored as a keyed pseudonym instead of refused
  (``memactors.gate.identifiers``); off by default.

Actions, weakest first: ``ignore`` (the rule does not run), ``allow`` (reported, no effect),
``redact``, ``working_only``, ``pending``, ``block``. The strongest action of a text's hits is
its decision; redaction applies whenever the text is kept.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from .rules import CATEGORIES, RULES, Rule
from .rules.base import CONFIDENTIAL, INJECTION, INTERNAL, RESTRICTED

# Mirrors memactors.core.records.SOURCE_CONFIDENCE (a test pins them together).
SOURCE_KINDS = ("user_stated", "config_change", "task_outcome", "tool", "agent_inferred", "pattern", "web", "document")
ACTIONS = ("ignore", "allow", "redact", "working_only", "pending", "block")
RANK = {a: i for i, a in enumerate(ACTIONS)}
DECISION = {"ignore": "accepted", "allow": "accepted", "redact": "redacted", "working_only": "working_only",
            "pending": "pending", "block": "blocked"}
# A decision's strictness: its strictest action's rank ("accepted" is two actions')
DECISION_RANK = {d: max(RANK[a] for a in ACTIONS if DECISION[a] == d) for d in set(DECISION.values())}
SENSITIVITIES = (RESTRICTED, CONFIDENTIAL, INTERNAL)
SPECIAL_CATEGORY_RULES = ("pii.health_condition", "pii.sexual_orientation", "pii.beliefs", "pii.ethnic_origin",
                          "pii.criminal_record")
# A number an organisation gives a person (employee, student, member) and a social account's handle:
# what an assistant fills a form or a greeting with, and little harm alone; kept the same way.
KEPT_IDENTIFIER_RULES = ("pii.org_id", "pii.social_handle")

DEFAULTS: dict[str, Any] = {
    "sensitivity": {RESTRICTED: "block", CONFIDENTIAL: "redact", INTERNAL: "redact"},
    "category": {"code": "working_only", "injection": "pending", "low_value": "working_only"},
    # Special categories (health, orientation, beliefs, ethnic origin, convictions: gate/rules/special.py)
    # are kept as written, reported, and raise the memory to confidential: often what the user wants kept.
    "rules": {r: "allow" for r in SPECIAL_CATEGORY_RULES + KEPT_IDENTIFIER_RULES},
    "sources": {},
    "injection_sources": ["task_outcome", "tool", "agent_inferred", "pattern", "web", "document"],
    "untrusted_sources": ["tool", "web", "document"],
    "pending_sources": ["web", "document"],
    "pseudonymise_identifiers": False,
}
_MAPS = ("sensitivity", "category", "rules")


@dataclass(frozen=True)
class GatePolicy:
    sensitivity: dict[str, str] = field(default_factory=lambda: dict(DEFAULTS["sensitivity"]))
    category: dict[str, str] = field(default_factory=lambda: dict(DEFAULTS["category"]))
    rules: dict[str, str] = field(default_factory=lambda: dict(DEFAULTS["rules"]))
    sources: dict[str, dict[str, dict[str, str]]] = field(default_factory=dict)
    injection_sources: tuple[str, ...] = tuple(DEFAULTS["injection_sources"])
    untrusted_sources: tuple[str, ...] = tuple(DEFAULTS["untrusted_sources"])
    pseudonymise_identifiers: bool = False
    pending_sources: tuple[str, ...] = tuple(DEFAULTS["pending_sources"])

    @classmethod
    def from_dict(cls, d: dict[str, Any] | None = None) -> GatePolicy:
        """Defaults overlaid with ``d`` key by key; any unknown key, action, category, sensitivity,
        rule id or source kind is a ValueError naming what is allowed."""
        d = copy.deepcopy(d or {})
        _keys(d, DEFAULTS, "gate")
        merged = copy.deepcopy(DEFAULTS)
        for k in _MAPS:
            _check_map(k, d.get(k, {}), "gate")
            merged[k].update(d.get(k, {}))
        for kind, over in (d.get("sources") or {}).items():
            _source(kind, "gate.sources")
            if not isinstance(over, dict):
                raise ValueError(f"gate.sources.{kind} must be a table of {', '.join(_MAPS)}")
            _keys(over, {k: None for k in _MAPS}, f"gate.sources.{kind}")
            for k, m in over.items():
                _check_map(k, m, f"gate.sources.{kind}")
            merged["sources"][kind] = over
        for k in ("injection_sources", "untrusted_sources", "pending_sources"):
            if k in d:
                if isinstance(d[k], str) or not all(isinstance(s, str) for s in d[k]):
                    raise ValueError(f"gate.{k} must be a list of source kinds")
                for s in d[k]:
                    _source(s, f"gate.{k}")
                merged[k] = list(d[k])
        if "pseudonymise_identifiers" in d:
            if not isinstance(d["pseudonymise_identifiers"], bool):
                raise ValueError("gate.pseudonymise_identifiers must be true or false")
            merged["pseudonymise_identifiers"] = d["pseudonymise_identifiers"]
        return cls(merged["sensitivity"], merged["category"], merged["rules"], merged["sources"],
                   tuple(merged["injection_sources"]), tuple(merged["untrusted_sources"]),
                   merged["pseudonymise_identifiers"], tuple(merged["pending_sources"]))

    def to_dict(self) -> dict[str, Any]:
        return {"sensitivity": dict(self.sensitivity), "category": dict(self.category), "rules": dict(self.rules),
                "sources": copy.deepcopy(self.sources), "injection_sources": list(self.injection_sources),
                "untrusted_sources": list(self.untrusted_sources),
                "pending_sources": list(self.pending_sources),
                "pseudonymise_identifiers": self.pseudonymise_identifiers}

    def action(self, rule: Rule, source: str) -> str:
        """The action for a hit of ``rule`` in text from ``source``: rule id, then category, then
        sensitivity; the source's own table before the global one."""
        if rule.category == INJECTION and source not in self.injection_sources:
            return "ignore"
        if rule.untrusted_only and source not in self.untrusted_sources:
            return "ignore"
        over = self.sources.get(source, {})
        for table in (over.get("rules", {}), self.rules):
            if rule.id in table:
                return table[rule.id]
        for table in (over.get("category", {}), self.category):
            if rule.category in table:
                return table[rule.category]
        for table in (over.get("sensitivity", {}), self.sensitivity):
            if rule.sensitivity in table:
                return table[rule.sensitivity]
        return "allow"


def _keys(d: Any, allowed: dict, where: str) -> None:
    if not isinstance(d, dict):
        raise ValueError(f"{where} must be a table")
    bad = sorted(set(d) - set(allowed))
    if bad:
        raise ValueError(f"{where}: unknown key(s) {bad}; known: {sorted(allowed)}")


def _check_map(kind: str, m: Any, where: str) -> None:
    if not isinstance(m, dict):
        raise ValueError(f"{where}.{kind} must be a table of name -> action")
    known = {"sensitivity": SENSITIVITIES, "category": CATEGORIES, "rules": tuple(RULES)}[kind]
    for name, act in m.items():
        if name not in known:
            raise ValueError(f"{where}.{kind}: unknown {kind} {name!r}; known: {', '.join(sorted(known))}")
        if act not in ACTIONS:
            raise ValueError(f"{where}.{kind}.{name}: unknown action {act!r}; known: {', '.join(ACTIONS)}")
        no_placeholder = (kind == "category" and name not in ("pii", "secret")
                          or kind == "rules" and RULES[name].placeholder is None)
        if act == "redact" and no_placeholder:
            raise ValueError(f"{where}.{kind}.{name}: 'redact' needs a placeholder; only pii and secret rules have one")


def _source(kind: str, where: str) -> None:
    if kind not in SOURCE_KINDS:
        raise ValueError(f"{where}: unknown source kind {kind!r}; known: {', '.join(SOURCE_KINDS)}")
