"""The facade users hold: ``connect`` a data folder, then write, recall, forget, grant, audit.

Its methods validate, check grants, build operations (``memactors.core.ops``) and hand them in
batches to the owners' one entry point; recalls go to the owners of the visible scopes (over
a compiled graph for one tenant). Sync methods block; each has an async twin. The recall
half lives in ``recall_api.RecallAPI``, the async twins in ``async_api.AsyncAPI``.
"""

from __future__ import annotations

import os
import time
import tomllib
import uuid
from datetime import datetime
from typing import Any

import ray

from ..actors.naming import namespace_for, owner_index, owner_of_memory
from ..core import errors, lifecycle
from ..core import records as R
from ..core.clock import Clock, SystemClock
from ..core.config import Config
from ..core.contradictions import load_judge
from ..core.errors import (BackPressure, ConfigError, LedgerTampered, MemactorsError, NotFound, PartialWrite,
                           Unavailable)
from ..core.grants import GrantTable
from ..core.ops import DemoteOp, ForgetOp, GrantOp, ScopePromoteOp
from ..core.scopes import parse_scope
from ..core import validate as V
from ..embed import embedder_names, get_embedder
from ..gate import Gate, GatePolicy
from ..store.layout import resolve
from ..store.ledger_key import key_dir
from . import history, ray_link, startup
from ..actors.sweeper import LIFECYCLE_ACTOR
from .async_api import AsyncAPI
from .audit import Audit, l2_problem
from .calls import Calls
from .evidence import RecallLog
from .history import RollbackPlan
from .hot_path import CompiledRecall
from .lifecycle import Contradictions, GCResult, Schedule, collect_stats, run_gc
from .recall_api import RecallAPI
from .review import Review
from .session import Session, Tick


def load_config(config: Config | dict | str | os.PathLike | None) -> Config:
    """A checked Config from a Config, a dict shaped like configs/default.toml, a TOML file's
    path, or None (the defaults). Any wrong key, type, range or embedder name: ConfigError."""
    names = embedder_names()
    if config is None or isinstance(config, Config):
        cfg = (config or Config()).checked(embedders=names)
    elif isinstance(config, dict):
        cfg = Config.from_dict(config, embedders=names)
    elif isinstance(config, (str, os.PathLike)):
        try:
            with open(config, "rb") as f:
                data = tomllib.load(f)
        except (OSError, tomllib.TOMLDecodeError) as exc:
            raise ConfigError(f"cannot read config {config}: {type(exc).__name__}: {exc}") from None
        cfg = Config.from_dict(data, embedders=names)
    else:
        raise ConfigError(f"config must be a Config, a dict or a path to a TOML file, not {type(config).__name__}")
    try:  # the gate policy is checked here, before any actor starts with it
        GatePolicy.from_dict(cfg.gate)
    except ValueError as exc:
        raise ConfigError(f"[gate]: {exc}") from None
    load_judge(cfg.lifecycle.judge)  # a judge that cannot be loaded is a ConfigError now, not in an owner
    return cfg


def connect(path: str | os.PathLike, *, address: str | None = None, config: Any = None,
            clock: Clock | None = None, detached: bool = False) -> Runtime:
    """Open (or create) the data folder at ``path``: start a local Ray when none runs (join
    ``address`` when given), and start or find this folder's ledger writer and scope owners."""
    return Runtime(os.fspath(path), address=address, config=load_config(config), clock=clock, detached=detached)


class Runtime(RecallAPI, AsyncAPI):
    def __init__(self, data_dir: str, *, address: str | None, config: Config, clock: Clock | None,
                 detached: bool) -> None:
        self.data_dir = resolve(data_dir)
        os.makedirs(self.data_dir, exist_ok=True)
        self.config = config
        self.clock = clock or SystemClock()
        self.namespace = namespace_for(self.data_dir)
        self._started_ray = False
        self._detached = detached
        link = None
        if not ray.is_initialized():
            # A new local Ray unless told otherwise: never join a stray cluster by accident.
            link = ray_link.join(self.data_dir, data_dir, address, self.namespace, detached)
            self._started_ray = True
        # Resolved here, where the caller's environment and home folder are: actors get a path.
        config.runtime.key_dir = key_dir(config.runtime.key_dir)
        startup.sized(config.runtime)
        try:
            self._actors = startup.start(self.data_dir, config, self.namespace, detached=detached)
        except BaseException:
            if self._started_ray:  # nothing of ours runs: do not leave a Ray behind
                ray.shutdown()
            raise
        self._ledger, self._owners = self._actors.ledger, self._actors.owners
        self._calls = Calls(config.runtime.call_timeout_s, link)
        # Not when attached to a shared runtime (`memactors up`): compiled graphs of several
        # drivers on one owner hung it (found by tests/chaos/test_concurrency.py).
        self._compiled = [] if detached else [CompiledRecall(o, config.runtime.call_timeout_s) for o in self._owners]
        self.gate = Gate(policy=GatePolicy.from_dict(config.gate))
        self.embedder = get_embedder(config.embedder.name, config.embedder.dim)
        self._evidence = RecallLog(self._ledger, self._calls.get(self._ledger.digest_key.remote()),
                                   config.recall.log_flush_s, self._calls.get)
        self._grants = GrantTable()
        self._grant_seq = 0
        self._demote_since: dict[tuple, int] = {}  # (threshold, scope) -> when demote_unused last looked
        self._sync_grants()
        self.audit = Audit(self._calls, self._ledger, self._owners, self._evidence.flush,
                           lambda at, **kw: history.snapshot(self, at, **kw))
        self.review = Review(self)
        self.contradictions = Contradictions(self)
        subscribe = getattr(self.clock, "subscribe", None)
        if subscribe is not None:  # a simulated clock: its moves reach every owner
            subscribe(self._clock_moved)
        # L2 against the ledger at open (owners start here: replay, then compare): rows deleted
        # or added behind the runtime's back are refused, not served.
        try:
            problem = l2_problem(self._calls.get([o.check_l2.remote() for o in self._owners]))
        except MemactorsError:  # L2 unreadable: nothing of this runtime may keep the folder
            self._abandon()
            raise
        if problem:
            self.close()
            raise LedgerTampered(f"{self.data_dir}: {problem} (table l2); restore the data folder from a backup")
        # Sweeps act as the lifecycle actor: its grant is a ledger event like any other.
        lifecycle_grant = {"actor": LIFECYCLE_ACTOR, "scope": "/global/", "read": True, "write": True}
        wanted = [g for g in [lifecycle_grant, *config.grants] if self._grant_differs(g)]
        if wanted:
            self.grant_many([dict(g, by="config" if g is not lifecycle_grant else "memactors") for g in wanted])
        interval = config.lifecycle.sweep_interval_s
        self._schedule = Schedule(self, interval) if interval > 0 else None

    # --- plumbing --------------------------------------------------------------------------

    def _check_open(self) -> None:
        self._calls.check_open()

    def _owner(self, scope: str):
        return self._owners[owner_index(parse_scope(scope), len(self._owners))]

    @staticmethod
    def _new_key() -> str:
        return uuid.uuid4().hex

    def _clock_moved(self, now_us: int) -> None:
        if not self._calls.closed:
            for o in self._owners:
                o.set_now.remote(now_us)

    def _sync_grants(self) -> None:
        self._grant_seq, changes = self._calls.get(self._ledger.grants_since.remote(self._grant_seq))
        for g in changes:
            self._grants.put(GrantTable.make(g["actor"], g["scope"], read=g["read"], write=g["write"]))

    def _grant_differs(self, g: dict) -> bool:
        have = {(x.actor, str(x.scope)): x for x in self._grants.grants_of(g["actor"])}.get(
            (g["actor"], str(parse_scope(g["scope"]))))
        return have is None or (have.read, have.write) != (g["read"], g["write"])

    # --- grants ----------------------------------------------------------------------------

    def grant(self, actor: str, scope: str, *, read: bool = True, write: bool = False, by: str = "admin") -> dict:
        """Let ``actor`` read (and write) ``scope`` and its descendants; read=False, write=False
        revokes. Each change is a ledger event."""
        return self.grant_many([{"actor": actor, "scope": scope, "read": read, "write": write, "by": by}])[0]

    def grant_many(self, grants: list[dict]) -> list[dict]:
        """Many grant changes (thousands of agents) in one ledger group per owner, then every
        owner learns them once. Each item: actor, scope, read (default True), write (default
        False), by (default "admin")."""
        self._check_open()
        if not isinstance(grants, (list, tuple)):
            raise R.InvalidRecord("grant_many takes a list of grants")
        ops = []
        for g in grants:
            if not isinstance(g, dict) or not {"actor", "scope"} <= set(g) or set(g) - {"actor", "scope", "read",
                                                                                          "write", "by"}:
                raise R.InvalidRecord("each grant is a dict with actor and scope (and read, write, by)")
            ops.append(GrantOp(g["actor"], g["scope"], g.get("read", True), g.get("write", False),
                               g.get("by", "admin"), self._new_key()).validate())
        out = self._submit_by_scope(ops)
        self._calls.get([o.reload_grants.remote() for o in self._owners])
        self._sync_grants()
        return out

    def grants(self, actor: str | None = None) -> list[dict]:
        return [g.to_dict() for g in self._grants.all() if actor is None or g.actor == actor]

    def _submit_by_scope(self, ops: list) -> list[dict]:
        """Operations addressed by scope, one call per owner; item errors raised typed."""
        n = len(self._owners)
        results = self._submit_grouped(ops, lambda op: owner_index(parse_scope(op.scope), n))
        _raise_item_errors(results)
        return results

    def _submit_grouped(self, ops: list, owner_of) -> list:
        """``ops`` submitted in one call per owner (``owner_of(op)`` -> owner index), all owners
        at once; an owner that is restarting is retried with the same operations (same keys).
        Returns each op's raw result, in order."""
        by_owner: dict[int, list[int]] = {}
        for i, op in enumerate(ops):
            by_owner.setdefault(owner_of(op), []).append(i)
        now = self.clock.now_us()
        results: list = [None] * len(ops)
        # In calls of at most _batch_max items, one per owner at a time: a long list (50,000
        # agents' grants) never outruns an owner's queue bound.
        size = _batch_max(self.config.runtime)
        parts = {oi: [idx[k:k + size] for k in range(0, len(idx), size)] for oi, idx in by_owner.items()}
        for r in range(max((len(p) for p in parts.values()), default=0)):
            batch = {oi: p[r] for oi, p in parts.items() if r < len(p)}
            refs = {oi: self._owners[oi].submit.remote([ops[i] for i in idx], now) for oi, idx in batch.items()}
            for oi, idx in batch.items():
                try:
                    out = self._calls.get(refs[oi])
                except errors.OwnerUnavailable:
                    out = self._calls.retrying(lambda o=self._owners[oi], b=[ops[i] for i in idx]:
                                               o.submit.remote(b, now))
                for i, res in zip(idx, out):
                    results[i] = res
        return results

    # --- writes ----------------------------------------------------------------------------

    def write(self, scope: str, text: str, *, actor: str, subject: str | None = None, predicate: str | None = None,
              object: str | None = None, source: str = "user_stated", confidence: float | None = None,
              sensitivity: str = "internal", ttl_days: float | None = None, pool: str = "vault",
              idempotency_key: str | None = None, **extra: Any) -> R.WriteResult:
        """Write one memory through the gate; returns its decision, memory id and version."""
        item = dict(scope=scope, text=text, actor=actor, subject=subject, predicate=predicate, object=object,
                    source=source, confidence=confidence, sensitivity=sensitivity, ttl_days=ttl_days, pool=pool,
                    idempotency_key=idempotency_key, **extra)
        return self.write_many([item])[0]

    def write_many(self, items: list[dict | R.WriteRequest], *, return_errors: bool = False) -> list[R.WriteResult]:
        """Write many memories: every item validated and grant-checked before anything is
        written (a bad item writes nothing), then sent to the owners in batches of
        ``write_batch_max``, a bounded number in flight per owner. Every batch is awaited. Items
        without an idempotency key get one (``err.items`` carries them if the call fails part
        way, so resubmitting those never writes twice).

        ``return_errors=True`` (many agents' actions in one batch): a bad or refused item gets its
        typed error in place of its result and the others are written."""
        self._check_open()
        reqs = R.write_requests(items)
        for i, r in enumerate(reqs):  # the category and its TTL policy, with this runtime's [lifecycle]
            if isinstance(r, MemactorsError):
                continue
            try:
                lifecycle.ttl_policy(r.category, r.ttl_days, r.soft_ttl_days, self.config.lifecycle)
            except MemactorsError as exc:
                reqs[i] = type(exc)(f"write at position {i}: {exc}")
        bad = next((r for r in reqs if isinstance(r, MemactorsError)), None)
        if bad is not None and not return_errors:  # all or nothing at the door: the error names the position
            raise bad
        if return_errors:
            for i, r in enumerate(reqs):
                if not isinstance(r, MemactorsError):
                    try:
                        self._precheck_writes([r])
                    except MemactorsError as exc:
                        reqs[i] = type(exc)(f"write at position {i}: {exc}")
        else:
            self._precheck_writes(reqs)
        good = [i for i, r in enumerate(reqs) if not isinstance(r, MemactorsError)]
        call = uuid.uuid4().hex[:16]
        for i in good:
            if reqs[i].idempotency_key is None:
                reqs[i].idempotency_key = f"{call}-{i}"
        sent = self._send_writes([reqs[i] for i in good], self.clock.now_us()) if good else []
        if not return_errors:
            _raise_item_errors(sent, reqs)
            return sent
        results: list = list(reqs)
        for i, r in zip(good, sent):
            results[i] = errors.decode(r) if errors.is_encoded(r) else r
        return results

    def _send_writes(self, reqs: list[R.WriteRequest], now: int) -> list:
        """Columns per owner call, a window of calls in flight per owner (our own calls never
        overrun an owner's queue); back pressure from others is waited out until the call
        timeout, a restarting owner retried (the keys make it safe)."""
        n_owners = len(self._owners)
        rc = self.config.runtime
        batch_max = _batch_max(rc)
        window = max(1, rc.owner_queue_max // batch_max - 1)
        queues: dict[int, list[list[int]]] = {}
        for i, r in enumerate(reqs):
            oi = owner_index(r.scope_obj, n_owners)
            q = queues.setdefault(oi, [[]])
            if len(q[-1]) >= batch_max:
                q.append([])
            q[-1].append(i)
        results: list = [None] * len(reqs)
        failures: dict[int, MemactorsError] = {}
        inflight: dict = {}  # ref -> (owner index, item indices, attempt deadline)
        deadline = time.monotonic() + rc.call_timeout_s

        def send(oi: int, part: list[int]) -> None:
            cols = _columns([reqs[i] for i in part])
            inflight[self._owners[oi].write_batch.remote(cols, now)] = (oi, part)

        pending = {oi: list(q) for oi, q in queues.items()}
        for oi, q in pending.items():
            while q and sum(1 for v in inflight.values() if v[0] == oi) < window:
                send(oi, q.pop(0))
        delay = 0.05
        while inflight:
            done, _ = self._calls.wait(list(inflight), num_returns=1, timeout=rc.call_timeout_s)
            if not done:
                break
            ref = done[0]
            oi, part = inflight.pop(ref)
            try:
                out = self._calls.get(ref)
            except (BackPressure, errors.OwnerUnavailable) as exc:
                if time.monotonic() > deadline:
                    for i in part:
                        failures[i] = exc
                else:  # wait it out: the same items, the same keys
                    time.sleep(delay)
                    delay = min(delay * 2, 1.0)
                    send(oi, part)
                continue
            except MemactorsError as exc:
                if self._calls.gone:  # the attached runtime went away: nothing more is confirmed here
                    raise
                for i in part:
                    failures[i] = exc
                continue
            for i, d in zip(part, out):
                results[i] = d if errors.is_encoded(d) else R.WriteResult(**d)
            q = pending.get(oi)
            if q:
                send(oi, q.pop(0))
        for ref, (oi, part) in inflight.items():  # never answered in time: in flight, not lost
            for i in part:
                failures[i] = errors.Unavailable("no answer in time; the write may still complete")
        for q in pending.values():
            for part in q:
                for i in part:
                    failures.setdefault(i, BackPressure("not sent: the owner stayed busy"))
        if failures:
            done_results = [None if (i in failures or errors.is_encoded(r)) else r for i, r in enumerate(results)]
            first = failures[min(failures)]
            raise PartialWrite(
                f"{len(failures)} of {len(reqs)} writes were not confirmed ({type(first).__name__}: {first}); "
                f"{sum(r is not None for r in done_results)} were written. Resubmit err.items (they keep their "
                "idempotency keys): nothing is written twice.",
                results=done_results, items=[R.request_fields(reqs[i]) for i in sorted(failures)],
                failed=sorted(failures))
        return results

    def _precheck_writes(self, reqs: list[R.WriteRequest]) -> None:
        self._check_write([(r.actor, r.scope_obj) for r in reqs])

    def tick(self) -> Tick:
        """``with rt.tick() as t: t.write(...)``: the tick's writes are committed together at its
        end (see ``Tick``)."""
        self._check_open()
        return Tick(self)

    # --- sessions, promotion and demotion ----------------------------------------------------

    def session(self, scope: str, *, actor: str, task_id: str, goal: str, plan=(), constraints=(),
                purpose: str = "task") -> Session:
        """A session of the agent loop bound to ``scope`` and ``task_id`` (``memactors.runtime.
        session``): ``start()``, ``before_llm()``, ``before_tool(name, args)``, ``observe(source,
        content, importance=..., critical=...)``, ``end_turn()``, ``complete(summary, outcome)``.
        Goal, plan and constraints must pass the write gate."""
        self._check_open()
        return Session(self, scope, actor=actor, task_id=task_id, goal=goal, plan=plan, constraints=constraints,
                       purpose=purpose)

    def resume_session(self, scope: str, *, actor: str, task_id: str, purpose: str = "task") -> Session:
        """A session rebuilt from the ledger (its L0 and turn), after its process died."""
        self._check_open()
        return Session.resume(self, scope, actor=actor, task_id=task_id, purpose=purpose)

    def promote(self, memory_id: str, to_scope: str, *, actor: str, reason: str) -> dict:
        """Promote a live vault memory up its scope tree (task -> user -> org): a new memory in
        ``to_scope`` (an ancestor of the memory's scope) derived from it; versions and dedup of
        the target apply. ``actor`` needs a write grant on ``to_scope`` and a read grant on the
        source's scope; the ledger event names the source and the reason. Returns the write's
        result with ``promoted_from`` and ``from_scope``."""
        self._check_open()
        op = ScopePromoteOp(memory_id, to_scope, actor, reason, self._new_key()).validate()
        self._check_write([(actor, parse_scope(op.scope))])
        return self._submit_by_scope([op])[0]

    def demote_unused(self, *, after: int | None = None, scope: str | None = None) -> dict:
        """Demotion (DESIGN section 2): every live vault memory returned ``after`` times in a row
        without a citation (default ``[lifecycle].demote_after``) goes back to the working pool;
        a demoted copy ignored as often again is archived. ``scope``: only memories in it or
        below it (None: all). Decided by each memory's owner against the record it holds, one
        ledger event per change. Returns counts by outcome."""
        from ..actors.sweeper import LIFECYCLE_ACTOR

        self._check_open()
        n = self.config.lifecycle.demote_after if after is None else V.integer(after, "after", 1, 1_000_000)
        under = parse_scope(scope) if scope is not None else None
        self._evidence.flush()
        key = (n, str(under))
        since = self._demote_since.get(key, 0)
        started = self.clock.now_us()
        rows = self._calls.get(self._ledger.uncited_runs.remote(n, since))
        if under is not None:
            rows = [r for r in rows if under.is_ancestor_or_self(parse_scope(r[1]))]
        ops = [DemoteOp(mid, LIFECYCLE_ACTOR, int(streak), n, f"demote-{mid}-{streak}") for mid, _scope, streak in rows]
        counts: dict[str, int] = {}
        for r in self._submit_by_memory(ops) if ops else []:
            key = type(r).__name__ if isinstance(r, MemactorsError) else r["decision"]
            counts[key] = counts.get(key, 0) + 1
        self._demote_since[key] = started
        return {"checked": len(ops), **counts}

    def _submit_by_memory(self, ops: list) -> list:
        """Operations addressed by memory id, one call per owner (the id's tenant tag names it;
        an id it does not hold is routed again by the ledger's index). Each result is a dict or
        the typed error that refused it."""
        n = len(self._owners)
        out = self._submit_grouped(ops, lambda op: owner_of_memory(op.memory_id, n))
        for i, r in enumerate(out):
            if isinstance(r, dict) and r.get("not_here"):
                try:
                    out[i] = self._by_memory(ops[i])
                except MemactorsError as exc:
                    out[i] = exc
            elif errors.is_encoded(r):
                out[i] = errors.decode(r)
        return out

    def _session_items(self, scope: str, actor: str, task_id: str) -> list[dict]:
        """The working items of ``scope`` within the session TTL, folded from the ledger (what
        ``Session.resume`` rebuilds L0 from). ``actor`` needs a read grant on ``scope``."""
        from ..core import events as E
        from ..core.project import Rows, apply

        self._check_open()
        sc = parse_scope(scope)
        self._check_read(actor, [sc])
        since = self.clock.now_us() - int(self.config.runtime.session_ttl_s * 1_000_000)
        rows, order = Rows(), {}
        for seq, ch in self._calls.get(self._ledger.working_since.remote(since)):
            if ch is None or ch.scope != str(sc):
                continue
            if ch.action == E.WRITE_WORKING or ch.memory_id in rows.records:
                order.setdefault(ch.memory_id, seq)
                apply(rows, ch)
        return sorted((r for r in rows.records.values() if r.get("pool") == "working"),
                      key=lambda r: order[r["memory_id"]])  # ledger order: the order they were observed in

    def _check_read(self, actor: str, scopes: list) -> list:
        """``actor``'s read grants cover ``scopes`` (the grant table synced once if not)."""
        try:
            return self._grants.check_recall(actor, scopes)
        except MemactorsError:
            self._sync_grants()
            return self._grants.check_recall(actor, scopes)

    def _check_write(self, pairs: list[tuple[str, Any]]) -> None:
        """Each (actor, scope) is under a write grant (the grant table synced once if not:
        another process may have granted since)."""
        try:
            for actor, scope in pairs:
                self._grants.check_write(actor, scope)
        except MemactorsError:
            self._sync_grants()
            for actor, scope in pairs:
                self._grants.check_write(actor, scope)

    # --- changes addressed by memory id ----------------------------------------------------------

    def forget(self, memory_id: str, *, actor: str, reason: str, scope: str = "memory") -> dict:
        """Erase a memory: a tombstone event, its data key destroyed, its L2 row and caches gone.
        ``scope="fact"`` erases every version of its fact (same subject and predicate)."""
        if scope not in ("memory", "fact"):
            raise R.InvalidRecord('scope must be "memory" or "fact"')
        return self._by_memory(ForgetOp(memory_id, actor, reason, self._new_key(), all_versions=scope == "fact"))

    def _by_memory(self, op) -> dict:
        """Route an operation on one memory to its owner: the id's tenant tag names it; an id
        from before tags, or a mistaken one, is looked up in the ledger (the index)."""
        self._check_open()
        op.validate()
        n = len(self._owners)
        now = self.clock.now_us()
        tried = set()
        oi = owner_of_memory(op.memory_id, n)
        for _ in range(2):
            tried.add(oi)
            out = self._calls.retrying(lambda o=self._owners[oi]: o.submit.remote([op], now))[0]
            if not out.get("not_here"):
                _raise_item_errors([out])
                return out
            scope = self._calls.get(self._ledger.scopes_of.remote([op.memory_id])).get(op.memory_id)
            if scope is None:
                break
            oi = owner_index(parse_scope(scope), n)
            if oi in tried:
                break
        raise NotFound(f"no memory {op.memory_id} to change")

    # --- maintenance -----------------------------------------------------------------------

    def flush(self) -> None:
        """Bring L2 up to the ledger now (normally it trails by at most the flush interval),
        recall evidence and the access counts it carries included."""
        self._evidence.flush()
        self._calls.get([o.flush.remote() for o in self._owners])

    def purge(self) -> dict:
        """Do now what the purge delay ([lifecycle].purge_delay_s) would do later: erased rows'
        bytes leave L2's data files, its full-text index and its old versions, and destroyed
        data keys leave the ledger file's freed blocks."""
        self._check_open()
        self.flush()
        return self._calls.get(self._ledger.purge.remote(), timeout=max(600.0, self.config.runtime.call_timeout_s))

    def stats(self) -> dict:
        """Lifecycle counters (writes, reads, hits, dedups by kind, contradictions auto/queued/
        resolved, blocks, evictions by rule, stale marks), memories by status, pool and tenant,
        their expiry distribution, the owners' figures and the data folder's bytes; also set as
        Ray metrics (``memactors_*`` gauges)."""
        return collect_stats(self)

    # --- undo and prove -----------------------------------------------------------------------

    def rollback(self, *, to: int | str | datetime | None = None, memory_id: str | None = None,
                 where: dict | None = None, cascade: bool = False, scope: str | None = None, actor: str,
                 reason: str, dry_run: bool = False) -> RollbackPlan:
        """Undo by compensating events (history is never rewritten), one of:

        - ``to``: a point in time (seq, ISO time, datetime): every memory changed since goes back
          to its state then;
        - ``memory_id``: that memory is taken out of recall and what it superseded reinstated;
          ``cascade=True`` undoes what was derived only from it too (what was derived from it
          and others is flagged ``review="source_rolled_back"``);
        - ``where``: {"source_kind", "actor", "since", "until"}: every write matching it, as above.

        ``scope`` limits ``to`` and ``where`` to a subtree (one tenant's rollback). ``actor``
        needs write grants on every scope the rollback changes.

        ``verify()`` runs first; a broken chain refuses. A forgotten memory stays forgotten (the
        plan says so). ``dry_run``: the plan only, nothing changed. Applied as one ledger
        transaction per owner holding the memories."""
        self._check_open()
        R.check_identifier(actor, "actor")
        self.flush()
        return history.rollback(self, to=to, memory_id=memory_id, where=where, cascade=cascade, scope=scope,
                                actor=actor, reason=reason, dry_run=dry_run)

    def fork(self, path: str | os.PathLike, *, at: int | str | datetime | None = None,
             workers: int | None = None) -> dict:
        """A new data folder holding this one as of ``at`` (default: now): its ledger is this
        ledger up to that point (the chain intact, verifiable on its own under its own key), its
        L2 rebuilt from it; memories erased here since stay erased there. This folder is not
        touched. Open the fork with ``memactors.connect(path)``."""
        self._check_open()
        if workers is not None:
            V.integer(workers, "workers", 1, 4096)
        return history.fork(self, path, at=at, workers=workers)

    def gc(self, *, dry_run: bool = False, scope: str | None = None, workers: int | None = None,
           progress=None) -> GCResult:
        """A lifecycle sweep at the clock's now: plan (``dry_run``: nothing changes) over L2 by
        rule and tenant, then apply it through the owners (a ledger event per memory with its
        rule), delete evicted rows (one Lance commit per owner), compact where it pays and clean
        versions past ``[lifecycle].version_retention_s``. ``scope`` limits it to a subtree;
        ``progress(step)`` hears each step (sync, plan, apply, maintain) as it starts."""
        self._check_open()
        if scope is not None:
            scope = str(parse_scope(scope))
        if workers is not None:
            V.integer(workers, "workers", 1, 4096)
        self._evidence.flush()  # recalls so far count as access before the plan is made
        return run_gc(self, dry_run=bool(dry_run), scope=scope, workers=workers, progress=progress)

    def close(self) -> None:
        """Flush and stop this folder's actors (unless they are a detached ``memactors up`` runtime)."""
        if self._calls.closed:
            return
        if getattr(self, "_schedule", None) is not None:
            self._schedule.stop()
        try:
            self._evidence.close()
            self.flush()
            self._calls.get(self._ledger.flush.remote(), timeout=30)
        except Unavailable:
            if self._calls.still_there():
                raise  # an attached runtime that went away has nothing left to flush into
        finally:
            self._calls.closed = True
            for c in self._compiled:
                c.teardown()
            if not self._detached_runtime() and self._calls.still_there():
                startup.stop(self._actors)
            if self._started_ray:
                ray.shutdown()

    def _abandon(self) -> None:
        """Stop without flushing (a runtime that failed to open)."""
        self._calls.closed = True
        for c in self._compiled:
            c.teardown()
        if not self._detached_runtime():
            startup.stop(self._actors)
        if self._started_ray:
            ray.shutdown()

    def _detached_runtime(self) -> bool:
        # Attached to an `up` runtime (its actors outlive this driver). `down` removes
        # runtime.json first, so that its close() stops them.
        return self._detached and os.path.exists(os.path.join(self.data_dir, "runtime.json"))

    def __enter__(self) -> Runtime:
        return self

    def __exit__(self, *exc) -> None:
        self.close()



def _batch_max(rc) -> int:
    """Items per owner call: ``write_batch_max``, and at most half an owner's queue (room left
    for other callers)."""
    return max(1, min(rc.write_batch_max, rc.owner_queue_max // 2))


def _columns(reqs: list[R.WriteRequest]) -> dict:
    """Writes as columns for the owner (only the fields some write sets; the rest default)."""
    names = [k for k in R.WriteRequest.__dataclass_fields__
             if k in ("scope", "text", "actor") or any(getattr(r, k) != _DEFAULT[k] for r in reqs)]
    return {k: [getattr(r, k) for r in reqs] for k in names}


_DEFAULT = {k: f.default for k, f in R.WriteRequest.__dataclass_fields__.items()}


def _raise_item_errors(results: list, reqs: list | None = None) -> None:
    """Items an owner refused one by one (an idempotency key reused for another write, a
    grant beyond reach) raise their typed error; ``err.results`` holds what the other items
    did (None for the refused ones) and ``err.failed`` the refused positions."""
    failed = [i for i, r in enumerate(results) if errors.is_encoded(r)]
    if not failed:
        return
    first = results[failed[0]]
    err = errors.decode(first)
    if len(results) > 1:
        err = type(err)(f"{len(failed)} of {len(results)} items were refused (first at position {failed[0]}: "
                        f"{first['message']}); the others were written")
    err.results = [None if errors.is_encoded(r) else r for r in results]
    err.failed = failed
    if reqs is not None:
        err.items = [R.request_fields(reqs[i]) for i in failed]
    raise err
