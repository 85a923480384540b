"""Scope owners: every mutation of a scope runs on its owner, in order (DESIGN section 9).

An owner holds, for the tenants hashed onto it:
- the hot index: per scope, the active memories with their vectors (a ``ScopeState``), so a
  recall for a hot scope needs no Lance query; bounded by ``hot_cache_max_memories``;
- the L1 working pool;
- the L2 buffer: records committed to the ledger but not yet in Lance, flushed in batches.

Order: async actors do not keep the order of pipelined calls, so each scope has an
``asyncio.Lock``; a batch takes the locks of its scopes (sorted, so batches never deadlock),
decides against a staged copy of each scope's state, commits one ledger group, and only then
swaps the staged state in. Recalls read committed state only.

Recovery: a restarted owner reloads grants and idempotency keys from the ledger, replays the
events Lance has not seen (the ledger records which have), and flushes them.
"""

from __future__ import annotations

import asyncio
import dataclasses
import gc
import logging
import os
import time
from collections import OrderedDict, deque

import numpy as np
import orjson
import ray

from ..core import records as R
from ..core.config import Config
from ..core.errors import AccessDenied, BackPressure, MemactorsError, NotFound
from ..core.grants import GrantTable
from ..core.scopes import GLOBAL, parse_scope
from ..core.versions import ScopeState, decide
from ..core.working import WorkingPool
from ..embed import get_embedder
from ..gate import Gate, GatePolicy
from ..gate.scanner import combine
from . import items as I
from ..core import scoring as S
from .embed_pool import EmbedPool
from .gate_pool import GatePool
from .recall_index import HIT_FIELDS, HotIndex, rivals_of, score_rows
from .naming import LEDGER, embed_worker_name, gate_worker_name, owner_index, owner_name

log = logging.getLogger("memactors.owner")
GLOBAL_SCOPE = str(GLOBAL)

def _retried(seen: tuple, fp: bytes) -> dict:
    """The stored result of a retried write, or an error marker when the key came back with a
    different write (the facade raises IdempotencyConflict for it)."""
    first_fp, result = seen
    if first_fp is not None and first_fp != fp:
        return _CONFLICT
    return orjson.loads(result)


_CONFLICT = {"error": "IdempotencyConflict",
             "message": "this idempotency key was first used for a different write; nothing was written for it"}


def _cow(st: ScopeState) -> ScopeState:
    """A copy to change and swap in whole: indexes copied, records shared (never mutated)."""
    return ScopeState(dict(st.records), dict(st.by_entity), dict(st.by_hash), dict(st.entity_version))


@ray.remote(num_cpus=0, max_concurrency=1000)
class ScopeOwner:
    def __init__(self, index: int, data_dir: str, config: dict, namespace: str) -> None:
        # An owner holds ~10^5 long-lived records: with the default thresholds the cyclic GC
        # walks them every few hundred allocations (measured: -25% write throughput).
        gc.set_threshold(50_000, 20, 100)
        self.index = index
        self.cfg = Config.from_dict(config)
        rc = self.cfg.runtime
        self.num_owners = rc.num_owners
        self.ledger = ray.get_actor(LEDGER, namespace=namespace)
        self._embedder = None  # built on first need: with an embed pool an owner loads no model
        self.embed_pool = EmbedPool([embed_worker_name(i) for i in range(rc.embed_workers)], namespace,
                                    self._local_embedder)
        from ..store.lance_store import L2Store  # imported in the actor only: the driver never loads lancedb

        self.l2 = L2Store(os.path.join(data_dir, "l2"), self.cfg.embedder.name, self.cfg.embedder.dim)
        self.gate = Gate(policy=GatePolicy.from_dict(self.cfg.gate))
        self.gate_pool = GatePool([gate_worker_name(i) for i in range(rc.gate_workers)], namespace, self.gate)
        self.states: OrderedDict[str, ScopeState] = OrderedDict()  # hot scopes, least recently used first
        self.matrices: dict[str, HotIndex] = {}
        self.where: dict[str, str] = {}  # memory id -> scope, for hot records
        self.working = WorkingPool(rc.working_pool_size, int(rc.session_ttl_s * 1_000_000))
        self.locks: dict[str, asyncio.Lock] = {}
        self.idem: dict[str, tuple] = {}  # idempotency key -> (fingerprint, result), for the configured window
        self._fp_key = b""  # keys request fingerprints (from the ledger key, outside the data folder)
        self._idem_order: deque[tuple[int, str]] = deque()  # (write time, key), oldest first
        self.grants = GrantTable()
        self.pending: dict[str, dict] = {}  # memory id -> latest record state not yet in Lance
        self.pending_deletes: set[str] = set()
        self.pending_seqs: list[int] = []
        self.created_here: set[str] = set()  # ids surely absent from Lance: appended, not merged
        self.inflight = 0
        self.timing: dict[str, float] = {}  # seconds spent per write stage, for stats()
        self.namespace = namespace
        self.is_global_owner = owner_index(GLOBAL, self.num_owners) == index
        self.global_live = True  # until the global owner says otherwise: never miss a global memory
        self._announced_global: bool | None = None
        self.l2_scopes: set[str] = set()
        self._started: asyncio.Task | None = None
        self._flush_lock: asyncio.Lock | None = None
        self._flushes = 0
        self._unindexed = 0  # rows appended since the scalar indexes were last brought up to date

    # --- start-up and recovery -----------------------------------------------------------

    async def _ready(self) -> None:
        if self._started is None:
            self._flush_lock = asyncio.Lock()
            self._started = asyncio.get_running_loop().create_task(self._start())
        await self._started

    async def _start(self) -> None:
        self.grants = GrantTable.from_list(await self.ledger.grants.remote())
        self.l2_scopes = await asyncio.to_thread(self.l2.scopes)
        self.idem = await self.ledger.idempotency_since.remote(0)
        self._fp_key = await self.ledger.fingerprint_key.remote()
        await self._replay(None)
        now = self._now()
        for ev in await self.ledger.working_since.remote(now - self.working.ttl_us):
            if ev["data"] is not None and self._mine(ev["scope"]):
                rec = ev["data"]
                rec["vector"] = (await self.embed_pool.embed([rec["content"]]))[0]
                self.working.put(rec)
        if self.is_global_owner:
            st = await self._state(GLOBAL_SCOPE)
            self._announced_global = None
            self.global_live = bool(st.by_entity or st.by_hash)
        else:
            glob = ray.get_actor(owner_name(owner_index(GLOBAL, self.num_owners)), namespace=self.namespace)
            self.global_live = await glob.is_global_live.remote()
        asyncio.get_running_loop().create_task(self._flush_loop())

    @staticmethod
    def _now() -> int:
        return time.time_ns() // 1000

    def _mine(self, scope: str) -> bool:
        return owner_index(parse_scope(scope), self.num_owners) == self.index

    def _check_mine(self, scope: str) -> None:
        if not self._mine(scope):
            raise AccessDenied(f"scope {scope} is not served by owner {self.index}")

    async def _replay(self, only: set[str] | None) -> None:
        """Apply the ledger's events that Lance has not seen, for this owner's scopes (or ``only``)."""
        events = [e for e in await self.ledger.unapplied.remote() if self._mine(e["scope"])]
        if only is not None:
            events = [e for e in events if e["scope"] in only]
        scopes = sorted({e["scope"] for e in events} | (only or set()))
        # Rebuilt aside and swapped in whole: a compiled-graph recall may read states meanwhile.
        fresh = await self._load(scopes, install=False) if scopes else {}
        writes = [e["data"] for e in events if e["action"] == "write" and e["data"] is not None]
        for data, vec in zip(writes, await self.embed_pool.embed([d["content"] for d in writes]) if writes else []):
            data["vector"] = vec  # one batch for the whole replay
        for e in events:
            state = fresh[e["scope"]]
            mid, data = e["memory_id"], e["data"]
            if e["action"] == "write":
                if data is None:  # its key was destroyed: a forget follows
                    continue
                rec = data
                self.created_here.discard(mid)
            elif e["action"] == "forget":
                state.remove(mid)
                self.where.pop(mid, None)
                self.pending.pop(mid, None)
                self.pending_deletes.add(mid)
                self.pending_seqs.append(e["seq"])
                continue
            else:
                base = state.records.get(mid) or self.pending.get(mid) or next(iter(self.l2.get([mid])), None)
                if base is None:
                    self.pending_seqs.append(e["seq"])
                    continue
                rec = dict(base, **data)
            state.put(rec)
            self._track(rec)
            self.pending[mid] = rec
            self.pending_seqs.append(e["seq"])
        for sc, st in fresh.items():
            self.states[sc] = st
        if events:
            await self._flush_soon()

    async def _load(self, scopes: list[str], install: bool = True) -> dict[str, ScopeState]:
        # Scopes Lance has never seen need no query: only owners write Lance, one owner a tenant.
        asked = [s for s in scopes if s in self.l2_scopes]
        rows = []
        for i in range(0, len(asked), 500):
            rows += await asyncio.to_thread(self.l2.load_scopes, asked[i : i + 500])
        fresh = {s: ScopeState() for s in scopes}
        for r in sorted(rows, key=lambda r: (r["version"], r["updated_at"])):
            fresh[r["scope"]].put(r)
            self.where[r["memory_id"]] = r["scope"]
        if install:
            for s, st in fresh.items():
                self.states[s] = st
        return fresh

    def _track(self, rec: dict) -> None:
        if rec["status"] in ("active", "pending"):
            self.where[rec["memory_id"]] = rec["scope"]
        else:
            self.where.pop(rec["memory_id"], None)

    async def _state(self, scope: str) -> ScopeState:
        st = self.states.get(scope)
        if st is None:
            await self._load([scope])
            st = self.states[scope]
        self.states.move_to_end(scope)
        return st

    def _lock(self, scope: str) -> asyncio.Lock:
        lk = self.locks.get(scope)
        if lk is None:
            lk = self.locks[scope] = asyncio.Lock()
        return lk

    # --- grants ----------------------------------------------------------------------------

    async def reload_grants(self) -> None:
        """Take the grants from the ledger again (after a grant event). Never from the caller:
        an owner trusts only what the ledger says."""
        await self._ready()
        self.grants = GrantTable.from_list(await self.ledger.grants.remote())

    # --- writes ----------------------------------------------------------------------------

    async def write_batch(self, items: list[dict], now_us: int) -> list[dict]:
        """Write validated items (dicts of WriteRequest fields, each with an idempotency key)."""
        await self._ready()
        n = len(items)
        if self.inflight + n > self.cfg.runtime.owner_queue_max:
            raise BackPressure(
                f"owner {self.index} has {self.inflight} writes in flight (limit "
                f"{self.cfg.runtime.owner_queue_max}); nothing was written, retry after a pause"
            )
        reqs = [R.WriteRequest(**it).validate() for it in items]
        for r in reqs:
            self._check_mine(r.scope)
            self.grants.check_write(r.actor, parse_scope(r.scope))
        self.inflight += n
        try:
            return await self._write(reqs, now_us)
        finally:
            self.inflight -= n

    async def _write(self, reqs: list[R.WriteRequest], now_us: int) -> list[dict]:
        results: list[dict | None] = [None] * len(reqs)
        todo = []
        fps = [R.fingerprint(r, self._fp_key) for r in reqs]
        for i, r in enumerate(reqs):
            seen = self.idem.get(r.idempotency_key)
            if seen is not None:
                results[i] = _retried(seen, fps[i])
            else:
                todo.append(i)
        if not todo:
            return results
        t0 = time.perf_counter()
        # The gate runs before anything is kept, logged or embedded: in the gate pool for
        # batches (off this core), in process for a handful (a hop costs more than the scan).
        # Every stored free-text field is scanned (a key in ``object`` is as bad as one in the
        # text), and retrieval context too: it is indexed (as tokens) beside the memory.
        jobs = [(i, f, v) for i in todo for f, v in (("text", reqs[i].text), *((f, getattr(reqs[i], f))
                for f in R.SCANNED_FIELDS)) if v is not None]
        with_ctx = [i for i in todo if reqs[i].context]
        texts_in = [v for _, _, v in jobs] + [reqs[i].context for i in with_ctx]
        sources_in = [reqs[i].source for i, _, _ in jobs] + [reqs[i].source for i in with_ctx]
        if len(todo) >= self.cfg.runtime.gate_pool_min_batch:
            scanned = await self.gate_pool.scan(texts_in, sources_in)
        else:
            scanned = [self.gate.scan(t, s) for t, s in zip(texts_in, sources_in)]
        per_field: dict[int, dict] = {}
        for (i, f, _), rep in zip(jobs, scanned):
            per_field.setdefault(i, {})[f] = rep
        reports = {i: combine(per_field[i]) for i in todo}
        contexts = {i: r.text for i, r in zip(with_ctx, scanned[len(jobs):])}  # None when blocked
        stored = [i for i in todo if reports[i].text is not None]
        texts = [reports[i].text for i in stored]
        t1 = self._tick("gate", t0)
        vecs = await self.embed_pool.embed(texts) if texts else []
        vec_of = dict(zip(stored, vecs))
        self._tick("embed", t1)
        scopes = sorted({reqs[i].scope for i in todo})
        locks = [self._lock(s) for s in scopes]
        for lk in locks:
            await lk.acquire()
        try:
            # A retry that waited here for its original (a batch of this owner) finds it
            # committed: answer from there. Decided again, it would be refused by the ledger as
            # a duplicate only after the items behind it were decided against its write.
            again = {i for i in todo if reqs[i].idempotency_key in self.idem}
            if again:
                for i in again:
                    results[i] = _retried(self.idem[reqs[i].idempotency_key], fps[i])
                todo = [i for i in todo if i not in again]
                if not todo:
                    return results
            missing = [s for s in scopes if s not in self.states]
            if missing:
                await self._load(missing)
            t2 = time.perf_counter()
            staged = {s: _cow(await self._state(s)) for s in scopes}
            ledger_items, effects, refs = [], [], []
            chunk = self.cfg.runtime.ledger_chunk
            for n, i in enumerate(todo, 1):
                item, effect, results[i] = self._decide(reqs[i], reports[i], vec_of.get(i), staged, now_us,
                                                        contexts.get(i))
                item.fingerprint = fps[i]
                ledger_items.append(item)
                effects.append(effect)
                if n % chunk == 0 or n == len(todo):
                    # Pipelined: the ledger commits this chunk while the next one is decided.
                    refs.append(self.ledger.append.remote(ledger_items[len(ledger_items) - (n - 1) % chunk - 1 :]))
            t3 = self._tick("decide_and_seal", t2)
            parts = await asyncio.gather(*refs, return_exceptions=True)
            failed = next((p for p in parts if isinstance(p, BaseException)), None)
            if failed is not None:
                # Some chunks may have committed: rebuild these scopes from the ledger, then
                # report the failure (a retry with the same keys completes the rest).
                await self._replay(set(scopes))
                raise failed
            outcome = [r for part in parts for r in part]
            self._tick("ledger_wait", t3)
            dups = []
            for i, item, (status, payload), effect in zip(todo, ledger_items, outcome, effects):
                if status in ("dup", "conflict"):
                    results[i] = _CONFLICT if status == "conflict" else orjson.loads(payload)
                    dups.append(reqs[i].scope)
                else:
                    self.idem[item.idem_key] = (item.fingerprint, item.result)
                    self._idem_order.append((now_us, item.idem_key))
                    self._apply_effect(effect, payload)
            if dups:
                # A retry raced its original into the ledger: rebuild those scopes from the ledger.
                await self._replay(set(dups))
            for s in scopes:
                if s not in dups:
                    self.states[s] = staged[s]
            if GLOBAL_SCOPE in staged and self.is_global_owner:
                await self._announce_global()
        finally:
            for lk in locks:
                lk.release()
        # Keys older than the window (measured from this write's time) are forgotten.
        horizon = now_us - int(self.cfg.runtime.idempotency_window_s * 1_000_000)
        while self._idem_order and self._idem_order[0][0] < horizon:
            self.idem.pop(self._idem_order.popleft()[1], None)
        if len(self.pending) >= self.cfg.runtime.l2_flush_max_rows:
            asyncio.get_running_loop().create_task(self._flush())
        return results

    def _local_embedder(self):
        if self._embedder is None:
            self._embedder = get_embedder(self.cfg.embedder.name, self.cfg.embedder.dim)
        return self._embedder

    def _tick(self, stage: str, since: float) -> float:
        now = time.perf_counter()
        self.timing[stage] = self.timing.get(stage, 0.0) + (now - since)
        return now

    def _decide(self, req: R.WriteRequest, report, vec, staged: dict, now_us: int, context: str | None = None):
        """Decide one write against the staged state. Returns (ledger item, effect, result)."""
        summary = report.summary()
        if report.text is None:
            result = R.WriteResult(R.BLOCKED, None, None, req.scope, gate=summary).to_dict()
            return I.blocked_item(req.scope, req.actor, summary, req.idempotency_key, result, now_us), None, result
        gate_decision = report.decision
        if report.fields:  # the other fields as the gate left them (redacted where needed)
            req = dataclasses.replace(req, **report.fields)
        # pending: held for review, kept out of recall (status pending) until approved.
        rec = R.build_record(req, report.text, R.new_memory_id(), now_us,
                             status="pending" if gate_decision == R.PENDING else "active", context=context)
        rec["vector"] = vec
        if req.pool == "working" or gate_decision == R.WORKING_ONLY:
            # working_only: risky but useful (code under analysis, chit-chat): L1 only, never L2.
            rec["pool"] = "working"
            decision = {"accepted": R.ACCEPTED, "redacted": R.REDACTED}.get(gate_decision, gate_decision)
            result = R.WriteResult(decision, rec["memory_id"], 1, req.scope, "active", gate=summary).to_dict()
            return I.working_item(rec, req.actor, req.idempotency_key, result), ("working", rec), result
        st = staged[req.scope]
        d = decide(st, rec, now_us)
        for r in d.records:
            st.put(r)
        decision = d.decision
        if decision == R.ACCEPTED and gate_decision == "redacted":
            decision = R.REDACTED
        out = d.record
        result = R.WriteResult(decision, out["memory_id"], out["version"], req.scope, out["status"],
                               out.get("supersedes"), summary).to_dict()
        return I.decision_item(d, req.actor, req.idempotency_key, result, now_us), ("vault", d), result

    def _apply_effect(self, effect, seqs: list[int]) -> None:
        if effect is None:
            return
        kind, payload = effect
        if kind == "working":
            for mid in self.working.put(payload):
                log.debug("working pool full: %s pushed out", mid)
            return
        new_id = payload.record["memory_id"]
        for r in payload.records:
            self._track(r)
            self.pending[r["memory_id"]] = r
        if payload.decision != R.REFRESHED:
            self.created_here.add(new_id)
        self.pending_seqs.extend(seqs)

    # --- forget ----------------------------------------------------------------------------

    async def forget(self, memory_id: str, actor: str, reason: str, idem_key: str, now_us: int) -> dict | None:
        """Erase one memory this owner holds; None when it is not this owner's."""
        await self._ready()
        scope = self.where.get(memory_id)
        working = self.working.find(memory_id)
        if scope is None and working is not None:
            scope = working["scope"]
        if scope is None:
            rows = await asyncio.to_thread(self.l2.get, [memory_id])
            rows = [r for r in rows if r["status"] != "tombstoned"]
            if not rows or not self._mine(rows[0]["scope"]):
                return None
            scope = rows[0]["scope"]
        self.grants.check_write(actor, parse_scope(scope))
        async with self._lock(scope):
            result = {"decision": "forgotten", "memory_id": memory_id, "scope": scope}
            item = I.forget_item(scope, memory_id, actor, reason, idem_key, result, now_us)
            (status, payload), = await self.ledger.append.remote([item])
            if status == "dup":
                return orjson.loads(payload)
            st = self.states.get(scope)
            if st is not None:
                st = _cow(st)
                st.remove(memory_id)
                self.states[scope] = st
            self.working.remove(memory_id, scope)
            self.where.pop(memory_id, None)
            self.pending.pop(memory_id, None)
            self.created_here.discard(memory_id)
            self.pending_deletes.add(memory_id)
            self.pending_seqs.extend(payload)
        if scope == GLOBAL_SCOPE:
            await self._announce_global()
        await self._flush_soon()
        return result

    # --- review queue ----------------------------------------------------------------------
    # Writes the gate held as ``pending`` (instructions from untrusted sources) wait here:
    # stored with status pending (never recalled), approved or rejected by a reviewer.

    async def review_list(self, scopes: list[str], actor: str) -> list[dict]:
        await self._ready()
        for s in scopes:
            self._check_mine(s)
            self.grants.check_recall(actor, [parse_scope(s)])
        out = []
        for s in scopes:
            st = await self._state(s)
            out += [{k: r.get(k) for k in (*HIT_FIELDS, "status", "source_id")}
                    for r in st.records.values() if r["status"] == "pending"]
        return sorted(out, key=lambda r: r["created_at"])

    async def review_decide(self, memory_id: str, actor: str, reason: str, approve: bool, idem_key: str,
                            now_us: int) -> dict | None:
        """Approve (the write takes effect as if made now: versions and dedup apply) or reject
        (erased like a forget). None when the memory is not this owner's."""
        await self._ready()
        scope = self.where.get(memory_id)
        if scope is None:
            rows = await asyncio.to_thread(self.l2.get, [memory_id])
            if not rows or not self._mine(rows[0]["scope"]):
                return None
            scope = rows[0]["scope"]
        self.grants.check_write(actor, parse_scope(scope))
        if not approve:
            out = await self.forget(memory_id, actor, f"rejected in review: {reason}", idem_key, now_us)
            return out and dict(out, decision="rejected")
        async with self._lock(scope):
            st = _cow(await self._state(scope))
            rec = st.records.get(memory_id)
            if rec is None or rec["status"] != "pending":
                raise NotFound(f"no pending memory {memory_id} to review")
            st.remove(memory_id)
            d = decide(st, dict(rec, status="active", updated_at=now_us), now_us)
            if d.decision == R.REFRESHED:  # the same content is already active: keep that one
                d.changed.append(dict(rec, status="superseded", updated_at=now_us))
            result = {"decision": "approved", "outcome": d.decision, "memory_id": d.record["memory_id"],
                      "scope": scope, "version": d.record["version"]}
            item = I.review_item(d, memory_id, actor, reason, idem_key, result, now_us)
            (status, payload), = await self.ledger.append.remote([item])
            if status == "dup":
                return orjson.loads(payload)
            for r in d.records:
                st.put(r)
                self._track(r)
                self.pending[r["memory_id"]] = r
            self.pending_seqs.extend(payload)
            self.states[scope] = st
        return result

    # --- /global/ liveness ------------------------------------------------------------------
    # /global/ hashes onto one owner. The others only need to know whether it holds anything:
    # when it does not (often), a recall is answered by one owner alone. The global owner
    # tells every other owner before it acknowledges a change, so no recall misses a write.

    async def _announce_global(self) -> None:
        st = self.states.get(GLOBAL_SCOPE)
        live = bool(st and st.by_entity or st and st.by_hash)
        if live == self._announced_global:
            return
        others = [ray.get_actor(owner_name(i), namespace=self.namespace)
                  for i in range(self.num_owners) if i != self.index]
        await asyncio.gather(*[o.set_global_live.remote(live) for o in others])
        self._announced_global = live

    async def set_global_live(self, live: bool) -> None:
        self.global_live = bool(live)

    async def is_global_live(self) -> bool:
        await self._ready()
        st = await self._state(GLOBAL_SCOPE)
        return bool(st.by_entity or st.by_hash)

    # --- recall ----------------------------------------------------------------------------

    def _recall_core(self, req: dict) -> tuple[list[dict], list[str], bool]:
        """The hot part of a recall: (scored candidates, cold scopes still to query, whether
        /global/ must be asked of its owner). Reads only: it also runs on the compiled graph's
        thread, so it never mutates shared state (states are swapped whole, never edited)."""
        # The owner checks grants itself and serves what that check makes visible, never a
        # scope list it is handed: a caller that skips the facade gets no further.
        served = self._served(req)
        qvec, qtokens, now_us = req["qvec"], req["qtokens"], req["now"]
        weights = S.Weights.parse(req["weights"])
        cands: list[dict] = []
        cold, needs_global, hot = [], False, {}
        for s in served:
            if s == GLOBAL_SCOPE and not self.is_global_owner:
                needs_global = self.global_live
                continue
            st = self.states.get(s)
            if st is None:
                if s in self.l2_scopes:  # a scope with no rows anywhere needs no query
                    cold.append(s)
                continue
            hot[s] = st
            idx = self.matrices.get(s)
            if idx is None or idx.state is not st:
                idx = self.matrices[s] = HotIndex(st, self.cfg.embedder.dim)
            cands += idx.score(qvec, qtokens, now_us, weights, req["m"])
            working = self.working.peek(s, now_us)
            if working:  # a few items: BM25 over them alone, built per recall
                kidx = S.KeywordIndex()
                for r in working:
                    kidx.add(r["memory_id"], S.tokenize(r["content"]))
                bm = kidx.scores(qtokens)
                rows = [dict(r, cosine=float(np.dot(r["vector"], qvec)), bm25=bm.get(r["memory_id"], 0.0))
                        for r in working]
                cands += score_rows(rows, now_us, weights)
        cands.sort(key=lambda h: -h["score"])
        top = cands[: req["m"]]
        # Rivals: same entity key as a candidate, below the cut; conflict resolution needs them.
        top_ids = {h["memory_id"] for h in top}
        by_id = {h["memory_id"]: h for h in cands}
        top += [by_id[r["memory_id"]] for r in rivals_of(top, hot) if r["memory_id"] in by_id
                and r["memory_id"] not in top_ids]
        return top, cold, needs_global, list(hot)

    def _served(self, req: dict) -> list[str]:
        """The visible scopes (each allowed scope and its ancestors) this owner holds, computed
        from the grant check itself; /global/ stays in the list for the owners that must say
        whether to ask it."""
        visible = self.grants.check_recall(req["actor"], [parse_scope(s) for s in req["allowed"]])
        return [str(s) for s in visible if s == GLOBAL or self._mine(str(s))]

    def _cold(self, req: dict, cold: list[str]) -> list[dict]:
        rows = self.l2.hybrid_search(req["qvec"], req["qtokens"], cold, req["now"], req["m"])
        return score_rows(rows, req["now"], S.Weights.parse(req["weights"]))

    def _finish(self, hits: list[dict], cold_hits: list[dict], cold: list[str], req: dict, needs_global: bool,
                hot: list[str]) -> dict:
        hits = sorted(hits + cold_hits, key=lambda h: -h["score"])
        floor = req.get("min_score", self.cfg.recall.min_score)
        hits = [h for h in hits if h["score"] > floor]
        path = "hot" if not cold else ("cold" if not hot else "mixed")
        return {"hits": hits, "path": path, "cold_scopes": len(cold), "needs_global": needs_global}

    async def recall(self, req: dict) -> dict:
        """Scored candidates from the visible scopes this owner holds: the
        best ``m`` and their entity-key rivals. Threshold, conflicts and budget are applied by
        the caller over every owner's candidates."""
        await self._ready()
        hits, cold, needs_global, hot = self._recall_core(req)
        for s in hot:
            if s in self.states:
                self.states.move_to_end(s)
        cold_hits = await asyncio.to_thread(self._cold, req, cold) if cold else []
        return self._finish(hits, cold_hits, cold, req, needs_global, hot)

    def recall_compiled(self, req: dict) -> dict:
        """The same recall as a plain method, for a Ray compiled graph (``ray.dag``): no
        per-call task submission, about a fifth of a plain actor call's round trip. Runs on the
        graph's own thread."""
        if self._started is None or not self._started.done():
            return {"not_ready": True}
        try:
            hits, cold, needs_global, hot = self._recall_core(req)
            cold_hits = self._cold(req, cold) if cold else []
            return self._finish(hits, cold_hits, cold, req, needs_global, hot)
        except MemactorsError as exc:  # a compiled graph cannot carry our exception types across
            return {"error": type(exc).__name__, "message": str(exc)}

    # --- L2 flush --------------------------------------------------------------------------

    async def _flush_soon(self) -> None:
        """Flush now if possible (after an erasure, after a replay). The changes are already
        committed to the ledger, so a failure here only leaves it to the flush loop."""
        try:
            await self._flush()
        except Exception:  # noqa: BLE001 - pending changes are kept; the loop retries
            log.exception("L2 flush after an erasure failed; the flush loop will retry")

    async def _flush_loop(self) -> None:
        while True:
            await asyncio.sleep(self.cfg.runtime.l2_flush_interval_s)
            try:
                await self._flush()
            except Exception:  # noqa: BLE001 - keep flushing; the ledger still holds everything
                log.exception("L2 flush failed; will retry")

    async def _flush(self, force_index: bool = False) -> int:
        async with self._flush_lock:
            if not (self.pending or self.pending_deletes or self.pending_seqs):
                return 0
            recs, self.pending = list(self.pending.values()), {}
            dels, self.pending_deletes = list(self.pending_deletes), set()
            seqs, self.pending_seqs = self.pending_seqs, []
            new = [r for r in recs if r["memory_id"] in self.created_here]
            changed = [r for r in recs if r["memory_id"] not in self.created_here]
            t0 = time.perf_counter()
            try:
                await asyncio.to_thread(self.l2.apply, new, changed, dels)
            except Exception:
                # Part of the batch may have landed: retry the rows as upserts (idempotent), never
                # as a second append.
                self.created_here.difference_update(r["memory_id"] for r in new)
                for r in recs:
                    self.pending.setdefault(r["memory_id"], r)
                self.pending_deletes.update(dels)
                self.pending_seqs = seqs + self.pending_seqs
                raise
            self._tick("l2_flush", t0)
            self.created_here.difference_update(r["memory_id"] for r in new)
            # Upserted rows count too: a replay sends its writes as upserts, and a scope missing
            # here is never read back from Lance (its state would restart empty).
            self.l2_scopes.update(r["scope"] for r in recs)
            await self.ledger.mark_applied.remote(seqs)
            self._flushes += 1
            self._unindexed += len(new)
            if self._unindexed >= self.cfg.runtime.l2_reindex_rows or (force_index and self._unindexed):
                try:  # an optimisation: rows outside the index are still found, only slower
                    await asyncio.to_thread(self.l2.reindex)
                    self._unindexed = 0
                except Exception:  # noqa: BLE001 - another owner's commit won the race; next flush retries
                    log.warning("reindex deferred: %s", "concurrent commit", exc_info=True)
            if self._flushes % 200 == 0:  # compaction: many small appends make many fragments
                asyncio.get_running_loop().create_task(asyncio.to_thread(self.l2.optimize))
            self._evict()
            return len(recs) + len(dels)

    def _evict(self) -> None:
        limit = self.cfg.runtime.hot_cache_max_memories
        total = sum(len(st.records) for st in self.states.values())
        dirty = {r["scope"] for r in self.pending.values()}
        for s in list(self.states):
            if total <= limit:
                break
            if s in dirty or self._lock(s).locked():
                continue
            st = self.states.pop(s)
            self.matrices.pop(s, None)
            total -= len(st.records)
            for mid in st.records:
                self.where.pop(mid, None)

    async def flush(self) -> int:
        """Write everything committed so far to Lance now (tests, benchmarks, shutdown)."""
        await self._ready()
        n = await self._flush(force_index=True)
        await self.ledger.flush.remote()
        return n

    async def check_l2(self) -> dict:
        """Compare the L2 rows of this owner's scopes with what the ledger's applied events say
        they must be: rows missing (deleted behind our back) and rows the ledger does not know
        (added behind our back). Consistent under concurrent writes: no flush of this owner
        runs while it compares, and events not yet applied are in neither side."""
        await self._ready()
        await self._flush()
        async with self._flush_lock:
            expected = await self.ledger.l2_expected.remote()
            have = await asyncio.to_thread(self.l2.ids_and_scopes)

        def mine(tbl) -> set[str]:
            ids, scopes = tbl.column("memory_id").to_pylist(), tbl.column("scope").to_pylist()
            keep = {s for s in set(scopes) if self._mine(s)}
            return {m for m, s in zip(ids, scopes) if s in keep}

        want, got = mine(expected), mine(have)
        missing, unknown = sorted(want - got), sorted(got - want)
        return {"owner": self.index, "rows": len(got), "missing": len(missing), "unknown": len(unknown),
                "example": (missing or unknown or [None])[0]}

    async def drop_hot(self) -> None:
        """Flush, then empty the hot index: every scope is served from Lance until warmed."""
        await self.flush()
        self.states.clear()
        self.matrices.clear()
        self.where.clear()

    async def stats(self) -> dict:
        await self._ready()
        return {
            "index": self.index,
            "hot_scopes": len(self.states),
            "hot_memories": sum(len(st.records) for st in self.states.values()),
            "working_items": len(self.working),
            "pending_l2": len(self.pending) + len(self.pending_deletes),
            "inflight": self.inflight,
            "timing_s": {k: round(v, 3) for k, v in self.timing.items()},
        }

    def pid(self) -> int:
        return os.getpid()
