"""Low-value content: greetings, thanks and acknowledgements, and transient tool noise (``ls``
listings, progress bars, package-manager chatter). Such text may serve the running turn but is
never promoted (DESIGN section 2), so the policy keeps it in the working pool (L1) only.

Only a text made *entirely* of such content matches: "thanks! my flight is on Friday" is a fact.
"""

from __future__ import annotations

from .lazy import re

from ..tree import DOC
from .base import LOW_VALUE, Ctx, Rule, found, register
from .chitchat_model import WEIGHTS

_EN = (r"hi|hello|hey|hiya|yo|howdy|thanks|thank you|thank u|thx|ty|tks|many thanks|cheers|ok|okay|k|kk|sure|"
       r"sure thing|got it|gotcha|understood|noted|roger|roger that|cool|great|nice|awesome|perfect|sounds good|"
       r"good|fine|alright|all right|lol|lmao|ha(?:ha)+|he(?:he)+|bye|goodbye|bye bye|see you|see ya|later|"
       r"good (?:morning|afternoon|evening|night|day)|morning|gm|gn|night|you'?re welcome|you are welcome|welcome|"
       r"np|no problem|no worries|yes|yeah|yep|yup|no|nope|nah|hm+|uh+|um+|oh|ah|wow|how are you|how are you doing|"
       r"how'?s it going|what'?s up|sup|same|me too|right|indeed|of course|definitely|absolutely|agreed|"
       r"i see|makes sense|will do|done|ok then|talk (?:to you )?later|ttyl|brb|nice to meet you|good to know")
_ZH = (r"你好|您好|你好呀|嗨|哈喽|哈啰|早|早上好|早安|中午好|下午好|晚上好|晚安|谢谢|谢谢你|谢谢您|谢啦|多谢|感谢|非常感谢|"
       r"辛苦了|好的|好滴|好嘞|好|行|可以|嗯+|恩+|哦+|噢|喔|收到|明白|明白了|了解|了解了|知道了|懂了|没问题|不客气|不用谢|"
       r"再见|拜拜|回头见|哈+|呵呵|嘿嘿|是的|对|对的|对啊|没错|好吧|在吗|在不在|你好啊|早呀|嗯嗯好的|好的呢|ok的")
_TAIL = r"(?:\s+(?:there|everyone|all|guys|man|buddy|dude|again|so much|a lot|very much|mate|folks))?"
_SEP = r"[\s,.!?~，。！？、…:;；：)(（）\-]*"
_EMOJI = r"[\U0001F300-\U0001FAFF\u2600-\u27BF\u2B50\uFE0F]"
_CHAT = re.compile(rf"^{_SEP}(?:(?:(?:{_EN}){_TAIL}|(?:{_ZH})|{_EMOJI}+|:\)|:D|;\)){_SEP})+$", re.I)


# Learned: a text is chit-chat when every token of it was seen in the labelled pleasantries
# (tests/fixtures/chitchat.json) and its naive-Bayes log-odds favour them. Unseen words are
# content ("peanuts", "Friday", "靠窗"): a text with one is kept. Weights: chitchat_model.py.
_TOKEN = re.compile(r"[a-z]+(?:'[a-z]+)?|[\u4e00-\u9fff]|[\U0001F300-\U0001FAFF\u2600-\u27BF]")
_REPEAT = re.compile(r"(.)\1{2,}|(ha|he|hi|ho)(?:\2)+|(mm)m+")


def tokens(text: str) -> list[str]:
    """Lower-case words (laughter and hums folded: "hahaha" -> "haha", "hmmm" -> "hmm"), CJK
    characters one by one, emoji."""
    low = _REPEAT.sub(lambda m: (m.group(1) * 2) if m.group(1) else (m.group(2) * 2 if m.group(2) else "mm"),
                      text.lower())
    return _TOKEN.findall(low)


def seed() -> list[str]:
    """The hand-written greetings and thanks above, as plain phrases: examples the labelled set
    need not repeat."""
    plain = re.compile(r"^[a-z' ]+$|^[\u4e00-\u9fff]+$")
    return [p for p in (_EN + "|" + _ZH).split("|") if plain.match(p)]


def learn(chitchat: list[str], keep: list[str]) -> dict[str, float]:
    """Per token seen in ``chitchat`` (and the seed phrases): log(P(token | chit-chat) /
    P(token | keep)), Laplace-smoothed."""
    import math
    from collections import Counter

    chitchat = [*chitchat, *seed()]
    pos, neg = Counter(t for x in chitchat for t in tokens(x)), Counter(t for x in keep for t in tokens(x))
    vocab = len(set(pos) | set(neg))
    np_, nn = sum(pos.values()) + vocab, sum(neg.values()) + vocab
    return {t: round(math.log((pos[t] + 1) / np_) - math.log((neg[t] + 1) / nn), 4) for t in sorted(pos)}


def learned_chitchat(text: str, weights: dict[str, float] | None = None) -> bool:
    w = WEIGHTS if weights is None else weights
    # Most texts hold a word the pleasantries never had, which settles it before the folding
    # (a regex over the whole text: 3 of a content text's 7-9 us). A token with no run to fold
    # is a token of the folded text too (folds shorten runs of one letter, laughter or hums,
    # never across a token's edge), so an unseen one answers as ``tokens`` would.
    for t in _TOKEN.findall(text.lower()):
        if t not in w and _REPEAT.search(t) is None:
            return False
    toks = tokens(text)
    return bool(toks) and all(t in w for t in toks) and sum(w[t] for t in toks) > 0


def _chitchat(node, ctx: Ctx):
    if _CHAT.match(ctx.text) or learned_chitchat(ctx.text):
        yield 0, len(ctx.text)


register(Rule(
    id="low_value.chitchat", category=LOW_VALUE, sensitivity="", placeholder=None, risk=0.0, binds=(DOC,),
    find=_chitchat, trigger=lambda t, low: len(t) <= (60 if t.isascii() else 30),  # chit-chat is short
    reason="only greetings, thanks, acknowledgements or pleasantries",
    origin="hand-written list of greetings, thanks and acknowledgements (en, zh); token weights learned from "
           "tests/fixtures/chitchat.json",
))

# Transient tool output, line by line.
_NOISE = re.compile(
    r"^\s*(?:[dlcbps\-][rwxsStT\-]{9}[.@+]?\s+\d+\s+\S+\s+\S+\s+[\d.,]+[KMGTP]?\s+\w{3}\s+\d{1,2}\s+(?:\d{1,2}:\d{2}|\d{4})\s"
    r"|total\s+\d+\s*$"  # ls -l
    r"|.*\b\d{1,3}(?:\.\d+)?\s?%.*(?:[#=█▏▎▍▌▋▊▉━─>|]{3,}|\beta\b|it/s|[kmg]i?b/s|\(\d+/\d+\))"  # progress bars
    r"|\s*\[?[#=>\-. ]{5,}\]?\s*\d{1,3}%"
    r"|(?:downloading|collecting|installing collected|requirement already satisfied|successfully installed|"
    r"resolving deltas|receiving objects|unpacking objects|remote: (?:counting|compressing|enumerating|total)|"
    r"fetched|get:\d+|hit:\d+|reading package lists|building dependency tree|reading state information|"
    r"using cached|preparing metadata|building wheel|created wheel|processing triggers for|"
    r"selecting previously unselected|npm (?:warn|notice)|added \d+ packages|audited \d+ packages|"
    r"found \d+ vulnerabilit|already up to date)\b"
    r"|[\u2800-\u28ff⠁-⣿|/\\\-]\s+\S.*\.\.\.\s*$)",  # spinners
    re.I)
_LS_TOKEN = re.compile(r"^[\w.\-+@]+/?$")


def _bare_listing(line: str) -> bool:
    """``ls`` without -l: several file-like names on a line (tool output only)."""
    toks = line.split()
    return len(toks) >= 2 and all(_LS_TOKEN.match(t) for t in toks) and sum(
        1 for t in toks if "." in t[1:] or t.endswith("/")) * 2 >= len(toks)


def _tool_noise(node, ctx: Ctx):
    lines = [ln for ln in re.split(r"[\r\n]+", ctx.text) if ln.strip()]
    if not lines:
        return
    tool = ctx.source == "tool"
    # A progress or listing line is short; bounding it keeps the regex linear on a huge line.
    noise = sum(1 for ln in lines if len(ln) <= 300 and (_NOISE.match(ln) or tool and _bare_listing(ln)))
    if noise * 5 >= len(lines) * 4:  # at least 80% of the lines are noise
        yield 0, len(ctx.text)


register(Rule(
    id="low_value.tool_noise", category=LOW_VALUE, sensitivity="", placeholder=None, risk=0.0, binds=(DOC,),
    find=_tool_noise,
    trigger=found(r"\n|%|  |\r|\.\.\.|-rw|drwx"),
    reason="transient tool output (ls listing, progress bar, package-manager chatter)",
    origin="output formats of GNU ls -l, pip, npm, apt, git and tqdm progress bars",
))

