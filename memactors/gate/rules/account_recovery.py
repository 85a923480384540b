"""What gets into an account past its password, known only by what it is called.

- A one-time-password seed (the "secret key" an authenticator app is set up with): base32, 16
  characters or more, shown in groups of four as often as not ("my 2FA secret key: JBSW Y3DP EHPK
  3PXP"). Whoever holds it makes the codes for ever, so it is a secret as a password is.
- A security question's answer ("my mother's maiden name is Kowalski", "security answer: Rex123",
  "the answer to my security question is Lisbon"): what a service asks to reset the password.

Both only after their names, in one sentence or key-value pair: a bare base32 run is any id,
and a surname is a surname. (An ``otpauth://`` URI's ``secret=`` is a URL secret already.)
"""

from __future__ import annotations

from .lazy import re

from ..tree import KV, SENTENCE
from .base import RESTRICTED, SECRET, Rule, register

# The seed: 16-64 base32 characters, in one run or in groups of four; with a digit of base32's
# 2-7 (a word of sixteen letters is a word), and one case throughout (as apps show it).
_B32 = r"[A-Za-z2-7]{4}(?:[ \t]?[A-Za-z2-7]{4}){3,15}=*"
_OTP_SEED = re.compile(r"\b(?:totp|hotp|otp|2fa|mfa|two[- ]factor|authenticator(?:[ \t]+app)?|"
                       r"google[ \t]+authenticator)(?:[ \t]+(?:setup|set-up|app))?[ \t]+"
                       r"(?:secret(?:[ \t]+key)?|seed|key|setup[ \t]+key)(?:[ \t]+(?:for|of)[ \t]+[\w.\-]+)?"
                       r"[ \t]*(?:[:=]|\bis\b|\bwas\b)?[ \t]*[\"'`]?(" + _B32 + r")(?![A-Za-z0-9])", re.I)


def _otp_seed(node, ctx):
    for m in _OTP_SEED.finditer(ctx.text, node.start, node.end):
        v = m.group(1).replace(" ", "").replace("\t", "").rstrip("=")
        if any(c in "234567" for c in v) and (v.isupper() or v.islower() or v.isdigit()):
            yield m.span(1)


register(Rule(
    id="secret.otp_seed", category=SECRET, sensitivity=RESTRICTED, placeholder="[OTP_SEED]", risk=1.0,
    binds=(SENTENCE, KV), find=_otp_seed,
    itriggers=("totp", "hotp", "otp", "2fa", "mfa", "factor", "authenticator"),
    reason="a one-time-password seed (base32, 16+ characters) after an authenticator's secret-key name",
    origin="RFC 6238 / RFC 4226 shared secrets as Google Authenticator's key URI format shows them (base32)",
))

# The answer: a name after "maiden name"; after "security answer" or "answer to ... security
# question", the words to the clause's end, unless they say what answers are like.
_MAIDEN = re.compile(r"\b(?i:(?:mother|mom|mum|mama)(?:['’]s)?[ \t]+maiden[ \t]+name[ \t]*(?:is|was|[:=]))[ \t]*"
                     r"([A-Z][a-z'’\-]+(?:[ \t][A-Z][a-z'’\-]+)?)")  # the name as a name is written
_ANSWER = re.compile(r"\b(?:security[ \t]+(?:question[ \t]+)?answers?|secret[ \t]+answer|answer[ \t]+to[ \t]+"
                     r"(?:my|the|his|her|our|their)[ \t]+(?:\w+[ \t]+)?security[ \t]+question"
                     r"(?:[ \t]*\([^)\n]{0,40}\))?)[ \t]*(?:is|was|[:=])[ \t]*[\"'“`]?"
                     r"([^\n\"'”`.,;!?()]{2,40}?)[\"'”`]?(?=[ \t]*(?:[\n.,;!?()]|$))", re.I)
# What a sentence about answers says of them: "are case-sensitive", "is stored hashed", "should be long".
_ABOUT_ANSWERS = re.compile(r"(?:not[ \t]+|never[ \t]+|always[ \t]+|also[ \t]+)?(?:case[- ]sensitive|stored|hashed|"
                            r"encrypted|required|optional|hidden|masked|wrong|incorrect|invalid|correct|empty|blank|"
                            r"checked|verified|saved|set|reset|changed|updated|needed|used|easy|hard|important|"
                            r"the[ \t]+same|the[ \t]+one|something|anything|nothing|a[ \t]+\w+[ \t]+(?:question|thing)|"
                            r"(?:should|must|can|may|will|would|could)\b|"
                            # a form's help ("Security answer: Your answer must be ...", "enter it twice")
                            r"(?:your|you|yours|it|this|that|these|enter|type|choose|pick|select|please|see|"
                            r"n/?a)\b)", re.I)


def _security_answer(node, ctx):
    for m in _MAIDEN.finditer(ctx.text, node.start, node.end):
        yield m.span(1)
    for m in _ANSWER.finditer(ctx.text, node.start, node.end):
        if _ABOUT_ANSWERS.match(m.group(1)) is None:
            yield m.span(1)


register(Rule(
    id="secret.security_answer", category=SECRET, sensitivity=RESTRICTED, placeholder="[SECURITY_ANSWER]", risk=0.9,
    binds=(SENTENCE, KV), find=_security_answer,
    itriggers=("maiden name", "security answer", "security question", "secret answer"),
    reason="a security question's answer (a mother's maiden name, 'security answer: ...'), which resets a password",
    origin="NIST SP 800-63B 5.1.1.2 (knowledge-based answers are secrets a verifier may not even ask for)",
))
