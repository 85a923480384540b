"""Text as a reader sees it: what ``fold`` undoes, and the pre-scan's cheap test for it.

A value or an instruction can be written so that a reader sees it and a pattern does not:

- characters a reader does not see at all or does not see as different (``_FOLDS``, always
  folded): invisible format characters (zero-width, joiners, bidi marks, soft hyphen),
  fullwidth digits, letters, @ and low line, Unicode hyphens and minus signs, mathematical and enclosed
  letters and digits (𝐢𝐠𝐧𝐨𝐫𝐞, ⓘⓖⓝⓞⓡⓔ), Latin small capitals and IPA look-alikes (ɪɢɴᴏʀᴇ, ɡ);
- Cyrillic and Greek look-alikes inside a Latin word ("ignоre" with a Cyrillic о, "systеm"):
  folded only in a *mixed-script word*, letters all Latin or look-alike, at least one of each.
  A word all in Cyrillic or Greek is Russian or Greek, not a disguise, and stays as typed;
  so does a lone α in "the angle α";
- letters spelled out one by one ("i g n o r e", "I.G.N.O.R.E", "i-g-n-o-r-e"): a run of at
  least ``SPACED_MIN`` single letters (one with a Latin letter), each pair separated by the same
  space or punctuation character, is joined into the word.

``fold`` changes nothing else. ``HINTS`` says, as RE2 patterns the gate's pre-scan adds to its
one pass, where ``fold`` may change the text: text with none of them (clean ASCII prose,
ordinary Russian or Chinese) pays no fold and no second scan.
"""

from __future__ import annotations

import re
import unicodedata

# -- always folded -------------------------------------------------------------------------
_INVISIBLE = [0x00AD, 0x180E, *range(0x200B, 0x2010), *range(0x202A, 0x202F), *range(0x2060, 0x2065), 0xFEFF]
_FULLWIDTH = [c for r in ((0xFF10, 0xFF1A), (0xFF21, 0xFF3B), (0xFF41, 0xFF5B)) for c in range(*r)] + [0xFF20, 0xFF3F]  # ＠ ＿
_HYPHENS = [*range(0x2010, 0x2016), 0x2212, 0xFE63, 0xFF0D]


def _nfkc_alnum(ranges) -> dict[int, int]:
    """Code points of ``ranges`` whose compatibility form is one ASCII letter or digit."""
    out = {}
    for lo, hi in ranges:
        for c in range(lo, hi + 1):
            n = unicodedata.normalize("NFKC", chr(c))
            if len(n) == 1 and n.isascii() and n.isalnum() and n != chr(c):
                out[c] = ord(n)
    return out


# Mathematical alphanumerics (bold, italic, script, fraktur, double-struck, sans, monospace), the
# letter-like symbols that fill their gaps (ℎ, ℓ, ℝ), circled and squared letters.
_STYLED = _nfkc_alnum(((0x1D400, 0x1D7FF), (0x2100, 0x214F), (0x24B6, 0x24E9), (0x1F130, 0x1F149)))
_STYLED.update({c: ord("A") + c - base for base in (0x1F150, 0x1F170) for c in range(base, base + 26)})  # 🅐 🅰
# Latin small capitals and IPA letters that read as plain letters (Latin script: no word of a
# language is written in them).
_SMALL_CAPS = dict(zip(map(ord, "ᴀʙᴄᴅᴇꜰɢʜɪᴊᴋʟᴍɴᴏᴘʀꜱᴛᴜᴠᴡʏᴢɡɑɩ"), map(ord, "abcdefghijklmnoprstuvwyzgai")))

_FOLDS: dict[int, int | None] = {**dict.fromkeys(_INVISIBLE), **{c: c - 0xFEE0 for c in _FULLWIDTH},
                                 **dict.fromkeys(_HYPHENS, ord("-")), **_STYLED, **_SMALL_CAPS}

# -- folded in a mixed-script word only ------------------------------------------------------
# Cyrillic and Greek letters a reader takes for a Latin one (Unicode's confusables, UTS #39,
# for these scripts; the common ones only).
_LOOKALIKE_PAIRS = (
    "аa еe оo рp сc уy хx іi јj ѕs ԁd ԛq ԝw һh ӏl үy ѵv кk "  # Cyrillic small
    "АA ВB ЕE КK МM НH ОO РP СC ТT УY ХX ІI ЈJ ЅS ҮY ӀI ԚQ ԜW ҺH "  # Cyrillic capital
    "οo αa εe ιi κk νv τt ρp υu χx γy ωw ϲc ϳj "  # Greek small
    "ΑA ΒB ΕE ΖZ ΗH ΙI ΚK ΜM ΝN ΟO ΡP ΤT ΥY ΧX ϹC")  # Greek capital
LOOKALIKES: dict[int, int] = {ord(p[0]): ord(p[1]) for p in _LOOKALIKE_PAIRS.split()}
_LOOK = "".join(map(chr, LOOKALIKES))
_LATIN = "A-Za-z\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u024f\u1e00-\u1eff"  # Latin letters (ASCII and accented)
# A word holding a look-alike (starting at a word's start: a long word is read once).
_WORD_WITH_LOOKALIKE = re.compile(rf"(?<![^\W\d_])[^\W\d_]*[{_LOOK}][^\W\d_]*")
_NOT_LATIN = re.compile(f"[^{_LATIN}]")
_ASCII_LETTER = re.compile("[A-Za-z]")

# -- letters spelled out one by one ----------------------------------------------------------
SPACED_MIN = 5
_SEP_PUNCT = ".,\\-_*/|+~:\u00b7\u2022"  # . , - _ * / | + ~ : · •
_L = f"[A-Za-z{_LOOK}]"
_SPACED = re.compile(  # not after or before a letter or digit; the tail: "I.G.N.O.R.E." ends with a dot
    rf"(?<![^\W_]){_L}(?P<sep> |[{_SEP_PUNCT}] ?){_L}(?:(?P=sep){_L}){{{SPACED_MIN - 2},}}(?![^\W_])"
    rf"(?P<tail>[{_SEP_PUNCT}](?=\s|$))?")


# Words an injection is made of: a run spelled out with one space between all its letters
# ("i g n o r e p r e v i o u s ...") loses its word breaks, and is split back into these when
# it is made of them alone (``_words``), so the rules read the phrase.
_VOCAB = frozenset("""
    a above act admin all an and any anything are as assistant be before bypass can developer
    disable disregard do earlier everything filter filters following forget from guidelines i ignore in
    instruction instructions is it jailbreak key me mode model new no not now of off only or output
    override password pretend previous print prior prompt prompts restrictions reveal rules safety
    say secret secrets show system tell the then this to unrestricted you your
""".split())
_MAX_WORD = max(map(len, _VOCAB))


def _words(run: str) -> str | None:
    """``run`` split into words of ``_VOCAB`` (fewest words), or None when it is not made of them."""
    low = run.lower()
    best: list = [()] + [None] * len(low)  # best[i]: the word ends of the fewest words covering low[:i]
    for i in range(1, len(low) + 1):
        for j in range(max(0, i - _MAX_WORD), i):
            if best[j] is not None and low[j:i] in _VOCAB and (best[i] is None or len(best[j]) + 1 < len(best[i])):
                best[i] = (*best[j], i)
    if best[-1] is None or len(best[-1]) < 2:
        return None
    starts = (0, *best[-1][:-1])
    return " ".join(run[a:b] for a, b in zip(starts, best[-1]))


def _join(m: re.Match) -> str:
    run, sep, tail = m.group(), m.group("sep"), m.group("tail") or ""
    if tail:
        run = run[: -len(tail)]
    if not _ASCII_LETTER.search(run):  # all Cyrillic or Greek: a heading in that language
        return m.group()
    word = run[:: len(sep) + 1]
    if sep == " " and len(word) <= 200:
        word = _words(word) or word
    return word + ("" if tail == sep[0] else tail)


def _unmix(m: re.Match) -> str:
    word = m.group()
    if _ASCII_LETTER.search(word) is None:  # all Cyrillic or Greek: a word of that language
        return word
    latin = word.translate(LOOKALIKES)
    return word if _NOT_LATIN.search(latin) else latin  # a letter of no Latin look: not a disguise


def fold(text: str) -> str | None:
    """``text`` as a reader sees it, or None when nothing in it reads differently."""
    t = text if text.isascii() else text.translate(_FOLDS)
    t = _SPACED.sub(_join, t)
    if not t.isascii():
        t = _WORD_WITH_LOOKALIKE.sub(_unmix, t)
    return None if t == text else t


# -- the pre-scan's test -----------------------------------------------------------------------
def _ranges(codes) -> str:
    """A character class body for RE2 (\\x{...} ranges) holding exactly ``codes``."""
    codes = sorted(set(codes))
    out, i = [], 0
    while i < len(codes):
        j = i
        while j + 1 < len(codes) and codes[j + 1] == codes[j] + 1:
            j += 1
        out.append(f"\\x{{{codes[i]:X}}}" + (f"-\\x{{{codes[j]:X}}}" if j > i else ""))
        i = j + 1
    return "".join(out)


_RE2_LATIN = "A-Za-z\\x{C0}-\\x{D6}\\x{D8}-\\x{F6}\\x{F8}-\\x{24F}\\x{1E00}-\\x{1EFF}"
_RE2_LOOK = _ranges(LOOKALIKES)
# Where ``fold`` may change a text (a superset: tests/test_gate_lookalike.py checks that fold
# changes no text the hints pass over): a character always folded; a Latin letter beside a
# look-alike (every mixed-script word has one); five letters with a separator between each two
# (the separators need not be the same, the letters need not stand alone). No ^, $ or negated
# class around the last: with them the one pass's automaton grows past RE2's default memory
# and the whole pre-scan runs 2.5 times slower (measured).
HINTS = (
    f"[{_ranges(_FOLDS)}]",
    f"[{_RE2_LATIN}][{_RE2_LOOK}]|[{_RE2_LOOK}][{_RE2_LATIN}]",
    f"[A-Za-z{_RE2_LOOK}](?:(?: |[{_SEP_PUNCT}] ?)[A-Za-z{_RE2_LOOK}]){{{SPACED_MIN - 1}}}",
)
