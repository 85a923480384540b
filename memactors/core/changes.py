"""Deciding operations: one pure function per operation kind, from the state it needs to the
ledger changes it makes and the result its caller gets (DESIGN section 9, "One change path").

The owner gathers what a decision needs (the staged state of the scope, the record addressed,
the gate's verdict on a write), calls the function, applies the changes to its staged state
with ``memactors.core.project.apply`` (so the next operation of the batch sees them) and
commits them as one ledger group. Nothing here does I/O.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from operator import itemgetter

import numpy as np

from . import events as E
from . import records as R
from .errors import AccessDenied, InvalidRecord, NotFound
from .ops import (DemoteOp, ForgetOp, GrantOp, MarkOp, PromoteOp, ResolveOp, ReviewDueOp, ReviewOp, RollbackOp,
                  ScopePromoteOp, StatusOp, SweepOp)
from .project import Change, patch_of
from . import erasure, lifecycle
from .config import LifecycleConfig
from .versions import (CONTRADICTION_FLAG, Rules, ScopeState, decide_write, expired, inherit_policy, refresh_patch,
                       refreshed, same_value, written_again)


@dataclass(slots=True)
class Prepared:
    """A write as the gate and the embedder left it (the prepare stage's output)."""

    decision: str  # the gate's: accepted | redacted | working_only | pending | blocked
    text: str | None  # as stored (redacted where needed); None when blocked
    fields: dict  # subject, predicate, object, source_id as stored
    gate: dict  # the gate's summary: rule ids, spans, fields; never a value
    content_hash: str | None = None
    search_text: str | None = None
    vector: np.ndarray | None = None
    context_hashes: list | None = None  # content hashes of the retrieval context's pieces (as stored)
    sensitivity: str | None = None  # the least sensitivity the gate's hits imply (personal data: confidential)


@dataclass(slots=True)
class Outcome:
    """What deciding one operation produced."""

    changes: list[Change]
    result: dict  # what the caller gets (and a retry with the same key gets again)
    destroy_keys: list[str] = field(default_factory=list)  # data keys that die with these changes
    keys_later: bool = False  # deleted at the sweep's end (``store.entries.Entry.keys_later``)
    vectors: dict = field(default_factory=dict)  # memory id -> vector of records these changes create
    revived: dict = field(default_factory=dict)  # id -> record made live again (its row is restored whole)
    # memory id -> the record a patch (or an erasure) applies to, when no view holds it
    bases: dict = field(default_factory=dict)
    # What it read outside its scopes' locks, for the ledger to check again at commit
    # (``store.ledger_races``): memories read as live, the provenance edges its erasure follows.
    live_read: list[str] | None = None
    edges_read: list | None = None


def write_result(decision: str, rec: dict | None, scope: str, gate: dict) -> dict:
    if rec is None:
        return {"decision": decision, "memory_id": None, "version": None, "scope": scope, "status": None,
                "supersedes": None, "gate": gate}
    return {"decision": decision, "memory_id": rec["memory_id"], "version": rec["version"], "scope": scope,
            "status": rec["status"], "supersedes": rec.get("supersedes"), "gate": gate}


@dataclass(slots=True)
class Ctx:
    """What deciding one operation may read, gathered by the owner beforehand."""

    state: ScopeState  # the staged state of the operation's scope (earlier operations of the batch applied)
    now_us: int
    lifecycle: LifecycleConfig
    record: dict | None = None  # the record a by-memory operation addresses (live or not)
    versions: list = field(default_factory=list)  # every other version of its fact, when the operation asks
    prepared: Prepared | None = None  # a write's gate verdict, hash, tokens and vector
    new_id: str = ""  # a fresh memory id, for an operation that makes a memory
    near: object = None  # text-only writes: vector -> the ids of live near-copies, closest first (or one id, or None)
    similar: object = None  # text-only writes: vector -> ids of live text-only memories close by (contradictions)
    state_of: object = None  # operations over many scopes (a sweep): scope -> its staged state, or None
    judge: object = None  # a core.contradictions.Judge for close calls, or None
    # erasures: (records by id, provenance edges) of what the erased ones are linked to (core.erasure)
    provenance: tuple = ({}, ())
    # operations over many scopes: scope not held hot -> its live records flagged "contradiction"
    # (``get``, ``live``), or None; read when one side of a contradiction leaves recall
    flagged_of: object = None
    copy_of: list | None = None  # a write the runtime makes as a copy of these memories (promotion)
    carried: object = None  # content hashes -> ids of the scope's memories with that text (context_of)
    author: str | None = None  # a review's approval: the actor whose write the gate held (the ledger's)
    accessed: dict | None = None  # a sweep: memory id -> its last recall (us), as the ledger has it
    current: dict | None = None  # a sweep: rows changed since the plan, not held hot -> the ledger's record
    touched: set | None = None  # a sweep: the rows changed since the plan (None: unknown, every hot row is checked)
    erased: object = None  # a sweep: ids erased by this owner since it started (a container), or None
    sees: frozenset | None = None  # a write: the sensitivities its writer may see in its scope (None: all)
    # a caller's decision on a memory (SEES): (scope, sensitivity) -> whether the caller may see
    # such a memory there; None: all (the runtime's own)
    shown: object = None


def rules_for(req: R.WriteRequest, lc: LifecycleConfig, copy: bool = False) -> Rules:
    key = (lc.refresh_confidence_bump, lc.contradiction_gap, req.soft_ttl_days is not None, req.ttl_days is not None,
           copy)
    rules = _RULES.get(key)
    if rules is None:  # a few configurations in a process: made once each, not once a write
        if len(_RULES) >= 64:
            _RULES.clear()
        rules = _RULES[key] = Rules(*key)
    return rules


_RULES: dict[tuple, Rules] = {}


def decide_write_op(req: R.WriteRequest, ctx: Ctx) -> Outcome:
    """A write whose text and fields passed the gate (``ctx.prepared``), against its scope's state."""
    prep, state, memory_id, now_us = ctx.prepared, ctx.state, ctx.new_id, ctx.now_us
    if prep.text is None:
        return Outcome([Change(E.BLOCK, req.scope, data=prep.gate, reason="blocked by the write gate")],
                       write_result(R.BLOCKED, None, req.scope, prep.gate))
    floor = prep.sensitivity
    if floor is not None and R.SENSITIVITIES.index(floor) <= R.SENSITIVITIES.index(req.sensitivity):
        floor = None  # the caller asked for as much or more
    if prep.fields or floor is not None:
        over = dict(prep.fields, **({"sensitivity": floor} if floor is not None else {}))
        req = R.WriteRequest(**{**{k: getattr(req, k) for k in R.WriteRequest.__dataclass_fields__}, **over})
    status = "pending" if prep.decision == R.PENDING else "active"
    ttl = lifecycle.ttl_policy(req.category, req.ttl_days, req.soft_ttl_days, ctx.lifecycle)
    rec = R.build_record(req, prep.text, memory_id, now_us, status=status, content_hash_=prep.content_hash,
                         search_text=prep.search_text, ttl=ttl)
    if ctx.copy_of or req.copy_of:  # a promotion's, or a session's step item (the plan item's text)
        rec["copy_of"] = sorted(ctx.copy_of or req.copy_of)
    if prep.context_hashes and ctx.carried is not None:  # whose words the context brings in (erasure follows)
        rec["context_of"] = sorted(ctx.carried(prep.context_hashes) - {memory_id}) or None
    vectors = {memory_id: prep.vector} if prep.vector is not None else {}
    if req.pool == "working" or prep.decision == R.WORKING_ONLY:
        # working_only: risky but useful (code under analysis, chit-chat): L1 only, never L2.
        rec["pool"] = "working"
        decision = {R.ACCEPTED: R.ACCEPTED, R.REDACTED: R.REDACTED}.get(prep.decision, prep.decision)
        return Outcome([Change(E.WRITE_WORKING, req.scope, memory_id, record=rec)],
                       write_result(decision, rec, req.scope, prep.gate), vectors=vectors)
    if req.replaces is not None:
        return _decide_update(req, rec, prep, ctx, vectors)
    near = (lambda r: ctx.near(prep.vector)) if ctx.near is not None and prep.vector is not None else None
    similar = (lambda r: ctx.similar(prep.vector)) if ctx.similar is not None and prep.vector is not None else None
    d = decide_write(state, rec, now_us, rules_for(req, ctx.lifecycle, bool(ctx.copy_of)), near, ctx.judge, similar,
                     ctx.sees)
    decision = R.REDACTED if d.decision == R.ACCEPTED and prep.decision == R.REDACTED else d.decision
    result = write_result(decision, d.record, req.scope, prep.gate)
    if d.decision in (R.REFRESHED, R.MERGED):
        old = state.get(d.record["memory_id"])
        action, why = ((E.REFRESH, "written again") if d.decision == R.REFRESHED
                       else (E.MERGE, f"merged {memory_id} into {old['memory_id']}: a near-copy"))
        changes = [Change(action, req.scope, old["memory_id"], patch=refresh_patch(old, d.record), reason=why,
                          of_version=old["version"])]
        changes += [Change(E.STATUS, o["scope"], o["memory_id"], of_version=o["version"],
                           patch={k: o[k] for k in ("status", "review", "updated_at")},
                           reason=f"superseded by {old['memory_id']}: contradiction resolved by a confidence gap "
                                  "(confirmed)") for o in d.changed]
        return Outcome(changes, result)
    why = f"kept as superseded: judged by {d.judged}" if d.judged and not d.changed else None
    if d.decision == R.KEPT_AS_SUPERSEDED and why is None and d.record.get("entity_key"):
        # lost at once to another source's live value: a contradiction resolved, as a win is
        rivals = state.live_versions(d.record["entity_key"])
        if any(o.get("source_kind") != d.record.get("source_kind") and not same_value(o, d.record) for o in rivals):
            why = "kept as superseded: contradiction resolved by a confidence gap"
    if d.record.get("derived_from"):  # provenance the ledger can answer without decrypting
        why = "; ".join(x for x in (why, "derived from " + ",".join(d.record["derived_from"])) if x)
    changes = [Change(E.WRITE, req.scope, memory_id, record=d.record, reason=why)]
    for old in d.changed:  # flagged for review (still live), or superseded
        if old["status"] in R.LIVE:
            changes.append(Change(E.ANNOTATE, old["scope"], old["memory_id"], patch={"review": old["review"]},
                                  reason=f"contradicted by {memory_id}: a close call, for review",
                                  of_version=old["version"]))
        else:
            why = f"superseded by {memory_id}"
            if d.judged:
                why += f": contradiction judged by {d.judged}"
            elif old.get("source_kind") != d.record.get("source_kind") and not expired(old, now_us) \
                    and not same_value(old, d.record):  # another value, not a version that had run out
                why += ": contradiction resolved by a confidence gap"
            changes.append(Change(E.STATUS, old["scope"], old["memory_id"],
                                  patch={"status": old["status"], "updated_at": old["updated_at"]},
                                  reason=why, of_version=old["version"]))
    return Outcome(changes, result, vectors=vectors)


def _decide_update(req: R.WriteRequest, rec: dict, prep: Prepared, ctx: Ctx, vectors: dict) -> Outcome:
    """An update (``rt.update``): the write is the next version of ``req.replaces``, a live
    vault memory of this scope and of the same fact, whatever the confidence and source rules
    would say of another writer's write (the caller asked for exactly this). The same text
    again refreshes it; a held (pending) update waits for review and changes nothing yet."""
    state, now_us, old_id = ctx.state, ctx.now_us, req.replaces
    old = state.get(old_id)
    key = rec.get("entity_key")
    if old is None or old["status"] not in R.LIVE or old.get("entity_key") != key:
        raise NotFound("no live memory of this fact in this scope to update (rt.history shows its live version)")
    same = old["content_hash"] == rec["content_hash"] and (
        R.normalise(old.get("object") or "") == R.normalise(rec.get("object") or ""))
    if same:
        new = written_again(old, rec, now_us, rules_for(req, ctx.lifecycle))
        return Outcome([Change(E.REFRESH, req.scope, old_id, patch=refresh_patch(old, new), reason="written again",
                               of_version=old["version"])], write_result(R.REFRESHED, new, req.scope, prep.gate))
    if key is None and rec["status"] != "pending":
        twin = _text_twin(state, rec, old_id, ctx.sees)
        if twin is not None:
            return _update_to_twin(req, rec, old, twin, prep, ctx)
    rec["version"] = state.next_version(key, ctx.sees) if key else int(old["version"]) + 1
    inherit_policy(rec, old, now_us, rules_for(req, ctx.lifecycle))
    if rec["status"] == "pending":
        result = write_result(R.PENDING, rec, req.scope, prep.gate)  # it supersedes nothing yet
        rec["supersedes"] = old_id  # what an approval makes it the next version of (decide_review)
        return Outcome([Change(E.WRITE, req.scope, rec["memory_id"], record=rec,
                               reason=f"an update of {old_id}, held for review")], result, vectors=vectors)
    rec["supersedes"] = old_id
    new_id = rec["memory_id"]
    changes = [Change(E.WRITE, req.scope, new_id, record=rec, reason=f"an update of {old_id}"),
               Change(E.STATUS, old["scope"], old_id, patch={"status": "superseded", "updated_at": now_us},
                      reason=f"superseded by {new_id}: updated", of_version=old["version"])]
    if key is not None and old.get("review") == CONTRADICTION_FLAG:
        # One side of a contradiction updated: the other side holding the new value is superseded
        # by it (the dispute is settled); one holding another value stays in dispute, with the new
        # version (else it stayed flagged alone beside a second live version of the fact).
        value = R.normalise(rec.get("object") or "")
        for r in state.live_versions(key):
            if r["memory_id"] == old_id or (ctx.sees is not None and r["sensitivity"] not in ctx.sees):
                continue
            if R.normalise(r.get("object") or "") == value:
                changes.append(Change(E.STATUS, r["scope"], r["memory_id"], patch={"status": "superseded",
                                      "updated_at": now_us}, reason=f"superseded by {new_id}: updated to its value",
                                      of_version=r["version"]))
            else:
                rec["review"] = CONTRADICTION_FLAG
    elif key is None and old.get("review") == CONTRADICTION_FLAG:
        # A text-only side updated: still opposed by a rival, the new version stays in dispute
        # with it; a rival the new text no longer opposes, left with none, is out of it.
        from .contradictions import text_contradiction

        still = {r["memory_id"] for r in state.live() if r.get("review") == CONTRADICTION_FLAG
                 and r.get("entity_key") is None and r["memory_id"] != old_id and r.get("content")
                 and text_contradiction(r["content"], old.get("content") or "")
                 and text_contradiction(r["content"], rec.get("content") or "")}
        if still:
            rec["review"] = CONTRADICTION_FLAG
        changes += [c for c in _contradictions_ended(state, [old_id], f"its other side was updated ({old_id})")
                    if c.memory_id not in still]
    return Outcome(changes, write_result(R.SUPERSEDED_PREVIOUS, rec, req.scope, prep.gate), vectors=vectors)


def _text_twin(state: ScopeState, rec: dict, old_id: str, sees) -> dict | None:
    """Another live text-only memory that says ``rec``'s text, as the writer may see it."""
    twin = state.records.get(state.by_hash.get(rec["content_hash"]) or "")
    if twin is None or twin["memory_id"] == old_id or twin["status"] not in R.LIVE or twin.get("entity_key"):
        return None
    return twin if sees is None or twin["sensitivity"] in sees else None


def _update_to_twin(req: R.WriteRequest, rec: dict, old: dict, twin: dict, prep: Prepared, ctx: Ctx) -> Outcome:
    """An update to the text a live memory says: what a write of that text does (that memory
    refreshed, no second live copy), the updated one superseded by it; a contradiction the
    updated one was in ends for a side left with no rival."""
    now_us, old_id, tid = ctx.now_us, old["memory_id"], twin["memory_id"]
    new = written_again(twin, rec, now_us, rules_for(req, ctx.lifecycle))
    changes = [Change(E.REFRESH, twin["scope"], tid, patch=refresh_patch(twin, new),
                      reason=f"written again: {old_id} updated to its text", of_version=twin["version"]),
               Change(E.STATUS, old["scope"], old_id, patch={"status": "superseded", "updated_at": now_us},
                      reason=f"superseded by {tid}: updated to its text", of_version=old["version"])]
    ended = _contradictions_ended(ctx.state, [old_id], f"its other side was updated to its text ({old_id})")
    if any(c.memory_id == tid for c in ended):
        new["review"] = None
    return Outcome(changes + ended, write_result(R.REFRESHED, new, req.scope, prep.gate))


def decide_forget(op: ForgetOp, targets: list[dict], records: dict | None = None, edges: list = (),
                  shown=None) -> Outcome:
    """Erase ``targets`` (the memory addressed, or every version of its fact) and what the
    provenance takes with them (``memactors.core.erasure``: every copy, anything that carries
    their words, what was claimed only from them in their scope): a tombstone each, their data
    keys destroyed in the same transaction. A memory claimed from others too, or from another
    scope, is kept and flagged (``review = "source_forgotten"``). The result names only the
    memories ``shown(scope, sensitivity)`` lets the caller see: a copy in a scope it cannot
    read, or above its clearance, is erased all the same, unnamed (the erasure's proof is
    scoped by the same grants as a read)."""
    if not targets:
        raise NotFound(op.MISSING.format(id=op.memory_id))
    gone, flagged = erasure.closure(targets, records or {}, list(edges))
    root = targets[0]["memory_id"]
    # The tombstone keeps the erased memory's sensitivity (in clear, as its other events' fields):
    # what is left of it in the ledger (its history, the erasure's proof) is shown only to
    # readers cleared for that.
    changes = [Change(E.FORGET, t["scope"], t["memory_id"], patch=_tombstone(t),
                      reason=op.reason if t["memory_id"] == root else f"erased with {root}: {op.reason}",
                      of_version=t.get("version")) for t in gone]
    changes += [Change(E.ANNOTATE, d["scope"], d["memory_id"], patch={"review": "source_forgotten"},
                       reason=f"a source was erased ({root})", of_version=d.get("version")) for d in flagged]
    ids = [t["memory_id"] for t in gone]
    seen = (lambda r: True) if shown is None else (lambda r: r is targets[0] or shown(r["scope"], r.get("sensitivity")))
    return Outcome(changes, {"decision": "forgotten", "memory_id": op.memory_id, "scope": targets[0]["scope"],
                             "forgotten": [t["memory_id"] for t in gone if seen(t)],
                             "flagged": [d["memory_id"] for d in flagged if seen(d)]}, destroy_keys=ids,
                   bases={t["memory_id"]: t for t in gone})


def _tombstone(rec: dict) -> dict:
    return {"status": "tombstoned", "sensitivity": rec["sensitivity"]} if rec.get("sensitivity") else \
        {"status": "tombstoned"}


def decide_review(op: ReviewOp, rec: dict | None, state: ScopeState, now_us: int, author: str | None = None,
                  sees: frozenset | None = None) -> Outcome:
    """Approve: the held write takes effect now, through versions and dedup like any write (a
    held working item simply becomes live in L1); never by ``author``, the actor whose write
    the gate held. Reject: it is erased (its data key destroyed); the decision stays in the ledger."""
    if rec is None or rec["status"] != "pending":
        raise NotFound(op.MISSING.format(id=op.memory_id))
    if not op.approve:
        out = decide_forget(ForgetOp(op.memory_id, op.actor, f"rejected in review: {op.reason}", op.idem_key), [rec])
        out.result = dict(out.result, decision="rejected")
        return out
    if author is None or author == op.actor:  # unknown counts as one's own: a review is someone else's call
        raise AccessDenied("a held write is approved by another actor than the one who wrote it")
    if rec.get("pool") == "working":
        return Outcome([Change(E.STATUS, rec["scope"], rec["memory_id"], patch={"status": "active"},
                               reason=f"approved in review: {op.reason}", of_version=rec["version"])],
                       {"decision": "approved", "outcome": R.ACCEPTED, "memory_id": rec["memory_id"],
                        "scope": rec["scope"], "version": rec["version"]})
    old = state.get(rec["supersedes"]) if rec.get("supersedes") else None
    if old is not None and old["status"] in R.LIVE and old.get("entity_key") == rec.get("entity_key"):
        # A held update (rt.update) whose version is still live: approved, it is the next
        # version as the update asked, whatever the confidence rules would say of another writer.
        new = dict(rec, status="active", updated_at=now_us)
        changes = [Change(E.STATUS, rec["scope"], rec["memory_id"], patch=patch_of(rec, new), of_version=rec["version"],
                          reason=f"approved in review: {op.reason}"),
                   Change(E.STATUS, old["scope"], old["memory_id"], patch={"status": "superseded", "updated_at": now_us},
                          reason=f"superseded by {rec['memory_id']}: updated", of_version=old["version"])]
        return Outcome(changes, {"decision": "approved", "outcome": R.SUPERSEDED_PREVIOUS, "memory_id": rec["memory_id"],
                                 "scope": rec["scope"], "version": rec["version"]})
    probe = state.stage()
    probe.remove(rec["memory_id"])
    d = decide_write(probe, dict(rec, status="active", updated_at=now_us), now_us, sees=sees)  # the author's view
    if d.decision == R.REFRESHED:  # the same content is already live: keep that one
        d.changed.append(dict(rec, status="superseded", updated_at=now_us))
    changes = []
    for r in d.records:
        mine = r["memory_id"] == rec["memory_id"]
        base = rec if mine else state.get(r["memory_id"])
        action = E.REFRESH if d.decision == R.REFRESHED and r is d.record else E.STATUS
        changes.append(Change(action, r["scope"], r["memory_id"], patch=patch_of(base, r), of_version=r["version"],
                              reason=f"approved in review: {op.reason}" if mine else f"review of {op.memory_id}"))
    result = {"decision": "approved", "outcome": d.decision, "memory_id": d.record["memory_id"],
              "scope": rec["scope"], "version": d.record["version"]}
    return Outcome(changes, result)


def decide_status(op: StatusOp, rec: dict | None, state: ScopeState) -> Outcome:
    """A status change for a stated reason. Evicted records leave L2 (their keys stay: an
    eviction can be undone, an erasure cannot); a working item leaves L1 (superseded: its fact
    was promoted; evicted: its session let it go), its content kept in the ledger. Only a live
    memory can turn stale; a held (pending) write becomes live only through review; a memory
    made live again supersedes the live version of its fact, so a fact never has two."""
    if rec is None or rec["status"] == "tombstoned":
        raise NotFound(op.MISSING.format(id=op.memory_id))
    old, new = rec["status"], op.status
    if rec.get("pool") == "working" and (old not in (*R.LIVE, "pending") or new not in ("superseded", "evicted")):
        # An L1 item only leaves L1 this way (its fact promoted, its session ended), and only once.
        raise NotFound(f"no working item {op.memory_id} in L1 to take out")
    if new == "stale" and old not in R.LIVE:
        raise InvalidRecord(f"only a live memory can be marked stale (this one is {old})")
    if old == "pending" and new in R.LIVE:
        raise InvalidRecord("a held write becomes live only through review (rt.review.approve)")
    patch = _folded(rec, op.folded_into) if op.folded_into is not None and rec.get("pool") == "working" \
        else {"status": new}
    changes = [Change(E.STATUS, rec["scope"], rec["memory_id"], patch=patch, reason=op.reason,
                      of_version=rec["version"])]
    if new in R.LIVE and old not in R.LIVE:
        key = rec.get("entity_key")
        rivals = state.live_ids(key) if key else {state.by_hash.get(rec["content_hash"])} - {None}
        for rival in sorted(rivals - {rec["memory_id"]}):
            changes.append(Change(E.STATUS, rec["scope"], rival, patch={"status": "superseded"},
                                  reason=f"superseded by {rec['memory_id']}, made live again",
                                  of_version=state.get(rival)["version"] if state.get(rival) else None))
    return Outcome(changes, {"decision": "status", "memory_id": rec["memory_id"], "scope": rec["scope"],
                             "status": new, "previous": old})


def decide_resolve(op: ResolveOp, rec: dict | None, state: ScopeState, now_us: int) -> Outcome:
    """The reviewer's pick stays live, its flag cleared; the other flagged live versions of the
    same fact are superseded."""
    if rec is None or rec["status"] not in R.LIVE or rec.get("review") != CONTRADICTION_FLAG:
        raise NotFound(f"no contradiction awaiting review for memory {op.memory_id}")
    if expired(rec, now_us):  # out of recall already: its win would supersede the only side still served
        raise NotFound(f"memory {op.memory_id} has expired: it cannot win its contradiction")
    key = rec.get("entity_key")
    rivals = [r for r in state.live() if r["memory_id"] != rec["memory_id"] and r.get("entity_key") == key
              and r.get("review") == CONTRADICTION_FLAG]
    if key is None:  # a text-only contradiction: its rivals are the flagged memories that say its opposite
        from .contradictions import text_contradiction

        rivals = [r for r in rivals if r.get("content") and rec.get("content")
                  and text_contradiction(r["content"], rec["content"])]
    # Superseded now: superseded_old counts from here (a status alone left it superseded since its write)
    changes = [Change(E.STATUS, r["scope"], r["memory_id"], patch={"status": "superseded", "review": None,
                                                                  "updated_at": now_us},
                      # "superseded by <id>" as every supersession says it: history's `by`, a
                      # rollback of the winner (which reinstates what it superseded) read that link
                      reason=f"superseded by {rec['memory_id']}: contradiction resolved: {op.reason}",
                      of_version=r["version"])
               for r in rivals]
    changes.append(Change(E.ANNOTATE, rec["scope"], rec["memory_id"], patch={"review": None},
                          reason=f"contradiction resolved: {op.reason}", of_version=rec["version"]))
    return Outcome(changes, {"decision": "resolved", "memory_id": rec["memory_id"], "scope": rec["scope"],
                             "superseded": [r["memory_id"] for r in rivals]})


def decide_review_due(op: ReviewDueOp, rec: dict | None, now_us: int, lc: LifecycleConfig) -> Outcome:
    """A periodic review answered: kept (refreshed now, as if written again: its review clock
    and TTL restart, its confidence rises; the flag cleared), or retired (evicted)."""
    if rec is None or rec["status"] not in R.LIVE or rec.get("review") != lifecycle.PERIODIC_REVIEW:
        raise NotFound(f"no memory {op.memory_id} due for its periodic review")
    if op.keep and expired(rec, now_us):  # out of recall already: a confirmation would bring it back
        raise NotFound(f"memory {op.memory_id} has expired: nothing to confirm")
    if op.keep:
        patch = dict(refresh_patch(rec, lifecycle.refreshed(rec, now_us, lc)), review=None)
        change = Change(E.REFRESH, rec["scope"], rec["memory_id"], patch=patch,
                        reason=f"confirmed in periodic review: {op.reason}", of_version=rec["version"])
    else:
        change = Change(E.STATUS, rec["scope"], rec["memory_id"], patch={"status": "evicted", "review": None},
                        reason=f"retired in periodic review: {op.reason}", of_version=rec["version"])
    return Outcome([change], {"decision": "confirmed" if op.keep else "retired", "memory_id": rec["memory_id"],
                              "scope": rec["scope"]})


_RECHECK = lifecycle.RULE_COLUMNS
# Per rule code: a sweep's reason, patch (shared by its changes: patches are never edited) and
# event: a status change, or for a review flag an annotation (the memory stays as it is).
_SWEEP_REASON = {c: lifecycle.sweep_reason(r) for c, r in enumerate(lifecycle.RULES) if c}
_SWEEP_PATCH = {c: ({"review": lifecycle.PERIODIC_REVIEW} if lifecycle.ACTION_OF[c] == lifecycle.REVIEW else
                    {"status": "evicted" if lifecycle.ACTION_OF[c] == lifecycle.EVICT else "stale"})
                for c in _SWEEP_REASON}
_SWEEP_ACTION = {c: E.ANNOTATE if lifecycle.ACTION_OF[c] == lifecycle.REVIEW else E.STATUS for c in _SWEEP_REASON}
# Past its hard TTL a memory is deleted, not set aside: erased (a tombstone, its data key
# destroyed) where the other rules' evictions keep the key for a rollback.
_HARD = lifecycle.RULES.index("hard_expired")


def decide_sweep(op: SweepOp, ctx: Ctx) -> Outcome:
    """An applied GC plan's rows as status changes (evicted, or stale; past the hard TTL an
    erasure: a tombstone, its data key destroyed), each with its rule as the reason. A memory changed since the plan (refreshed, recalled, erased: ``ctx.touched``,
    or without it every memory the owner holds hot) is checked again against the rule, on its
    hot record or the ledger's (``ctx.current``): no longer due, it is left alone. Rows come a
    scope at a time (the sweeper sorts them; any order is right, only slower), and the rules
    run once over the records checked as columns."""
    records, hot, last_scope, current, touched = None, [], None, ctx.current or {}, ctx.touched
    for mid, scope, _ in op.rows:
        if touched is not None and mid not in touched:  # as the plan saw it: its rule stands
            continue
        if scope != last_scope:
            state = ctx.state_of(scope)
            records, last_scope = (state.records if state is not None else None), scope
        if records is not None and (rec := records.get(mid)) is not None:
            hot.append(rec)
        elif (rec := current.get(mid)) is not None:
            hot.append(rec)
    still = {}
    if hot:
        try:
            values = list(zip(*map(itemgetter(*_RECHECK), hot)))
        except KeyError:  # a record without every field (an older one): the slow way
            values = [[r.get(k) for r in hot] for k in _RECHECK]
        if ctx.accessed:  # recalled since the plan (or since L2 last heard): a hot record does not say
            k = _RECHECK.index("last_accessed_at")
            col = list(values[k])
            for j, r in enumerate(hot):
                a = ctx.accessed.get(r["memory_id"])
                if a is not None and (col[j] is None or a > col[j]):
                    col[j] = a
            values[k] = col
        codes = lifecycle.rules(dict(zip(_RECHECK, values)), ctx.now_us, ctx.lifecycle)
        still = dict(zip([r["memory_id"] for r in hot], codes.tolist()))
    changes, counts, skipped, evicted, destroyed, by_scope = [], {}, 0, {}, [], {}
    gone = ctx.erased or ()
    known = {r["memory_id"]: r for r in hot}
    for mid, scope, code in op.rows:
        if still.get(mid, code) != code or mid in gone:  # changed since the plan, or erased since
            skipped += 1
            continue
        if code == _HARD:
            # the tombstone keeps the sensitivity where the record is at hand (else the audit
            # views count the memory as of the highest, as for any level they do not know)
            rec = known.get(mid)
            if rec is None and (state := ctx.state_of(scope)) is not None:
                rec = state.records.get(mid)
            changes.append(Change(E.FORGET, scope, mid, patch=_tombstone(rec or {}), reason=_SWEEP_REASON[code]))
            destroyed.append(mid)
        else:
            changes.append(Change(_SWEEP_ACTION[code], scope, mid, patch=_SWEEP_PATCH[code],
                                  reason=_SWEEP_REASON[code]))
        counts[lifecycle.RULES[code]] = counts.get(lifecycle.RULES[code], 0) + 1
        by_scope[scope] = by_scope.get(scope, 0) + 1
        if lifecycle.ACTION_OF[code] == lifecycle.EVICT:
            evicted.setdefault(scope, []).append(mid)
    if evicted:  # a contradiction one side of which is evicted ends for the side left alone
        flagged = ctx.flagged_of or (lambda s: None)
        changes += _ended_by_scope(evicted, lambda s: ctx.state_of(s) or flagged(s),
                                   lambda ids: f"its other side was evicted by a sweep ({', '.join(sorted(ids))})")
    return Outcome(changes, {"decision": "swept", "by_rule": counts, "by_scope": by_scope, "skipped": skipped},
                   destroy_keys=destroyed, keys_later=True)


def decide_rollback(op: RollbackOp, ctx: Ctx) -> Outcome:
    """Compensating changes: each memory patched from what it is (the hot state's record when
    the owner holds it, else the ledger's) to what it must be. Nothing is rewritten; a memory
    erased since the plan read it (``ctx.erased``) is left erased (its row would come back whole)."""
    changes, out = [], {"undone": 0, "reinstated": 0, "restored": 0, "flagged": 0}
    bases, gone, arriving = {}, {}, {}
    erased = ctx.erased or ()
    for mid, scope, now, target in op.rows:
        if mid in erased:  # erased after the plan read it (a forget, a sweep): it stays forgotten
            continue
        state = ctx.state_of(scope) if ctx.state_of is not None else None
        current = (state.get(mid) if state is not None else None) or now
        patch = patch_of(current, target)
        if not patch:
            continue
        bases[mid] = current
        flag = set(patch) == {"review"}
        changes.append(Change(E.ANNOTATE if flag else E.STATUS, scope, mid, patch=patch,
                              reason=f"rollback: {op.reason}", of_version=current.get("version")))
        kind = ("flagged" if flag else "undone" if target["status"] in R.GONE else
                "reinstated" if current["status"] not in R.LIVE and target["status"] in R.LIVE else "restored")
        out[kind] += 1
        if current["status"] in R.LIVE and target["status"] not in R.LIVE \
                and current.get("review") == CONTRADICTION_FLAG:
            gone.setdefault(scope, []).append(mid)
        after = {**current, **patch}
        if after["status"] in R.LIVE and after.get("review") == CONTRADICTION_FLAG:
            arriving.setdefault(scope, []).append(after)
    for scope, back in arriving.items():
        # a memory the rollback brings back flagged, whose rivals of then have left since (erased,
        # resolved, evicted): it comes back in no contradiction, as a side left alone sheds its flag
        state = (ctx.state_of(scope) if ctx.state_of is not None else None) or (ctx.flagged_of or (lambda s: None))(scope)
        post = {ch.memory_id: {**bases[ch.memory_id], **ch.patch} for ch in changes if ch.scope == scope}
        among = [r for m, r0 in (state.records.items() if state is not None else ())
                 if (r := post.get(m, r0)).get("review") == CONTRADICTION_FLAG and r["status"] in R.LIVE]
        among += [r for r in back if state is None or r["memory_id"] not in state.records]
        for rec in back:
            if not _rivals(rec, among):
                ch = next(c for c in changes if c.memory_id == rec["memory_id"])
                ch.patch = {**ch.patch, "review": None}
                rec["review"] = None
    if gone:  # one side of a contradiction rolled back: the side left alone is in none, unless
        # the rollback brings its rival of then back (an undone update reinstates the version it superseded)
        touched = {ch.memory_id for ch in changes}
        flagged = ctx.flagged_of or (lambda s: None)
        ended = _ended_by_scope(gone, lambda s: (ctx.state_of(s) if ctx.state_of is not None else None) or flagged(s),
                                lambda ids: f"its other side was rolled back ({', '.join(sorted(ids))})", arriving)
        changes += [ch for ch in ended if ch.memory_id not in touched]  # the rollback's own patch stands
    return Outcome(changes, {"decision": "rolled_back", **out}, bases=bases)


def decide_mark(op: MarkOp) -> Outcome:
    """A watermark: one event, no memory state."""
    mark = {"name": op.name, "value": int(op.value)}
    return Outcome([Change(E.MARK, op.scope, data=mark, reason=f"watermark {op.name}")], mark)


def decide_grant(op: GrantOp) -> Outcome:
    g = op.as_grant()
    why = f"grant changed: {op.reason}" if op.reason is not None else "grant changed"
    # The caller is told the reason and the granting actor either way (as grants() shows them).
    return Outcome([Change(E.GRANT, op.scope, data=g, reason=why)], {**g, "reason": op.reason, "by": op.by})


def _forget(op: ForgetOp, ctx: Ctx) -> Outcome:
    targets = [ctx.record] if ctx.record is not None else []
    if ctx.record is not None and op.all_versions:
        # every version its caller may see: one above its clearance is not its to erase (nor to
        # learn of), as the memory it names would not be
        targets += [r for r in ctx.versions if r["memory_id"] != ctx.record["memory_id"]
                    and (ctx.shown is None or ctx.shown(r["scope"], r.get("sensitivity")))]
    records, edges = ctx.provenance
    out = decide_forget(op, targets, records, edges, ctx.shown)
    # the edges it followed or found followed before: another committed since makes it decide again
    gone = set(out.destroy_keys)
    out.edges_read = [e for e in edges if erasure.follows(e, gone)]
    if ctx.state is not None:
        out.changes += _contradictions_ended(ctx.state, out.destroy_keys,  # all erased, named or not
                                             f"its other side was erased ({op.memory_id})")
    return out


def _contradictions_ended(state, gone, why: str, arriving: list[dict] = ()) -> list[Change]:
    """A live memory left flagged ``contradiction`` with no rival once ``gone`` leave recall
    (erased, evicted by a sweep, rolled back) is no longer in one: its flag is cleared (else it
    stayed in ``contradictions.pending`` alone, its staleness counting a contradiction with
    nothing). ``state``: the scope's records before the change (``get``, ``records``); only the
    flagged live ones are read. ``arriving``: records the same change makes live and flagged
    (a rollback reinstating the version an undone update had superseded): rivals too."""
    gone = set(gone)
    erased = [r for m in gone if (r := state.get(m)) is not None and r.get("review") == CONTRADICTION_FLAG]
    if not erased:
        return []
    back = {r["memory_id"]: r for r in arriving if r["memory_id"] not in gone and r.get("review") == CONTRADICTION_FLAG}
    flagged = [r for r in state.records.values()  # the flag first: most records have none
               if r.get("review") == CONTRADICTION_FLAG and r["status"] in R.LIVE and r["memory_id"] not in gone
               and r["memory_id"] not in back] + list(back.values())

    ended = {r["memory_id"]: r for e in erased for r in _rivals(e, flagged) if not _rivals(r, flagged)}
    return [Change(E.ANNOTATE, r["scope"], m, patch={"review": None},
                   reason=f"contradiction ended: {why}", of_version=r["version"])
            for m, r in ended.items()]


def _rivals(rec: dict, among: list[dict]) -> list[dict]:
    """The memories of ``among`` (flagged, live) in a contradiction with ``rec``."""
    from .contradictions import text_contradiction

    key = rec.get("entity_key")
    return [r for r in among if r["memory_id"] != rec["memory_id"] and r.get("entity_key") == key
            and (key is not None or (r.get("content") and rec.get("content")
                                     and text_contradiction(r["content"], rec["content"])))]


def _ended_by_scope(gone: dict[str, list[str]], state_of, why, arriving: dict[str, list[dict]] | None = None
                    ) -> list[Change]:
    """``_contradictions_ended`` for memories leaving recall in many scopes: ``gone`` maps a
    scope to its ids, ``state_of(scope)`` gives its records (None: nothing flagged known there),
    ``why(ids)`` the reason, ``arriving`` a scope's records the change makes live and flagged."""
    out = []
    for scope, ids in gone.items():
        state = state_of(scope)
        # most scopes of a sweep have no flagged memory among those leaving: no reason built
        if state is not None and any((r := state.get(m)) is not None and r.get("review") == CONTRADICTION_FLAG
                                     for m in ids):
            out += _contradictions_ended(state, ids, why(ids), (arriving or {}).get(scope, ()))
    return out


# --- promotion and demotion (DESIGN section 2) -----------------------------------------------

def _derived_write(src: dict, scope: str, actor: str, category: str, ctx: Ctx) -> R.WriteRequest:
    """A vault write made from ``src`` (a working item, or a memory promoted up the tree): its
    fields and text as stored, derived from it, with ``category``'s lifetime measured from now
    but never past the hard expiry ``src`` already has (promotion does not extend a stated TTL)."""
    req = R.WriteRequest(scope=scope, text=src["content"], actor=actor, subject=src.get("subject"),
                         predicate=src.get("predicate"), object=src.get("object"), source=src["source_kind"],
                         source_id=src.get("source_id"), confidence=src["confidence"],
                         sensitivity=src.get("sensitivity") or "internal", importance=src["importance"],
                         category=category, derived_from=[src["memory_id"]], embed_text=src.get("embed_text"))
    hard_at = src.get("hard_expires_at")
    if hard_at is not None:
        left = (hard_at - ctx.now_us) / lifecycle.US_PER_DAY
        if left <= 0:
            raise NotFound(f"memory {src['memory_id']} has expired: nothing to promote")
        _, cat_hard = lifecycle.ttl_policy(category, None, None, ctx.lifecycle)
        if cat_hard is None or left < cat_hard:
            req.ttl_days = left
    return req


def _promoted(req: R.WriteRequest, src: dict, ctx: Ctx, why: str) -> Outcome:
    """Decide ``req`` as a write whose text passed the gate already (as ``src`` holds it):
    versions and dedup apply; the first change's ledger reason says where it came from."""
    prep = ctx.prepared
    ctx.prepared = Prepared(R.ACCEPTED, src["content"], {}, {}, src.get("content_hash"), src.get("search_text"),
                            prep.vector if prep is not None else None)
    ctx.copy_of = [src["memory_id"]]
    out = decide_write_op(req, ctx)
    first = out.changes[0]
    first.reason = why if not first.reason else f"{why}; {first.reason}"
    return out


def decide_promote(op: PromoteOp, ctx: Ctx) -> Outcome:
    """A live working item becomes a vault memory of its scope (or refreshes the one already
    there): derived from the item, the ledger event's reason "promoted from <item> (<rule>)";
    the item itself is superseded (out of L1), the reason "promoted to <memory> (<rule>)"."""
    from . import promotion as P

    rec = ctx.record
    if rec is None or rec.get("pool") != "working" or rec["status"] not in R.LIVE or rec.get("content") is None:
        raise NotFound(f"no live working item {op.memory_id} to promote")
    prep = ctx.prepared  # the gate's verdict on the item as stored, found again by the owner
    why = P.refusal(P.Candidate(rec["memory_id"], rec["content"], rec["source_kind"], 0,
                                subject=rec.get("subject"), predicate=rec.get("predicate"), object=rec.get("object"),
                                category=rec.get("category") or "default",
                                gate_decision=prep.decision if prep is not None else R.ACCEPTED,
                                gate_tags=tuple((prep.gate or {}).get("tags", ())) if prep is not None else (),
                                status=rec["status"]))
    if why is not None:  # whoever asks, the rules of what never reaches the vault hold here too
        raise InvalidRecord(f"working item {op.memory_id} is never promoted ({why})")
    req = _derived_write(rec, rec["scope"], op.actor, op.category, ctx)
    out = _promoted(req, rec, ctx, f"promoted from {rec['memory_id']} ({op.rule})")
    out.result = dict(out.result, promoted_from=rec["memory_id"], rule=op.rule)
    # The item leaves L1: a recall never returns it beside its vault copy.
    out.changes.append(Change(E.STATUS, rec["scope"], rec["memory_id"],
                              patch=_folded(rec, out.result["memory_id"], out.changes),
                              reason=f"promoted to {out.result['memory_id']} ({op.rule})", of_version=rec["version"]))
    return out


def _folded(item: dict, into: str | None, changes: list[Change] = ()) -> dict:
    """The patch that takes a working item out of L1 as a copy of vault memory ``into``. A
    promotion that refreshed (or merged into) a memory wrote no record naming the item, so the
    item names the memory itself (``copy_of``, in the ledger's provenance index): erasing either
    then erases the other, in both erase modes and after a reopen."""
    patch = {"status": "superseded"}
    named = any(ch.record is not None and ch.memory_id == into and item["memory_id"] in (ch.record.get("copy_of") or ())
                for ch in changes)
    if into is not None and not named and into != item["memory_id"]:
        patch["copy_of"] = sorted({*(item.get("copy_of") or ()), into})
    return patch


def decide_demote(op: DemoteOp, ctx: Ctx) -> Outcome:
    """An uncited run (``core.promotion.demotion``): a live vault memory is evicted and a copy
    made from it enters the working pool; a demoted copy ignored again is archived (status
    ``evicted``, reason "archived: ..."; its content stays in the ledger with its key, so a
    rollback can bring it back, but it is never recalled). Anything else: unchanged."""
    from .promotion import demotion

    rec = ctx.record
    step = demotion(rec, op.streak, op.threshold)
    scope = rec["scope"] if rec is not None else None
    if step is None:
        # no memory named: a result pinned under a key names only memories its events name
        # (``audit.verify`` reads any other as a row copied from another key)
        return Outcome([], {"decision": "unchanged", "scope": scope})
    run = f"returned {op.streak} times in a row without a citation"
    if step == "archive":
        return Outcome([Change(E.STATUS, scope, rec["memory_id"], patch={"status": "evicted"},
                               reason=f"archived: {run} after its demotion", of_version=rec["version"])],
                       {"decision": "archived", "memory_id": rec["memory_id"], "scope": scope})
    now = ctx.now_us
    copy = dict(rec, memory_id=ctx.new_id, pool="working", status="active", version=1, supersedes=None,
                derived_from=[rec["memory_id"]], copy_of=[rec["memory_id"]], context_of=None, created_at=now,
                updated_at=now, last_accessed_at=None,
                retrieved_count=0, cited_count=0, review=None)
    vector = ctx.prepared.vector if ctx.prepared is not None else ctx.state.vectors.get(rec["memory_id"])
    changes = [Change(E.STATUS, scope, rec["memory_id"], patch={"status": "evicted"},
                      reason=f"demoted to the working pool: {run}", of_version=rec["version"]),
               Change(E.WRITE_WORKING, scope, copy["memory_id"], record=copy, reason=f"demoted from {rec['memory_id']}")]
    return Outcome(changes, {"decision": "demoted", "memory_id": rec["memory_id"], "scope": scope,
                             "working_id": copy["memory_id"]},
                   vectors={copy["memory_id"]: vector} if vector is not None else {})


def decide_scope_promote(op: ScopePromoteOp, ctx: Ctx) -> Outcome:
    """A live vault memory promoted up the scope tree: a new memory in ``op.scope`` (a proper
    ancestor of the source's scope) derived from it; versions and dedup of the target apply."""
    from .scopes import parse_scope

    src = ctx.record
    if src is None or src.get("pool") != "vault" or src["status"] not in R.LIVE or src.get("content") is None:
        raise NotFound(f"no live vault memory {op.memory_id} to promote")
    target, source = parse_scope(op.scope), parse_scope(src["scope"])
    if target == source or not target.is_ancestor_or_self(source):
        raise AccessDenied("a memory is promoted up its own scope tree only (task -> user -> org): the target "
                           "scope must be an ancestor of the memory's scope")
    req = _derived_write(src, op.scope, op.actor, src.get("category") or "default", ctx)
    out = _promoted(req, src, ctx, f"promoted from {src['scope']} (memory {src['memory_id']}): {op.reason}")
    out.result = dict(out.result, promoted_from=src["memory_id"], from_scope=src["scope"])
    out.live_read = [src["memory_id"]]  # another scope's, unlocked here: erased since, this decides again
    return out


# One pure decide function per operation: the owner looks the operation's type up here.
DECIDERS = {
    R.WriteRequest: decide_write_op,
    ForgetOp: _forget,
    ReviewOp: lambda op, ctx: decide_review(op, ctx.record, ctx.state, ctx.now_us, ctx.author, ctx.sees),
    StatusOp: lambda op, ctx: decide_status(op, ctx.record, ctx.state),
    ResolveOp: lambda op, ctx: decide_resolve(op, ctx.record, ctx.state, ctx.now_us),
    SweepOp: decide_sweep,
    RollbackOp: decide_rollback,
    GrantOp: lambda op, ctx: decide_grant(op),
    MarkOp: lambda op, ctx: decide_mark(op),
    ReviewDueOp: lambda op, ctx: decide_review_due(op, ctx.record, ctx.now_us, ctx.lifecycle),
    PromoteOp: decide_promote,
    DemoteOp: decide_demote,
    ScopePromoteOp: decide_scope_promote,
}


def decide(op, ctx: Ctx) -> Outcome:
    """Decide any operation (its type names its function in ``DECIDERS``)."""
    try:
        fn = DECIDERS[type(op)]
    except KeyError:
        raise InvalidRecord(f"no decision for an operation of type {type(op).__name__}") from None
    return fn(op, ctx)
