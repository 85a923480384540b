"""The facade users hold: ``connect`` a data folder, then write, recall, forget, grant, audit.

Sync methods block; each has an async twin (``awrite``, ``arecall``, ...). Calls cross to Ray
actors in batches: ``write_many`` sends one call per owner per ``write_batch_max`` items.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import os
import re
import threading
import time
import tomllib
import uuid
from dataclasses import dataclass, field
from typing import Any

import ray

from .actors.ledger_writer import LedgerWriter
from .actors.embed_pool import EmbedWorker
from .actors.gate_pool import GateWorker
from .actors.naming import LEDGER, embed_worker_name, gate_worker_name, namespace_for, owner_index, owner_name
from .actors.owner import ScopeOwner
from .core import records as R
from .core.clock import Clock, SystemClock
from .core.config import Config
from .core.errors import (
    ConfigError,
    LedgerTampered,
    MemactorsError,
    NotFound,
    RuntimeClosed,
)
from .core.grants import GrantTable
from .core import errors
from .core import scoring as S
from .core.selection import finalize
from .core.scopes import GLOBAL, parse_scope
from .embed import get_embedder
from .store import sandbox
from .store.ledger_key import key_dir
from .gate import Gate, GatePolicy

_RETRY_WINDOW_S = 60.0  # how long a call keeps retrying while Ray restarts an owner


@dataclass(slots=True)
class Hit:
    memory_id: str
    scope: str
    content: str
    score: float
    version: int
    subject: str | None = None
    predicate: str | None = None
    object: str | None = None
    pool: str = "vault"
    source_kind: str = "user_stated"
    confidence: float = 1.0
    components: dict = field(default_factory=dict)  # vector, keyword, recency, importance, each in [0, 1]
    stale: bool = False  # soft-expired or marked stale: its score was halved
    conflict: dict | None = None  # {"overrides": [memory ids], "reason": ...} when it won a conflict

    def to_dict(self) -> dict:
        return {k: getattr(self, k) for k in self.__slots__}


@dataclass(slots=True)
class RecallResult:
    recall_id: str
    hits: list[Hit]
    visible_scopes: list[str]
    path: str = "hot"  # hot | cold | mixed: where the candidates came from
    removed: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {"recall_id": self.recall_id, "hits": [h.to_dict() for h in self.hits],
                "visible_scopes": self.visible_scopes, "path": self.path, "removed": self.removed}


class _CompiledRecall:
    """A Ray compiled graph (``ray.dag``) to one owner's ``recall_compiled``: the hot recall
    path without a task submission per call. Built on first use; any failure (an owner
    restarting, a graph torn down) falls back to a plain actor call and rebuilds later."""

    def __init__(self, owner, timeout_s: float) -> None:
        self.owner = owner
        self.timeout_s = timeout_s
        self.dag = None
        self.lock = threading.Lock()  # a compiled graph takes one execution at a time from here
        self.retry_at = 0.0

    def call(self, args: tuple) -> dict | None:
        if time.monotonic() < self.retry_at:
            return None
        with self.lock:
            try:
                if self.dag is None:
                    from ray.dag import InputNode

                    with InputNode() as inp:
                        node = self.owner.recall_compiled.bind(inp)
                    self.dag = node.experimental_compile()
                out = ray.get(self.dag.execute(args), timeout=self.timeout_s)
            except Exception:  # noqa: BLE001 - any failure: plain path now, rebuild in a while
                self._drop()
                self.retry_at = time.monotonic() + 5.0
                return None
        return None if out.get("not_ready") else out

    def _drop(self) -> None:
        if self.dag is not None:
            try:
                self.dag.teardown()
            except Exception:  # noqa: BLE001 - it is being discarded either way
                pass
            self.dag = None

    def teardown(self) -> None:
        with self.lock:
            self._drop()


def load_config(config: Config | dict | str | os.PathLike | None) -> Config:
    if config is None or isinstance(config, Config):
        cfg = config or Config()
    elif isinstance(config, dict):
        cfg = Config.from_dict(config)
    else:
        try:
            with open(config, "rb") as f:
                cfg = Config.from_dict(tomllib.load(f))
        except (OSError, tomllib.TOMLDecodeError) as exc:
            raise ConfigError(f"cannot read config {config}: {exc}") from None
    try:  # the gate policy is checked here, before any actor starts with it
        GatePolicy.from_dict(cfg.gate)
    except ValueError as exc:
        raise ConfigError(f"[gate]: {exc}") from None
    return cfg


def _unwrap(exc: BaseException) -> BaseException:
    """A memactors error raised inside an actor, without Ray's wrapper and remote traceback."""
    cause = getattr(exc, "cause", None)
    if isinstance(cause, MemactorsError):
        return type(cause)(*cause.args)
    return exc


def _l2_problem(checks: list[dict]) -> str | None:
    bad = [c for c in checks if c["missing"] or c["unknown"]]
    if not bad:
        return None
    missing, unknown = sum(c["missing"] for c in bad), sum(c["unknown"] for c in bad)
    return (f"L2 disagrees with the ledger: {missing} rows missing, {unknown} rows the ledger does not know "
            f"(e.g. memory {bad[0]['example']})")


def _raise_item_errors(results: list) -> None:
    """Items an owner refused one by one (an idempotency key reused for another write) raise
    their typed error; ``err.results`` holds what the other items of the call did (a
    WriteResult each, None for the refused ones) and ``err.failed`` the refused positions."""
    failed = [i for i, r in enumerate(results) if isinstance(r, dict)]
    if not failed:
        return
    first = results[failed[0]]
    cls = getattr(errors, first["error"], errors.MemactorsError)
    msg = first["message"] if len(results) == 1 else (
        f"{len(failed)} of {len(results)} items were refused (first at position {failed[0]}: {first['message']}); "
        "the others were written")
    err = cls(msg)
    err.results = [None if isinstance(r, dict) else r for r in results]
    err.failed = failed
    raise err


def _check_recall_id(recall_id: object) -> str:
    if not isinstance(recall_id, str) or not _RECALL_ID.fullmatch(recall_id):
        raise R.InvalidRecord("recall_id must be the 32-character id a recall returned")
    return recall_id


_RECALL_ID = re.compile(r"[0-9a-f]{32}", re.ASCII)


def connect(path: str | os.PathLike, *, address: str | None = None, config: Any = None,
            clock: Clock | None = None, detached: bool = False) -> Runtime:
    """Open (or create) the data folder at ``path``: start a local Ray when none runs (join
    ``address`` when given), and start or find this folder's ledger writer and scope owners."""
    return Runtime(os.fspath(path), address=address, config=load_config(config), clock=clock, detached=detached)


class Audit:
    def __init__(self, rt: Runtime) -> None:
        self._rt = rt

    def verify(self) -> dict:
        """Walk the hash chain and its MACs, check the anchor kept outside the data folder, the
        keys and idempotency tables, and L2 against the events it has applied. ``first_bad_seq``
        names the first event that does not verify; ``table`` a table that disagrees."""
        rt = self._rt
        out = rt._get(rt._ledger.verify.remote())
        if out["ok"]:
            problem = _l2_problem(rt._get_all([o.check_l2.remote() for o in rt._owners]))
            if problem:
                out.update(ok=False, reason=problem, table="l2")
        return out

    def recall(self, recall_id: str, *, actor: str) -> dict:
        """The evidence logged for one recall (ids, scores, filters; never content or query text),
        for an actor whose read grants cover the recall's scopes (else NotFound)."""
        rt = self._rt
        rt._check_open()
        _check_recall_id(recall_id)
        GrantTable.make(actor, "/global/")
        rt._flush_recall_log()
        return rt._get(rt._ledger.recall_log.remote(recall_id, actor))

    def erased(self, memory_id: str, *, actor: str) -> dict:
        """The ledger's proof of a memory's erasure: ``{"memory_id", "scope", "tombstone_seq",
        "key_destroyed"}`` (``tombstone_seq`` None while it lives). ``actor`` needs a read grant
        on its scope."""
        rt = self._rt
        rt._check_open()
        R.check_memory_id(memory_id)
        GrantTable.make(actor, "/global/")
        return rt._get(rt._ledger.erasure.remote(memory_id, actor))

    def sql(self, query: str, params: list | None = None, *, actor: str) -> list[tuple]:
        """One SELECT over the ``events``, ``recalls`` and ``citations`` that ``actor``'s read
        grants cover, run in a sandbox: an in-memory DuckDB with no file access, no extensions
        and locked settings, over copies of those rows (never the ledger file, never keys)."""
        rt = self._rt
        rt._check_open()
        GrantTable.make(actor, "/global/")
        sandbox.check_select(query)
        rt._flush_recall_log()
        return rt._get(rt._ledger.sql.remote(query, params, actor))


class Review:
    """The review queue: writes the gate held as ``pending`` (instructions from untrusted
    sources). Listing needs a read grant on the scope; deciding needs a write grant."""

    def __init__(self, rt: Runtime) -> None:
        self._rt = rt

    def pending(self, scope: str, *, actor: str) -> list[dict]:
        rt = self._rt
        s = str(parse_scope(scope))
        GrantTable.make(actor, s)
        return rt._get(rt._owner(s).review_list.remote([s], actor))

    def approve(self, memory_id: str, *, actor: str, reason: str) -> dict:
        """The held write takes effect now, through versions and dedup like any write."""
        return self._decide(memory_id, actor, reason, True)

    def reject(self, memory_id: str, *, actor: str, reason: str) -> dict:
        """The held write is erased (its data key destroyed); the decision stays in the ledger."""
        return self._decide(memory_id, actor, reason, False)

    def _decide(self, memory_id: str, actor: str, reason: str, approve: bool) -> dict:
        return self._rt._by_memory(memory_id, actor, reason, "review", lambda o, key, now: o.review_decide.remote(
            memory_id, actor, reason, approve, key, now))


class PushSession:
    """Push recall at task start and every K turns (``[recall].push_refresh_turns``)."""

    def __init__(self, rt: Runtime, goal: str, kw: dict) -> None:
        self._rt, self.goal, self._kw, self.turns = rt, goal, kw, 0

    def start(self) -> RecallResult:
        self.turns = 0
        return self._rt.push(self.goal, **self._kw)

    def turn(self, goal: str | None = None) -> RecallResult | None:
        """Count a turn; push again (for ``goal``, if the task's focus moved) when one is due."""
        self.turns += 1
        if goal is not None:
            self.goal = goal
        if self.turns % max(1, self._rt.config.recall.push_refresh_turns):
            return None
        return self._rt.push(self.goal, **self._kw)


class Runtime:
    def __init__(self, data_dir: str, *, address: str | None, config: Config, clock: Clock | None,
                 detached: bool) -> None:
        self.data_dir = os.path.realpath(data_dir)
        os.makedirs(self.data_dir, exist_ok=True)
        self.config = config
        self.clock = clock or SystemClock()
        self.namespace = namespace_for(self.data_dir)
        self._started_ray = False
        if not ray.is_initialized():
            # "local" unless told otherwise: never join a stray cluster by accident.
            ray.init(address=address or "local", namespace=self.namespace, include_dashboard=False, log_to_driver=False,
                     configure_logging=False)
            self._started_ray = True
        self._closed = False
        # Resolved here, where the caller's environment and home folder are: actors get a path.
        config.runtime.key_dir = key_dir(config.runtime.key_dir)
        cfg = config.to_dict()
        lifetime = "detached" if detached else None
        self._ledger = LedgerWriter.options(name=LEDGER, namespace=self.namespace, get_if_exists=True,
                                            lifetime=lifetime).remote(self.data_dir, cfg)
        try:
            ray.get(self._ledger.ready.remote())
        except (ray.exceptions.RayTaskError, ray.exceptions.RayActorError) as exc:
            # The folder could not be opened (locked, read-only, tampered, no key): say so in
            # its own words, and leave nothing of ours running.
            ray.kill(self._ledger, no_restart=True)
            if self._started_ray:
                ray.shutdown()
            raise _unwrap(exc) from None
        self._gate_workers = [
            GateWorker.options(name=gate_worker_name(i), namespace=self.namespace, get_if_exists=True,
                               lifetime=lifetime).remote(config.gate)
            for i in range(config.runtime.gate_workers)
        ]
        self._embed_workers = [
            EmbedWorker.options(name=embed_worker_name(i), namespace=self.namespace, get_if_exists=True,
                                lifetime=lifetime).remote(config.embedder.name, config.embedder.dim)
            for i in range(config.runtime.embed_workers)
        ]
        n = config.runtime.num_owners
        self._owners = [
            ScopeOwner.options(name=owner_name(i), namespace=self.namespace, get_if_exists=True, lifetime=lifetime,
                               max_restarts=config.runtime.owner_max_restarts).remote(i, self.data_dir, cfg, self.namespace)
            for i in range(n)
        ]
        self._recall_buf: list[dict] = []
        self._recall_lock = threading.Lock()
        self._stop = threading.Event()
        threading.Thread(target=self._recall_log_loop, name="memactors-recall-log", daemon=True).start()
        self._compiled = [_CompiledRecall(o, config.runtime.call_timeout_s) for o in self._owners]
        self.gate = Gate(policy=GatePolicy.from_dict(config.gate))
        self.embedder = get_embedder(config.embedder.name, config.embedder.dim)
        self._digest_key = ray.get(self._ledger.digest_key.remote())
        self._grants = GrantTable.from_list(ray.get(self._ledger.grants.remote()))
        self.audit = Audit(self)
        self.review = Review(self)
        # L2 against the ledger at open (owners start here: replay, then compare): rows deleted
        # or added behind the runtime's back are refused, not served.
        problem = _l2_problem(self._get_all([o.check_l2.remote() for o in self._owners]))
        if problem:
            self.close()
            raise LedgerTampered(f"{self.data_dir}: {problem} (table l2); restore the data folder from a backup")
        for g in config.grants:
            current = {(x.actor, str(x.scope)): x for x in self._grants.all()}
            x = current.get((g["actor"], str(parse_scope(g["scope"]))))
            if x is None or (x.read, x.write) != (g["read"], g["write"]):
                self.grant(g["actor"], g["scope"], read=g["read"], write=g["write"], by="config")

    # --- plumbing --------------------------------------------------------------------------

    def _check_open(self) -> None:
        if self._closed:
            raise RuntimeClosed("this runtime was closed; connect() again")

    def _get(self, ref, timeout: float | None = None):
        self._check_open()
        try:
            return ray.get(ref, timeout=timeout or self.config.runtime.call_timeout_s)
        except ray.exceptions.RayTaskError as exc:
            raise _unwrap(exc) from None

    def _owner(self, scope: str):
        return self._owners[owner_index(parse_scope(scope), len(self._owners))]

    def _call_retrying(self, make_ref):
        """Call an owner; while Ray restarts a killed owner, retry (idempotency keys make it safe)."""
        deadline = time.monotonic() + _RETRY_WINDOW_S
        delay = 0.05
        while True:
            try:
                return self._get(make_ref())
            except (ray.exceptions.RayActorError, ray.exceptions.ActorUnavailableError):
                if time.monotonic() > deadline:
                    raise RuntimeClosed("a scope owner stayed unreachable; nothing further was written") from None
                time.sleep(delay)
                delay = min(delay * 2, 1.0)

    # --- grants ----------------------------------------------------------------------------

    def grant(self, actor: str, scope: str, *, read: bool = True, write: bool = False, by: str = "admin") -> dict:
        """Let ``actor`` read (and write) ``scope`` and its descendants; read=False, write=False revokes.
        Each change is a ledger event."""
        from .actors.items import grant_item

        self._check_open()
        g = GrantTable.make(actor, scope, read=read, write=write)
        GrantTable.make(by, "/global/")  # validates the granting actor's id
        self._get(self._ledger.append.remote([grant_item(g.to_dict(), by, uuid.uuid4().hex, self.clock.now_us())]))
        self._grants = GrantTable.from_list(self._get(self._ledger.grants.remote()))
        self._get_all([o.reload_grants.remote() for o in self._owners])
        return g.to_dict()

    def grants(self, actor: str | None = None) -> list[dict]:
        return [g.to_dict() for g in self._grants.all() if actor is None or g.actor == actor]

    def _get_all(self, refs: list) -> list:
        return self._get(refs)  # one ray.get for the whole fan-out

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

    def write_many(self, items: list[dict | R.WriteRequest]) -> list[R.WriteResult]:
        """Write many memories: validated and grant-checked up front (a bad item writes nothing),
        then one call per owner per batch."""
        self._check_open()
        reqs = [R.write_request(it) for it in items]
        self._precheck_writes(reqs)
        for r in reqs:
            if r.idempotency_key is None:
                r.idempotency_key = uuid.uuid4().hex
        now = self.clock.now_us()
        by_owner: dict[int, list[int]] = {}
        for i, r in enumerate(reqs):
            by_owner.setdefault(owner_index(r.scope_obj, len(self._owners)), []).append(i)
        batch_max = self.config.runtime.write_batch_max
        calls = []  # (indices, batch payload, owner)
        for oi, idx in by_owner.items():
            for k in range(0, len(idx), batch_max):
                part = idx[k : k + batch_max]
                calls.append((part, [R.request_fields(reqs[i]) for i in part], self._owners[oi]))
        results: list[R.WriteResult | None] = [None] * len(reqs)
        refs = [owner.write_batch.remote(payload, now) for _, payload, owner in calls]
        for (part, payload, owner), ref in zip(calls, refs):
            try:
                out = self._get(ref)
            except (ray.exceptions.RayActorError, ray.exceptions.ActorUnavailableError):
                out = self._call_retrying(lambda: owner.write_batch.remote(payload, now))
            for i, d in zip(part, out):
                results[i] = d if "error" in d else R.WriteResult(**d)
        _raise_item_errors(results)
        return results

    def _precheck_writes(self, reqs: list[R.WriteRequest]) -> None:
        try:
            for r in reqs:
                self._grants.check_write(r.actor, r.scope_obj)
        except MemactorsError:
            # Another process may have granted since: refresh once, then decide.
            self._grants = GrantTable.from_list(self._get(self._ledger.grants.remote()))
            for r in reqs:
                self._grants.check_write(r.actor, r.scope_obj)

    # --- recall ----------------------------------------------------------------------------

    def recall(self, query: str, *, actor: str, task_id: str, allowed_scopes: list[str], purpose: str,
               top_k: int = 5, token_budget: int | None = None, threshold: float | None = None,
               weights: Any = None) -> RecallResult:
        """Pull recall through the recall contract: refused without ``allowed_scopes`` or beyond
        the actor's read grants; visible = each allowed scope plus its ancestors. Hits are
        scored ``a*vector + b*keyword + c*recency + d*importance`` (``weights``, default from
        config), conflicts resolved, then the relevance ``threshold``, ``top_k`` and the
        optional ``token_budget`` applied."""
        return self._recall(query, actor, task_id, allowed_scopes, purpose, top_k, token_budget, threshold,
                            weights, "pull")

    def push(self, goal: str, *, actor: str, task_id: str, allowed_scopes: list[str], purpose: str = "task_start",
             max_items: int | None = None, token_budget: int | None = None, threshold: float | None = None,
             weights: Any = None) -> RecallResult:
        """Push recall at task start (and every ``push_refresh_turns`` turns): at most
        ``push_max_items`` items within ``push_token_budget`` tokens (CJK-aware estimate), by
        the same path as ``recall``."""
        rc = self.config.recall
        return self._recall(goal, actor, task_id, allowed_scopes, purpose, max_items or rc.push_max_items,
                            token_budget or rc.push_token_budget, threshold, weights, "push")

    def push_session(self, goal: str, *, actor: str, task_id: str, allowed_scopes: list[str],
                     purpose: str = "task_start") -> PushSession:
        """Push recall for a running task: ``start()`` at task start, then ``turn()`` after each
        turn, which pushes again every ``push_refresh_turns`` turns (and returns None between)."""
        return PushSession(self, goal, dict(actor=actor, task_id=task_id, allowed_scopes=allowed_scopes,
                                            purpose=purpose))

    def mark_cited(self, recall_id: str, memory_ids: list[str], *, actor: str) -> int:
        """Record which hits of ``recall_id`` the model actually used (evidence for later review).
        ``actor``'s read grants must cover the recall's scopes."""
        self._check_open()
        _check_recall_id(recall_id)
        if isinstance(memory_ids, str) or not isinstance(memory_ids, (list, tuple)):
            raise R.InvalidRecord("memory_ids must be a list of memory ids")
        ids = [R.check_memory_id(m) for m in memory_ids]
        GrantTable.make(actor, "/global/")
        self._flush_recall_log()
        return self._get(self._ledger.mark_cited.remote(recall_id, ids, self.clock.now_us(), actor))

    def explain(self, recall_id: str, *, actor: str) -> dict:
        """Why each hit of a recall came back (score and its components, conflicts won), what
        the filters were, and how many candidates the threshold, conflicts and budget removed.
        ``actor``'s read grants must cover the recall's scopes."""
        return self.audit.recall(recall_id, actor=actor)

    def _recall(self, query, actor, task_id, allowed_scopes, purpose, top_k, token_budget, threshold, weights,
                mode: str) -> RecallResult:
        self._check_open()
        req = R.RecallRequest(query, actor, task_id, list(allowed_scopes or []), purpose, top_k,
                              token_budget).validate()
        allowed = [parse_scope(s) for s in req.allowed_scopes]
        try:
            visible = self._grants.check_recall(actor, allowed)
        except MemactorsError:
            self._grants = GrantTable.from_list(self._get(self._ledger.grants.remote()))
            visible = self._grants.check_recall(actor, allowed)
        rc = self.config.recall
        try:
            w = S.Weights.parse(weights if weights is not None else rc.weights)
        except ValueError as exc:
            raise R.InvalidRecord(str(exc)) from None
        thr = rc.threshold if threshold is None else float(threshold)
        # The query passes the gate before it is embedded, tokenised or digested.
        text = self.gate.redact_all(req.query)
        now = self.clock.now_us()
        owner_req = {"scopes": [str(s) for s in visible], "qvec": self.embedder.embed([text])[0],
                     "qtokens": S.tokenize(text), "now": now, "m": max(3 * req.top_k, 20), "actor": actor,
                     "allowed": req.allowed_scopes, "weights": w.as_tuple()}
        parts = self._fan_out(owner_req)
        cands = sorted((h for p in parts for h in p["hits"]), key=lambda h: (-h["score"], h["memory_id"]))
        chosen, info = finalize(cands, threshold=thr, max_items=req.top_k, token_budget=req.token_budget)
        paths = {p["path"] for p in parts}
        result = RecallResult(
            recall_id=uuid.uuid4().hex,
            hits=[Hit(**{k: h.get(k) for k in Hit.__slots__ if k in h}) for h in chosen],
            visible_scopes=[str(s) for s in visible],
            path=paths.pop() if len(paths) == 1 else "mixed",
            removed=info["removed"],
        )
        self._log_recall(req, text, result, now, mode=mode, weights=w, threshold=thr, candidates=len(cands),
                         info=info)
        return result

    def _fan_out(self, req: dict) -> list[dict]:
        """Ask the owners of the visible scopes. When one owner holds every scope but /global/
        (one tenant: the usual case), it alone answers, over a compiled graph when enabled,
        and /global/'s owner is asked only if /global/ holds anything."""
        n = len(self._owners)
        glob = owner_index(GLOBAL, n)
        visible = req["scopes"]
        tenant_owners = {owner_index(parse_scope(s), n) for s in visible if s != str(GLOBAL)}
        if len(tenant_owners) == 1:
            oi = tenant_owners.pop()
            part = self._compiled[oi].call(req) if self.config.recall.compiled_path else None
            if part is None:
                part = self._get(self._owners[oi].recall.remote(req))
            elif "error" in part:
                raise getattr(errors, part["error"], errors.MemactorsError)(part["message"])
            parts = [part]
            if part.get("needs_global") and oi != glob:
                parts.append(self._get(self._owners[glob].recall.remote(dict(req, scopes=[str(GLOBAL)]))))
            return parts
        by_owner: dict[int, list[str]] = {}
        for s in visible:
            by_owner.setdefault(owner_index(parse_scope(s), n), []).append(s)
        return self._get_all([self._owners[oi].recall.remote(dict(req, scopes=scopes))
                              for oi, scopes in by_owner.items()])

    def _log_recall(self, req: R.RecallRequest, redacted: str, result: RecallResult, now: int, *, mode: str,
                    weights: S.Weights, threshold: float, candidates: int, info: dict) -> None:
        # Ids, scores and their components, the filters and the counts; never content or query
        # text. ``redacted`` is the query as the gate left it: digested, never stored.
        digest = hmac.new(self._digest_key, redacted.encode(), hashlib.sha256).hexdigest()
        row = {
            "recall_id": result.recall_id, "ts": now, "actor": req.actor, "task_id": req.task_id,
            "purpose": req.purpose, "allowed_scopes": req.allowed_scopes, "visible_scopes": result.visible_scopes,
            "query_digest": digest, "top_k": req.top_k,
            "hits": [{"memory_id": h.memory_id, "scope": h.scope, "version": h.version, "score": round(h.score, 6),
                      "components": {k: round(v, 6) for k, v in h.components.items()}, "stale": h.stale,
                      "conflict": h.conflict} for h in result.hits],
            "filters": {"scopes": result.visible_scopes, "status": "active", "not_hard_expired_at": now,
                        "mode": mode, "threshold": threshold, "weights": weights.as_tuple(),
                        "token_budget": req.token_budget, "candidates": candidates, "tokens": info["tokens"]},
            "removed": result.removed,
        }
        with self._recall_lock:
            self._recall_buf.append(row)
            due = len(self._recall_buf) >= 256
        if due:
            self._flush_recall_log()

    def _flush_recall_log(self) -> None:
        """Hand buffered evidence to the ledger writer: one call per batch, not per recall, so
        the hot path pays no extra actor call and the ledger one small transaction a batch."""
        with self._recall_lock:
            rows, self._recall_buf = self._recall_buf, []
        if rows:
            self._ledger.log_recalls.remote(rows)

    def _recall_log_loop(self) -> None:
        while not self._stop.wait(self.config.recall.log_flush_s):
            try:
                self._flush_recall_log()
            except Exception:  # noqa: BLE001 - the runtime is closing; close() flushes what is left
                return

    # --- forget ----------------------------------------------------------------------------

    def forget(self, memory_id: str, *, actor: str, reason: str) -> dict:
        """Erase a memory: tombstone event, row gone from L2 and caches, its data key destroyed."""
        return self._by_memory(memory_id, actor, reason, "forget", lambda o, key, now: o.forget.remote(
            memory_id, actor, reason, key, now))

    def _by_memory(self, memory_id: str, actor: str, reason: str, what: str, call) -> dict:
        """Validate a change to one memory, then offer it to every owner: the one holding the
        memory answers (the facade cannot tell an owner from a memory id)."""
        self._check_open()
        R.check_memory_id(memory_id)
        GrantTable.make(actor, "/global/")
        if not isinstance(reason, str) or not reason.strip():
            raise R.InvalidRecord(f"{what} needs a reason")
        now, key = self.clock.now_us(), uuid.uuid4().hex
        for owner in self._owners:
            out = self._call_retrying(lambda o=owner: call(o, key, now))
            if out is not None:
                return out
        raise NotFound(f"no memory {memory_id} to {what}")

    # --- maintenance -----------------------------------------------------------------------

    def flush(self) -> None:
        """Bring L2 up to the ledger now (normally it trails by at most the flush interval)."""
        self._get_all([o.flush.remote() for o in self._owners])

    def stats(self) -> list[dict]:
        return self._get_all([o.stats.remote() for o in self._owners])

    def close(self) -> None:
        """Flush and stop this folder's actors (unless they are a detached ``memactors up`` runtime)."""
        if self._closed:
            return
        try:
            self._stop.set()
            self._flush_recall_log()
            self.flush()
            ray.get(self._ledger.flush.remote(), timeout=30)
        finally:
            self._closed = True
            for c in self._compiled:
                c.teardown()
            if not self._detached_runtime():
                try:
                    ray.get(self._ledger.shutdown.remote(), timeout=30)
                except Exception:  # noqa: BLE001 - killing it below releases the lock as well
                    pass
                for a in [*self._owners, *self._gate_workers, *self._embed_workers, self._ledger]:
                    ray.kill(a, no_restart=True)
            if self._started_ray:
                ray.shutdown()

    def _detached_runtime(self) -> bool:
        return os.path.exists(os.path.join(self.data_dir, "runtime.json"))

    def __enter__(self) -> Runtime:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # --- async twins -----------------------------------------------------------------------

    async def awrite(self, scope: str, text: str, **kw: Any) -> R.WriteResult:
        return await asyncio.to_thread(self.write, scope, text, **kw)

    async def awrite_many(self, items: list) -> list[R.WriteResult]:
        return await asyncio.to_thread(self.write_many, items)

    async def arecall(self, query: str, **kw: Any) -> RecallResult:
        return await asyncio.to_thread(self.recall, query, **kw)

    async def aforget(self, memory_id: str, **kw: Any) -> dict:
        return await asyncio.to_thread(self.forget, memory_id, **kw)

    async def agrant(self, actor: str, scope: str, **kw: Any) -> dict:
        return await asyncio.to_thread(self.grant, actor, scope, **kw)

    async def apush(self, goal: str, **kw: Any) -> RecallResult:
        return await asyncio.to_thread(self.push, goal, **kw)

    async def amark_cited(self, recall_id: str, memory_ids: list[str], *, actor: str) -> int:
        return await asyncio.to_thread(self.mark_cited, recall_id, memory_ids, actor=actor)

    async def aexplain(self, recall_id: str, *, actor: str) -> dict:
        return await asyncio.to_thread(self.explain, recall_id, actor=actor)

    async def aclose(self) -> None:
        await asyncio.to_thread(self.close)
