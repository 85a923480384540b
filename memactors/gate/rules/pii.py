"""Personal data: Chinese mobile numbers and resident IDs, e-mail, bank cards, one-time codes,
IPv4 addresses in a personal context, US Social Security numbers and IBANs. Checksums come from
python-stdnum, not re-derived."""

from __future__ import annotations

import ipaddress
from .lazy import re
from datetime import date

from ..tree import DOC, KV, SENTENCE
from .base import CONFIDENTIAL, INTERNAL, PII, RESTRICTED, Ctx, Rule, found, regex_find, register, window, words, lead

_digits = found(r"\d[\d \-]{5,}\d")  # a run of seven digits, spaces and dashes
_digits4 = found(r"\d{4}")


# Chinese mobile numbers: 11 digits, 1[3-9]x, optional +86 / 0086 / 86 prefix, optional space
# or dash separators in the 3-4-4 grouping (MIIT numbering plan). Not inside a longer digit run, a word, a decimal or a hex id (UUID, etag).
PHONE_CN = re.compile(
    r"(?<![0-9A-Za-z])(?<![0-9]\.)(?:(?:\+|00)?86[\s-]?)?1[3-9][0-9](?:[\s-]?[0-9]{4}){2}(?![0-9A-Za-z])", re.ASCII)

register(Rule(
    id="pii.phone_cn", category=PII, sensitivity=CONFIDENTIAL, placeholder="[PHONE_CN]", risk=0.6,
    binds=(DOC,), find=regex_find(PHONE_CN), trigger=_digits,
    reason="11-digit Chinese mobile number (1[3-9] prefix)",
    origin="MIIT mobile numbering plan (13x-19x prefixes), +86/0086 country code, 3-4-4 grouping",
))

# Resident identity numbers (GB 11643-1999): 6-digit region, 8-digit birth date, 3-digit
# sequence, check character. stdnum.cn.ric checks the date and the ISO 7064 mod 11-2 check.
# Grouped as the card prints it (region, birth date, sequence: 6-8-4) with spaces or dashes too.
_RIC = re.compile(r"(?<![0-9A-Za-z])[1-9][0-9]{5}([ \-]?)(?:18|19|20)[0-9]{2}[01][0-9][0-3][0-9]\1[0-9]{3}[0-9Xx]"
                  r"(?![0-9A-Za-z])", re.ASCII)



def _ric_ok(text: str, m: re.Match) -> bool:
    """Check character and birth date by stdnum; not ``ric.is_valid``, which also requires the
    region code to have existed in the birth year, while the code is the place of registration
    when the card was issued (a 1990-born resident of a 1998 district has a valid ID)."""
    n = m.group().upper().replace(" ", "").replace("-", "")
    from stdnum.cn import ric  # imported with the first ID candidate: not a start's cost

    if ric.calc_check_digit(n) != n[-1]:
        return False
    try:
        return ric.get_birth_date(n) <= date.today()
    except ValueError:  # stdnum's InvalidComponent for an impossible date is a ValueError
        return False


register(Rule(
    id="pii.resident_id_cn", category=PII, sensitivity=RESTRICTED, placeholder="[ID_CN]", risk=0.95,
    binds=(DOC,), find=regex_find(_RIC, check=_ric_ok), trigger=_digits,
    reason="18-character resident ID with a real birth date and a valid GB 11643 check character",
    origin="GB 11643-1999; check character and birth date by python-stdnum stdnum.cn.ric",
))

# E-mail: the WHATWG "valid e-mail address" shape with a letter TLD, Latin letters with accents
# too (RFC 6531: "josé@exemple.fr", "info@müller.de"); ASCII otherwise, so a Chinese character right
# before the local part is a boundary. File names like icon@2x.png are not mail.
_LATIN = "\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u024f"  # Latin-1 and Extended-A/B letters (not × or ÷)
_EMAIL = re.compile(
    rf"(?<![\w.+%\-{_LATIN}])[A-Za-z0-9{_LATIN}](?:[A-Za-z0-9._%+\-{_LATIN}]{{0,63}})@"
    rf"(?:[A-Za-z0-9{_LATIN}](?:[A-Za-z0-9\-{_LATIN}]{{0,61}}[A-Za-z0-9{_LATIN}])?\.)+"
    rf"([A-Za-z]{{2,24}})(?![\w\-{_LATIN}])", re.ASCII)
_FILE_EXT = {"png", "jpg", "jpeg", "gif", "svg", "webp", "ico", "bmp", "pdf", "js", "ts", "css", "py", "md", "json"}
# The same address with its @ (and dots) written so a scraper misses it and a reader does not: URL-
# or HTML-encoded (alice%40example.com, alice&#64;example.com, as links and pages carry them),
# spelled (alice [at] example [dot] com, alice at example dot com, john dot doe at ...), bracketed
# dots (example[.]com), spaced (jane @ example . org), or a Chinese input method's dots
# (lilei＠qq．com, alice@example。com). A bare " at " counts only with a spelled dot too ("works
# at example.com" is a workplace), and not before "the dot com ..." (prose).
_LOCAL_DOT = r"\.(?=[A-Za-z0-9])|\s*[\[({<]\s*(?:dot|\.)\s*[\])}>]\s*|\s+dot\s+"
_DOT_SPELLED = r"\s*[\[({<]\s*(?:dot|\.)\s*[\])}>]\s*|\s+dot\s+"
_EMAIL_HIDDEN = re.compile(
    rf"(?<![\w.+%-])[A-Za-z0-9](?:[A-Za-z0-9_+-]|(?i:{_LOCAL_DOT})){{0,63}}"
    r"(?P<at>(?i:%40|&#0*64;|&#x0*40;|&commat;|\s*[\[({<]\s*at\s*[\])}>]\s*|\s+at\s+)|\s*[@＠]\s*)"
    r"(?:(?!(?i:the|a|an|this|that|my|your|our)\s)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
    rf"(?P<dot>(?i:{_DOT_SPELLED})|(?i:\.|&#0*46;|&#x0*2e;|&period;)|[．。｡]|\s+\.\s*|\s*\.\s+))+"
    r"(?P<tld>[A-Za-z]{2,24})(?![\w-])", re.ASCII)
_DOT_SPELLED_RX = re.compile(_DOT_SPELLED, re.I)
# Where the signs are weak (a spaced @ or dot, an ideographic full stop, prose's own marks), the
# top-level domain must be a common one: "I'm @ home . ok", "cc @ team。Thanks" are not mail.
_WEAK_DOT = re.compile(r"\s\.|\.\s|[。｡]")
_COMMON_TLD = frozenset("com net org edu gov mil io co ai dev app info biz xyz top cn uk de jp fr ru br au ca nl se "
                        "ch kr tw hk sg eu pl dk fi cz es it nz za mx ar ie at be".split())


# A word of a sentence before a spaced @ is no local part: "Emails from @acme.com go to the priority
# inbox", "anything sent to @example.org bounces" name a domain.
_NOT_LOCAL = frozenset("from to for by with via on in of and or all any cc bcc at is are was the a an email emails mail "
                       "domain domains ending ends end users user addresses address sent send forward forwarded".split())


def _hidden_ok(m: re.Match) -> bool:
    at = m.group("at")
    if at.strip() in ("@", "＠") and at != at.strip() and m.string[m.start() : m.start("at")].lower() in _NOT_LOCAL:
        return False
    domain = m.string[m.end("at") : m.start("tld")]
    word_at = at.strip().lower() == "at"
    if word_at and not _DOT_SPELLED_RX.search(domain):
        return False
    symbol_at = at.strip() in ("@", "＠")
    weak = (symbol_at and at != at.strip()) or _WEAK_DOT.search(domain)
    if symbol_at and not weak and "．" not in domain and not _DOT_SPELLED_RX.search(domain) \
            and "&" not in domain:
        return False  # a plain address: the first pattern's
    tld = m.group("tld").lower()
    return tld not in _FILE_EXT and (not weak or tld in _COMMON_TLD)


_HIDDEN_AT = ("%40", "&#", "&commat;", "at]", "at)", "at}", "at>", " at ", "＠")
# With a plain @, the second pattern is worth running only where something else is hidden right
# after it: a spaced @, a bracketed, spaced, spelled or ideographic dot (most texts with an @
# hold a plain address, and the second pattern would double their cost).
_HIDDEN_WITH_AT = re.compile(r"@(?:\s|(?<=\s@)|[^\s@]{0,80}?(?:\.[\])}>]|\s+\.|[．。｡]|\s+dot\b|&period;))")


def _email(node, ctx: Ctx):
    for m in _EMAIL.finditer(ctx.text, node.start, node.end):
        # git@host:org/repo (an SSH remote) names a service account, not a person
        if m.group(1).lower() not in _FILE_EXT and not ctx.text.startswith("git@", m.start()):
            yield m.span()
    low = ctx.lower
    if not (any(w in low for w in _HIDDEN_AT) or ("@" in low and _HIDDEN_WITH_AT.search(low) is not None)):
        return  # most texts hold no address at all, most addresses are plain
    pos = node.start
    while (m := _EMAIL_HIDDEN.search(ctx.text, pos, node.end)) is not None:
        # A refused match is cut back at its last dot before the next start is tried: "jane @
        # example . org. Thanks" is the address up to org (and a scan that stepped past a
        # refused match would miss the address inside it: "him at john.doe[at]gmail[.]com").
        k = m
        while k is not None and not _hidden_ok(k):
            k = _EMAIL_HIDDEN.match(ctx.text, m.start(), k.start("dot"))
        if k is None:
            pos = m.start() + 1
        else:
            yield k.span()
            pos = k.end()


register(Rule(
    id="pii.email", category=PII, sensitivity=CONFIDENTIAL, placeholder="[EMAIL]", risk=0.5,
    binds=(DOC,), find=_email,
    triggers=("@", "＠"),
    itriggers=("%40", "&#", "&commat;", "[at]", "(at)", "{at}", "<at>", "[ at ]", "( at )", " dot ", "[dot]", "(dot)"),
    reason="e-mail address",
    origin="WHATWG HTML 'valid e-mail address', letter TLD required; URL/HTML-encoded and spelled @ as address "
           "obfuscation writes it",
))

# Bank cards: 13-19 digits (ISO/IEC 7812) with a Luhn check digit (stdnum.luhn). Luhn alone
# passes one random number in ten (a 13-digit millisecond timestamp, an order number), so a
# card also needs either card words nearby, or a known IIN range AND the printed grouping.
_CARD = re.compile(r"(?<![0-9A-Za-z.\-])[0-9](?:[ \-]?[0-9]){12,18}(?![0-9A-Za-z]|\.[0-9])", re.ASCII)
# Grouped with dots, slashes or underscores ("4111.1111.1111.1111", what some forms and receipts
# print), or spaced or typographic dashes ("4111 — 1111 — 1111 — 1111"): the same card, counted
# only with card words nearby (a dotted run is a version too). A pattern of its own, so the
# common pattern above stays as cheap on digit-heavy text (logs) as it was.
_CARD_ODD = re.compile(r"(?<![0-9A-Za-z.\-/_])[0-9]{4}([./_]| ?[\u2010-\u2015\u2212] ?| - ?|- )[0-9]{4,6}\1[0-9]{4,5}"
                       r"(?:\1[0-9]{1,7})?(?![0-9A-Za-z]|[./_][0-9])", re.ASCII)
_CARD_TRIGGER = r"\d[\d \-]{5,}\d|\d{4}[./_]\d{4}|\d{4} ?" "[\u2010-\u2015\u2212]" r" ?\d{4}"  # the dashes as characters: RE2 reads no \u
_GROUPED = re.compile(r"^(?:[0-9]{4}([ \-])[0-9]{4}\1[0-9]{4}\1[0-9]{4}(?:\1?[0-9]{1,3})?|[0-9]{4}([ \-])[0-9]{6}\2[0-9]{4,5}"
                      r"|[0-9]{6}([ \-])[0-9]{13})$")
# IIN ranges by brand (ISO/IEC 7812 registry as summarised in Wikipedia "Payment card number"):
# Visa 4; Mastercard 51-55, 2221-2720; Amex 34, 37; Discover 6011, 644-649, 65; UnionPay 62;
# JCB 3528-3589; Diners 300-305, 36, 38-39; Mir 2200-2204; Maestro 5018, 5020, 5038, 5893, 6304, 6759, 6761-6763.
_IIN = re.compile(r"^(?:4|5[1-5]|2(?:22[1-9]|2[3-9][0-9]|[3-6][0-9]{2}|7[01][0-9]|720)|3[47]|6011|64[4-9]|65|62"
                  r"|35(?:2[89]|[3-8][0-9])|30[0-5]|3[689]|220[0-4]|50(?:18|20|38)|5893|6304|6759|676[1-3])")
_CARD_WORDS = tuple(words(w) for w in (  # as ``window`` reads them: "ec-karte" is "ec karte" there
    "card", "credit", "debit", "visa", "mastercard", "amex", "unionpay", "cvv", "cvc", "expir", "exp ",
    "卡号", "银行卡", "信用卡", "借记卡", "储蓄卡", "银联", "卡", "账号", "帐号", "账户", "account no", "acct",
    # the same words in other languages: crédito and débito are not "credit", "debit"
    "crédit", "débit", "tarjeta", "carte", "kredit", "bankkarte", "girokarte", "ec-karte", "cartão", "carta di", "карт",
    "カード", "카드", "karty", "karta", "kortnummer", "kreditkort", "bankkort", "kart numara", "kredi kart", "kart no",
    "số thẻ", "thẻ tín dụng", "thẻ ngân hàng"))
# Words too short or too common to count anywhere in the window count right before the number:
# "my cc is 4111...", "cc# 4111...", "pay with 5555...", "charged to 4111..." (not "cc: bob@...",
# "pay order 4111...": an order number is paid too); "pan" (primary account number) as a key.
_CARD_LEAD = re.compile(r"(?:\b(?:cc|pan)\s*(?:#|no\.?|num(?:ber)?|is|:)?|\b(?:pay|paid|paying|charge|charged|bill|billed)\s+"
                        r"""(?:it\s+|this\s+)?(?:with|using|via|by|on|to)(?:\s+(?:my|the|his|her|your|card))?)[\s"'=]*:?[\s"']*$""")


# Where a card number is used rather than named ("use 4111111111111111 for checkout"): counted for a
# card-length number of a known IIN only (an order or payment id passes Luhn one time in ten).
_PAYMENT_WORDS = tuple(words(w) for w in ("checkout", "check out", "payment", "billing"))


def _card_context(ctx: Ctx, start: int, end: int, digits: str = "") -> bool:
    near = window(ctx, start, end, 30, 20)
    if any(w in near for w in _CARD_WORDS) or _CARD_LEAD.search(lead(ctx.text, start, 30, ctx.cache)) is not None:
        return True
    return len(digits) in (15, 16) and _IIN.match(digits) is not None and any(w in near for w in _PAYMENT_WORDS)


def _card(node, ctx: Ctx):
    from stdnum import luhn

    for m in _CARD.finditer(ctx.text, node.start, node.end):
        raw, end = m.group(), m.end()
        digits = raw.replace(" ", "").replace("-", "")
        if not luhn.is_valid(digits) and len(raw) > 19 and _GROUPED.match(raw[:19]):
            raw, end = raw[:19], m.start() + 19  # "4111 1111 1111 1111 123": a grouped card, then a CVV
            digits = raw.replace(" ", "").replace("-", "")
        if not (13 <= len(digits) <= 19) or not luhn.is_valid(digits):
            continue
        if (_IIN.match(digits) and _GROUPED.match(raw)) or _card_context(ctx, m.start(), end, digits):
            yield m.start(), end
    for m in _CARD_ODD.finditer(ctx.text, node.start, node.end):
        digits = re.sub(r"\D", "", m.group())
        if 13 <= len(digits) <= 19 and luhn.is_valid(digits) and _card_context(ctx, m.start(), m.end()):
            yield m.span()


register(Rule(
    id="pii.bank_card", category=PII, sensitivity=CONFIDENTIAL, placeholder="[BANK_CARD]", risk=0.8,
    binds=(DOC,), find=_card, trigger=found(_CARD_TRIGGER),
    reason="13-19 digit card number, Luhn-valid, with card context or a known IIN and card grouping",
    origin="ISO/IEC 7812 lengths and IIN ranges; Luhn from python-stdnum stdnum.luhn",
))

# One-time codes only in context: 4-8 digits bound to a code word in the same sentence. Dates
# ("2024年") are not codes. The code is looked for around each code word, not by one scan of
# the sentence: "Order 4821: your verification code is 739215" has a number on either side,
# and a scan that took "4821 ... code" as the pair would step past the real code after it.
# Read in the text with underscores as spaces ("verification_code=739215"); camelCase keys
# ("verificationCode") lower to one word, so a space is optional.
_OTP_WORDS = (r"验证码|校验码|动态码|短信码|确认码|动态密码|otp|one[- ]?time ?(?:code|password|passcode|pin)|"
              r"verification ?code|security ?code|login ?code|auth(?:entication)? ?code|2fa ?code|sms ?code|passcode|"
              r"código de (?:verificación|seguridad)|bestätigungscode|sicherheitscode|code de (?:vérification|sécurité)|"
              r"認証コード|確認コード|인증 ?번호|인증 ?코드")
# "is your code": a bare "code" is a code word only so bound ("739215 is your code").
# "Your Uber code: 4829", "Your WhatsApp code is 482-913": a service's name between "your" and "code"
# (not a code of another kind: "your zip code: 94107", "your booking code is ...").
_NOT_OTP_KIND = ("zip|postal|post|area|country|promo|promotional|discount|coupon|referral|invite|invitation|error|status|"
                 "source|qr|bar|dress|gift|voucher|sort|swift|tax|product|course|booking|confirmation|reservation|access|"
                 "door|gate|alarm|lock|safe|garage|entry|building|ticket|order|tracking|airport|airline|language|region|"
                 "currency|class|fare|seat|room|house|dial|locker|parking|event|exam|test|sample|share|color|colour|"
                 "country|iso|hs|naics|sic|zip\\+4|reference|ref|member|membership|customer|account|branch|bank|routing")
_OTP_WORD = re.compile(rf"(?:{_OTP_WORDS})|(?<=is your )code\b|(?<=\byour )(?!(?:{_NOT_OTP_KIND})\b)[a-z][\w.\-]{{1,20}} code\b")
# (a six-digit code as apps show it, in two groups: "2FA code: 118 223", "code 482-913")
_OTP_AFTER = re.compile(r"[^\d\n]{0,20}?(?<!\d)(\d{4,8}(?![\d年月日号点时分秒]|[.:/\-]\d)|\d{3}[ \-]\d{3}(?!\d|[.:/\-]\d|[ ]\d))")
# (not the tail of a grouped number: "Zoom meeting ID 912 3456 7890, passcode is on the invite")
# (a service's prefix, "G-482913 is your Google verification code"; a service's name before the word)
_OTP_BEFORE = re.compile(r"(?<![\d.])(?<![\d.]-)(?<!\d )(\d{4,8})(?![\d.\-])([^\d\n]{0,28}?)\Z")
# Between the word and the code: nothing but a copula or punctuation ("code is 739215", "验证码是
# 604417", "OTP: 55218"); "code for order 4821" is looser, and yields to a number bound before.
_OTP_TIGHT = re.compile(r"[\s:：=#\-–—(（【\[\"'>]*(?:(?:is|was|are|will be|是|为|為|は)[\s:：\"']*)?")
# Before the word, a number counts only bound to it: "482913 is your login code", "604417 是您的
# 验证码", "482913 - login code"; not "订单 88231 的验证码已发送" (the order's code was sent).
_OTP_BOUND = re.compile(r"\b(?:is|as|was|are) (?:your|the|my)\b|是|为|為|你的|您的|^[\s:：,，\-–—(（)）]*$")


# A setting of the code, not a code: a ttl, an expiry, a length, a version, a count or a limit named
# between the code word and the number or in the key that holds the word ("otp_ttl=86400",
# "OTP_EXPIRY_SECONDS=3600", "loginCodeRetryMs: 30000", "securityCodeVersion": 2024), or a unit
# after the number ("OTP valid for 3600 seconds").
_OTP_SETTING = re.compile(r"\b(?:ttl|expiry|expires?|expiration|exp|lifetime|seconds?|secs?|ms|millis(?:econds)?|"
                          r"minutes?|mins?|hours?|retry|retries|length|len|version|ver|count|limit|max|min|attempts?|"
                          r"tries|timeout|window|interval|digits|size|since|duration|delay|cooldown|age|period|rate)\b")
# (a count, "the OTP flow handles 200 400 requests per day"; a factory default, "security code 1234 was the default")
_OTP_UNIT = re.compile(r"[ \t]*(?:s|sec|secs|seconds?|ms|millis\w*|minutes?|mins?|m|hours?|hrs?|h|days?|d|attempts?|tries|"
                       r"retries|digits?|chars?|characters|requests?|users?|calls?|messages?|logins?|sign-?ins?|"
                       r"transactions?|codes|times|people|customers?|accounts?|"
                       r"(?:(?:is|was)[ \t]+)?(?:the[ \t]+|a[ \t]+)?(?:factory[ \t]+)?default|by[ \t]+default)\b")
_IDENT_CHAR = re.compile(r"[A-Za-z0-9_.\-]")


def _otp_setting(ctx: Ctx, word_start: int, num_start: int, num_end: int) -> bool:
    ks = word_start
    while ks > 0 and _IDENT_CHAR.match(ctx.text[ks - 1]):
        ks -= 1
    return _OTP_SETTING.search(words(ctx.text[ks:num_start])) is not None or _OTP_UNIT.match(ctx.text, num_end) is not None


# No code word, the number used to get in: "Use 482913 to log in to Slack", "enter 604-417 to verify
# your account" (a verification of anything else, "enter 1000 to confirm the amount", is no code).
_OTP_USE = re.compile(r"\b(?:use|enter|type|input|key in)[ \t]+(\d{4,8}|\d{3}[ \-]\d{3})[ \t]+to[ \t]+"
                      r"(?:log[ \t]*(?:in|on)|login|sign[ \t]*(?:in|on)|(?:verify|confirm)[ \t]+(?:your|it['’]s[ \t]+you))\b")

# A code bound to the site that sent it, as a text message ends for the browser to fill it in
# ("@example.com #482913", the WebOTP format; Apple's "#482913 %apple.com", a site's ending after
# the "%": "%discount.applied" is none): a one-time code wherever that text writes the number,
# with or without a code word ("Apple ID code: 482913").
_WEB_OTP = re.compile(r"(?:(?<![\w.])@[a-z0-9\-]+(?:\.[a-z0-9\-]+)+[ \t]+#(\d{4,8})"
                      r"|(?<![\w#])#(\d{4,8})[ \t]+%[a-z0-9\-]+(?:\.[a-z0-9\-]+)*\.(?:[a-z]{2,3}|app|dev|info|cloud))(?!\w|\.\w)")


def _otp(node, ctx: Ctx):
    low, seen = ctx.cache.get("snake_lower"), -1
    if low is None:  # the same length as the text: spans unchanged
        low = ctx.cache["snake_lower"] = ctx.lower.replace("_", " ")
    used = [m.span(1) for m in _OTP_USE.finditer(low, node.start, node.end)]
    for m in _WEB_OTP.finditer(low, node.start, node.end):  # the code bound to a site: each time it is written
        code = m.group(1) or m.group(2)
        used += [c.span() for c in re.finditer(rf"(?<!\d){code}(?!\d)", low)]
    yield from used
    for w in _OTP_WORD.finditer(low, node.start, node.end):
        after = _OTP_AFTER.match(low, w.end(), node.end)
        if after and _otp_setting(ctx, w.start(), after.start(1), after.end(1)):
            after = None
        before = _OTP_BEFORE.search(low, max(node.start, w.start() - 37), w.start())
        if after and _OTP_TIGHT.fullmatch(low, w.end(), after.start(1)):
            span = after.span(1)
        elif before and _OTP_BOUND.search(before.group(2)):
            span = before.span(1)
        elif after:
            span = after.span(1)
        else:
            continue
        if span[0] > seen and span not in used:  # one number read by two words ("OTP 1234 verification code") once
            seen = span[0]
            yield span


register(Rule(
    id="pii.otp", category=PII, sensitivity=CONFIDENTIAL, placeholder="[OTP]", risk=0.7,
    binds=(SENTENCE, KV), find=_otp, guard=found(r"\d{4}|\d{3}[ \-]\d{3}"),
    itriggers=("验证码", "校验码", "动态码", "短信码", "确认码", "动态密码", "otp", "one-time", "one time", "onetime", "code",
               "código", "認証コード", "確認コード", "인증", "to log", "to login", "to sign", "to verify", "to confirm", " #"),
    reason="4-8 digit one-time code next to a code word in the same sentence or key-value pair",
    origin="wording of SMS/OTP messages (zh: 验证码/校验码/动态码; en: verification code, OTP)",
))

# IPv4 addresses are personal data when they are someone's (home, my, user): a bare address
# in a log or a version string is not. Octets bounded as in detect-secrets' IPPublicDetector.
IPV4 = re.compile(r"(?<![\w.])(?:(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])\.){3}"
                  r"(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])(?![\w]|\.[0-9])", re.ASCII)
_IP_SHAPE = r"\d\.\d{1,3}\.\d{1,3}\.\d"
_PERSONAL = re.compile(r"\b(?:my|our|your|his|her|their|home|house|personal|user'?s?|customer'?s?)\b|"
                       r"我|我们|你的|您的|他的|她的|家里|家庭|家中|个人|住处|用户|客户")


def _ipv4(node, ctx: Ctx):
    for m in IPV4.finditer(ctx.text, node.start, node.end):
        if _PERSONAL.search(window(ctx, m.start(), m.end(), 40, 10)):
            yield m.span()


register(Rule(
    id="pii.ipv4_personal", category=PII, sensitivity=INTERNAL, placeholder="[IPV4]", risk=0.4,
    binds=(SENTENCE,), find=_ipv4, trigger=found(_IP_SHAPE),
    reason="IPv4 address in a personal context (my/home/user, 我的/家里/用户)",
    origin="GDPR recital 30 (online identifiers); octet grammar as in detect-secrets IPPublicDetector",
))

# IPv6 addresses, as IPv4's: someone's only in a personal context. A candidate is read by the
# ipaddress module (a clock "12:30:45" or a MAC "00:1a:2b:3c:4d:5e" is not an address); the
# loopback, the unspecified address and a short one ("ab::cd", "fe80::1") are no one's line.
_IPV6 = re.compile(r"(?<![\w:.])(?:[0-9A-Fa-f]{0,4}:){2,7}[0-9A-Fa-f]{0,4}(?![\w:]|\.[0-9])", re.ASCII)
_IPV6_SHAPE = r"[0-9A-Fa-f]:[0-9A-Fa-f]{0,4}:"


def _ipv6(node, ctx: Ctx):
    for m in _IPV6.finditer(ctx.text, node.start, node.end):
        groups = [g for g in m.group().split(":") if g]
        if len(groups) < 3 or sum(map(len, groups)) < 8:
            continue
        try:
            ip = ipaddress.IPv6Address(m.group())
        except ValueError:
            continue
        if not (ip.is_loopback or ip.is_unspecified) and _PERSONAL.search(window(ctx, m.start(), m.end(), 40, 10)):
            yield m.span()


register(Rule(
    id="pii.ipv6_personal", category=PII, sensitivity=INTERNAL, placeholder="[IPV6]", risk=0.4,
    binds=(SENTENCE,), find=_ipv6, trigger=found(_IPV6_SHAPE, ascii=True),
    reason="IPv6 address in a personal context (my/home/user, 我的/家里/用户)",
    origin="GDPR recital 30 (online identifiers); RFC 4291 text forms, read by Python's ipaddress",
))

# US Social Security numbers: 3-2-4 digits. Dashed (how an SSN is written) it counts by itself;
# spaced or run together only with SSN words nearby (nine digits alone are anything). stdnum.us.ssn
# refuses what the SSA never issues (area 000, 666, 900-999; group 00; serial 0000) and the
# numbers published as examples. Redacted, not blocked: a 3-2-4 order number may look the same.
_SSN = re.compile(r"(?<![\w\-.])([0-9]{3})([ \-.]?)([0-9]{2})\2([0-9]{4})(?![\w\-]|\.[0-9])", re.ASCII)
_SSN_WORDS = ("ssn", "social security", "ss#", "ss #", "ss no", "taxpayer", "itin", "tin ")
# ITINs (the IRS's taxpayer numbers for those without an SSN) share the shape in area 9xx, which
# no SSN has; stdnum.us.itin knows their group ranges. Only beside ITIN words, dashed or not.
_ITIN_WORDS = re.compile(r"\b(?:itin|individual taxpayer|taxpayer id\w*|tin)\b")
# "Tax ID" names a business's EIN (nine digits, written 2-7) at least as often as a person's SSN or
# ITIN: it counts for a number written 3-2-4 ("tax ID 123 45 6789") or a valid ITIN, and not where
# a business is named on the value's line or before it (a vendor, a company, LLC, Inc, Ltd, EIN).
_TAX_ID = re.compile(r"\btax id\b")
_BUSINESS = re.compile(r"\b(?:llc|l\.l\.c|inc|incorporated|ltd|limited|corp|corporation|company|companies|co|vendors?|"
                       r"suppliers?|business|employer|ein|fein|duns|gmbh|plc|llp|lp|s\.a|bv|pty)\b")


def _business(ctx: Ctx, start: int, end: int) -> bool:
    le = ctx.text.find("\n", end)
    return _BUSINESS.search(lead(ctx.text, start, 60, ctx.cache) + " " + words(ctx.text[end : le if le != -1 else None])) \
        is not None


def _ssn(node, ctx: Ctx):
    from stdnum.us import itin, ssn

    for m in _SSN.finditer(ctx.text, node.start, node.end):
        number = m.group(1) + m.group(3) + m.group(4)
        win = window(ctx, m.start(), m.end(), 40, 10)
        if number[0] == "9":
            if itin.is_valid(number) and (_ITIN_WORDS.search(win) or _TAX_ID.search(win)
                                          and not _business(ctx, m.start(), m.end())):
                yield m.span()
            continue
        if m.group(2) != "-" and not any(w in win for w in _SSN_WORDS) and not (
                m.group(2) and _TAX_ID.search(win) and not _business(ctx, m.start(), m.end())):
            continue
        if ssn.is_valid(number):
            yield m.span()


register(Rule(
    id="pii.ssn_us", category=PII, sensitivity=CONFIDENTIAL, placeholder="[SSN]", risk=0.8,
    binds=(DOC,), find=_ssn, trigger=found(r"\d{3}[ \-.]?\d{2}[ \-.]?\d{4}"),
    reason="US Social Security number (3-2-4 dashed, or nine digits next to SSN words), as the SSA issues them, "
           "or an ITIN next to ITIN words",
    origin="SSA numbering (area, group, serial); validity by python-stdnum stdnum.us.ssn and stdnum.us.itin; "
           "Presidio UsSsnRecognizer",
))

# IBANs: country code, two check digits, up to 30 letters and digits, printed in groups of four.
# stdnum.iban checks the country's length and the ISO 7064 mod 97-10 check digits, so a run that
# only looks like one passes. The longest run is tried first, then shorter ones (a word in
# capitals after it is not part of it).
_IBAN = re.compile(r"(?<![A-Za-z0-9])[A-Z]{2}[0-9]{2}(?:[ \-]?[A-Z0-9]){11,30}(?![a-z0-9])", re.ASCII)
# Typed in lower or mixed case (de89 3704 ..., what a form or a phone keyboard gives) it is the
# same account; only next to the word IBAN, since a lower-case hex id can start like one.
_IBAN_ANY = re.compile(r"(?<![A-Za-z0-9])[A-Za-z]{2}[0-9]{2}(?:[ \-]?[A-Za-z0-9]){11,30}(?![A-Za-z0-9])", re.ASCII)


def _iban(node, ctx: Ctx):
    from stdnum import iban

    worded = "iban" in ctx.lower[node.start : node.end]
    for rx in (_IBAN, _IBAN_ANY) if worded else (_IBAN,):
        for m in rx.finditer(ctx.text, node.start, node.end):
            raw = m.group()
            if rx is _IBAN_ANY and (raw.isupper() or "iban" not in window(ctx, m.start(), m.end(), 40, 5)):
                continue  # upper case: the first pattern's
            while len(raw.replace(" ", "").replace("-", "")) >= 15:
                if iban.is_valid(raw):
                    yield m.start(), m.start() + len(raw)
                    break
                raw = raw[:-1].rstrip(" -")


register(Rule(
    id="pii.iban", category=PII, sensitivity=CONFIDENTIAL, placeholder="[IBAN]", risk=0.8,
    binds=(DOC,), find=_iban, trigger=found(r"[A-Z]{2}[0-9]{2}[ \-]?[A-Z0-9]{4}", ascii=True), itriggers=("iban",),
    reason="IBAN (country, check digits and account, mod-97 valid)",
    origin="ISO 13616; country lengths and the mod 97-10 check by python-stdnum stdnum.iban; Presidio IbanRecognizer",
))

# UK National Insurance numbers: two letters, six digits, a suffix A-D (HMRC NIM39110). The
# prefix rules are HMRC's (neither letter D, F, I, Q, U or V; O not second; BG, GB, KN, NK, NT, TN
# and ZZ never issued), so the published example QQ 12 34 56 C passes. There is no check digit
# (python-stdnum has no module for it): written in its 2-2-2-2-1 grouping it counts by itself,
# run together only with NI words nearby (a part number can be two letters and six digits).
_NINO = re.compile(r"(?<![A-Za-z0-9])(?!BG|GB|KN|NK|NT|TN|ZZ)[A-CEGHJ-PR-TW-Z][A-CEGHJ-NPR-TW-Z]"
                   r"( ?)[0-9]{2}\1[0-9]{2}\1[0-9]{2}\1[A-D](?![A-Za-z0-9])", re.ASCII)
_NINO_WORDS = ("national insurance", "ni number", "ni no", "nino", "ni#", "nic number", "insurance number")
# Typed in lower case ("my ni number is jg103759a") only next to NI words, as always.
_NINO_ANY = re.compile(_NINO.pattern, re.ASCII | re.I)


def _nino(node, ctx: Ctx):
    for m in _NINO.finditer(ctx.text, node.start, node.end):
        if m.group(1) == " " or any(w in window(ctx, m.start(), m.end(), 40, 10) for w in _NINO_WORDS):
            yield m.span()
    if any(c.islower() for c in ctx.text[node.start : node.end]):
        for m in _NINO_ANY.finditer(ctx.text, node.start, node.end):
            if not m.group().isupper() and any(w in window(ctx, m.start(), m.end(), 40, 10) for w in _NINO_WORDS):
                yield m.span()


register(Rule(
    id="pii.nino_gb", category=PII, sensitivity=CONFIDENTIAL, placeholder="[NINO]", risk=0.8,
    binds=(DOC,), find=_nino, trigger=found(r"[A-Z]{2} ?\d{2} ?\d{2} ?\d{2} ?[A-D]", ascii=True),
    itriggers=("national insurance", "nationalinsurance", "ni number", "ni_number", "ni no", "nino"),
    reason="UK National Insurance number (HMRC prefix rules; grouped, or next to NI words)",
    origin="HMRC National Insurance Manual NIM39110 (format and unissued prefixes); Presidio UkNinoRecognizer",
))

# Passport numbers have no check digit outside the MRZ and no common shape (US 9 digits, UK 9,
# Germany C01X00T47, China E12345678, France 12AB34567), so a number counts only right after a
# passport word: 6-9 letters and digits, at least 5 digits (not "passport photo", "passport office").
# Between the word and the number only what a label or a sentence puts there: a number word, a
# copula, punctuation, a country in brackets ("Passport (US): ...", "passport number is: ...",
# "Her passport, number ..., expires", "número de pasaporte es ...", "passport_number": "...").
_PASSPORT_WORD = (r"(?:passport|travel document|护照|護照|パスポート|reisepass|passnummer|pasaporte|passeport|passaport[oe]"
                  r"|паспорт[а-я]*|여권)")
# (a word in Latin or Cyrillic letters ends where letters do: "no" is not the start of "nothing"; a
# Chinese, Japanese or Korean one may touch the number, "护照号码是E12345678")
_PASSPORT_GAP = (r"(?:[ \t]*(?:[\"'`<>:：=#№\-–—,.]|\((?![\s\d\-–/]*\))[^)\n]{0,20}\)|(?:number|nummer|numéro|número|numero|num|nr|no|id"
                 r"|is|was|are|'s|’s|est|es|ist|lautet|è|é|de|do|da|del|du|то|номер)(?![A-Za-z])"
                 r"|是|为|為|は|号码|號碼|号|號|番号|번호|는|은)){0,8}")
# A bracket holding only digits is a year, not a country ("Passport (2019): 1234567 issued"). The
# value may stand on the line below a full label, one that names the number ("Passport Number\n
# X1234567", "Passport No.\nX1234567"); a bare "Passport" line is a heading.
_PASSPORT = re.compile(rf"{_PASSPORT_WORD}(?:[ \t]*\n[ \t]*(?=number|no\b|nr\b|#|nummer))?({_PASSPORT_GAP})"
                       r"([ \t]*\r?\n)?[ \t]*([A-Z0-9]{6,9}|[0-9]{3} [0-9]{3} [0-9]{3})(?![A-Za-z0-9])", re.I)
_PASSPORT_LABEL = re.compile(r"(?<![A-Za-z])(?:number|nummer|numéro|número|numero|num|nr|no)(?![A-Za-z])|#|№|号码|號碼|番号|번호|номер",
                             re.I)
_LOWER_PASSPORT = re.compile(r"[a-z]{1,2}[0-9]+")  # typed in lower case: a letter or two, then digits ("k1234567")


# A passport's or an identity card's machine-readable zone (ICAO Doc 9303): the document number,
# the date of birth and the expiry each with its 7-3-1 check digit (python-stdnum has no MRZ
# check), the name line above it taken with it. TD3 (passports: two lines of 44), TD1 (cards: three of 30).
_MRZ_VALUES = {c: i for i, c in enumerate("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ")} | {"<": 0}
_TD3 = re.compile(r"(?:^[ \t]*P[A-Z<][A-Z<]{3}[A-Z<]{39}[ \t]*\r?\n[ \t]*)?"
                  r"(?<![A-Z0-9<])([A-Z0-9<]{9})([0-9])[A-Z<]{3}([0-9]{6})([0-9])[MFX<]([0-9]{6})([0-9])"
                  r"([A-Z0-9<]{14})([0-9<])([0-9])(?![A-Z0-9<])", re.M)
_TD1 = re.compile(r"(?<![A-Z0-9<])[IAC][A-Z<][A-Z<]{3}([A-Z0-9<]{9})([0-9])[A-Z0-9<]{15}[ \t]*\r?\n[ \t]*"
                  r"([0-9]{6})([0-9])[MFX<]([0-9]{6})([0-9])[A-Z<]{3}[A-Z0-9<]{11}[0-9]"
                  r"(?:[ \t]*\r?\n[ \t]*[A-Z<]{30}(?![A-Z0-9<]))?")
_MRZ_HINT = r"[0-9]{7}[MFX<][0-9]{7}"  # the dates of birth and expiry, each with its check digit, the sex between
_MRZ_HINT_RX = re.compile(_MRZ_HINT)


def _mrz_ok(field: str, check: str) -> bool:
    return check.isdigit() and sum(_MRZ_VALUES[c] * (7, 3, 1)[i % 3] for i, c in enumerate(field)) % 10 == int(check)


def _mrz(text: str, start: int, end: int):
    for m in _TD3.finditer(text, start, end):
        doc, dc, born, bc, exp, ec, own, oc, whole = m.groups()
        if _mrz_ok(doc, dc) and _mrz_ok(born, bc) and _mrz_ok(exp, ec) \
                and (_mrz_ok(own, oc) or oc == "<" and own == "<" * 14) \
                and _mrz_ok(doc + dc + born + bc + exp + ec + own + oc, whole):
            yield m.span()
    for m in _TD1.finditer(text, start, end):
        doc, dc, born, bc, exp, ec = m.groups()
        if _mrz_ok(doc, dc) and _mrz_ok(born, bc) and _mrz_ok(exp, ec):
            yield m.span()


def _passport(node, ctx: Ctx):
    if _MRZ_HINT_RX.search(ctx.text, node.start, node.end):
        yield from _mrz(ctx.text, node.start, node.end)
    view = ctx.cache.get("snake")
    if view is None:  # "passport_number" read as "passport number" (same length: spans unchanged)
        view = ctx.cache["snake"] = ctx.text.replace("_", " ")
    for m in _PASSPORT.finditer(view, node.start, node.end):
        if m.group(2) is not None and not _PASSPORT_LABEL.search(m.group(0), 0, m.start(2) - m.start()):
            continue  # a value on the next line only below a full label
        v = m.group(3)
        if sum(c.isdigit() for c in v) >= 5 and not v.isalpha() and (not v.islower() or _LOWER_PASSPORT.fullmatch(v)):
            yield m.span(3)


register(Rule(
    id="pii.passport", category=PII, sensitivity=CONFIDENTIAL, placeholder="[PASSPORT]", risk=0.8,
    binds=(DOC,), find=_passport,
    itriggers=("passport", "travel document", "护照", "護照", "パスポート", "reisepass", "passnummer", "pasaporte", "passeport",
               "passaport", "паспорт", "여권"), trigger=found(_MRZ_HINT, ascii=True),
    reason="passport number (6-9 letters and digits) right after a passport word, or a passport's or an identity "
           "card's machine-readable zone with valid check digits",
    origin="ICAO Doc 9303 document numbers (up to 9 characters) and MRZ check digits; context approach of Presidio "
           "UsPassportRecognizer",
))
