"""Personal data known by the words around it rather than by a checksum alone: bank account
numbers (with US routing numbers, UK sort codes, Australian BSBs), dates of birth, home
addresses and a home's coordinates, driving licence and health record or insurance numbers, a
car's VIN and number plate. A bare number, date or street is not personal; the same one after
"account number" at a bank, "date of birth" or "I live at" is. Each rule reads what a reader
reads the value after (``lead``: its line, a label above it, its table column's header), so "the
meeting is at 10 Downing Street", "released on 2021-03-14" and "order 12345678" stay as written."""

from __future__ import annotations

from .lazy import re
from datetime import date

from ..tree import DOC
from .base import CONFIDENTIAL, PII, Ctx, Rule, found, has_token, lead, regex_find, register, window

# -- bank accounts ----------------------------------------------------------------------------

# An account number: 6-19 digits (ABA accounts run to 17, Chinese ones to 19; shorter runs are PINs),
# spaces or dashes between groups; not inside a longer word, decimal or id.
_ACCOUNT_NO = re.compile(r"(?<![A-Za-z0-9_.\-/])\d(?:[ \-]?\d){5,18}(?![A-Za-z0-9_\-]|\.\d)")
# What it is read after: an account word, maybe "number", maybe a copula or a colon ("account
# number is", "Acct #:", "a/c no.", "Kontonummer:", "账号："), nothing else between.
_ACCOUNT_LEAD = re.compile(
    r"(?:\baccount|\bacct|\ba/c|\bkonto(?:nummer)?|\bcompte|\bcuenta|\bconta|账号|帳號|帐号|账户|帳戶|口座(?:番号)?|계좌(?:\s*번호)?)"
    r"\.?\s*(?:number|num|no\.?|nr\.?|#|numéro|número|numero|号码|號碼)?(?:\s*(?:is|was|是|为|は))?[\s\"'`=:：#\-]*$")
# ...and a word that makes it a bank's (an "account number" alone may be a phone company's or
# a cloud's). The words that name a bank account by themselves ("Kontonummer", 口座, 계좌) count too.
_BANK_WORDS = re.compile(
    r"\b(?:bank|banking|checking|chequing|savings|routing|sort code|bsb|swift|bic|iban|wire|ach|direct debit|"
    r"direct deposit|deposit|payee|beneficiary|kontonummer|bancaire|bancaria|bancária|bankverbindung)\b"
    r"|银行|銀行|开户|開戶|口座|계좌|은행")
# A US routing number (ABA RTN: nine digits, a weighted check digit, stdnum.us.rtn), a UK sort
# code (2-2-2) and an Australian BSB (3-3), each right after its own name.
_ROUTING = re.compile(r"(?:\brouting|\baba|\brtn)(?:\s*(?:number|num|no\.?|#|code))?(?:\s*(?:is|was))?[\s\"'`=:#\-]*$")
_NINE = re.compile(r"[0-9]{9}")
_SORT_CODE = re.compile(r"(?i:\bsort[\s\-]?code)\s*(?:is|was|:|=|-)?\s*(\d{2}([\- ]?)\d{2}\2\d{2})(?![\w\-])")
_BSB = re.compile(r"(?i:\bbsb)(?:\s*(?:number|no\.?|#))?\s*(?:is|was|:|=|-)?\s*(\d{3}[\- ]?\d{3})(?![\w\-])")


def _near(ctx: Ctx, start: int, end: int) -> str:
    """The text around a number across lines (a record's "Bank details" heading two lines up),
    as ``window`` reads it on the number's own line."""
    return ctx.lower[max(0, start - 80) : end + 60] + " " + window(ctx, start, end, 60, 40)


_SORT_CODE_OR_BSB = (regex_find(_SORT_CODE, 1), regex_find(_BSB, 1))


def _bank_account(node, ctx: Ctx):
    text = ctx.text
    for m in _ACCOUNT_NO.finditer(text, node.start, node.end):
        before = lead(text, m.start(), 40, ctx.cache)
        if _ROUTING.search(before):
            from stdnum.us import rtn  # imported with the first candidate: not a start's cost

            if _NINE.fullmatch(m.group()) and rtn.is_valid(m.group()):
                yield m.span()
            continue
        if _ACCOUNT_LEAD.search(before) and _BANK_WORDS.search(_near(ctx, m.start(), m.end())):
            yield m.span()
    for find in _SORT_CODE_OR_BSB:
        yield from find(node, ctx)


register(Rule(
    id="pii.bank_account", category=PII, sensitivity=CONFIDENTIAL, placeholder="[BANK_ACCOUNT]", risk=0.7,
    binds=(DOC,), find=_bank_account,
    guard=found(r"[0-9]{2}[ \-]?[0-9]{2}[ \-]?[0-9]{2}|[0-9]{3}[ \-][0-9]{3}", ascii=True),
    itriggers=("account", "acct", "a/c", "routing", "aba ", "sort code", "sort-code", "sortcode", "bsb", "konto",
               "compte", "cuenta", "账号", "帳號", "帐号", "账户", "帳戶", "口座", "계좌"),
    reason="bank account number after account words at a bank, a valid US routing number, a UK sort code or an "
           "Australian BSB",
    origin="ABA routing numbers (check digit by python-stdnum stdnum.us.rtn); UK sort codes (Pay.UK) and BSBs "
           "(AusPayNet) by their printed shape; context approach of Presidio's bank recognizers",
))

# -- dates of birth ----------------------------------------------------------------------------

_MONTHS = {m: i for i, ms in enumerate((
    ("january", "jan"), ("february", "feb"), ("march", "mar"), ("april", "apr"), ("may",), ("june", "jun"),
    ("july", "jul"), ("august", "aug"), ("september", "sep", "sept"), ("october", "oct"), ("november", "nov"),
    ("december", "dec")), 1) for m in ms}
_MONTH = "(?:" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_DAY = r"(?P<{}>[0-3]?\d)(?:st|nd|rd|th)?"
# A date with its year, as people write one: 1985-03-14, 14/03/1985, 03/14/85 (a two-digit year
# only after a birth word, as all of these are), 14.03.1985, 14 March 1985, March 14th, 1985,
# 1985年3月14日.
_DATE = re.compile(
    r"(?<![A-Za-z0-9_\-/.])(?:"
    r"(?P<y1>(?:19|20)\d{2})[\-/.](?P<m1>[01]?\d)[\-/.](?P<d1>[0-3]?\d)"
    r"|(?P<a2>[0-3]?\d)(?P<sep>[\-/.])(?P<b2>[0-3]?\d)(?P=sep)(?P<y2>(?:19|20)?\d{2})"
    rf"|{_DAY.format('d3')}(?:\s+of)?\s+(?P<m3>{_MONTH}),?\s+(?P<y3>(?:19|20)\d{{2}})"
    rf"|(?P<m4>{_MONTH})\s+{_DAY.format('d4')},?\s+(?P<y4>(?:19|20)\d{{2}})"
    r"|(?P<y5>(?:19|20)\d{2})\s*年\s*(?P<m5>[01]?\d)\s*月\s*(?P<d5>[0-3]?\d)\s*[日号號]?"
    r")(?![A-Za-z0-9_\-/]|\.\d)", re.I)
# The birth words a date is read after, then at most a copula, "on", a colon: "date of birth:",
# "DOB", "born on", "my birthday is", "出生日期：", "生年月日", "geboren am", "né le".
_BIRTH_LEAD = re.compile(
    r"(?:date\s+of\s+birth|birth\s*date|\bd\.?\s?o\.?\s?b\b\.?|\bborn|\bbirthday|出生日期|出生年月日|出生于|出生於|出生|生日|生年月日"
    r"|誕生日|생년월일|생일|geburtsdatum|\bgeboren|fecha\s+de\s+nacimiento|\bnacid[oa]|date\s+de\s+naissance|\bnée?"
    r"|data\s+di\s+nascita|\bnat[oa]|data\s+de\s+nascimento)"
    r"(?:\s*(?:is|was|on|in|am|le|el|il|em|是|为|為|は))?(?:\s*(?:on|in))?[\s\"'`=:：\-–]*$")


def _calendar(m: re.Match) -> list[date]:
    """The real dates a match can mean (a numeric day and month either way round)."""
    g = m.groupdict()
    if g["y1"]:
        cands = [(g["y1"], g["m1"], g["d1"])]
    elif g["y2"]:
        y = g["y2"] if len(g["y2"]) == 4 else ("19" if int(g["y2"]) > date.today().year % 100 else "20") + g["y2"]
        cands = [(y, g["b2"], g["a2"]), (y, g["a2"], g["b2"])]
    elif g["y3"]:
        cands = [(g["y3"], _MONTHS[g["m3"].lower().rstrip(".")], g["d3"])]
    elif g["y4"]:
        cands = [(g["y4"], _MONTHS[g["m4"].lower().rstrip(".")], g["d4"])]
    else:
        cands = [(g["y5"], g["m5"], g["d5"])]
    out = []
    for y, mo, d in cands:
        try:
            out.append(date(int(y), int(mo), int(d)))
        except ValueError:
            pass
    return out


def _birth_date(node, ctx: Ctx):
    today = date.today()
    for m in _DATE.finditer(ctx.text, node.start, node.end):
        w = _BIRTH_LEAD.search(lead(ctx.text, m.start(), 40, ctx.cache))
        if w is None:
            continue
        # A birthday this year or later is a day to mark, not when someone was born.
        latest = date(today.year - 1, 12, 31) if "birthday" in w.group() else today
        if any(date(1900, 1, 1) <= d <= latest for d in _calendar(m)):
            yield m.span()


register(Rule(
    id="pii.birth_date", category=PII, sensitivity=CONFIDENTIAL, placeholder="[BIRTH_DATE]", risk=0.6,
    # a year, or a numeric date with a two-digit one: every date the rule reads has one of these
    binds=(DOC,), find=_birth_date, guard=found(r"(?:19|20)[0-9]{2}|[0-9][/.\-][0-9]{1,2}[/.\-][0-9]{2}", ascii=True),
    itriggers=("birth", "dob", "d.o.b", "d. o. b", "born", "出生", "生日", "生年月日", "誕生日", "생년월일", "생일",
               "geburt", "geboren", "nacimiento", "nacid", "naissance", "né le", "née le", "nascita", "nato il",
               "nata il", "nascimento"),
    reason="a full date (with its year, a real past day) right after birth words",
    origin="HIPAA Safe Harbor identifiers (dates of birth); context approach of Presidio's DateRecognizer with "
           "birth words",
))

# -- home addresses ---------------------------------------------------------------------------

_SUFFIX = (r"(?:street|st|avenue|ave|road|rd|boulevard|blvd|lane|ln|drive|dr|court|ct|place|pl|terrace|way|close"
           r"|crescent|cres|parkway|pkwy|highway|hwy|square|sq|circle|cir|trail|trl|row|mews|gardens|grove|walk)")
_DIRECTION = r"(?:n|s|e|w|ne|nw|se|sw|north|south|east|west)"
_POSTCODE = r"[A-Z]{1,2}\d[A-Z\d]?\s*\d[A-Z]{2}\b"  # a UK postcode (Royal Mail), not a town's word
# A house number, a street's name in capitals, its kind, then what a postal address puts after
# it: a direction, a unit, a town, a state, a ZIP or a UK postcode ("221B Baker Street, London
# NW1 6XE", "1600 Pennsylvania Ave NW, Washington, DC 20500", "12 Oak Lane, Apt 4").
_STREET = re.compile(
    rf"(?<![\w\-/.])\d{{1,6}}[A-Za-z]?(?:-\d{{1,5}})?,?\s+(?:(?i:{_DIRECTION})\.?\s+)?(?:[A-Z][\w'.\-]*\s+){{1,4}}"
    rf"(?i:{_SUFFIX})\b\.?(?:\s+(?i:{_DIRECTION})\b\.?)?"
    r"(?:,?\s+(?i:apt|apartment|unit|suite|ste|flat|floor|fl|#)\.?\s*#?[\w\-]+)?"
    rf"(?:,\s*(?!{_POSTCODE})[A-Z][\w'.\-]*(?:\s+(?!{_POSTCODE})[A-Z][\w'.\-]*){{0,2}}){{0,3}}"
    rf"(?:,?\s+(?:\d{{5}}(?:-\d{{4}})?|{_POSTCODE}))?(?![\w\-])")
# A home's, as a reader reads it: "I live at", "my address is", "home address:", "ship it to",
# maybe a flat or a house name between ("I live at Flat 3, 12 High Street").
_HOME_LEAD = re.compile(
    r"(?:\b(?:live|lives|lived|living|reside|resides|residing|stay|stays|staying)\s+(?:at|on)"
    r"|\b(?:home|mailing|postal|residential|shipping|billing|delivery|street|house|my|our|his|her|their|your|new)"
    r"\s+address"
    r"|\baddress\s*(?:is|was|:|=)|\b(?:ship|shipped|deliver|delivered|mail|mailed|post)\s+(?:it|them|this|that|"
    r"the\s+\w+|my\s+\w+|a\s+\w+)?\s*to|\bhome\s+is)"
    r"[^.!?;\n]{0,24}$")
# Chinese: after 住在, 家住, 住址, 收货地址 ..., a place named down to its number (路/街 ... 号, 室,
# 单元): "我家住在北京市朝阳区建国路88号3单元502室". A city alone is not an address.
_CN_ADDRESS = re.compile(
    r"(?:住在|住於|住于|家住|家在|住址|家庭住址|家庭地址|居住地址|收货地址|收貨地址|寄到|送到|我的地址|他的地址|她的地址)"
    r"(?:是|为|為|在|于|於|：|:|\s)*"
    r"([\u4e00-\u9fff]{2,30}?(?:路|街|道|巷|弄|胡同|村|大厦|小区|花园)[\u4e00-\u9fff\dA-Za-z\-－#]{0,6}?"
    r"[\d０-９]{1,5}\s*(?:号|號)(?:[\u4e00-\u9fff]{0,4}[\d０-９A-Za-z\-－]{1,5}\s*(?:号楼|栋|棟|幢|单元|單元|楼|樓|室|层|層))*)")

# Japanese: after 住所 (address) as a label, a prefecture (都, 道, 府, 県) down to its block and
# house numbers ("私の住所は東京都千代田区千代田1-1です", "住所：大阪府大阪市北区梅田3丁目1番1号").
_JP_ADDRESS = re.compile(
    r"(?<!会社の)(?<!本社の)(?<!店舗の)(?<!事務所の)(?<!オフィスの)(?:住所|現住所|自宅の住所)(?:は|：|:|\s)*"  # not a firm's
    r"((?:〒?\s*[0-9０-９]{3}[-－][0-9０-９]{4}\s*)?[\u4e00-\u9fff\u3040-\u30ff]{1,6}?(?:都|道|府|県)"
    r"[\u4e00-\u9fff\u3040-\u30ff]{1,20}?[0-9０-９]{1,4}(?:(?:[-－ー]|丁目|番地?|号)[0-9０-９]{0,4}){1,4})")

# Korean: after 주소 (address) as a label, a road-name address down to its building number ("내
# 주소는 서울특별시 강남구 테헤란로 123", "집 주소: 부산광역시 해운대구 해운대로 570번길 12"); not a
# company's (회사 주소, 본사 주소, 사무실 주소, 매장 주소).
_KR_ADDRESS = re.compile(
    r"(?<!회사 )(?<!회사)(?<!본사 )(?<!본사)(?<!사무실 )(?<!사무실)(?<!매장 )(?<!매장)(?:주소|거주지)(?:는|은|:|：|\s)*"
    r"((?:[가-힣]{2,8}(?:특별시|광역시|특별자치시|특별자치도|도|시)\s*)?[가-힣]{1,8}(?:시|군|구)\s*"
    r"(?:[가-힣]{1,8}(?:구|동|읍|면)\s*)?[가-힣0-9]{1,12}(?:로|길)\s*[0-9]{1,5}(?:-[0-9]{1,5})?"
    r"(?:번길\s*[0-9]{1,5})?)")

# ...not a business's: "Our HQ address is 500 Market St", "ship it to the office at ...".
_BUSINESS = re.compile(r"\b(?:office|hq|headquarters|company|firm|store|shop|restaurant|business|venue|hotel|clinic"
                       r"|branch|warehouse|factory|campus|school|hospital|church|museum|embassy|consulate|gallery|bar"
                       r"|cafe|café"
                       # the same in German, French, Spanish, Italian, Dutch and Portuguese
                       r"|büro|buero|firma|geschäft|laden|praxis|bureau|entreprise|société|magasin|boutique|oficina"
                       r"|empresa|tienda|ufficio|azienda|negozio|kantoor|bedrijf|winkel|escritório|escritorio|loja"
                       r"|restaurante|ristorante)\b")


# Continental Europe and Brazil: a street as its country writes it, its number, maybe a postcode
# and a town ("Hauptstraße 5, 10115 Berlin", "12 rue de la Paix, 75002 Paris", "Calle Mayor 10,
# 28013 Madrid", "Via Roma 1, 00184 Roma", "Keizersgracht 123, 1015 CJ Amsterdam", "Rua Augusta
# 100, 01305-000 São Paulo"), after a home's words in that language ("ich wohne in der", "j'habite
# au", "vivo en", "abito in", "ik woon op", "moro na", "meine Adresse ist", "mon adresse :").
_EU_KIND = (r"(?:rue|avenue|av\.?|boulevard|bd|chemin|place|all[ée]e|impasse|quai|route|cours|"
            r"calle|c/|avenida|avda\.?|plaza|paseo|camino|carrer|"
            r"via|viale|piazza|corso|vicolo|largo|"
            r"rua|travessa|pra[çc]a|estrada|alameda)")
_EU_SUFFIX = r"(?:stra(?:ß|ss)e|str\.|weg|allee|platz|gasse|ring|damm|ufer|straat|laan|plein|gracht|kade|singel|dijk)"
_EU_POSTCODE = r"(?:\d{5}(?:-\d{3})?|\d{4}\s?[A-Z]{2}|\d{4})"
_NAME = r"[A-ZÀ-ÝÄÖÜ][\w'’.\-]*"
_EU_STREET = re.compile(
    # "12 rue de la Paix", "12 bis avenue Foch": the number first (France, Belgium)
    rf"(?:(?<![\w\-/.])\d{{1,5}}(?:\s?(?:bis|ter|[a-zA-Z]))?,?\s+(?i:{_EU_KIND})\s+(?:[\w'’.\-]+\s+){{0,4}}?{_NAME}"
    # "Calle Mayor 10", "Via Roma, 1", "Rua Augusta 100": the kind, the name, the number
    rf"|(?<![\w\-])(?i:{_EU_KIND})\s+(?:[\w'’.\-]+\s+){{0,4}}?{_NAME},?\s+(?:n[º°o.]\s*)?\d{{1,5}}[a-zA-Z]?(?![\w\-])"
    # "Hauptstraße 5", "Keizersgracht 123": a name ending in its kind, the number
    rf"|(?<![\w\-])(?:{_NAME}\s+)?[A-ZÀ-ÝÄÖÜ][\w\-]*?(?i:{_EU_SUFFIX})\s+\d{{1,5}}\s?[a-zA-Z]?(?![\w\-])"
    rf")(?:,?\s+{_EU_POSTCODE}\s+{_NAME}(?:[ \-]{_NAME})?)?")
_EU_HOME_LEAD = re.compile(
    r"(?:\b(?:wohne|wohnen|wohnt|wohnhaft|habite|habitons|habitent|vivo|vivimos|vive|viven|abito|abitiamo|abita|"
    r"woon|wonen|woont|moro|moramos|mora|resido|reside|réside|domicili[ée]e?|domiciliad[oa])\b"
    r"|\b(?:meine|unsere|seine|ihre|mon|notre|son|mi|nuestra|su|il mio|la mia|mijn|ons|meu|minha|nosso)\s+"
    r"(?:adresse|anschrift|wohnadresse|privatadresse|dirección|direccion|domicilio|indirizzo|adres|woonadres|endereço|"
    r"endereco)|\b(?:adresse|anschrift|dirección|direccion|domicilio|indirizzo|adres|endereço|endereco)\s*(?:ist|lautet|"
    r"est|es|è|is|é|:|=)|\b(?:schick|sende|liefer|envoie|livre|envía|envia|manda|spedisci|stuur|envie)\w*\b)"
    r"[^.!?;\n]{0,24}$", re.I)


_CJK_ADDRESSES = (regex_find(_CN_ADDRESS, 1), regex_find(_JP_ADDRESS, 1), regex_find(_KR_ADDRESS, 1))


def _street_address(node, ctx: Ctx):
    text = ctx.text
    for m in _STREET.finditer(text, node.start, node.end):
        before = lead(text, m.start(), 60, ctx.cache)
        if _HOME_LEAD.search(before) and not _BUSINESS.search(before):
            yield m.span()
    for m in _EU_STREET.finditer(text, node.start, node.end):  # after a home's words in its language or in English
        before = lead(text, m.start(), 60, ctx.cache)
        if (_EU_HOME_LEAD.search(before) or _HOME_LEAD.search(before)) and not _BUSINESS.search(before):
            yield m.span()
    for find in _CJK_ADDRESSES:
        yield from find(node, ctx)


register(Rule(
    id="pii.street_address", category=PII, sensitivity=CONFIDENTIAL, placeholder="[ADDRESS]", risk=0.6,
    # a house number before a name in capitals, or a Chinese one before 号; then a home's words
    binds=(DOC,), find=_street_address,
    guard=found(r"[0-9][A-Za-z]?,? +[A-Za-z]|[A-Za-z] [0-9]|[0-9０-９] ?[号號]|[0-9０-９][-－ー丁番]|[로길] ?[0-9]", ascii=True),
    itriggers=("live at", "lives at", "living at", "lived at", "live on", "lives on", "reside", "stay at", "staying at",
               "address", "ship it", "ship to", "shipped to", "ship them", "deliver it", "deliver to", "delivered to",
               "mail it", "mail to", "mailed to", "post it", "home is",
               "住在", "住於", "住于", "家住", "住址", "家在", "收货地址", "收貨地址", "寄到", "送到", "我的地址", "他的地址", "她的地址",
               "住所", "주소", "거주지",
               # continental Europe and Brazil (``_EU_HOME_LEAD``)
               "wohne", "wohnen", "wohnt", "wohnhaft", "anschrift", "adresse", "habite", "habitons", "domicili",
               "réside", "vivo", "vivimos", "dirección", "direccion", "abito", "abitiamo", "indirizzo", "woon", "wonen",
               "adres", "moro", "moramos", "endereço", "endereco", "resido", "schick", "liefer", "envoie", "envía",
               "envia", "spedisci", "stuur"),
    reason="a house number, street and what follows it (town, postcode) after words of a home or an address "
           "(in English, German, French, Spanish, Italian, Dutch or Portuguese); in Chinese, a place named down to its number after 住在, 住址 and the like; in Japanese, after 住所",
    origin="USPS Publication 28 street suffixes and unit designators; Royal Mail postcode format; GB/T 23705 "
           "address elements (road, number, unit, room)",
))

# -- numbered documents: a driving licence, a health insurance or medical record number ------
# No check digit and no common shape (California D1234567, Florida S530-4127-8312-09, the UK's
# MORGA753116SM9IJ, a Medicare MBI 1EG4-TE5-MK73, an NHS number 943 476 5919), so a value counts
# only right after the document's name, as a passport number does (``pii.passport``): maybe a
# state in brackets, "member"/"policy", "number"/"ID", a copula or a colon, nothing else.
_DOC_GAP = (r"(?:[ \t]*\([^()\n]{1,20}\))?(?:[ \t_]*(?:member|subscriber|policy|card|group)(?![a-z]))?"
            r"(?:[ \t\-_]*(?:(?:number|nummer|numéro|número|num|no|nr|id)(?![a-zà-ÿ])\.?|#|号码|號碼|番号|号))?"
            r"(?:[ \t]*(?:(?:is|was)(?![a-z])|是|为|は))?[\s\"'`:：=#\-]*")
# groups joined by a space or a dash while the next one holds a digit ("... 8312-09 expires 2027" ends at 09)
_DOC_VALUE = r"([A-Za-z0-9](?:[A-Za-z0-9]|[ \-](?=[A-Za-z]{0,3}[0-9])){4,19})(?![A-Za-z0-9])"
_DOC_LOWER = re.compile(r"[a-z]{1,3}[0-9][0-9 \-]*")  # typed in lower case: letters, then digits ("d1234567")
_DATE_SHAPE = re.compile(r"[0-9]{1,4}[\-/. ][0-9]{1,2}[\-/. ][0-9]{1,4}")  # "expires 2027-01-31" is no number


def number_after_name(words: str):
    """A ``find`` for a document's number right after its name (``words``, a regex): five digits at
    least, not a date (also used by ``accounts`` for employee and student numbers)."""
    rx = re.compile(rf"(?:{words}){_DOC_GAP}{_DOC_VALUE}", re.I)

    def find(node, ctx: Ctx):
        for m in rx.finditer(ctx.text, node.start, node.end):
            v = m.group(1)
            if sum(c.isdigit() for c in v) >= 5 and not _DATE_SHAPE.fullmatch(v) \
                    and (not any(c.islower() for c in v) or _DOC_LOWER.fullmatch(v)):
                yield m.span(1)

    return find


register(Rule(
    id="pii.drivers_license", category=PII, sensitivity=CONFIDENTIAL, placeholder="[DRIVERS_LICENSE]", risk=0.7,
    binds=(DOC,), guard=found(r"[0-9]{3}", ascii=True),
    find=number_after_name(r"driver'?s?'?[ \-_]?licen[cs]e|driving[ \-_]?licen[cs]e|drivers?[ \-_]lic\b\.?"
                           r"|\bDL(?=[ \t]*[#:]|[ \t]+(?:no\b|number))|驾驶证|驾照|駕照|運転免許証?|führerschein"
                           r"|permis de conduire|licencia de conducir|carnet de conducir|carteira de motorista"),
    itriggers=("driver's licen", "drivers licen", "driver licen", "drivers' licen", "driver-licen", "driving licen",
               "driver_licen", "drivers_licen", "driverlicen", "driverslicen", "driving_licen", "drivers_lic", "driver_lic",
               "driver lic", "drivers lic", "dl#", "dl #", "dl:", "dl no", "dl number", "驾驶证", "驾照", "駕照", "運転免許",
               "führerschein", "permis de conduire", "licencia de conducir", "carnet de conducir",
               "carteira de motorista"),
    reason="driver's licence number (5-20 letters and digits, five digits at least) right after its name",
    origin="AAMVA DL/ID card design standard (state formats vary, no common check digit); DVLA licence numbers; "
           "context approach of Presidio's UsLicenseRecognizer",
))

register(Rule(
    id="pii.health_id", category=PII, sensitivity=CONFIDENTIAL, placeholder="[HEALTH_ID]", risk=0.7,
    binds=(DOC,), guard=found(r"[0-9]", ascii=True),  # an MBI has no two digits together
    find=number_after_name(r"medical[ \-]record|\bMRN\b|patient[ \-](?=id\b|number|no\b)"
                           r"|(?:health|medical|dental|vision)[ \-](?:insurance|plan|card)"
                           r"|\binsurance(?=[ \t]+(?:member|subscriber))"
                           r"|\bmedicare|\bmedicaid|\bNHS\b|krankenversicherungs?|versichertennummer|carte vitale"
                           r"|医保卡?|社保卡|病历|健康保険証?"),
    itriggers=("medical record", "medical-record", "mrn", "patient id", "patient number", "patient no", "patient-id",
               "health insurance", "health plan", "health card", "medical insurance", "medical plan", "dental",
               "vision insurance", "insurance member", "insurance subscriber", "medicare", "medicaid", "nhs",
               "krankenversicherung", "versichertennummer", "carte vitale", "医保", "社保卡", "病历", "健康保険"),
    reason="medical record, patient, health insurance, Medicare/Medicaid or NHS number right after its name",
    origin="HIPAA Safe Harbor identifiers (medical record and health plan beneficiary numbers); CMS Medicare "
           "Beneficiary Identifier format; NHS number; context approach of Presidio's medical recognizers",
))

# -- a home's coordinates ---------------------------------------------------------------------

# Latitude, longitude in decimal degrees to three places or more (~100 m: a street, then a door),
# said of a home ("my home is at 40.7128, -74.0060", "GPS of our house: ...", "51.5007, -0.1246
# (home)"): the address, written as a map reads it. A place's ("The Eiffel Tower is at 48.8584,
# 2.2945"), an office's or a shop's stays.
_COORDS = re.compile(r"(?<![\w.\-+])([-+]?\d{1,2}\.\d{3,})\s*°?\s*[NS]?\s*,\s*"
                     r"([-+]?\d{1,3}\.\d{3,})\s*°?\s*[EW]?(?![\w.])")
# (or in degrees, minutes and seconds, as a map app copies them: 40°42'46"N 74°00'22"W, ~30 m)
_DMS = re.compile(r"(?<![\w.])(\d{1,2})\s*°\s*(\d{1,2})\s*['′]\s*(\d{1,2}(?:\.\d+)?)\s*(?:[\"″]|'')\s*([NS])"
                  r"\s*,?\s*(\d{1,3})\s*°\s*(\d{1,2})\s*['′]\s*(\d{1,2}(?:\.\d+)?)\s*(?:[\"″]|'')\s*([EW])(?!\w)")
# (a person's own place now is as precise: "I'm at 40.7128° N, 74.0060° W right now")
_HOME_BEFORE = re.compile(r"\b(?:(?:my|our|his|her|their|your)\s+(?:home|house|place|flat|apartment|residence)|home\s+"
                          r"(?:is|address|location|coordinates|gps)|(?:i|we|she|he|they)\s+live|lives?\s+(?:at|here)|"
                          r"where\s+(?:i|we|she|he|they)\s+live"
                          r"|(?:i'?m|i\s+am|we'?re|we\s+are)\s+(?:currently\s+|now\s+)?"
                          r"(?:at|located\s+at|staying\s+at))\b")
_HOME_AFTER = re.compile(r"\s*[(\[-]?\s*(?:(?:my|our)\s+)?(?:home|house|where\s+(?:i|we)\s+live)\b", re.I)


def _points(text: str, start: int, end: int):
    """Each latitude and longitude written in the text, as a match and the two numbers."""
    for m in _COORDS.finditer(text, start, end):
        yield m, float(m.group(1)), float(m.group(2))
    for m in _DMS.finditer(text, start, end):
        d1, m1, s1, _, d2, m2, s2, _ = m.groups()
        if int(m1) < 60 and int(m2) < 60:
            yield m, int(d1) + int(m1) / 60 + float(s1) / 3600, int(d2) + int(m2) / 60 + float(s2) / 3600


def _home_coordinates(node, ctx: Ctx):
    text = ctx.text
    for m, lat, lon in _points(text, node.start, node.end):
        if abs(lat) > 90 or abs(lon) > 180:
            continue
        before = lead(text, m.start(), 60, ctx.cache)
        home = _HOME_BEFORE.search(before) is not None or _HOME_AFTER.match(text, m.end(), m.end() + 30) is not None
        if home and not _BUSINESS.search(before):
            yield m.span()


register(Rule(
    id="pii.home_coordinates", category=PII, sensitivity=CONFIDENTIAL, placeholder="[LOCATION]", risk=0.6,
    binds=(DOC,), find=_home_coordinates,
    trigger=found(r"\d\.\d{3,}\s*°?\s*[NS]?\s*,\s*[-+]?\d{1,3}\.\d{3}|\d\s*°\s*\d{1,2}\s*['′]", ascii=True),
    reason="a home's latitude and longitude (three decimals or more, or degrees, minutes and seconds) said of a home, "
           "or of where the speaker is now",
    origin="GDPR Art. 4(1) location data; CCPA 1798.140(v)(1)(G) precise geolocation; the street-address rule's "
           "home words",
))

# -- a vehicle: its VIN and its number plate ----------------------------------------------------

# A vehicle identification number (ISO 3779): 17 letters and digits, never I, O or Q. After its
# name ("VIN: ...", "chassis number ...") any such run is one (Europe's carry no check digit); on
# its own only a North American one, whose 9th character checks the rest (49 CFR 565.15) and
# whose last four are digits ("1HGCM82633A004352"), so a 17-character id or hash is not taken.
# (python-stdnum, our checksum library, has no VIN module: the weights are the regulation's.)
_VIN_RUN = re.compile(r"(?<![A-Za-z0-9])[A-HJ-NPR-Za-hj-npr-z0-9]{17}(?![A-Za-z0-9])")
_VIN_NAME = re.compile(r"(?:\bVIN|vehicle[ \t_]+identification[ \t_]+(?:number|no\b)|chassis[ \t_\-]*(?:number|no\b)"
                       r"|fahrgestellnummer|numéro de série du véhicule|numero de bastidor|车架号|車台番号)"
                       r"\.?[ \t_]*(?:#|number|no\.?)?[ \t]*(?:(?:is|was)\b)?[\s\"'`:：=#\-]*$", re.I)
_VIN_VALUES = dict(zip("ABCDEFGHJKLMNPRSTUVWXYZ",
                       (1, 2, 3, 4, 5, 6, 7, 8, 1, 2, 3, 4, 5, 7, 9, 2, 3, 4, 5, 6, 7, 8, 9)))  # letters' values
_VIN_WEIGHTS = (8, 7, 6, 5, 4, 3, 2, 10, 0, 9, 8, 7, 6, 5, 4, 3, 2)


def _vin_checks(v: str) -> bool:
    total = sum(w * (int(c) if c.isdigit() else _VIN_VALUES[c]) for c, w in zip(v, _VIN_WEIGHTS))
    return v[8] == "0123456789X"[total % 11]


def _vin(node, ctx: Ctx):
    text = ctx.text
    for m in _VIN_RUN.finditer(text, node.start, node.end):
        v = m.group()
        if v.isalpha() or v.isdigit():
            continue
        if _VIN_NAME.search(text, max(node.start, m.start() - 50), m.start()) is not None:
            yield m.span()
        elif v.isupper() and v[13:].isdigit() and text[m.start() - 1:m.start()] not in ("_", "-") \
                and text[m.end():m.end() + 1] not in ("_", "-") and _vin_checks(v):
            yield m.span()


register(Rule(
    id="pii.vehicle_id", category=PII, sensitivity=CONFIDENTIAL, placeholder="[VIN]", risk=0.6,
    binds=(DOC,), find=_vin, guard=has_token,  # a VIN is a run of 17 key characters: no trigger of its own to pay for
    reason="a vehicle identification number (17 characters) after its name, or one whose check digit holds",
    origin="ISO 3779 and 49 CFR 565.15 (the check digit); GDPR recital 30 / EDPB guidance treating a VIN as "
           "personal data",
))

# A number plate after its name ("licence plate 7ABC123", "my plate number is AB12 CDE",
# "Kennzeichen: B-MW 1234"): one to three groups of letters and digits, with a digit. "plate"
# alone is a dish or a figure ("Plate 12A"); a company's "registration number" is no car's.
_PLATE = re.compile(
    r"(?:licen[cs]e[ \t_\-]*plate|number[ \t_\-]*plate|registration[ \t_\-]*plate|reg\.?[ \t_]+plate"
    r"|plate[ \t_\-]*(?:number|no\b|nr\b)|\bplates?[\"']?(?=[ \t]*[:=])"  # "plate:" a label, "plate_number" a key
    r"|(?:car|vehicle|truck|van|motorbike|motorcycle)(?:['’]s)?[ \t_]+(?:registration|reg\.?|plate|plates|tag)"
    r"|(?:my|our|his|her|their|your)[ \t]+(?:car[ \t]+)?plates?|(?:kfz-|auto)?kennzeichen|nummernschild"
    r"|plaque d['’]immatriculation|车牌号?|車牌|ナンバープレート|번호판)"
    r"[ \t]*(?:#|number|no\.?|nr\.?)?[ \t]*(?:(?:is|was|reads?|says?)\b|号码|是)?[\s\"'`:：=#\-]*"
    # the groups after the first as a plate writes them, capitals or digits: a word ("12 was", "CDE
    # and") is the sentence going on
    r"((?:[\u4e00-\u9fff][ ·]?)?(?=[A-Za-z0-9 \-·]{0,14}[0-9])[A-Za-z0-9]{1,10}"
    r"(?:[ \-·](?-i:[A-Z0-9]{2,4}|[a-z]{0,2}[0-9][a-z0-9]{0,2}))*)(?![A-Za-z0-9])", re.I)


def _plate(node, ctx: Ctx):
    for m in _PLATE.finditer(ctx.text, node.start, node.end):
        s, v = m.start(1), m.group(1)
        n = sum(c.isalnum() for c in v)
        digits = sum(c.isdigit() for c in v)
        if 4 <= n <= 10 and digits and not (digits == n and n < 5) \
                and not _DATE_SHAPE.fullmatch(v) and (not any(c.islower() for c in v) or v.islower()):
            yield s, s + len(v)


register(Rule(
    id="pii.vehicle_plate", category=PII, sensitivity=CONFIDENTIAL, placeholder="[PLATE]", risk=0.5,
    binds=(DOC,), find=_plate,
    itriggers=("plate", "kennzeichen", "nummernschild", "车牌", "車牌", "ナンバープレート",
               "번호판", "car reg", "vehicle reg", "truck reg", "van reg", "car's reg", "car tag", "vehicle tag"),
    reason="a vehicle's number plate (4-10 letters and digits, a digit among them) right after its name",
    origin="GDPR recital 30 and national DPAs on licence plates as personal data; ALPR data under CCPA; "
           "the context approach of the driving-licence rule",
))

# -- a device: its IMEI and its MAC address -----------------------------------------------------

# A phone's IMEI after its name (15 digits whose last checks the rest, by python-stdnum; 14 without
# it, 16 as IMEISV), and a network card's MAC address said as someone's ("my MAC address is ...",
# "her laptop's Wi-Fi address: ..."): an online identifier that follows its owner (GDPR recital
# 30). A MAC in a log line or in `ip link` output is a machine's, and stays.
_IMEI = re.compile(r"\b(?:imei(?:sv)?|meid)\b[ \t]*(?:#|number|no\.?|nr\.?)?[ \t]*(?:(?:is|was)\b)?[\s\"'`:：=#\-]*"
                   r"([0-9]{2}[ \-]?[0-9]{6}[ \-]?[0-9]{6}[ \-]?[0-9]{0,2})(?![0-9])", re.I)
_MAC = re.compile(r"\b(?:my|our|his|her|their|your)[ \t]+(?:[\w'’\-]+[ \t]+){0,3}?"
                  r"(?:mac|wi-?fi|wlan|bluetooth|hardware|ethernet|physical)[ \t]+address(?:es)?[ \t]*"
                  r"(?:(?:is|was)\b)?[\s\"'`:：=\-]*"
                  r"((?:[0-9A-Fa-f]{2}[:\-]){5}[0-9A-Fa-f]{2})(?![0-9A-Fa-f:\-])", re.I)


def _device(node, ctx: Ctx):
    from stdnum import imei  # imported with a first candidate, not at start (as national_id's modules)

    for m in _IMEI.finditer(ctx.text, node.start, node.end):
        if imei.is_valid(m.group(1)):
            yield m.span(1)
    for m in _MAC.finditer(ctx.text, node.start, node.end):
        yield m.span(1)


register(Rule(
    id="pii.device_id", category=PII, sensitivity=CONFIDENTIAL, placeholder="[DEVICE_ID]", risk=0.5,
    binds=(DOC,), find=_device,
    itriggers=("imei", "meid", "mac address", "wi-fi address", "wifi address", "wlan address", "bluetooth address",
               "hardware address", "ethernet address", "physical address"),
    reason="a phone's IMEI after its name (its check digit holding), or a MAC address said as someone's",
    origin="GDPR recital 30 (online identifiers: device identifiers); IMEI check digit by python-stdnum (stdnum.imei)",
))

# -- a crypto wallet's address, said as someone's -----------------------------------------------

# Bitcoin (legacy 1.../3..., bech32 bc1...) and Ethereum-style (0x + 40 hex) addresses: anyone may
# pay to or trace a person's address, so one said as someone's is theirs ("my bitcoin address is
# bc1q...", "send it to her ETH wallet 0x..."); a token's contract address in a tool's output
# ("USDC contract 0xA0b8...") or an address in a block explorer's table is no one's.
_WALLET = re.compile(r"(?<![A-Za-z0-9])(?:bc1[02-9ac-hj-np-z]{11,71}|[13][1-9A-HJ-NP-Za-km-z]{25,34}|0x[0-9a-fA-F]{40})"
                     r"(?![A-Za-z0-9])")
_WALLET_OWNER = re.compile(r"\b(?:my|our|his|her|their|your)\b[^.\n]{0,30}\b(?:wallet|bitcoin|btc|ethereum|eth|crypto|"
                           r"usdt|usdc|metamask|ledger|trezor|coinbase)\b[^.\n]{0,20}$")


def _wallet(node, ctx: Ctx):
    for m in _WALLET.finditer(ctx.text, node.start, node.end):
        v = m.group()
        if not v.startswith("0x") and (v.isdigit() or v.isalpha()):
            continue  # a word or a number of that length is no address
        if _WALLET_OWNER.search(lead(ctx.text, m.start(), 60, ctx.cache)):
            yield m.span()


register(Rule(
    id="pii.crypto_wallet", category=PII, sensitivity=CONFIDENTIAL, placeholder="[WALLET]", risk=0.5,
    binds=(DOC,), find=_wallet, guard=has_token,
    itriggers=("wallet", "bitcoin", "btc", "ethereum", "eth", "crypto", "usdt", "usdc", "metamask", "ledger", "trezor",
               "coinbase"),
    reason="a cryptocurrency wallet address said as someone's (bitcoin or ethereum form)",
    origin="Presidio's CryptoRecognizer (bitcoin addresses); GDPR Art. 4(1) online identifiers; the wallet forms of "
           "BIP 173 (bech32) and EIP-55 (0x + 40 hex)",
))
