"""Lance filter strings, built only from validated values, and Arrow filter expressions.

Every value is parsed first (scopes, memory ids, statuses are closed alphabets without quotes
or backslashes) and then quoted with doubled single quotes anyway. Nothing here ever feeds
``Expr.to_sql()`` back into a filter, nor uses lancedb's ``update(where=Expr)``: in lancedb 0.40
both let a backslash before a quote escape the literal. ``ids_expr`` is a pyarrow expression,
which Lance receives as Substrait: its ids are values, never text a parser reads.
"""

from __future__ import annotations

import pyarrow as pa

from ..core.errors import InvalidRecord
from ..core.records import SENSITIVITIES, SOURCE_CONFIDENCE, STATUSES, check_memory_id
from ..core.scopes import check_identifier, parse_scope


def quote(value: str) -> str:
    if "\\" in value or "\x00" in value:
        raise InvalidRecord("filter values may not contain backslashes or NUL")
    return "'" + value.replace("'", "''") + "'"


def scope_in(scopes) -> str:
    vals = sorted({str(parse_scope(s)) for s in scopes})
    if not vals:
        raise InvalidRecord("a scope filter needs at least one scope")
    return "scope IN (" + ", ".join(quote(v) for v in vals) + ")"


def ids_in(ids) -> str:
    vals = sorted({check_memory_id(i) for i in ids})
    return "memory_id IN (" + ", ".join(quote(v) for v in vals) + ")"


def ids_expr(ids):
    """``memory_id`` in ``ids`` (a ``pyarrow.compute.Expression``), for Lance's dataset
    ``delete``: no SQL text to build or parse (a sweep deletes hundreds of thousands of ids; as
    an ``IN`` list most of the time went to parsing it)."""
    import pyarrow.compute as pc  # loaded when first used: not on a first write's path
    return pc.field("memory_id").isin(pa.array(list(ids), pa.string()))


def status_in(statuses) -> str:
    for s in statuses:
        if s not in STATUSES:
            raise InvalidRecord(f"unknown status {s!r}")
    return "status IN (" + ", ".join(quote(s) for s in sorted(statuses)) + ")"


def not_hard_expired(now_us: int) -> str:
    now = int(now_us)  # an int: no text reaches the filter
    return f"(hard_expires_at IS NULL OR hard_expires_at > arrow_cast({now}, 'Timestamp(Microsecond, Some(\"UTC\"))'))"


def recall_filter(scopes, now_us: int) -> str:
    """The pre-filter of every recall: visible scopes, live (active, or stale: recalled at half
    score), not hard-expired at now."""
    return f"{scope_in(scopes)} AND status IN ('active', 'stale') AND {not_hard_expired(now_us)}"


def as_of_filter(scopes, ts_us: int, exclude=()) -> str:
    """A recall's pre-filter at a past time ``ts_us``, over the rows unchanged since then (the
    memory ids in ``exclude`` changed after it: the ledger answers for those)."""
    where = recall_filter(scopes, ts_us)
    return f"{where} AND NOT ({ids_in(exclude)})" if exclude else where


def _in(column: str, values, alphabet) -> str:
    """``column IN (...)`` over values of a closed alphabet; an empty set matches nothing."""
    vals = sorted(values)
    for v in vals:
        if v not in alphabet:
            raise InvalidRecord(f"unknown {column} value in a filter")
    return f"{column} IN ({', '.join(quote(v) for v in vals)})" if vals else "(1 = 0)"


def _ts(now_us: int) -> str:
    return f"arrow_cast({int(now_us)}, 'Timestamp(Microsecond, Some(\"UTC\"))')"


def visibility(flt, scopes) -> str:
    """A ``core.visibility.RecallFilter`` over ``scopes`` as a pre-filter: per scope the
    sensitivities its clearance (and the purpose) allows, then the purpose's categories and
    source kinds and the ``where=`` fields. Every value is checked again against its closed
    alphabet (or as an identifier / hex key) and quoted; times are ints. Always ANDed to a
    filter that names ``scopes`` itself (``recall_filter``, ``as_of_filter``)."""
    groups: dict[frozenset, list[str]] = {}
    for s in scopes:
        groups.setdefault(frozenset(flt.sensitivities.get(str(parse_scope(s)), ())), []).append(s)
    if len(groups) == 1:  # the usual case: one clearance for every scope, no OR (the scope
        (sens,) = groups  # clause beside this one keeps the query on the scope index)
        parts = [] if sens == frozenset(SENSITIVITIES) else [_in("sensitivity", sens, SENSITIVITIES)]
    else:
        ors = [f"({scope_in(ss)} AND {_in('sensitivity', sens, SENSITIVITIES)})"
               for sens, ss in sorted(groups.items(), key=lambda kv: sorted(kv[1])) if sens]
        parts = ["(" + " OR ".join(ors) + ")" if ors else "(1 = 0)"]
    r = flt.rule
    if r is not None:
        if r.categories is not None:
            parts.append(_in("category", {check_identifier(c, "category") for c in r.categories}, r.categories))
        if r.source_kinds is not None:
            parts.append(_in("source_kind", r.source_kinds, SOURCE_CONFIDENCE))
    w = flt.where
    if w is not None:
        if w.key is not None:
            parts.append(f"entity_key = {quote(check_hex(w.key))}")
        else:
            if w.subject is not None:
                parts.append(f"subject = {quote(w.subject)}")
            if w.predicate is not None:
                parts.append(f"predicate = {quote(w.predicate)}")
        if w.category is not None:
            parts.append(f"category = {quote(check_identifier(w.category, 'category'))}")
        if w.source_kind is not None:
            parts.append(_in("source_kind", {w.source_kind}, SOURCE_CONFIDENCE))
        if w.since is not None:
            parts.append(f"updated_at >= {_ts(w.since)}")
        if w.until is not None:
            parts.append(f"updated_at < {_ts(w.until)}")
    return " AND ".join(parts) or "TRUE"


def check_hex(value: object) -> str:
    """A digest (entity keys): lowercase hex only, so nothing else reaches a filter."""
    if not isinstance(value, str) or not value or len(value) > 64 or not all(c in "0123456789abcdef" for c in value):
        raise InvalidRecord("a key in a storage filter must be lowercase hex")
    return value
