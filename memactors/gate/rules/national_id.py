"""National identifiers of the main countries, each by its own check digits (python-stdnum) and
only beside a word that names it: a checksum alone passes one random number in ten or eleven
(an order number, an invoice), a word alone names no value. A near miss (one digit typed wrong)
fails its checksum and is left alone, as are numbers of the right shape far from their word.
Malaysia's MyKad, Indonesia's NIK and Pakistan's CNIC carry no check digit: stdnum checks the date
and the place codes they hold, so they rest more on their word.

Each entry: the country's id (stdnum's module), its words (read as ``window`` reads context:
lower case, identifiers split into words, a table column's header, a label line above), its
acronyms that are also ordinary words in some language ("SIN", "PAN", "NIE", "RFC": counted only
in capitals), and the shape it is written in (grouped as its card prints it, or run together).
US Social Security numbers, Chinese resident IDs and UK NI numbers have rules of their own.
"""

from __future__ import annotations

import importlib
from .lazy import re
from dataclasses import dataclass
from functools import lru_cache

from ..tree import DOC
from .base import CONFIDENTIAL, PII, Ctx, Rule, column_header, found, lead, register, window, words


@dataclass(frozen=True, slots=True)
class _Id:
    key: str  # stdnum module under stdnum. ("es.dni"), or a local check ("sg.nric")
    words: re.Pattern  # searched in the lower-case context
    acronyms: re.Pattern | None  # searched, case-sensitive, in the text (is the entry worth a look?)
    label: re.Pattern | None  # an acronym as a label right before the value (see _LABEL_TAIL)
    shape: re.Pattern
    as_key: re.Pattern | None  # the acronym in any case as a key right before the value ("sin: ...", "pan=")
    keyed: re.Pattern | None  # the same anywhere in a text (is the entry worth a look?)


# What makes an acronym a label: the value right after it, maybe after a country in brackets, a
# "number"/"no."/"nr", a colon or a copula ("SIN: ...", "My SIN is ...", "My Number (Japan): ...",
# "Mi NIE es ...", "NAS\n..." with the value on the next line). An acronym that is also a word
# ("ENVÍO SIN COSTO - PEDIDO ...", "Synology NAS serial ...", "NN model checkpoint ...") names
# no value further on.
_LABEL_TAIL = (r"\)?(?:[ \t]*\([^()\n]{1,24}\))?(?:[ \t]*(?:[Nn]umber|NUMBER|[Nn][Oo]\.?|[Nn][Rr]\.?|#|[Nn][°º]|[Nn]ummer))?"
               r"[\s*\"'`]*(?:(?:[:=：#\-–]|\b(?:is|es|est|ist|er|är|é|è|to|lautet|was|era|é)\b)[\s\"'`“*]*)?$")


def _id(key: str, words: str, acronyms: str | None, shape: str) -> _Id:
    return _Id(key, re.compile(words), re.compile(rf"(?<![A-Za-z])(?:{acronyms})(?![a-z])") if acronyms else None,
               re.compile(rf"(?<![A-Za-z])(?:{acronyms})(?![a-z])" + _LABEL_TAIL) if acronyms else None,
               re.compile(rf"(?<![0-9A-Za-z.\-/])(?:{shape})(?![0-9A-Za-z]|[.\-/][0-9])"),
               re.compile(rf"(?<![a-z])(?:{acronyms.lower()})[\"']?\s*[:=]\s*[\"']?$") if acronyms else None,
               re.compile(rf"(?<![a-z])(?:{acronyms.lower()})[\"']?\s*[:=]") if acronyms else None)


_CF = "[0-9LMNP-Vlmnp-v]"  # codice fiscale digits (letters replace digits of a homonym's code)
IDS = (
    _id("es.dni", r"\bdni\b|documento nacional de identidad", None, r"[0-9]{8}-?[A-Za-z]"),
    _id("es.nie", r"identidad de extranjero|\bnie number", "NIE", r"[XYZxyz]-?[0-9]{7}-?[A-Za-z]"),
    _id("es.nss", r"seguridad social|\bnuss\b|\bnss\b|n[úu]mero de afiliaci[óo]n", None,
        r"[0-9]{2}[ /-]?[0-9]{8}[ /-]?[0-9]{2}"),
    _id("de.idnr", r"steuer ?id\b|steuerliche identifikationsnummer|steueridentifikationsnummer|\bidnr\b|"
                      r"identifikationsnummer|\btax id\b|\btax identification", None,
        r"[0-9]{2} ?[0-9]{3} ?[0-9]{3} ?[0-9]{3}"),
    _id("fr.nir", r"s[ée]curit[ée] sociale|\binsee\b|n° ss\b|\bsocial security", "NIR",
        r"[12] ?[0-9]{2} ?[0-9]{2} ?(?:[0-9]{2}|2[ABab]) ?[0-9]{3} ?[0-9]{3} ?[0-9]{2}"),
    _id("pl.pesel", r"\bpesel\b", None, r"[0-9]{11}"),
    _id("br.cpf", r"\bcpf\b", None, r"[0-9]{3}\.?[0-9]{3}\.?[0-9]{3}-?[0-9]{2}"),
    _id("br.cnpj", r"\bcnpj\b", None, r"[0-9]{2}\.?[0-9]{3}\.?[0-9]{3}/?[0-9]{4}-?[0-9]{2}"),
    _id("nl.bsn", r"\bbsn\b|burgerservicenummer|sofi ?nummer", None, r"[0-9]{9}|[0-9]{4}\.[0-9]{2}\.[0-9]{3}"),
    _id("it.codicefiscale", r"codice fiscale|codicefiscale|\bcod\. ?fisc|\bc\.f\.|\btax code", None,
        rf"[A-Za-z]{{6}}{_CF}{{2}}[A-Za-z]{_CF}{{2}}[A-Za-z]{_CF}{{3}}[A-Za-z]"),
    _id("se.personnummer", r"personnummer|\bpersonnr|personal identity number", None,
        r"(?:[0-9]{2})?[0-9]{6}[-+]?[0-9]{4}"),
    _id("dk.cpr", r"\bcpr\b|personnummer", None, r"[0-9]{6}-?[0-9]{4}"),
    _id("fi.hetu", r"\bhetu\b|henkil[öo]tunnu|personbeteckning|personal identity code", None,
        r"[0-9]{6}[-+A-FU-Ya-fu-y][0-9]{3}[0-9A-Ya-y]"),
    _id("no.fodselsnummer", r"f[øo]dselsn|personnummer|national identity number", None, r"[0-9]{6} ?[0-9]{5}"),
    _id("in_.aadhaar", r"aadhaa?r|\baadhar|आधार|\buidai\b", None, r"[2-9][0-9]{3}[ -]?[0-9]{4}[ -]?[0-9]{4}"),
    _id("in_.pan", r"permanent account number|\bpan (?:card|number|no)\b", "PAN", r"[A-Za-z]{5}[0-9]{4}[A-Za-z]"),
    _id("jp.in_", r"マイナンバー|個人番号|\bmynumber\b|individual number", "My ?Number|MY ?NUMBER",
        r"[0-9]{4} ?[0-9]{4} ?[0-9]{4}"),
    _id("kr.rrn", r"주민등록번호|주민번호|resident registration number", "RRN", r"[0-9]{6}-?[0-9]{7}"),
    _id("ca.sin", r"social insurance|assurance sociale", "SIN|NAS", r"[0-9]{3}[ -]?[0-9]{3}[ -]?[0-9]{3}"),
    _id("au.tfn", r"\btfn\b|tax file number", None, r"[0-9]{3} ?[0-9]{3} ?[0-9]{2,3}"),
    _id("sg.nric", r"\bnric\b|\bfin number|identity card number", None, r"[STFGstfg][0-9]{7}[A-Za-z]"),
    _id("mx.curp", r"\bcurp\b", None, r"[A-Za-z]{4}[0-9]{6}[HMXhmx][A-Za-z]{5}[0-9A-Za-z][0-9]"),
    _id("mx.rfc", r"registro federal de contribuyentes", "RFC", r"[A-Za-z&Ññ]{3,4}[0-9]{6}[A-Za-z0-9]{3}"),
    _id("gb.nhs", r"\bnhs\b", None, r"[0-9]{3}[ -]?[0-9]{3}[ -]?[0-9]{4}"),
    _id("be.nn", r"registre national|rijksregister|num[ée]ro national|national (?:register |registry )?number|\binsz\b",
        "NN", r"[0-9]{2}\.?[0-9]{2}\.?[0-9]{2}-?[0-9]{3}\.?[0-9]{2}"),
    _id("za.idnr", r"south african id|\bid nommer|identity number|\bid number|\bid ?nr\b", None, r"[0-9]{13}"),
    _id("tr.tckimlik", r"kimlik|\btckn\b|turkish (?:national )?id", "TCKN", r"[1-9][0-9]{10}"),
    _id("il.idnr", r"teudat zehut|תעודת זהות|israeli id", None, r"[0-9]{7,8}-?[0-9]"),
    _id("cl.rut", r"rol [úu]nico|\brut\b", "RUT", r"[0-9]{1,2}\.?[0-9]{3}\.?[0-9]{3}-?[0-9Kk]"),
    _id("pt.cc", r"cart[ãa]o de cidad[ãa]o|citizen card", None, r"[0-9]{8} ?[0-9] ?[A-Za-z]{2}[0-9]"),
    _id("ro.cnp", r"\bcnp\b|cod numeric personal", None, r"[1-9][0-9]{12}"),
    _id("cz.rc", r"rodn[ée] [čc][íi]slo|rodné čís|\bbirth number", None, r"[0-9]{6}/?[0-9]{3,4}"),
    _id("gr.amka", r"\bamka\b|αμκα|α\.μ\.κ\.α", None, r"[0-9]{11}"),
    _id("ie.pps", r"personal public service|\bppsn?\b", None, r"[0-9]{7}[A-Wa-w][A-IWa-iw]?"),
    _id("ch.ssn", r"\bahv\b|\bavs\b|sozialversicherungsnummer|versichertennummer|social security", None,
        r"756\.?[0-9]{4}\.?[0-9]{4}\.?[0-9]{2}"),
    _id("at.vnr", r"sozialversicherungsnummer|versicherungsnummer|\bsvnr\b|\bsv-?nummer|\be-card", None,
        r"[0-9]{4} ?[0-9]{6}"),
    _id("th.pin", r"บัตรประชาชน|เลขประจำตัวประชาชน|thai (?:national )?id", None,
        r"[1-8]-?[0-9]{4}-?[0-9]{5}-?[0-9]{2}-?[0-9]"),
    _id("my.nric", r"\bmy ?kad\b|kad pengenalan|\bnric\b|\bic (?:number|no)\b", None, r"[0-9]{6}-?[0-9]{2}-?[0-9]{4}"),
    _id("id.nik", r"nomor induk kependudukan|\be?-?ktp\b", "NIK", r"[1-9][0-9]{15}"),
    _id("pk.cnic", r"\bcnic\b|\bnadra\b|computeri[sz]ed national identity", None, r"[0-9]{5}-?[0-9]{7}-?[0-9]"),
    _id("hr.oib", r"\boib\b|osobni identifikacijski", None, r"[0-9]{11}"),
    _id("ae.eid", r"emirates id|\beid\b|الهوية الإماراتية|بطاقة الهوية", None, r"784-?[0-9]{4}-?[0-9]{7}-?[0-9]"),
    _id("nz.ird", r"\bird (?:number|no\b|nr\b)|inland revenue", None, r"[0-9]{2,3}-?[0-9]{3}-?[0-9]{3}"),
    _id("ee.ik", r"isikukood|estonian (?:personal )?id", None, r"[1-6][0-9]{10}"),
    _id("lt.asmens", r"asmens kod|lithuanian personal (?:code|number)", None, r"[1-6][0-9]{10}"),
    _id("bg.egn", r"\bегн\b|единен граждански номер", None, r"[0-9]{6} ?[0-9]{3} ?[0-9]"),
    _id("is_.kennitala", r"kennital|kennit[öo]lu", None, r"[0-9]{6}-?[0-9]{4}"),
    # (a person's CUIL or CUIT: 20, 23, 24 or 27; a company's starts 30 or 33)
    _id("ar.cuit", r"\bcuil\b|\bcuit\b|c[óo]digo [úu]nico de identificaci[óo]n", None, r"2[0347]-?[0-9]{8}-?[0-9]"),
    _id("ec.ci", r"c[ée]dula", None, r"[0-9]{9}-?[0-9]"),
    _id("si.emso", r"\bem[šs]o\b|enotna mati[čc]na [šs]tevilka", None, r"[0-9]{13}"),
    _id("ua.rntrc", r"рнокпп|\bіпн\b|ідентифікаційн\w* (?:номер|код)|податков\w* номер", None, r"[0-9]{10}"),
    _id("hk.hkid", r"\bhkid\b|hong kong (?:identity|id) card|\bhk id\b|香港身份證|身份證號碼", None,
        r"[A-Za-z]{1,2}[0-9]{6} ?\(?[0-9Aa]\)?"),
)
# One pass says whether any entry's word is in a text at all (most texts that select the rule
# hold "pan" in "company" or "sin" in "using", and none of the words).
_ANY_WORD = re.compile("|".join(f"(?:{e.words.pattern})" for e in IDS))
_ANY_ACRONYM = re.compile("|".join(f"(?:{e.acronyms.pattern})" for e in IDS if e.acronyms is not None))
_ANY_KEY = re.compile("|".join(f"(?:{e.keyed.pattern})" for e in IDS if e.keyed is not None))
_ACRONYMS = ("NIE", "NIR", "PAN", "SIN", "NAS", "RRN", "RFC", "NN", "TCKN", "RUT", "NIK")


def _nric_ok(v: str) -> bool:
    """Singapore NRIC/FIN: weights 2,7,6,5,4,3,2 over the digits, +4 for T and G, the check
    letter from ICA's tables (S/T and F/G)."""
    v = v.upper()
    s = sum(int(c) * w for c, w in zip(v[1:8], (2, 7, 6, 5, 4, 3, 2))) + (4 if v[0] in "TG" else 0)
    return ("JZIHGFEDCBA" if v[0] in "ST" else "XWUTRQPNMLK")[s % 11] == v[-1]


@lru_cache(maxsize=None)
def _module(key: str):
    return importlib.import_module("stdnum." + key)  # imported with its first candidate: not a start's cost


def _nss_ok(v: str) -> bool:
    """Spain's social security number (NSS/NAF): province, number, and as control the first ten
    digits mod 97 (a number under 10^7 counted as province * 10^7 + number)."""
    d = re.sub(r"[ /-]", "", v)
    n = int(d[2:10])
    return (int(d[:2]) * 10**7 + n if n < 10**7 else int(d[:10])) % 97 == int(d[10:])


def _hkid_ok(v: str) -> bool:
    """Hong Kong identity card: letters A-Z as 10-35 (a space before one letter as 36), weights 9
    down to 2 over the letters and six digits, and as check 11 less the sum mod 11 (10 is A, 11 is 0)."""
    v = re.sub(r"[ ()]", "", v.upper())
    head, digits, check = v[:-7], v[-7:-1], v[-1]
    vals = [36] * (2 - len(head)) + [ord(c) - 55 for c in head] + [int(c) for c in digits]
    r = -sum(x * w for x, w in zip(vals, range(9, 1, -1))) % 11
    return "0123456789A"[r] == check


def _luhn_ok(v: str) -> bool:
    return bool(_module("luhn").is_valid(v.replace(" ", "").replace("-", "")))


# The checks python-stdnum has no module for, or checks otherwise. A Luhn check digit alone: the
# UAE's Emirates ID (784, the year of birth, seven digits, the check digit), and Canada's SIN, whose
# 0 and 8 series stdnum refuses as never issued to a person, though "046 454 286", the number every
# example of a SIN uses, is one of them.
_LOCAL_CHECKS = {"sg.nric": _nric_ok, "hk.hkid": _hkid_ok, "es.nss": _nss_ok, "ae.eid": _luhn_ok, "ca.sin": _luhn_ok}


def valid(key: str, value: str) -> bool:
    local = _LOCAL_CHECKS.get(key)
    if local is not None:
        return local(value)
    m = _module(key)
    try:
        return bool(m.is_valid(value))
    except Exception:  # noqa: BLE001 - stdnum raises its ValidationError subclasses, a few ValueErrors
        return False


# A number named as something else right before it is that thing, whatever word is near: an order,
# a ticket, a job, a dataset ("BSN not needed; order 467706165 ships Monday", "Aadhaar update
# centre token 2882...", "CPF opcional, protocolo 2914...", "INSEE dataset id 1819...", "Order ID
# number 2412...", a table column "Order ID"). Read in ``lead``'s words, the last word before the
# value (after "id", "number", "no.", a colon) decides. A count is no id either ("Synology NAS:
# 687703876 files indexed", "NHS 111 calls handled: ..."), nor a number to dial, nor one quoted "on your invoice".
REF_WORDS = (  # phone.py reads them too: a number named as one of these is no phone
    r"orders?|ordernummer|ordernr|bestell(?:ung|nummer)|ref|refs|reference|referencia|referência|réf|invoices?|factura|"
    r"fatura|rechnung(?:snummer)?|tickets?|case|cases|booking|bookingnr|bookingnummer|reservation|confirmation|serial|sn|"
    r"token|receipt|recibo|slip|protocol|protocolo|pedido|job|batch|run|build|tracking|shipment|parcel|package|paket|"
    r"pakets|sendung|consignment|model|checkpoint|dataset|transaction|txn|request|incident|issue|release|aktenzeichen|"
    r"saksnummer|sagsnummer|ärendenummer|row|page|count|total|budget|downloads|views|sku|part|item|product|version|"
    r"commit|session|trace|claim|policy|contract|voucher|coupon|lot|device|imei|asset|isbn|doi|pid|port|expediente|"
    r"handled|processed|served|sold|indexed|downloaded|received|sent|completed")
_NOT_ID_BEFORE = re.compile(
    rf"(?:\b(?:{REF_WORDS})(?:\s+(?:id|ids|no|nr|number|num|code|nummer|numero|número|n°|nº|#))*"
    r"|\bdial(?:led|ing)?\b(?:\s+[\w.]+){0,3})[\s:：#=.\-–\"'*]*(?:is\s+)?$")
_COUNT_AFTER = re.compile(
    rf"[ \t]+(?:on|in|for|of)[ \t]+(?:the|your|this|our|my|an?)?[ \t]*(?:{REF_WORDS})\b"
    r"|[ \t]*(?:bytes?|[kmgt]i?b|files?|rows?|records?|items?|downloads?|views?|users?|calls?|pages?|times|visits?|"
    r"hits?|requests?|entries|ms|seconds?|secs?|minutes?|hours?|days?|points?|votes?|units?|copies|tokens|words|"
    r"characters|chars|lines)\b", re.I)
# Denmark's CPR number has no check digit since 2007: any date and four digits pass, so a date-shaped
# booking reference near "CPR course" would. It counts only named right before ("CPR-nummer: ...",
# "CPR-nr. ...", "CPR ...", "personnummer ..." or the label line above).
_CPR_LABEL = re.compile(r"\b(?:cpr(?:\s*(?:nummer|nummeret|nr|number|no)\b)?|personnummer(?:et)?)"
                        r"[\s*\"'`.]*(?:(?:[:=：#\-–]|\b(?:er|is|är|var|was)\b)[\s\"'`“*]*)?$")


def _raw_before(text: str, start: int, cache: dict) -> str:
    """What stands before a value as typed (acronyms are counted by their case): up to 40
    characters on its line, its column's header in a table row, or the label line above."""
    ls = text.rfind("\n", 0, start) + 1
    near = text[max(ls, start - 40) : start]
    if ls == 0:
        return near
    header = column_header(text, start, cache)
    if header:
        return header + ": "
    if not near.strip(" \t:：-–—#*>\"'`[]()"):
        prev = text[: ls - 1].rstrip()
        if prev:
            return prev[max(prev.rfind("\n") + 1, len(prev) - 40) :] + ": " + near
    return near


def _not_an_id(ctx: Ctx, start: int, end: int) -> bool:
    before = lead(ctx.text, start, 30, ctx.cache)
    return _NOT_ID_BEFORE.search(before) is not None or _COUNT_AFTER.match(ctx.text, end) is not None


def _national_id(node, ctx: Ctx):
    text = ctx.text
    view = ctx.cache.get("words")
    if view is None:
        view = ctx.cache["words"] = words(text)
    worded = any(rx.search(t) is not None for rx, t in ((_ANY_WORD, view), (_ANY_ACRONYM, text), (_ANY_KEY, view)))
    if not worded:
        return
    seen: set[tuple[int, int]] = set()
    for e in IDS:
        if not (e.words.search(view) or e.acronyms is not None and (e.acronyms.search(text) or e.keyed.search(view))):
            continue
        for m in e.shape.finditer(text, node.start, node.end):
            span = m.span()
            if span in seen or not valid(e.key, m.group()):
                continue
            if e.key == "dk.cpr":
                named = _CPR_LABEL.search(lead(text, m.start(), 30, ctx.cache)) is not None
            else:
                named = e.words.search(window(ctx, m.start(), m.end(), 40, 10)) is not None or e.acronyms is not None and (
                    e.label.search(_raw_before(text, m.start(), ctx.cache))
                    or e.as_key.search(lead(text, m.start(), 20, ctx.cache)))
            if named and not _not_an_id(ctx, m.start(), m.end()):
                seen.add(span)
                yield span


_WORD_TRIGGERS = (
    "dni", "documento nacional", "identidad de extranjero", "nie number", "seguridad social", "nuss", "nss",
    "número de afiliación", "numero de afiliacion", "steuer", "identifikationsnummer", "idnr", "tax id",
    "tax identification", "sécurité sociale", "securite sociale", "insee", "n° ss", "social security", "pesel", "cpf",
    "cnpj", "bsn", "burgerservicenummer", "sofinummer", "sofi nummer", "codice fiscale", "codicefiscale", "cod. fisc",
    "cod.fisc", "c.f.", "tax code", "personnummer", "personnr", "personal identity", "cpr", "hetu", "henkilötunnu",
    "henkilotunnu", "personbeteckning", "fødselsn", "fodselsn", "national identity", "aadhaar", "aadhar", "आधार", "uidai",
    "permanent account", "pan card", "pan number", "pan no", "マイナンバー", "個人番号", "mynumber", "individual number",
    "주민등록번호", "주민번호", "resident registration", "social insurance", "socialinsurance", "assurance sociale", "tfn",
    "tax file", "taxfile", "nric", "fin number", "identity card", "curp", "registro federal", "nhs", "registre national",
    "rijksregister", "numéro national", "numero national", "national number", "national register", "national registry",
    "insz", "south african id", "id nommer", "id-nommer", "identity number", "id number", "id_number", "idnumber",
    "steuerid", "taxid", "tax_id", "social_insurance", "identitynumber", "identity_number",
    "kimlik", "tckn", "turkish id", "turkish national id", "teudat zehut", "תעודת זהות", "israeli id", "rol único",
    "rol unico", "rut", "cartão de cidadão", "cartao de cidadao", "citizen card", "cnp", "cod numeric personal",
    "rodné číslo", "rodne cislo", "rodné čís", "birth number", "amka", "αμκα", "α.μ.κ.α", "personal public service",
    "pps", "ahv", "avs", "sozialversicherungsnummer", "versichertennummer", "versicherungsnummer", "svnr", "sv-nummer",
    "svnummer", "e-card", "บัตรประชาชน", "เลขประจำตัวประชาชน", "thai id", "thai national id", "mykad", "kad pengenalan",
    "ic number", "ic no", "nomor induk kependudukan", "ktp", "cnic", "nadra", "computerized national identity",
    "computerised national identity", "oib", "osobni identifikacijski", "emirates id", "eid", "الهوية الإماراتية",
    "بطاقة الهوية", "ird number", "ird no", "ird nr", "inland revenue", "isikukood", "estonian id",
    "estonian personal id", "asmens kod", "lithuanian personal", "егн", "единен граждански", "kennital", "kennitöl",
    "kennitol", "cuil", "cuit", "código único", "codigo unico", "cédula", "cedula", "emšo", "emso", "enotna matičn",
    "enotna maticn", "рнокпп", "іпн", "ідентифікаційн", "податков", "hkid", "hong kong identity", "hong kong id",
    "hk id", "香港身份證", "身份證號碼")

register(Rule(
    id="pii.national_id", category=PII, sensitivity=CONFIDENTIAL, placeholder="[NATIONAL_ID]", risk=0.8,
    binds=(DOC,), find=_national_id,
    guard=found(r"[0-9][0-9 .\-/]{5,}[0-9]|[A-Za-z][0-9]{4}|[0-9]{2}[A-Za-z][0-9]{2}", ascii=True),
    itriggers=(*_WORD_TRIGGERS, *(f"{a.lower()}{c}" for a in _ACRONYMS for c in (":", "=", '":', " :"))),
    triggers=(*_ACRONYMS, "My Number", "MY NUMBER", "MyNumber"),
    reason="national identifier with valid check digits beside a word naming it (DNI/NIE, Spain's NSS, Steuer-ID, NIR, "
           "PESEL, "
           "CPF/CNPJ, BSN, codice fiscale, personnummer, CPR, HETU, fødselsnummer, Aadhaar, PAN, My Number, RRN, SIN, "
           "TFN, NRIC, CURP, RFC, NHS, Belgian national number, South African ID, T.C. Kimlik, Teudat Zehut, RUT, "
           "Cartão de Cidadão, CNP, rodné číslo, AMKA, PPS, AHV, SVNR, Thai ID, MyKad, NIK, CNIC, OIB, Emirates ID, "
           "IRD number, isikukood, asmens kodas, EGN, kennitala, CUIL/CUIT, cédula, EMŠO, RNTRC, HKID)",
    origin="check digits by python-stdnum (es.dni, es.nie, de.idnr, fr.nir, pl.pesel, br.cpf, br.cnpj, nl.bsn, "
           "it.codicefiscale, se.personnummer, dk.cpr, fi.hetu, no.fodselsnummer, in_.aadhaar, in_.pan, jp.in_, kr.rrn, "
           "ca.sin, au.tfn, mx.curp, mx.rfc, gb.nhs, be.nn, za.idnr, tr.tckimlik, il.idnr, cl.rut, pt.cc, ro.cnp, "
           "cz.rc, gr.amka, ie.pps, ch.ssn, at.vnr, th.pin, my.nric, id.nik, pk.cnic, hr.oib, nz.ird, ee.ik, lt.asmens, "
           "bg.egn, is_.kennitala, ar.cuit, ec.ci, si.emso, ua.rntrc; the Emirates ID and Canada's SIN by "
           "stdnum.luhn); Singapore NRIC by ICA's check letters, Hong Kong's HKID by its mod-11 check; Spain's NSS by "
           "its mod-97 control; "
           "context words as Presidio's country recognizers use them",
))
