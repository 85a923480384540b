"""Gate rules: each independent, registered in ``RULES``, with a pre-scan cheap enough to run on
every text and a precise match that runs only where the pre-scan fires.

This issue wires two rules (Chinese mobile numbers, provider API keys); the full rule set is
its own issue and registers here the same way.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Iterator

BLOCK = "block"
REDACT = "redact"


@dataclass(frozen=True, slots=True)
class Rule:
    id: str
    category: str  # pii | secret | code | injection | low_value
    action: str  # block | redact
    placeholder: str  # typed placeholder written where a redacted value stood
    risk: float  # 0..1
    prescan: Callable[[str], bool]
    finditer: Callable[[str], Iterator[tuple[int, int]]]


def _regex_rule(rx: re.Pattern[str], group: int = 0) -> Callable[[str], Iterator[tuple[int, int]]]:
    def find(text: str) -> Iterator[tuple[int, int]]:
        for m in rx.finditer(text):
            yield m.span(group)

    return find


# Chinese mobile numbers: 11 digits, 1[3-9]x, optional +86 / 0086 / 86 prefix, optional
# space or dash separators in the 3-4-4 grouping (MIIT numbering plan; the same shape as the
# phone recognisers of Microsoft Presidio's zh recogniser set). Not inside a longer digit run.
_PHONE_CN = re.compile(
    r"(?<![0-9A-Za-z])(?<![0-9]\.)(?:(?:\+|00)?86[\s-]?)?1[3-9][0-9](?:[\s-]?[0-9]{4}){2}(?![0-9])",
    re.ASCII,
)
_DIGIT_RUN = re.compile(r"1[3-9][0-9]")

# Provider API keys by documented prefix (the same prefixes gitleaks' rules key on):
# OpenAI sk-/sk-proj-, Anthropic sk-ant-, GitHub ghp_/gho_/ghs_/ghu_/ghr_/github_pat_,
# GitLab glpat-, AWS access key ids AKIA/ASIA, Google AIza, Slack xox[abprs]-, Stripe sk_live_/rk_live_.
_API_KEY = re.compile(
    r"(?<![A-Za-z0-9_\-])(?:"
    r"sk-ant-[A-Za-z0-9_\-]{20,}"
    r"|sk-(?:proj-)?[A-Za-z0-9_\-]{20,}"
    r"|gh[pousr]_[A-Za-z0-9]{36,}"
    r"|github_pat_[A-Za-z0-9_]{22,}"
    r"|glpat-[A-Za-z0-9_\-]{20,}"
    r"|(?:AKIA|ASIA)[A-Z0-9]{16}"
    r"|AIza[0-9A-Za-z_\-]{35}"
    r"|xox[abprs]-[A-Za-z0-9\-]{10,}"
    r"|(?:sk|rk)_live_[A-Za-z0-9]{20,}"
    r")(?![A-Za-z0-9_\-])",
    re.ASCII,
)
_KEY_PREFIX = re.compile(r"sk-|gh[pousr]_|github_pat_|glpat-|AKIA|ASIA|AIza|xox[abprs]-|_live_", re.ASCII)

RULES: dict[str, Rule] = {}


def register(rule: Rule) -> Rule:
    if rule.id in RULES:
        raise ValueError(f"rule {rule.id} registered twice")
    RULES[rule.id] = rule
    return rule


register(
    Rule(
        id="pii.phone_cn",
        category="pii",
        action=REDACT,
        placeholder="[PHONE_CN]",
        risk=0.6,
        prescan=lambda t: _DIGIT_RUN.search(t) is not None,
        finditer=_regex_rule(_PHONE_CN),
    )
)
register(
    Rule(
        id="secret.api_key",
        category="secret",
        action=BLOCK,
        placeholder="[API_KEY]",
        risk=1.0,
        prescan=lambda t: _KEY_PREFIX.search(t) is not None,
        finditer=_regex_rule(_API_KEY),
    )
)
