"""The ``re`` module with ``compile`` deferred to a pattern's first use, for the rule modules.

The rules hold ~500 patterns; compiling them all when the gate is imported took ~0.25 s of every
process's start (``connect()`` on the process host, each CLI verb, each Ray worker), while a text
runs only the rules its pre-scan selects. A rule module imports ``re`` from here and writes
``re.compile(...)`` as usual: it gets a ``Pattern`` that compiles itself the first time one of its
methods is looked up, then holds the compiled pattern's bound methods in its own slots (a lookup
as cheap as on the compiled pattern). Everything else (flags, ``re.escape``, ``re.sub`` with a
string) is the real module's.
"""

from __future__ import annotations

import re as _re

_METHODS = ("search", "match", "fullmatch", "finditer", "findall", "sub", "subn", "split")


class Pattern:
    __slots__ = ("pattern", "_flags", "_compiled", *_METHODS)

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self.pattern = pattern
        self._flags = flags
        self._compiled = None

    def compiled(self) -> _re.Pattern:
        rx = self._compiled
        if rx is None:  # two threads may both compile: the same pattern either way
            rx = _re.compile(self.pattern, self._flags)
            for name in _METHODS:
                setattr(self, name, getattr(rx, name))
            self._compiled = rx
        return rx

    def __getattr__(self, name: str):
        # Only for what no slot holds yet (a method before the first use) or at all (flags, groups, ...);
        # not for a private or special name (a copy or an unpickling asks before the slots are filled).
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self.compiled(), name)

    def __reduce__(self):
        return Pattern, (self.pattern, self._flags)

    def __repr__(self) -> str:
        return f"lazy.Pattern({self.pattern!r})"


class _Re:
    """``re`` itself, but ``compile`` (what the rule modules call at import)."""

    @staticmethod
    def compile(pattern: str, flags: int = 0) -> Pattern:
        return Pattern(pattern, flags)

    def __getattr__(self, name: str):
        return getattr(_re, name)


re = _Re()
