"""The rule contract and the one registry every rule module registers into.

A rule is independent: it declares the node kinds it reads (``binds``), the cheap triggers
that make it worth running (substrings of the raw text, of its lower-case form, or a
regex/predicate for what substrings cannot say), and a ``find`` that yields spans inside the
node. What happens to a hit (block, redact, hold, keep in L1) is the policy's call, by the
rule's category and sensitivity, never the rule's.
"""

from __future__ import annotations

import math
from .lazy import re
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

from ..tree import Node, Tree

PII, SECRET, CODE, INJECTION, LOW_VALUE = "pii", "secret", "code", "injection", "low_value"
CATEGORIES = (PII, SECRET, CODE, INJECTION, LOW_VALUE)
# The record's sensitivity levels (DESIGN section 3); "" for rules that are not about data.
RESTRICTED, CONFIDENTIAL, INTERNAL = "restricted", "confidential", "internal"

# Action names of the first gate, kept for importers; GatePolicy now maps hits to actions.
BLOCK = "block"
REDACT = "redact"


@dataclass(slots=True)
class Ctx:
    """What a rule sees besides its node: the whole text, its lower-case form, the source kind,
    the tree, and a per-scan cache (e.g. one ``ast`` parse shared by every code rule)."""

    text: str
    lower: str
    source: str
    tree: Tree
    cache: dict[Any, Any] = field(default_factory=dict)


Find = Callable[[Node, Ctx], Iterable[tuple[int, int]]]
Trigger = Callable[[str, str], bool]  # (text, text.lower()) -> worth running?


@dataclass(frozen=True, slots=True)
class Rule:
    id: str
    category: str  # pii | secret | code | injection | low_value
    sensitivity: str  # restricted | confidential | internal | "" (not about data)
    placeholder: str | None  # typed placeholder written where a redacted value stood
    risk: float  # 0..1
    binds: tuple[str, ...]  # node kinds read: doc, block, code, sentence, kv, url
    find: Find
    reason: str  # why it matched, as a fixed phrase: never derived from the value
    origin: str  # where the pattern comes from
    triggers: tuple[str, ...] = ()  # substrings of the raw text
    itriggers: tuple[str, ...] = ()  # substrings of text.lower()
    trigger: Trigger | None = None  # (text, lower) -> bool, for what substrings cannot say (digit runs)
    guard: Trigger | None = None  # shared cheap check that must hold before the triggers are tried
    untrusted_only: bool = False  # runs only for the policy's untrusted sources (tool, web, document)
    # Known by its context, not its shape (a value after "token", after "password="): where a rule
    # that knows the shape (a Slack token) matched the same span, that rule's hit is the reason.
    generic: bool = False


RULES: dict[str, Rule] = {}


def register(rule: Rule) -> Rule:
    if rule.id in RULES:
        raise ValueError(f"rule {rule.id} registered twice")
    if rule.category not in CATEGORIES:
        raise ValueError(f"rule {rule.id}: unknown category {rule.category!r}")
    if not (rule.triggers or rule.itriggers or rule.trigger or rule.guard):
        raise ValueError(f"rule {rule.id} has no trigger: the pre-scan could never select it")
    RULES[rule.id] = rule
    return rule


def found(pattern: str, *, ascii: bool = False) -> Trigger:
    """A trigger (or guard) that holds where the regex ``pattern`` is found. The pre-scan runs
    every such pattern with every rule's trigger words in one pass over the text
    (``trigger.pattern``); the function is the same test, for a text on its own. ``ascii``:
    \\w, \\b and \\d mean ASCII only (as RE2 reads \\w and \\b); otherwise \\d is any Unicode digit."""
    rx = re.compile(pattern, re.ASCII if ascii else 0)

    def trigger(text: str, lower: str) -> bool:
        return rx.search(text) is not None

    trigger.pattern = pattern  # type: ignore[attr-defined]
    trigger.ascii = ascii  # type: ignore[attr-defined]
    return trigger


# -- guards: one cheap check in front of a group of trigger words --------------------------
# Every provider key, JWT, token and generated literal has a run of >= 14 key characters;
# conversation rarely does, so ~50 prefix checks are skipped for most texts.
has_token = found(r"[A-Za-z0-9_\-+/=.]{14}")
has_call = found(r"\(")
has_assignment = found("[=:\uff1a]")


# -- helpers shared by rule modules ------------------------------------------------------

def regex_find(rx: re.Pattern[str], group: int = 0, check: Callable[[str, re.Match], bool] | None = None) -> Find:
    """A ``find`` that runs ``rx`` inside the node, optionally filtered by ``check(text, match)``."""

    def find(node: Node, ctx: Ctx) -> Iterable[tuple[int, int]]:
        for m in rx.finditer(ctx.text, node.start, node.end):
            if check is None or check(ctx.text, m):
                yield m.span(group)

    return find


def entropy(s: str) -> float:
    """Shannon entropy in bits per character (the measure gitleaks and detect-secrets use)."""
    if not s:
        return 0.0
    n = len(s)
    counts: dict[str, int] = {}
    for ch in s:
        counts[ch] = counts.get(ch, 0) + 1
    return -sum(c / n * math.log2(c / n) for c in counts.values())


_ALNUM_RUN = re.compile(r"[A-Za-z0-9]+")


def tokenish(s: str, min_run: int = 16) -> bool:
    """Looks machine-generated: letters and digits, with one unbroken alphanumeric run of at
    least ``min_run`` (a hyphenated phrase like ``sk-learn-based-ranking`` is not a key)."""
    has_d = has_a = False
    for ch in s:
        if ch.isdigit():
            has_d = True
        elif ch.isalpha():
            has_a = True
        if has_d and has_a:
            break
    if not (has_d and has_a):
        return False
    return any(m.end() - m.start() >= min_run for m in _ALNUM_RUN.finditer(s))


def randomish(s: str) -> bool:
    """Drawn at random from letters and digits, not an identifier: upper, lower and digits; the
    entropy a random string of that length reaches (within 1 bit of log2 n); and the character
    class changing often (``MyServiceV2Handler`` changes 7 times in 18, a random key every ~1.6)."""
    n = len(s)
    if n < 16 or entropy(s) < math.log2(min(n, 64)) - 1.0:
        return False
    up = lo = dg = 0
    changes, prev = 0, ""
    for ch in s:
        k = "u" if ch.isupper() else "l" if ch.islower() else "d" if ch.isdigit() else "o"
        up += k == "u"
        lo += k == "l"
        dg += k == "d"
        changes += prev != "" and k != prev
        prev = k
    return bool(up and lo and dg) and changes >= 0.35 * n


# Identifiers read as words: snake_case, kebab-case and camelCase keys name what their value is
# ("social_security_number", "passportNumber", "PHONE_NUMBER") as a sentence would.
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_BREAK = re.compile(r"_+|(?<=[^\W\d_])-(?=[^\W\d_])")


def words(s: str) -> str:
    """``s`` in lower case with identifiers split into words: underscores, a hyphen between
    letters and camelCase boundaries read as spaces. A derived string for context tests only:
    spans are always taken in the original text."""
    if "_" in s or "-" in s:
        s = _BREAK.sub(" ", s)
    if not s.islower():
        s = _CAMEL.sub(" ", s)
    return s.lower()


def _line_start(text: str, pos: int) -> int:
    return text.rfind("\n", 0, pos) + 1


_RULE_ROW = frozenset("|-:+ \t=")


def column_header(text: str, start: int, cache: dict | None = None) -> str:
    """The header of the column a value sits in, for a value in a CSV, TSV or Markdown table
    row ("name,ssn\nAlice,623995531": "ssn"); "" elsewhere. The header is the first line of
    the run of lines holding as many separators as the value's line (a table's |---| rule
    skipped)."""
    ls = _line_start(text, start)
    if ls == 0:
        return ""
    le = text.find("\n", start)
    line = text[ls : le if le != -1 else len(text)]
    sep = next((c for c in ("|", "\t", ",", ";") if c in line), None)
    if sep is None:
        return ""
    n = line.count(sep)
    key = ("header", sep, ls)
    if cache is not None and key in cache:
        header = cache[key]
    else:
        header, pos = None, ls
        while pos > 0:
            ps = _line_start(text, pos - 1)
            prev = text[ps : pos - 1]
            if prev.count(sep) != n:
                break
            if not set(prev) <= _RULE_ROW:
                header = prev
            if cache is not None and ("header", sep, ps) in cache:  # a row above already knows its header
                header = cache[("header", sep, ps)] or header
                break
            pos = ps
        header = header or ""
        if cache is not None:
            cache[key] = header
    if not header:
        return ""
    cells = header.split(sep)
    col = text.count(sep, ls, start)
    return cells[col].strip(" \t\"'`*") if col < len(cells) else ""


def lead(text: str, start: int, n: int = 30, cache: dict | None = None) -> str:
    """What a reader reads a value at ``start`` after, as ``words``: up to ``n`` characters before
    it on its line; in a table or CSV row, its column's header first; on a line of its own (a
    label on the line above: "SSN\n623995531"), the end of the previous non-blank line."""
    ls = _line_start(text, start)
    near = text[max(ls, start - n) : start]
    if ls == 0:
        return words(near)
    header = column_header(text, start, cache)
    if header:  # the header, then what stands before the value in its own cell
        cell = max(text.rfind(c, ls, start) for c in ("|", "\t", ",", ";")) + 1
        return words(header) + ": " + words(text[max(cell, start - n) : start])
    if not near.strip(" \t:：-–—#*>\"'`[]()"):
        prev = text[: ls - 1].rstrip()
        if prev:
            return words(prev[max(_line_start(prev, len(prev)), len(prev) - n) :]) + ": " + words(near)
    return words(near)


def window(ctx: Ctx, start: int, end: int, before: int = 30, after: int = 15) -> str:
    """Lower-case text around a span, read as ``lead`` reads it before the span (identifiers as
    words, a table's header, a label line above) and cut at the line's end after it: the
    'context' of context rules."""
    b = ctx.text.find("\n", end, end + after)
    return lead(ctx.text, start, before, ctx.cache) + " " + words(ctx.text[end : b if b != -1 else end + after])
