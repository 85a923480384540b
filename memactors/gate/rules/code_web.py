"""Attack payloads against a web application, a service's sandbox or its logger, kept in a
memory that a page, a query or a log line may one day run. Code only, as ``code.py``'s shell
rules are (``shell_rule``: code blocks, every block of tool output, HTML code elements).
"""

from __future__ import annotations

from .code import shell_rule
from .lazy import re

_LOG4J_HIDDEN = re.compile(r"\$\{(?:(?:lower|upper):|[^{}]*?:-)([^{}]*)\}", re.I)  # ${lower:j}, ${::-j}, ${env:X:-j}
_JNDI = re.compile(r"\$\{\s*jndi\s*:\s*(?:ldaps?|rmi|dns|iiop|corba|nds|nis|https?)\s*:", re.I)


def _jndi_lookup(text: str) -> bool:
    """A Log4j lookup that names JNDI and a remote protocol once its nested lookups are read for
    what they yield ("${${lower:j}${::-n}di:ldap://...}" is "${jndi:ldap://...}")."""
    for _ in range(8):  # as deep as the pattern nests, and then some
        text, n = _LOG4J_HIDDEN.subn(r"\1", text)
        if not n:
            break
    return _JNDI.match(text) is not None


# Attack payloads against a web application kept in a memory that a page or a query may one day
# run: a SQL injection (a tautology after a closing quote, a stacked or UNION query with a comment),
# a script that reads the page's cookies or storage or sends them away, an event handler or a
# javascript: URL with a call in it, a template expression that climbs to Python's or Java's runtime,
# a way out of a JavaScript sandbox, and a Log4j lookup that loads a class from afar.
shell_rule("code.web_payload", re.compile(
    r"(?<![\w'])'\s*(?:or|OR|Or)\s+(?:'(\w{1,12})'\s*=\s*'\1(?=[\s'\"]|$)"
    r"|(\d{1,6})\s*=\s*\2\b(?:\s*(?:--|#|/\*)|'?\s*$))"
    r"|\b(?:admin|root|user)'\s*(?:--|#|/\*)"
    r"|'\s*;\s*(?:shutdown|exec\s+xp_cmdshell|waitfor\s+delay)\b"
    r"|\bunion\s+(?:all\s+)?select\s+(?:null\s*,\s*){1,}|\bunion\s+(?:all\s+)?select\b[^\n;]{0,120}?"
    r"(?:@@version|information_schema|mysql\.user|pg_shadow|password[^\n;]{0,40}?\bfrom\b)"
    r"|<script\b[^>]{0,200}>[^<]{0,500}?(?:document\.cookie|localStorage|sessionStorage|\bfetch\s*\(|XMLHttpRequest"
    r"|new\s+Image\b|\beval\s*\(|\batob\s*\()"
    # (an event handler's code starts with its call: onerror=alert(1), onload="fetch(...)")
    r"|\bon(?:error|load|focus|mouseover)\s*=\s*[\"']?\s*(?:javascript:\s*)?"
    r"(?:alert|prompt|confirm|eval|fetch|document\.|window\.|location)\b"
    r"|\bhref\s*=\s*[\"']?\s*javascript:\s*[\w.]+\s*\("
    r"|\{\{[^}\n]{0,200}?(?:__class__|__globals__|__builtins__|__subclasses__|__mro__|__import__|\.popen\s*\()"
    r"|\$\{\s*T\s*\(\s*java\.lang\.Runtime\s*\)"
    # a JavaScript sandbox left through a function's constructor (Node's vm, vm2): "this.constructor.constructor(
    # 'return process')()"; a Log4j lookup that loads a class from afar (Log4Shell), however its lookups hide it
    r"|\bconstructor(?:[\"'`]\s*\])?\s*(?:\.\s*constructor|\[\s*[\"'`]constructor[\"'`]\s*\])\s*\(\s*[\"'`]\s*return\s+"
    r"(?:process|this|global(?:This)?)\b"
    r"|(?P<jndi>\$\{(?:[^{}\n]|\$\{(?:[^{}\n]|\$\{[^{}\n]{0,40}\}){0,80}\}){1,300}\})"
    # the page's cookies or storage sent off by script outside a tag ("fetch('https://x/?c=' + document.cookie)",
    # "new Image().src = '...' + localStorage.getItem('token')")
    r"|\b(?:fetch|navigator\.sendBeacon|\.open)\s*\([^)\n]{0,200}?\+\s*(?:document\.cookie|(?:local|session)Storage\b)"
    r"|\.src\s*=\s*[^;\n]{0,200}?\+\s*(?:document\.cookie|(?:local|session)Storage\b)"
    # a web shell: what the request carries run as a command or code ("<?php system($_GET['cmd']); ?>")
    r"|\b(?:system|exec|shell_exec|passthru|popen|proc_open|eval|assert|pcntl_exec)\s*\(\s*"
    r"\$_(?:GET|POST|REQUEST|COOKIE)\b",
    re.I),
    (), "an attack payload against a web application (SQL injection, a cookie-stealing script or event handler, "
        "a server-side template injection or sandbox escape, a Log4Shell lookup, a web shell)",
    "OWASP Top 10 A03 (injection), CWE-89, CWE-79, CWE-1336; PortSwigger's SQLi, XSS and SSTI cheat sheets; "
    "CVE-2021-44228 (Log4Shell); MITRE ATT&CK T1505.003 (web shell)",
    check=lambda m: m.group("jndi") is None or _jndi_lookup(m.group("jndi")),
    itriggers=("' or", "'or", "'--", "' --", "'#", "union", "<script", "onerror", "onload", "onfocus", "onmouseover",
               "javascript:", "{{", "java.lang.runtime", "xp_cmdshell", "waitfor", "document.cookie", "localstorage",
               "sessionstorage", "$_get", "$_post", "$_request", "$_cookie", "constructor", "${"))
