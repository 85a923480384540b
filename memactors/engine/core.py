"""ScopeCore: the change and recall path of a set of scopes, with no Ray in it (DESIGN section 9).

Every change of a scope runs on its core, in order. A host wraps it: the Ray host's scope
owner actor (``memactors.actors.owner``) or the process host (``memactors.runtime.hosts``),
which hand it its peers as ports (``memactors.engine.ports``: the ledger writer, the other
owners) and its prepare stage (gate and embedder, in a pool or in process).

A core keeps the locks and the entry points; the rest is small parts of its own:
``HotCache`` (hot scopes' live memories and their indexes), ``WorkingPool`` (L1),
``L2Outbox`` (what Lance has not seen yet), ``IdempotencyCache``; and mixins: the checks
before anything is read (``engine.admission``), recall (``engine.recall``), the L2 flush (``engine.flush``), hot state loaded, replayed and rebuilt
(``engine.state``), a session's gather (``engine.gather``), reads by key and the review queue
(``engine.listing``).

The one change path (``_apply``): operations (``memactors.core.ops``; writes are
``WriteRequest``) are authorised, writes prepared (gate, derive, embed), the scopes touched
locked (sorted, so batches never deadlock) and staged (layers over them), each operation decided
by its pure function (``memactors.core.changes``) and its changes applied to the staged state by
the one projection (``memactors.core.project.apply``); the batch's ledger entries are committed
in pipelined chunks; then the staged states are committed and the changes queued for L2. (A
sweep's share, alone in its batch, is applied to the hot states themselves once committed.)
Recovery replays the ledger's unapplied changes through the same projection.
"""

from __future__ import annotations

import asyncio
import functools
import gc
import os
import time

import orjson

from ..core import changes as C
from ..core import errors
from ..core import events as E
from ..core import records as R
from ..core.config import Config
from ..core.contradictions import load_judge
from ..core.errors import AccessDenied, BackPressure, L2Outdated, MemactorsError
from ..core.grants import GrantTable
from ..core.idempotency import CONFLICT, IdempotencyCache
from ..core.ops import GATHERED_ELSEWHERE
from ..core.project import COLUMNS, DELETE, PATCH_ACTIONS, ROW, Change, Rows, apply, apply_bulk, l2_effect
from ..core.scopes import GLOBAL, parse_scope
from ..core.versions import ScopeState
from ..core.working import WorkingPool
from ..embed import get_embedder
from ..gate import Gate, GatePolicy
from ..store.entries import Entry, encode
from .admission import AdmissionMixin, is_system, writes_of_columns
from .naming import owner_index, tenant_tag
from .erasures import ErasureMixin, Gathered
from .flush import FlushMixin, l2_unreadable
from .gather import SessionMixin
from .hot import HotCache, NearCopies
from .l2_pending import PendingL2, l2_table_exists
from .listing import ListingMixin
from .outbox import L2Outbox
from .prepare import PoolEmbedder, embed_kept, unpack
from .recall import RecallMixin
from .refusals import conflict, raced, typed
from .state import StateMixin
from .turns import Turns, check_order

GLOBAL_SCOPE = str(GLOBAL)
NOT_HERE = {"not_here": True}  # a memory id this owner does not hold (the caller asks the ledger)
_STALE = object()  # an operation the ledger refused as stale, to decide again (``_apply``)
STALE_TRIES = 3  # each try is behind another commit: a race lost three times in a row is reported


class _NoView:
    """The state of a scope an operation does not stage (a cold scope in a sweep)."""

    vectors: dict = {}

    def get(self, memory_id):
        return None

    def put(self, rec):
        pass

    def remove(self, memory_id):
        pass


NO_VIEW = _NoView()


class ScopeCore(AdmissionMixin, StateMixin, RecallMixin, FlushMixin, SessionMixin, ListingMixin, ErasureMixin):
    def __init__(self, index: int, data_dir: str, config: dict, peers, pools) -> None:
        """Core ``index`` of ``config``'s owners, on the data folder ``data_dir``. ``peers``:
        ``ledger()`` and ``owner(i)`` ports; ``pools``: ``gate_pool(gate, local_embedder)`` and
        ``embed_pool(local_embedder)``, the prepare stage's parts as the host provides them."""
        # An owner holds ~10^5 long-lived records: with the default thresholds the cyclic GC
        # walks them every few hundred allocations (measured: -25% write throughput).
        gc.set_threshold(50_000, 20, 100)
        self.index = index
        self.cfg = Config.from_dict(config)
        rc = self.cfg.runtime
        self.num_owners = rc.num_owners
        self.peers = peers
        self.ledger = peers.ledger()
        self._embedder = None  # built on first need: with an embed pool an owner loads no model
        self.embed_pool = pools.embed_pool(self._local_embedder)
        self.data_dir = data_dir
        self.l2 = None  # opened at start (an outdated table is first rebuilt from the ledger)
        self.judge = load_judge(self.cfg.lifecycle.judge)
        self.gate = Gate(policy=GatePolicy.from_dict(self.cfg.gate))
        self.gate_pool = pools.gate_pool(self.gate, lambda: None if rc.embed_workers else self._local_embedder())
        self.hot = HotCache(rc.hot_cache_max_memories, self.cfg.embedder.dim)
        self._stale: set[str] = set()  # scopes whose rebuild after a failed commit is still due
        self.working = WorkingPool(rc.working_pool_size, int(rc.session_ttl_s * 1_000_000))
        self.outbox = L2Outbox()
        self.idem = IdempotencyCache(int(rc.idempotency_window_s * 1_000_000))
        self._fp_key = b""  # keys request fingerprints (from the ledger key, outside the data folder)
        self.locks: dict[str, asyncio.Lock] = {}
        self.grants = GrantTable()
        self.grant_seq = 0
        self.inflight = 0
        self.turns = Turns()  # the parts of one call decided in the caller's order
        self.now_us = 0  # the runtime clock's newest time this owner has heard of
        self.timing: dict[str, float] = {}  # seconds spent per write stage, for stats()
        self.is_global_owner = owner_index(GLOBAL, self.num_owners) == index
        self.global_live = True  # until the global owner says otherwise: never miss a global memory
        self._announced_global: bool | None = None
        self.l2_scopes: set[str] = set()
        self._started: asyncio.Task | None = None
        self._flush_lock: asyncio.Lock | None = None
        self._flushes = 0
        self._unindexed = 0  # rows appended since the scalar indexes were last brought up to date
        self._mine_memo: dict[str, bool] = {}  # scope -> held here (asked once per change)
        # Ids this core erased (or was told of) since it started: a sweep planned before an
        # erasure must not mark or evict what is gone (its plan read L2 before the tombstone).
        self._erased: set[str] = set()

    # --- start-up and recovery -----------------------------------------------------------

    async def _ready(self) -> None:
        if self._started is None:
            self._flush_lock = asyncio.Lock()
            self._started = asyncio.get_running_loop().create_task(self._start())
        await self._started

    async def _start(self) -> None:
        path = os.path.join(self.data_dir, "l2")
        if l2_table_exists(path):
            await self._open_l2(path)
        else:  # nothing in L2 to check or load: opened by the first flush (``l2_pending``)
            self.l2 = PendingL2(functools.partial(self._l2_store, path), path)
        await self._sync_grants()
        rows, ts = await self.ledger.idempotency_window()
        self.idem.load(rows, ts)
        self.now_us = max(self.now_us, self.idem.newest)  # the newest event: "now" for recovery
        self._fp_key = await self.ledger.fingerprint_key()
        await self._replay(None)
        await self._rebuild_working()
        if self.is_global_owner:
            st = await self._state(GLOBAL_SCOPE)
            self._announced_global = None
            self.global_live = st.has_live()
        else:
            self.global_live = await self.peers.owner(owner_index(GLOBAL, self.num_owners)).is_global_live()
        self._flush_task = asyncio.get_running_loop().create_task(self._flush_loop())

    def _l2_store(self, path: str):
        from ..store.lance_store import L2Store  # imported in the actor only: the driver never loads lancedb

        return L2Store(path, self.cfg.embedder.name, self.cfg.embedder.dim, cache_mb=self.cfg.runtime.l2_cache_mb)

    async def _open_l2(self, path: str) -> None:
        """An existing table: opened (and its files checked) before anything is served."""
        opened = functools.partial(self._l2_store, path)
        try:
            try:
                self.l2 = await asyncio.to_thread(opened)
            except L2Outdated:  # L2 is a projection of the ledger: rebuilt, then opened
                await self.ledger.rebuild_l2(self.cfg.to_dict())
                self.l2 = await asyncio.to_thread(opened)
            self.l2_scopes = await asyncio.to_thread(self.l2.scopes)
        except MemactorsError:
            raise
        except Exception as exc:  # a damaged file: typed, with the advice (L2 is rebuilt from the ledger)
            raise l2_unreadable(self.data_dir, exc) from None

    def l2_open(self) -> bool:
        """Whether the L2 table is open here (a new folder's opens with its first flush)."""
        return not (isinstance(self.l2, PendingL2) and self.l2.store is None)

    async def l2_ready(self) -> None:
        """Open the L2 table now (creating an empty one in a new folder): for readers of its
        files, such as a backup, that need the table to exist."""
        await self._ready()
        if isinstance(self.l2, PendingL2):
            self.l2 = await asyncio.to_thread(self.l2.opened)

    def _mine(self, scope: str) -> bool:
        mine = self._mine_memo.get(scope)
        if mine is None:
            if len(self._mine_memo) >= 100_000:  # a bound on memory
                self._mine_memo.clear()
            mine = self._mine_memo[scope] = owner_index(parse_scope(scope), self.num_owners) == self.index
        return mine

    def _check_mine(self, scope: str) -> None:
        if not self._mine(scope):
            raise AccessDenied(f"scope {scope} is not served by owner {self.index}")

    def _lock(self, scope: str) -> asyncio.Lock:
        lk = self.locks.get(scope)
        if lk is None:
            lk = self.locks[scope] = asyncio.Lock()
        return lk

    def _local_embedder(self):
        if self._embedder is None:
            self._embedder = get_embedder(self.cfg.embedder.name, self.cfg.embedder.dim)
        return self._embedder

    async def _embed(self, texts: list[str]):
        return list(await self.embed_pool.embed(texts)) if texts else []

    def _tick(self, stage: str, since: float) -> float:
        now = time.perf_counter()
        self.timing[stage] = self.timing.get(stage, 0.0) + (now - since)
        return now

    # --- grants and the clock ------------------------------------------------------------------

    async def _sync_grants(self) -> None:
        self.grant_seq, changes = await self.ledger.grants_since(self.grant_seq)
        for g in changes:
            self.grants.put(GrantTable.from_event(g))

    async def reload_grants(self) -> None:
        """Take grant changes from the ledger (after a grant event). Never from the caller: an
        owner trusts only what the ledger says."""
        await self._ready()
        await self._sync_grants()

    async def set_now(self, now_us: int) -> None:
        """The runtime clock moved (a simulated clock advanced): background work uses it."""
        self.now_us = max(self.now_us, int(now_us))

    # --- the one change path -----------------------------------------------------------------

    async def write_batch(self, cols: dict, now_us: int, order: tuple | None = None) -> list[dict]:
        """Writes as columns (``WriteRequest`` field -> values), each with an idempotency key.
        Returns one result dict per write (an ``errors.encode``d error for a refused one).
        ``order``: this part's place among its call's parts (``engine.turns``)."""
        return await self.submit(writes_of_columns(cols), now_us, order)

    async def submit(self, ops: list, now_us: int, order: tuple | None = None) -> list[dict]:
        """Apply a batch of operations to the scopes this owner holds (the one entry point of
        every change). Returns one result per operation: a result dict, an encoded typed error,
        or ``NOT_HERE`` for a memory id this owner does not hold. ``order``: ``(token,
        position, count[, low])`` of this batch among the parts of one call, decided in that
        order (``engine.turns``); an empty batch with an order releases that part (its caller saw it fail)."""
        order = check_order(order)
        if order is not None and ops == []:
            self.turns.release(order)
            return []
        ticket = self.turns.arrive(order)
        try:
            if not isinstance(ops, list):
                raise R.InvalidRecord("submit takes a list of operations")
            n = len(ops)
            if n > self.cfg.runtime.owner_queue_max:  # never fits: a pause would not help
                raise BackPressure(f"a batch of {n} operations is more than owner {self.index}'s queue holds "
                                   f"({self.cfg.runtime.owner_queue_max}); nothing was written, send it in parts")
            if self.inflight + n > self.cfg.runtime.owner_queue_max:
                self.turns.refuse(ticket)
                ticket = None  # not taken in: the later parts wait for it
                raise BackPressure(f"owner {self.index} has {self.inflight} operations in flight (limit "
                                   f"{self.cfg.runtime.owner_queue_max}); nothing was written, retry after a pause")
            self.inflight += n
            try:
                await self._ready()
                self.now_us = max(self.now_us, int(now_us))
                return await self._apply(ops, int(now_us), ticket=ticket)
            finally:
                self.inflight -= n
        finally:
            self.turns.leave(ticket)

    async def _apply(self, ops: list, now_us: int, tries: int = 1, ticket: tuple | None = None) -> list[dict]:
        self.idem.advance(now_us)  # keys past the window are new keys again
        results: list = [None] * len(ops)
        fps: list = [None] * len(ops)
        todo = []
        for i, op in enumerate(ops):
            if isinstance(op, MemactorsError):
                results[i] = errors.encode(op)
                continue
            try:
                self._authorise(op)
            except MemactorsError as exc:
                results[i] = errors.encode(exc)
                continue
            if "prepared" in op.GATHER:  # a caller's write, its key maybe the caller's: its request's digest
                fps[i] = R.fingerprint(op, self._fp_key)
            elif op.SEES:  # a caller's decision on a memory (a forget, a review), its key maybe the caller's
                fps[i] = R.op_fingerprint(op, self._fp_key)
            seen = self.idem.lookup(op.key, fps[i])
            if seen == CONFLICT:
                results[i] = errors.encode(conflict(op))
            elif seen is not None:
                results[i] = orjson.loads(seen)
            else:
                todo.append(i)
        await self._check_claims(ops, todo, results)
        if not todo:
            return results
        t0 = time.perf_counter()
        writes = {i: ops[i] for i in todo if "prepared" in ops[i].GATHER}
        try:
            prepared = await self._prepare(writes)
        except MemactorsError as exc:  # the embedder's own error (a LangGraph index's function): every write's
            prepared = dict.fromkeys(writes, exc)
        for i in [i for i, p in prepared.items() if p.__class__ is not C.Prepared]:  # refused in prepare
            results[i] = errors.encode(prepared.pop(i))
            todo.remove(i)
        t1 = self._tick("prepare", t0)
        where = await self._resolve([ops[i].memory_id for i in todo if ops[i].ADDRESS == "memory"])
        scope_of = {}
        for i in list(todo):
            op = ops[i]
            if op.ADDRESS == "memory":
                scope = where.get(op.memory_id)
                if scope is None:
                    results[i] = NOT_HERE
                    todo.remove(i)
                    continue
                try:  # the caller named an id, not a scope: the refusal names none either
                    if op.CHECK == "write" and not is_system(op):
                        self.grants.check_write(op.actor, parse_scope(scope), named="that memory")
                except MemactorsError as exc:
                    # One who cannot even read its scope learns nothing from the id, not that it exists.
                    results[i] = errors.encode(exc) if self.grants.reads(op.actor, parse_scope(scope)) else NOT_HERE
                    todo.remove(i)
                    continue
                scope_of[i] = scope
            elif op.ADDRESS == "rows":
                scope_of[i] = None  # many scopes: locked below, staged only where hot
            else:
                scope_of[i] = op.scope
        many = {s for i in todo if ops[i].ADDRESS == "rows" for s in ops[i].scopes()}
        scopes = sorted({s for s in scope_of.values() if s is not None} | many)
        locks = [self._lock(s) for s in scopes]
        await self.turns.turn(ticket, self.cfg.runtime.call_timeout_s)  # the earlier parts of this call lock first
        for lk in locks:
            await lk.acquire()
        self.turns.leave(ticket)
        try:
            foreign = await self._decide_and_commit(ops, todo, scope_of, prepared, fps, results, scopes, now_us, t1)
        finally:
            for lk in locks:
                lk.release()
        if foreign:  # after the locks: an owner taking ours while we wait for its would deadlock
            await self._deliver(foreign)
        if len(self.outbox) >= self.cfg.runtime.l2_flush_max_rows and not self._flush_deferred():
            asyncio.get_running_loop().create_task(self._flush())
        again = [i for i, r in enumerate(results) if r is _STALE]
        if again:  # the ledger refused them as decided against what it held before (``store.ledger_races``)
            if tries >= STALE_TRIES:
                for i in again:
                    results[i] = errors.encode(raced())
            else:
                for i, r in zip(again, await self._apply([ops[i] for i in again], now_us, tries + 1)):
                    results[i] = r
        return results

    async def _prepare(self, writes: dict) -> dict:
        """Gate, derive and embed a batch's writes (in the gate pool for big batches, off this
        core; in process for a handful: a hop costs more than the scan)."""
        if not writes:
            return {}
        idx = list(writes)
        cols = {"text": [writes[i].text for i in idx], "source": [writes[i].source for i in idx],
                "context": [writes[i].context for i in idx], "embed_text": [writes[i].embed_text for i in idx]}
        for f in R.SCANNED_FIELDS:
            cols[f] = [getattr(writes[i], f) for i in idx]
        remote = len(idx) >= self.cfg.runtime.gate_pool_min_batch
        out = await self.gate_pool.prepare(cols, remote=remote)
        if out["vectors"] is None:  # a model in the embedding pool
            out["vectors"] = embed_kept(PoolEmbedder(await self._embed([t for t in out["embed"] if t is not None]),
                                                      self.cfg.embedder.dim), out["embed"])
        return dict(zip(idx, unpack(out)))

    async def _resolve(self, memory_ids: list[str]) -> dict[str, str]:
        """The scope of each memory id this owner holds: hot, working pool, outbox, L2, then the
        ledger (the authority). Ids of other owners' scopes are left out."""
        out, missing = {}, []
        for mid in memory_ids:
            scope = self.hot.where.get(mid)
            if scope is None and (w := self.working.find(mid)) is not None:
                scope = w["scope"]
            if scope is None:
                missing.append(mid)
            else:
                out[mid] = scope
        if missing:
            for mid, scope in (await self.ledger.scopes_of(missing)).items():
                out[mid] = scope
        return {m: s for m, s in out.items() if self._mine(s)}

    async def _decide_and_commit(self, ops, todo, scope_of, prepared, fps, results, scopes, now_us, t1) -> None:
        # Under the locks, once more: a retry that waited here while its original committed
        # must not be decided again (later operations would be decided against a write the
        # ledger then refuses as a duplicate). A key twice in one batch is one write.
        first_of: dict[str, int] = {}
        for i in list(todo):
            key = ops[i].key
            seen = self.idem.lookup(key, fps[i])
            if seen is None and key in first_of:
                j = first_of[key]
                seen = CONFLICT if fps[i] != fps[j] else ("same", j)
            if seen is None:
                first_of[key] = i
                continue
            todo.remove(i)
            if seen == CONFLICT:
                results[i] = errors.encode(conflict(ops[i]))
            elif isinstance(seen, tuple):
                results[i] = ("same", seen[1])  # filled in from the first once it is decided
            else:
                results[i] = orjson.loads(seen)
        stale = self._stale & set(scopes)
        if stale:  # a failed commit's scopes not yet rebuilt: never decide against a guess
            await self._reload(stale)
        single = {scope_of[i] for i in todo if scope_of[i] is not None}
        missing = [s for s in sorted(single) if s not in self.hot]
        if missing:
            for s, st in (await self._load(missing)).items():
                self.hot.install(s, st)
        # A batch of bulk operations alone (the sweeper sends each share by itself) decides against
        # the hot states as they are and changes them once its ledger group is durable: staging a
        # share's thousands of evictions in layers, then committing them, was a third of an owner's sweep.
        in_place = all(ops[i].BULK for i in todo)
        staged = {s: st if in_place else st.stage()  # a sweep loads no cold scope
                  for s in scopes if (st := self.hot.get(s)) is not None}
        pre = await self._gather_erasures([ops[i] for i in todo if scope_of[i] is not None], staged)
        bulk = [ops[i] for i in todo if scope_of[i] is None]  # sweeps, rollbacks: over many scopes
        flagged = await self._flagged_cold(bulk, staged) if bulk else {}
        new_ids = R.new_memory_ids([tenant_tag(scope_of[i] or GLOBAL_SCOPE) for i in todo])
        entries, refs, done = [], [], []
        erased: set[str] = set()  # by an earlier op of this batch: gone for the later ones, as for a later call
        # per scope: live text-only vectors, for semantic dedup (one product per scope and batch)
        nears = NearCopies.for_batch(staged, [(scope_of[i], getattr(prepared.get(i), "vector", None)) for i in todo],
                                     self.cfg.lifecycle)
        chunk = self.cfg.runtime.ledger_chunk
        for n, i in enumerate(todo, 1):
            op = ops[i]
            try:
                if scope_of[i] is None:
                    ctx = C.Ctx(None, now_us, self.cfg.lifecycle, state_of=staged.get, flagged_of=flagged.get,
                                erased=self._erased)
                    if "access" in op.GATHER:
                        ctx.accessed, ctx.current, ctx.touched = await self._since_plan(op, staged, now_us)
                    out, base = C.decide(op, ctx), None
                else:
                    near = nears.get(scope_of[i])
                    if near is None:
                        near = nears[scope_of[i]] = NearCopies(staged[scope_of[i]], self.cfg.lifecycle.dedup_cosine,
                                                               self.cfg.lifecycle.text_contradiction_cosine)
                    out, base = await self._decide(op, staged[scope_of[i]], prepared.get(i), new_ids[n - 1], now_us,
                                                   near, pre, erased)
            except MemactorsError as exc:
                results[i] = errors.encode(exc)
                out = None
            if out is not None:
                erased.update(ch.memory_id for ch in out.changes if ch.action == E.FORGET)
            if out is not None and op.BULK:
                if not in_place:
                    apply_bulk(staged.get, out.changes)
                l2 = [True] * len(out.changes)  # a sweep's rows are vault rows read from Lance
            elif out is not None:
                l2 = []
                for ch in out.changes:
                    view = staged.get(ch.scope, NO_VIEW)
                    prior = view.get(ch.memory_id) if ch.memory_id else None
                    b = out.bases.get(ch.memory_id) or (base if base and ch.memory_id == base["memory_id"] else None)
                    rec = apply(view, ch, b)
                    if rec is None and b is not None and ch.action in PATCH_ACTIONS:  # a scope not held hot
                        rec = {**b, **ch.patch}
                    if ch.record is not None and ch.memory_id in out.vectors:
                        staged[ch.scope].vectors[ch.memory_id] = out.vectors[ch.memory_id]
                        if ch.action == E.WRITE and rec is not None and rec.get("entity_key") is None:
                            nears[ch.scope].add(ch.memory_id, out.vectors[ch.memory_id])
                    elif rec is not None and prior is None and b is not None \
                            and self.working.find(ch.memory_id) is None \
                            and (rec["status"] in R.LIVE or (b.get("status") in R.GONE and rec["status"] not in R.GONE
                                                            and rec.get("pool") != "working")):
                        # made live again (a superseded or evicted one), or an evicted one brought back
                        # as it was (superseded, held: a rollback): its vector comes back too, and its
                        # row to Lance whole (an evicted row is gone there: a patch would find none)
                        out.vectors[ch.memory_id] = (await self._embed([R.embedded_text(rec)]))[0]
                        if rec.get("pool") != "working" and rec["status"] in R.LIVE:  # L1 items go to the pool
                            view.vectors[ch.memory_id] = out.vectors[ch.memory_id]
                        out.revived[ch.memory_id] = rec
                    l2.append(l2_effect(ch, self._in_pool(ch, rec)) is not None)
            if out is not None:
                results[i] = out.result
                stored = orjson.dumps(out.result)  # the ledger's copy and the idempotency cache's
                entries.append(Entry(op.key, op.author, now_us, out.changes, stored, fps[i], out.destroy_keys, l2,
                                     out.live_read, out.edges_read, out.keys_later))
                done.append((i, out, stored))
            if entries and (len(entries) % chunk == 0 or n == len(todo)) and len(entries) > len(refs) * chunk:
                # Pipelined: the ledger commits this chunk while the next one is decided.
                refs.append(self.ledger.append(encode(entries[len(refs) * chunk:])))
        t2 = self._tick("decide", t1)
        parts = await asyncio.gather(*refs, return_exceptions=True)
        self._tick("ledger_wait", t2)
        failed = next((p for p in parts if isinstance(p, BaseException)), None)
        if failed is not None:
            # Some chunks may have committed: rebuild these scopes from the ledger, then report
            # the failure (a retry with the same keys completes the rest). A rebuild that cannot
            # run yet leaves them stale: the next operation on them rebuilds first.
            try:
                await self._reload(set(scopes))
                # ...and learn which of these keys did commit: a retry gets their stored results
                # (a forget retried would otherwise find its memory gone and answer NotFound).
                rows, ts = await self.ledger.idempotency_of([e.idem_key for e in entries])
                self.idem.load(rows, ts)
            except MemactorsError:
                pass
            raise typed(failed)
        outcome = [r for part in parts for r in part]
        rebuild, foreign = set(), []
        for (i, out, stored), (status, payload) in zip(done, outcome):
            op = ops[i]
            if status in ("dup", "conflict"):
                # A retry raced its original into the ledger: rebuild from the ledger.
                results[i] = orjson.loads(payload) if status == "dup" else errors.encode(conflict(op))
                rebuild.update([scope_of[i]] if scope_of[i] else {c.scope for c in out.changes})
                continue
            if status == "stale":  # raced a copy or an erasure of the same memory: decided again (_apply)
                results[i] = _STALE
                rebuild.update({c.scope for c in out.changes if c.scope in staged} | ({scope_of[i]} - {None}))
                continue
            made = () if op.BULK else [ch.memory_id for ch in out.changes if ch.action in E.RECORD_WRITES]
            self.idem.put(op.key, fps[i], stored, now_us, made)  # (a sweep writes no record)
            if op.BULK:
                if in_place:
                    self.hot.apply_bulk(out.changes)
                self._fold_bulk(out.changes, payload)
                continue
            for ch, seq in zip(out.changes, payload):
                if not self._mine(ch.scope):  # an erasure down the provenance into another owner's scope
                    foreign.append((seq, ch))
                    continue
                self._fold(ch, out.vectors.get(ch.memory_id), seq, out.revived.get(ch.memory_id))
        for i, r in enumerate(results):
            if isinstance(r, tuple):  # a key repeated in the batch gets its first item's result
                results[i] = results[r[1]]
        gone = [m for (_, out, _), (status, _) in zip(done, outcome) if status == "ok" for m in out.destroy_keys]
        if gone:  # the erased memories' writes: a retry under their keys must not test a guess of their text
            keys = self.idem.keys_of(gone)
            self.idem.unpin(keys if keys is not None else await self.ledger.write_keys_of(gone))
        for s in staged if not in_place else ():
            if s not in rebuild:
                if s in nears:
                    nears[s].keep()
                self.hot.commit(s, staged[s])
        # Changes to hot scopes the batch did not stage (an erasure down the provenance into
        # another scope): those scopes are rebuilt from L2 and the ledger.
        rebuild |= {c.scope for _, out, _ in done for c in out.changes
                    if c.scope not in staged and c.scope in self.hot and self._mine(c.scope)}
        if rebuild:
            await self._reload(rebuild)
        if GLOBAL_SCOPE in staged and self.is_global_owner:
            await self._announce_global()
        return foreign

    async def _deliver(self, foreign: list[tuple[int, Change]]) -> None:
        """Committed changes of other owners' scopes (an erasure that followed a copy there) go
        to those owners, and are in their hot state, L1 and L2 outbox before this returns. An
        owner that cannot be reached replays them from the ledger when it starts again."""
        by_owner: dict[int, list] = {}
        for seq, ch in foreign:
            by_owner.setdefault(owner_index(parse_scope(ch.scope), self.num_owners), []).append((seq, ch))
        refs = [self.peers.owner(i).absorb(items) for i, items in sorted(by_owner.items())]
        await asyncio.gather(*refs, return_exceptions=True)

    async def absorb(self, items: list[tuple[int, Change]]) -> None:
        """Apply changes another owner committed for scopes this owner holds (``_deliver``):
        through the projection into the hot state, L1 and the L2 outbox, under the scopes' locks."""
        await self._ready()
        items = [(seq, ch) for seq, ch in items if self._mine(ch.scope)]
        scopes = sorted({ch.scope for _, ch in items})
        locks = [self._lock(s) for s in scopes]
        for lk in locks:
            await lk.acquire()
        try:
            staged = {s: self.hot.get(s).stage() for s in scopes if s in self.hot}  # committed at once (recall reads)
            for seq, ch in items:
                if ch.scope in staged:
                    apply(staged[ch.scope], ch)
                self._fold(ch, None, seq, None, new=False)
            for s, st in staged.items():
                self.hot.commit(s, st)
            gone = [ch.memory_id for _, ch in items if ch.action == E.FORGET]
            if gone:  # as _decide_and_commit: their writes' requests forgotten here too
                self.idem.unpin(await self.ledger.write_keys_of(gone))
        finally:
            for lk in locks:
                lk.release()
        if GLOBAL_SCOPE in scopes and self.is_global_owner:
            await self._announce_global()

    async def _decide(self, op, state: ScopeState, prep, new_id: str, now_us: int, near,
                      pre: Gathered | None = None, erased: set[str] = frozenset()) -> tuple[C.Outcome, dict | None]:
        """Gather what the operation's decision reads (``pre``: what the batch's erasures read
        at once, ``_gather_erasures``; ``erased``: ids an earlier op of the batch erased, which
        ``pre`` still holds), then decide it (``memactors.core.changes``). Returns the outcome and
        the record it addressed (None for writes and grants)."""
        ctx = C.Ctx(state, now_us, self.cfg.lifecycle, prepared=prep, new_id=new_id, near=near.near_copies,
                    similar=near.similar if near.similar_cos <= 1.0 else None, judge=self.judge,  # None: the check is off
                    carried=functools.partial(self._carried, state, getattr(op, "scope", None)))
        need = op.GATHER
        if "record" in need:
            rec = None if op.memory_id in erased else state.get(op.memory_id) or self.working.find(op.memory_id)
            if rec is None and op.memory_id not in erased:
                rec = pre.records[op.memory_id] if pre is not None and op.memory_id in pre.records \
                    else await self._record(op.memory_id)
            if op.SEES:
                ctx.shown = self.grants.shown_to(op.actor)
                if rec is not None and not ctx.shown(rec["scope"], rec.get("sensitivity")):
                    # Above the actor's clearance in its scope (or in a scope it cannot read): a
                    # memory it may not see is one it may not erase or decide on either (op.MISSING).
                    rec = None
            ctx.record = rec
            if rec is not None and "versions" in need and op.all_versions and rec.get("entity_key"):
                fact = (rec["scope"], rec["entity_key"])
                if pre is not None and fact in pre.versions:
                    ctx.versions = pre.versions[fact]
                else:
                    ctx.versions = await self._versions([fact])
            elif rec is not None and "versions" in need and op.all_versions:
                ctx.versions = await self._linked_versions(rec, state)
            ctx.versions = [v for v in ctx.versions if v["memory_id"] not in erased]
            if rec is not None and "provenance" in need:
                roots = [rec["memory_id"], *[v["memory_id"] for v in ctx.versions]]
                ctx.provenance = pre.provenance if pre is not None and pre.roots.issuperset(roots) \
                    else await self.ledger.provenance(roots)
                if erased:  # erased by an earlier op of the batch: as the ledger shows one erased before
                    records, edges = ctx.provenance
                    ctx.provenance = ({m: r if m not in erased else {**r, "status": "tombstoned"}
                                       for m, r in records.items()}, edges)
        if need & GATHERED_ELSEWHERE:
            await self._gather_more(op, ctx)  # the source record, vectors, the gate's verdict, the author
        if "view" in need:  # what the writer may see of the scope it writes: the decision reads only that
            writer = ctx.author if "author" in need else op.actor
            scope = getattr(op, "scope", None) or (ctx.record or {}).get("scope")
            ctx.sees = self.grants.write_view(writer, scope) if writer is not None and scope else None
        return C.decide(op, ctx), ctx.record

    async def _since_plan(self, op, staged: dict, now_us: int) -> tuple[dict[str, int], dict[str, dict], set]:
        """What a sweep's share is checked again against: the rows that changed since the plan
        (an event after ``op.since``, or a recall at or after the plan's ``now_us``: the others
        are as the plan saw them), the ledger's record of those this core does not hold hot, and
        the last recall of each (recalls reach the ledger, and L2 later, never the hot records)."""
        touched = await self.ledger.touched_since([mid for mid, _, _ in op.rows], op.since, now_us)
        if not touched:
            return {}, {}, set()
        other = sorted(mid for mid, scope, _ in op.rows if mid in touched
                       and ((st := staged.get(scope)) is None or st.get(mid) is None))
        current = {m: r for m, r in (await self._records(other)).items() if r is not None} if other else {}
        return {m: a for m, a in touched.items() if a is not None}, current, set(touched)

    def _carried(self, state: ScopeState, scope: str | None, hashes: list[str]) -> set[str]:
        """Memories of ``scope`` (vault or L1) whose text hashes to one of ``hashes``: those a
        write's retrieval context carries (its ``context_of``)."""
        want = set(hashes)
        return {r["memory_id"] for r in (*state.records.values(), *self.working.items(scope))
                if r.get("content_hash") in want}

    async def _record(self, memory_id: str) -> dict | None:
        return (await self._records([memory_id])).get(memory_id)

    async def _records(self, memory_ids: list[str]) -> dict[str, dict | None]:
        """Records not in the hot state (superseded, or of a cold scope): projected from the
        ledger, which holds every change, flushed to Lance or not; one ledger call for all."""
        rows = Rows()
        for _, ch in await self.ledger.history(sorted(set(memory_ids))):
            if ch is not None:
                apply(rows, ch)
        return {m: rows.get(m) for m in memory_ids}

    def _fold_bulk(self, changes: list[Change], seqs: list[int]) -> None:
        """``_fold`` for a bulk operation's committed changes: vault rows, no vectors."""
        if len(self._erased) >= 1_000_000:  # the bound ``_fold`` keeps
            self._erased.clear()
        for ch in changes:
            if ch.action == E.FORGET:  # past its hard TTL: erased (a later plan's row for it is skipped)
                self._erased.add(ch.memory_id)
            self._to_outbox(l2_effect(ch, False), ch, None)
            if ch.patch.get("status") in R.GONE:
                self.working.remove(ch.memory_id, ch.scope)
        self.outbox.seqs(seqs)

    def _in_pool(self, ch: Change, rec: dict | None) -> bool:
        """Whether a change concerns an L1 (working pool) item, which L2 never holds."""
        return (rec is not None and rec.get("pool") == "working") or (
            ch.memory_id is not None and self.working.find(ch.memory_id) is not None)

    def _fold(self, ch: Change, vector, seq: int, revived: dict | None, *, new: bool = True) -> None:
        """A committed change reaches what this core keeps besides the hot state (which has it
        already): the grant table, L1, and the L2 outbox as ``project.l2_effect`` says."""
        if ch.action == E.FORGET:
            if len(self._erased) >= 1_000_000:  # a bound on memory: a sweep's plan is minutes old at most
                self._erased.clear()
            self._erased.add(ch.memory_id)
        if ch.action == E.GRANT:
            self.grants.put(GrantTable.from_event(ch.data, ch.scope))
        elif ch.action == E.WRITE_WORKING:
            self.working.put(ch.record, vector)
        elif revived is not None and revived.get("pool") == "working":  # back in L1 (a rollback)
            self.working.put(revived, vector)
        elif ch.action in PATCH_ACTIONS and self.working.patch(ch.memory_id, ch.patch):
            pass  # an L1 item's change (promoted, released, approved): L2 never held it
        elif ch.action == E.FORGET and self.working.remove(ch.memory_id, ch.scope) is not None:
            pass
        else:
            if revived is not None:  # made live again: its row may be gone from Lance (evicted), written whole
                self.outbox.row(revived, vector, new=False)
            else:
                self._to_outbox(l2_effect(ch, False), ch, vector, new=new)
            if ch.action == E.FORGET or (ch.patch or {}).get("status") in R.GONE:  # erased, or archived from L1
                self.working.remove(ch.memory_id, ch.scope)
        self.outbox.seqs([seq])

    def _to_outbox(self, effect: str | None, ch: Change, vector, *, new: bool = False) -> None:
        if effect == ROW:
            self.outbox.row(ch.record, vector, new=new)
        elif effect == COLUMNS:
            self.outbox.patch(ch.memory_id, ch.scope, ch.patch)
        elif effect == DELETE:
            self.outbox.delete(ch.memory_id, ch.scope)

    # --- routing help ------------------------------------------------------------------------

    async def locate(self, memory_ids: list[str]) -> dict[str, str]:
        """Which of these memory ids this owner holds, and in which scope."""
        await self._ready()
        return await self._resolve(memory_ids)

    async def l2_counts(self, now_us: int) -> dict:
        """Memories in L2 by status, pool and tenant, and how soon they expire (one narrow scan)."""
        await self._ready()
        return await asyncio.to_thread(self.l2.counts, int(now_us))

    # --- /global/ liveness ------------------------------------------------------------------
    # /global/ hashes onto one owner. The others only need to know whether it holds anything:
    # when it does not (often), a recall is answered by one owner alone. The global owner
    # tells every other owner before it acknowledges a change, so no recall misses a write.

    async def _announce_global(self) -> None:
        st = self.hot.get(GLOBAL_SCOPE)
        live = bool(st and st.has_live())
        if live == self._announced_global:
            return
        others = [self.peers.owner(i) for i in range(self.num_owners) if i != self.index]
        await asyncio.gather(*[o.set_global_live(live) for o in others])
        self._announced_global = live

    async def set_global_live(self, live: bool) -> None:
        self.global_live = bool(live)

    async def is_global_live(self) -> bool:
        await self._ready()
        return (await self._state(GLOBAL_SCOPE)).has_live()

    # --- maintenance -----------------------------------------------------------------------

    async def drop_hot(self) -> None:
        """Flush, then empty the hot index: every scope is served from Lance until warmed."""
        await self.flush()
        self.hot.clear()

    async def stats(self) -> dict:
        await self._ready()
        return {
            "index": self.index, "hot_scopes": len(self.hot.states), "hot_memories": self.hot.size(),
            "working_items": len(self.working), "pending_l2": len(self.outbox),
            "l2_cache_mb": round(self.l2.cache_bytes() / 2**20, 1) if self.l2_open() else 0.0,
            "inflight": self.inflight,
            "timing_s": {k: round(v, 3) for k, v in self.timing.items()},
        }

    def pid(self) -> int:
        return os.getpid()

