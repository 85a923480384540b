"""The gate's one entry point: ``Gate.scan(text, source_kind)`` returns a report and a decision.

Two stages. The pre-scan runs over the raw text only: one multi-pattern pass (RE2's set) over
every rule's trigger words, prefixes and trigger patterns, selecting the rules worth running.
Clean text, the bulk of memory writes, stops there. Only selected rules run, on the nodes of the text
tree they bind to (built lazily: a rule reading the whole text never pays for sentences).

A report holds rule ids, node kinds, spans, fixed reasons and risks, never a matched value nor
anything derived from one (a hash of a phone number can be brute-forced). Redacted text carries
typed placeholders; blocked text comes back as nothing at all.
"""

from __future__ import annotations

import bisect
import hashlib
import os
from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Iterable

import re2

from ..core.errors import InvalidRecord
from ..core.validate import got
from . import disguise
from .confusables import HINTS, fold
from .policy import DECISION, DECISION_RANK, RANK, SOURCE_KINDS, GatePolicy
from .rules import RULES, Ctx, Rule
from .tree import parse

# Reports a gate remembers, by a keyed digest of the text and its source kind: one text is
# scanned at the door, again by its owner, again when a session's item is promoted, and field
# names and chitchat repeat across writes (the default simulation: 97,270 scans of 17,293
# texts). Never the text, nor a report whose kept text differs from it (a redaction): what is
# kept holds no value of the text, and the digest's key never leaves the process.
MEMO_MAX = 8192
_MEMO_KEY = os.urandom(16)

FOLD = 1  # the pre-scan's reading flags: fold's, then disguise.DECODE, ROT13, BACKWARDS, SPLIT, SPOKEN
EVERY_READING = FOLD | disguise.DECODE | disguise.ROT13 | disguise.BACKWARDS | disguise.SPLIT | disguise.SPOKEN


@dataclass(frozen=True, slots=True)
class Hit:
    rule: str
    category: str
    start: int
    end: int
    risk: float
    node: str = "doc"  # the tree node kind the rule read
    reason: str = ""  # the rule's fixed phrase, never the value
    action: str = ""  # what the policy did with it
    field: str = "text"  # which field of a write the span lies in

    def to_dict(self) -> dict:
        return {"rule": self.rule, "category": self.category, "node": self.node, "span": [self.start, self.end],
                "risk": self.risk, "action": self.action, "reason": self.reason, "field": self.field}


@dataclass(slots=True)
class GateReport:
    decision: str  # accepted | redacted | working_only | pending | blocked
    text: str | None  # the text to keep (redacted where needed); None when blocked
    hits: list[Hit] = field(default_factory=list)
    risk: float = 0.0
    tags: list[str] = field(default_factory=list)
    source: str = "user_stated"
    # A write's other free-text fields (subject, predicate, object, source_id) as they may be
    # kept: redacted where needed (set by ``combine``; empty for a report on one text).
    fields: dict = field(default_factory=dict)

    def summary(self) -> dict:
        """What may be logged: decision, risk, tags, rule ids, spans. Never a value."""
        return {"decision": self.decision, "risk": self.risk, "tags": list(self.tags), "source": self.source,
                "hits": [h.to_dict() for h in self.hits]}


class Prescan:
    """The first stage for one set of rules: which of them does this text need?

    Rules are grouped by guard; a group's trigger words count only when its guard holds (one
    regex or a character test). Every trigger word, caseless trigger word, guard pattern and
    trigger pattern of every group is one RE2 set (google-re2), matched in one pass over the
    text: clean text pays one multi-pattern scan. Triggers that are Python tests rather than
    patterns (a length, a handful of substrings) run after it, only where their guard holds.
    ``fired_each`` is the same decision made one check at a time (the reference, and the path
    for a text RE2 cannot take: one with a lone surrogate).

    The same pass also tells which other readings of the text may differ from it: ``fold``'s
    (``confusables.HINTS``: an invisible or styled character, a look-alike letter beside a Latin
    one, letters spelled out one by one) and the decodings' (``disguise.HINTS``: a base64 or hex
    run, escapes, invisible tag characters, ROT13, reversed or split injection words). ``match`` returns them with the rules, as
    flags, so clean text pays for no other reading."""

    __slots__ = ("rules", "groups", "_set", "_meaning", "_pattern_guards", "_py", "_hints", "_flags")

    def __init__(self, rules: list[Rule]) -> None:
        self.rules = rules
        groups: dict[int, tuple] = {}
        for i, r in enumerate(rules):
            g = groups.setdefault(id(r.guard), (r.guard, {}, {}, {}, set()))
            for t in r.triggers:
                g[1].setdefault(t, set()).add(i)
            for t in r.itriggers:
                g[2].setdefault(t.lower(), set()).add(i)
            if r.trigger is not None:
                g[3].setdefault(id(r.trigger), (r.trigger, set()))[1].add(i)
            if not (r.triggers or r.itriggers or r.trigger):
                g[4].add(i)  # the guard alone selects it
        self.groups = [(guard, [(t, frozenset(s)) for t, s in lits.items()], [(t, frozenset(s)) for t, s in ilits.items()],
                        [(f, frozenset(s)) for f, s in fns.values()], frozenset(always))
                       for guard, lits, ilits, fns, always in groups.values()]
        patterns: list[str] = []
        self._meaning: list[tuple[int, frozenset | None]] = []  # per pattern: (group, rules it selects | None: the guard)
        self._pattern_guards: dict[int, int] = {}
        self._py: list[tuple[int, object, frozenset]] = []  # (group, Python trigger, rules)
        for gi, (guard, lits, ilits, fns, always) in enumerate(self.groups):
            if guard is not None and getattr(guard, "pattern", None):
                self._pattern_guards[gi] = len(patterns)
                patterns.append(_re2_syntax(guard))
                self._meaning.append((gi, None))
            for t, rs in lits:
                patterns.append(_literal(t))
                self._meaning.append((gi, rs))
            for t, rs in ilits:
                patterns.append("(?i)" + _literal(t))
                self._meaning.append((gi, rs))
            for f, rs in fns:
                if getattr(f, "pattern", None):
                    patterns.append(_re2_syntax(f))
                    self._meaning.append((gi, rs))
                else:
                    self._py.append((gi, f, rs))
        self._hints = len(patterns)  # patterns from here on are the readings' hints, not rules'
        self._flags = [FOLD] * len(HINTS) + [flag for _, flag in disguise.HINTS]
        self._set = _compile([*patterns, *HINTS, *(p for p, _ in disguise.HINTS)])

    def fired(self, text: str, lower: str) -> set[int]:
        return self.match(text, lower)[0]

    def match(self, text: str, lower: str) -> tuple[set[int], int]:
        """The rules this text needs, and the flags of the readings that may differ from it."""
        try:
            found = self._set.Match(text)
        except UnicodeEncodeError:  # a lone surrogate: RE2 takes UTF-8 only
            return self.fired_each(text, lower), EVERY_READING
        out: set[int] = set()
        hint = 0
        if found and max(found) >= self._hints:
            for i in found:
                if i >= self._hints:
                    hint |= self._flags[i - self._hints]
            found = [i for i in found if i < self._hints]
        if not found and not self._py:
            return out, hint
        groups, meaning = self.groups, self._meaning
        held = {gi for gi, (guard, *_rest) in enumerate(groups) if guard is None}
        held |= {meaning[i][0] for i in found or () if meaning[i][1] is None}
        for gi, (guard, *_rest) in enumerate(groups):
            if guard is not None and gi not in self._pattern_guards and guard(text, lower):
                held.add(gi)
        for i in found or ():
            gi, rs = meaning[i]
            if rs is not None and gi in held:
                out |= rs
        for gi in held:
            out |= groups[gi][4]
        for gi, f, rs in self._py:
            if gi in held and not rs <= out and f(text, lower):
                out |= rs
        return out, hint

    def fired_each(self, text: str, lower: str) -> set[int]:
        out: set[int] = set()
        for guard, lits, ilits, fns, always in self.groups:
            if guard is not None and not guard(text, lower):
                continue
            out |= always
            for t, rs in lits:
                if t in text:
                    out |= rs
            for t, rs in ilits:
                if t in lower:
                    out |= rs
            for f, rs in fns:
                if not rs <= out and f(text, lower):
                    out |= rs
        return out


_RE2_META = frozenset("\\.+*?()|[]{}^$")


def _literal(t: str) -> str:
    return "".join("\\" + c if c in _RE2_META else c for c in t)


def _re2_syntax(trigger) -> str:
    """A ``found`` trigger's pattern as RE2 reads it alike: Python's \\d is any Unicode digit
    (unless the trigger is ASCII), RE2's only 0-9. Trigger patterns use no \\w or \\b unless ASCII."""
    return trigger.pattern if trigger.ascii else trigger.pattern.replace("\\d", "\\p{Nd}")


# RE2's automaton for one pass is built as texts need it, in a cache of at most this much: at
# RE2's default (8 MiB) a tool source's set (the instruction cue's verbs) outgrew it and every
# text rebuilt states (25 us a 200-character text, 2.2 us with room; about 6 MB more used).
_SET_MEMORY = 32 << 20


def _compile(patterns: list[str]):
    options = re2.Options()
    options.max_mem = _SET_MEMORY
    s = re2.Set.SearchSet(options)
    for p in patterns:
        s.Add(p)
    s.Compile()
    return s


# Compiled pre-scans shared by every gate of this process with the same rules (each runtime a
# process opens has gates of its own; compiling one set of ~5,000 patterns costs ~15 ms). A
# Prescan does not change once built, and RE2 matches a set from many threads at once.
_PRESCANS: dict[tuple[int, ...], Prescan] = {}
PRESCANS_MAX = 64


def shared_prescan(rules: list[Rule]) -> Prescan:
    """The pre-scan of these rules (these very objects, in this order), compiled once."""
    key = tuple(map(id, rules))
    got = _PRESCANS.get(key)  # its rules are kept alive by it: no other object can take their ids
    if got is None:
        if len(_PRESCANS) >= PRESCANS_MAX:
            _PRESCANS.clear()
        got = _PRESCANS[key] = Prescan(list(rules))
    return got


class _Plan:
    """Rules, their actions and their pre-scan for one source kind (the pre-scan compiled when
    the kind is first scanned: a process that writes one kind of source pays for one)."""

    __slots__ = ("_rules", "_prescan", "actions", "tags", "hold")

    def __init__(self, rules: list[Rule], policy: GatePolicy, source: str) -> None:
        acts = [(r, policy.action(r, source)) for r in rules]
        acts = [(r, a) for r, a in acts if a != "ignore"]
        self._rules = [r for r, _ in acts]
        self._prescan = None
        self.actions = [a for _, a in acts]
        self.tags = ["untrusted_source"] if source in policy.untrusted_sources else []
        self.hold = source in policy.pending_sources  # whatever it says, it waits for a reviewer

    @property
    def prescan(self) -> Prescan:
        if self._prescan is None:  # two threads may both build it: the same set, either one kept
            self._prescan = shared_prescan(self._rules)
        return self._prescan


class Gate:
    """Pre-scan, run the selected rules on their nodes, decide by policy, redact."""

    def __init__(self, rules: dict[str, Rule] | None = None, policy: GatePolicy | None = None) -> None:
        self.rules = list((rules or RULES).values())
        self.policy = policy or GatePolicy()
        self._plans = {s: _Plan(self.rules, self.policy, s) for s in SOURCE_KINDS}
        self._all: Prescan | None = None  # redact_all: every placeholder rule, whatever the policy (built once used)
        self._placeholders = {r.id: r.placeholder for r in self.rules if r.placeholder}
        self._memo: dict[tuple[bytes, str], tuple] = {}

    def prescan(self, text: str, source_kind: str = "user_stated") -> list[str]:
        """The rule ids the pre-scan selects for this text (for tests and benchmarks)."""
        p = self._plan(source_kind).prescan
        return sorted(p.rules[i].id for i in p.fired(text, _lower(text)))

    def scan(self, text: str, source_kind: str = "user_stated") -> GateReport:
        """Scan any str (control, zero-width and bidi characters, lone surrogates, 1 MB: all
        fine). Raises InvalidRecord for a non-str or an unknown source kind.

        A text that can read differently from what the rules see (invisible format characters
        inside it, fullwidth, mathematical or small-capital letters, Unicode hyphens, Cyrillic
        or Greek look-alikes inside a Latin word, letters spelled out one by one) is also
        scanned as a reader sees it (``fold``); when that finds what the text as typed hid, the
        folded text's verdict stands, and the folded text is what may be kept (redacted).

        A text with something encoded in it (a base64 or hex run, percent, HTML or backslash
        escapes, tag characters, variation selectors) or written in ROT13, backwards, with an
        injection's words split in two or with a number's digits said as words is also scanned as a model would read it
        (``disguise``); what that finds is added to the verdict (tag ``decoded``), and the text
        is kept as it came unless a value found in the decoded text had to be taken out."""
        _check_text(text)
        self._plan(source_kind)  # an unknown kind is refused before anything is remembered
        key = (hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16, key=_MEMO_KEY).digest(),
               source_kind)
        kept = self._memo.get(key)
        if kept is not None:
            decision, same, hits, risk, tags = kept
            return GateReport(decision, text if same else None, list(hits), risk, list(tags), source_kind)
        rep = self._scan_readings(text, source_kind)
        if rep.text is text or rep.text is None:  # as typed, or blocked: nothing of the text to keep
            if len(self._memo) >= MEMO_MAX:
                self._memo.clear()
            self._memo[key] = (rep.decision, rep.text is text, tuple(rep.hits), rep.risk, tuple(rep.tags))
        return rep

    def _scan_readings(self, text: str, source_kind: str) -> GateReport:
        rep, hint = self._scan(text, source_kind)
        if not hint:  # the pre-scan's pass said whether to look again
            return rep
        best = rep
        if hint & FOLD and (folded := fold(text)) is not None:
            alt, _ = self._scan(folded, source_kind)
            best = alt if _finds_more(alt, rep) else rep
        if best.decision == "blocked":  # nothing a decoding finds can add to that
            return best
        if hint & disguise.DECODE and (opened := disguise.decoded(text)) is not None:
            alt, _ = self._scan(opened, source_kind)
            if _stricter(alt, best):
                best = _read_as(alt, best, "decoded")
        for flag, name, read in ((disguise.ROT13, "rot13", disguise.rot13),
                                 (disguise.BACKWARDS, "backwards", disguise.backwards),
                                 (disguise.SPLIT, "joined", disguise.joined),
                                 (disguise.SPOKEN, "spoken", disguise.spoken)):
            if hint & flag and best.decision != "blocked" and (reading := read(text)) != text:
                alt, _ = self._scan(reading, source_kind)
                if _stricter(alt, best):
                    best = _read_as(alt, best, name, len(text) if name == "backwards" else 0)
        return best

    def _scan(self, text: str, source_kind: str) -> tuple[GateReport, int]:
        """The report on the text as typed, and the flags of the readings that may differ from it
        (``scan`` checked the text and the source kind; a reading of a str is a str)."""
        plan = self._plan(source_kind)
        lower = _lower(text)
        fired, hint = plan.prescan.match(text, lower)
        if not fired:
            return _clean(text, plan, source_kind), hint
        rules = plan.prescan.rules
        hits = _run(text, lower, source_kind, ((rules[i], plan.actions[i]) for i in sorted(fired)))
        if not hits:
            return _clean(text, plan, source_kind), hint
        top = max(hits, key=lambda h: RANK[h.action]).action
        held = plan.hold and RANK[top] < RANK["pending"]
        decision = "pending" if held else DECISION[top]
        tags = sorted({h.category for h in hits} | set(plan.tags) | ({"pending_source"} if held else set()))
        risk = _risk(hits)
        if decision == "blocked":
            return GateReport(decision, None, hits, risk, tags, source_kind), hint
        redact = [h for h in hits if h.action == "redact"]
        if redact:
            tags.append("redacted")
        kept = _redact(text, redact, self._placeholders) if redact else text
        return GateReport(decision, kept, hits, risk, tags, source_kind), hint

    def redact_all(self, text: str) -> str:
        """Every PII or secret hit replaced by its placeholder, blocked kinds included, whatever
        the policy: for text that is used but never stored (recall queries, log lines)."""
        _check_text(text)
        lower = _lower(text)
        if self._all is None:
            self._all = shared_prescan([r for r in self.rules if r.placeholder])
        fired, hint = self._all.match(text, lower)
        if hint & FOLD and (folded := fold(text)) is not None and (kept := self.redact_all(folded)) != folded:
            return kept  # a value hidden in the text as typed
        if hint & disguise.DECODE and (opened := disguise.decoded(text)) is not None \
                and (kept := self.redact_all(opened)) != opened:
            return kept  # a value in an encoding (its decoding is what is taken out of)
        if hint & disguise.SPOKEN and (said := disguise.spoken(text)) != text \
                and (kept := self.redact_all(said)) != said:
            return kept  # a number said as words, taken out of its digits
        if not fired:
            return text
        hits = _run(text, lower, "user_stated", ((self._all.rules[i], "redact") for i in sorted(fired)))
        return _redact(text, hits, self._placeholders) if hits else text

    def scan_many(self, texts: Iterable[str], source_kind: str = "user_stated") -> list[GateReport]:
        return [self.scan(t, source_kind) for t in texts]

    def _plan(self, source_kind: str) -> _Plan:
        try:
            return self._plans[source_kind]
        except (KeyError, TypeError):  # TypeError: an unhashable source kind
            raise InvalidRecord(f"unknown source kind ({got(source_kind)}); known: {', '.join(SOURCE_KINDS)}") from None


def _clean(text: str, plan: _Plan, source: str) -> GateReport:
    if plan.hold:
        return GateReport("pending", text, [], 0.0, sorted([*plan.tags, "pending_source"]), source)
    return GateReport("accepted", text, [], 0.0, list(plan.tags), source)


def _finds_more(alt: GateReport, rep: GateReport) -> bool:
    """Whether the folded text's scan found what the text as typed hid: a stricter decision,
    or a hit of a rule the first scan did not fire as often, or the same hits with more of a
    value taken out (typed "аlice@x.org" with a Cyrillic а kept "а[EMAIL]": its first letter)."""
    if alt.decision != rep.decision:
        return DECISION_RANK[alt.decision] > DECISION_RANK[rep.decision]
    if Counter(h.rule for h in alt.hits) - Counter(h.rule for h in rep.hits):
        return True
    return alt.text is not None and rep.text is not None and alt.text != (fold(rep.text) or rep.text)




def _stricter(alt: GateReport, rep: GateReport) -> bool:
    """Whether a decoding's scan found what the text as typed hid: a stricter decision, or a hit
    of a rule the text as typed did not fire as often. A decoding that finds nothing more is not
    what is kept (a base64 blob of a config stays as it came)."""
    if alt.decision != rep.decision:
        return DECISION_RANK[alt.decision] > DECISION_RANK[rep.decision]
    return bool(Counter(h.rule for h in alt.hits) - Counter(h.rule for h in rep.hits))


def _read_as(alt: GateReport, rep: GateReport, reading: str, mirror: int = 0) -> GateReport:
    """The text as typed with what a reading of it found: the stricter decision, both scans'
    hits (the reading's named by it in ``node``, spans where they lie in the reading; ``mirror``,
    a reversed text's length, puts them back where they lie in the text), the text kept as it
    came unless the decoded text had a value taken out (then that is what may be kept: the
    value is readable in the text as it came) or the verdict is to block."""
    hits = [replace(h, node=reading, start=mirror - h.end, end=mirror - h.start) if mirror else replace(h, node=reading)
            for h in alt.hits]
    redacted = reading in ("decoded", "spoken") and any(h.action == "redact" for h in alt.hits)
    text = None if alt.text is None else alt.text if redacted else rep.text
    return replace(alt, text=text, hits=[*rep.hits, *hits], risk=max(alt.risk, rep.risk),
                   tags=sorted({*alt.tags, *rep.tags, "decoded"}))


def _check_text(text: object) -> None:
    if not isinstance(text, str):
        raise InvalidRecord(f"the gate scans text (a str), not {got(text)}")


def combine(reports: dict[str, GateReport]) -> GateReport:
    """One report for a write whose fields were scanned one by one (``{"text": report, "object":
    report, ...}``): the strongest decision of any field is the write's (a key in ``object``
    blocks the write as surely as one in its text), every hit names its field, and ``fields``
    holds each other field as it may be kept (redacted where needed)."""
    main = reports["text"]
    if len(reports) == 1:
        return main
    # Chit-chat rules judge a text, not a field: a subject "ok" or an object "Nice" is a value.
    reports = {name: r if name == "text" else _without_low_value(r) for name, r in reports.items()}
    hits = [h if name == "text" else replace(h, field=name) for name, r in reports.items() for h in r.hits]
    if not hits:
        return GateReport(main.decision, main.text, [], 0.0, list(main.tags), main.source,
                          {k: r.text for k, r in reports.items() if k != "text"})
    top = max(reports.values(), key=lambda r: DECISION_RANK[r.decision]).decision
    tags = sorted({t for r in reports.values() for t in r.tags})
    if top == "blocked":
        return GateReport(top, None, hits, _risk(hits), tags, main.source, {})
    return GateReport(top, main.text, hits, _risk(hits), tags, main.source,
                      {k: r.text for k, r in reports.items() if k != "text"})




def _without_low_value(r: GateReport) -> GateReport:
    hits = [h for h in r.hits if h.category != "low_value"]
    if len(hits) == len(r.hits):
        return r
    top = max((h.action for h in hits), key=lambda a: RANK[a], default="allow")
    return GateReport(DECISION[top], r.text, hits, _risk(hits), [t for t in r.tags if t != "low_value"], r.source)


def _lower(text: str) -> str:
    low = text.lower()
    if len(low) != len(text):  # a few characters lower to two ("İ"): keep offsets aligned
        low = "".join(c if len(c.lower()) != 1 else c.lower() for c in text)
    return low


def _run(text: str, lower: str, source: str, selected: Iterable[tuple[Rule, str]]) -> list[Hit]:
    ctx = Ctx(text, lower, source, parse(text))
    hits: list[Hit] = []
    generic: set[str] = set()
    for rule, action in selected:
        if rule.generic:
            generic.add(rule.id)
        spans: list[tuple[int, int, str]] = []
        for kind in rule.binds:
            for node in ctx.tree.of(kind):
                for a, b in rule.find(node, ctx):
                    spans.append((a, b, kind))
        spans.sort(key=lambda s: (s[0], -s[1]))
        end = -1
        for a, b, kind in spans:  # one hit per stretch: a rule bound to nested nodes sees a span twice
            if b <= end:
                continue
            hits.append(Hit(rule.id, rule.category, a, b, rule.risk, kind, rule.reason, action))
            end = b
    if generic:
        hits = _specific(hits, generic)
    hits.sort(key=lambda h: (h.start, h.end, h.rule))
    return hits


def _specific(hits: list[Hit], generic: set[str]) -> list[Hit]:
    """Hits of generic rules left out where a specific rule of the same category matched an
    overlapping span with an action as strong: the report names the rule that decided."""
    known = sorted((h for h in hits if h.rule not in generic), key=lambda k: k.start)
    starts = [k.start for k in known]
    longest = max((k.end - k.start for k in known), default=0)

    def overlapped(h: Hit) -> bool:  # only the known hits that start near it (a text of many hits: not each pair)
        lo, hi = bisect.bisect_right(starts, h.start - longest), bisect.bisect_left(starts, h.end)
        return any(k.category == h.category and h.start < k.end and RANK[k.action] >= RANK[h.action]
                   for k in known[lo:hi])

    return [h for h in hits if h.rule not in generic or not overlapped(h)]


def _risk(hits: list[Hit]) -> float:
    """Noisy-or of the hits' risks: two independent risky spans are riskier than one."""
    keep = 1.0
    for h in hits:
        keep *= 1.0 - h.risk
    return round(1.0 - keep, 3)


def _redact(text: str, hits: list[Hit], placeholders: dict[str, str] | None = None) -> str:
    """Overlapping spans merge, so no part of a longer match survives beside a shorter one; the
    placeholder is the riskiest (then longest) hit's of each merged stretch."""
    ph = placeholders if placeholders is not None else {k: r.placeholder for k, r in RULES.items() if r.placeholder}
    spans = sorted(((h.start, h.end, h) for h in hits if h.rule in ph), key=lambda s: (s[0], s[1]))
    out, pos, i = [], 0, 0
    while i < len(spans):
        start, end, best = spans[i]
        j = i + 1
        while j < len(spans) and spans[j][0] < end:
            h = spans[j][2]
            end = max(end, spans[j][1])
            if (h.risk, h.end - h.start) > (best.risk, best.end - best.start):
                best = h
            j += 1
        out.append(text[pos:start])
        out.append(ph[best.rule])
        pos, i = end, j
    out.append(text[pos:])
    return "".join(out)
