"""GC sweeps (DESIGN sections 7 and 9): plan over L2, apply through the owners, then compact
and clean Lance where it pays.

1. Sync: every owner flushes (its outbox and the access counts recalls left), so L2 is the
   state the plan must see.
2. Plan: the host's (``host.plan``): on Ray ``sweep_plan.plan_dataset`` (Ray tasks by fragment
   over narrow columns), in a Ray task itself, so the driver never loads Lance; in process
   the same scan here. The plan is the dry run.
3. Apply: the plan's rows go to their owners as ``SweepOp``s (a status change per memory,
   its rule as the reason, one ledger group per slice), each owner checking a hot memory
   against its rule again, their own L2 flushes deferred; then the owners flush together,
   their shares written to Lance by the first owner in one pass (``apply_joint``).
4. Maintain: compaction only where the deleted fraction or the count of small fragments passes
   its threshold; versions older than ``version_retention_s`` cleaned (an evicted row is not
   readable in an old version beyond that).

A sweep that dies half-way is rerun safely: applied rows are no longer due (their status
changed), the others are planned again; nothing is applied twice.
"""

from __future__ import annotations

import contextlib
import time
import uuid

import numpy as np
import pyarrow as pa

from ..core.config import Config
from ..core.gc_plan import Plan, PlanBuilder, merge, tenants_of
from ..core.lifecycle import RULES
from ..core.grants import SYSTEM_ACTOR
from ..core.ops import SweepOp
from ..core.scopes import parse_scope
from ..engine.l2_pending import l2_table_exists
from ..engine.naming import owner_index
from .flush_hold import deferred, held
from .refs import get_all, get_one, timed_out

LIFECYCLE_ACTOR = SYSTEM_ACTOR  # sweeps act as the runtime itself: no caller can pass it, no grant names it
# Rows per SweepOp (whole scopes): one ledger group each. Each slice asks the ledger what changed
# since the plan, after the commits queued before it: 10,000 made twice the calls and commits
# (a 1M sweep: 85,134 changes/s at 10,000, 86,422 at 20,000; at 200k +4%, 40,000 no better).
SLICE = 20_000
JOINT_POLL_S = 0.05  # how long the sweeper waits on one owner's joint flush before looking at the next


def _plan_task(path: str, now_us: int, cfg: Config, workers: int | None) -> Plan:
    from .sweep_plan import plan_dataset

    return plan_dataset(path, now_us, cfg.lifecycle, workers=workers)


_TASK: list = []


def plan(l2_path: str, now_us: int, cfg: Config, *, workers: int | None = None) -> Plan:
    """The dry run on Ray: what a sweep at ``now_us`` would do (nothing is changed)."""
    import ray

    if not _TASK:
        _TASK.append(ray.remote(num_cpus=0)(_plan_task))
    return ray.get(_TASK[0].remote(l2_path, int(now_us), cfg, workers))


def restrict(p: Plan, scope: str | None) -> Plan:
    """A plan's rows under ``scope`` only."""
    import pyarrow.compute as pc  # loaded when first used: not on a first write's path
    if scope is not None and p.rows.num_rows:
        root = str(parse_scope(scope))
        scopes = p.rows["scope"].combine_chunks()
        keep = pc.starts_with(scopes, root) if root != "/global/" else pa.array([True] * len(scopes))
        p = p.restrict(keep)
    return p


def apply(plan_: Plan, owners: list, now_us: int, *, since: int, actor: str = LIFECYCLE_ACTOR,
          finish=None) -> dict:
    """Apply a plan through the owners; returns counts by rule, skipped rows and events.
    ``since``: the ledger's last seq before the plan's sync (what changed after it is checked again).
    ``finish()``: a ref to the ledger's ``finish_erasures``, the erased memories' data keys
    deleted (the sweep's hard-TTL erasures name them at commit; see ``Ledger.finish_erasures``):
    started once every share has committed, while L2 is written, and waited for before this
    returns, so a sweep that has returned has deleted its erasures' keys."""
    rows = plan_.rows
    if not rows.num_rows:
        return {"by_rule": {r: 0 for r in RULES[1:]}, "by_tenant": {}, "skipped": 0, "events": 0}
    t0 = time.perf_counter()
    sweep_id = uuid.uuid4().hex[:16]
    by_rule, by_scope, skipped, seconds = {r: 0 for r in RULES[1:]}, {}, 0, {}
    # The owners' own flushes wait while they commit: then their shares reach Lance in one
    # pass (concurrent deletes of one table conflict, and each retry redoes its scan: 5-11 s a
    # sweep of 200k, against ~1.5 s).
    with deferred(owners):
        # Each slice is sent as soon as it is cut: the owners decide the first ones while the
        # rest are sorted (sorting first held both owners idle for 0.4-0.6 s of a 1M sweep).
        refs = []
        for oi, k, part in owner_slices(rows, len(owners)):
            refs.append(owners[oi].submit.remote([SweepOp(part, actor, f"gc-{sweep_id}-{oi}-{k}", since)],
                                                 int(now_us)))
            seconds.setdefault("group", round(time.perf_counter() - t0, 3))
        for out in get_all(refs):
            res = out[0]
            if "error" in res:
                from ..core import errors

                raise errors.decode(res)
            for r, n in res["by_rule"].items():
                by_rule[r] += n
            for sc, n in res.get("by_scope", {}).items():
                by_scope[sc] = by_scope.get(sc, 0) + n
            skipped += res["skipped"]
        seconds["decide_and_commit"] = round(time.perf_counter() - t0 - seconds["group"], 3)
        t0 = time.perf_counter()
        keys = finish() if finish is not None else None
        # Every owner's share reaches Lance together, written by the first owner: one delete and
        # one merge per column set for all (owners one after another made each of those once an
        # owner: 2.2 s of a 1M sweep). No compaction of small fragments here: maintenance is next.
        joint = f"gc-{sweep_id}"
        _joint_flush([o.flush.remote(compact=False, joint=(joint, len(owners), None if i == 0 else owners[0]))
                      for i, o in enumerate(owners)], owners[0], joint)
        seconds["l2"] = round(time.perf_counter() - t0, 3)
        if keys is not None:
            t0 = time.perf_counter()
            get_all([keys])
            seconds["keys_wait"] = round(time.perf_counter() - t0, 3)  # after the L2 write, beside which it ran
    by_tenant: dict[str, int] = {}
    for t, n in zip(tenants_of(list(by_scope)).to_pylist(), by_scope.values()):
        by_tenant[t] = by_tenant.get(t, 0) + n
    return {"by_rule": by_rule, "by_tenant": by_tenant, "skipped": skipped, "events": sum(by_rule.values()),
            "seconds": seconds}


def _joint_flush(flushes: list, applier, key: str) -> None:
    """Wait for the owners' joint flush (``flushes[0]`` the first owner's, which writes them
    all). An owner's flush that fails (its process gone, its ledger unreachable) sends no share:
    the joint is called off at once rather than after the first owner's ``JOINT_WAIT_S``, and
    every owner keeps its batch for its own next flush. The others' flushes return only once the
    joint has landed or failed, so they are watched in turn, briefly each, for the first that fails."""
    pending = list(flushes[1:])
    try:
        while pending:
            for ref in list(pending):
                try:
                    get_one(ref, JOINT_POLL_S if len(pending) > 1 else None)
                except Exception as exc:  # noqa: BLE001 - a timeout: still waiting on the joint
                    if not timed_out(exc):
                        raise
                    continue
                pending.remove(ref)
    except Exception:
        with contextlib.suppress(Exception):  # the first owner gone too: its flush fails anyway
            get_all([applier.abort_joint.remote(key)])
        with contextlib.suppress(Exception):  # theirs say no more than the failure raised here
            get_all(flushes)
        raise
    get_all(flushes[:1])


def owner_slices(rows: pa.Table, num_owners: int):
    """The plan's rows as ``(owner, k, slice)``: each slice about ``SLICE`` rows of whole scopes
    of one owner (its scope locks taken once, so an owner decides its next slice while the
    ledger commits this one), ``(memory_id, scope, rule code)`` sorted by scope then id; an
    owner's slices in order (k = 0, 1, ...) are its rows sorted so, cut where a scope ends once
    ``SLICE`` are reached. Owners take turns, each slice yielded as soon as it is cut. The
    owner is computed once a scope and rows are taken by column (a loop a row was half a
    second of a 1M sweep)."""
    import pyarrow.compute as pc  # loaded when first used: not on a first write's path
    rows = rows.combine_chunks()  # a slice's take from one chunk a column, not from each
    scopes = rows["scope"].combine_chunks().dictionary_encode()
    names = scopes.dictionary.to_pylist()
    of_row = scopes.indices.to_numpy()
    by_scope = np.argsort(of_row, kind="stable")  # row numbers grouped by scope
    counts = np.bincount(of_row, minlength=len(names))
    ends = np.cumsum(counts)
    starts = ends - counts
    plans = {}  # owner -> its scopes (dictionary numbers), in scope order
    for s in sorted(range(len(names)), key=names.__getitem__):
        plans.setdefault(owner_index(parse_scope(names[s]), num_owners), []).append(s)

    def cut(scopes_of: list[int]):
        part, n = [], 0
        for s in scopes_of:
            part.append(s)
            n += int(counts[s])
            if n >= SLICE:
                yield part
                part, n = [], 0
        if part:
            yield part

    def rows_of(part: list[int]) -> list:
        take = np.concatenate([by_scope[starts[s]:ends[s]] for s in part])
        t = rows.take(pa.array(take))
        t = t.take(pc.sort_indices(t, sort_keys=[("scope", "ascending"), ("memory_id", "ascending")]))
        return list(zip(t["memory_id"].to_pylist(), t["scope"].to_pylist(), t["rule"].cast(pa.int64()).to_pylist()))

    cutters = {oi: enumerate(cut(ss)) for oi, ss in sorted(plans.items())}
    while cutters:
        for oi in list(cutters):
            nxt = next(cutters[oi], None)
            if nxt is None:
                del cutters[oi]
            else:
                yield oi, nxt[0], rows_of(nxt[1])


STEPS = ("sync", "plan", "apply", "maintain")


def run(l2_path: str, owners: list, cfg: Config, now_us: int, *, host, dry_run: bool = False,
        scope: str | None = None, workers: int | None = None, progress=None, since: int | None = None,
        set_aside=None, finish=None) -> dict:
    """A whole sweep (see the module docstring); returns the plan and, unless ``dry_run``, what
    was applied and the maintenance done. ``progress(step)`` is called as each step starts.
    ``since``: the ledger's last seq, read before the sync (see ``apply``). ``set_aside(now)``:
    the (memory id, scope) pairs no L2 row holds past their hard TTL, planned as hard_expired.
    ``finish()``: the ledger's key deletes for the sweep's erasures (``apply``)."""
    tell = progress or (lambda step: None)
    t0 = time.perf_counter()
    tell("sync")
    get_all([o.flush.remote() for o in owners])
    tell("plan")
    if l2_table_exists(l2_path):
        p = host.plan(l2_path, now_us, cfg, workers)
    else:  # flushed and still no table: no memory was ever written, so none is due
        p = Plan(now_us=int(now_us))
    if set_aside is not None:  # what L2 does not hold: memories set aside with their key kept
        extra = PlanBuilder(now_us)
        found = set_aside(now_us)
        extra.add_due([m for m, _ in found], [s for _, s in found], RULES.index("hard_expired"))
        p = merge([p, extra.finish()])
    p = restrict(p, scope)
    out = {"plan": p, "dry_run": dry_run, "plan_seconds": round(time.perf_counter() - t0, 3)}
    if dry_run:
        return out
    t1 = time.perf_counter()
    tell("apply")
    out["applied"] = apply(p, owners, now_us, since=since, finish=finish)
    out["apply_seconds"] = round(time.perf_counter() - t1, 3)
    t2 = time.perf_counter()
    tell("maintain")
    lc = cfg.lifecycle
    if not l2_table_exists(l2_path):
        out["maintenance"] = {}  # nothing to compact
    else:
        with held(owners[1:]):
            [out["maintenance"]] = get_all([owners[0].maintain_l2.remote(
                lc.compact_deleted_fraction, lc.compact_small_fragments, lc.compact_small_fragment_rows,
                lc.version_retention_s)])
    out["maintenance_seconds"] = round(time.perf_counter() - t2, 3)
    out["seconds"] = round(time.perf_counter() - t0, 3)
    return out
