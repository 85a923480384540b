"""How a value said beside a password's name, or in a login's place, is judged to be one: not a
template or a stop word, and shaped as people type passwords (a digit, a symbol, mixed case; a
passphrase of dictionary words; a generated look), not as a name, a version, an algorithm or a
sentence about a password. The rules of ``generic_secrets`` find where a value stands; these say
whether it is one."""

from __future__ import annotations

from .lazy import re

from .secrets import placeholder_value


def passwordish(v: str) -> bool:
    """A password value: not a template, type or stop word, at least 4 characters."""
    return len(v) >= 4 and not placeholder_value(v) and not v.isspace()


_DESCRIPTOR = re.compile(r"[a-z]+-[a-z]+")  # "case-sensitive", "auto-generated": what a password is like


def strong_value(v: str) -> bool:
    """A password said in prose: has a digit, a symbol or mixed case (not 'stored', 'the', nor
    two lower-case words hyphenated: 'case-sensitive'), or is a run of 18 letters or more (a
    passphrase run together: 'correcthorsebattery'; an English word that long is rare)."""
    if not passwordish(v) or _DESCRIPTOR.fullmatch(v):
        return False
    return (any(c.isdigit() for c in v) or any(not c.isalnum() for c in v)
            or any(c.isupper() for c in v[1:]) and any(c.islower() for c in v) or len(v) >= 18 and v.isalpha())


# Function words, and the words a sentence about a password uses (how it is, what was done to it).
_ABOUT = frozenset("""
    a an the and or but nor so yet if then than that this these those it its is are was were be been being am do
    does did done has have had having not no never always still just only also too very quite really rather
    of in on at to for from by with without about into onto over under after before since until while as
    i me my mine you your yours he him his she her hers we us our ours they them their theirs who whom whose which
    what when where why how all any each every some most more less few many much other another same such own
    can could will would shall should may might must need needs
    weak strong secure insecure short long simple easy hard complex unique random different wrong invalid valid
    new old default temporary required mandatory optional visible hidden sensitive strict lowercase uppercase
    numeric alphanumeric encrypted hashed public private shared personal expired incorrect empty blank guess
    guessable memorable remember forgot forget reset change changed set stored saved written sent known
    letters numbers symbols characters digits word words name birthday date one two three four five
    now today yesterday tomorrow week month year days months years time times there here please thanks
    kinda sorta lol haha ugh tbh super pretty so again enough fine okay ok good bad great awful terrible horrible
    annoying impossible ridiculous crazy stupid dumb silly weird obvious predictable safe unsafe broken lost
    locked stuck gone stolen online offline somewhere anywhere everywhere nowhere something nothing
""".split())


_INFLECTED = ("ed", "ing", "ly")  # "expiring soon", "finally working", "stored safely": how a password is


def dictionary_phrase(v: str) -> bool:
    """Four words or more, none a word about a password; a sentence about one starts with how it
    is ("finally working", "being reset"), so an -ed, -ing or -ly word may not come first, and at
    least two words are not of that kind ("purple elephant dancing quietly" is a passphrase)."""
    words = v.lower().split()
    if len(words) < 4 or any(w in _ABOUT for w in words) or words[0].endswith(_INFLECTED):
        return False
    return sum(not w.endswith(_INFLECTED) for w in words) >= 2


def passphrase(v: str) -> bool:
    """A quoted value with spaces: three words or more (a passphrase, as 'correct-horse-battery-staple'
    is one hyphenated), or two that mix classes ('Sup3r secret'); two plain words ('too short') describe."""
    words = v.split()
    return len(words) >= 3 or len(words) == 2 and strong_value("".join(words))


# What follows "password" without a verb is usually a topic word; a value there needs letters and
# a digit or a typed symbol (not "'" "-" "/": "password-less", "Manager's", "reset/recovery"), and
# is no algorithm or standard named after it ("password SHA256 hash", "password WPA2 protected").
_SYMBOLS = frozenset("!@#$%^&*+=?~|<>")
_ALGO = re.compile(r"(?:sha|md|aes|rsa|ecdsa|ed|pbkdf|argon|bcrypt|scrypt|hmac|des|crc|utf|base|rfc|iso|tls|ssl|"
                   r"http|wpa|wep|v|x)[-_]?\d+[a-z]{0,2}", re.I)


def bare_value(v: str) -> bool:
    return (strong_value(v) and any(c.isalpha() for c in v)
            and any(c.isdigit() or c in _SYMBOLS for c in v) and not _ALGO.fullmatch(v))


def mixed(v: str) -> bool:
    """A password with no name to go by: letters and digits, and a typed symbol or the case and
    class changing as a generated one's does ("Kx9mPq2vL"; not "Office365", "Main2Activity")."""
    if not bare_value(v):
        return False
    if any(c in _SYMBOLS for c in v):
        return True
    changes = sum(1 for a, b in zip(v, v[1:]) if a.isupper() != b.isupper() or a.isdigit() != b.isdigit())
    return len(v) >= 8 and any(c.isupper() for c in v) and any(c.islower() for c in v) and changes >= 0.5 * len(v)


# What a password has that a name, an address, a path, a version or a time zone has not: letters
# and digits, none of "@ + / \\ | = : ; , ( ) < > [ ] { }" (an "@" only as _AT_IN_PW says), and a
# typed symbol of a password's few ("Kx9#mPq2vL"), or else (after a login word or a privileged
# account only) a generated look ("Kx9mPq2vLz") or a word and a year ("Summer2024").
_PW_SYMBOLS = frozenset("!#$%^&*?~")
_NOT_IN_PW = frozenset("@+/\\|=:;,()<>[]{}")
_VERSION = re.compile(r"[A-Za-z]*[\-_.]?v?\d+(?:\.\d+)+[A-Za-z]*", re.I)
_TZ = re.compile(r"(?:utc|gmt|cet|cest|est|pst)[\-−]?\d{1,2}(?::?\d{2})?", re.I)
_WORD_YEAR = re.compile(r"[A-Z][a-z]{2,12}(?:19|20)\d\d[!#$%^&*?~.]*")


# An "@" inside a word, a letter after it and no dot ("P@ssw0rd1", "P@55word"), is a typed symbol
# where the case is mixed; one before a domain, a version or a host is not ("a@example.com",
# "Next.js@14", "deploy@web01").
_AT_IN_PW = re.compile(r"[^@]+@[^@.]*[A-Za-z][^@.]*")


def pw_shaped(v: str, loose: bool = False) -> bool:
    if not 6 <= len(v) <= 64 or placeholder_value(v):
        return False
    mixed_case = any(c.isupper() for c in v) and any(c.islower() for c in v)
    odd = {c for c in v if c in _NOT_IN_PW}
    if odd and not (odd == {"@"} and mixed_case and _AT_IN_PW.fullmatch(v)):
        return False
    if not (any(c.isalpha() for c in v) and any(c.isdigit() for c in v)):
        return False
    if _ALGO.fullmatch(v) or _VERSION.fullmatch(v) or _TZ.fullmatch(v):
        return False
    if (odd or any(c in _PW_SYMBOLS for c in v)) and mixed_case:
        return True
    return loose and (any(c in _PW_SYMBOLS for c in v) or mixed(v) or _WORD_YEAR.fullmatch(v) is not None)


def pw_loose(v: str) -> bool:
    return pw_shaped(v, loose=True)


# After "log in as <account> with": what it logs in with, by its place. A word with digits is a
# password there too ("toor123", "admin2024"); a way of logging in is not ("with OAuth2",
# "with YubiKey5", "with SSO", "with token2": a name, not its value).
_HOW_LOGIN = re.compile(r"(?:oauth|openid|oidc|fido|u2f|saml|webauthn|yubikey|kerberos|krb|ldap|[12]fa|mfa|totp|otp|"
                        r"ssh|sso|windows|win|azure|entra|okta|passkey|key|token|card|smartcard|cert|ntlm|radius)"
                        r"(?:[-_.]?(?:keys?|auth|login|app))?[-_.]?v?\d{0,4}", re.I)


def pw_as(v: str) -> bool:
    if _HOW_LOGIN.fullmatch(v):
        return False
    return pw_loose(v) or (6 <= len(v) <= 64 and v.isalnum() and v.isascii() and not v.isdigit()
                            and any(c.isdigit() for c in v) and not placeholder_value(v) and not _ALGO.fullmatch(v))
