"""Phone numbers of the main regions, international and national formats, by Google's
libphonenumber (the ``phonenumbers`` port): which digit strings are numbers, and how a region
groups them, is its metadata, not ours.

A digit run is a phone number only when it is written as one. Numbers in prose and logs are
mostly not phones (invoices, order ids, durations, epoch times), so a candidate counts when:

- it carries an international prefix (``+44 20 7946 0958``, ``0044 20 ...``) and is a valid
  number (any region);
- or it is grouped as its region writes it (``(212) 555-0199``, ``020 7946 0958``:
  libphonenumber's STRICT_GROUPING leniency), with at least one separator;
- or a phone word stands right before it ("call", "tel", "电话", ...) and it is a valid number.

Chinese mobile numbers stay with ``pii.phone_cn`` (its own placeholder); this rule skips them.
The cheap candidate regex runs first; libphonenumber only sees the few spans it finds.
"""

from __future__ import annotations

from .lazy import re
from functools import lru_cache

from ..tree import DOC
from .base import CONFIDENTIAL, PII, Ctx, Rule, found, lead, register, words
from .national_id import REF_WORDS
from .pii import IPV4, PHONE_CN

# The regions whose national formats are recognised (NANP's metadata, "US", covers Canada;
# Spain, Italy, Brazil, Mexico, the Netherlands and Korea since sitting 30).
# International numbers (with + or 00) are recognised for every region.
REGIONS = ("US", "GB", "DE", "FR", "IN", "JP", "AU", "CN", "ES", "IT", "BR", "MX", "NL", "KR")

# A phone-shaped span: an optional +/00 prefix, an optional (area code), then digit groups
# with at most one separator between them; not glued to a word, a decimal or a longer run.
# A German area code may stand before a slash ("0171/1234567", "0171 / 123 45 67").
CANDIDATE = re.compile(
    r"(?<![\w.+/:#-])(?:\+|00)?(?:0\d{1,4} ?/ ?|\d{1,4}[ .\-]?)?(?:\(\d{1,5}\)[ .\-]?)?\d{1,15}(?:[ .\-]\d{1,8}){0,5}"
    r"(?![\w]|[.\-:/]\d)", re.ASCII)
_ONE = re.compile(r"(?<!\d)\d(?!\d)")  # one-digit groups: a country code, a trunk 0, not "1 2 3 4 5 6 7"
_SEP = re.compile(r"[ .\-()]")
# A UPS tracking number (1Z, six characters of shipper, two of service, eight digits), printed in
# groups: its tail "01 2345 6784" is grouped like a UK number, and is none.
_UPS = re.compile(r"(?<![A-Za-z0-9])1Z(?: ?[0-9A-Z]){16}(?![A-Za-z0-9])", re.ASCII)
# A US ZIP+4 ("94103-1234") is a valid Spanish landline to libphonenumber: a phone only after a phone word.
_ZIP4 = re.compile(r"\d{5}-\d{4}")
_YMD = re.compile(r"^(?:19|20)\d\d[.\-](?:0?[1-9]|1[0-2])[.\-](?:0?[1-9]|[12]\d|3[01])$")  # a date, not a number
# Read in ``lead``'s words (a key's "phone_number", "PHONE_NUMBER", "phoneNumber", a CSV column
# headed "phone"), so a value after a JSON or env key counts: {"phone": "...", PHONE_NUMBER=...
_WORDS = re.compile(r"(?:\b(?:call|calls|called|calling|phone|telephone|tel|mobile|cell|cellphone|whatsapp|fax|sms|"
                    r"text me|ring me|reach me|contact|hotline|my number|his number|her number|your number|"
                    r"their number|ph|mob|msisdn|telefon|telefonnummer|rufnummer|handy|handynummer|mobil|mobilnummer|"
                    r"festnetz|téléphone|tél|portable|teléfono|telefono|celular|cellulare|móvil|movil)\b"
                    r"|电话|手机|联系|致电|拨打|電話|携帯|फ़ोन|फोन|मोबाइल)"
                    r"[\s:：.#()\-\"'=>]*(?:(?:me|us|him|her|them|is|at|on|number|no|nr|nummer|ist|est|es|é|è|नंबर|नम्बर)[\s:.\"'=>]*)"
                    r"{0,3}$", re.I)


# A number named as something else right before it is that thing, however it is grouped: a meeting
# id ("Meeting ID: 845 293 1047", "Zoom meeting ID 912 3456 7890"), an order, a ticket, a booking (the
# words national ids yield to). A phone word before it ("call the order line: ...") still counts.
_NAMED_ELSE = re.compile(rf"(?:\b(?:{REF_WORDS}|meeting|webinar|zoom|conference|membership|loyalty)|会议(?:号|id|ID)?|订单号?|单号|预订号|工单号?|发票号?)"
                         r"(?:\s+(?:id|ids|no|nr|number|num|code|#))*[\s:：#=.\-–\"'*]*(?:is\s+)?$")


def libphonenumber():
    """libphonenumber, imported when the first phone-shaped span needs it (30 ms of a start)."""
    import phonenumbers

    return phonenumbers


def _digits(s: str) -> int:
    return sum(c.isdigit() for c in s)


@lru_cache(maxsize=4096)  # a text repeating one look-alike pays for it once
def _international(raw: str, loose: bool = False) -> bool:
    """A valid number; with ``loose``, one of a possible length for its country code: the ranges
    kept for examples and fiction (UK's +44 7700 900xxx, NANP's 555) are not valid, and are
    what a user writes to a test."""
    pn = libphonenumber()
    try:
        n = pn.parse("+" + raw[2:] if raw.startswith("00") else raw, None)
    except pn.NumberParseException:
        return False
    return pn.is_valid_number(n) or (loose and pn.is_possible_number(n))


# An epoch time as a bare run: seconds since 1985 (ten digits from 15...) or milliseconds (thirteen
# digits, no leading 0). libphonenumber reads "1733412345" as a UK, German or Indian number with
# its trunk 0 left off; such a run is read only in a region whose numbers need no trunk prefix.
_EPOCH = re.compile(r"1[5-9]\d{8}|[1-9]\d{12}")
# A key naming a time ("called_at", "lastCallTs", "call_time", "updated_on", "CALL_TIMEOUT_MS"):
# its value is a time or a duration, never a phone, whatever phone word the key holds.
_KEY_BEFORE = re.compile(r"([A-Za-z][A-Za-z0-9_\-.]*)[\"']?[ \t]*[:=][ \t]*[\"']?$")
_TIME_WORD = re.compile(r"(?:at|ts|on|epoch|when|since|until|dt|ms|sec|secs|seconds|millis|duration|ttl|\w*time|\w*times|"
                        r"\w*date|\w*stamp)$")


@lru_cache(maxsize=1024)
def _time_key(key: str) -> bool:
    """A key naming a time; "at", "on", "when" only as a compound key's last word ("called_at":
    "Reach me on: ..." is a sentence)."""
    parts = words(key).split()
    return bool(parts) and _TIME_WORD.match(parts[-1]) is not None and (
        len(parts) > 1 or parts[-1] not in ("at", "on", "when", "since", "until"))


@lru_cache(maxsize=256)
def _trunk(region: str) -> str:
    return libphonenumber().PhoneMetadata.metadata_for_region(region).national_prefix or ""


@lru_cache(maxsize=4096)
def _national(raw: str, leniency) -> bool:
    """A valid number of one of REGIONS (a possible one at leniency POSSIBLE), the whole
    candidate (a number found inside a version string such as 10.0.16847.1145 is not a phone)."""
    pn = libphonenumber()
    source = pn.CountryCodeSource
    epoch = _EPOCH.fullmatch(raw) is not None
    for region in REGIONS:
        if epoch and not raw.startswith(_trunk(region)):
            continue
        try:  # parse and validate first: a fifth of the matcher's cost, and most candidates stop here
            n = pn.parse(raw, region, keep_raw_input=True)
        except pn.NumberParseException:
            continue
        # Written nationally: libphonenumber would also read "49961-304" in Germany as +49 961304
        # (a leading country code without its +); only NANP writes its own ("1-415-555-0132").
        national = n.country_code_source == source.FROM_DEFAULT_COUNTRY or (
            n.country_code == 1 and n.country_code_source == source.FROM_NUMBER_WITHOUT_PLUS_SIGN)
        ok = pn.is_possible_number if leniency == pn.Leniency.POSSIBLE else pn.is_valid_number
        if not national or not ok(n):
            continue
        for m in pn.PhoneNumberMatcher(raw, region, leniency=leniency):
            if _digits(m.raw_string) == _digits(raw):
                return True
    return False


def find_phone(text: str, start: int, end: int, cache: dict | None = None):
    """Spans of phone numbers in ``text[start:end]`` (the rule's ``find``, also used on ids)."""
    ups = [u.span() for u in _UPS.finditer(text, start, end)] if "1Z" in text[start:end] else ()
    for m in CANDIDATE.finditer(text, start, end):
        if any(a <= m.start() < b for a, b in ups):
            continue
        raw = m.group()
        n = _digits(raw)
        if not 7 <= n <= 15 or PHONE_CN.fullmatch(raw) or _YMD.match(raw) or len(_ONE.findall(raw)) > 2:
            continue
        if "." in raw and IPV4.fullmatch(raw):  # an IPv4 address ("169.254.169.254"), however a phone it looks
            continue
        if raw.startswith(("+", "00")):
            # Grouped as phones are (three groups, ten digits or more), or after a phone word, a
            # number of a possible length is one: "+44 7700 900461", "Tel: +1 (555) 010-9999".
            if _international(raw) or _international(raw, (n >= 10 and len(_SEP.findall(raw)) >= 2)
                                                       or _WORDS.search(lead(text, m.start(), 24, cache)) is not None):
                yield m.span()
            continue
        key = _KEY_BEFORE.search(text, max(text.rfind("\n", 0, m.start()) + 1, m.start() - 40), m.start())
        if key is not None and _time_key(key.group(1)):
            continue
        before = lead(text, m.start(), 24, cache)
        worded = _WORDS.search(before) is not None
        if not worded and _NAMED_ELSE.search(before) is not None:
            continue
        if not worded and (_SEP.search(raw) is None or _ZIP4.fullmatch(raw)):  # a bare run needs a phone word
            continue
        leniency = libphonenumber().Leniency
        # An area code and a slash is how German numbers were written (DIN 5008's old form), and
        # nothing else is: libphonenumber knows no grouping for what follows, so a valid number will do.
        if _national(raw, leniency.VALID if worded or "/" in raw else leniency.STRICT_GROUPING):
            yield m.span()
        elif worded and _SEP.search(raw) is not None and _national(raw, leniency.POSSIBLE):
            yield m.span()  # grouped, after a phone word: an example range too ("my number is 555-0123")


# Written as NANP writes its numbers: "1-800-555-0199", "(800) 555-0199", "1 (888) 555 0123"
_NANP = re.compile(r"(?:1[ .\-]?)?\(\d{3}\)[ .\-]?\d{3}[ .\-]\d{4}$|1[ .\-]\d{3}[ .\-]\d{3}[ .\-]\d{4}$")


@lru_cache(maxsize=4096)
def _organisation(raw: str) -> bool:
    """A business's own line (toll-free, premium rate, shared cost, a universal access number:
    "+1 800 ...", "1-800-...", "0800 ..."): no one's personal data, so a support line stays as
    written. Written nationally, it must be one in every region where it is a valid number ("030
    1234 5678" is a UK access number and a Berlin landline: a phone)."""
    pn = libphonenumber()
    t = pn.PhoneNumberType
    kinds = []
    for region in (None,) if raw.startswith("+") else ("US",) if _NANP.match(raw) else REGIONS:
        try:
            n = pn.parse(raw, region)
        except pn.NumberParseException:
            continue
        if pn.is_valid_number(n):
            kinds.append(pn.number_type(n) in (t.TOLL_FREE, t.PREMIUM_RATE, t.SHARED_COST, t.UAN))
    return bool(kinds) and all(kinds)


def _phone(node, ctx: Ctx):
    for a, b in find_phone(ctx.text, node.start, node.end, ctx.cache):
        if not _organisation(ctx.text[a:b]):
            yield a, b


_worth = found(r"\d[\d .\-()]{5,}\d")  # seven characters of digits and separators: worth a look


register(Rule(
    id="pii.phone", category=PII, sensitivity=CONFIDENTIAL, placeholder="[PHONE]", risk=0.6,
    binds=(DOC,), find=_phone, trigger=_worth,
    reason="phone number (international prefix, its region's grouping, or a phone word before it)",
    origin="Google libphonenumber via the phonenumbers package (PhoneNumberMatcher, STRICT_GROUPING)",
))
