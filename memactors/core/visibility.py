"""What a recall may see beyond its scopes (issue 23): clearance, purpose rules, ``where=``.

- **Clearance**: a grant carries one of the sensitivities; a memory is visible to a recall only
  at or below the clearance that applies to its scope (``GrantTable.clearances``).
- **Purpose rules** (``[recall.purposes]``): a purpose name maps to the categories, source kinds
  and sensitivities it may see; with a table, an unlisted purpose is refused.
- **Structured filters** (``where=``): subject, predicate, category, source kind, a time range.

``RecallFilter`` joins the three for one recall on one owner; every path applies it before
scoring (``keep`` on records in memory, ``memactors.store.filters.visibility`` on Lance rows),
never after. Pure: no I/O.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from datetime import datetime, timezone

from . import validate as V
from .errors import ConfigError, InvalidRecord, PurposeRefused, ValidationError
from .records import MAX_FIELD_CHARS, SENSITIVITIES, SOURCE_CONFIDENCE, entity_key
from .scopes import check_identifier

DEFAULT_CLEARANCE = "confidential"
RANK = {s: i for i, s in enumerate(SENSITIVITIES)}
WHERE_KEYS = ("subject", "predicate", "category", "source_kind", "since", "until")
RULE_KEYS = ("categories", "source_kinds", "sensitivities")
MAX_RULE_ITEMS = 256


def check_clearance(value: object, *, error=InvalidRecord) -> str:
    return V.choice(value, "clearance", SENSITIVITIES, error=error)


@functools.cache  # four clearances; every recall's filter asks for each visible scope's
def at_or_below(clearance: str) -> frozenset[str]:
    return frozenset(SENSITIVITIES[: RANK[clearance] + 1])


# --- purpose rules ---------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class PurposeRule:
    """What one purpose may see; None on a field: anything."""

    name: str
    categories: frozenset | None = None
    source_kinds: frozenset | None = None
    sensitivities: frozenset | None = None

    def to_dict(self) -> dict:
        return {k: sorted(getattr(self, k)) for k in RULE_KEYS if getattr(self, k) is not None}


def parse_purposes(table: object) -> dict[str, dict]:
    """``[recall.purposes]``: purpose name -> {categories, source_kinds, sensitivities} (lists;
    a missing key allows anything). Returns the table normalised (sorted lists), or ConfigError."""
    if not isinstance(table, dict):
        raise ConfigError(f"[recall.purposes] must be a table of purpose = {{...}} entries, not {V.got(table)}")
    out = {}
    for i, (name, rule) in enumerate(table.items()):
        where = f"[recall.purposes] entry {i + 1}"  # by position: a key is never echoed
        try:
            check_identifier(name, f"{where}'s name")
        except ValidationError as exc:
            raise ConfigError(str(exc)) from None
        if not isinstance(rule, dict):
            raise ConfigError(f"{where} must be a table, not {V.got(rule)}")
        extra = [k for k in rule if k not in RULE_KEYS]
        if extra:
            raise ConfigError(f"{where} has {len(extra)} unknown key(s); known: {', '.join(RULE_KEYS)}")
        norm = {}
        for key, items in rule.items():
            what = f"{where}.{key}"
            vals = V.str_list(items, what, min_len=0, max_len=MAX_RULE_ITEMS, max_chars=64, error=ConfigError)
            for v in vals:
                if key == "sensitivities":
                    V.choice(v, what, SENSITIVITIES, error=ConfigError)
                elif key == "source_kinds":
                    V.choice(v, what, tuple(SOURCE_CONFIDENCE), error=ConfigError)
                else:
                    try:
                        check_identifier(v, what)
                    except ValidationError as exc:
                        raise ConfigError(str(exc)) from None
            norm[key] = sorted(set(vals))
        out[name] = norm
    return out


def purpose_rule(purposes: dict, purpose: str) -> PurposeRule | None:
    """The rule for ``purpose`` under ``purposes`` (the config's table): None when there is no
    table (everything allowed); PurposeRefused when the table does not list it."""
    if not purposes:
        return None
    rule = purposes.get(purpose)
    if rule is None:
        raise PurposeRefused("the recall's purpose is not listed in [recall.purposes] (a table that lists "
                             f"purposes refuses every other); listed: {', '.join(sorted(purposes))}")
    return PurposeRule(purpose, *(frozenset(rule[k]) if k in rule else None for k in RULE_KEYS))


# --- where= ----------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Where:
    subject: str | None = None
    predicate: str | None = None
    category: str | None = None
    source_kind: str | None = None
    since: int | None = None  # microseconds, on updated_at (inclusive)
    until: int | None = None  # microseconds, on updated_at (exclusive)

    def to_wire(self) -> dict:
        return {k: getattr(self, k) for k in WHERE_KEYS if getattr(self, k) is not None}

    @property
    def key(self) -> str | None:
        """Subject and predicate together: compared normalised, through the entity key (as
        versions and history compare them); either alone: compared as stored."""
        return entity_key(self.subject, self.predicate) if self.subject is not None and self.predicate is not None \
            else None


def _time(value: object, what: str) -> int:
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value)
        except ValueError:
            raise InvalidRecord(f"where[{what!r}] must be an ISO 8601 time or a datetime, not an unreadable str") from None
    if isinstance(value, int) and not isinstance(value, bool):
        return V.integer(value, f"where[{what!r}] (microseconds)", 0, 2**62)
    if not isinstance(value, datetime):
        raise InvalidRecord(f"where[{what!r}] must be an ISO 8601 time or a datetime, not {V.got(value)}")
    if value.tzinfo is None:
        value = value.replace(tzinfo=timezone.utc)
    return int(value.timestamp() * 1_000_000)


def parse_where(where: object) -> Where | None:
    """A caller's ``where=`` checked: a dict of WHERE_KEYS (unknown keys refused, never echoed),
    string fields as the write contract takes them, times as ISO 8601 / datetime / microseconds."""
    if where is None:
        return None
    if not isinstance(where, dict):
        raise InvalidRecord(f"where must be a dict of {', '.join(WHERE_KEYS)}, not {V.got(where)}")
    extra = [k for k in where if k not in WHERE_KEYS]
    if extra:
        raise InvalidRecord(f"where has {len(extra)} unknown key(s); known: {', '.join(WHERE_KEYS)}")
    vals = {}
    for k in ("subject", "predicate"):
        if where.get(k) is not None:
            vals[k] = V.text(where[k], f"where[{k!r}]", MAX_FIELD_CHARS)
            if "\\" in vals[k] or "\x00" in vals[k]:  # refused on every path, as storage filters refuse them
                raise InvalidRecord(f"where[{k!r}] may not contain a backslash or NUL")
    if where.get("category") is not None:
        vals["category"] = check_identifier(where["category"], "where['category']")
    if where.get("source_kind") is not None:
        vals["source_kind"] = V.choice(where["source_kind"], "where['source_kind']", tuple(SOURCE_CONFIDENCE))
    for k in ("since", "until"):
        if where.get(k) is not None:
            vals[k] = _time(where[k], k)
    if "since" in vals and "until" in vals and vals["since"] >= vals["until"]:
        raise InvalidRecord("where['since'] must be before where['until']")
    return Where(**vals) if vals else None


def where_from_wire(d: dict | None) -> Where | None:
    """A ``where`` as an owner receives it (``Where.to_wire``), checked again: an owner trusts
    no filter it is handed."""
    return parse_where(d) if d else None


# --- one recall's filter ---------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class RecallFilter:
    """Per visible scope, the sensitivities a recall may see (its clearance there, narrowed by
    the purpose rule), and the purpose's categories / source kinds and the ``where=`` fields."""

    sensitivities: dict  # scope -> frozenset of sensitivities
    rule: PurposeRule | None = None
    where: Where | None = None
    # describe()'s answer, made once: a filter kept with the grants' recall view serves many recalls
    _described: dict | None = field(default=None, compare=False, repr=False)

    @classmethod
    def make(cls, clearances: dict[str, str], rule: PurposeRule | None, where: Where | None) -> RecallFilter:
        if rule is None or rule.sensitivities is None:
            return cls({scope: at_or_below(c) for scope, c in clearances.items()}, rule, where)
        return cls({scope: at_or_below(c) & rule.sensitivities for scope, c in clearances.items()}, rule, where)

    def keep(self, rec: dict, allowed: frozenset | None = None) -> bool:
        """Whether a record (in memory: the hot state, L1, a ledger fold) passes. A scope
        without an entry passes nothing. ``allowed``: the sensitivities to judge it by instead
        of its scope's (an L3 result has no scope: ``lowest``)."""
        if allowed is None:
            allowed = self.sensitivities.get(rec["scope"])
        if not allowed or (rec.get("sensitivity") or "internal") not in allowed:
            return False
        r = self.rule
        if r is not None:
            if r.categories is not None and (rec.get("category") or "default") not in r.categories:
                return False
            if r.source_kinds is not None and rec.get("source_kind") not in r.source_kinds:
                return False
        w = self.where
        if w is None:
            return True
        if w.key is not None:
            if rec.get("subject") is None or entity_key(rec["subject"], rec.get("predicate")) != w.key:
                return False
        elif (w.subject is not None and rec.get("subject") != w.subject) or (
                w.predicate is not None and rec.get("predicate") != w.predicate):
            return False
        if w.category is not None and (rec.get("category") or "default") != w.category:
            return False
        if w.source_kind is not None and rec.get("source_kind") != w.source_kind:
            return False
        if w.since is not None or w.until is not None:
            t = _us(rec.get("updated_at"))
            if (w.since is not None and t < w.since) or (w.until is not None and t >= w.until):
                return False
        return True

    def lowest(self) -> frozenset:
        """The sensitivities every visible scope allows: what an L3 result (shown beside all of
        them, owned by none) may carry."""
        sets = list(self.sensitivities.values())
        return frozenset.intersection(*sets) if sets else frozenset()

    def everything(self, scope: str) -> bool:
        """Whether this filter lets every memory of ``scope`` through (the common case: nothing
        to mask on the hot path)."""
        return self.rule is None and self.where is None and self.sensitivities.get(scope) == ALL

    def describe(self) -> dict:
        """For the evidence log: the rule that applied and the filters' shape (no values of where=).
        Each row gets lists and dicts of its own."""
        d = self._described
        if d is None:
            d = {"purpose_rule": self.rule.name if self.rule is not None else None,
                 "where": sorted(self.where.to_wire()) if self.where is not None else [],
                 "clearance": {s: _highest(v) for s, v in sorted(self.sensitivities.items())}}
            object.__setattr__(self, "_described", d)  # frozen: set once, always to the same answer
        return {"purpose_rule": d["purpose_rule"], "where": list(d["where"]), "clearance": dict(d["clearance"])}


@functools.cache  # sets of the four sensitivities: at most 16
def _highest(v: frozenset) -> str | None:
    """The highest sensitivity of ``v`` (None: empty), remembered: every recall's evidence names
    it for each visible scope, and max() by rank was most of describe()'s cost."""
    return max(v, key=RANK.get) if v else None


ALL = frozenset(SENSITIVITIES)


def _us(v) -> int:
    if isinstance(v, int):
        return v
    if isinstance(v, datetime):
        return int(v.timestamp() * 1_000_000)
    return int(v or 0)
