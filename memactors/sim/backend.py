"""The protocol the runner drives, the tick's result, a registry of backends by name, and
``DictBackend``: a tiny in-memory reference (exact-match keyword scoring, ungoverned).

A backend is given each tick's actions, in the order the agents emitted them, and applies them in
batches: first every ``Observe`` (writes), then every ``Recall``, then every ``Forget``, each group
in action order. So a recall sees the tick's writes, and a memory forgotten at tick t may still
be recalled at tick t but never after: the metrics judge hits by that rule. ``TaskStart`` and
``TaskEnd`` mark session boundaries; a backend without sessions ignores them.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Protocol, runtime_checkable

import orjson

from ..core.scopes import parse_scope, visible_set
from .actions import Action, Forget, Observe, Recall


@dataclass(slots=True)
class TickResult:
    """What a backend did with one tick's actions, keyed by each action's index in the list.

    ``hits[i]``: for a Recall, its hits best first, as plain dicts with at least ``memory_id,
    scope, content, subject, predicate, object, score``. ``errors[i]``: for an action that failed
    or was refused, ``"ErrorClass: what went wrong"`` (never echoing content). ``info``: anything
    else worth reporting (write decisions by kind, say), summed over ticks when numeric."""

    hits: dict[int, list[dict]] = field(default_factory=dict)
    errors: dict[int, str] = field(default_factory=dict)
    info: dict = field(default_factory=dict)


@runtime_checkable
class MemoryBackend(Protocol):
    name: str
    governed: bool  # a governed backend's counters must be 0, or the run fails

    def setup(self, world) -> None:
        """Prepare storage and set up ``world.grants()``. Raise ImportError naming the extra to
        install when an optional dependency is missing (the runner then skips the backend)."""

    def apply(self, tick: int, now_us: int, actions: Sequence[Action]) -> TickResult:
        """Apply one tick's actions (writes, then recalls, then forgets) with the clock at ``now_us``."""

    def sweep(self, now_us: int) -> dict | None:
        """Run the lifecycle sweep (GC) as of ``now_us``; may be a no-op. Returns a summary."""

    def storage_paths(self) -> list[str]:
        """Files or folders holding everything the backend stored (flushed first): the runner
        scans their bytes for planted secrets. Called before ``close``."""

    def counts(self) -> dict[str, dict[str, int]]:
        """Memories by pool and status, ``{pool: {status: n}}``, as far as the backend knows."""

    def close(self) -> None: ...


def error_string(exc: BaseException) -> str:
    """``"ErrorClass: message"`` for TickResult.errors."""
    return f"{type(exc).__name__}: {exc}"


BackendFactory = Callable[[str], MemoryBackend]  # given a working folder of its own
BACKENDS: dict[str, BackendFactory] = {}


def register_backend(name: str, factory: BackendFactory) -> None:
    """Make a backend available by name (``--backend NAME``); ``factory(workdir)`` builds it."""
    BACKENDS[name] = factory


def visible_scopes(allowed: Sequence[str]) -> tuple[str, ...]:
    """The allowed scopes and their ancestors, as strings (what a recall may see)."""
    return _visible(tuple(allowed))


@lru_cache(maxsize=65_536)
def _visible(allowed: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(str(s) for s in visible_set([parse_scope(s) for s in allowed]))


_WORD = re.compile(r"[a-z0-9]+")
_STOP = frozenset("a an the and or of to in on at is are was be my your i you me it is what this that for".split())


def words(text: str) -> frozenset[str]:
    return frozenset(w for w in _WORD.findall(text.lower()) if w not in _STOP)


class DictBackend:
    """In-memory and ungoverned: it stores whatever it gets, in any scope, and a recall returns
    what the named scopes (and their ancestors) hold, ranked by the share of query words a memory
    contains (newest first among equals). With ``path``, ``storage_paths()`` dumps everything to a
    JSON-lines file there, so the secret scan has bytes to look at."""

    def __init__(self, name: str = "dict", *, governed: bool = False, path: str | None = None) -> None:
        self.name, self.governed, self.path = name, governed, path
        self._scopes: dict[str, list[dict]] = {}
        self._seq = 0

    def setup(self, world) -> None:
        self._scopes.clear()

    def apply(self, tick: int, now_us: int, actions: Sequence[Action]) -> TickResult:
        res = TickResult()
        for i, a in enumerate(actions):
            if isinstance(a, Observe):
                self._seq += 1
                self._scopes.setdefault(a.scope, []).append({
                    "memory_id": f"m{self._seq}", "scope": a.scope, "content": a.text, "subject": a.subject,
                    "predicate": a.predicate, "object": a.object, "source": a.source, "seq": self._seq,
                    "words": words(a.text)})
        for i, a in enumerate(actions):
            if isinstance(a, Recall):
                res.hits[i] = self._recall(a)
        for i, a in enumerate(actions):
            if isinstance(a, Forget):
                kept = [m for m in self._scopes.get(a.scope, ())
                        if not (m["subject"] == a.subject and m["predicate"] == a.predicate)]
                res.info["forgotten"] = res.info.get("forgotten", 0) + len(self._scopes.get(a.scope, ())) - len(kept)
                self._scopes[a.scope] = kept
        return res

    def _recall(self, a: Recall) -> list[dict]:
        q = words(a.query)
        if not q:
            return []
        scored = []
        for scope in visible_scopes(a.allowed_scopes):
            for m in self._scopes.get(scope, ()):
                n = len(q & m["words"])
                if n:
                    scored.append((n / len(q), m["seq"], m))
        scored.sort(key=lambda t: (-t[0], -t[1]))
        return [{k: m[k] for k in ("memory_id", "scope", "content", "subject", "predicate", "object")} | {"score": s}
                for s, _, m in scored[:a.top_k]]

    def sweep(self, now_us: int) -> dict | None:
        return None  # no lifecycle: nothing expires, nothing is evicted

    def storage_paths(self) -> list[str]:
        if not self.path:
            return []
        os.makedirs(self.path, exist_ok=True)
        file = os.path.join(self.path, "dict-store.jsonl")
        with open(file, "wb") as f:
            for ms in self._scopes.values():
                for m in ms:
                    f.write(orjson.dumps({k: v for k, v in m.items() if k != "words"}) + b"\n")
        return [file]

    def counts(self) -> dict[str, dict[str, int]]:
        return {"store": {"stored": sum(len(v) for v in self._scopes.values())}}

    def close(self) -> None:
        self._scopes.clear()


register_backend("dict", lambda workdir: DictBackend(path=workdir))
