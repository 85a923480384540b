"""Scopes as parsed paths of segments, and the identifiers inside them.

The tree (DESIGN section 4)::

    /global/
    /org/{org}/
    /org/{org}/user/{user}/
    /org/{org}/user/{user}/task/{task}/
    /org/{org}/project/{project}/

Scopes are compared as tuples of segments, never as string prefixes: /org/a/user/42/ is not an
ancestor of /org/a/user/420/. /global/ is the root: every scope has it as an ancestor.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from .errors import InvalidIdentifier, InvalidScope

# ASCII only: re.ASCII keeps \w-like classes out, and the explicit class admits nothing else
# (full-width digits, look-alike letters and quotes never pass).
_IDENT = re.compile(r"[A-Za-z0-9_.\-]{1,128}", re.ASCII)


def is_identifier(value: object) -> bool:
    return isinstance(value, str) and _IDENT.fullmatch(value) is not None and value not in (".", "..")


def check_identifier(value: object, what: str = "identifier") -> str:
    """Return ``value`` if it is a valid identifier, else raise InvalidIdentifier."""
    if not is_identifier(value):
        raise InvalidIdentifier(
            f"{what} is not valid ({describe(value)}): use 1-128 ASCII letters, digits, '-', '_' or '.', "
            "not '.' or '..'"
        )
    return value


_NAMED = {" ": "a space", "'": "a quote", '"': "a double quote", "\\": "a backslash", "/": "a slash",
          "`": "a backquote"}


def _char_class(c: str) -> str:
    """A rejected character described by its class, never shown when it could be part of a secret."""
    if c in _NAMED:
        return _NAMED[c]
    if not c.isascii():
        return "a non-ASCII character"
    if ord(c) < 32 or ord(c) == 127:
        return "a control character"
    return f"the punctuation mark {c!r}"  # one ASCII punctuation mark reveals nothing


def describe(value: object, alphabet: re.Pattern = re.compile(r"[A-Za-z0-9_.\-]", re.ASCII)) -> str:
    """What is wrong with a rejected identifier, without echoing it: its type, its length, and
    the first character outside ``alphabet`` by class and position."""
    if not isinstance(value, str):
        name = type(value).__name__
        return f"{'an' if name[0] in 'aeiou' else 'a'} {name}, not a string"
    if not value:
        return "empty"
    if value in (".", ".."):
        return "a bare dot name"
    bad = next((i for i, c in enumerate(value) if not alphabet.fullmatch(c)), None)
    parts = [f"{len(value)} characters"]
    if bad is not None:
        parts.append(f"position {bad + 1} is {_char_class(value[bad])}")
    elif len(value) > 128:
        parts.append("longer than 128")
    return ", ".join(parts)


@dataclass(frozen=True, slots=True)
class Scope:
    """One node of the scope tree, held as its path segments."""

    segments: tuple[str, ...]

    @property
    def kind(self) -> str:
        n = len(self.segments)
        if n == 1:
            return "global"
        if n == 2:
            return "org"
        return self.segments[-2]  # user, task or project

    @property
    def org(self) -> str | None:
        return self.segments[1] if self.segments[0] == "org" else None

    @property
    def parent(self) -> Scope | None:
        if self.segments == ("global",):
            return None
        if len(self.segments) == 2:
            return GLOBAL
        return Scope(self.segments[:-2])

    def ancestors(self) -> tuple[Scope, ...]:
        """This scope and every ancestor up to /global/, nearest first."""
        out = [self]
        p = self.parent
        while p is not None:
            out.append(p)
            p = p.parent
        return tuple(out)

    def is_ancestor_or_self(self, other: Scope) -> bool:
        """True when ``other`` is this scope or lies below it in the tree."""
        if self.segments == ("global",):
            return True
        n = len(self.segments)
        return other.segments[:n] == self.segments

    @property
    def depth(self) -> int:
        return 0 if self.segments == ("global",) else len(self.segments) // 2

    def __str__(self) -> str:
        return "/" + "/".join(self.segments) + "/"

    def __repr__(self) -> str:
        return f"Scope({str(self)!r})"


GLOBAL = Scope(("global",))

_CHILDREN = {1: ("user", "project"), 3: ("task",)}  # after /org/{org}: user|project; after user/{u}: task


@lru_cache(maxsize=65536)
def _parse(text: str) -> Scope:
    if not text.startswith("/"):
        raise InvalidScope(f"scope must start with '/' (got {describe(text)})")
    body = text[1:-1] if text.endswith("/") else text[1:]
    parts = tuple(body.split("/")) if body else ()
    if parts == ("global",):
        return GLOBAL
    if len(parts) < 2 or parts[0] != "org" or len(parts) % 2:
        raise InvalidScope(_form_error(text))
    check_identifier(parts[1], "org id")
    allowed_after_user = False
    for i in range(2, len(parts), 2):
        key, ident = parts[i], parts[i + 1]
        if i == 2 and key in ("user", "project"):
            allowed_after_user = key == "user"
        elif i == 4 and key == "task" and allowed_after_user:
            pass
        else:
            raise InvalidScope(_form_error(text))
        check_identifier(ident, f"{key} id")
    return Scope(parts)


def _form_error(text: str) -> str:
    # Described, never echoed: a scope path can carry whatever a caller pasted into it.
    parts = text.strip("/").split("/")
    return (
        f"scope of {len(text)} characters and {len(parts)} segments is not in the scope tree: use /global/, "
        "/org/ORG/, /org/ORG/user/USER/, /org/ORG/user/USER/task/TASK/ or /org/ORG/project/PROJECT/"
    )


def parse_scope(value: str | Scope) -> Scope:
    """Parse a scope path; raise InvalidScope or InvalidIdentifier if it is not one."""
    if isinstance(value, Scope):
        # A Scope is trusted only as this module makes it: one built by hand (any segments, of
        # any type) is parsed again from its path, so no unchecked identifier reaches a grant
        # check or a filter.
        segs = value.segments
        if type(segs) is tuple and all(type(x) is str for x in segs):
            canon = _parse("/" + "/".join(segs) + "/")
            if canon.segments == segs:
                return value
        raise InvalidScope("scope is not a node of the scope tree: build one with parse_scope('/org/ORG/...')")
    if not isinstance(value, str):
        raise InvalidScope("scope must be a string such as '/org/acme/user/alice/'")
    return _parse(value)


def visible_set(allowed: list[Scope]) -> list[Scope]:
    """Each allowed scope plus its ancestors, no duplicates, in a stable order.

    Descendants are never added: a parent reads a child only when the child is listed.
    """
    seen: dict[Scope, None] = {}
    for s in allowed:
        for a in s.ancestors():
            seen.setdefault(a, None)
    return list(seen)
