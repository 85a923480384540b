"""Short numbers that open something, known only by what they are called.

- A code or a combination that opens a door, a gate, a garage, an alarm, a key box or a safe
  ("the door code is 7731", "garage code 1234#", "safe combination 12-34-56", "the combination
  to the safe is 36-24-12"): it opens a home as a password opens an account, so it is a secret.
- A payment card's security code ("CVV 123", "the security code on the back of my card is 889"):
  card data PCI DSS forbids keeping after authorisation, taken out as the card number is.

A bare "7731" is nothing: the code word and then the number, in one sentence or key-value pair.
"""

from __future__ import annotations

from .lazy import re

from ..tree import KV, SENTENCE
from .base import CONFIDENTIAL, PII, RESTRICTED, SECRET, Rule, found, regex_find, register

# What a code opens (a "lock code" locks a phone as well: both are secrets).
_OPENS = (r"(?:(?:front|back|side|main|garden|patio|cellar|basement)[ -]?door|door|gate|garage(?:[ -]?door)?|alarm|"
          r"keypad|key[ -]?pad|lock[ -]?box|key[ -]?box|key[ -]?safe|padlock|bike[ -]?lock|lock|locker|safe|"
          r"entry|entrance|buzzer|intercom|door[ -]?entry|building[ -]entry|storage[ -]unit|mailbox|mail[ -]?box|"
          r"apartment|flat|house|home|shed|vault|access)")
_NAME = (rf"(?<![^\W_]){_OPENS}(?:['’]s)?[ \t_-]+(?:(?:entry|access|security|unlock)[ \t_-]+)?(?:code|combination|combo|pin)s?(?![^\W_])"
         # "the combination to the safe", "the code for the front gate"
         rf"|\b(?:code|combination|combo)[ \t]+(?:to|for|of)[ \t]+(?:the[ \t]+|my[ \t]+|our[ \t]+|your[ \t]+|his[ \t]+|"
         rf"her[ \t]+|their[ \t]+)?(?:[\w'’-]+[ \t]+)?{_OPENS}\b")
# The value: 3-8 digits (a keypad's # or * after it), or a combination's numbers in two to four groups.
_VALUE = r"(?<![\d.,])(\d{3,8}[#*]?|\d{1,3}(?:[ \t]*[-–/][ \t]*\d{1,3}){2,3}|\d{1,2}(?:[ \t]+\d{1,2}){2,3}(?![ \t]*\d))(?![\d.,]\d|\d)"
# Between the name and the value: a copula, a colon, a dash, a few words ("is still", "for Saturday is").
_BETWEEN = r"[^\d\n.!?]{0,24}?"
# What a number there is instead: a count, a duration, a status, a year of a rule ("3 times", "404 error").
# A count of things ("printed on 500 cards", "rejected 120 transactions"), a factory default ("0000
# by default", "1234 is the default"), a date's first part ("2024-09-01").
_NOT_A_CODE = re.compile(r"[ \t]*(?:times|tries|attempts|seconds?|secs?|minutes?|mins?|hours?|days?|weeks?|months?|years?|"
                         r"digits?|characters?|chars?|errors?|status|response|px|ms|kb|mb|gb|%|percent|people|"
                         r"units?|floors?|meters?|m\b|feet|ft\b|euros?|dollars?|usd|eur|cards?|users?|guests?|visitors?|"
                         r"members?|residents?|customers?|items?|copies|codes|transactions?|payments?|orders?|requests?|"
                         r"calls?|entries|rows?|records?|"
                         r"(?:(?:is|was)[ \t]+)?(?:the[ \t]+|a[ \t]+)?(?:factory[ \t]+)?default|by[ \t]+default)\b"
                         r"|[-/.][ \t]*\d{1,2}[-/.]\d", re.I)
# A year after a word of time before it: "the garage code changed in 2023", "since 2019", "until 2025".
_WHEN = re.compile(r"\b(?:in|since|until|till|by|before|after|from|during|of)[ \t]+(?:the[ \t]+(?:year[ \t]+)?)?\Z", re.I)
_YEAR = re.compile(r"(?:19|20)\d\d")
_KEYPAD_VALUE = _VALUE.replace(r"(\d{3,8}", r"(?P<k>\d{3,8}", 1)  # the same value, its own group
_ACCESS = re.compile(rf"(?:{_NAME}){_BETWEEN}{_VALUE}"
                     # a keypad named for what it opens, the value right after a colon or "is": "front door keypad: 2468#"
                     rf"|(?<![^\W_]){_OPENS}[ \t_-]+keypad[ \t]*(?:[:：=]|\bis\b)[ \t]*{_KEYPAD_VALUE}", re.I)


def _a_code(text: str, m: re.Match, g: int | str = 1) -> bool:
    if _NOT_A_CODE.match(text, m.end(g)) is not None:
        return False
    return not (_YEAR.fullmatch(m.group(g)) and _WHEN.search(text, max(0, m.start(g) - 20), m.start(g)))


def _access(node, ctx):
    for m in _ACCESS.finditer(ctx.text, node.start, node.end):
        g = 1 if m.start(1) >= 0 else "k"
        if _a_code(ctx.text, m, g):
            yield m.span(g)


register(Rule(
    id="secret.access_code", category=SECRET, sensitivity=RESTRICTED, placeholder="[ACCESS_CODE]", risk=0.9,
    binds=(SENTENCE, KV), find=_access, guard=found(r"\d{3}|\d{1,3}[ \t]*[-–/ ][ \t]*\d"),
    itriggers=("code", "combination", "combo", " pin", "_pin", "-pin", "keypad"),
    reason="a code or combination that opens a door, a gate, an alarm, a key box or a safe",
    origin="what short-let and delivery instructions share (door, gate, key-box codes); OWASP ASVS V2 (credentials of any form)",
))

# A card's security code: CVV/CVC (2), or "security code" said of a card or after one, then 3-4 digits.
_CARD_CODE = re.compile(
    r"(?:\b(?:cvv2?|cvc2?|cav2|cvn|card[ \t]+(?:security|verification)[ \t]+(?:code|value|number)|"
    r"(?:security|verification|3[ -]digit|three[ -]digit|4[ -]digit|four[ -]digit)[ \t]+(?:code|number)[ \t]+"
    r"(?:on|of|from|for)[ \t]+(?:the[ \t]+|my[ \t]+|your[ \t]+|his[ \t]+|her[ \t]+)?(?:back[ \t]+of[ \t]+(?:the[ \t]+|my[ \t]+|your[ \t]+)?)?"
    r"(?:\w+[ \t]+)?card"
    # or said after the card in the same sentence ("my credit card expires 09/28 and the security code is 737")
    r"|(?:credit|debit|bank|payment|visa|mastercard|amex)[ \t]+card\b[^.!?\n]{0,80}?\b(?:security|verification)[ \t]+"
    r"(?:code|number))\b"
    # in Chinese: 信用卡安全码 123, 卡背面的CVV码: 123
    r"|(?:信用卡|银行卡|借记卡|储蓄卡|卡片?|卡背面的?)[ \t]*(?:安全码|校验码|cvv2?码?|cvc2?码?))[^\d\n.!?。！？]{0,16}?(?<![\d.,])(\d{3,4})(?![\d.,]\d|\d)", re.I)


register(Rule(
    id="pii.card_security_code", category=PII, sensitivity=CONFIDENTIAL, placeholder="[CARD_CODE]", risk=0.8,
    binds=(SENTENCE, KV), find=regex_find(_CARD_CODE, group=1, check=_a_code), guard=found(r"\d{3}"),
    itriggers=("cvv", "cvc", "cav2", "cvn", "security code", "verification code", "verification value",
               "verification number", "security number", "digit code", "digit number", "安全码", "校验码"),
    reason="a payment card's security code (CVV/CVC) named as one",
    origin="PCI DSS requirement 3.3.1.2 (card verification codes are not kept after authorization)",
))
