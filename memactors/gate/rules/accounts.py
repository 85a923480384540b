"""Identifiers a platform or an organisation gives a person: a social account's handle, and an
employee, student, staff, member, customer or library number.

Neither has a shape of its own ("@jane_doe92" is also a decorator's or a channel's name, 20231456
any number), so each counts only where the text says whose it is or what it numbers:

- a handle after a platform or handle word said as someone's ("my Instagram is @jane_doe92",
  "follow me on twitter @bob_smith_77", "her Discord username is shadowfox#1234", "我的微信号是
  wxid_abc123"), after a profile's key or label ('"instagram": "@jane_doe92"', "Twitter: @bob"),
  or a LinkedIn profile's address, which is always a person's;
- a number right after its name ("my employee ID is E-483920", "Student number: s1234567"),
  as ``pii.drivers_license`` reads a licence's (five digits at least).

The policy keeps both by default, reported and raised to confidential (``policy.KEPT_IDENTIFIER_RULES``).
"""

from __future__ import annotations

from .lazy import re

from ..tree import DOC
from .base import CONFIDENTIAL, PII, Ctx, Rule, found, lead, register
from .personal import number_after_name

_PLATFORMS = (r"instagram|insta|twitter|tiktok|telegram|discord|snapchat|snap|threads|mastodon|bluesky|reddit|"
              r"github|gitlab|linkedin|facebook|fb|youtube|twitch|skype|kik|steam|xbox|psn|roblox")
_HANDLE_WORDS = r"handle|username|user name|screen name|gamertag|gamer tag|user ?id|ig"
# A handle after @ (Reddit's after u/) said as someone's: a person's word, then a platform or a
# handle word, in the sentence ("us"/"our" left out: "follow us @AcmeCorp" is a company's).
_OWNER = re.compile(rf"\b(?:my|his|her|their|your|me|him|them)\b[^.!?\n]{{0,30}}"
                    rf"\b(?:{_PLATFORMS}|{_HANDLE_WORDS}|x|account)\b[^.!?\n]{{0,16}}$", re.I)
_AT = re.compile(r"(?<![\w@./])(?:@|u/)([A-Za-z0-9_](?:[A-Za-z0-9_.]{0,28}[A-Za-z0-9_])?)(?:@[\w\-]+(?:\.[\w\-]+)+)?"
                 r"(?![\w@]|\.\w)")
# A handle with no @, right after its word: only one that cannot be a word ("is the best" is none),
# a digit, an underscore, a dot or an old Discord tag in it; not after "account", "profile" or
# "tag" ("my AWS profile is dev-2", "my tag is v1.2.3").
_NAMED = re.compile(rf"\b(?:(?:{_PLATFORMS})[ \t]+)?(?:{_HANDLE_WORDS}|{_PLATFORMS})\b[ \t]*(?:(?:is|was)\b)?[ \t]*"
                    r"[:=：]?[ \t]*[\"'`]?([A-Za-z](?:[A-Za-z0-9_.\-]{0,29}[A-Za-z0-9_])(?:#[0-9]{4})?)"
                    r"(?![\w@]|[.\-]\w)", re.I)
_NOT_WORD = re.compile(r"[0-9_.]|#[0-9]{4}$")
# ... or a key or a label naming the platform or the handle ('"instagram": "@...', "Twitter: @...",
# "twitter_handle=@..."): a profile's field. Not a channel's mention (@here, @channel, @everyone).
_KEYED = re.compile(rf"\b(?:{_PLATFORMS}|{_HANDLE_WORDS})(?:[ \t]+(?:{_HANDLE_WORDS}|account))?[\"']?[ \t]*[:=：][ \t]*"
                    r"[\"']?$", re.I)
_MENTIONS = {"here", "channel", "everyone", "all", "group"}
_LINKEDIN = re.compile(r"(?:https?://)?(?:[a-z]{2,3}\.)?linkedin\.com/in/[A-Za-z0-9_\-%]{3,100}/?", re.I)
# WeChat, QQ and Weibo: the account after its name ("微信号：jane_doe88", "QQ号 123456789").
_CN = re.compile(r"(?:微信号?|微信ID|QQ号?|微博(?:号|账号)?)[ \t]*(?:是|为)?[ \t]*[:：]?[ \t]*"
                 r"([A-Za-z0-9_\-]{5,30})(?![\w])", re.I)
_CN_OWNER = re.compile(r"(?:我|你|他|她|我们|他们)的?[^。！？\n]{0,6}$")


def _handle(node, ctx: Ctx):
    text = ctx.text
    for m in _AT.finditer(text, node.start, node.end):
        before = lead(text, m.start(), 60, ctx.cache)
        if _OWNER.search(before) or (_KEYED.search(before) and m.group(1).lower() not in _MENTIONS):
            yield m.span()
    for m in _NAMED.finditer(text, node.start, node.end):
        if _NOT_WORD.search(m.group(1)) and _OWNER.search(lead(text, m.start(1), 60, ctx.cache)):
            yield m.span(1)
    yield from (m.span() for m in _LINKEDIN.finditer(text, node.start, node.end))
    for m in _CN.finditer(text, node.start, node.end):
        if _CN_OWNER.search(text, max(node.start, m.start() - 8), m.start()) or m.start() == node.start:
            yield m.span(1)


register(Rule(
    id="pii.social_handle", category=PII, sensitivity=CONFIDENTIAL, placeholder="[HANDLE]", risk=0.5,
    binds=(DOC,), find=_handle,
    # whole words, in the one-pass pre-scan ("ig", "snap", "account" as substrings selected a text in eight)
    trigger=found(rf"(?i)\b(?:{_PLATFORMS}|{_HANDLE_WORDS})(?:\b|_)|\baccount\s+(?:is\s+)?@|\bx\s+@\w"
                  r"|linkedin\.com/in/", ascii=True),
    triggers=("微信", "QQ", "qq", "微博"),
    reason="a social or messaging account's handle said as someone's, or a LinkedIn profile address",
    origin="GDPR Art. 4(1) online identifiers; HIPAA Safe Harbor (web URLs, any other unique identifying number)",
))

register(Rule(
    id="pii.org_id", category=PII, sensitivity=CONFIDENTIAL, placeholder="[ID_NUMBER]", risk=0.5,
    binds=(DOC,),
    find=number_after_name(r"\b(?:(?:employee|staff|personnel|payroll|student|matriculation|enrol?lment|"
                           r"membership|member|customer|loyalty|library)(?:[ \-](?:badge|card))?|badge)"
                           r"_?(?=[ \t\-]*(?:id\b|number|no\b|nr\b|#))|\bmatrikelnummer|\bpersonalnummer|\bkundennummer"
                           r"|\bnuméro (?:d'étudiant|d'employé|de client)"
                           r"|工号|学号|员工编号|会员号|学籍号"),
    trigger=found(r"(?i)\b(?:employee|staff|personnel|payroll|student|matriculation|enrol?lment|membership|member|"
                  r"customer|loyalty|library|badge)(?:\b[ \t\-]*|_)(?:(?:badge|card)[ \t\-]*)?(?:id|number|no|nr|#)"
                  r"|matrikelnummer|personalnummer|kundennummer|num[ée]ro (?:d'[ée]tudiant|d'employ[ée]|de client)",
                  ascii=True),
    triggers=("工号", "学号", "员工编号", "会员号", "学籍号"),
    reason="an employee, student, staff badge, member, customer or library number right after its name",
    origin="HIPAA Safe Harbor (any other unique identifying number); GDPR Art. 4(1) identification numbers",
))
