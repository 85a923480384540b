"""The projection: memory state as a fold of the ledger's changes (DESIGN sections 8 and 9).

``apply(view, change)`` is the one function that turns a change into state, for a live write
(the owner applies what it decided) and for replay and rebuild (changes read back from the
ledger). A change is what one ledger event means:

- ``write`` / ``write_working``: a whole record (content and all; sealed in the ledger);
- ``status``, ``refresh``, ``merge``, ``annotate``: a patch of a record's non-content fields
  (status, times, confidence, expiries, review flags, access counts), in clear;
- ``forget``: erasure: the record is gone (its data key dies with the event);
- ``block``, ``grant``: no memory state (a gate refusal, a grant change).

A *view* is anything with ``get(memory_id)``, ``put(record)`` and ``remove(memory_id)``: an
owner's ``ScopeState`` (live and pending records of a hot scope) or a ``Rows`` table (every
record, for rebuilding L2). L2 holds a row for every vault record not ``evicted`` or erased.

Pure: no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass

from . import events as E
from . import records as R

RECORD_ACTIONS = frozenset({E.WRITE, E.WRITE_WORKING})
PATCH_ACTIONS = frozenset({E.STATUS, E.REFRESH, E.MERGE, E.ANNOTATE})
# Fields a patch may touch: never content, scope or identity (a new content is a new version).
PATCHABLE = frozenset({"status", "updated_at", "version", "supersedes", "confidence", "soft_expires_at",
                       "hard_expires_at", "soft_ttl_days", "hard_ttl_days", "last_accessed_at", "retrieved_count",
                       "cited_count", "review", "pool", "importance", "category"})


@dataclass(slots=True)
class Change:
    """What one ledger event does to memory state (see the module docstring)."""

    action: str
    scope: str
    memory_id: str | None = None
    record: dict | None = None  # write, write_working: the whole record
    patch: dict | None = None  # patch actions: the fields that change
    reason: str | None = None
    data: dict | None = None  # block: the gate's summary; grant: the grant
    of_version: int | None = None  # the version a patch or erasure concerns (the event's version column)

    @property
    def version(self) -> int | None:
        if self.record is not None:
            return int(self.record["version"])
        if self.patch is not None and "version" in self.patch:
            return int(self.patch["version"])
        return self.of_version


def apply(view, ch: Change, base: dict | None = None) -> dict | None:
    """Apply one change to ``view``. Returns the record as it now stands (None when the change
    removed it, carries no record, or patches a record neither the view nor ``base`` holds).
    ``base``: the record as it stood, for a view that does not keep it (an owner's hot state
    keeps live records only; a superseded one made live again comes from the ledger)."""
    if ch.action in RECORD_ACTIONS:
        view.put(ch.record)
        return ch.record
    if ch.action in PATCH_ACTIONS:
        base = view.get(ch.memory_id) or base
        if base is None:
            return None
        rec = {**base, **ch.patch}
        view.put(rec)
        return rec
    if ch.action == E.FORGET:
        view.remove(ch.memory_id)
        if base is not None and base.get("entity_key") is not None:
            # A superseded version no view holds: its number leaves the fact too, as a reload from
            # L2 (where its row is gone) would count it. Put as erased, nothing of its content.
            view.put({"memory_id": base["memory_id"], "scope": base["scope"], "pool": base.get("pool"),
                      "entity_key": base["entity_key"], "version": base["version"], "status": "tombstoned"})
    return None


def apply_bulk(view_of, changes: list[Change]) -> None:
    """A bulk operation's status changes (a sweep's share) on the views ``view_of(scope)`` gives
    (None: a scope not held): an evicted memory leaves its view (what ``apply`` does, without
    building the record it would drop at once), a stale mark or a review flag is applied."""
    run, run_view = [], None  # consecutive evictions from one view, removed together (in order)
    for ch in changes:
        view = view_of(ch.scope)
        gone = ch.patch.get("status") in R.GONE
        if run and (view is not run_view or not gone):
            run_view.remove_many(run)
            run = []
        if view is None:
            continue
        if gone:
            run.append(ch.memory_id)
            run_view = view
        else:
            apply(view, ch)
    if run:
        run_view.remove_many(run)


def patch_of(old: dict, new: dict, fields=PATCHABLE) -> dict:
    """The patch that turns ``old`` into ``new`` (only patchable fields that differ)."""
    return {k: new.get(k) for k in fields if new.get(k) != old.get(k)}


def in_l2(rec: dict | None) -> bool:
    """Whether a record has a row in L2: vault records not evicted or erased."""
    return rec is not None and rec.get("pool") == "vault" and rec["status"] not in R.GONE


ROW, COLUMNS, DELETE = "row", "columns", "delete"


def l2_effect(ch: Change, in_pool: bool) -> str | None:
    """What L2 must do once a change is committed (``in_l2`` as a change): hold the record
    (``ROW``), update the patched columns (``COLUMNS``), drop its row (``DELETE``), or nothing
    (None: L2 never holds it: an L1 item, ``in_pool``, a refusal, a grant). The one definition:
    the owners' outbox follows it, and the ledger marks a change applied at once when it is None."""
    if in_pool or ch.action in (E.WRITE_WORKING, E.BLOCK, E.GRANT, E.MARK):
        return None
    if ch.action == E.WRITE:
        return ROW
    if ch.action == E.FORGET:
        return DELETE
    if ch.action in PATCH_ACTIONS:
        return DELETE if ch.patch.get("status") in R.GONE else COLUMNS
    return None


class Rows:
    """Every record by id: the view a rebuild folds the whole ledger into."""

    __slots__ = ("records",)

    def __init__(self) -> None:
        self.records: dict[str, dict] = {}

    def get(self, memory_id: str) -> dict | None:
        return self.records.get(memory_id)

    def put(self, rec: dict) -> None:
        self.records[rec["memory_id"]] = rec

    def remove(self, memory_id: str) -> None:
        self.records.pop(memory_id, None)

    def remove_many(self, memory_ids: list[str]) -> None:
        for m in memory_ids:
            self.records.pop(m, None)

    def l2_rows(self) -> list[dict]:
        """The rows L2 holds for this state, in a stable order (by memory id)."""
        return [self.records[m] for m in sorted(self.records) if in_l2(self.records[m])]
