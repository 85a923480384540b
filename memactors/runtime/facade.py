"""The facade users hold: ``connect`` a data folder, then write, recall, forget, grant, audit.

Its methods validate, check grants, build operations (``memactors.core.ops``) and hand them in
batches to the owners' one entry point; recalls go to the owners of the visible scopes (over
the direct path for one tenant). Sync methods block; each has an async twin. The recall
half lives in ``recall_api.RecallAPI``, the async twins in ``async_api.AsyncAPI``.
"""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
import time
import tomllib
from datetime import datetime
from typing import Any

from ..engine.naming import namespace_for, owner_index, owner_of_memory
from ..core import errors
from ..core import records as R
from ..core.clock import Clock, SystemClock
from ..core.config import Config
from ..core.contradictions import load_judge
from ..core.errors import (BackPressure, ConfigError, LedgerTampered, MemactorsError, NotFound,
                           PartialWrite, Unavailable)
from ..core.grants import RETIRED_SYSTEM_ACTOR, SYSTEM_ACTOR, GrantTable
from ..core.idempotency import made_key_prefix
from ..core.visibility import DEFAULT_CLEARANCE

_GRANT_ITEM_KEYS = {"actor", "scope", "read", "write", "by", "reason", "clearance"}
from ..core.ops import DemoteOp, ForgetOp, GrantOp, MarkOp, ScopePromoteOp
from ..core.scopes import check_identifier, parse_scope
from ..core import validate as V
from ..embed import embedder_names, get_embedder
from ..gate import Gate, GatePolicy
from ..gate.identifiers import Identifiers
from ..store.ledger_key import key_dir
from . import history, left_open
from .agent import Agent
from .alerts import Alerts
from .arguments import typed_calls
from .async_api import AsyncAPI
from .backup import BackupAPI, start_schedule
from .handles import Tick
from .paths import data_folder
from .audit import Audit, l2_problem
from .batch import BatchAPI
from .calls import Calls
from .evidence import RecallLog
from ..gate.free_text import gated_text
from .query_vectors import QueryVectors
from .write_batches import PartOrders, as_result, batch_max, direct_write, raise_item_errors
from .write_checks import WriteChecks
from .history import RollbackPlan
from .lifecycle import Contradictions, GCResult, Schedule, collect_stats, run_gc
from .recall_api import RecallAPI
from .renamed import UNSET, renamed
from .results import ForgetResult
from .review import Review
from .session import Session
from .versions_api import VersionsAPI

log = logging.getLogger("memactors.runtime")


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
        except ValueError:  # open() refuses a NUL or a lone surrogate in the path: no file's name
            raise ConfigError("cannot read config: its path holds a NUL character or a lone surrogate") from None
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
            clock: Clock | None = None, detached: bool = False, host: str | None = None) -> Runtime:
    """Open (or create) the data folder at ``path`` (``"memory://"``: a new one in memory, gone
    at close). ``host`` (default ``[runtime].host``, else $MEMACTORS_HOST, else "ray"): "ray"
    starts a local Ray when none runs (joins ``address`` when given) and starts or finds this
    folder's ledger writer and scope owners as named actors; "process" runs them in this
    process, without Ray."""
    cfg = load_config(config)
    detached = V.flag(detached, "detached", error=ConfigError)
    if clock is not None and not callable(getattr(clock, "now_us", None)):
        raise ConfigError(f"clock takes a clock (an object with now_us(), such as ManualClock()), not {V.got(clock)}")
    if address is not None and not isinstance(address, str):
        raise ConfigError(f"address takes a Ray cluster's address (a str such as 'auto'), not {V.got(address)}")
    if host is not None:
        cfg.runtime.host = V.choice(host, "host", ("ray", "process"), error=ConfigError)
    elif not cfg.runtime.host:
        # $MEMACTORS_HOST is a default, not an order: a detached runtime or a cluster's address is Ray's.
        env = "ray" if (detached or address is not None) else os.environ.get("MEMACTORS_HOST") or "ray"
        cfg.runtime.host = V.choice(env, "$MEMACTORS_HOST", ("ray", "process"), error=ConfigError)
    scratch = None
    if isinstance(path, str) and path.startswith(MEMORY):
        # In memory: the process host on a folder of its own in RAM (/dev/shm where there is one),
        # its key beside it, gone at close: every code path the same as on disk.
        if host == "ray" or address is not None or detached:
            raise ConfigError(f"{MEMORY} runs on the process host, in this process")
        scratch = tempfile.mkdtemp(prefix="memactors-memory-", dir="/dev/shm" if os.access("/dev/shm", os.W_OK)
                                   else None)
        path, cfg.runtime.host = os.path.join(scratch, "data"), "process"
        cfg.runtime.key_dir = os.path.join(scratch, "keys")
    if cfg.runtime.host == "process" and (address is not None or detached):
        raise ConfigError("the process host runs in this process: no address, no detached runtime (use host='ray')")
    try:
        rt = Runtime(path, address=address, config=cfg, clock=clock, detached=detached)
    except BaseException:
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)
        raise
    rt._scratch = scratch
    if cfg.runtime.host == "process":
        left_open.track(rt)
    return rt


MEMORY = "memory://"
DIRECT_WRITES_MAX = 64  # a call of at most this many writes to one owner takes the Ray host's direct path


def _host(kind: str, address: str | None, namespace: str, data_dir: str, shown: str, detached: bool):
    if kind == "process":
        from .process_host import ProcessHost

        return ProcessHost()
    from .ray_host import RayHost

    return RayHost(address, namespace, data_dir, shown, detached)


@typed_calls("rt")
class Runtime(RecallAPI, AsyncAPI, BatchAPI, VersionsAPI, BackupAPI, WriteChecks):
    _scratch: str | None = None  # memory://: the RAM folder removed at close
    def __init__(self, data_dir: str, *, address: str | None, config: Config, clock: Clock | None,
                 detached: bool) -> None:
        self.data_dir = data_folder(data_dir)
        self.config = config
        self.clock = clock or SystemClock()
        self.namespace = namespace_for(self.data_dir)
        self._detached = detached
        self._host = _host(config.runtime.host, address, self.namespace, self.data_dir, data_dir, detached)
        # Resolved here, where the caller's environment and home folder are: actors get a path.
        config.runtime.key_dir = key_dir(config.runtime.key_dir)
        self._host.size(config.runtime)  # num_owners = 0, gate_workers = -1: the host's own sizes
        self._alerts = Alerts(config.alerts, self.data_dir)  # a hook that cannot be loaded: ConfigError now
        try:
            self._actors = self._host.start(self.data_dir, config, self.namespace, detached=detached)
        except BaseException as exc:
            self._host.shutdown()  # nothing of ours runs: do not leave a Ray behind
            if isinstance(exc, LedgerTampered):
                self._alerts.folder_refused(exc)
            raise
        self._ledger, self._owners = self._actors.ledger, self._actors.owners
        self._calls = Calls(config.runtime.call_timeout_s, self._host)
        # Not when attached to a shared runtime (`memactors up`): plain calls there (the direct
        # path began as compiled graphs, and several drivers' graphs on one owner hung it:
        # tests/chaos/test_concurrency.py).
        self._direct = [] if detached else [self._host.direct(o, config.runtime.call_timeout_s) for o in self._owners]
        policy = GatePolicy.from_dict(config.gate)
        self.gate = Gate(policy=policy)
        # Every id a call carries passes the gate's pii and secret rules (refused, or a keyed pseudonym).
        self._ids = Identifiers(self._calls.get(self._ledger.pseudonym_key.remote()) if policy.pseudonymise_identifiers
                                else None, pseudonymise=policy.pseudonymise_identifiers)
        self.embedder = get_embedder(config.embedder.name, config.embedder.dim)
        self._query_vectors = QueryVectors(self.embedder, self.gate.redact_all)
        self._evidence = RecallLog(self._ledger, self._calls.get(self._ledger.digest_key.remote()),
                                   config.recall.log_flush_s, self._calls.get)
        self._grants = GrantTable()
        self._grant_seq = 0
        self._grant_notes: dict[tuple[str, str], tuple] = {}
        self._sync_grants()
        self.audit = Audit(self._calls, self._ledger, self._owners, self._evidence.flush,
                           lambda at, **kw: history.snapshot(self, at, **kw), self._ids, self._alerts)
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
            exc = LedgerTampered(f"{self.data_dir}: {problem} (table l2); restore the data folder from a backup")
            self._alerts.folder_refused(exc)
            raise exc
        # Sweeps act as the runtime itself (SYSTEM_ACTOR: no grant). Folders from before it hold a
        # built-in grant on /global/ for an ordinary actor name: revoked once, as a ledger event.
        try:
            wanted = [dict(g, by="config") for i, g in enumerate(config.grants) if self._grant_differs(g, f"grants[{i}]")]
        except errors.ValidationError as exc:  # an id the gate refuses (personal data) is the config's mistake
            self.close()
            raise ConfigError(str(exc)) from None
        retired = {"actor": RETIRED_SYSTEM_ACTOR, "scope": "/global/", "read": True, "write": True}
        if not self._grant_differs(retired) and not any(g["actor"] == RETIRED_SYSTEM_ACTOR for g in config.grants):
            wanted.append(dict(retired, read=False, write=False, by="memactors"))
        if wanted:
            self.grant_many(wanted)
        interval = config.lifecycle.sweep_interval_s
        self._schedule = Schedule(self, interval) if interval > 0 else None
        self._backups = start_schedule(self)  # [backup].interval_s: backups with retention

    # --- plumbing --------------------------------------------------------------------------

    def _check_open(self) -> None:
        self._calls.check_open()

    def _owner(self, scope: str):
        return self._owners[owner_index(parse_scope(scope), len(self._owners))]

    @staticmethod
    def _new_key() -> str:
        # A made key (``core.idempotency``): the owners know it holds no personal data or secret
        # and skip screening it. A UUID's hex took 60-160 us to screen there (RE2 builds new
        # automaton states for each random run of hex), once per forget, mark, grant or review.
        return made_key_prefix() + "-0"

    def _clock_moved(self, now_us: int) -> None:
        if not self._calls.closed:
            for o in self._owners:
                o.set_now.remote(now_us)

    def _sync_grants(self) -> None:
        self._grant_seq, changes = self._calls.get(self._ledger.grants_since.remote(self._grant_seq))
        for g in changes:
            self._grants.put(GrantTable.from_event(g))
            # Why the binding stands (its newest change's reason, None when that one gave none).
            self._grant_notes[(g["actor"], str(parse_scope(g["scope"])))] = (g.get("reason"), g.get("by"))

    def _grant_differs(self, g: dict, what: str = "grant") -> bool:
        # Compared as stored: a pseudonymised actor or scope segment is its pseudonym there.
        actor, scope = self._ids.id(g["actor"], f"{what}.actor"), self._ids.scope(g["scope"], f"{what}.scope")
        have = {(x.actor, str(x.scope)): x for x in self._grants.grants_of(actor)}.get((actor, str(parse_scope(scope))))
        return have is None or (have.read, have.write, have.clearance) != (
            g["read"], g["write"], g.get("clearance") or DEFAULT_CLEARANCE)

    # --- grants ----------------------------------------------------------------------------

    def grant(self, actor: str, scope: str, *, read: bool = True, write: bool = False, by: str = "admin",
              reason: str | None = None, clearance: str = DEFAULT_CLEARANCE) -> dict:
        """Let ``actor`` read (and write) ``scope`` and its descendants; read=False, write=False
        revokes. Each change is a ledger event; ``reason`` (why this share, through the write
        gate: redacted where it must be) is kept in it and shown by ``grants()``. ``clearance``
        (public|internal|confidential|restricted) is the most sensitive memories of the scope
        the actor may recall; a scope's most specific read grant decides (docs/governance.md)."""
        g = {"actor": actor, "scope": scope, "read": read, "write": write, "by": by, "clearance": clearance}
        if reason is not None:
            g["reason"] = reason
        return self.grant_many([g])[0]

    def grant_many(self, grants: list[dict]) -> list[dict]:
        """Many grant changes (thousands of agents) in one ledger group per owner, then every
        owner learns them once. Each item: actor, scope, read (default True), write (default
        False), by (default "admin"), reason (optional), clearance (default "confidential")."""
        self._check_open()
        if not isinstance(grants, (list, tuple)):
            raise R.InvalidRecord("grant_many takes a list of grants")
        ops = [self._grant_op(g) for g in grants]
        out = self._submit_by_scope(ops)
        self._calls.get([o.reload_grants.remote() for o in self._owners])
        self._sync_grants()
        return out

    def _grant_op(self, g: object) -> GrantOp:
        """One grant change checked (``grant_many``'s item, a batch's ``ops.Grant``)."""
        if not isinstance(g, dict) or not {"actor", "scope"} <= set(g) or set(g) - _GRANT_ITEM_KEYS:
            raise R.InvalidRecord("each grant is a dict with actor and scope (and read, write, by, reason, clearance)")
        ids = self._ids
        return GrantOp(ids.id(g["actor"], "actor"), ids.scope(g["scope"]), g.get("read", True), g.get("write", False),
                       ids.id(g.get("by", "admin"), "granting actor"), self._new_key(),
                       gated_text(self.gate, g.get("reason"), "a grant's reason"),
                       g.get("clearance", DEFAULT_CLEARANCE)).validate()

    def grants(self, actor: str | None = None) -> list[dict]:
        """The grants in force (of ``actor``, or everyone's): actor, scope, read, write, clearance,
        and the reason (None where none was given) and granting actor of the change that made each."""
        self._check_open()
        actor = self._ids.optional(actor, "actor")
        if actor is not None:
            check_identifier(actor, "actor")  # a malformed id is refused, not answered with []
        self._sync_grants()  # another driver of the folder may have changed them
        out = []
        for g in self._grants.all():
            if actor is None or g.actor == actor:
                reason, by = self._grant_notes.get((g.actor, str(g.scope)), (None, None))
                out.append(dict(g.to_dict(), reason=reason, by=by))
        return out

    def agent(self, actor: str, *, scopes: list[str], task_id: str = R.UNSPECIFIED, purpose: str = R.UNSPECIFIED,
              home: str | None = None) -> Agent:
        """A handle bound to one identity (``memactors.runtime.agent``): ``remember``, ``recall``,
        ``get``, ``list``, ``forget`` and their async twins, each one op through ``batch``.
        ``scopes``: what it reads; ``home``: where it writes (default: the first scope)."""
        self._check_open()
        return Agent(self, actor, task_id=task_id, purpose=purpose, scopes=scopes, home=home)

    def _submit_by_scope(self, ops: list) -> list[dict]:
        """Operations addressed by scope, one call per owner; item errors raised typed."""
        n = len(self._owners)
        results = self._submit_grouped(ops, lambda op: owner_index(parse_scope(op.scope), n))
        raise_item_errors(results)
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
        # In calls of at most batch_max items, one per owner at a time: a long list (50,000
        # agents' grants) never outruns an owner's queue bound.
        size = batch_max(self.config.runtime)
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
              object: str | None = None, source: str = "user_stated", source_id: str | None = None,
              confidence: float | None = None, sensitivity: str = "internal", ttl_days: float | str | None = None,
              soft_ttl_days: float | str | None = None, importance: float = 0.5, pool: str = "vault",
              idempotency_key: str | None = None, context: str | None = None, category: str = "default",
              derived_from: list[str] | None = None, embed_text: str | None = None) -> R.WriteResult:
        """Write one memory through the gate; returns its decision, memory id and version. The
        fields are ``memactors.ops.Write``'s (``WriteRequest``)."""
        item = dict(scope=scope, text=text, actor=actor, subject=subject, predicate=predicate, object=object,
                    source=source, source_id=source_id, confidence=confidence, sensitivity=sensitivity,
                    ttl_days=ttl_days, soft_ttl_days=soft_ttl_days, importance=importance, pool=pool,
                    idempotency_key=idempotency_key, context=context, category=category, derived_from=derived_from,
                    embed_text=embed_text)
        return self.write_many([item])[0]

    def write_many(self, items: list[dict | R.WriteRequest], *, return_errors: bool = False) -> list[R.WriteResult]:
        """Write many memories: every item validated and grant-checked before anything is
        written (a bad item writes nothing), then sent to the owners in batches of
        ``write_batch_max``, a bounded number in flight per owner. Every batch is awaited. Items
        without an idempotency key get one (``err.items`` carries them if the call fails part
        way, so resubmitting those never writes twice).

        ``return_errors=True`` (many agents' actions in one batch): a bad or refused item gets its
        typed error in place of its result and the others are written."""
        return self._write_many(items, return_errors)

    def _write_many(self, items: list, return_errors: bool, sessions: bool = False) -> list:
        """``write_many``; ``sessions``: the runtime's sessions' own items (their session field)."""
        reqs = self._checked_writes(items, return_errors, sessions)
        good = [i for i, r in enumerate(reqs) if not isinstance(r, MemactorsError)]
        t0 = time.time_ns()
        try:
            sent = self._send_writes([reqs[i] for i in good], self.clock.now_us()) if good else []
        except PartialWrite as exc:  # its positions among the items sent: the caller's instead
            results = [None] * len(reqs)
            for i, r in zip(good, exc.results):
                results[i] = r
            exc.results, exc.failed = results, [good[i] for i in exc.failed]
            raise
        self._alerts.writes([reqs[i] for i in good], sent)  # blocked writes, held injections
        if self.__dict__.get("_observers"):  # (the lists only when someone observes)
            self._observe([("write", reqs[i]) for i in good],
                          [errors.decode(r) if errors.is_encoded(r) else r for r in sent], t0)
        if not return_errors:
            raise_item_errors(sent, reqs)
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
        size = batch_max(rc)
        window = max(1, rc.owner_queue_max // size - 1)
        queues: dict[int, list[list[int]]] = {}
        for i, r in enumerate(reqs):
            oi = owner_index(r.scope_obj, n_owners)
            q = queues.setdefault(oi, [[]])
            if len(q[-1]) >= size:
                q.append([])
            q[-1].append(i)
        if len(queues) == 1 and self._direct:
            (oi, q), = queues.items()
            out = direct_write(self._direct[oi], reqs, now) if len(q) == 1 and len(q[0]) <= DIRECT_WRITES_MAX else None
            if out is not None:
                return [as_result(d) for d in out]
        results: list = [None] * len(reqs)
        failures: dict[int, MemactorsError] = {}
        inflight: dict = {}  # ref -> (owner index, item indices, attempt deadline)
        deadline = time.monotonic() + rc.call_timeout_s

        # an owner's parts decided in the caller's order
        orders = PartOrders({oi: len(q) for oi, q in queues.items()}, self._calls, self._owners, now)
        pos = {id(part): k for q in queues.values() for k, part in enumerate(q)}

        def send(oi: int, part: list[int]) -> None:
            ref = self._host.send_writes(self._owners[oi], [reqs[i] for i in part], now, orders.tag(oi, pos[id(part)]))
            inflight[ref] = (oi, part)

        pending = {oi: list(q) for oi, q in queues.items()}
        for oi, q in pending.items():
            while q and sum(1 for v in inflight.values() if v[0] == oi) < window:
                send(oi, q.pop(0))
        delay = 0.05
        while inflight:
            done = self._calls.wait(list(inflight), rc.call_timeout_s)
            if not done:
                break
            ref = done[0]
            oi, part = inflight.pop(ref)
            try:
                out = self._calls.get(ref)
            except (BackPressure, errors.OwnerUnavailable) as exc:
                if time.monotonic() > deadline:
                    orders.release(oi, pos[id(part)])
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
                orders.release(oi, pos[id(part)])
                for i in part:
                    failures[i] = exc
                continue
            orders.ended(oi, pos[id(part)])
            for i, d in zip(part, out):
                results[i] = as_result(d)
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
        ids = self._ids
        return Session(self, ids.scope(scope), actor=ids.id(actor, "actor"), task_id=ids.id(task_id, "task_id"),
                       goal=goal, plan=plan, constraints=constraints,
                       purpose=ids.purpose(purpose, self.gate.redact_all))

    def resume_session(self, scope: str, *, actor: str, task_id: str, purpose: str = "task") -> Session:
        """A session rebuilt from the ledger (its L0 and turn), after its process died: only by
        the session's own actor, never a completed one (``SessionClosed``)."""
        self._check_open()
        ids = self._ids
        return Session.resume(self, ids.scope(scope), actor=ids.id(actor, "actor"), task_id=ids.id(task_id, "task_id"),
                              purpose=ids.purpose(purpose, self.gate.redact_all))

    def promote(self, memory_id: str, to_scope: str, *, actor: str, reason: str) -> dict:
        """Promote a live vault memory up its scope tree (task -> user -> org): a new memory in
        ``to_scope`` (an ancestor of the memory's scope) derived from it; versions and dedup of
        the target apply. ``actor`` needs a write grant on ``to_scope`` and a read grant on the
        source's scope; the ledger event names the source and the reason. Returns the write's
        result with ``promoted_from`` and ``from_scope``."""
        self._check_open()
        actor = self._ids.id(actor, "actor")
        op = ScopePromoteOp(memory_id, self._ids.scope(to_scope), actor, reason, self._new_key()).validate()
        self._check_write([(actor, parse_scope(op.scope))])
        return self._submit_by_scope([op])[0]

    def demote_unused(self, *, after: int | None = None, scope: str | None = None) -> dict:
        """Demotion (DESIGN section 2): every live vault memory returned ``after`` times in a row
        without a citation (default ``[lifecycle].demote_after``) goes back to the working pool;
        a demoted copy ignored as often again is archived. ``scope``: only memories in it or
        below it (None: all). Decided by each memory's owner against the record it holds, one
        ledger event per change. Runs on the sweep schedule too (``[lifecycle].sweep_interval_s``).
        How far it looked is a watermark in the ledger (a ``mark`` event per pass and scope), so
        the next pass, after a restart or a rebuild, looks only at memories returned since.
        Returns counts by outcome."""

        self._check_open()
        n = self.config.lifecycle.demote_after if after is None else V.integer(after, "after", 1, 1_000_000)
        under = parse_scope(self._ids.scope(scope)) if scope is not None else None
        self._evidence.flush()
        mark = f"demote:{n}:{under if under is not None else 'all'}"
        since = self._calls.get(self._ledger.mark_of.remote(mark)) or 0
        started = self.clock.now_us()
        rows = self._calls.get(self._ledger.uncited_runs.remote(n, since))
        if under is not None:
            rows = [r for r in rows if under.is_ancestor_or_self(parse_scope(r[1]))]
        # A pass's key names its watermark too: a retried pass replays its own result, a later pass
        # (the streak built up again after a citation, or a rollback) decides anew.
        ops = [DemoteOp(mid, SYSTEM_ACTOR, int(streak), n, f"demote-{mid}-{streak}-{since}")
               for mid, _scope, streak in rows]
        counts: dict[str, int] = {}
        for r in self._submit_by_memory(ops) if ops else []:
            outcome = type(r).__name__ if isinstance(r, MemactorsError) else r["decision"]
            counts[outcome] = counts.get(outcome, 0) + 1
        self._submit_by_scope([MarkOp(mark, started, SYSTEM_ACTOR, self._new_key()).validate()])
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

    def _session_items(self, scope: str, actor: str) -> list[dict]:
        """Every session item ever written in ``scope`` (a working item whose ``session`` field
        the runtime set), folded from the ledger, in the order written: what ``Session.resume``
        picks a session from. ``actor`` needs a read grant on ``scope``."""
        from ..core import events as E
        from ..core.project import Rows, apply

        self._check_open()
        sc = parse_scope(scope)
        self._check_read(actor, [sc])
        rows = Rows()
        for _, ch in self._calls.get(self._ledger.working_in.remote([str(sc)])):
            if ch is not None and (ch.action == E.WRITE_WORKING or ch.memory_id in rows.records):
                apply(rows, ch)
        return [r for r in rows.records.values() if r.get("session")]

    def _check_read(self, actor: str, scopes: list) -> list:
        """``actor``'s read grants cover ``scopes`` (the grant table synced once if not)."""
        try:
            return self._grants.check_recall(actor, scopes)
        except MemactorsError:
            self._sync_grants()
            return self._grants.check_recall(actor, scopes)

    def _recall_view(self, actor: str, allowed: tuple[str, ...]):
        """``GrantTable.recall_view`` (the visible set and clearances, kept until a grant
        changes; a refusal raised each time) with ``_check_read``'s one sync on a refusal."""
        try:
            return self._grants.recall_view(actor, allowed)
        except MemactorsError:
            self._sync_grants()
            return self._grants.recall_view(actor, allowed)

    def _check_write(self, pairs: list[tuple[str, Any]], named: str | None = None) -> None:
        """Each (actor, scope) is under a write grant (the grant table synced once if not:
        another process may have granted since). ``named``: ``GrantTable.check_write``'s."""
        try:
            for actor, scope in pairs:
                self._grants.check_write(actor, scope, named=named)
        except MemactorsError:
            self._sync_grants()
            for actor, scope in pairs:
                self._grants.check_write(actor, scope, named=named)

    # --- changes addressed by memory id ----------------------------------------------------------

    def forget(self, memory_id: str, *, actor: str, reason: str, erase: str = "memory", scope: Any = UNSET) -> dict:
        """Erase a memory: a tombstone event, its data key destroyed, its L2 row and caches gone.
        ``erase="fact"`` erases every version of its fact (same subject and predicate).
        (``scope=`` is ``erase``'s old name, deprecated: ``scope`` means a subtree elsewhere.)"""
        erase = renamed("forget", "scope", scope, "erase", erase, "memory")
        V.choice(erase, "erase", ("memory", "fact"))
        op = ForgetOp(memory_id, self._ids.id(actor, "actor"), reason, self._new_key(), all_versions=erase == "fact")
        return self._observed("forget", op, lambda: self._by_memory(op), ForgetResult.of)

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
                raise_item_errors([out])
                return out
            scope = self._calls.get(self._ledger.scopes_of.remote([op.memory_id])).get(op.memory_id)
            if scope is None:
                break
            oi = owner_index(parse_scope(scope), n)
            if oi in tried:
                break
        raise NotFound(op.MISSING.format(id=op.memory_id))

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

    def rollback(self, *, at: int | str | datetime | None = None, memory_id: str | None = None,
                 where: dict | None = None, cascade: bool = False, scope: str | None = None, actor: str,
                 reason: str, dry_run: bool = False, to: Any = UNSET) -> RollbackPlan:
        """Undo by compensating events (history is never rewritten), one of:

        - ``at`` (old name ``to``, deprecated): a point in time (seq, ISO time, datetime): every memory changed since goes back
          to its state then;
        - ``memory_id``: that memory is taken out of recall and what it superseded reinstated;
          ``cascade=True`` undoes what was derived only from it too (what was derived from it
          and others is flagged ``review="source_rolled_back"``);
        - ``where``: {"source_kind", "actor", "since", "until"}: every write matching it, as above;
          ``since`` / ``until`` are points as ``at`` reads them (an int is a ledger seq).

        ``scope`` limits ``at`` and ``where`` to a subtree (one tenant's rollback). ``actor``
        needs write grants on every scope the rollback changes.

        ``verify()`` runs first; a broken chain refuses. A forgotten memory stays forgotten (the
        plan says so). ``dry_run``: the plan only, nothing changed. Applied as one ledger
        transaction per owner holding the memories."""
        to = renamed("rollback", "to", to, "at", at)
        self._check_open()
        actor = R.check_identifier(self._ids.id(actor, "actor"), "actor")
        if scope is not None:
            scope = self._ids.scope(scope)
        if isinstance(where, dict) and isinstance(where.get("actor"), str):
            where = dict(where, actor=self._ids.id(where["actor"], "where.actor"))
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
            scope = str(parse_scope(self._ids.scope(scope)))
        if workers is not None:
            V.integer(workers, "workers", 1, 4096)
        if progress is not None and not callable(progress):
            raise R.InvalidRecord(f"progress is a callable that hears each step, not {V.got(progress)}")
        if not isinstance(dry_run, bool):
            raise R.InvalidRecord("dry_run is a boolean")
        self._evidence.flush()  # recalls so far count as access before the plan is made
        return run_gc(self, dry_run=dry_run, scope=scope, workers=workers, progress=progress)

    def close(self) -> None:
        """Flush and stop this folder's actors (unless they are a detached ``memactors up`` runtime)."""
        if self._calls.closed:
            return
        if getattr(self, "_schedule", None) is not None:
            self._schedule.stop()
        if getattr(self, "_backups", None) is not None:
            self._backups.stop()
        try:
            self._evidence.close()
            self.flush()
            self._calls.get(self._ledger.flush.remote(), timeout=30)
            if not self._detached_runtime():  # this runtime stops: its erasures' purge is done now, not on a timer
                try:
                    self._calls.get(self._ledger.purge_if_due.remote(),
                                    timeout=max(600.0, self.config.runtime.call_timeout_s))
                except Unavailable:
                    raise
                except MemactorsError as exc:  # still due: the ledger keeps it, the next open does it
                    log.warning("the purge of this runtime's erasures failed at close (%s: %s); it runs when the "
                                "folder is next opened", type(exc).__name__, exc)
            self._alerts.drain()
        except Unavailable:
            if self._calls.still_there():
                raise  # an attached runtime that went away has nothing left to flush into
        finally:
            self._calls.closed = True
            left_open.forget(self)
            self._stop_batch_loop()
            for c in self._direct:
                c.teardown()
            if not self._detached_runtime() and self._calls.still_there():
                self._host.stop(self._actors)
            self._host.shutdown()
            if getattr(self, "_scratch", None):
                shutil.rmtree(self._scratch, ignore_errors=True)

    def _abandon(self) -> None:
        """Stop without flushing (a runtime that failed to open)."""
        self._calls.closed = True
        for c in self._direct:
            c.teardown()
        if not self._detached_runtime():
            self._host.stop(self._actors)
        self._host.shutdown()

    def _detached_runtime(self) -> bool:
        # Attached to an `up` runtime (its actors outlive this driver). `down` removes
        # runtime.json first, so that its close() stops them.
        return self._detached and os.path.exists(os.path.join(self.data_dir, "runtime.json"))

    def __enter__(self) -> Runtime:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
