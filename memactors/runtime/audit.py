"""``rt.audit``: prove what happened (DESIGN section 8). Every query is scoped by the caller's
read grants, checked where the data is (the ledger writer), not only here."""

from __future__ import annotations

from ..core import records as R
from ..core import validate as V
from ..core.errors import LedgerTampered
from ..core.grants import GrantTable
from ..gate.identifiers import Identifiers
from ..store import sandbox
from .arguments import typed_calls
from .calls import Calls


@typed_calls("rt.audit")
class Audit:
    def __init__(self, calls: Calls, ledger, owners: list, flush_evidence, snapshot=None, ids=None,
                 alerts=None) -> None:
        self._calls, self._ledger, self._owners, self._flush_evidence = calls, ledger, owners, flush_evidence
        self._snapshot = snapshot
        self._ids = ids or Identifiers()
        self._alerts = alerts  # memactors.runtime.alerts.Alerts: a failed verify is announced

    def verify(self, *, tail: bool = False) -> dict:
        """Walk the hash chain and its MACs, check the anchor kept outside the data folder, the
        keys and idempotency tables, the provenance and levels indexes against the records, and
        L2 against the events it has applied. ``first_bad_seq`` names the first event that does
        not verify; ``table`` a table that disagrees.

        ``tail=True`` (what a rollback runs first): the chain from where the ledger writer's last
        successful walk ended (that event's hash checked unchanged) and the anchor; a full walk
        the first time."""
        if not isinstance(tail, bool):  # a truthy non-bool would skip the table and L2 checks unseen
            raise R.InvalidRecord(f"tail is true or false, not {V.got(tail)}")
        out = self._calls.get(self._ledger.verify.remote(tail))
        if out["ok"] and not tail:
            try:
                problem, table = l2_problem(self._calls.get([o.check_l2.remote(True) for o in self._owners])), "l2"
            except LedgerTampered as exc:  # a record its data key does not open: the key was swapped
                problem, table = str(exc), "keys"
            if problem:
                out.update(ok=False, reason=problem, table=table)
        if not out["ok"] and self._alerts is not None:
            self._alerts.verify_failed(out)
        return out

    def head(self) -> dict:
        """The ledger's newest seq (and its first): a point to come back to with
        ``recall(..., as_of=seq)``, ``rollback(to=seq)`` or ``fork(path, at=seq)``."""
        self._calls.check_open()
        first, last, _ = self._calls.get(self._ledger.history_call.remote("bounds"))
        return {"seq": last, "first_seq": first}

    def at(self, at, *, actor: str, scope: str, limit: int = 1000) -> dict:
        """The memories under ``scope`` as they stood at ``at`` (a ledger seq, an ISO 8601 time or
        a datetime): ``{"seq", "ts", "head_seq", "first_seq", "scope", "by_status",
        "live_by_pool", "changed_since", "memories", "truncated"}``; each memory's metadata
        (status, version, pool, source, subject/predicate, provenance, times), never its
        content. ``actor`` needs a read grant on ``scope``; erased memories are absent."""
        self._calls.check_open()
        V.integer(limit, "limit", 0, 1_000_000)
        return self._snapshot(at, actor=self._ids.id(actor, "actor"), scope=self._ids.scope(scope), limit=limit)

    def recall(self, recall_id: str, *, actor: str) -> dict:
        """The evidence logged for one recall (ids, scores, filters; never content or query
        text), for an actor whose read grants cover the recall's scopes (else NotFound)."""
        self._calls.check_open()
        check_recall_id(recall_id)
        actor = self._ids.id(actor, "actor")
        GrantTable.make(actor, "/global/")
        self._flush_evidence()
        return self._calls.get(self._ledger.recall_log.remote(recall_id, actor))

    def erased(self, memory_id: str, *, actor: str) -> dict:
        """The ledger's proof of a memory's erasure: ``{"memory_id", "scope", "tombstone_seq",
        "key_destroyed"}`` (``tombstone_seq`` None while it lives). ``actor`` needs a read grant
        on its scope."""
        self._calls.check_open()
        R.check_memory_id(memory_id)
        actor = self._ids.id(actor, "actor")
        GrantTable.make(actor, "/global/")
        return self._calls.get(self._ledger.erasure.remote(memory_id, actor))

    def actions(self, memory_id: str, *, actor: str) -> list[dict]:
        """Which actions depended on ``memory_id``: every tool call a session logged
        (``after_tool``) whose recalls returned it or whose model cited it, oldest first. Each:
        action_id, ts, ended_at, actor, task_id, purpose, scope, tool, outcome, allowed_scopes,
        recall_ids, recalled, cited, ``depended_on`` (which of the memories asked about) and
        ``cited_of_those``. ``actor`` needs a read grant on the memory's scope and the
        clearance for it there (else NotFound, as for an unknown id) and sees only actions whose
        scopes it may read and whose recalls it is cleared for (as ``sql`` shows recalls)."""
        self._calls.check_open()
        R.check_memory_id(memory_id)
        actor = self._ids.id(actor, "actor")
        GrantTable.make(actor, "/global/")
        self._flush_evidence()
        return self._calls.get(self._ledger.actions_on.remote(memory_id, actor))

    def sql(self, query: str, params: list | None = None, *, actor: str) -> list[tuple]:
        """One SELECT over the ``events``, ``recalls`` and ``citations`` that ``actor``'s read
        grants cover, run in a sandbox: an in-memory DuckDB with no file access, no extensions
        and locked settings, over copies of those rows (never the ledger file, never keys)."""
        self._calls.check_open()
        actor = self._ids.id(actor, "actor")
        GrantTable.make(actor, "/global/")
        sandbox.check_select(query)
        self._flush_evidence()
        return self._calls.get(self._ledger.sql.remote(query, params, actor))


def l2_problem(checks: list[dict]) -> str | None:
    bad = [c for c in checks if c["missing"] or c["unknown"] or c.get("changed")]
    if not bad:
        return None
    missing, unknown = sum(c["missing"] for c in bad), sum(c["unknown"] for c in bad)
    changed = sum(c.get("changed", 0) for c in bad)
    return (f"L2 disagrees with the ledger: {missing} rows missing, {unknown} rows the ledger does not know, "
            f"{changed} rows changed (e.g. memory {bad[0]['example']})")


def check_recall_id(recall_id: object) -> str:
    return V.hex_id(recall_id, "recall_id")
