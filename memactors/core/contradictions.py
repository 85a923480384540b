"""The judge of close calls (DESIGN section 7): one small abstract class an LLM may sit behind.

A write that contradicts the live version of a fact (same subject and predicate, another
object, from another source kind) with a confidence gap of at most ``[lifecycle].
contradiction_gap`` is a close call. Without a judge (the default: deterministic, no model)
both stay live, flagged for a reviewer. With one configured (``[lifecycle].judge =
"package.module:Factory"``, a callable returning a ``Judge``), the owner asks it; its verdict
is recorded in the ledger with its name, so a replay never asks again.
"""

from __future__ import annotations

import importlib
from abc import ABC, abstractmethod

from .errors import ConfigError


class Judge(ABC):
    """Decides close calls between two versions of one fact."""

    name = "judge"

    @abstractmethod
    def decide(self, live: dict, incoming: dict) -> str | None:
        """"live" keeps the live version, "incoming" makes the new one live, None leaves the
        call to a reviewer. Both are records (content as stored, after the write gate)."""


def load_judge(path: str) -> Judge | None:
    """The judge named by ``path`` ("package.module:Factory"), or None for "" (no judge)."""
    if not path:
        return None
    module, _, attr = path.partition(":")
    try:
        judge = getattr(importlib.import_module(module), attr)()
    except (ImportError, AttributeError, TypeError, ValueError) as exc:
        raise ConfigError(f"[lifecycle].judge cannot be loaded ({type(exc).__name__}); "
                          "give 'package.module:Factory' returning a memactors.core.contradictions.Judge") from None
    if not isinstance(judge, Judge):
        raise ConfigError("[lifecycle].judge must build a memactors.core.contradictions.Judge")
    return judge


def verdict_of(judge, method: str, live: dict, incoming: dict) -> str | None:
    """``judge.<method>(live, incoming)``: "live", "incoming", or None (a reviewer decides) when
    there is no judge, it has no verdict, answers something else or fails. A judge may be a model
    behind a network: its failure must not fail the write, nor the batch around it."""
    fn = getattr(judge, method, None) if judge is not None else None
    if fn is None:
        return None
    try:
        verdict = fn(live, incoming)
    except Exception:  # noqa: BLE001 - whatever a configured judge raises: the call stays a reviewer's
        return None
    return verdict if verdict in ("live", "incoming") else None


class NewestWins(Judge):
    """A deterministic judge (an example, and a policy some deployments want): the incoming
    version wins every close call."""

    name = "newest-wins"

    def decide(self, live: dict, incoming: dict) -> str | None:
        return "incoming"


# --- text-only contradictions, found without a model -----------------------------------------
#
# Two memories of one scope that say opposite things about the same thing, with no subject and
# predicate to compare: the caller finds the candidates (a live text-only memory of the scope
# whose vector is close, [lifecycle].text_contradiction_cosine), ``text_contradiction`` decides
# from cues whether the pair says opposite things. Cues: a negation on one side only ("not",
# "never", "can't", 不, 没有, ...), an antonym across the pair (likes / hates, 喜欢 / 讨厌, ...),
# or a changed value (the same words but one number). The rest of the two texts must match
# closely once the cue words are set aside, so "Alice likes tea" and "Bob hates tea" are not one.

import re as _re
import unicodedata as _ud
from itertools import repeat as _repeat

_CONTRACTIONS = ((r"\bcan(?:'t|not) (?:stand|bear)\b", "hate"), (r"\bis fond of\b", "likes"), (r"\bcan't\b", "can not"), (r"\bcannot\b", "can not"), (r"\bwon't\b", "will not"),
                 (r"\bshan't\b", "shall not"), (r"n't\b", " not"), (r"\bno longer\b", "not"),
                 # French "ne ... plus" (no longer): "plus" alone is "more", so the pair reads as "pas"
                 (r"\bn'(\w+) plus\b", r"\1 pas"), (r"\bne (\w+) plus\b", r"\1 pas"))
# English, and the commonest negators of a few languages written in Latin letters (German, French,
# Dutch, Italian, Portuguese; Spanish "no" is English's): "Alice ist nicht Vegetarierin" is a near-copy of
# "Alice ist Vegetarierin" to an embedder, as in English. Words of negative concord ("ne", "mai",
# "nunca") are left out: counted beside "pas", "non" or "no" they would cancel the negation.
_NEG_EN = frozenset("not no never none nobody nothing neither nor without "
                    "nicht kein keine keinen keinem keiner keines nie niemals pas jamais niet geen nooit non não".split())
# Han negators; 没有 before 不 so that 没有 counts once.
_NEG_ZH = ("没有", "不再", "从不", "从未", "绝不", "并非", "不", "没", "未", "别", "无")
# (side a, side b): words (English) or strings (Chinese) of opposite sense.
_ANTONYMS_EN = (
    ({"like", "likes", "liked", "love", "loves", "loved", "enjoy", "enjoys", "enjoyed", "adore", "adores", "prefer",
      "prefers", "preferred", "want", "wants", "wanted", "fan"},
     {"dislike", "dislikes", "disliked", "hate", "hates", "hated", "detest", "detests", "loathe", "loathes",
      "avoid", "avoids", "avoided"}),
    ({"allowed", "permitted", "allow", "allows", "may"}, {"forbidden", "banned", "prohibited", "forbid", "forbids"}),
    ({"true", "correct", "right", "yes"}, {"false", "wrong", "incorrect"}),
    ({"open", "opened", "opens"}, {"closed", "shut", "closes"}),
    ({"always"}, {"never"}),
    ({"agree", "agrees", "agreed", "accept", "accepts", "accepted", "approve", "approves", "approved"},
     {"disagree", "disagrees", "disagreed", "reject", "rejects", "rejected", "refuse", "refuses", "refused"}),
    ({"available", "free"}, {"unavailable", "busy"}),
    ({"alive"}, {"dead"}),
    ({"married"}, {"single", "divorced", "unmarried"}),
    ({"early"}, {"late"}),
    ({"on", "enabled"}, {"off", "disabled"}),
    ({"increase", "increased", "rise", "rose"}, {"decrease", "decreased", "fall", "fell", "drop", "dropped"}),
    ({"passed", "passes", "succeeded", "succeeds"}, {"failed", "fails", "failing"}),
    ({"present"}, {"absent"}),
    ({"happy"}, {"unhappy"}),
    ({"online", "up"}, {"offline", "down"}),
    # German, Portuguese, Spanish, Italian, French likes / hates (Spanish "gusta" needs "no")
    ({"mag", "liebt", "gosta", "adora", "ama", "adore", "aime", "piace"},
     {"hasst", "odeia", "odia", "déteste", "detesta", "odio"}),
)
_ANTONYMS_ZH = (
    (("喜欢", "喜爱", "爱吃", "爱喝", "热爱", "偏爱", "想要", "愿意"), ("讨厌", "厌恶", "反感", "受不了")),
    (("同意", "支持", "赞成", "接受", "批准"), ("反对", "拒绝", "否决")),
    (("允许", "可以"), ("禁止", "不准", "不许", "不可以")),
    (("开着", "打开", "开门", "营业"), ("关着", "关闭", "关门", "停业")),
    (("增加", "上涨", "提高"), ("减少", "下降", "降低")),
    (("已婚",), ("单身", "离婚")),
    (("对的", "正确"), ("错的", "错误")),
)
_CJK = _re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")
_ANTONYMS_ZH_LONGEST_FIRST = tuple(tuple(tuple(sorted(ws, key=len, reverse=True)) for ws in pair) for pair in _ANTONYMS_ZH)
# A number keeps a minus sign that starts it ("-18 degrees" is not "18 degrees"), never one
# inside a word, range or date ("covid-19", "9-5", "2024-01-05").
_WORD = _re.compile(r"[a-z]+|(?:(?<![a-z\d.,:])-)?\d+(?:[.,:]\d+)*")
# The same for a text with other letters ("não", "végétarienne" as one word each, not "n", "o"):
# a third slower, so only where a text is not ASCII.
_WORD_U = _re.compile(r"[^\W\d_]+|(?:(?<![\w.,:])-)?\d+(?:[.,:]\d+)*")


def _words(t: str) -> list[str]:
    return (_WORD if t.isascii() else _WORD_U).findall(t)


_NUM = _re.compile(r"\d+(?:[.,:]\d+)*")
_ZH_NUM = _re.compile(r"[零一二两三四五六七八九十百千万\d]+")


def _han_terms_class() -> str:
    """The characters a Chinese text's terms are made of: Han or a-z, less the Han numerals
    (``_ZH_NUM``'s): one regex pass where dropping the numbers, then all else, took two."""
    cut, out = sorted(ord(c) for c in "零一二两三四五六七八九十百千万"), []
    for lo, hi in ((0x3400, 0x4DBF), (0x4E00, 0x9FFF)):
        for cp in [c for c in cut if lo <= c <= hi] + [hi + 1]:
            if cp > lo:
                out.append(f"{chr(lo)}-{chr(cp - 1)}")
            lo = cp + 1
    return "".join(out) + "a-z"


_NOT_HAN_TERM = _re.compile(f"[^{_han_terms_class()}]+")
_BIGRAMS = tuple(slice(i, i + 2) for i in range(256))  # a Chinese text's terms, cut in C (-20%)
_STOP = frozenset("a an the is are was were be been am of to in on at for with and or but that this it its his her "
                  "their my our your very really so too also just do does did s has have had".split())
# Words after which a number names a thing rather than states a value ("note 2", "room 101",
# "step 3", "fact number 7"): such a number is part of the term, so two notes differ, never clash.
_LABEL_HEADS = frozenset("note notes step steps item items task tasks room rooms ticket tickets order orders issue "
                         "issues version versions chapter chapters page pages line lines number no id test tests "
                         "case cases fact facts part parts phase phases level levels round rounds batch batches run "
                         "runs floor floors gate gates seat seats flight flights bus route platform episode "
                         "season row rows table tables question questions slide slides section sections".split())
MIN_OVERLAP = 0.6  # share of the rest (cue words set aside) the two texts must have in common


_CONTRACTIONS_RE = tuple((_re.compile(p), r) for p, r in _CONTRACTIONS)
# Full-width punctuation that Chinese texts carry (，: most of them): each replaced by its NFKD
# form first, NFKC's result is the same and the text is usually already NFKC, so the quick
# check passes and normalising (2 us) is skipped.
# Fullwidth punctuation as ASCII; the minus sign (U+2212, which NFKC keeps) as "-" ("−5 degrees"
# is "-5 degrees"); characters that show nothing dropped (records.normalise reads them so too).
_FULL_WIDTH = (*((c, _ud.normalize("NFKD", c)) for c in "，？！：；（）"), ("\u2212", "-"),
               *((chr(cp), "") for cp in (0x00AD, 0x200B, 0x200C, 0x200D, 0x2060, 0xFEFF)))


def _norm(text: str) -> str:
    # ASCII (most English texts): NFKC changes nothing and casefold is lower; the check for an
    # already normal text is ~20x cheaper than normalising it.
    if text.isascii():
        t = text.lower()
    else:
        for c, d in _FULL_WIDTH:
            if c in text:
                text = text.replace(c, d)
        t = (text if _ud.is_normalized("NFKC", text) else _ud.normalize("NFKC", text)).casefold().replace("’", "'")
    # A text with none of these has no contraction (most texts: no pattern to run); five
    # substring tests, where a regex of them cost 0.7 us a text.
    if "'" in t or "cannot" in t or "fond" in t or "longer" in t or "plus" in t:
        for pat, rep in _CONTRACTIONS_RE:
            t = pat.sub(rep, t)
    return t


def _zh_cues(t: str) -> tuple[int, set, str]:
    """(negations, antonym sides, the text with cue strings removed) of a Chinese text."""
    if _ZH_CUE.search(t) is None:  # most texts hold no cue: one scan instead of ~50 (the same result)
        return 0, set(), t
    # ``_zh_cue_loops`` over the cue strings whose first character the text holds: a string
    # absent from the text is absent from what is left of it (cues give way to spaces), so the
    # skipped tests would all have failed.
    chars = set(t)
    steps = sorted(k for c in chars.intersection(_ZH_BY_FIRST) for k in _ZH_BY_FIRST[c])
    sides: set = set()
    rest = t
    for k in steps:
        i, side, w = _ZH_STEPS[k]
        if w in rest:
            sides.add((i, side))
            rest = rest.replace(w, " ")
    neg = 0
    for w in _NEG_ZH:
        if w[0] in chars:
            neg += rest.count(w)
            rest = rest.replace(w, " ")
    return neg, sides, rest


def _zh_cue_loops(t: str) -> tuple[int, set, str]:
    """``_zh_cues`` word by word: antonyms longest first, then negations on what is left."""
    sides: set = set()
    rest = t
    for i, sides_words in enumerate(_ANTONYMS_ZH_LONGEST_FIRST):
        for side, words in enumerate(sides_words):
            for w in words:
                if w in rest:
                    sides.add((i, side))
                    rest = rest.replace(w, " ")
    neg = 0
    for w in _NEG_ZH:
        neg += rest.count(w)
        rest = rest.replace(w, " ")
    return neg, sides, rest


_ZH_STEPS = tuple((i, side, w) for i, pair in enumerate(_ANTONYMS_ZH_LONGEST_FIRST)
                  for side, words in enumerate(pair) for w in words)  # _zh_cue_loops' order
_ZH_BY_FIRST: dict[str, tuple[int, ...]] = {}  # a cue string's first character -> its steps
for _k, (_, _, _w) in enumerate(_ZH_STEPS):
    _ZH_BY_FIRST[_w[0]] = (*_ZH_BY_FIRST.get(_w[0], ()), _k)
_ZH_CUE = _re.compile("|".join(_re.escape(w) for pair in _ANTONYMS_ZH for side in pair for w in side)
                      + "|" + "|".join(map(_re.escape, _NEG_ZH)))

_SIDES_EN: dict[str, tuple] = {}  # word -> the (pair, side) it stands for: one lookup a word
for _i, _pair in enumerate(_ANTONYMS_EN):
    for _side in (0, 1):
        for _w in _pair[_side]:
            _SIDES_EN[_w] = (*_SIDES_EN.get(_w, ()), (_i, _side))


def _en_cues(words: list[str]) -> tuple[int, set, list[str]]:
    sides: set = set()
    rest, neg = [], 0
    for w in words:
        if w in _NEG_EN:
            neg += 1
            continue
        hit = _SIDES_EN.get(w)
        if hit:
            sides.update(hit)
            continue
        rest.append(w)
    return neg, sides, rest


def _stem(w: str) -> str:
    """A crude plural / third-person cut, enough to pair "smokes" with "smoke" and "passes"
    with "pass" ("-ches" keeps its e: "caches" is "cache")."""
    if len(w) > 4 and w.endswith(("sses", "shes", "xes", "zzes")):
        return w[:-2]
    return w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w


def _en_parts_two_pass(t: str) -> tuple[int, set, set, tuple]:
    """(negations, antonym sides, terms, numbers) of a normalised English text: the cue words
    set aside first, then the rest word by word (``_en_parts`` in one pass, the same result)."""
    neg, sides, words = _en_cues(_words(t))
    terms, nums = set(), []
    for i, w in enumerate(words):
        if not w[-1].isdigit():  # _words yields letters or a number (maybe signed), never both
            if w not in _STOP:
                terms.add(_stem(w))
        elif i > 0 and words[i - 1] in _LABEL_HEADS:
            terms.add(f"{words[i - 1]}#{w}")
        else:
            nums.append(_number(w))
    return neg, sides, terms, tuple(nums)


_THOUSANDS = _re.compile(r"-?\d{1,3}(?:,\d{3})+(?:\.\d+)?")
_ZERO_FRACTION = _re.compile(r"(-?\d+)\.0+")
_CLOCK = _re.compile(r"(\d{1,2}):(\d\d)")


def _number(w: str) -> str:
    """A number as the value it states: "1,000" is "1000" and "30.0" is "30" (else the same
    value written two ways read as a changed value); a time "19:00" as "19.00" is written
    ("19"), "9:30" as "9.30"; "3.5" as written."""
    if "," in w and _THOUSANDS.fullmatch(w):
        w = w.replace(",", "")
    if ":" in w and (m := _CLOCK.fullmatch(w)):
        w = f"{m.group(1)}.{m.group(2)}"
    if "." in w and (m := _ZERO_FRACTION.fullmatch(w)):
        w = m.group(1)
    return "0" if w == "-0" else w


_NEG, _NUMBER, _STOPWORD = object(), object(), object()
_KINDS: dict[str, object] = {}  # word -> _NEG, its antonym sides (a tuple), _NUMBER, _STOPWORD or its stem
_KINDS_MAX = 200_000  # words remembered (a bound on memory; a word past it is classified each time)


def _kind(w: str) -> object:
    if w in _NEG_EN:
        return _NEG
    sides = _SIDES_EN.get(w)
    if sides:
        return sides
    if w[-1].isdigit():
        return _NUMBER
    return _STOPWORD if w in _STOP else _stem(w)


def _en_parts(t: str) -> tuple[int, set, set, tuple]:
    """``_en_parts_two_pass`` in one pass, each word's kind looked up once (a new text's cues
    were most of the check's cost)."""
    neg, sides, terms, nums, prev = 0, set(), set(), [], None
    kinds = _KINDS
    for w in _words(t):
        k = kinds.get(w)
        if k is None:
            k = _kind(w)
            if len(kinds) < _KINDS_MAX:
                kinds[w] = k
        if k is _NEG:
            neg += 1
            continue
        if k.__class__ is tuple:
            sides.update(k)
            continue
        if k is _NUMBER:
            if prev in _LABEL_HEADS:
                terms.add(f"{prev}#{w}")
            else:
                nums.append(_number(w))
        elif k is not _STOPWORD:
            terms.add(k)
        prev = w
    return neg, sides, terms, tuple(nums)


_CUES: dict[str, tuple] = {}  # text -> its _parts: a live memory is compared with every close write of its scope
_CUES_MAX = 65_536  # texts remembered; past it the memo starts again (a bound on memory, atomic under threads)


def _parts(text: str):
    """(negations, antonym sides, terms, numbers) of a text, remembered (``_read_parts``)."""
    p = _CUES.get(text)
    if p is None:
        p = _remember(text, _read_parts(text))
    return p


def _remember(text: str, parts):
    if len(_CUES) >= _CUES_MAX:
        _CUES.clear()
    _CUES[text] = parts
    return parts


_parts.cache_clear = _CUES.clear  # as functools' caches have it (the benchmark starts each run cold)


def text_cues(texts: list) -> list:
    """The cues of each text (None for None): what a gate worker reads for its owner, off the
    owner's core (``remember_cues`` there); the same values ``_parts`` gives."""
    return [None if t is None else _parts(t) for t in texts]


def remember_cues(texts: list, cues: list) -> None:
    """Take cues read elsewhere (``text_cues``) into this process's memo."""
    for t, c in zip(texts, cues):
        if t is not None and c is not None and t not in _CUES:
            _remember(t, c)


def _read_parts(text: str):
    t = _norm(text)
    if not t.isascii() and _CJK.search(t):
        neg, sides, rest = _zh_cues(t)
        nums = tuple(_ZH_NUM.findall(rest))
        han = _NOT_HAN_TERM.sub("", rest)
        if len(han) > len(_BIGRAMS):  # a long text: its bigrams one by one
            terms = {han[i:i + 2] for i in range(len(han) - 1)}
        elif len(han) > 1:
            terms = frozenset(map(han.__getitem__, _BIGRAMS[:len(han) - 1]))
        else:
            terms = {han} if han else set()
    else:
        neg, sides, terms, nums = _en_parts(t)
    return neg, frozenset(sides), frozenset(terms), nums


def labels_differ(a: str, b: str) -> bool:
    """Whether two texts name other things by a number after a label word ("room 101" / "room
    214", "gate 12" / "gate 47"): such texts are about different things, never near-copies of
    one another, however close their vectors (and never opposites: ``text_contradiction``)."""
    la = {t for t in _parts(a)[2] if "#" in t}
    lb = {t for t in _parts(b)[2] if "#" in t}
    return la != lb


_PRESENT, _PAST = frozenset({"is", "are", "am"}), frozenset({"was", "were"})
_FEW_IN_COMMON = 0.34  # below this share of terms in common, two texts are not copies, whatever their vectors
# Words that add no fact: articles, and fillers a speaker repeats a text with ("... again", "really")
_NO_FACT = frozenset("a an the again really also too just very indeed actually basically definitely certainly "
                      "totally quite so".split())


def _said(text: str) -> frozenset:
    """What a text says, word by word: each word's stem ("guests" is "guest"), numbers and the
    small words as written ("before", "more", "up", "will"), articles and fillers left out; a
    Chinese text's characters (its bigrams change where one is left out)."""
    t = _norm(text)
    if _CJK.search(t):
        return frozenset(c for c in t if c.isalnum())
    kinds, out = _KINDS, set()
    for w in _words(t):
        if w in _NO_FACT:
            continue
        k = kinds.get(w)
        if k is None:
            k = _kind(w)
        out.add(k if k.__class__ is str else w)
    return frozenset(out)


def say_other_things(a: str, b: str) -> bool:
    """Whether ``b``, a near-copy by its vector of ``a`` (a live memory), says something ``a``
    does not, so that merging it into ``a`` would lose it: a word ``a`` lacks ("after" /
    "before", "three guests" / "two", "Lisbon, Portugal" / "Lisbon"), other labels ("room 101"
    / "room 214"), the same words in another order ("Alice owes Bob" / "Bob owes Alice"),
    another tense ("is" / "was"), a question beside a statement. A wrong merge loses a memory; a
    missed one keeps a copy, so the doubt goes to keeping both."""
    if labels_differ(a, b):
        return True
    if a.rstrip().endswith(("?", "？")) != b.rstrip().endswith(("?", "？")):
        return True
    ta, tb = _parts(a)[2], _parts(b)[2]
    if ta and tb and len(ta & tb) / max(len(ta), len(tb)) < _FEW_IN_COMMON:
        return True
    if not _said(b) <= _said(a):
        return True
    na, nb = _norm(a), _norm(b)
    if _CJK.search(na + nb):
        return False
    wa, wb = _words(na), _words(nb)
    sa, sb = set(wa), set(wb)
    if (_PRESENT & sa and not _PAST & sa and _PAST & sb and not _PRESENT & sb) or \
            (_PAST & sa and not _PRESENT & sa and _PRESENT & sb and not _PAST & sb):
        return True
    qa = list(dict.fromkeys(k for w in wa if (k := _kind(w)).__class__ is str))  # content stems, in order
    qb = list(dict.fromkeys(k for w in wb if (k := _kind(w)).__class__ is str))
    shared = set(qa) & set(qb)
    if len(shared) >= 2 and len(set(qa) ^ set(qb)) <= 1:
        return [k for k in qa if k in shared] != [k for k in qb if k in shared]
    return False


def _shared_at_most(terms: frozenset, t: str) -> int:
    """At most how many of ``terms`` (another text's) are terms of the English text normalised
    to ``t``, without reading its cues: a term is a word's stem, so a substring of ``t``, or a
    label ("room#101", counted whether or not)."""
    n = sum(map(t.__contains__, terms))
    return n + sum(map(str.__contains__, terms, _repeat("#"))) if "#" in "".join(terms) else n


def text_contradiction(a: str, b: str) -> str | None:
    """Whether two texts say opposite things about the same thing: the cue ("negation",
    "antonym", "value") or None. Pure and cheap (two short texts, no model)."""
    nb, sb, tb, vb = _parts(b)
    if not tb:
        return None
    pa = _CUES.get(a)
    if pa is None:
        # a's cues not read yet (the caller's ``a`` is the older memory): most pairs end at the
        # overlap test below, and for two English pairs in three an upper bound of the overlap
        # from a's text alone settles it (~1.5 us where reading the cues is ~5); the bound is >=
        # the overlap, so it rejects no pair the test would keep. (For Chinese texts the bound
        # cost about what it saved.)
        if a.isascii() and _shared_at_most(tb, _norm(a)) / len(tb) < MIN_OVERLAP:
            return None
        pa = _parts(a)
    na, sa, ta, va = pa
    if not ta:
        return None
    overlap = len(ta & tb) / max(len(ta), len(tb))
    if overlap < MIN_OVERLAP:
        return None
    # Polarity: negations flip it; an antonym pair shared across the two texts flips one side.
    shared = {i for i, _ in sa} & {i for i, _ in sb}
    flip = any(((i, 0) in sa) != ((i, 0) in sb) for i in shared)
    if (na % 2 != nb % 2) != flip:
        if _other_subjects(a, b, ta, tb):  # "Frank likes dogs" / "Frank's sister dislikes dogs": no
            return None
        if ta - tb and tb - ta and not _CJK.search(a + b):
            # each says something the other does not: about other things ("Alice never eats
            # melons" / "Alice eats grapes"). (A Chinese text's bigrams span its cue words, so
            # two opposite ones differ in a few bigrams either way.)
            return None
        return "antonym" if flip else "negation"
    if not flip and na % 2 == nb % 2 and va and vb and len(va) == len(vb) and va != vb and ta == tb:
        return "value"
    return None


_LEAD = _re.compile(r"([^\W\d_]+)('s(?![^\W\d_]))?|(?:(?<![\w.,:])-)?\d+(?:[.,:]\d+)*")


def _lead(text: str) -> tuple | None:
    """The stems of a text's first term and the possessive chain after it ("Frank's
    sister" -> ("frank", "sister")): who or what it is about. None for a Chinese text or one
    without a term."""
    t = _norm(text)
    if not t.isascii() and _CJK.search(t):
        return None
    out, chain = [], False
    for m in _LEAD.finditer(t):
        k = _kind(m.group(1)) if m.group(1) else _NUMBER
        if k.__class__ is not str:  # a stop word, a cue word or a number
            if out:
                break
            continue
        if out and not chain:
            break
        out.append(k)
        chain = m.group(2) is not None
    return tuple(out) or None


def _other_subjects(a: str, b: str, ta: frozenset, tb: frozenset) -> bool:
    """Whether two texts that overlap enough are about different subjects: one's lead is the
    other's with a possessive after it ("Frank" / "Frank's sister"), or neither's lead is among
    the other's terms ("Alice likes green tea" / "Bob hates green tea"). Only a pair found
    opposite gets here (rare), so its leads are read each time."""
    la, lb = _lead(a), _lead(b)
    if la is None or lb is None or la == lb:
        return False
    if la[:len(lb)] == lb or lb[:len(la)] == la:
        return True
    return not set(la) <= tb and not set(lb) <= ta


# --- which memories a text could contradict, from counts (no pair compared) ------------------
#
# ``text_contradiction(a, b)`` answers only when both texts have terms that overlap by
# ``MIN_OVERLAP`` and (1) their negation counts differ in parity, or (2) an antonym pair they
# share flips (one takes a side the other does not), or (3) both carry as many numbers over the
# same terms ("value"). A scope counts these keys over its live text-only memories; a write that
# meets none of them cannot contradict any memory there and is compared with none (the exact
# answer, without the candidates' cosines or cues, for most writes of a busy scope). A negated
# memory's key carries each of its terms, so a write needs the overlap from negated ones alone;
# a negated write (the rarer case) is always compared.

def cue_keys(text: str) -> tuple:
    """The keys of ``text`` that ``may_oppose`` counts; () without terms."""
    neg, sides, terms, nums = _parts(text)
    if not terms:
        return ()
    keys = [("neg1", t) for t in terms] if neg % 2 else []
    held: dict[int, int] = {}
    for i, side in sides:
        held[i] = held.get(i, 0) | (1 << side)  # 1: side 0, 2: side 1, 3: both
    keys += [("side", i, h) for i, h in held.items()]
    if nums:
        keys.append(("val", terms, len(nums)))
    return tuple(keys)


def may_oppose(counts, text: str) -> bool:
    """Whether ``text`` could contradict one of the memories whose ``cue_keys`` are counted in
    ``counts`` (key -> how many): False means ``text_contradiction(m, text)`` is None for each."""
    neg, sides, terms, nums = _parts(text)
    if not terms:
        return False
    if neg % 2:  # against the un-negated memories (most of them): not screened
        return True
    get = counts.get
    if sum(1 for t in terms if get(("neg1", t))) / len(terms) >= MIN_OVERLAP:
        return True  # the negated memories may share enough of its terms
    held: dict[int, int] = {}
    for i, side in sides:
        held[i] = held.get(i, 0) | (1 << side)
    for i, h in held.items():
        # a flip on pair i: this text takes side 0 and the memory does not (it holds side 1
        # only), or this text holds side 1 only and the memory takes side 0
        if (get(("side", i, 2)) if h & 1 else (get(("side", i, 1)) or get(("side", i, 3)))):
            return True
    return bool(nums) and bool(get(("val", terms, len(nums))))
