"""``rt.gc()``, ``rt.contradictions`` and the lifecycle counters of ``rt.stats()``
(DESIGN section 7)."""

from __future__ import annotations

import logging
import os
import threading
import uuid
from dataclasses import dataclass, field

from ..actors import sweeper
from ..actors.flush_hold import leased
from ..core.errors import BackPressure, MemactorsError
from ..core.grants import GrantTable
from ..core.lifecycle import ACTION_OF, ACTIONS, RULES
from ..core.ops import ResolveOp
from ..core.scopes import parse_scope
from .arguments import typed_calls


@dataclass
class GCResult:
    """A sweep's plan and, unless it was a dry run, what it did.

    ``by_rule``: rule -> memories, ``by_tenant``: tenant -> memories (both planned for a dry
    run, applied otherwise: the plan's own counts are in ``plan``);
    ``plan``: the full plan (``memactors.core.gc_plan.Plan``: ids per rule, bytes, summary)."""

    plan: object
    dry_run: bool
    by_rule: dict
    by_tenant: dict
    applied: dict | None = None
    maintenance: dict | None = None
    seconds: dict = field(default_factory=dict)

    def summary(self) -> str:
        if self.dry_run:
            return self.plan.summary()
        text = self.plan.summary(heading="GC sweep (planned, then applied below)")
        a, m = self.applied or {}, self.maintenance or {}
        lines = [text, "", f"applied: {a.get('events', 0):,} changes (ledger events with their rule), "
                           f"{a.get('skipped', 0):,} skipped (changed since the plan)"]
        if m:
            lines.append(f"L2: {m.get('fragments')} fragments, compacted: {'yes' if m.get('compacted') else 'no'}, "
                         f"versions {m.get('versions_before')} -> {m.get('versions_after')}")
        return "\n".join(lines)

    def to_dict(self) -> dict:
        return {"dry_run": self.dry_run, "by_rule": self.by_rule, "by_tenant": self.by_tenant,
                "applied": self.applied, "maintenance": self.maintenance, "seconds": self.seconds,
                "plan": self.plan.to_dict()}


# The folder's sweep lease lives in the ledger writer, which may outlive this driver (`memactors
# up`): held for LEASE_S and renewed every RENEW_S while the sweep runs, so a driver that dies
# mid-sweep blocks the next sweep for LEASE_S at most, not for as long as a sweep may take.
LEASE_S = 30.0
RENEW_S = 5.0


def run_gc(rt, *, dry_run: bool, scope: str | None, workers: int | None, progress=None) -> GCResult:
    if dry_run:
        return _gc(rt, dry_run, scope, workers, progress)
    holder, ledger = uuid.uuid4().hex, rt._ledger  # noqa: SLF001
    if not rt._calls.get(ledger.sweep_lease.remote(holder, LEASE_S)):  # noqa: SLF001
        raise BackPressure("another sweep of this data folder is running; retry when it has ended")

    def release() -> list:  # not waited on: a ledger writer gone mid-sweep must not hide the sweep's typed error
        ledger.sweep_release.remote(holder)
        return []

    with leased(lambda: [ledger.sweep_lease.remote(holder, LEASE_S)], release, renew_s=RENEW_S):
        return _gc(rt, dry_run, scope, workers, progress)


def _gc(rt, dry_run: bool, scope: str | None, workers: int | None, progress) -> GCResult:
    ledger = rt._ledger  # noqa: SLF001
    # Before the sync: what is committed up to it reaches L2 there, so the plan sees it; what
    # comes after, the owners check again (a memory refreshed or erased in a scope gone cold).
    since = None if dry_run else rt._calls.get(ledger.seq.remote())  # noqa: SLF001
    host = rt._calls.host  # noqa: SLF001

    def step(name: str) -> None:
        if progress is not None:
            progress(name)
        # The recalls made before the sync reach the ledger, so the sync takes their access to L2
        # and the plan sees them; those since the plan, where the owners' re-check reads them.
        if name in ("sync", "apply"):
            rt._evidence.flush()  # noqa: SLF001

    try:
        out = sweeper.run(os.path.join(rt.data_dir, "l2"), rt._owners, rt.config, rt.clock.now_us(),  # noqa: SLF001
                          dry_run=dry_run, scope=scope, workers=workers, progress=step, host=host, since=since,
                          set_aside=lambda now: rt._calls.get(ledger.set_aside_past_hard.remote(now, dry_run)),  # noqa: SLF001
                          finish=ledger.finish_erasures.remote)
    except Exception as exc:  # an owner killed mid-sweep: typed, and what a rerun does
        if isinstance(exc, MemactorsError) or not host.is_failure(exc):
            raise
        err = host.typed(exc)
        if dry_run:
            raise err from None
        raise type(err)(f"the sweep stopped part way ({err}); what it applied stays applied, one event per memory: "
                        "run gc again to finish it") from None
    plan = out["plan"]
    applied = out.get("applied") or {}
    by_rule, by_tenant = (plan.by_rule, plan.by_tenant) if dry_run else (applied["by_rule"], applied["by_tenant"])
    return GCResult(plan, dry_run, by_rule, by_tenant, out.get("applied"), out.get("maintenance"),
                    {k: v for k, v in out.items() if k.endswith("seconds")})


@typed_calls("rt.contradictions")
class Contradictions:
    """Close calls between versions of one fact from different sources, kept live and flagged
    ``review = "contradiction"`` until a reviewer picks one."""

    def __init__(self, rt) -> None:
        self._rt = rt

    def pending(self, scope: str, *, actor: str) -> list[dict]:
        """Flagged versions in ``scope``, grouped by fact: [{"subject", "predicate", "memories": [...]}];
        text-only ones (no subject, no predicate) grouped by which say each other's opposite. A
        version past its hard TTL is left out, and so is a group left with one side."""
        rt = self._rt
        s = str(parse_scope(rt._ids.scope(scope)))  # noqa: SLF001
        actor = rt._ids.id(actor, "actor")  # noqa: SLF001
        GrantTable.make(actor, s)
        rows = rt._calls.get(rt._owner(s).flagged.remote([s], actor, rt.clock.now_us()))  # noqa: SLF001
        groups: dict = {}
        texts = []
        for r in rows:
            if r["subject"] is None and r["predicate"] is None:
                texts.append(r)
            else:
                groups.setdefault((r["subject"], r["predicate"]), []).append(r)
        # A side left alone (its rival past its hard TTL, or one the actor may not see) is in no
        # contradiction this reviewer could settle: only groups of two or more are listed.
        out = [{"subject": k[0], "predicate": k[1], "memories": v} for k, v in groups.items() if len(v) > 1]
        return out + [{"subject": None, "predicate": None, "memories": g} for g in _opposed_groups(texts) if len(g) > 1]

    def resolve(self, memory_id: str, *, actor: str, reason: str) -> dict:
        """``memory_id`` stays live; the versions flagged with it are superseded. A ledger event
        each, with the reason. A version past its hard TTL cannot win (NotFound: it has expired)."""
        rt = self._rt
        return rt._by_memory(ResolveOp(memory_id, rt._ids.id(actor, "actor"), reason, rt._new_key()))  # noqa: SLF001


def _opposed_groups(rows: list[dict]) -> list[list[dict]]:
    """Flagged text-only memories in groups of those that say each other's opposite (the pairs
    ``text_contradiction`` finds, joined when they share a memory): "Alice is vegetarian" and
    "Alice is not vegetarian" in one, "Carol has 3 cats" and "Carol has 4 cats" in another."""
    from ..core.contradictions import text_contradiction

    head = list(range(len(rows)))

    def root(i: int) -> int:
        while head[i] != i:
            head[i] = head[head[i]]
            i = head[i]
        return i

    for i in range(len(rows)):
        for j in range(i + 1, len(rows)):
            if text_contradiction(rows[i]["content"] or "", rows[j]["content"] or ""):
                head[root(j)] = root(i)
    groups: dict[int, list[dict]] = {}
    for i, r in enumerate(rows):
        groups.setdefault(root(i), []).append(r)
    return list(groups.values())


class Schedule:
    """Lifecycle rounds on a schedule (``[lifecycle].sweep_interval_s`` of the runtime's clock,
    so a simulated clock moving days ahead brings its rounds with it): a GC sweep (its rules
    evict, mark stale and flag memories due for their periodic review), then a demotion pass.
    A daemon thread of the process that connected, one sweep at a time per folder (the ledger
    writer's lease)."""

    def __init__(self, rt, interval_s: float) -> None:
        self._rt, self._interval_us = rt, int(interval_s * 1_000_000)
        self._last = rt.clock.now_us()
        self._stop = threading.Event()
        self.runs = 0
        threading.Thread(target=self._loop, name="memactors-gc-schedule", daemon=True).start()

    def _loop(self) -> None:
        log = logging.getLogger("memactors.gc")
        while not self._stop.wait(1.0):
            now = self._rt.clock.now_us()
            if now - self._last < self._interval_us:
                continue
            self._last = now
            try:
                self._rt.gc()
                self._rt.demote_unused()
                self.runs += 1
            except BackPressure:
                pass  # another process's sweep is running: the next round comes
            except Exception:  # noqa: BLE001 - a failed sweep is retried at the next interval
                if self._stop.is_set():
                    return
                log.exception("scheduled sweep failed; retrying at the next interval")

    def stop(self) -> None:
        self._stop.set()


def action_of(rule: str) -> str:
    return ACTIONS[ACTION_OF[RULES.index(rule)]]


def collect_stats(rt) -> dict:
    """Lifecycle counters (from the ledger), memories by status, pool and tenant and their
    expiry distribution (from L2), the owners' own figures, and the data folder's size."""
    calls = rt._calls  # noqa: SLF001
    rt.flush()
    now = rt.clock.now_us()
    counters = calls.get(rt._ledger.counters.remote())  # noqa: SLF001
    owners = calls.get([o.stats.remote() for o in rt._owners])  # noqa: SLF001
    memories = calls.get(rt._owners[0].l2_counts.remote(now))  # noqa: SLF001
    memories["working_pool"] = sum(o["working_items"] for o in owners)
    size = files = 0
    for root, _dirs, names in os.walk(rt.data_dir):
        for n in names:
            try:
                size += os.path.getsize(os.path.join(root, n))
                files += 1
            except OSError:
                pass
    out = {"counters": counters, "memories": memories, "owners": owners,
           "data_folder": {"bytes": size, "files": files}}
    export_metrics(out, rt._calls.host)  # noqa: SLF001
    return out


_GAUGES: dict = {}


def export_metrics(stats: dict, host) -> None:
    """The counters as the host's metrics (on Ray: Prometheus format through Ray's metrics
    agent, so a cluster user sees them on a dashboard). Set whenever stats are collected."""
    if not host.metrics:
        return  # a host without metrics (the process host)

    def gauge(name: str, desc: str, keys: tuple = ()):
        if name not in _GAUGES:
            _GAUGES[name] = host.gauge(name, desc, keys)
        return _GAUGES[name]

    c, m = stats["counters"], stats["memories"]
    g = gauge("memactors_events", "ledger events by kind", ("kind",))
    for kind in ("writes", "blocks", "forgets", "reads", "hits", "citations"):
        g.set(c[kind], tags={"kind": kind})
    g = gauge("memactors_evictions", "GC evictions by rule", ("rule",))
    for rule, n in c["evictions"].items():
        g.set(n, tags={"rule": rule})
    g = gauge("memactors_memories", "memories in L2 by status", ("status",))
    for status, n in m["by_status"].items():
        g.set(n, tags={"status": status})
    gauge("memactors_data_folder_bytes", "bytes in the data folder").set(stats["data_folder"]["bytes"])
