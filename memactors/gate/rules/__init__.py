"""The gate's rules, one registry (``RULES``: rule id -> Rule). Importing this package
registers every rule module; a new rule module registers the same way and is listed here."""

from . import (access_codes, account_recovery, accounts, code, code_web, exfil, generic_secrets,  # noqa: F401
               injection, instructions, low_value, national_id, personal, phone, pii, secrets, special)  # registration
from .base import (BLOCK, CATEGORIES, CODE, CONFIDENTIAL, INJECTION, INTERNAL, LOW_VALUE, PII, REDACT, RESTRICTED,
                   RULES, SECRET, Ctx, Rule, register)

__all__ = ["RULES", "Rule", "Ctx", "register", "BLOCK", "REDACT", "CATEGORIES", "PII", "SECRET", "CODE", "INJECTION",
           "LOW_VALUE", "RESTRICTED", "CONFIDENTIAL", "INTERNAL"]
