"""Operations: every change of memory state as a small typed value (DESIGN section 9).

The facade's methods only build operations and hand them, in batches, to the owners' one
entry point, which decides each (``memactors.core.changes``), commits the resulting ledger
events as one group, and applies them (``memactors.core.project``). A new kind of change is one
operation class here and one decide function there.

``WriteRequest`` (``memactors.core.records``) is the write operation; its validation lives
beside the record it builds.
"""

from __future__ import annotations

from dataclasses import dataclass

from .errors import InvalidRecord
from .grants import check_system_or_identifier
from .records import STATUSES, WriteRequest, check_memory_id
from .scopes import check_identifier, parse_scope

WriteOp = WriteRequest


def _reason(reason: object, what: str) -> str:
    if not isinstance(reason, str) or not reason.strip():
        raise InvalidRecord(f"{what} needs a reason (a non-empty string)")
    if len(reason) > 1000:
        raise InvalidRecord(f"{what}: the reason is longer than 1000 characters")
    return reason


@dataclass(slots=True)
class ForgetOp:
    """Erase a memory: its data key destroyed, every copy gone (``all_versions``: every
    version of its fact)."""

    memory_id: str
    actor: str
    reason: str
    idem_key: str
    all_versions: bool = False

    def validate(self) -> ForgetOp:
        check_memory_id(self.memory_id)
        check_identifier(self.actor, "actor")
        _reason(self.reason, "forget")
        check_identifier(self.idem_key, "idempotency key")
        if not isinstance(self.all_versions, bool):
            raise InvalidRecord("all_versions must be a boolean")
        return self


@dataclass(slots=True)
class ReviewOp:
    """A reviewer's decision on a held (pending) write: approve makes it take effect now;
    reject erases it."""

    memory_id: str
    actor: str
    reason: str
    approve: bool
    idem_key: str

    def validate(self) -> ReviewOp:
        check_memory_id(self.memory_id)
        check_identifier(self.actor, "actor")
        _reason(self.reason, "a review decision")
        check_identifier(self.idem_key, "idempotency key")
        return self


@dataclass(slots=True)
class StatusOp:
    """A memory's status changes for a stated reason (a lifecycle rule, a contradiction
    resolved, a rollback)."""

    memory_id: str
    status: str
    actor: str
    reason: str
    idem_key: str

    def validate(self) -> StatusOp:
        check_memory_id(self.memory_id)
        if self.status not in STATUSES or self.status == "tombstoned":
            raise InvalidRecord("status must be one of pending, active, superseded, stale, evicted")
        check_identifier(self.actor, "actor")
        _reason(self.reason, "a status change")
        check_identifier(self.idem_key, "idempotency key")
        return self


@dataclass(slots=True)
class GrantOp:
    """Bind ``actor`` to ``scope`` (and its descendants) for reading and/or writing;
    read=False, write=False revokes. ``reason``: why (the seed's explicit cross-scope share),
    kept in the grant event; as the write gate left it."""

    actor: str
    scope: str
    read: bool
    write: bool
    by: str
    idem_key: str
    reason: str | None = None

    def validate(self) -> GrantOp:
        check_identifier(self.actor, "actor")
        self.scope = str(parse_scope(self.scope))
        if not isinstance(self.read, bool) or not isinstance(self.write, bool):
            raise InvalidRecord("read and write must be booleans")
        check_identifier(self.by, "granting actor")
        check_identifier(self.idem_key, "idempotency key")
        if self.reason is not None:
            _reason(self.reason, "a grant")
        return self

    def as_grant(self) -> dict:
        g = {"actor": self.actor, "scope": self.scope, "read": self.read, "write": self.write}
        if self.reason is not None:  # grants without one keep the event form they always had
            g.update(reason=self.reason, by=self.by)
        return g


@dataclass(slots=True)
class SweepOp:
    """One owner's share of an applied GC plan: (memory id, scope, rule code) rows. Each row
    becomes a status change (evicted, or stale) with its rule as the reason, unless the memory
    changed since the plan was made (the owner checks the rule again against a hot record)."""

    rows: list  # [(memory_id, scope, rule code)]
    actor: str
    idem_key: str

    def validate(self) -> SweepOp:
        from .lifecycle import RULES

        check_system_or_identifier(self.actor, "actor")
        check_identifier(self.idem_key, "idempotency key")
        scopes = set()
        for mid, scope, rule in self.rows:
            check_memory_id(mid)
            scopes.add(scope)
            if isinstance(rule, bool) or not isinstance(rule, int) or not 0 < rule < len(RULES):
                raise InvalidRecord("a sweep row names one of the GC rules")
        for scope in scopes:  # a sweep's rows come a scope at a time: each parsed once
            if str(parse_scope(scope)) != scope:
                raise InvalidRecord(f"a sweep row's scope must be in its canonical form, not {scope!r}")
        return self


@dataclass(slots=True)
class ResolveOp:
    """A reviewer settles a contradiction: ``memory_id`` (one of the flagged versions of a
    fact) stays live, the others flagged with it are superseded."""

    memory_id: str
    actor: str
    reason: str
    idem_key: str

    def validate(self) -> ResolveOp:
        check_memory_id(self.memory_id)
        check_identifier(self.actor, "actor")
        _reason(self.reason, "resolving a contradiction")
        check_identifier(self.idem_key, "idempotency key")
        return self


@dataclass(slots=True)
class RollbackOp:
    """One owner's share of a rollback: (memory id, scope, the record as it is now, the record
    as it must be). Compensating status changes, never a rewrite of history; a memory made
    live again gets its row back whole."""

    rows: list  # [(memory_id, scope, now: dict, target: dict)]
    actor: str
    reason: str
    idem_key: str

    def validate(self) -> RollbackOp:
        check_identifier(self.actor, "actor")
        _reason(self.reason, "a rollback")
        check_identifier(self.idem_key, "idempotency key")
        for mid, scope, now, target in self.rows:
            check_memory_id(mid)
            parse_scope(scope)
            if not isinstance(now, dict) or not isinstance(target, dict) or target.get("status") not in STATUSES:
                raise InvalidRecord("a rollback row carries the record now and the record it must become")
        return self

    @property
    def scopes(self) -> set[str]:
        return {s for _, s, _, _ in self.rows}


@dataclass(slots=True)
class PromoteOp:
    """A working-pool (L1) item becomes a vault (L2) memory of its scope, by a rule of
    ``memactors.core.promotion`` (``rule``) or the caller's explicit choice. The new memory is
    derived from the item (``derived_from``) and its ledger event names it."""

    memory_id: str  # the working item
    actor: str
    rule: str
    category: str
    idem_key: str

    def validate(self) -> PromoteOp:
        check_memory_id(self.memory_id)
        check_identifier(self.actor, "actor")
        check_identifier(self.rule, "promotion rule")
        check_identifier(self.category, "category")
        check_identifier(self.idem_key, "idempotency key")
        return self


@dataclass(slots=True)
class DemoteOp:
    """An uncited run of ``streak`` returns (the ledger's count; a citation resets it) against
    ``threshold``: a live vault memory goes back to the working pool (a copy made from it; the
    vault memory is evicted); a demoted copy ignored again is archived (see
    ``memactors.core.promotion.demotion``). The owner decides again with the record it holds."""

    memory_id: str
    actor: str
    streak: int
    threshold: int
    idem_key: str

    def validate(self) -> DemoteOp:
        from . import validate as V

        check_memory_id(self.memory_id)
        check_system_or_identifier(self.actor, "actor")
        V.integer(self.streak, "streak", 0, None)
        V.integer(self.threshold, "threshold", 1, 1_000_000)
        check_identifier(self.idem_key, "idempotency key")
        return self


@dataclass(slots=True)
class ScopePromoteOp:
    """Explicit promotion up the scope tree (task -> user -> org): a new memory in ``scope`` (an
    ancestor of the source's scope) derived from the live vault memory ``memory_id``. Needs a
    write grant on ``scope`` and a read grant on the source's; the ledger event names both."""

    memory_id: str  # the source memory
    scope: str  # the target scope
    actor: str
    reason: str
    idem_key: str

    def validate(self) -> ScopePromoteOp:
        check_memory_id(self.memory_id)
        self.scope = str(parse_scope(self.scope))
        check_identifier(self.actor, "actor")
        _reason(self.reason, "a scope promotion")
        check_identifier(self.idem_key, "idempotency key")
        return self


# Operations addressed by memory id: the owner finds the memory's scope before deciding.
BY_MEMORY = (ForgetOp, ReviewOp, StatusOp, ResolveOp, PromoteOp, DemoteOp)
