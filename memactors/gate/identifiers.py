"""Identifiers through the gate (DESIGN section 13): scope segments, actor names, task ids,
idempotency keys and retriever names pass the gate's secret and personal-data rules.

An identifier is stored in clear wherever it goes (the ledger's scope and actor columns, the
idempotency table, every Lance version's scope column, the recall log), so a token or a phone
number used as one would be kept as surely as in a memory's text. The screen:

- ``identifier_kind(value)``: which kind of data a string looks like ("Slack token ...", "phone
  number ..."), or None: every pii and secret rule of the gate, numeric ids of 11-15 digits
  that libphonenumber reads as an international number of a main region (no ``+`` can appear
  in an id), and a run of 13-19 digits that is a card number: Luhn-valid, of a known IIN and a
  length that card brand issues (the text rule also wants card words or the printed grouping,
  which an id has no room for), with no letter or digit either side (a hex id's digits are not
  one). Cached by string: ids are checked on every call.
- ``Identifiers``: what a runtime does with a flagged id: refuse it with ``InvalidIdentifier``
  naming the kind (never the value), or, with ``[gate].pseudonymise_identifiers``, replace it by
  a keyed pseudonym (``p-`` and 32 hex digits of HMAC-SHA256 under the data folder's key), the
  same for the same id every time, so grants, writes and recalls naming it keep meeting.

Ordinary ids pass: numbers (42, 1001), UUIDs, commit hashes, dates, versions, ``t0-abc123``.
"""

from __future__ import annotations

import copy
import hashlib
import hmac
import re
from functools import lru_cache

from ..core import validate as V
from ..core.errors import InvalidIdentifier
from ..core.idempotency import is_made_key
from ..core.scopes import Scope, check_identifier, is_identifier, parse_scope
from .policy import GatePolicy
from .rules import PII, RULES, SECRET
from .rules.phone import REGIONS, libphonenumber
from .scanner import Gate

MAX_SCREENED = 4096  # longer strings are refused by their shape anyway (ids hold at most 128 characters)
_E164 = re.compile(r"(?:00)?([1-9][0-9]{10,14})", re.ASCII)
_MAIN = frozenset(REGIONS) | {"CA"}
# A card number in an id: 13-19 digits alone, or in a card's printed groups with hyphens or dots
# ("4111-1111-1111-1111", Amex "3782-822463-10005"), with no letter or digit either side. Digits
# run on from letters are not one: a hex id (a UUID's 32 hex digits) holds a Luhn-valid run of a
# card's prefix about once in 2,000, and would be refused.
_DIGIT_RUN = re.compile(r"(?<![0-9A-Za-z])(?:[0-9]{13,19}|[0-9]{4}(?P<s>[.-])[0-9]{4}(?P=s)[0-9]{4}(?P=s)[0-9]{1,4}"
                        r"(?:(?P=s)[0-9]{3})?|[0-9]{4}(?P<a>[.-])[0-9]{6}(?P=a)[0-9]{5})(?![0-9A-Za-z])", re.ASCII)
# Lengths each card brand issues (ISO/IEC 7812, as the text rule's IIN table): a 16-digit
# number of Amex's prefix is not an Amex card. Ordered: the first prefix that matches decides.
_CARD_LENGTHS = (
    (re.compile(r"3[47]"), {15}), (re.compile(r"30[0-5]|3[689]"), set(range(14, 20))),
    (re.compile(r"35(?:2[89]|[3-8][0-9])"), set(range(16, 20))), (re.compile(r"4"), {13, 16, 19}),
    (re.compile(r"220[0-4]"), set(range(16, 20))),
    (re.compile(r"5[1-5]|2(?:22[1-9]|2[3-9][0-9]|[3-6][0-9]{2}|7[01][0-9]|720)"), {16}),
    (re.compile(r"50(?:18|20|38)|5893|6304|6759|676[1-3]"), set(range(13, 20))),
    (re.compile(r"6011|64[4-9]|65|62"), set(range(16, 20))),
)

# The pii and secret rules alone, each hit reported whatever the policy would do with it.
_GATE = Gate({rid: r for rid, r in RULES.items() if r.category in (PII, SECRET)}, GatePolicy.from_dict(
    {"sensitivity": {"restricted": "block", "confidential": "block", "internal": "block"}}))


@lru_cache(maxsize=65536)
def identifier_kind(value: str) -> str | None:
    """What kind of personal data or secret ``value`` looks like (a rule's fixed phrase), or None."""
    if not isinstance(value, str) or len(value) > MAX_SCREENED:
        return None
    hits = _GATE.scan(value).hits
    if hits:
        return max(hits, key=lambda h: (h.risk, h.end - h.start)).reason
    m = _E164.fullmatch(value)
    if m is not None and _international(m.group(1)):
        return "phone number in international form (country code first)"
    if any(_card(m.group()) for m in _DIGIT_RUN.finditer(value)):
        return "card number (13-19 digits, Luhn-valid, a card brand's prefix and length)"
    return None


def _international(digits: str) -> bool:
    pn = libphonenumber()
    try:
        n = pn.parse("+" + digits, None)
    except pn.NumberParseException:  # no country code starts it: maybe a card still
        return False
    return pn.is_valid_number(n) and pn.region_code_for_number(n) in _MAIN


def _card(run: str) -> bool:
    from stdnum import luhn

    digits = run.replace("-", "").replace(".", "")
    if not 13 <= len(digits) <= 19 or not luhn.is_valid(digits):
        return False
    return next((len(digits) in ns for p, ns in _CARD_LENGTHS if p.match(digits)), False)


def refusal(what: str, kind: str) -> InvalidIdentifier:
    return InvalidIdentifier(
        f"{what} looks like personal data or a secret ({kind}): identifiers are stored in clear (ledger, indexes, logs), so "
        "personal data and secrets may not be used as one; use an opaque id (a UUID, or your own "
        "key for the person), or set [gate].pseudonymise_identifiers = true to store a keyed pseudonym")


class Identifiers:
    """The screen a runtime applies to every id a call carries: ``id`` and ``scope`` return the
    value to use (the value itself, or its pseudonym) or raise InvalidIdentifier."""

    def __init__(self, key: bytes | None = None, *, pseudonymise: bool = False) -> None:
        if pseudonymise and not key:
            raise ValueError("pseudonymising identifiers needs the data folder's key")
        self._key = key if pseudonymise else None

    @property
    def pseudonymising(self) -> bool:
        return self._key is not None

    def pseudonym(self, value: str) -> str:
        return "p-" + hmac.new(self._key, value.encode("utf-8", "surrogatepass"), hashlib.sha256).hexdigest()[:32]

    def id(self, value: object, what: str = "identifier") -> str:
        """``value`` if clean, its pseudonym when flagged and pseudonymising, else refused.
        Shape errors (a space, a slash, more than 128 characters) stay the core's."""
        if not isinstance(value, str):
            return check_identifier(value, what)
        if what == "idempotency_key" and is_made_key(value):  # a runtime-made key's shape holds no data
            return value  # (tests/test_made_keys.py), the owners skip it too; each fresh one was a gate scan
        kind = identifier_kind(value)
        if kind is None:
            return value
        if self._key is None:
            raise refusal(what, kind)
        return self.pseudonym(value)

    def purpose(self, value: object, redact) -> str:
        """A purpose as logged: a name screened like any id, or text (``core.validate.purpose``)
        through ``redact`` (the gate's ``redact_all``), so no personal data or secret is logged."""
        if is_identifier(value):
            return self.id(value, "purpose")
        return redact(V.purpose(value))

    def optional(self, value: object, what: str = "identifier"):
        return None if value is None else self.id(value, what)

    def scope(self, value: object, what: str = "scope") -> str:
        """A scope path with each id segment screened (a Scope or a str; the core checks the form)."""
        if isinstance(value, Scope):
            value = str(value)
        if not isinstance(value, str):
            return value  # the core's parse says what is wrong
        return self._scope(value, what)

    def scopes(self, values: object, what: str = "allowed_scopes"):
        if isinstance(values, (list, tuple, set, frozenset)):
            return [self.scope(v, what) for v in values]
        return values

    def writes(self, items: object) -> tuple[object, dict[int, InvalidIdentifier]]:
        """A write_many batch with each item's scope, actor and idempotency key screened: the
        items to validate (mapped where pseudonymising) and the refusals by position (the item
        left as it was, to be replaced by its refusal after validation)."""
        if not isinstance(items, (list, tuple)):
            return items, {}
        out, refused = list(items), {}
        for i, item in enumerate(items):
            try:
                if isinstance(item, dict):
                    out[i] = self._fields(item, dict(item))
                elif hasattr(item, "__dataclass_fields__") and hasattr(item, "actor"):  # a WriteRequest
                    out[i] = self._fields(item, copy.copy(item))
            except InvalidIdentifier as exc:
                refused[i] = exc
        return out, refused

    def _fields(self, src, dst):
        if type(src) is dict:  # the usual item, without the accessors below (one a write, every write)
            for name in ("actor", "idempotency_key"):
                if isinstance(v := src.get(name), str):
                    dst[name] = self.id(v, name)
            if isinstance(v := src.get("scope"), (str, Scope)):
                dst["scope"] = self.scope(v)
            return dst
        get = src.get if isinstance(src, dict) else lambda k: getattr(src, k, None)
        put = dst.__setitem__ if isinstance(dst, dict) else lambda k, v: setattr(dst, k, v)
        for name, what in (("actor", "actor"), ("idempotency_key", "idempotency_key")):
            if isinstance(get(name), str):
                put(name, self.id(get(name), what))
        if isinstance(get("scope"), (str, Scope)):
            put("scope", self.scope(get("scope")))
        return dst

    @lru_cache(maxsize=65536)  # noqa: B019 - one screen per runtime, bounded
    def _scope(self, value: str, what: str) -> str:
        if len(value) > MAX_SCREENED:
            return value
        parts = value.strip("/").split("/")
        flagged = False
        for i in range(1, len(parts), 2):  # /org/{id}/user/{id}/task/{id}: every second segment
            kind = identifier_kind(parts[i])
            if kind is None:
                continue
            if self._key is None:
                raise refusal(_segment(parts, i), kind)
            parts[i] = self.pseudonym(parts[i])
            flagged = True
        if not flagged:
            return value
        return str(parse_scope("/" + "/".join(parts) + "/"))


def screen_ids(values: dict) -> None:
    """Refuse (never pseudonymise) any flagged id among ``values`` (what it is -> id or None):
    the owners' second look, after the runtime has mapped what it may."""
    for what, v in values.items():
        if isinstance(v, str) and (kind := identifier_kind(v)) is not None:
            raise refusal(what, kind)


@lru_cache(maxsize=65536)  # a clean scope is remembered; a refusal raises each time
def screen_scope(scope: str) -> None:
    """The same for a scope path's id segments."""
    if isinstance(scope, str) and len(scope) <= MAX_SCREENED:
        parts = scope.strip("/").split("/")
        for i in range(1, len(parts), 2):
            if (kind := identifier_kind(parts[i])) is not None:
                raise refusal(_segment(parts, i), kind)


def _segment(parts: list[str], i: int) -> str:
    key = parts[i - 1]  # org, user, task or project in a scope of the tree; anything else is not named
    return f"the {key} id of a scope" if key in ("org", "user", "task", "project") else "a segment of a scope"
