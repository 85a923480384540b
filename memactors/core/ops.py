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
from .visibility import DEFAULT_CLEARANCE, check_clearance
from . import validate as V
from .records import STATUSES, WriteRequest, check_memory_id
from .scopes import check_identifier, parse_scope

WriteOp = WriteRequest


# What the core's ``_gather_more`` (``memactors.engine.gather``) gathers; the rest it does itself.
GATHERED_ELSEWHERE = frozenset({"source", "vector", "verdict", "author"})


class Routing:
    """What an operation says about itself, so the core that applies it never asks its type:

    - ``ADDRESS``: how it finds its scope: "scope" (it names one: ``op.scope``), "memory" (it
      names a memory id: the core looks the scope up), "rows" (a share of many memories and
      scopes: ``op.scopes()``);
    - ``CHECK``: the grant the actor needs on its scope ("write"; None for an admin verb the
      host answers for, a grant change);
    - ``SYSTEM``: the runtime may build it for its own work, as ``grants.SYSTEM_ACTOR``, which
      needs no grant;
    - ``BULK``: it only changes the status of L2 rows (a sweep's share): the core folds it
      without records, vectors or revivals;
    - ``GATHER``: what its decision reads besides its scope's state: "prepared" (a write: the
      prepare stage's verdict, hash, tokens and vector), "record" (the memory it names), "versions" (every version of that memory's fact, when it asks), "provenance"
      (what an erasure takes with it), "vector" (the memory's vector), "verdict" (the gate's
      verdict on the memory as stored), "source" (the memory it names, in another scope, with a
      read grant on it), "author" (who wrote the memory it names), "view" (what the memory's
      writer may see of its scope: a write decides against that only);
    - ``SEES``: a caller's decision on the memory it names (erase, review, resolve): the actor
      must see that memory (its clearance in the memory's scope), else it is not there for it;
    - ``MISSING``: its refusal when the memory it names is not there for its actor (unknown,
      erased, unreadable or above the actor's clearance alike: the words never tell them apart);
    - ``key`` and ``author`` (properties): its idempotency key, and who the ledger records.
    """

    __slots__ = ()
    ADDRESS = "memory"
    CHECK = "write"
    SYSTEM = False
    BULK = False
    GATHER = frozenset({"record"})
    SEES = False
    MISSING = "no memory {id} to change"

    @property
    def key(self) -> str:
        return self.idem_key

    @property
    def author(self) -> str:
        return self.actor


def _reason(reason: object, what: str) -> str:
    if not isinstance(reason, str) or not reason.strip():
        raise InvalidRecord(f"{what} needs a reason (a non-empty string)")
    if len(reason) > 1000:
        raise InvalidRecord(f"{what}: the reason is longer than 1000 characters")
    return V.text(reason, f"{what}'s reason", 1000)  # a lone surrogate: no event could encode it


@dataclass(slots=True)
class ForgetOp(Routing):
    """Erase a memory: its data key destroyed, every copy gone (``all_versions``: every
    version of its fact)."""

    GATHER = frozenset({"record", "versions", "provenance"})
    SEES, MISSING = True, "no memory {id} to forget"

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
class ReviewOp(Routing):
    """A reviewer's decision on a held (pending) write: approve makes it take effect now;
    reject erases it."""

    GATHER = frozenset({"record", "author", "view"})
    SEES, MISSING = True, "no pending memory {id} to review"

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
class StatusOp(Routing):
    """A memory's status changes for a stated reason (a lifecycle rule, a contradiction
    resolved, a rollback)."""

    memory_id: str
    status: str
    actor: str
    reason: str
    idem_key: str
    # A working item superseded because its fact was promoted from another item of its session:
    # the vault memory its text is folded into (its provenance then links the two for erasure).
    folded_into: str | None = None

    def validate(self) -> StatusOp:
        check_memory_id(self.memory_id)
        if self.folded_into is not None:
            check_memory_id(self.folded_into)
            if self.status != "superseded":
                raise InvalidRecord("only a superseded working item is folded into a vault memory")
        if self.status not in STATUSES or self.status == "tombstoned":
            raise InvalidRecord("status must be one of pending, active, superseded, stale, evicted")
        check_identifier(self.actor, "actor")
        _reason(self.reason, "a status change")
        check_identifier(self.idem_key, "idempotency key")
        return self


@dataclass(slots=True)
class GrantOp(Routing):
    """Bind ``actor`` to ``scope`` (and its descendants) for reading and/or writing;
    read=False, write=False revokes. ``reason``: why (the seed's explicit cross-scope share),
    kept in the grant event; as the write gate left it."""

    ADDRESS, CHECK, GATHER = "scope", None, frozenset()

    actor: str
    scope: str
    read: bool
    write: bool
    by: str
    idem_key: str
    reason: str | None = None
    clearance: str = DEFAULT_CLEARANCE  # the most sensitive memories the grant lets its actor recall

    def validate(self) -> GrantOp:
        check_identifier(self.actor, "actor")
        self.scope = str(parse_scope(self.scope))
        if not isinstance(self.read, bool) or not isinstance(self.write, bool):
            raise InvalidRecord("read and write must be booleans")
        self.clearance = check_clearance(self.clearance)
        check_identifier(self.by, "granting actor")
        check_identifier(self.idem_key, "idempotency key")
        if self.reason is not None:
            _reason(self.reason, "a grant")
        return self

    @property
    def author(self) -> str:
        return self.by

    def as_grant(self) -> dict:
        g = {"actor": self.actor, "scope": self.scope, "read": self.read, "write": self.write,
             "clearance": self.clearance}  # an event without one (older folders): the default
        if self.reason is not None:  # grants without one keep the event form they always had
            g.update(reason=self.reason, by=self.by)
        return g


@dataclass(slots=True)
class SweepOp(Routing):
    """One owner's share of an applied GC plan: (memory id, scope, rule code) rows. Each row
    becomes a status change (evicted, or stale; an erasure past the hard TTL) with its rule as the reason, unless the memory
    changed since the plan was made: a row with an event after ``since``, or recalled since the
    plan, is checked against the rule again (on its hot record, or the ledger's)."""

    # "access": the ledger's last recall of each row checked again (a recall updates no hot record)
    ADDRESS, SYSTEM, BULK, GATHER = "rows", True, True, frozenset({"access"})

    rows: list  # [(memory_id, scope, rule code)]
    actor: str
    idem_key: str
    since: int  # the ledger's last seq before the plan's sync

    def scopes(self) -> set[str]:
        return {row[1] for row in self.rows}

    def validate(self) -> SweepOp:
        from .lifecycle import RULES

        check_system_or_identifier(self.actor, "actor")
        check_identifier(self.idem_key, "idempotency key")
        V.integer(self.since, "since", 0, None)
        if not isinstance(self.rows, list) or any(not isinstance(r, (tuple, list)) or len(r) != 3 for r in self.rows):
            raise InvalidRecord("a sweep's rows are (memory_id, scope, rule) tuples")
        ids, scopes, rules = zip(*self.rows) if self.rows else ((), (), ())
        V.hex_ids(ids, "memory_id")
        # the distinct (type, value) pairs: True == 1, and a bool is no rule code
        for kind, rule in {(type(r), r) for r in rules}:
            if not issubclass(kind, int) or kind is bool or not 0 < rule < len(RULES):
                raise InvalidRecord("a sweep row names one of the GC rules")
        for scope in set(scopes):  # a sweep's rows come a scope at a time: each parsed once
            if str(parse_scope(scope)) != scope:
                raise InvalidRecord(f"a sweep row's scope must be in its canonical form, not {scope!r}")
        return self


@dataclass(slots=True)
class ResolveOp(Routing):
    """A reviewer settles a contradiction: ``memory_id`` (one of the flagged versions of a
    fact) stays live, the others flagged with it are superseded."""

    SEES = True

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
class RollbackOp(Routing):
    """One owner's share of a rollback: (memory id, scope, the record as it is now, the record
    as it must be). Compensating status changes, never a rewrite of history; a memory made
    live again gets its row back whole."""

    ADDRESS, GATHER = "rows", frozenset()

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

    def scopes(self) -> set[str]:
        return {s for _, s, _, _ in self.rows}


@dataclass(slots=True)
class PromoteOp(Routing):
    """A working-pool (L1) item becomes a vault (L2) memory of its scope, by a rule of
    ``memactors.core.promotion`` (``rule``) or the caller's explicit choice. The new memory is
    derived from the item (``derived_from``) and its ledger event names it."""

    GATHER = frozenset({"record", "vector", "verdict", "view"})

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
class DemoteOp(Routing):
    """An uncited run of ``streak`` returns (the ledger's count; a citation resets it) against
    ``threshold``: a live vault memory goes back to the working pool (a copy made from it; the
    vault memory is evicted); a demoted copy ignored again is archived (see
    ``memactors.core.promotion.demotion``). The owner decides again with the record it holds."""

    SYSTEM, GATHER = True, frozenset({"record", "vector"})

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
class ScopePromoteOp(Routing):
    """Explicit promotion up the scope tree (task -> user -> org): a new memory in ``scope`` (an
    ancestor of the source's scope) derived from the live vault memory ``memory_id``. Needs a
    write grant on ``scope`` and a read grant on the source's; the ledger event names both."""

    ADDRESS, GATHER = "scope", frozenset({"source", "vector", "view"})

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


@dataclass(slots=True)
class ReviewDueOp(Routing):
    """A reviewer's answer to a periodic review (a memory flagged ``review = "periodic"`` by the
    sweep's review_due rule): ``keep`` confirms it (its review clock restarts: refreshed as if
    written again, the flag cleared); otherwise it is retired (evicted: out of recall and L2, its
    history kept, undoable by rollback)."""

    SEES = True

    memory_id: str
    actor: str
    reason: str
    keep: bool
    idem_key: str

    def validate(self) -> ReviewDueOp:
        check_memory_id(self.memory_id)
        check_identifier(self.actor, "actor")
        _reason(self.reason, "a periodic review")
        if not isinstance(self.keep, bool):
            raise InvalidRecord("keep must be a boolean")
        check_identifier(self.idem_key, "idempotency key")
        return self


@dataclass(slots=True)
class MarkOp(Routing):
    """A lifecycle pass records how far it looked (``name``: e.g. demotion's "demote:5:all";
    ``value``: microseconds of the runtime clock) as a ledger event, so the next pass, after a
    restart, a rebuild of L2 or a fork, starts from there. A session's ``end_turn()`` records the
    turn it moved to the same way ("session-turn:<session id>"), for ``Session.resume``. The
    runtime's own: SYSTEM_ACTOR only, addressed to /global/'s owner."""

    name: str
    value: int
    actor: str
    idem_key: str
    scope: str = "/global/"

    ADDRESS, CHECK, SYSTEM, GATHER = "scope", None, True, frozenset()

    def validate(self) -> MarkOp:
        from . import validate as V
        from .grants import SYSTEM_ACTOR

        if self.actor != SYSTEM_ACTOR:
            raise InvalidRecord("a watermark is the runtime's own")
        if not isinstance(self.name, str) or not 0 < len(self.name) <= 200 or not self.name.isascii():
            raise InvalidRecord("a watermark's name is 1-200 ASCII characters")
        V.integer(self.value, "value", 0, None)
        check_identifier(self.idem_key, "idempotency key")
        if self.scope != "/global/":
            raise InvalidRecord("a watermark is kept by /global/'s owner")
        return self


# Operations addressed by memory id: the owner finds the memory's scope before deciding.
BY_MEMORY = (ForgetOp, ReviewOp, StatusOp, ResolveOp, PromoteOp, DemoteOp, ReviewDueOp)
