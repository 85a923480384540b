"""Checkers for input at the door: each returns the value (normalised) or raises a typed error.

A message says what is wrong by type, length, position or range, never by showing the value:
a field may hold memory content, query text or a secret pasted into the wrong place. Numbers
are shown (a rejected confidence or timeout reveals nothing); strings, bytes and containers
are described.

Every checker takes ``error``: InvalidRecord for a write or a recall (the default), ConfigError
for a configuration value. Pure: no I/O.
"""

from __future__ import annotations

import math
import numbers
import re
from collections.abc import Collection

from .errors import InvalidRecord, MemactorsError
from .scoring import Weights

# A lone surrogate (U+D800-U+DFFF) is half of a UTF-16 pair, not a character: UTF-8, orjson,
# Arrow and DuckDB all refuse it, so it is refused here, before anything else sees it.
_SURROGATE = re.compile(r"[\ud800-\udfff]")
# A text is blank when it holds nothing but white space, control characters and invisible
# format characters (zero-width, bidi marks and embeddings, joiners, variation selectors).
# Such characters are fine *inside* a text; a text made only of them says nothing.
_VISIBLE = re.compile(
    r"[^\s\x00-\x1f\x7f-\x9f\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f"
    r"\u202a-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0]"
)


def got(value: object) -> str:
    """What a rejected value is, without its content: its type and size."""
    if value is None:
        return "None"
    if isinstance(value, bool):
        return "a bool"
    if isinstance(value, str):
        return f"a str of {len(value)} characters"
    if isinstance(value, (bytes, bytearray, memoryview)):
        return f"{type(value).__name__} ({len(value)} bytes)"
    if isinstance(value, numbers.Real):  # no value: an int in a text field may be a phone number
        return _article(type(value).__name__)
    try:
        n = len(value)  # type: ignore[arg-type]
    except Exception:  # noqa: BLE001 - any object: its len() may be missing or may raise
        return _article(type(value).__name__)
    return f"{_article(type(value).__name__)} of {n} item{'' if n == 1 else 's'}"


def show_number(value: numbers.Real) -> str:
    """A number for a message about a numeric field. Small ones are shown; from 1e6 up only the
    order of magnitude (a phone or card number put in a numeric field is not echoed)."""
    if isinstance(value, numbers.Integral):
        v = int(value)
        if abs(v) < 10**6:
            return str(v)
        return f"a number of magnitude 1e{math.floor(math.log10(abs(v)))}"
    try:
        f = float(value)
    except (OverflowError, ValueError):
        return "a number too large for a float"
    if math.isnan(f):
        return "NaN"
    if math.isinf(f):
        return "-infinity" if f < 0 else "infinity"
    if abs(f) >= 1e6:
        return f"a number of magnitude 1e{math.floor(math.log10(abs(f)))}"
    return f"{f:.15g}"  # all it holds: 36500.0001 is not "36500"


def _article(name: str) -> str:
    return f"{'an' if name[:1].lower() in 'aeiou' else 'a'} {name}"


def _bound(x: float) -> str:
    return f"{int(x):,}" if float(x).is_integer() and abs(x) < 10**15 else f"{x:g}"


def _range(lo: float | None, hi: float | None, lo_open: bool) -> str:
    if lo is None and hi is None:
        return ""
    if lo is None:
        return f"<= {_bound(hi)}"
    if hi is None or hi == math.inf:
        return f"{'>' if lo_open else '>='} {_bound(lo)}"
    if lo_open:
        return f"> {_bound(lo)} and <= {_bound(hi)}"
    return f"from {_bound(lo)} to {_bound(hi)}"


def text(value: object, what: str, max_chars: int, *, allow_none: bool = False, allow_blank: bool = False,
         error: type[MemactorsError] = InvalidRecord) -> str | None:
    """A str of at most ``max_chars`` characters, not blank (unless ``allow_blank``), with no lone
    surrogate. NUL and other control characters, zero-width and right-to-left marks are allowed
    inside it. ``None`` passes only with ``allow_none``. Returns the str unchanged."""
    if value is None and allow_none:
        return None
    if not isinstance(value, str):
        raise error(f"{what} must be a string, not {got(value)}")
    if len(value) > max_chars:
        raise error(f"{what} has {len(value)} characters, more than the {max_chars} allowed")
    bad = _SURROGATE.search(value)
    if bad is not None:
        raise error(f"{what} has a lone surrogate (half of a UTF-16 pair, U+D800-U+DFFF) at position "
                    f"{bad.start() + 1} of {len(value)}: it is not a character; decode the input as UTF-8 first")
    if not allow_blank and _VISIBLE.search(value) is None:
        raise error(f"{what} is empty or blank ({len(value)} characters, none of them visible)")
    return value


PURPOSE_CHARS = 200


def purpose(value: object, what: str = "purpose") -> str:
    """A recall's or session's purpose: a name (``answer``) or ordinary text ("answer the user's
    question"), at most ``PURPOSE_CHARS`` characters, its whitespace collapsed to single spaces
    (so one purpose is logged one way). The runtime screens a name like any identifier and passes
    text through the gate's redaction before it is logged."""
    text(value, what, PURPOSE_CHARS)
    return " ".join(value.split())


_INT_FLOAT = 2**1023  # ints that float() takes without an OverflowError (and then some)


def number(value: object, what: str, lo: float | None, hi: float | None, *, allow_none: bool = False,
           lo_open: bool = False, error: type[MemactorsError] = InvalidRecord) -> float | None:
    """A finite real number (int or float, never a bool or a numeric string) with
    ``lo <= value <= hi`` (``lo < value`` when ``lo_open``; a None bound is no bound).
    Returns it as a float; ``None`` passes only with ``allow_none``."""
    if value is None and allow_none:
        return None
    t = type(value)
    if t is float or (t is int and -_INT_FLOAT < value < _INT_FLOAT):  # the usual case, before any message
        f = float(value)
        if math.isfinite(f) and (lo is None or (f > lo if lo_open else f >= lo)) and (hi is None or f <= hi):
            return f
    want = f"{what} must be a number {_range(lo, hi, lo_open)}".rstrip()
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise error(f"{want}, not {got(value)}")
    try:
        f = float(value)
    except (OverflowError, ValueError, TypeError):
        raise error(f"{want}, not {show_number(value)}") from None
    if not math.isfinite(f):
        raise error(f"{want}, not {show_number(f)}")
    if (lo is not None and (f <= lo if lo_open else f < lo)) or (hi is not None and f > hi):
        raise error(f"{want}, not {show_number(value)}")
    return f


def integer(value: object, what: str, lo: int | None, hi: int | None, *, allow_none: bool = False,
            error: type[MemactorsError] = InvalidRecord) -> int | None:
    """An integer (never a bool, a float such as 5.0, or a numeric string) with ``lo <= value <= hi``
    (a None bound is no bound). Returns it as an int; ``None`` passes only with ``allow_none``."""
    if value is None and allow_none:
        return None
    if type(value) is int and (lo is None or value >= lo) and (hi is None or value <= hi):
        return value  # the usual case, checked before any message is built
    want = f"{what} must be an integer {_range(lo, hi, False)}".rstrip()
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise error(f"{want}, not {got(value)}")
    v = int(value)
    if (lo is not None and v < lo) or (hi is not None and v > hi):
        raise error(f"{want}, not {show_number(v)}")
    return v


def flag(value: object, what: str, *, error: type[MemactorsError] = InvalidRecord) -> bool:
    """``True`` or ``False``, nothing else: a truthy non-bool ("no", 1, an array) would be taken
    as true unseen, or raise an untyped error when asked. Returns the bool."""
    if value is True or value is False:
        return value
    raise error(f"{what} is true or false, not {got(value)}")


def choice(value: object, what: str, options: Collection, *, error: type[MemactorsError] = InvalidRecord):
    """One of ``options``, of the same type (``True`` is not ``1``), for any value (an unhashable
    list or dict is simply not an option). Returns the option."""
    if type(value) is str:  # the usual case: a str option, found by equality alone
        for o in options:
            if o == value and type(o) is str:
                return o
    for o in options:
        if isinstance(value, bool) is isinstance(o, bool) and isinstance(value, type(o)) and value == o:
            return o
    raise error(f"{what} must be one of {list(options)}, not {got(value)}")


def str_list(value: object, what: str, *, min_len: int = 0, max_len: int = 1000, max_chars: int | None = None,
             error: type[MemactorsError] = InvalidRecord) -> list[str]:
    """A list or tuple (never a str, which would be a list of characters) of ``min_len`` to
    ``max_len`` strs; with ``max_chars`` each is checked by ``text``. Returns a new list."""
    if not isinstance(value, (list, tuple)):
        raise error(f"{what} must be a list of strings, not {got(value)}")
    if not min_len <= len(value) <= max_len:
        raise error(f"{what} must hold {min_len} to {max_len} items, not {len(value)}")
    for i, v in enumerate(value):
        if max_chars is not None:
            text(v, f"{what}[{i}]", max_chars, error=error)
        elif not isinstance(v, str):
            raise error(f"{what}[{i}] must be a string, not {got(v)}")
    return list(value)


_HEX_ID = re.compile(r"[0-9a-f]{32}", re.ASCII)


def hex_id(value: object, what: str, *, error: type[MemactorsError] = InvalidRecord) -> str:
    """A 32-character lowercase hex id (a memory id, a recall id). Returns it."""
    if not isinstance(value, str) or not _HEX_ID.fullmatch(value):
        raise error(f"{what} must be 32 lowercase hex characters, not {got(value)}")
    return value


_HEX_RUN = re.compile(r"[0-9a-f]*", re.ASCII)


def hex_ids(values: list, what: str, *, error: type[MemactorsError] = InvalidRecord) -> None:
    """Each of ``values`` a ``hex_id``: many at once (a sweep's share, ~65k ids) in one pass
    in C, where one call an id was a tenth of an owner's sweep. A bad one is named as
    ``hex_id`` names it."""
    if all(type(v) is str for v in values) and set(map(len, values)) <= {32} and _HEX_RUN.fullmatch("".join(values)):
        return
    for v in values:
        hex_id(v, what, error=error)


def threshold(value: object, *, allow_none: bool = False, what: str = "threshold",
              error: type[MemactorsError] = InvalidRecord) -> float | None:
    """A relevance threshold on the fused score: a number from 0 to 1."""
    return number(value, what, 0.0, 1.0, allow_none=allow_none, error=error)


def weights(value: object, *, what: str = "weights", error: type[MemactorsError] = InvalidRecord) -> Weights:
    """Scoring weights as ``scoring.Weights.parse`` takes them (a Weights, a dict by component,
    4 numbers, or "0.4/0.3/0.2/0.1"): 4 non-negative finite numbers, not all zero, with a
    finite sum. Returns a ``Weights``; every failure is ``error``."""
    try:
        return Weights.parse(value)
    except (ValueError, TypeError, OverflowError) as exc:
        # Weights.parse raises InvalidRecord with a describing message; anything else is a bug
        # there, reported without its (possibly value-echoing) text.
        msg = str(exc) if isinstance(exc, MemactorsError) else f"not usable as weights ({got(value)})"
        raise error(f"{what} {msg[len('weights '):]}" if msg.startswith("weights ") else f"{what}: {msg}") from None
