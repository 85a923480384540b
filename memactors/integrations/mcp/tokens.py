"""Bearer tokens for the MCP server's HTTP transport, mapped to actors. The token file holds
only SHA-256 digests (a token is 32 random bytes: a plain digest cannot be reversed or guessed),
so reading the file never yields a usable token; ``mint`` prints a new one once.

File (JSON): ``{"tokens": [{"sha256": "<hex>", "actor": "<actor>"}, ...]}``.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets

from ...core.errors import ConfigError
from ...core.scopes import check_identifier


def digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


def load(path: str) -> dict[str, str]:
    """digest -> actor. A missing, unreadable or malformed file is a ConfigError (nothing of it echoed)."""
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
        entries = data["tokens"]
        out = {}
        for e in entries:
            h, actor = e["sha256"], e["actor"]
            if not (isinstance(h, str) and len(h) == 64 and all(c in "0123456789abcdef" for c in h)):
                raise ValueError("sha256")
            out[h] = check_identifier(actor, "actor")
        return out
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ConfigError(f"the token file {path} cannot be used ({type(exc).__name__}); "
                          "make one with `memactors mcp token ACTOR --tokens FILE`") from None


def mint(path: str, actor: str) -> str:
    """A new token for ``actor``, its digest added to ``path`` (created 0600). Returns the token:
    shown once, never stored."""
    check_identifier(actor, "actor")
    entries = []
    if os.path.exists(path):
        load(path)  # refuses a broken file before it is rewritten
        with open(path, encoding="utf-8") as f:
            entries = json.load(f)["tokens"]
    token = "mat_" + secrets.token_urlsafe(32)
    entries.append({"sha256": digest(token), "actor": actor})
    fd = os.open(path + ".tmp", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        json.dump({"tokens": entries}, f, indent=1)
    os.replace(path + ".tmp", path)
    return token


def actor_of(table: dict[str, str], token: str | None) -> str | None:
    """The actor a presented token maps to, or None (missing or unknown)."""
    if not token:
        return None
    h = digest(token)
    for known, actor in table.items():  # constant time per entry: no early exit on a prefix
        if hmac.compare_digest(known, h):
            return actor
    return None
