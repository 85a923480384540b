"""The write gate ("customs", DESIGN section 6): scan, decide, redact before anything is stored.

``Gate().scan(text, source_kind)`` -> ``GateReport`` (decision, text to keep, hits, risk, tags);
``Gate().redact_all(text)`` for text that is used but never stored; ``GatePolicy.from_dict``
for the ``[gate]`` configuration; ``parse`` for the text tree the rules read.
"""

from .policy import ACTIONS, DEFAULTS, SOURCE_KINDS, GatePolicy
from .rules import RULES, Rule
from .scanner import Gate, GateReport, Hit
from .tree import parse

__all__ = ["Gate", "GateReport", "Hit", "GatePolicy", "DEFAULTS", "ACTIONS", "SOURCE_KINDS", "RULES", "Rule", "parse"]
