"""Undo and prove (DESIGN section 8): recall as of a point in the past, rollback by
compensating events, and fork into a new data folder. The ledger is the source: every answer
is a fold of its changes (``memactors.store.ledger_history``).

Point in time is a ledger seq; a time means the newest seq committed at or before it. The
past is read under today's grants and today's erasures: a forgotten memory's key is gone, so
it never comes back in any view.
"""

from __future__ import annotations

import time
import uuid

import numpy as np
from dataclasses import dataclass, field
from datetime import datetime, timezone

from ..core import records as R
from ..core import validate as V
from ..core.lifecycle import sweep_reason
from ..core.errors import AccessDenied, InvalidRecord, LedgerTampered, MemactorsError, NotFound
from ..core.ops import RollbackOp
from ..core.scopes import check_identifier, parse_scope
from ..core.selection import finalize
from ..core.working import within_lifetime
from ..store.ledger_history import check_live_at
from .evidence import evidence_row
from .paths import new_folder
from .results import RecallResult, recall_result

GONE = "evicted"  # what an undone memory becomes (out of recall; its key kept: a rollback can be rolled back)
SUPERSEDED_OLD = sweep_reason("superseded_old")  # the ledger reason of a sweep's eviction of an old superseded version


def point(rt, at) -> int:
    """A ledger seq from ``at``: an int is a seq; a str (ISO 8601) or datetime is a time."""
    if isinstance(at, bool):
        raise InvalidRecord("a point in time is a ledger seq (int), an ISO time (str) or a datetime")
    if isinstance(at, int):
        # A seq inside one change's events stands for the end of that change (``whole``).
        first, last, _, end = rt._calls.get(rt._ledger.history_call.remote("bounds", at))  # noqa: SLF001
        if not first <= at <= last:
            raise NotFound(f"seq {at} is outside this ledger ({first}..{last})")
        return end
    ts = _as_us(at)
    if ts > rt.clock.now_us():
        raise InvalidRecord("that point in time is in the future")
    first, _, first_ts = rt._calls.get(rt._ledger.history_call.remote("bounds"))  # noqa: SLF001
    if ts < first_ts:
        raise NotFound("that point in time is before the ledger's first event: there is no state to show")
    return rt._calls.get(rt._ledger.history_call.remote("seq_at", ts))  # noqa: SLF001


def _as_us(at) -> int:
    if isinstance(at, datetime):
        dt = at if at.tzinfo else at.replace(tzinfo=timezone.utc)
    elif isinstance(at, str):
        try:
            dt = datetime.fromisoformat(at.replace("Z", "+00:00"))
        except ValueError:
            raise InvalidRecord("a time must be ISO 8601, e.g. 2026-11-30T10:00:00Z") from None
        dt = dt if dt.tzinfo else dt.replace(tzinfo=timezone.utc)
    else:
        raise InvalidRecord("a point in time is a ledger seq (int), an ISO time (str) or a datetime")
    return int(dt.timestamp() * 1_000_000)


# --- the store as it stood ----------------------------------------------------------------------

SNAPSHOT_FIELDS = ("memory_id", "scope", "status", "version", "pool", "category", "source_kind", "subject",
                   "predicate", "supersedes", "derived_from", "review", "created_at", "updated_at")


def snapshot(rt, at, *, actor: str, scope: str, limit: int = 1000) -> dict:
    """The memories under ``scope`` as they stood at ``at`` (metadata, never content): counts by
    status and pool, how many changed since, and up to ``limit`` records (newest update first).
    ``actor`` needs a read grant on ``scope``."""
    check_identifier(actor, "actor")
    under = parse_scope(scope)
    rt._sync_grants()  # noqa: SLF001 - the ledger's listing is not checked again: the grants as they are now
    rt._check_read(actor, [under])  # noqa: SLF001
    seq = point(rt, at)
    first, last, _ = rt._calls.get(rt._ledger.history_call.remote("bounds"))  # noqa: SLF001
    recs = rt._calls.get(rt._ledger.history_call.remote("subtree_at", str(under), seq))  # noqa: SLF001
    # a memory above the actor's clearance in its scope is not there for it
    sees = {s: rt._grants.sees(actor, parse_scope(s)) for s in {r["scope"] for r in recs}}  # noqa: SLF001
    recs = [r for r in recs if r.get("sensitivity") in sees[r["scope"]]]
    changed = rt._calls.get(rt._ledger.changed_under.remote(str(under), seq, actor))  # noqa: SLF001
    by_status: dict[str, int] = {}
    by_pool: dict[str, int] = {}
    for r in recs:
        by_status[r["status"]] = by_status.get(r["status"], 0) + 1
        if r["status"] in R.LIVE:
            by_pool[r["pool"]] = by_pool.get(r["pool"], 0) + 1
    recs.sort(key=lambda r: (r["updated_at"], r["memory_id"]), reverse=True)
    return {"seq": seq, "ts": rt._calls.get(rt._ledger.history_call.remote("ts_of", seq)),  # noqa: SLF001
            "head_seq": last, "first_seq": first, "scope": str(under), "by_status": by_status, "live_by_pool": by_pool,
            "changed_since": changed, "memories": [{k: r.get(k) for k in SNAPSHOT_FIELDS} for r in recs[:limit]],
            "truncated": len(recs) > limit}


# --- recall as of ------------------------------------------------------------------------------


def recall_at(rt, plan, at) -> RecallResult:
    """``recall_as_of`` at ``at``: a seq is judged at its event's time, a time (ISO 8601 or a
    datetime) at that time itself (a memory past its hard TTL then is out, as the recall made
    then left it out, whenever the last event before it was)."""
    return recall_as_of(rt, plan, point(rt, at), None if isinstance(at, int) else _as_us(at))


def recall_as_of(rt, plan, seq: int, at_us: int | None = None) -> RecallResult:
    """What ``plan``'s recall would have returned at ``seq``, scored with the one scoring
    function at that time (``at_us``, else the time of the event at ``seq``). Rows unchanged
    since then come from L2 (pre-filtered, as a cold recall); the memories changed since
    (written, changed, evicted or erased after ``seq``) are folded from the ledger up to it,
    erased ones excluded. Its cost is a cold recall plus the changes since then."""
    from ..core.scoring import QueryTerms, cosines
    from ..engine.hot import score_rows
    from ..engine.naming import owner_index
    from ..core import errors

    calls, ledger = rt._calls, rt._ledger  # noqa: SLF001
    got = calls.get(ledger.history_call.remote("as_of_inputs", plan.visible, seq))
    ts, changed = (got["ts"] if at_us is None else at_us), got["changed"]
    # The changed memories folded from the ledger pass the recall's filter here, as every
    # other path's do in its pre-filter (clearance under today's grants, purpose, where=).
    # L1 items as the pool held them then: none its lifetime had let go (an idle session's)
    live = within_lifetime([r for r in got["then"] if check_live_at(r, ts)], ts,
                           int(rt.config.runtime.session_ttl_s * 1_000_000))
    then = [r for r in live if plan.filter is None or plan.filter.keep(r)]
    qvec = rt.embedder.embed([plan.text])[0] if plan.text is not None else None
    req = dict(plan.owner_req, now=ts, exclude=changed, qvec=qvec)
    n = len(rt._owners)  # noqa: SLF001
    owners = sorted({owner_index(parse_scope(s), n) for s in plan.visible})
    hits = []
    for part in calls.get([rt._owners[oi].recall_as_of.remote(req) for oi in owners]):  # noqa: SLF001
        if errors.is_encoded(part):
            raise errors.decode(part)
        hits += part
    if then and qvec is None:
        hits += score_rows(then, np.zeros(len(then)), None, ts, plan.weights)
    elif then:
        vecs = rt.embedder.embed([R.embedded_text(r) for r in then])
        hits += score_rows(then, cosines(vecs, req["qvec"]), QueryTerms(req["qtokens"]), ts, plan.weights)
    hits.sort(key=plan.order)
    chosen, info = finalize(hits, threshold=plan.threshold, max_items=plan.req.top_k, token_budget=plan.req.token_budget)
    result = recall_result(chosen, info, visible=plan.visible, path="as_of", threshold=plan.threshold)
    row = evidence_row(plan.req, result, rt._evidence.digest(plan.text or ""), plan.now, mode="as_of",  # noqa: SLF001
                       weights=plan.weights, threshold=plan.threshold, candidates=len(hits), info=info,
                       flt=plan.filter)
    row["filters"].update(as_of_seq=seq, as_of_ts=ts, not_hard_expired_at=ts, changed_since=len(changed))
    rt._evidence.add(row)  # noqa: SLF001
    return result


# --- rollback ----------------------------------------------------------------------------------


@dataclass
class RollbackPlan:
    """What a rollback changes (the plan of a dry run equals what is applied). ``items``: one
    per memory: memory_id, scope, action (undo | reinstate | restore | flag | stays_forgotten),
    from and to status."""

    items: list = field(default_factory=list)
    restore_at: int | None = None
    dry_run: bool = True
    applied: dict | None = None
    seconds: float = 0.0
    # Logged actions (``rt.audit.actions``) that depended on a memory this rollback undoes or
    # restores, as the rolling-back actor may read them: what to look at again.
    affected_actions: list = field(default_factory=list)

    def counts(self) -> dict:
        out: dict = {}
        for it in self.items:
            out[it["action"]] = out.get(it["action"], 0) + 1
        return out

    def summary(self) -> str:
        head = "rollback plan (dry run, nothing changed)" if self.dry_run else "rollback applied"
        lines = [f"{head}: {len(self.items)} memories " + ", ".join(f"{k} {v}" for k, v in self.counts().items())]
        for it in self.items[:20]:
            lines.append(f"  {it['memory_id']}  {it['scope']}  {it['action']:<16} {it['from']} -> {it['to']}")
        if len(self.items) > 20:
            lines.append(f"  ... {len(self.items) - 20} more")
        if self.affected_actions:
            lines.append(f"actions that depended on them: {len(self.affected_actions)}")
            for a in self.affected_actions[:20]:
                lines.append(f"  {a['action_id']}  {a['tool']}  {a['outcome']}  task {a['task_id']}  "
                             f"on {', '.join(m[:8] for m in a['depended_on'])}")
        return "\n".join(lines)

    def to_dict(self) -> dict:
        return {"items": self.items, "counts": self.counts(), "restore_at": self.restore_at, "dry_run": self.dry_run,
                "applied": self.applied, "seconds": round(self.seconds, 3), "affected_actions": self.affected_actions}


def rollback(rt, *, to=None, memory_id=None, where=None, cascade=False, scope=None, actor: str, reason: str,
             dry_run: bool = False) -> RollbackPlan:
    t0 = time.perf_counter()
    calls, ledger = rt._calls, rt._ledger  # noqa: SLF001
    if sum(x is not None for x in (to, memory_id, where)) != 1:
        raise InvalidRecord("rollback takes one of to= (a point in time), memory_id= or where=")
    RollbackOp([], actor, reason, "rollback-check").validate()  # the reason a real run takes, dry or not
    if not isinstance(cascade, bool) or not isinstance(dry_run, bool):
        raise InvalidRecord("cascade and dry_run are booleans")
    v = rt.audit.verify(tail=True)
    if not v["ok"]:
        raise LedgerTampered(f"the ledger does not verify (first bad seq {v['first_bad_seq']}, table {v['table']}): "
                             "a rollback refuses a broken chain")
    after = point(rt, to) if to is not None else None
    rt._sync_grants()  # noqa: SLF001 - grants and clearances as they are now (another driver may change them)
    ids = [R.check_memory_id(memory_id)] if memory_id is not None else None
    if where is not None:
        where = _where(rt, where)
    under = str(parse_scope(scope)) if scope is not None else None
    if under is not None:
        rt._check_write([(actor, parse_scope(under))])  # noqa: SLF001
    under = None if under == "/global/" else under
    if memory_id is not None:  # one who cannot read its scope is answered as for an id never written
        known = calls.get(ledger.scopes_of.remote([memory_id])).get(memory_id)
        if known is None or not _may(rt, actor, known, "read"):
            raise NotFound(f"no memory {memory_id} in the ledger")
    got = calls.get(ledger.history_call.remote("rollback_inputs", after, ids, where, bool(cascade), under))
    undo, pairs = got["targets"]["undo"], got["pairs"]
    # An erased memory is named in a plan (stays_forgotten) only to whom history and
    # audit.erased name it: a read grant on its scope and the clearance for what its tombstone
    # kept. Its scope is no write of this rollback's, so nothing else checks it.
    erased = [mid for mid in undo if pairs[mid][0] is None]
    if erased:
        shown = set(calls.get(ledger.shown_ids.remote(erased, actor)))
        undo = [mid for mid in undo if pairs[mid][0] is not None or mid in shown]
    if memory_id is not None and memory_id not in undo:
        raise NotFound(f"no memory {memory_id} in the ledger")
    if memory_id is not None and not _cleared(rt, actor, pairs[memory_id][0]):  # as history answers it
        raise NotFound(f"no memory {memory_id} in the ledger")
    plan = RollbackPlan(restore_at=after, dry_run=dry_run)
    rows: dict[str, tuple] = {}
    if after is not None:  # point in time: every memory back to its state then
        for mid in undo:
            now, then = pairs[mid]
            _plan_row(plan, rows, mid, now, then, "restore")
    else:  # targeted: undo each, reinstate what each superseded
        for mid in undo:
            now, _ = pairs[mid]
            _plan_row(plan, rows, mid, now, None, "undo")
        # Only the undo of a live version leaves its fact without one: what that version
        # superseded comes back. A superseded or already undone version's predecessor stays as
        # it is (else two versions of a fact were live: undo v2 of v1..v3, or undo v2 again
        # once v2' replaced it). One a sweep evicted for being superseded long enough is still
        # what the live version superseded: it kept its key for this (a rollback undid it: not).
        why = got.get("older_why", {})
        for mid in undo:
            now, _ = pairs[mid]
            if now is None or now["status"] not in R.LIVE:
                continue
            for old in got["reinstates"].get(mid, ()):
                was, _ = got["older"][old]
                if was is not None and old not in rows and (
                        was["status"] == "superseded" or was["status"] == "evicted" and why.get(old) == SUPERSEDED_OLD):
                    _plan_row(plan, rows, old, was, dict(was, status="active"), "reinstate")
        # derived from an undone memory and from others too: kept, flagged for whoever re-derives it
        for mid, (now, _) in got["flagged"].items():
            if now is not None and now["status"] not in R.GONE:
                _plan_row(plan, rows, mid, now, dict(now, review="source_rolled_back"), "flag")
        # What others derived from it in scopes this actor may not write is theirs: left as it
        # is, and the plan says so (a claim never stops its source's own rollback).
        theirs = set(got["targets"].get("cascaded", ())) | set(got["flagged"])
        for mid in sorted(theirs & rows.keys()):
            if not _may(rt, actor, rows[mid][1], "write"):
                del rows[mid]
                for it in plan.items:
                    if it["memory_id"] == mid:
                        it["action"], it["to"] = "left_to_its_scope", it["from"]
    rt._check_write([(actor, parse_scope(s)) for s in sorted({r[1] for r in rows.values()})],  # noqa: SLF001
                    named="some of the memories this rollback touches (scope= keeps it to a subtree)")
    # A plan names what it changes: one above the actor's clearance is neither shown nor changed
    # by it (history, recall and audit.at do not show it either). No id in the message.
    hidden = sum(not _cleared(rt, actor, r[2]) for r in rows.values())
    if hidden:
        raise AccessDenied(f"actor {actor!r} may not roll back {hidden} of the memories this rollback touches: "
                           "they are above its clearance in their scope")
    touched = sorted({it["memory_id"] for it in plan.items if it["action"] in ("undo", "restore")})
    if touched:
        plan.affected_actions = calls.get(ledger.actions_on_many.remote(touched, actor))
    if not dry_run and rows:
        plan.applied = _apply(rt, rows, actor, reason)
        rt.flush()  # in L2 now: a cold scope's recall reads it there, and never what was just undone
    plan.seconds = time.perf_counter() - t0
    return plan


def _where(rt, where) -> dict:
    """A targeted rollback's condition, checked: source_kind and actor as they are written,
    since and until as points, as ``at=`` reads them: an int is a ledger seq (never
    microseconds: ``since=rt.audit.head()["seq"]`` read as a time undid every write ever
    made), an ISO 8601 str or a datetime a time."""
    if not isinstance(where, dict) or not where:
        raise InvalidRecord("where is a dict of source_kind, actor, since, until")
    unknown = [k for k in where if k not in ("source_kind", "actor", "since", "until")]
    if unknown:
        raise InvalidRecord("where takes source_kind, actor, since and until (ledger seqs, ISO times or datetimes)")
    out = {}
    for k, v in where.items():
        if k == "source_kind":
            out[k] = V.choice(v, "where source_kind", tuple(R.SOURCE_CONFIDENCE))
        elif k == "actor":
            out[k] = check_identifier(v, "where actor")
        elif isinstance(v, int) and not isinstance(v, bool):
            try:
                out[f"{k}_seq"] = point(rt, v)
            except NotFound as e:
                raise NotFound(f"where[{k!r}]: {e}: an int is a ledger seq, as at= reads it (a time is an ISO "
                               "8601 str or a datetime)") from None
        else:
            out[k] = _as_us(v)
    return out


def _may(rt, actor: str, scope: str, mode: str) -> bool:
    try:
        if mode == "write":
            rt._check_write([(actor, parse_scope(scope))])  # noqa: SLF001
        else:
            rt._check_read(actor, [parse_scope(scope)])  # noqa: SLF001
    except MemactorsError:
        return False
    return True


def _cleared(rt, actor: str, rec: dict | None) -> bool:
    """Whether ``actor``'s clearance in the record's scope covers it (an erased one: nothing of
    it is shown)."""
    if rec is None:
        return True
    return rec.get("sensitivity") in rt._grants.sees(actor, parse_scope(rec["scope"]))  # noqa: SLF001


def _plan_row(plan: RollbackPlan, rows: dict, mid: str, now: dict | None, target: dict | None, mode: str) -> None:
    if now is None:  # erased: forget cannot be rolled back, and the plan says so
        plan.items.append({"memory_id": mid, "scope": None, "action": "stays_forgotten", "from": "tombstoned",
                           "to": "tombstoned"})
        return
    if target is None:
        if now["status"] in R.GONE:
            return
        target = dict(now, status=GONE)
    changed = {k for k in target if k != "vector" and target.get(k) != now.get(k)}
    if not changed:
        return
    action = ("undo" if target["status"] in R.GONE and now["status"] not in R.GONE else
              "reinstate" if now["status"] not in R.LIVE and target["status"] in R.LIVE else mode)
    plan.items.append({"memory_id": mid, "scope": now["scope"], "action": action, "from": now["status"],
                       "to": target["status"]})
    rows[mid] = (mid, now["scope"], now, target)


def _apply(rt, rows: dict, actor: str, reason: str) -> dict:
    from ..engine.naming import owner_index

    by_owner: dict[int, list] = {}
    for row in rows.values():
        by_owner.setdefault(owner_index(parse_scope(row[1]), len(rt._owners)), []).append(row)  # noqa: SLF001
    now = rt.clock.now_us()
    key = uuid.uuid4().hex[:16]
    refs = [rt._owners[oi].submit.remote([RollbackOp(part, actor, reason, f"rollback-{key}-{oi}")], now)  # noqa: SLF001
            for oi, part in by_owner.items()]
    total: dict = {}
    from ..core import errors

    for out in rt._calls.get(refs):  # noqa: SLF001
        res = out[0]
        if errors.is_encoded(res):
            raise errors.decode(res)
        for k, v in res.items():
            if isinstance(v, int):
                total[k] = total.get(k, 0) + v
    return total


# --- fork --------------------------------------------------------------------------------------


def fork(rt, path, *, at=None, workers: int | None = None) -> dict:
    """A new data folder whose ledger is this one's up to ``at`` (default: now), verifiable on
    its own (the same chain, its own key and anchor), and whose L2 is rebuilt from it."""
    t0 = time.perf_counter()
    with new_folder(path, "fork", outside=rt.data_dir) as dest:  # a failed fork leaves no folder
        seq = point(rt, at) if at is not None else rt._calls.get(rt._ledger.history_call.remote("bounds"))[1]  # noqa: SLF001
        rt.flush()
        out = rt._calls.get(rt._ledger.fork_to.remote(dest, seq, rt.config.runtime.key_dir),  # noqa: SLF001
                            timeout=max(600.0, rt.config.runtime.call_timeout_s))
        t1 = time.perf_counter()
        built = rt._calls.host.rebuild(dest, rt.config, workers)  # noqa: SLF001
    return {"path": dest, "seq": seq, "events": out["events"], "rows": built["rows"],
            "ledger_seconds": round(t1 - t0, 3), "rebuild_seconds": built["seconds"],
            "seconds": round(time.perf_counter() - t0, 3)}
