"""The public unit of work: one typed operation per thing a caller can ask of memory.

``rt.batch(ops)`` / ``await rt.abatch(ops)`` take a list of these (any mix) and return one
typed result per op, in order; every verb of an agent handle (``rt.agent(...)``) builds one of
them and hands it over. Each op names its actor: grants, the write gate, evidence and the
ledger apply to it exactly as to the verbs.

=====================  =======================================  ==================
op                     asks for                                 result
=====================  =======================================  ==================
``Write``              a memory through the gate                ``WriteResult``
``Recall``             a governed recall over scopes            ``RecallResult``
``Lookup``             live memories by id, fact or subject     ``list[Memory]``
``Forget``             erasure of a memory or of its fact       ``ForgetResult``
``Grant``              a grant change                           ``GrantResult``
=====================  =======================================  ==================

One name per idea: ``at`` a point in time, ``top_k`` a count, ``scopes`` the scopes read,
``erase`` what a forget takes ("memory" or "fact").
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from .core import validate as V
from .core.errors import InvalidRecord
from .core.records import WriteRequest

Write = WriteRequest  # scope, text, actor, then the record's optional fields (memactors.core.records)


@dataclass(slots=True)
class Recall:
    """A pull recall (DESIGN section 5): refused without ``scopes`` or beyond the actor's read
    grants. ``threshold`` (default the config's) is the relevance floor; 0 returns every
    candidate ranked. ``at``: what the recall would have returned then (a seq, ISO time or
    datetime). ``where``: structured filters (``Runtime.recall``); with ``query=None`` a
    listing, newest first."""

    query: str
    actor: str
    task_id: str
    scopes: list[str]
    purpose: str
    top_k: int | None = None  # None: [recall].default_top_k
    token_budget: int | None = None
    threshold: float | None = None
    weights: Any = None
    at: int | str | datetime | None = None
    where: dict | None = None  # subject, predicate, category, source_kind, since, until (query None: a listing)


@dataclass(slots=True)
class Lookup:
    """Live memories of one scope the actor may read, oldest first: those with ``memory_ids``;
    or the newest live version the actor may see of each ``(subject, predicate)`` in ``facts``
    (a version above its clearance may stand beside it: ``docs/governance.md``); or those whose subject
    starts with ``subject_prefix``; or all of them. At most ``limit``. Never pending, superseded,
    erased or hard-expired ones. ``offset``: skip that many first (a listing's next page: the
    previous page's ``offset + limit``)."""

    actor: str
    scope: str
    memory_ids: list[str] | None = None
    facts: list[tuple[str, str]] | None = None
    subject_prefix: str | None = None
    limit: int | None = None
    purpose: str | None = None  # under [recall.purposes]: the rule that applies (unlisted or None: refused)
    offset: int = 0

    def validate(self) -> Lookup:
        given = [x for x in (self.memory_ids, self.facts, self.subject_prefix) if x is not None]
        if len(given) > 1:
            raise InvalidRecord("a lookup takes one of memory_ids, facts or subject_prefix")
        if self.memory_ids is not None and not isinstance(self.memory_ids, (list, tuple)):
            raise InvalidRecord(f"memory_ids must be a list of memory ids, not {V.got(self.memory_ids)}")
        if self.limit is not None and (isinstance(self.limit, bool) or not isinstance(self.limit, int)
                                       or self.limit < 0):
            raise InvalidRecord("limit is a count (an int >= 0)")
        if isinstance(self.offset, bool) or not isinstance(self.offset, int) or self.offset < 0:
            raise InvalidRecord("offset is a count (an int >= 0)")
        if self.subject_prefix is not None and not isinstance(self.subject_prefix, str):
            raise InvalidRecord("subject_prefix is a str")
        if self.subject_prefix is not None:
            V.text(self.subject_prefix, "subject_prefix", 1000, allow_blank=True)
        if self.facts is not None and (not isinstance(self.facts, (list, tuple)) or not all(
                isinstance(f, (list, tuple)) and len(f) == 2 and all(isinstance(x, str) for x in f) for f in self.facts)):
            raise InvalidRecord("facts is a list of (subject, predicate) pairs of str")
        for f in self.facts or ():
            for x in f:
                V.text(x, "a fact's subject or predicate", 1000, allow_blank=True)
        return self


@dataclass(slots=True)
class Forget:
    """Erasure (not undoable): ``erase="memory"`` the memory, ``"fact"`` every version of its
    fact (same subject and predicate)."""

    memory_id: str
    actor: str
    reason: str
    erase: str = "memory"
    idempotency_key: str | None = None

    def validate(self) -> Forget:
        V.choice(self.erase, "erase", ("memory", "fact"))
        return self


@dataclass(slots=True)
class Grant:
    """Let ``actor`` read (and write) ``scope`` and its descendants; read=False, write=False
    revokes. ``by``: the granting actor, ``reason``: why the share was made (through the write
    gate), both kept in the ledger. ``clearance``: the most sensitive memories of the scope the
    actor may recall (the most specific read grant of a scope decides)."""

    actor: str
    scope: str
    read: bool = True
    write: bool = False
    by: str = "admin"
    reason: str | None = None
    clearance: str = "confidential"  # public|internal|confidential|restricted: the most sensitive it recalls


Op = WriteRequest | Recall | Lookup | Forget | Grant
OPS = (WriteRequest, Recall, Lookup, Forget, Grant)

__all__ = ["Forget", "Grant", "Lookup", "OPS", "Op", "Recall", "Write"]
