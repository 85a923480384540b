"""Bearer tokens for the MCP server's HTTP transport, mapped to actors. The token file holds
only SHA-256 digests (a token is 32 random bytes: a plain digest cannot be reversed or guessed),
so reading the file never yields a usable token; ``mint`` prints a new one once.

File (JSON): ``{"tokens": [{"sha256": "<hex>", "actor": "<actor>"}, ...]}``.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import os
import secrets
import tempfile

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
    except (OSError, ValueError, KeyError, TypeError, RecursionError) as exc:  # RecursionError: nested past the limit
        raise _unusable(path, exc) from None


def version(path: str) -> tuple:
    """What changes when the file does: its mtime, inode and size (a file replaced, or edited
    within one tick of the coarse mtime clock, still reads as changed). A missing file, or one
    other users may write (they could add a token for any actor), is a ConfigError."""
    try:
        st = os.stat(path)
    except OSError as exc:
        raise _unusable(path, exc) from None
    if os.name == "posix" and st.st_mode & 0o022:
        raise ConfigError(f"the token file {path} is writable by other users, who could add a token for any "
                          f"actor: `chmod 600 {path}`")
    if os.name == "posix" and st.st_uid != os.geteuid():
        # a file another user owns (planted, or a link to one) is theirs to fill with tokens
        raise ConfigError(f"the token file {path} belongs to another user, who could add a token for any actor: "
                          "make one of your own with `memactors mcp token ACTOR --tokens FILE`")
    return (st.st_mtime_ns, st.st_ino, st.st_size)


def _unusable(path: str, exc: Exception) -> ConfigError:
    return ConfigError(f"the token file {path} cannot be used ({type(exc).__name__}); "
                       "make one with `memactors mcp token ACTOR --tokens FILE`")


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
    # a new file of our own (O_EXCL, 0600): never one planted beside it, or a symlink, in a shared folder
    fd, tmp = tempfile.mkstemp(prefix=os.path.basename(path) + ".", suffix=".tmp", dir=os.path.dirname(path) or ".")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump({"tokens": entries}, f, indent=1)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
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
