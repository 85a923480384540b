"""What a recall returns: ``Hit`` (fields derived from the record's one description) and
``RecallResult``."""

from __future__ import annotations

from dataclasses import MISSING, dataclass, field, fields, make_dataclass

from ..core import records as R
from ..core.randoms import random_bytes

_PY = {"memory_id": str, "scope": str, "content": str, "version": int, "confidence": float, "importance": float,
       "created_at": int, "updated_at": int}

# A hit: the record's hit fields (memactors.core.records, role "hit"), then how it scored.
Hit = make_dataclass(
    "Hit",
    [(name, _PY.get(name, object), field(default=None)) for name in R.HIT_FIELDS]
    + [("score", float, field(default=0.0)),
       ("components", dict, field(default_factory=dict)),  # vector, keyword, recency, importance, each in [0, 1]
       ("relevance", float, field(default=0.0)),  # the fused score the threshold judged (before x0.5)
       ("similarity", float, field(default=0.0)),  # the query's cosine to the memory's vector, in [-1, 1]
       ("stale", bool, field(default=False)),  # soft-expired or marked stale: ranked at x0.5 of its relevance
       ("conflict", object, field(default=None))],  # {"overrides": [ids], "reason": ...} when it won a conflict
    slots=True, kw_only=True,
)
Hit.__module__ = __name__
Hit.__doc__ = ("One recalled memory: " + ", ".join(R.HIT_FIELDS) + "; then score, components (each in [0, 1]), "
               "relevance (what the threshold judged), similarity (the query's cosine to the memory's vector), "
               "stale (soft-expired or marked stale: ranked at half its relevance) and conflict (the ids it "
               "overrode, and why).")
HIT_ATTRS = tuple(f.name for f in fields(Hit))


def _to_dict(self) -> dict:
    return {k: getattr(self, k) for k in HIT_ATTRS}


Hit.to_dict = _to_dict


def _hit_from_source() -> str:
    """``hit_from``'s body, one line a field: what ``Hit(**{k: d[k] for k in HIT_ATTRS if k in
    d})`` does (a field the dict lacks takes its default), without building the keyword dict
    and binding it (3 us a hit, most of finishing a recall on the driver)."""
    lines = ["def hit_from(d):", "    h = _new(Hit)", "    get = d.get"]
    for f in fields(Hit):
        if f.default_factory is MISSING:
            _HIT_NS["_d_" + f.name] = f.default
            lines.append(f"    h.{f.name} = get({f.name!r}, _d_{f.name})")
        else:
            _HIT_NS["_f_" + f.name] = f.default_factory
            lines.append(f"    h.{f.name} = d[{f.name!r}] if {f.name!r} in d else _f_{f.name}()")
    return "\n".join(lines + ["    return h"])


_HIT_NS: dict = {"_new": object.__new__, "Hit": Hit}
exec(_hit_from_source(), _HIT_NS)  # noqa: S102 - our own source, from Hit's fields (as dataclasses builds __init__)
hit_from = _HIT_NS["hit_from"]
hit_from.__doc__ = "A ``Hit`` of an owner's hit dict (its keys Hit has no field for are left out)."


def new_recall_id() -> str:
    """A fresh recall id: ``uuid.uuid4().hex`` without building the UUID (half its cost)."""
    b = bytearray(random_bytes(16))
    b[6] = b[6] & 0x0F | 0x40  # version 4
    b[8] = b[8] & 0x3F | 0x80  # the RFC 4122 variant
    return b.hex()


@dataclass(slots=True)
class RecallResult:
    """What a recall returned. ``removed``: how many candidates each rule took out (conflict,
    threshold, max_items, budget, ...); ``threshold`` the relevance threshold applied and
    ``best_below`` the best relevance it removed (None: it removed none), so a thin recall can
    say what fell just short (``note()``)."""

    recall_id: str
    hits: list
    visible_scopes: list[str]
    path: str = "hot"  # hot | cold | mixed: where the candidates came from
    removed: dict = field(default_factory=dict)
    threshold: float | None = None
    best_below: float | None = None

    def to_dict(self) -> dict:
        return {"recall_id": self.recall_id, "hits": [h.to_dict() for h in self.hits],
                "visible_scopes": self.visible_scopes, "path": self.path, "removed": self.removed,
                "threshold": self.threshold, "best_below": self.best_below}

    def note(self, option: str = "threshold=") -> str | None:
        """One sentence on what the threshold removed (None when it removed nothing); ``option``
        names the setting to lower where the caller has its own (the CLI's ``--threshold``)."""
        n = self.removed.get("threshold", 0)
        if not n or self.best_below is None:
            return None
        return (f"{n} candidate{'s' if n != 1 else ''} fell under the relevance threshold {self.threshold:.2f} "
                f"(the best at {self.best_below:.2f}); a lower {option} would return "
                f"{'them' if n != 1 else 'it'}")


def recall_result(chosen: list[dict], info: dict, *, visible: list[str], path: str, threshold: float,
                  **removed: int) -> RecallResult:
    """The result of ``core.selection.finalize``'s ``chosen`` and ``info`` (``removed``: counts
    of rules applied before it, e.g. L3's gate), under a fresh recall id."""
    return RecallResult(recall_id=new_recall_id(), hits=[hit_from(h) for h in chosen], visible_scopes=visible,
                        path=path, removed=dict(info["removed"], **removed), threshold=threshold,
                        best_below=None if info.get("best_below") is None else round(info["best_below"], 6))


@dataclass(slots=True)
class Memory:
    """A live memory read by key (``Lookup``): its record's hit fields, times in microseconds
    since the epoch (``hard_expires_at`` None: no hard TTL)."""

    memory_id: str
    scope: str
    content: str
    subject: str | None = None
    predicate: str | None = None
    object: str | None = None
    version: int = 1
    status: str = "active"
    source_kind: str = "user_stated"
    confidence: float = 1.0
    category: str = "default"
    created_at: int = 0
    updated_at: int = 0
    hard_expires_at: int | None = None
    hard_ttl_days: float | None = None
    review: str | None = None

    @classmethod
    def of(cls, d: dict) -> Memory:
        return cls(**{k: d[k] for k in MEMORY_FIELDS if k in d and d[k] is not None})

    def to_dict(self) -> dict:
        return {k: getattr(self, k) for k in MEMORY_FIELDS}


MEMORY_FIELDS = tuple(Memory.__dataclass_fields__)


@dataclass(slots=True)
class ForgetResult:
    """An erasure: the memory asked for, every id erased with it (its fact's versions, copies,
    what carried its words) and the ids flagged ``source_forgotten``."""

    memory_id: str
    scope: str
    forgotten: list[str]
    flagged: list[str] = field(default_factory=list)
    decision: str = "forgotten"

    @classmethod
    def of(cls, d: dict) -> ForgetResult:
        return cls(d["memory_id"], d["scope"], list(d.get("forgotten", [])), list(d.get("flagged", [])),
                   d.get("decision", "forgotten"))

    def to_dict(self) -> dict:
        return {"decision": self.decision, "memory_id": self.memory_id, "scope": self.scope,
                "forgotten": self.forgotten, "flagged": self.flagged}


@dataclass(slots=True)
class GrantResult:
    actor: str
    scope: str
    read: bool
    write: bool
    clearance: str = "confidential"

    def to_dict(self) -> dict:
        return {"actor": self.actor, "scope": self.scope, "read": self.read, "write": self.write,
                "clearance": self.clearance}
