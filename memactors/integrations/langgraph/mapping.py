"""LangGraph items as memactors records, and back (pure: no I/O).

An item ``(namespace, key, value)`` is one entity memory: the subject is the namespace path,
the predicate the key with a short digest of the exact (namespace, key) (memactors folds case
and white space in entity keys; LangGraph's namespaces and keys are exact), so a second put of
the same item is version n+1 of the same fact. The content is the item as JSON (namespace, key,
value, and the TTL in minutes it was put with), so every string leaf of the value passes the
write gate and a redacted leaf comes back redacted.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Callable
from datetime import datetime, timezone
from typing import Any

import orjson
from langgraph.store.base import GetOp, ListNamespacesOp, MatchCondition, PutOp, SearchOp

from ...core import validate as V
from ...core.errors import BadArguments, InvalidRecord
from ...core.records import MAX_CONTENT_CHARS, MAX_FIELD_CHARS
from ...gate.identifiers import identifier_kind, refusal

SEP = "/"
_DIGEST = 10  # hex characters of the exact (namespace, key) in the predicate
# The limits of an item, in the store's terms: the record's subject is the namespace's labels
# joined by "/", its predicate the key and " ~" and the digest, its content the item as JSON.
MAX_NAMESPACE_CHARS = MAX_FIELD_CHARS
MAX_KEY_CHARS = MAX_FIELD_CHARS - len(" ~") - _DIGEST  # 500
MAX_ITEM_CHARS = MAX_CONTENT_CHARS  # the item as JSON: namespace, key, value and TTL
_MAX_DEPTH = 255  # orjson's own nesting limit: deeper, it refuses


def subject_of(namespace: tuple[str, ...]) -> str:
    return SEP.join(namespace)


def predicate_of(namespace: tuple[str, ...], key: str) -> str:
    exact = hashlib.sha256(orjson.dumps([list(namespace), key])).hexdigest()[:_DIGEST]
    return f"{key} ~{exact}"


def check_names(namespace: tuple[str, ...], key: object = None) -> None:
    """A namespace and a key the store can hold: no lone surrogate, a namespace of at most
    MAX_NAMESPACE_CHARS (its labels joined by "/"), a key of at most MAX_KEY_CHARS."""
    for label in namespace:
        V.text(label, "a namespace label", MAX_NAMESPACE_CHARS, allow_blank=True)
    joined = sum(map(len, namespace)) + max(len(namespace) - 1, 0)
    if joined > MAX_NAMESPACE_CHARS:
        raise InvalidRecord(f"a namespace is stored as its labels joined by '/': at most {MAX_NAMESPACE_CHARS} "
                            f"characters, not {joined}")
    if key is not None:
        V.text(key, "a key", MAX_KEY_CHARS, allow_blank=True)


def screen(namespace: tuple[str, ...], key: str | None = None) -> None:
    """Namespace labels and keys are identifiers: one that looks like personal data or a secret
    is refused (typed, the value never echoed), as every id of the runtime is; one the store
    cannot hold (``check_names``) is refused too."""
    check_names(namespace, key)
    for label in namespace:
        kind = identifier_kind(label)
        if kind is not None:
            raise refusal("a namespace label", kind)
    if key is not None:
        kind = identifier_kind(key)
        if kind is not None:
            raise refusal("a key", kind)


def content_of(namespace: tuple[str, ...], key: str, value: dict, ttl: float | None, indexed: bool = True,
               fields: list[str] | None = None, embedded: bool = False) -> str:
    item = {"namespace": list(namespace), "key": key, "value": value, "ttl": ttl}
    if not indexed:  # put(index=False): returned by a query search after the ranked items, unscored
        item["indexed"] = False
    elif fields and fields != ["$"]:  # the paths it was indexed by: a search scores each (field_texts)
        item["fields"] = list(fields)
    if embedded:  # its record's vector is of its one indexed text: the recall's similarity is its score
        item["embedded"] = True
    check_json(value)
    try:
        out = orjson.dumps(item, option=orjson.OPT_NON_STR_KEYS).decode()
    except TypeError:
        raise InvalidRecord("a LangGraph value must be JSON-serialisable (a dict of JSON values)") from None
    if "null" in out and not _finite(value):  # orjson writes NaN and infinities as null: refused, never changed
        raise InvalidRecord("a LangGraph value must be JSON: NaN and infinities are not JSON numbers")
    if len(out) > MAX_ITEM_CHARS:
        raise InvalidRecord(f"a LangGraph item is stored as JSON of at most {MAX_ITEM_CHARS:,} characters (its "
                            f"namespace, key and value together); this one has {len(out):,}")
    return out


def check_json(value: dict) -> None:
    """Every leaf of ``value`` a JSON value (a str, a number, a bool or None; dicts, lists and
    tuples around them), every str whole (no lone surrogate): one that is not (a datetime, a
    UUID, bytes, a set, a Decimal) is refused, never turned into a str on the way in; whatever
    the put's ``index``. Only types and positions are named, never the value."""
    stack: list = [(value, 0)]
    while stack:
        v, depth = stack.pop()
        if isinstance(v, str):
            V.text(v, "a string in a LangGraph value", len(v), allow_blank=True)
        elif v is None or isinstance(v, (int, float)):
            continue
        elif depth > _MAX_DEPTH:
            raise InvalidRecord(f"a LangGraph value nests more than {_MAX_DEPTH} levels deep")
        elif isinstance(v, dict):
            for k, x in v.items():
                if isinstance(k, str):
                    V.text(k, "a key of an object in a LangGraph value", len(k), allow_blank=True)
                stack.append((x, depth + 1))
        elif isinstance(v, (list, tuple)):
            stack.extend((x, depth + 1) for x in v)
        else:
            raise InvalidRecord(f"a LangGraph value must be JSON: {V.got(v)} is not a JSON value (a str, a "
                                "number, a bool, None, or a dict or list of them); convert it first (a datetime "
                                "to an ISO 8601 str, say)")


def keys_collide(value: dict, redact: Callable[[str], str]) -> bool:
    """Whether two keys of one object in ``value`` would be stored as one key. The content is
    JSON and the gate replaces personal data in it by a placeholder of its kind, so
    ``{"ann@x.org": 1, "bob@y.org": 2}`` would read back as one ``"[EMAIL]"`` key (the last
    one), the other lost without a word. ``redact`` is the gate's ``redact_all`` (every kind,
    whatever the policy). Non-str keys count as orjson writes them (``1`` and ``"1"`` collide)."""
    stack: list = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, dict):
            seen: set[str] = set()
            for k, x in v.items():
                text = redact(k if isinstance(k, str) else _key_text(k))
                if text in seen:
                    return True
                seen.add(text)
                stack.append(x)
        elif isinstance(v, (list, tuple)):
            stack.extend(v)
    return False


def _key_text(k: Any) -> str:
    return next(iter(orjson.loads(orjson.dumps({k: 0}, option=orjson.OPT_NON_STR_KEYS))))


def _finite(v: Any) -> bool:
    if isinstance(v, float):
        return math.isfinite(v)
    if isinstance(v, dict):
        return all(_finite(x) for x in v.values())
    if isinstance(v, (list, tuple)):
        return all(_finite(x) for x in v)
    return True


# A placeholder the gate put where a number leaf was (``"mobile": 13812345678`` kept as
# ``"mobile": [PHONE_CN]``): outside any string, so the JSON needs it quoted to read. What the
# gate left of the number around it (a sign, ``.0`` of a float) is quoted with it.
_NUM = r'[-+.0-9eE]'
_BARE_PLACEHOLDER = re.compile(rf'(?<=[:\[,])(\s*)({_NUM}*\[[A-Z][A-Z0-9_]*\](?:{_NUM}|\[[A-Z][A-Z0-9_]*\])*)'
                               r'(?=\s*[,}\]])')


def parse(content: str) -> dict | None:
    """The item a record holds (None for a record that is not a LangGraph item). A number leaf
    the gate redacted comes back as its placeholder, a string."""
    try:
        d = orjson.loads(content)
    except orjson.JSONDecodeError:
        try:
            d = orjson.loads(_BARE_PLACEHOLDER.sub(r'\1"\2"', content))
        except orjson.JSONDecodeError:
            return None
    if not isinstance(d, dict) or not isinstance(d.get("namespace"), list) or "value" not in d:
        return None
    d["namespace"] = tuple(d["namespace"])
    return d


def when(us: int) -> datetime:
    return datetime.fromtimestamp(us / 1_000_000, tz=timezone.utc)


def index_fields(index: dict | None) -> list[str] | None:
    """An ``IndexConfig``'s field paths: ``fields``, or ``text_fields`` as SqliteStore names them."""
    fields = (index or {}).get("fields") or (index or {}).get("text_fields")
    return [fields] if isinstance(fields, str) else fields


def field_texts(value: dict, fields: list[str] | None) -> list[str]:
    """The texts at the value's indexed field paths, one per match, as LangGraph embeds them
    (``"$"``, the default: the whole value as JSON)."""
    from langgraph.store.base import get_text_at_path, tokenize_path

    try:
        return [t for f in fields or ["$"] for t in get_text_at_path(value, f if f == "$" else tokenize_path(f))]
    except TypeError:  # LangGraph writes "$" as JSON with sorted keys: str and int keys in one object do not sort
        raise InvalidRecord("a LangGraph value's objects must be keyed by str (or by one kind of key each)") from None


def one_text(fields: list[str] | None) -> bool:
    """Whether these field paths give an item at most one text (one path, no wildcard)."""
    return not fields or (len(fields) == 1 and "*" not in fields[0])


def index_text(texts: list[str], fields: list[str] | None) -> str | None:
    """The text of a value's indexed fields (``texts``, its ``field_texts``) for the keyword
    index (None: the whole value, the default ``["$"]``, which the record's content holds)."""
    if not fields or fields == ["$"]:
        return None
    return "\n".join(texts) or None


# --- namespaces and filters ------------------------------------------------------------------

def checked_ops(ops: object) -> list:
    """A batch's ops, each checked before any runs: an op of no LangGraph kind, a namespace that
    is no sequence of labels (a list is taken as its tuple), a key or query that is not text, a
    filter that is not a dict, a depth that is no count: refused typed, never by the code that
    reads them (LangGraph's own stores raise TypeError or ValueError there, from inside)."""
    if isinstance(ops, (str, bytes, dict)) or not hasattr(ops, "__iter__"):
        raise BadArguments(f"batch takes a list of LangGraph ops, not {V.got(ops)}")
    return [_checked_op(op) for op in ops]


def _checked_op(op: object):
    if isinstance(op, (GetOp, PutOp)):
        op = op._replace(namespace=_labels(op.namespace, "namespace"))
        check_names(op.namespace, op.key)
    elif isinstance(op, SearchOp):
        op = op._replace(namespace_prefix=_labels(op.namespace_prefix, "namespace_prefix"))
        if op.query is not None and not isinstance(op.query, str):
            raise InvalidRecord(f"a search's query is text or None, not {V.got(op.query)}")
        if op.filter is not None and not isinstance(op.filter, dict):
            raise InvalidRecord(f"a search's filter is a dict or None, not {V.got(op.filter)}")
    elif isinstance(op, ListNamespacesOp):
        V.integer(op.max_depth, "max_depth", 0, None, allow_none=True)
        conditions = op.match_conditions or ()
        if not isinstance(conditions, (list, tuple)) or not all(isinstance(c, MatchCondition) for c in conditions):
            raise InvalidRecord(f"match_conditions is a sequence of MatchConditions, not {V.got(conditions)}")
        op = op._replace(match_conditions=tuple(c._replace(path=_labels(c.path, "a match condition's path"))
                                                for c in conditions))
    else:
        raise InvalidRecord(f"not a LangGraph op (GetOp, PutOp, SearchOp, ListNamespacesOp): {V.got(op)}")
    return op


def _labels(namespace: object, what: str) -> tuple:
    """A namespace as the tuple of labels the store reads (LangGraph's check of the labels follows)."""
    if isinstance(namespace, tuple):
        return namespace
    if isinstance(namespace, list):
        return tuple(namespace)
    raise InvalidRecord(f"a {what} is a tuple of labels, not {V.got(namespace)}")


def check_page(limit: object, offset: object) -> None:
    """A search's or a listing's page: counts (ints >= 0), never a slice from the end."""
    V.integer(limit, "limit", 0, None)
    V.integer(offset, "offset", 0, None)


def has_prefix(namespace: tuple, prefix: tuple) -> bool:
    return len(namespace) >= len(prefix) and all(p == "*" or p == n for p, n in zip(prefix, namespace))


def has_suffix(namespace: tuple, suffix: tuple) -> bool:
    return not suffix or (len(namespace) >= len(suffix)
                          and all(s == "*" or s == n for s, n in zip(suffix, namespace[-len(suffix):])))


def matches(namespace: tuple, conditions) -> bool:
    for c in conditions or ():
        ok = has_prefix(namespace, tuple(c.path)) if c.match_type == "prefix" else has_suffix(namespace, tuple(c.path))
        if not ok:
            return False
    return True


_CMP = {"$eq": lambda a, b: a == b, "$ne": lambda a, b: a != b, "$gt": lambda a, b: a > b,
        "$gte": lambda a, b: a >= b, "$lt": lambda a, b: a < b, "$lte": lambda a, b: a <= b}


_FILTER_KEY = re.compile(r"[A-Za-z0-9_.\-]+")


def check_filter(flt: dict[str, Any] | None) -> None:
    """Filter keys are field paths: letters, digits, ``_``, ``-`` and ``.`` (never echoed)."""
    for field in flt or {}:
        if not isinstance(field, str) or not _FILTER_KEY.fullmatch(field):
            raise InvalidRecord("Invalid filter key: a field path of letters, digits, _, - and .")


def passes(value: dict, flt: dict[str, Any] | None) -> bool:
    """LangGraph's filter: ``{field: value}`` (equality) or ``{field: {"$op": value}}`` with
    $eq/$ne/$gt/$gte/$lt/$lte; a dotted field reads a nested value."""
    for field, want in (flt or {}).items():
        have = _at_path(value, field)
        if isinstance(want, dict) and want and all(isinstance(k, str) and k.startswith("$") for k in want):
            for op, arg in want.items():
                cmp = _CMP.get(op)
                if cmp is None:
                    raise InvalidRecord(f"unknown filter operator (known: {', '.join(_CMP)})")
                try:
                    if have is _MISSING or not cmp(have, arg):
                        return False
                except TypeError:  # a comparison across types matches nothing
                    return False
        elif have is _MISSING or have != want:
            return False
    return True


_MISSING = object()


def _at_path(value: dict, field: str):
    cur: Any = value
    for part in field.split("."):
        if not isinstance(cur, dict) or part not in cur:
            return _MISSING
        cur = cur[part]
    return cur
