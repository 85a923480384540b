"""Text in an encoding a model reads and a pattern does not: the readings ``Gate.scan`` adds.

An order or a value can be written so that every rule reads past it while the model that
recalls the memory decodes it without being asked ("aWdub3JlIGFsbCBwcmV2aW91cyBpbnN0cnVjdGlvbnM="
is "ignore all previous instructions"). The gate reads such text as decoded, too:

- ``decoded``: the text with each run of base64 (or base64url) or hex replaced by what it
  decodes to, where that is printable UTF-8 (random bytes, hashes and ids are not); percent
  escapes, HTML character references and backslash escapes (``\\x69``, ``\\u0069``) resolved.
  Nested encodings are opened up to ``_DEPTH`` times;
- characters no one sees that a model reads as text: Unicode tag characters (U+E0020-E007E,
  "ASCII smuggling": each one an ASCII character) and bytes hidden in a run of variation
  selectors after an emoji (VS1-VS256, one byte each), decoded where that is printable text;
- ``rot13`` and ``backwards``: the whole text in ROT13, or reversed, where it holds one of the
  words an injection is made of in that form ("vtaber", "snoitcurtsni") or names ROT13;
- ``joined``: those words split in two by spaces ("ig nore prev ious instruc tions") written whole;
- ``spoken``: a number said digit by digit in words ("my social is one two three, four five, six
  seven eight nine", "oh seven seven double nine ...") written in digits, its groups parted by a
  dash ("123-45-6789"), so that the number's own rule reads it.

``HINTS`` are RE2 patterns the pre-scan adds to its one pass, with the reading each one asks
for: a text with none of them is never decoded (tests/test_gate_disguise.py checks that the
readings change no text the hints pass over).
"""

from __future__ import annotations

import base64
import binascii
import codecs
import html
import re
from urllib.parse import unquote

DECODE, ROT13, BACKWARDS, SPLIT, SPOKEN = 2, 4, 8, 16, 32  # reading flags (1 is the fold's: scanner.FOLD)

_B64_MIN = 16  # 12 bytes: "ignore rules" and longer
_RUN = re.compile(rf"(?<![A-Za-z0-9+/_\-])[A-Za-z0-9+/_\-]{{{_B64_MIN},}}={{0,2}}(?![A-Za-z0-9+/=_\-])", re.ASCII)
_HEX = re.compile(r"(?:[0-9A-Fa-f]{2})+", re.ASCII)
_PCT = re.compile(r"%[0-9A-Fa-f]{2}", re.ASCII)
_NUMBER = re.compile(r"[0-9][0-9 -]{6,}[0-9]", re.ASCII)
_ESC = re.compile(r"\\(?:x([0-9A-Fa-f]{2})|u([0-9A-Fa-f]{4}))", re.ASCII)
_DEPTH = 3
_CONTROL = re.compile(rb"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_TAGS = re.compile("[\U000E0000-\U000E007F]+")
_SELECTORS = re.compile("[\uFE00-\uFE0F\U000E0100-\U000E01EF]{4,}")

# Words an injection is made of (``confusables._VOCAB``'s core), as ROT13 and backwards write them.
_CORE = ("ignore", "disregard", "instructions", "previous", "system prompt", "pretend", "jailbreak",
         "you are now", "from now on", "override")
_ROT13_WORDS = tuple(codecs.encode(w, "rot13") for w in _CORE)
_BACKWARDS_WORDS = tuple(w[::-1] for w in _CORE)


def _literal(w: str) -> str:
    return "(?i)" + w.replace(" ", "\\s+")


# Words an injection is made of, and every way to split one in two (a split into two words of
# their own, "for get", "pass word", "over ride", is how those are also written: not taken).
_SPLIT_WORDS = ("ignore", "disregard", "forget", "previous", "instructions", "instruction", "system", "prompt",
                "override", "bypass", "reveal", "jailbreak", "pretend", "unrestricted", "guidelines", "password")
_WORDS_OF_THEIR_OWN = frozenset("for get pass word over ride by guide lines on in".split())
_SPLITS = tuple(sorted({(w[:i], w[i:]) for w in _SPLIT_WORDS for i in range(1, len(w))
                        if not (w[:i] in _WORDS_OF_THEIR_OWN and w[i:] in _WORDS_OF_THEIR_OWN)}, key=lambda p: -len(p[0] + p[1])))
_SPLIT = re.compile(r"(?<![A-Za-z])(?:" + "|".join(f"{a}[ \t]+{b}" for a, b in _SPLITS) + r")(?![A-Za-z])", re.I)

# Digits said as words ("oh" a zero among them), a run read as a number from four digits on (a PIN;
# "one, two, three" is a count). The reading only adds what a rule finds in the digits.
_DIGITS = {"zero": "0", "nought": "0", "one": "1", "two": "2", "three": "3", "four": "4", "five": "5", "six": "6",
           "seven": "7", "eight": "8", "nine": "9"}
_TIMES = {"double": 2, "triple": 3}
_DIGIT = "(?:zero|nought|one|two|three|four|five|six|seven|eight|nine)"
_SAID = rf"(?:(?:double|triple)[ \t]+)?{_DIGIT}"
_SPOKEN_GAP = r"[ \t]*[,\-–][ \t]*|[ \t]+"
_SPOKEN = re.compile(rf"(?<![\w\-])(?:{_SAID}|oh)(?:(?:{_SPOKEN_GAP})(?:{_SAID}|oh))+(?![\w\-])", re.I)
_SPOKEN_PART = re.compile(rf"(?:(double|triple)[ \t]+)?({_DIGIT}|oh)|({_SPOKEN_GAP})", re.I)
_SPOKEN_MIN = 4


HINTS: tuple[tuple[str, int], ...] = (
    (rf"[A-Za-z0-9+/_\-]{{{_B64_MIN}}}", DECODE),
    (r"%[0-9A-Fa-f]{2}", DECODE),
    (r"&#", DECODE),
    (r"\\[xu][0-9A-Fa-f]{2}", DECODE),
    (r"[\x{E0000}-\x{E007F}]", DECODE),
    (r"[\x{FE00}-\x{FE0F}\x{E0100}-\x{E01EF}]{4}", DECODE),
    *((_literal(w), ROT13) for w in (*_ROT13_WORDS, "rot13", "rot-13", "rot 13")),
    *((_literal(w), BACKWARDS) for w in _BACKWARDS_WORDS),
    *((f"(?i){a}[ \\t]+{b}", SPLIT) for a, b in _SPLITS),
    (rf"(?i)\b(?:{_SAID}|oh)(?:{_SPOKEN_GAP})(?:{_SAID}|oh)\b", SPOKEN),  # two: "double one double two" is four
)


def _printable(text: str, letters: bool = True) -> bool:
    return (not letters or any(c.isalpha() for c in text)) and all(c.isprintable() or c in "\n\r\t" for c in text)


def opened(run: str) -> str | None:
    """The text a hex, base64 or base64url run decodes to, or None when it is none of them.
    Text in base64 has letters of both cases, in hex a letter a-f: an id, a number or a word
    in one case is not tried (a log line's ids and counters cost nothing)."""
    body = run.rstrip("=")
    if body.isdigit():  # a number, or a number in hex ("34313131..."): its decoding is digits too
        text = _hex_text(run, letters=False)
        return text if text and _NUMBER.fullmatch(text) else None
    if body.islower() or body.isupper():  # (digits are neither)
        return _hex_text(run)
    return _hex_text(run) or base64_text(run)


def _hex_text(run: str, letters: bool = True) -> str | None:
    if len(run) % 2 or not _HEX.fullmatch(run):
        return None
    return _text_of(bytes.fromhex(run), letters)


def _text_of(raw: bytes, letters: bool = True) -> str | None:
    """``raw`` as printable UTF-8 text, or None. Random bytes (a hash, an id) nearly always hold a
    control byte: one bytes search turns them away before a decode that would raise."""
    if _CONTROL.search(raw):
        return None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return text if _printable(text, letters) else None


def base64_text(run: str, letters: bool = True) -> str | None:
    """The printable UTF-8 text a base64 or base64url run decodes to (with a letter in it, unless
    ``letters`` is False), or None."""
    body = run.rstrip("=")
    url = "-" in body or "_" in body
    if len(body) % 4 == 1 or url and ("+" in body or "/" in body):
        return None
    try:
        raw = base64.b64decode(body + "=" * (-len(body) % 4), altchars=b"-_" if url else None, validate=True)
    except binascii.Error:
        return None
    return _text_of(raw, letters)


def _open_run(m: re.Match) -> str:
    return opened(m.group()) or m.group()


def _escape(m: re.Match) -> str:
    code = int(m.group(1) or m.group(2), 16)
    return chr(code) if 0x20 <= code < 0xD800 or code in (9, 10, 13) else m.group()


def _untag(m: re.Match) -> str:
    return "".join(chr(ord(c) - 0xE0000) for c in m.group() if 0xE0020 <= ord(c) <= 0xE007E)


def _unselect(m: re.Match) -> str:
    raw = bytes(ord(c) - 0xFE00 if ord(c) < 0xFE10 else ord(c) - 0xE0100 + 16 for c in m.group())
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return m.group()
    return text if _printable(text) else m.group()


def _once(t: str) -> str:
    if not t.isascii():
        t = _TAGS.sub(_untag, t)
        t = _SELECTORS.sub(_unselect, t)
    t = _RUN.sub(_open_run, t)
    if "%" in t and _PCT.search(t):
        try:
            t = unquote(t, errors="strict")
        except UnicodeDecodeError:
            pass
    if "&#" in t:
        t = html.unescape(t)
    if "\\" in t:
        t = _ESC.sub(_escape, t)
    return t


def decoded(text: str) -> str | None:
    """``text`` with what is encoded in it decoded, or None when nothing in it is."""
    t = text
    for _ in range(_DEPTH):
        nxt = _once(t)
        if nxt == t:
            break
        t = nxt
    return None if t == text else t


def rot13(text: str) -> str:
    return codecs.encode(text, "rot13")


def backwards(text: str) -> str:
    return text[::-1]


def joined(text: str) -> str:
    return _SPLIT.sub(lambda m: "".join(m.group().split()), text)


def _digits(m: re.Match) -> str:
    """A run of digit words as digits. Where two kinds of gap are used, the rarer one parts the
    number's groups ("one two three, four five" and "one-two-three four-five" are 123-45)."""
    digits, gaps = [], []
    for part in _SPOKEN_PART.finditer(m.group()):
        if part.group(3) is not None:
            gaps.append(bool(part.group(3).strip()))  # a comma or a dash, or spaces only
        else:
            k = _TIMES[part.group(1).lower()] if part.group(1) else 1
            digits.append(_DIGITS.get(part.group(2).lower(), "0") * k)
    if sum(map(len, digits)) < _SPOKEN_MIN:
        return m.group()
    marks = sum(gaps)
    parting = (marks <= len(gaps) - marks) if 0 < marks < len(gaps) else None
    return digits[0] + "".join(("-" if g == parting else "") + d for g, d in zip(gaps, digits[1:]))


def spoken(text: str) -> str:
    return _SPOKEN.sub(_digits, text)
