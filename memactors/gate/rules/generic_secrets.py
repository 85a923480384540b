"""Secrets without a provider prefix: values assigned to secret-looking names (``password=``,
``"api_key": ...``, ``密码：...``), the same said in a sentence ("my password is ..."), and
generated-looking string literals in code.

Two tiers of names, as gitleaks' generic-api-key and detect-secrets' KeywordDetector do it:
a *password* name makes any real value a secret; a weaker name (token, secret, api_key) needs a
value that looks generated (length, entropy, letters and digits), so ``max_tokens: 4096`` and
``token_type: bearer`` stay clean.
"""

from __future__ import annotations

from .lazy import re

from ..tree import CODE, DOC, KV, SENTENCE
from .base import (CONFIDENTIAL, RESTRICTED, SECRET, Ctx, Rule, entropy, found, has_assignment, has_token, randomish,
                   register, words)
from .password_values import (bare_value, dictionary_phrase, mixed, passphrase, passwordish, pw_as, pw_loose,
                              pw_shaped, strong_value)
from .secrets import placeholder_value

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
# The name *ends* with the secret word (db_password, userPassword, X-Api-Key), so
# password_policy, token_count, key_id are not secret names. The long words count glued on too
# (PGPASSWORD, ROOTPASSWORD, newpassword: env vars and form fields); the short ones only after a
# separator (bypass, compass, ppw are not passwords).
# A wireless network's key (wpa_supplicant's psk=, hostapd's wpa_psk=, wifi_key) is its password, as any
# pre-shared key is.
_STRONG = re.compile(r"(?:password|passwd|passphrase)$|(?:^|[_\-. ])(?:pwd|pass|pw|passcode|psk)$|密码|密碼|口令"
                     r"|(?:^|[_\-. ])(?:wifi|wi[_\-]fi|wlan|wireless|hotspot|network|wpa|wep)[_\-. ]?(?:key|passkey)$")
_WEAK = re.compile(r"(?:^|[_\-. ])(?:secret|token|auth|authorization|credentials?|creds|bearer|cookie|"
                   r"(?:api|access|secret|private|auth|client|master|signing|app|account|service|encryption|session|"
                   r"db|database|x[_\-]api)[_\-. ]?key|apikey|secret[_\-. ]access[_\-. ]key)$|密钥|密鑰|秘钥|秘鑰|私钥|私鑰|令牌")
_NAME_TRIGGERS = ("pass", "pwd", "pw", "psk", "secret", "token", "key", "auth", "cred", "bearer", "cookie",
                  "密码", "密碼", "口令", "密钥", "密鑰", "秘钥", "秘鑰", "私钥", "私鑰", "令牌")


# A secret's name with a word after it that says how the value is written or kept (Rails'
# SECRET_KEY_BASE, api_key_b64, password_hex): a secret still, judged as a weak name's value is.
_FORM_SUFFIX = re.compile(r"[_\-. ](?:base|value|val|str|string|b64|base64|hex|raw|data|bytes)$")


def _name_tier(key: str) -> int:
    k = _CAMEL.sub("_", key.strip("\"'")).lower()
    if _STRONG.search(k):
        return 2
    if _WEAK.search(k):
        return 1
    k = _FORM_SUFFIX.sub("", k)
    return 1 if _STRONG.search(k) or _WEAK.search(k) else 0


def secretish(v: str) -> bool:
    """Generated-looking: >= 10 characters, no spaces, entropy >= 3 bits/char, letters and
    digits (or >= 20 characters of entropy >= 3.7 for letters-only keys)."""
    if len(v) < 10 or " " in v or placeholder_value(v):
        return False
    e = entropy(v)
    has_d = any(c.isdigit() for c in v)
    has_a = any(c.isalpha() for c in v)
    return e >= 3.0 and (has_d and has_a or len(v) >= 20 and e >= 3.7)


_URL = re.compile(r"[a-z][a-z0-9+.\-]*://([^/?#\s]*)(.*)", re.I | re.S)


def _plain_url(v: str) -> bool:
    """A URL with no credentials in it: no user:password@ and no random-looking part in its path
    or query ("https://auth.example.com/realms/acme" names a place, not a secret)."""
    m = _URL.fullmatch(v)
    if m is None:
        return False
    if "@" in m.group(1):
        return False
    return not any(randomish(p) or secretish_part(p) for p in re.split(r"[/?#&=;]", m.group(2)) if p)


def secretish_part(p: str) -> bool:
    """A URL's part that looks generated: 20 characters or more, letters and digits, high entropy."""
    return len(p) >= 20 and entropy(p) >= 3.5 and any(c.isdigit() for c in p) and any(c.isalpha() for c in p)


_DOTTED = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+")


def _reference(ctx: Ctx, node, v: str) -> bool:
    """An unquoted value that names something else: a call or index (``getenv(...)``,
    ``os.environ[...]``), an attribute (``form.password.data``), a variable (``user_password``)."""
    if node.vstart > 0 and ctx.text[node.vstart - 1] in "\"'`":
        return False  # a quoted literal is a value
    if ctx.text[node.vend : node.vend + 1] in ("(", "["):
        return True
    return _names_a_variable(v)


_SNAKE = re.compile(r"_*[a-z]+(?:_+[a-z]+)+_*")
# One lower-case word made only of a secret's name words is a variable too ("key_passphrase=passphrase",
# "api_key=apikey"); with a word of its own in it, it is a value ("DB_PASSWORD=topsecret").
_NAME_WORDS = re.compile(r"(?:pass(?:word|wd|phrase)?|pwd|secret|token|key|api|auth|access|private|client|db|user)+")


def _names_a_variable(v: str) -> bool:
    """An attribute (``form.password.data``) or a variable named for a secret (``user_password``)."""
    if _DOTTED.fullmatch(v) and not any(c.isdigit() for c in v.rsplit(".", 1)[1]):
        return True
    if _NAME_WORDS.fullmatch(v):
        return True
    return _SNAKE.fullmatch(v) is not None and any(w in v for w in ("pass", "secret", "token", "key"))


_PROSE_AFTER = re.compile(r",?[ \t]+\w")


_YAML_PARENT = re.compile(r"^([ \t]*)(?:- )?[\"']?([A-Za-z_][\w.\-]*)[\"']?:[ \t]*$")


def _yaml_parent(ctx: Ctx, node) -> str:
    """The YAML key a bare ``key:`` sits under ("api:\n  key: ..." is the api key), or ""."""
    ls = ctx.text.rfind("\n", 0, node.start) + 1
    indent = len(ctx.text[ls : node.start]) - len(ctx.text[ls : node.start].lstrip(" \t-"))
    pos = ls - 1
    for _ in range(20):  # a few lines up: a parent far above is a long mapping, not a pair
        if pos <= 0:
            return ""
        ps = ctx.text.rfind("\n", 0, pos) + 1
        m = _YAML_PARENT.match(ctx.text, ps, pos)
        line = ctx.text[ps:pos]
        if line.strip() and len(line) - len(line.lstrip(" \t")) < indent:
            return m.group(2) if m else ""
        pos = ps - 1
    return ""


def _assigned(node, ctx: Ctx):
    tier = _name_tier(node.meta)
    if not tier and node.meta.strip("\"'").lower() == "key" and node.vstart >= 0:
        tier = _name_tier(_yaml_parent(ctx, node) + "_key")
    if not tier or node.vstart < 0:
        return
    v = ctx.text[node.vstart : node.vend].strip()
    if v.lower() in ("bearer", "basic", "token"):  # Authorization: Bearer <x>: the header rule reads it
        return
    if _reference(ctx, node, v):
        return
    if ctx.text[max(0, node.start - 2) : node.vstart].lstrip().startswith("${"):
        if v[:1] == "?" or v.rstrip("}") in ("-", "="):
            return  # a shell expansion's error message or empty default: ${DB_PASSWORD:?required}, ${DB_PASSWORD:-}
        # a default that is a value, ${DB_PASSWORD:-Xk9#mQ2vLp7}, is one; judged without the
        # expansion's operator and closing brace (${DB_PASS:-changeme} is a placeholder's default)
        v = v[1:] if v[:1] in ("-", "=", "+") else v
        v = v[:-1] if v.endswith("}") and "{" not in v else v
    if tier == 2 and v.isalpha() and node.meta.strip("\"' ").lower() in ("pass", "pw") \
            and _PROSE_AFTER.match(ctx.text, node.vend):
        # "pass" names a pass as often as a password: a word of a label's text that goes on is no
        # value ("Boarding pass: Passengers should proceed to gate 12", "Bus pass: Monthly, valid")
        return
    if tier == 2 and passwordish(v) or tier == 1 and secretish(v) and not _plain_url(v):
        yield node.vstart, node.vend


register(Rule(
    id="secret.assigned", generic=True, category=SECRET, sensitivity=RESTRICTED, placeholder="[SECRET]", risk=0.9,
    binds=(KV,), find=_assigned, itriggers=_NAME_TRIGGERS, guard=has_assignment,
    reason="value assigned to a password/secret/token/api-key name",
    origin="gitleaks generic-api-key (names, entropy >= 3.5 on weak names); detect-secrets KeywordDetector denylist",
))

# The same in a sentence: "my wifi password is hunter2", "密码是abc123", "the API token is ...".
_PW_NAME = r"(?:password|passwd|pwd|pw|passphrase|passcode|pin(?:[ _\-]?code|[ _\-]?number)?)"  # pin_code, pinCode too
_PW_VALUE = r"[\"'“`]?([^\s\"'”`，。；,;]{4,64})"
# "<name> [for|of|to|on|at <up to four words>] is|was|:|'s ... <value>": "the password for the
# staging server is ...", "Alice's password's ..."
_OF_WHAT = r"(?:\s+(?:for|of|to|on|at)(?:\s+(?!(?:is|was|has|had|became)\b)[\w\-'’]+){1,4}?)?"
_EN_PW_HEAD = (r"(?:\b|(?<=_))" + _PW_NAME + r"\b" + _OF_WHAT + r"\s*"
               r"(?:(?:is|was|has been|had been)\s+(?:changed|set|updated|reset)\s+to"
               r"|(?:changed|set|updated|reset) to|is now|became|is|was|'s|’s|=|:)\s*")
_EN_PW = re.compile(_EN_PW_HEAD + _PW_VALUE, re.I)
# A quoted value with spaces in it: "the password is 'correct horse battery staple'" (judged by
# passphrase: three words or more, or two that mix classes; 'too short' is a description).
_EN_PW_QUOTED = re.compile(_EN_PW_HEAD + r"[\"'“‘`]([^\"'“”‘’`\n]{1,64}\s[^\"'“”‘’`\n]{1,64})[\"'”’`]", re.I)
# No verb and no colon, the value right after the name: "WiFi password Sunshine2024!",
# "username alice, password Sup3rS3cret!". Judged harder (bare_value): a word after "password"
# is usually what the sentence is about ("password reset", "password manager").
_EN_PW_BARE = re.compile(r"(?:\b|(?<=_))(?:password|passwd|pwd|passphrase|passcode)\s+([^\s\"'“”`，。；,;()<>]{4,64})", re.I)
# "changed her password to ...", "set the wifi password to ...": the verb before the name
_EN_PW_SET = re.compile(r"\b(?:chang|set|reset|updat|switch)\w*\s+(?:[\w\-'’]+\s+){0,4}?" + _PW_NAME
                        + r"\s+(?:to|as)\s+" + _PW_VALUE, re.I)
# "use ... as the VPN password": the value before the name, the name last ("as the password
# manager" names no password)
_EN_PW_USE = re.compile(r"\buse[sd]?\s+" + _PW_VALUE + r"[\"'”`]?\s+as\s+(?:the\s+|my\s+|our\s+|your\s+|a\s+)?"
                        r"(?:[\w\-]+\s+){0,2}" + _PW_NAME + r"\b(?!\s*[\w\-])", re.I)
# Words said after the name, unquoted, to the end of the sentence: "my password is correct horse
# battery staple" (a passphrase of dictionary words, as Diceware and xkcd 936 make them). Judged
# by dictionary_phrase: four words or more, none of them the words a sentence *about* the
# password is made of ("is too short and easy to guess", "was changed by the admin last week").
_EN_PW_WORDS = re.compile(_EN_PW_HEAD + r"((?:[A-Za-z]{2,15}[ ]){3,7}[A-Za-z]{2,15})(?=[ \t]*(?:[.!;,)\n]|$))", re.I)
# Digits said one by one: "my PIN is 4 8 2 1", "passcode: 8-4-2-9-1-3" (four to eight, each alone)
_EN_PW_SPACED = re.compile(_EN_PW_HEAD + r"(\d(?:[ \t.\-]\d){3,7})(?![\w.\-]|[ \t]\d)", re.I)
# An aside between the name and the value, the value last in its sentence: "my password is the same as
# my email one, sunshine88", "the PIN is, as always, 4471". ("... is the same as before, but longer": no value.)
_EN_PW_ASIDE = re.compile(
    _EN_PW_HEAD + r"(?:,\s*)?(?:(?:the\s+)?same\s+as|like|similar\s+to|as\s+(?:always|usual|before)|of\s+course|again|"
    r"still|basically|just|simply|now)\b[^.,;:!?\n]{0,40}?,\s*" + _PW_VALUE + r"(?=[\"'”`]?[ \t]*(?:[.!;)\n]|$))", re.I)
_EN_FORMS = (_EN_PW, _EN_PW_QUOTED, _EN_PW_BARE, _EN_PW_SET, _EN_PW_USE, _EN_PW_WORDS, _EN_PW_ASIDE)
_PW_NAMES = ("password", "passwd", "pwd", "pw", "passphrase", "passcode", "pin")  # _PW_NAME's words, lower case
_SET_VERBS = ("chang", "set", "updat", "switch")  # _EN_PW_SET's ("reset" holds "set")
# Simplified and traditional characters: 密码 / 密碼, 为 / 為, 设 / 設, 换 / 換
_ZH_PW = re.compile(r"(?:密码|密碼|口令|pin码|PIN码|pin碼|PIN碼)\s*(?:是|为|為|：|:|=|改成了?|改为|改為|设置为|設置為|設定為|设为|設為|"
                    r"换成了?|換成了?)\s*[\"'“`]?([!-~]{4,64})")
# The same in the languages a user of a European or East Asian product says it in: the word for a
# password, a copula or a colon, the value (judged as the English one is: a digit, a symbol or mixed case).
# of what: "del wifi", "für das WLAN", "du routeur", "da conta", "от почты", "do poczty"
_INTL_OF = (r"(?:\s+(?:del|de|für|vom|von|des|du|da|do|della|di|od|dla|от|для|för|voor|van|per)(?:\s+(?:la|el|mi|das|den|die|"
            r"meinen?|le|mon|ma|a|o|il|mio))?\s+[\w\-]+){0,2}")
_INTL_PW = re.compile(r"(?:\b(?:contraseña|contrasena|clave|password|passwort|kennwort|mot de passe|mdp|senha|wachtwoord|"
                      r"parola|lösenord|losenord|hasło|haslo|salasana|пароль|şifre[mn]?|sifre[mn]?|şifreniz|parolam)"
                      r"|パスワード|暗証番号|비밀번호|암호|पासवर्ड)" + _INTL_OF +
                      # Polish "hasło to ...", French "le mdp c'est ...", Russian "пароль это ..." (English
                      # "password to the vault" names what it opens: "to" is no copula after "password")
                      r"\s*(?:(?:\b(?:es|era|is|ist|war|lautet|est|était|etait|é|è|är|jest|c['’]est|это|(?<!password )to)\b"
                      r"|[:：=—\-]|は|が|는|은)\s*)+"
                      r"[\"'“`«„]?([!-~](?<![\"'`])[!-~]{3,63})", re.I)
# No verb and no colon, the value right after the word (or after "of what", or one word naming the
# thing: "MDP wifi ..."): "пароль Tr0ub4dor&3x", "contraseña ...", "密码 ...", "wifi 密码 ...". Judged
# as the English bare form is (bare_value). Words that mean something else too stay out ("clave" is
# a key idea, "parola" a word, "password" has its own English form).
_INTL_BARE = re.compile(r"(?:(?:\b(?:contraseña|contrasena|passwort|kennwort|mot de passe|mdp|senha|wachtwoord|lösenord|"
                        r"losenord|hasło|haslo|salasana|пароль|şifre[mn]?|sifre[mn]?|şifreniz|parolam)" + _INTL_OF
                        + r"(?:\s+[^\W\d_]{2,12})?\s+)|(?:パスワード|暗証番号|비밀번호|암호|密码|密碼|口令|पासवर्ड)\s*)"
                        r"([!-~](?<![\"'`(<])[!-~]{3,63})", re.I)  # an ASCII value: "パスワードは8文字以上" is a rule
# The CJK words with digits alone after them, no copula: "银行卡密码 4821", "保险箱密码 36-24-12",
# "门禁密码 2468#" (a PIN, a safe's combination, a keypad code: in these languages the word says
# password or PIN whatever follows). Not a count or a date ("密码 8位以上", "密码 2023年改过").
_CJK_PW_DIGITS = re.compile(r"(?:密码|密碼|口令|暗証番号|비밀번호|암호|パスワード)[ \t]*(\d{4,12}#?|\d{1,6}(?:[\-#]\d{1,6}){1,5}#?)"
                            r"(?![\d年月日号號位个個次条條字元块塊分秒天周週岁歲%]|[.,:/\-]\d|[ \t]*(?:位|个|個|字|次|年))")


def _cjk_digits(v: str) -> bool:
    """Not a date (2023-01-05, 05-01-2023, 5-1-23): a safe's "36-24-12" is no day and month."""
    parts = v.rstrip("#").split("-")
    if len(parts) != 3:
        return True
    a, b, c = (int(p) for p in parts)
    if len(parts[0]) == 4:  # the year first
        return not (1 <= b <= 12 and 1 <= c <= 31)
    return not (1 <= a <= 31 and 1 <= b <= 31 and (a <= 12 or b <= 12))  # day-month or month-day, then the year


_BARE_WORDS = ("contrase", "passwort", "kennwort", "mot de passe", "mdp", "senha", "wachtwoord", "lösenord", "losenord",
               "hasło", "haslo", "salasana", "пароль", "şifre", "sifre", "parolam", "パスワード", "暗証番号", "비밀번호", "암호",
               "密码", "密碼", "口令", "पासवर्ड")  # _INTL_BARE's words
_INTL_WORDS = ("contrase", "clave", "password", "passwort", "kennwort", "mot de passe", "mdp", "senha", "wachtwoord",
               "parola", "lösenord", "losenord", "hasło", "haslo", "salasana", "пароль", "şifre", "sifre", "パスワード",
               "暗証番号", "비밀번호", "암호", "密码", "密碼", "口令", "पासवर्ड")
# "the API key for staging is ...", "my private key is 0x4c08..." (an Ethereum key: 64 hex)
# (a recovery, master or encryption key is one by name: "the vault recovery key is R3c0v3ry-K3y-2024!")
_EN_TOKEN = re.compile(r"\b(?:api[ _-]?key|access key|secret key|private key|token|secret|(?:recovery|master|encryption|"
                       r"decryption|unlock|unseal|signing|hmac|wallet)[ _-]key|密钥|密鑰|令牌|秘钥|秘鑰)"
                       + _OF_WHAT + r"\s*(?:is|was|:|=|是|为|為|：)\s*[\"'“`]?([A-Za-z0-9._~+/=\-!@#$%^&*?|]{10,200})", re.I)
# With no verb, a value only of the shapes services issue keys in: a UUID (Heroku) or a run of hex
# ("heroku api key 01234567-89ab-...", "datadog api key 3f9c...")
_EN_TOKEN_BARE = re.compile(r"\b(?:api[ _-]?key|access[ _-]token|auth[ _-]token|secret[ _-]key)[ \t]+"
                            r"([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|[0-9a-f]{32,64})(?![\w\-])", re.I)
# A disk's recovery key as BitLocker prints it: eight groups of six digits
_RECOVERY_DIGITS = re.compile(r"\brecovery[ _-]?(?:key|password)\b[^\n\d]{0,20}?(\d{6}(?:-\d{6}){7})(?![\w\-])", re.I)
# A service's key named as the user's own with a value drawn at random after it ("Here is my cohere
# key: 3Xk9pQ2m...", "our mistral key is ..."): judged by randomish (upper, lower and digits, a key's
# entropy), so a GPG key id, a house key or a product name stays; a public or a host key is no secret.
_EN_NAMED_KEY = re.compile(r"\b(?:my|our|the|your|his|her|their)\s+(?:(?!(?:public|host|gpg|pgp|license|licence|product)\b)[\w\-]+\s+){1,2}key\s*(?:is|was|:|=)\s*[\"'“`]?"
                           r"([A-Za-z0-9._~+/=\-]{16,200})", re.I)
# A wireless network's key is its password ("the wifi WPA2 key is correct-horse-42", "WLAN-Schlüssel"
# aside): judged as a password said in prose, not as a generated key (_EN_NAMED_KEY's).
_WIFI_HEAD = (r"\b(?:wi-?fi|wlan|wpa[23]?(?:-psk)?|wep|hotspot|network|router)"
              r"(?:\s+(?:wpa[23]?(?:-psk)?|wep|network|security|wireless))?"
              r"\s+(?:key|passkey|pass\s?key|network\s+key)\b\s*(?:is|was|=|:)\s*")
_WIFI_KEY = re.compile(_WIFI_HEAD + _PW_VALUE, re.I)
# ... and in quotes, any 8 to 63 characters (WPA's passphrase): 'the wifi key is "correcthorsebatterystaple"'
_WIFI_KEY_QUOTED = re.compile(_WIFI_HEAD + r"[\"'“`]([^\"'”`\n]{8,63})[\"'”`]", re.I)
# A card's, a bank's or a phone's PIN with the number first: "pin 4821 for my debit card", "PIN: 0415 on
# the SIM" (the name first, "my debit card PIN is 4821", is _EN_PW's).
_PIN_OF = re.compile(r"\bpin(?:[ _\-]?(?:code|number))?[ \t]*[:#]?[ \t]*(\d{4,8})[ \t]+(?:is[ \t]+)?(?:for|of|on|to)[ \t]+"
                     r"(?:(?:the|my|our|your|his|her|their|a)[ \t]+)?(?:[\w'’\-]+[ \t]+){0,2}?"
                     r"(?:card|bank|atm|sim|phone|account|visa|mastercard|amex|debit|credit)\b", re.I)
# The name first in another language, digits after a copula ("meine PIN ist 4821", "mon code PIN est
# 4821", "il mio codice PIN è 4821", "Geheimzahl: 0815"); not a count of them ("PIN ist 4-stellig").
_INTL_PIN = re.compile(r"\b(?:(?:pin|geheimzahl|code pin|c[óo]digo pin|codice pin)\s+(?:ist|lautet|war|est|était|etait|"
                       r"es|era|è|é)|(?:geheimzahl|code pin|c[óo]digo pin|codice pin)\s*[:：=])\s*(\d{4,8})(?![\w\-.,]\d|[\w\-])",
                       re.I)
_TRAIL = ".,!?:;)]}>\"'”’`"
# A setting named as code names it, set in a sentence: "set SECRET_KEY to 'django-insecure-...'",
# "change DB_PASSWORD to Tr0ub4dor&3", "export apiToken as ...": the name a secret's (``_name_tier``).
_NAME_SET = re.compile(r"\b(?:set|setting|export|change|changed|update|updated)\s+(?:the\s+|my\s+|our\s+)?"
                       r"([A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+|[a-z]+[A-Z][A-Za-z0-9]*)\s+(?:to|as)\s+"
                       r"[\"'“`]?([^\s\"'”`]{6,200})", re.I)


def _named_settings(node, ctx: Ctx):
    for m in _NAME_SET.finditer(ctx.text, node.start, node.end):
        vs, ve = m.span(2)
        while ve > vs and ctx.text[ve - 1] in _TRAIL:
            ve -= 1
        tier, v = _name_tier(m.group(1)), ctx.text[vs:ve]
        if tier == 2 and strong_value(v) or tier == 1 and secretish(v):
            yield vs, ve


# A login and its password as a pair, with no password word: after a login word ("login for the
# router: admin / ...", "creds are jdoe:..."), a privileged account's name glued to it ("root:...",
# "admin/..."), or an account's service and a spaced slash ("gmail: alice.w / ..."). Only the
# password is taken, and only a password-shaped one (pw_shaped): a label's "X / Y" is mostly
# anything else ("Contact: Alice / alice@example.com", "Time zone: CET / UTC+1", "Stack: React /
# Next.js@14"), as are a login URL, a log line ("login=alice|status=ok") and a passwd line.
_PAIR_PW = r"(?:\s*/\s*|\s*:\s*)([^\s\"'`]{4,64})"
_PAIR_LOGIN = re.compile(r"\b(?:login|log[- ]?in|logon|log on|sign[- ]?in|creds|credentials)\b[^\n:：=|]{0,30}?"
                         r"(?:[:：=]|\b(?:is|are|with|as|using)\b)\s*[A-Za-z][\w.\-@+]{0,63}" + _PAIR_PW, re.I)
# "log in as root with toor123!": the account named, then what it logs in with
_LOGIN_AS = re.compile(r"\b(?:log[- ]?in|logon|log on|sign[- ]?in)\s+as\s+[A-Za-z][\w.\-@+]{0,63}\s+"
                       r"(?:with|using)(?:\s*:)?\s+"
                       r"(?:(?:the|a)\s+)?(?:password|pw|passcode)?\s*[\"'“`]?([^\s\"'”`]{4,64}?)[\"'”`]?"
                       r"(?=[\s.,;]*(?:\s|$))", re.I)
# glued: "root:Kx9#mPq2vL", "admin/Kx9#mPq2vL" ("Admin: alice@example.com" is a label, "Square root:
# sqrt(x)" a heading)
_PAIR_ADMIN = re.compile(r"(?<![\w/.\-])(?:root|admin|administrator|postgres|superuser)[/:]([^\s\"'`]{4,64})", re.I)
_SERVICES = (r"gmail|g-?mail|e-?mail|mail|outlook|hotmail|yahoo|icloud|proton(?:mail)?|netflix|spotify|facebook|instagram|"
             r"twitter|amazon|paypal|github|gitlab|bank|router|vpn|ssh|s?ftp|server|account|wi-?fi|wlan|hotspot")
_PAIR_SERVICE = re.compile(r"(?i:\b(?:" + _SERVICES + r"))[ \t]*[:：][ \t]*[A-Za-z][\w.\-@+]{0,63}[ \t]+/[ \t]+"
                           r"([^\s\"'`]{4,64})")
# "Use Kx9#mPq2vL to log in": a value used to get in
_USE_LOGIN = re.compile(r"\buse\s+[\"'“`]?([^\s\"'”`]{4,64}?)[\"'”`]?\s+to\s+(?:log\s*(?:in|on)|login|sign\s*(?:in|on)|unlock)\b",
                        re.I)
_PAIR_FORMS = (_PAIR_LOGIN, _LOGIN_AS, _PAIR_ADMIN, _PAIR_SERVICE, _USE_LOGIN)
_PAIR_WORDS = ("login", "log in", "log-in", "logon", "log on", "sign", "cred", "root", "admin", "superuser", "postgres",
               "unlock")  # a word of the pair forms (lower case); the service form needs " / "


# "p@ssw0rd", "pa$$word", "P4SSWORD": the name read with its look-alike characters as letters
# (one for one, so a span in the read text is the same span in the text; the value is judged as written).
_LEET_NAME = re.compile(r"[pP][aA@4][sS$5][sS$5][wW](?:[oO0][rR])?[dD]")
_LEET = str.maketrans("@4$50", "aasso")


# India's postal code is the "PIN code" (Postal Index Number, six digits: "pin_code: 560001", "The
# PIN code for Bandra West is 400050"). A six-digit value named "pin code"/"pincode" is one,
# unless a card, bank, SIM, phone, account, door or lock stands right before the name or in its
# "for/of ..." ("SIM PIN code: 123456", "the pin code for my debit card is 482193"). A bank
# PIN is four digits, or six after "pin", "PIN number", "card PIN": those stay passwords.
_PIN_CODE = re.compile(r"pin[ _\-]?code", re.I)
_PIN_OWNER = (r"(?:card|cards|debit|credit|atm|bank|banking|sim|phone|mobile|handset|device|account|door|lock|locker|"
              r"safe|alarm|keypad|upi|wallet|app|login|voicemail|puk|router|wifi|laptop|tablet|iphone|android)")
_PIN_OWNER_BEFORE = re.compile(r"\b" + _PIN_OWNER + r"(?:['’]s)?(?:[ \t]+[a-z]+){0,2}[ \t]*$")
_PIN_OWNER_IN = re.compile(r"\b" + _PIN_OWNER + r"\b")


def _postal_pin(text: str, m: re.Match, value: str) -> bool:
    """``value`` is an Indian postal PIN code named by the match (see _PIN_CODE above)."""
    if len(value) != 6 or not value.isdigit():
        return False
    said = text[m.start() : m.end()]
    if _PIN_CODE.search(said) is None:
        return False
    line = text.rfind("\n", 0, m.start()) + 1
    before = words(text[max(line, m.start() - 40) : m.start()])
    return _PIN_OWNER_BEFORE.search(before) is None and _PIN_OWNER_IN.search(words(said)) is None


# The bare form after a CJK (or Hindi) word has no space to end the word's sentence: "密码 password1
# 太常见了" and "パスワード ABC-123 は無効です" say what a password may not be. A value there is taken
# when it looks generated or typed with a symbol (mixed: "密码 Kx9#mPq2vL").
_CJK_BARE = ("パスワード", "暗証番号", "비밀번호", "암호", "密码", "密碼", "口令", "पासवर्ड")
# "MDP" is French for a password in lower case ("mdp"); in capitals it is as often a Markov decision
# process ("an MDP M=(S,A,P,R)", "The MDP has |S|=12 states"): taken with a French word in the
# sentence, or a password-shaped value ("MDP wifi Kx9#mPq2vL").
_FRENCH = re.compile(r"\b(?:le|la|les|mon|ma|mes|ton|ta|son|sa|notre|votre|du|des|est|c['’]est|pour|avec|oublié)\b", re.I)


def _other_sense(ctx: Ctx, node, rx, m: re.Match, v: str) -> bool:
    if rx in (_EN_PW, _INTL_PW) and "=" in ctx.text[m.start() : m.start(1)] \
            and ctx.text[m.start(1) - 1] not in "\"'“`" and _names_a_variable(v):
        return True  # code: "password = self.password", "password=form_password"
    if rx is _INTL_BARE and m.group(0).startswith(_CJK_BARE) and not mixed(v):
        return True
    if rx is _INTL_PW or rx is _INTL_BARE:
        name = m.group(0)[:3]
        if name.lower() == "mdp" and name != "mdp":
            return not (pw_shaped(v) or _FRENCH.search(ctx.text, node.start, node.end))
    return False


# A network key as routers print and people pick them: password-shaped, a word with digits, words and
# digits hyphenated ("correct-horse-42") or 8 digits or more (WPA's shortest key); not a standard's
# name ("WPA2-Personal"), a range ("8-63"), code ("self.keys[0]") or a sentence about it.
_HYPHENED = re.compile(r"[A-Za-z0-9]+(?:-[A-Za-z0-9]+)+")


def _wifi_value(v: str) -> bool:
    if pw_as(v):
        return True
    if v.isdigit():
        return 8 <= len(v) <= 63
    parts = v.split("-")
    return (8 <= len(v) <= 63 and _HYPHENED.fullmatch(v) is not None and not v.lower().startswith(("wpa", "wep", "wps"))
            and any(p.isdigit() and len(p) >= 2 for p in parts) and sum(p.isalpha() for p in parts) >= 2
            and not placeholder_value(v))


def _random_key(v: str) -> bool:
    return randomish(v.replace("-", "").replace("_", ""))


def _any(v: str) -> bool:
    return True


def _quoted_key(v: str) -> bool:
    """A quoted wireless key: one run of characters, or words as a passphrase is ("sunny day at the
    beach"; "printed on the router" says where it is)."""
    v = v.strip()
    return not placeholder_value(v) and (" " not in v or dictionary_phrase(v))


_NAMED = ("named", "leet")  # an English form's: one of _PW_NAMES in the text, or a leet name in the sentence
# Each form, how its value is judged, and the words it needs in the text (each tuple: one of them):
# "pass" selects the rule in "passed" and "passion" too, so a form runs only where its own words are.
_FORMS = ((_EN_PW, strong_value, (_NAMED,)), (_EN_PW_QUOTED, passphrase, (_NAMED,)),
          (_EN_PW_ASIDE, strong_value, (_NAMED,)),
          (_EN_PW_BARE, bare_value, (_NAMED,)), (_EN_PW_SET, strong_value, (_NAMED, ("set",))),
          (_EN_PW_USE, strong_value, (_NAMED, ("use",))), (_EN_PW_WORDS, dictionary_phrase, (_NAMED,)),
          (_EN_PW_SPACED, _any, (_NAMED,)),
          (_ZH_PW, passwordish, ()), (_INTL_PW, strong_value, (("intl",),)), (_INTL_BARE, bare_value, (("bare",),)),
          (_CJK_PW_DIGITS, _cjk_digits, (("bare",),)), (_EN_TOKEN, secretish, ()), (_EN_TOKEN_BARE, secretish, ()),
          (_RECOVERY_DIGITS, _any, (("recovery",),)),
          (_PAIR_LOGIN, pw_loose, (("pairs",),)), (_LOGIN_AS, pw_as, (("pairs",),)),
          (_PAIR_ADMIN, pw_loose, (("pairs",),)), (_PAIR_SERVICE, pw_shaped, (("pairs",),)),
          (_USE_LOGIN, pw_shaped, (("pairs",),)),
          (_EN_NAMED_KEY, _random_key, (("key",),)), (_WIFI_KEY, _wifi_value, (("key",),)),
          (_WIFI_KEY_QUOTED, _quoted_key, (("key",),)),
          (_PIN_OF, _any, (("pin",),)),
          (_INTL_PIN, _any, (("pin", "geheimzahl"),)))


def _runnable(ctx: Ctx) -> tuple[dict[str, bool], tuple, tuple]:
    """Which of the forms' words the whole text holds, and the forms that may run without and with
    a leet name in the sentence: looked at once a text, not once a sentence (10,000 one-word
    lines of "pw" took 3.3 s)."""
    got = ctx.cache.get("pw_forms")
    if got is None:
        low = ctx.lower
        have = {"named": any(w in low for w in _PW_NAMES), "set": any(v in low for v in _SET_VERBS),
                "intl": any(w in low for w in _INTL_WORDS), "bare": any(w in low for w in _BARE_WORDS),
                "pairs": " / " in ctx.text or any(w in low for w in _PAIR_WORDS),
                **{w: w in low for w in ("use", "key", "pin", "geheimzahl", " to ", " as ", "recovery")}}
        got = ctx.cache["pw_forms"] = (have, *(
            tuple(f for f in _FORMS if all(any(with_leet[w] for w in one_of) for one_of in f[2]))
            for with_leet in ({**have, "leet": False}, {**have, "leet": True})))
    return got


_USE_REACH = 200  # past a sentence's end: a value (64 at most), "as the", two words and the name


def _phrase(node, ctx: Ctx):
    leet = _LEET_NAME.search(ctx.text, node.start, node.end) is not None
    have, plain, leeted = _runnable(ctx)
    for rx, ok, _ in leeted if leet else plain:
        # (the leet reading made once a scan, not once a sentence)
        read = (ctx.cache.get("leet") or ctx.cache.setdefault("leet", ctx.text.translate(_LEET))
                if leet and rx in _EN_FORMS else ctx.text)
        # "Use Hunter2! as the VPN password": the value's "!" ends a sentence before the name;
        # a use-form starting in this sentence is read on into its block, as far as one form
        # reaches (to the block's end, each sentence of a long block read it all again)
        end = min(node.parent.end, node.end + _USE_REACH) if rx is _EN_PW_USE and node.parent is not None else node.end
        for m in rx.finditer(read, node.start, end):
            if m.start() >= node.end:
                break
            s, e = m.span(1)
            while e > s and ctx.text[e - 1] in _TRAIL:
                e -= 1
            if e > s and ok(ctx.text[s:e]) and not (rx in _EN_FORMS and _postal_pin(ctx.text, m, ctx.text[s:e])) \
                    and not _other_sense(ctx, node, rx, m, ctx.text[s:e]):
                yield s, e
    if have[" to "] or have[" as "]:  # a setting named as code names it: the name says how to read the value
        yield from _named_settings(node, ctx)


register(Rule(
    id="secret.credential_phrase", generic=True, category=SECRET, sensitivity=RESTRICTED, placeholder="[PASSWORD]", risk=0.9,
    binds=(SENTENCE,), find=_phrase,
    # a leet name; a login pair or a value used to log in (see _PAIR_FORMS)
    trigger=found(_LEET_NAME.pattern + r"|(?i:\b(?:login|log[ -]in|logon|log on|sign-?in|sign in|creds|credentials)\b)"
                  r"|(?i:\b(?:root|admin|administrator|postgres|superuser))[/:][^\s/]"
                  r"|(?i:\b(?:" + _SERVICES + r"))[ \t]*[:：][ \t]*[A-Za-z][\w.\-@+]{0,63}[ \t]+/[ \t]+[^\s/]", ascii=True),
    itriggers=("pass", "pwd", "pin ", "pin:", "pin_", " key:", " key is", " key was", " key =", " key=", "pincode", "pin-code", "pinnumber", "geheimzahl", "pin码", "pin碼", "密码", "密碼", "口令", "api", "access key", "private key",
               "secret", "token",
               "密钥", "密鑰", "令牌", "秘钥", "秘鑰", "contraseña", "contrasena", "clave", "kennwort", "senha", "wachtwoord", "parola", "lösenord",
               "losenord", "hasło", "haslo", "salasana", "пароль", "パスワード", "暗証番号", "비밀번호", "암호",
               "mdp", "şifre", "sifre", "पासवर्ड", "pw"),
    reason="a password or token stated in a sentence (is/是/为/: + value), or a login's password (user / password)",
    origin="detect-secrets KeywordDetector's 'password is' forms, extended to Chinese (密码是/为)",
))

# A generated-looking string literal in code with no name to go by (detect-secrets'
# Base64/HexHighEntropyString idea, made length-aware and tested against identifiers: see
# randomish). Hex is what digests and commit ids look like too, so a hex literal counts only
# as a call argument (``Client("9f86...")``), never compared (``== "9f86..."``) nor named like
# an id or a hash. Unsure either way, so redacted rather than blocked.
_LITERAL = re.compile(r"""(["'])([A-Za-z0-9+/=_\-]{24,})\1""")
_QUOTED = re.compile(r"""["'][A-Za-z0-9+/=_\-]{24}""")
_HEX = re.compile(r"[0-9a-f]{32,}|[0-9A-F]{32,}")
_ARG_BEFORE = re.compile(r"[(,]\s*(?:\w+\s*=\s*)?$")
_IDLIKE = re.compile(r"(?:^|[_\-. ])(?:id|uuid|guid|hash|digest|sha\d*|md5|etag|nonce|trace|span|request|checksum|"
                     r"commit|version|signature|sig|path|url|name|ref)$", re.I)


def _hex_argument(ctx: Ctx, m: re.Match) -> bool:
    v = m.group(2)
    if not _HEX.fullmatch(v) or entropy(v) < 3.0 or v.isdigit() or v.isalpha():
        return False
    line_start = ctx.text.rfind("\n", 0, m.start()) + 1
    return _ARG_BEFORE.search(ctx.text, line_start, m.start()) is not None


def _literal(node, ctx: Ctx):
    kv_at = None
    for m in _LITERAL.finditer(ctx.text, node.start, node.end):
        if not (randomish(m.group(2)) or _hex_argument(ctx, m)):
            continue
        if kv_at is None:
            kv_at = {n.vstart: n.meta for n in ctx.tree.kvs}
        key = kv_at.get(m.start(2))
        if key is not None and (_IDLIKE.search(_CAMEL.sub("_", key).lower()) or _name_tier(key)):
            continue  # id-like names are not secrets; secret names are secret.assigned's
        yield m.span(2)


register(Rule(
    id="secret.high_entropy_literal", generic=True, category=SECRET, sensitivity=CONFIDENTIAL, placeholder="[SECRET]", risk=0.6,
    binds=(CODE,), find=_literal, guard=has_token, trigger=found(_QUOTED.pattern),
    reason="unnamed random-looking string literal in code (letters and digits, or hex passed as an argument)",
    origin="detect-secrets Base64HighEntropyString / HexHighEntropyString, length-aware and restricted to code",
))

# Passwords on a command line, where the flag says what the value is: curl's -u user:password,
# the MySQL clients' -pPASSWORD (glued: "-p" alone prompts, "-p db" names a database), a
# registry login's -p/--password (and the Azure CLI's), sshpass -p, openssl's pass:, any --*password flag. A shell
# variable, a template or "-" (stdin) is not a value (placeholder_value).
_V = r"""(?:'([^'\n]+)'|"([^"\n]+)"|([^\s'"]+))"""  # quoted (the quotes left out) or a bare word
# the same command: no pipe, no separator before the flag, and at most 1,000 characters on (a line of
# "curl curl curl ..." read to its end from every curl took 1.4 s at 32,000 characters)
_CMD = r"[^\n|;&]{0,1000}?\s"
_CLI_PW = re.compile(
    r"\bcurl\b" + _CMD + r"(?:-u|--user)(?:\s+|=)?(?:'[^':\n]*:([^'\n]+)'|\"[^\":\n]*:([^\"\n]+)\"|[^\s:'\"]*:([^\s'\"]+))"
    r"|\b(?:mysql|mysqldump|mysqladmin|mysqlimport|mysqlsh|mariadb|mariadb-dump)\b" + _CMD + r"-p" + _V
    + r"|\b(?:docker|podman|buildah|skopeo|nerdctl|oras|helm(?:\s+registry)?|az(?:\s+acr)?)\s+login\b" + _CMD
    + r"(?:-p|--password)(?:\s+|=)" + _V
    + r"|\bsshpass\s+(?:-[A-Za-z]\S*\s+)*?-p\s*" + _V
    + r"|\s-pass(?:in|out)?\s+pass:" + _V
    + r"|(?<!\S)--(?:[a-z]+-)*(?:password|passwd)(?:\s+|=)" + _V, re.ASCII)


_PROSE_WORD = re.compile(r"[a-z]+[.,;:!?)]*")
_CERT_PATH = re.compile(r"(?:~|\.{1,2})?/[\w./-]*\.(?:pem|crt|cer|pfx|p12|key)")  # "az login -p ~/certs/app.pem"


def _command_line(node, ctx: Ctx):
    for m in _CLI_PW.finditer(ctx.text, node.start, node.end):
        g = next(i for i in range(1, _CLI_PW.groups + 1) if m.group(i) is not None)
        # a word after the flag in prose is what the sentence says of it ("the --password flag is
        # deprecated", "--password option removed"), not a value; nor is a certificate's path
        if passwordish(m.group(g)) and not _PROSE_WORD.fullmatch(m.group(g)) and not _CERT_PATH.fullmatch(m.group(g)):
            yield m.span(g)


register(Rule(
    id="secret.command_line", generic=True, category=SECRET, sensitivity=RESTRICTED, placeholder="[PASSWORD]", risk=0.9,
    binds=(DOC,), find=_command_line, itriggers=("curl", "mysql", "mariadb", "sshpass", "-pass"),
    trigger=found(r"\blogin\b[^\n]*\s(?:-p|--password)[\s=]|--(?:[a-z]+-)*(?:password|passwd)[\s=]", ascii=True),
    reason="a password given to a command on its command line (curl -u, mysql -p, docker login -p, sshpass -p)",
    origin="gitleaks curl-auth-user and generic password rules; the flags from each tool's manual",
))

# Config formats that name the password without "=" or ":": a .netrc entry ("machine host login
# alice password Tr0ub4dor", on one line or several) and an XML or HTML element named like a
# secret (<password>, <db:password>, <apiKey>: the element's name judged as a key's is).
# An entry starts a line and names the login ("the machine learning password reset" is prose).
_NETRC = re.compile(r"^[ \t]*(?:machine[ \t]+\S+|default)\s+login\s+\S+(?:\s+account\s+\S+)?\s+password\s+(\S+)", re.M)
_XML = re.compile(r"<((?:[\w.\-]+:)?([\w.\-]+))(?:\s[^<>]*)?>\s*(?:<!\[CDATA\[(.*?)\]\]>|([^<\s][^<]*?))\s*</\1\s*>")
# A .pgpass line, host:port:database:user:password ("*" for any of the first four, "\:" a colon
# inside one): a host with a letter, a dot or "*", a port, a user with a letter ("2024:01:15:10:30"
# is a time).
_PGPASS = re.compile(r"^[ \t]*(?=[^:\n]*[A-Za-z.*])[\w.\-*\[\]]+:(?:\d{1,5}|\*):(?:[^:\n\\]|\\.)+:"
                     r"(?=(?:[^:\n\\]|\\.)*[A-Za-z*])(?:[^:\n\\]|\\.)+:((?:[^:\s\\]|\\.)+)[ \t]*$", re.M)


# A secret's name and its value as two members of one entry: a Kubernetes env entry ("- name:
# DB_PASSWORD" and "value: ..." on the next line), a .NET <add key="ApiKey" value="..." />, an
# AWS-style {"Name": ..., "Value": ...}. And a shell that sets a variable with no "=": fish's
# "set -x API_TOKEN ...", csh's setenv, Windows' setx.
_NAME_VALUE = re.compile(r"(?i:\b(?:name|key))[\"']?\s*[:=]\s*[\"']?([A-Za-z_][\w.\-]{0,60})[\"']?[^\n]{0,40}?(?:\n[^\n]{0,40}?)?"
                         r"(?i:\bvalue)[\"']?\s*[:=]\s*(?:\"([^\"\n]*)\"|'([^'\n]*)'|([^\s\"',}>]+))")
_SET_VAR = re.compile(r"^[ \t]*(?:set[ \t]+(?:-[a-zA-Z]+[ \t]+|--\w+[ \t]+)+|setenv[ \t]+|setx[ \t]+)([A-Za-z_]\w*)[ \t]+"
                      r"(?:\"([^\"\n]*)\"|'([^'\n]*)'|([^\s\"';]+))", re.M)


def _named(tier: int, v: str) -> bool:
    """A name/value entry's or a shell set's value: any real one for a password name; for a weak
    name (auth, token, key) one that looks generated, as a weak name's assignment is judged, and
    longer than a word with a version ("oauth2-pkce", "Basic-auth-v2", "Windows-v2" name a scheme)."""
    if tier == 2:
        return passwordish(v)
    return tier == 1 and secretish(v) and not _plain_url(v) and (randomish(v) or len(v) >= 16 and entropy(v) >= 3.5)


def _config_file(node, ctx: Ctx):
    for rx in (_NETRC, _PGPASS):
        for m in rx.finditer(ctx.text, node.start, node.end):
            if passwordish(m.group(1)):
                yield m.span(1)
    for rx in (_NAME_VALUE, _SET_VAR):
        for m in rx.finditer(ctx.text, node.start, node.end):
            g = next(i for i in (2, 3, 4) if m.group(i) is not None)
            if _named(_name_tier(m.group(1)), m.group(g)):
                yield m.span(g)
    if "</" in ctx.text:
        for m in _XML.finditer(ctx.text, node.start, node.end):
            tier = _name_tier(m.group(2))
            g = 3 if m.group(3) is not None else 4
            v = m.group(g)
            if tier == 2 and passwordish(v) or tier == 1 and secretish(v):
                yield m.span(g)


register(Rule(
    id="secret.config_file", generic=True, category=SECRET, sensitivity=RESTRICTED, placeholder="[PASSWORD]", risk=0.9,
    binds=(DOC,), find=_config_file,
    itriggers=("password>", "passwd>", "pwd>", "pass>", "secret>", "token>", "key>", "credentials>"),
    trigger=found(r"\b(?:machine\s+\S+|default)\s+login\s|(?i:\bvalue)[\"']?\s*[:=]"
                  r"|(?:^|\n)[ \t]*(?:set[ \t]+-|setenv[ \t]|setx[ \t])"
                  r"|:(?:\d+|\*):[^:\n]+:[^:\n]+:[^:\s]", ascii=True),  # the last: a .pgpass line
    reason="a password in a .netrc entry or a .pgpass line, an XML element named like a secret, a name/value pair or a "
           "shell's set",
    origin="the .netrc format (inetutils ftp, curl --netrc); PostgreSQL's .pgpass; gitleaks generic rules for XML "
           "config; Kubernetes env, .NET appSettings, fish set -x, csh setenv",
))

# A wallet's BIP-39 recovery phrase: 12 to 24 words after a seed or recovery phrase word and a
# colon or "is". The words are checked by shape, not against the BIP-39 list (none in the
# dependencies): lower-case, 3 to 8 letters as every BIP-39 word is, and at most one of the
# commonest English words the list leaves out, so a sentence about the phrase is not one.
# (a bare "seed" is not one: "Seed list: tomato basil ...", "seed keywords" for a campaign; a wallet's,
# or one counted in words, is: "my 12-word seed: ...", "Ledger seed: ...")
_SEED = re.compile(r"(?i:\b(?:(?:seed|recovery|backup|secret|wallet|mnemonic)[ \t]+(?:phrase|words|seed)|mnemonic"
                   r"|(?:1[258]|2[14]|twelve|twenty[ \t-]four)[ \t-]words?[ \t]+(?:seed|phrase|backup|recovery)"
                   r"|(?:bitcoin|btc|crypto|ledger|trezor|metamask|exodus|phantom)[ \t]+seed)\b"
                   r"[^\n:=：]{0,40}?(?:[:=：]|\b(?:is|are|was|were)\b))\s*[\"'“]?"
                   r"((?:\d{1,2}[.)]\s*)?[A-Za-z][a-z]{2,7}(?:[\s,]+(?:\d{1,2}[.)]\s*)?[a-z]{3,8}){11,23})(?![A-Za-z])")
_NOT_BIP39 = frozenset("the and for with was are have from but not you your our its been were would should could which "
                       "who how why his her him has had did does their them".split())


def _seed_phrase(node, ctx: Ctx):
    for m in _SEED.finditer(ctx.text, node.start, node.end):
        words = re.findall(r"[A-Za-z]+", m.group(1))
        if sum(w.lower() in _NOT_BIP39 for w in words) <= 1:
            yield m.span(1)


register(Rule(
    id="secret.seed_phrase", generic=True, category=SECRET, sensitivity=RESTRICTED, placeholder="[SEED_PHRASE]", risk=1.0,
    binds=(DOC,), find=_seed_phrase, itriggers=("seed", "mnemonic", "recovery phrase", "backup phrase", "secret phrase",
                                               "recovery words", "wallet words", "word recovery", "word backup",
                                               "word phrase"),
    reason="a wallet's recovery (seed) phrase: 12 to 24 words after a seed or recovery phrase word",
    origin="BIP-39 mnemonic format (12-24 words of 3-8 letters); trufflehog's mnemonic detectors",
))

# Two-factor backup (recovery) codes: two or more codes after such a phrase, as the services
# print them: 8 digits (also "1234 5678"), or two groups of 4-5 letters and digits ("a1b2c-3d4e5").
_CODE = r"(?:\d{8}(?!\d)|\d{4}[ \-]\d{4}(?!\d)|[A-Za-z0-9]{4,5}-[A-Za-z0-9]{4,5}(?![A-Za-z0-9]))"
_BACKUP_CODES = re.compile(r"\b(?:backup|recovery|scratch|emergency|2fa|mfa|two[- ]factor|2-step)[ \t]+(?:[\w\-]+[ \t]+){0,2}?"
                           r"codes?\b[^\d\n]{0,30}?(?:\n[^\d\n]{0,10})?(?<![A-Za-z0-9])(" + _CODE + r"(?:[\s,;]+" + _CODE + r")+)", re.I)


_CODES = re.compile(_CODE)


def _backup_codes(node, ctx: Ctx):
    for m in _BACKUP_CODES.finditer(ctx.text, node.start, node.end):
        # every code has a digit: "well-known and-some" after "recovery codes" are words
        if all(any(c.isdigit() for c in code) for code in _CODES.findall(m.group(1))):
            yield m.span(1)


register(Rule(
    id="secret.backup_codes", generic=True, category=SECRET, sensitivity=RESTRICTED, placeholder="[BACKUP_CODES]", risk=1.0,
    binds=(DOC,), find=_backup_codes,
    itriggers=("backup code", "recovery code", "scratch code", "emergency code", "2fa code", "mfa code", "factor code",
               "2-step code"),
    reason="two-factor backup or recovery codes (two or more, after such a phrase)",
    origin="the backup-code formats of Google (8 digits), GitHub (5-5 hex) and others",
))
