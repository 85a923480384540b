"""``rt.batch(ops)`` and ``await rt.abatch(ops)``: the typed ops of ``memactors.ops`` in one
call (``Runtime`` inherits ``BatchAPI``).

Async first. ``abatch`` checks its ops in the caller (validation, identifiers, grants: a bad op
refuses its own call before anything is sent, unless ``return_errors``), then hands them to the
coalescer of the running event loop: every ``abatch`` awaiting on that loop in the same turn
(many agents' coroutines, LangGraph's ``AsyncBatchedBaseStore`` shape) is sent together, one
call per owner for the writes, one per owner for the recalls, one per owner for the forgets,
and the calls are awaited there (Ray object refs or the process host's futures), no thread per
call. ``batch`` is a thin face over it: it runs ``abatch`` on the runtime's one background loop,
so concurrent threads' batches coalesce too.
"""

from __future__ import annotations

import asyncio
import threading
import time
import weakref

from ..core import errors
from ..core import records as R
from ..core import validate as V
from ..core.errors import AccessDenied, BackPressure, BadArguments, InvalidRecord, MemactorsError, NotFound, PartialWrite
from ..core.ops import ForgetOp
from ..core.scopes import parse_scope
from ..core.visibility import purpose_rule
from ..engine.naming import owner_index, owner_of_memory
from .. import ops as O
from .results import ForgetResult, GrantResult, Memory
from .write_batches import PartOrders, batch_max


class BatchAPI:
    _loop = None  # the background loop behind the sync face (started on first use)

    # --- the two entry points -----------------------------------------------------------------

    def batch(self, ops: list, *, return_errors: bool = False) -> list:
        """The ops run in one batch; one typed result per op, in order (see ``memactors.ops``).
        The first refused op raises its typed error, unless ``return_errors``: then each
        refused op gets its error in place of its result and the others run."""
        return_errors = V.flag(return_errors, "return_errors")
        loop = self._batch_loop()
        if _running_loop() is loop:
            raise InvalidRecord("batch() was called on the runtime's own event loop: await abatch() there")
        if isinstance(ops, (list, tuple)) and ops and all(type(op) is O.Recall and op.at is None for op in ops):
            return self._recalls_here(ops, return_errors)
        return asyncio.run_coroutine_threadsafe(self.abatch(ops, return_errors=return_errors), loop).result()

    def _recalls_here(self, ops: list, return_errors: bool) -> list:
        """A batch of recalls alone, served in the caller's thread as ``rt.recall`` is (one
        recall: the owner's direct path; several: one call per owner), not through
        the background loop: nothing there to coalesce with that a read needs."""
        self._check_open()
        units = self._check_ops(ops)
        if not return_errors:
            _raise_first(units, ran=False)
        t0 = time.time_ns()
        plans = [u if isinstance(u, MemactorsError) else u[1] for u in units]
        live = [p for p in plans if not isinstance(p, MemactorsError)]
        if len(live) == 1:
            plan = live[0]
            try:
                res = self._serve(plan)
            except MemactorsError as exc:
                res = exc
            out = [res if p is plan else p for p in plans]
        else:
            out = self._run_plans(plans)
        self._observe(units, out, t0)
        if not return_errors:
            _raise_first(out)
        return out

    async def abatch(self, ops: list, *, return_errors: bool = False) -> list:
        """``batch`` awaited: concurrent calls on one event loop are sent together."""
        self._check_open()
        return_errors = V.flag(return_errors, "return_errors")
        return await self._arun(self._check_ops(ops), return_errors)

    async def _arun(self, units: list, return_errors: bool) -> list:
        """Checked units (or their errors) sent with the loop's other calls."""
        if not return_errors:
            _raise_first(units, ran=False)
        out = await _coalescer(self).run(units)
        if not return_errors:
            _raise_unconfirmed(out)
            _raise_first(out)
        return out

    # --- checking, in the caller -------------------------------------------------------------

    def _check_ops(self, ops) -> list:
        """Per op: a checked unit (kind, payload) or its typed error, naming its position."""
        if not isinstance(ops, (list, tuple)):
            raise InvalidRecord("batch takes a list of ops (memactors.ops)")
        out: list = [None] * len(ops)
        writes = [i for i, op in enumerate(ops) if isinstance(op, R.WriteRequest)]
        if writes:
            reqs = self._checked_writes([ops[i] for i in writes], True)
            for i, r in zip(writes, reqs):
                out[i] = _at(i, r) if isinstance(r, MemactorsError) else ("write", r)
        for i, op in enumerate(ops):
            if out[i] is not None:
                continue
            if isinstance(op, MemactorsError):  # refused by a caller's own check (an async twin): kept in place
                out[i] = op
                continue
            try:
                out[i] = self._check_op(op)
            except MemactorsError as exc:
                out[i] = _at(i, exc)
        return out

    def _check_op(self, op) -> tuple:
        ids = self._ids
        if isinstance(op, O.Recall):
            plan = self._plan_recall(op.query, op.actor, op.task_id, op.scopes, op.purpose, op.top_k,
                                     op.token_budget, op.threshold, op.weights, "pull" if op.at is None else "as_of",
                                     op.where)
            return ("recall", plan) if op.at is None else ("recall_at", (plan, op.at))
        if isinstance(op, O.Lookup):
            op.validate()
            actor = ids.id(op.actor, "actor")
            scope = str(parse_scope(ids.scope(op.scope))) if op.scope is not None else None
            if scope is None and op.memory_ids is None:
                raise InvalidRecord("a lookup names its scope (only a lookup by memory_ids may leave it out)")
            if scope is not None:
                self._check_read(actor, [parse_scope(scope)])
            purpose = ids.purpose(op.purpose, self.gate.redact_all) if op.purpose is not None else None
            purpose_rule(self.config.recall.purposes, purpose)  # refused here already when unlisted
            kw = {"purpose": purpose}
            if op.memory_ids is not None:
                kw["memory_ids"] = [R.check_memory_id(m) for m in op.memory_ids]
            elif op.facts is not None:
                kw["entity_keys"] = [R.entity_key(s, p) for s, p in op.facts]
            elif op.subject_prefix is not None:
                kw["subject_prefix"] = op.subject_prefix
            if op.offset:
                kw["offset"] = op.offset
            return ("lookup", (actor, scope, kw, op.limit))
        if isinstance(op, O.Forget):
            op.validate()
            fop = ForgetOp(op.memory_id, ids.id(op.actor, "actor"), op.reason,
                           op.idempotency_key or self._new_key(), all_versions=op.erase == "fact")
            return ("forget", fop.validate())
        if isinstance(op, O.Grant):
            grant = {"actor": op.actor, "scope": op.scope, "read": op.read, "write": op.write, "by": op.by,
                     "clearance": op.clearance}
            grant = grant if op.reason is None else dict(grant, reason=op.reason)
            self._grant_op(grant)  # refused here, before anything of the batch is sent
            return ("grant", grant)
        raise InvalidRecord(f"not an op of memactors.ops: {type(op).__name__}")

    # --- running, on the loop -----------------------------------------------------------------

    async def _execute(self, units: list) -> list:
        """Checked units of many calls: each kind sent in one call per owner, all at once."""
        out: list = list(units)  # errors stay in place
        by_kind: dict[str, list[int]] = {}
        for i, u in enumerate(units):
            if not isinstance(u, MemactorsError):
                by_kind.setdefault(u[0], []).append(i)
        now = self.clock.now_us()
        t0 = time.time_ns()
        jobs = []
        for kind, idx in by_kind.items():
            jobs.append(_guard(getattr(self, f"_a_{kind}")([units[i][1] for i in idx], now), idx, out))
        await asyncio.gather(*jobs)
        self._observe(units, out, t0)
        return out

    def _observe(self, units: list, out: list, t0: int) -> None:
        for observe in self.__dict__.get("_observers", ()):  # e.g. OpenTelemetry (memactors.integrations.otel)
            observe(units, out, t0, time.time_ns())

    def _observed(self, kind: str, payload, call, shown=lambda r: r):
        """``call()``'s result, its op shown to the observers as a batch's would be (a plain
        verb's own path: ``rt.recall``, ``rt.forget``); ``shown``: the result as they read it."""
        t0 = time.time_ns()
        try:
            res = call()
        except MemactorsError as exc:
            self._observe([(kind, payload)], [exc], t0)
            raise
        self._observe([(kind, payload)], [shown(res)], t0)
        return res

    def observe(self, fn) -> None:
        """Call ``fn(units, results, start_ns, end_ns)`` after each batch is sent (checked ops as
        (kind, payload) or their errors, and the results in the same order). Observers see ids,
        never content unless they read it: ``memactors.integrations.otel`` reads ids only."""
        if not callable(fn):  # refused now, not by the next write's call of it
            raise BadArguments(f"observe takes a function fn(units, results, start_ns, end_ns), not {V.got(fn)}")
        self.__dict__.setdefault("_observers", []).append(fn)

    async def _a_write(self, reqs: list, now: int) -> list:
        rc = self.config.runtime
        size = batch_max(rc)
        window = max(1, rc.owner_queue_max // size - 1)  # our own calls never overrun an owner's queue
        n = len(self._owners)
        by_owner: dict[int, list[int]] = {}
        for i, r in enumerate(reqs):
            by_owner.setdefault(owner_index(r.scope_obj, n), []).append(i)
        out: list = [None] * len(reqs)

        # an owner's parts decided in the caller's order (``engine.turns``)
        orders = PartOrders({oi: -(-len(idx) // size) for oi, idx in by_owner.items()}, self._calls, self._owners, now)

        async def part(oi: int, idx: list[int], gate: asyncio.Semaphore, pos: int) -> None:
            async with gate:
                part_reqs = [reqs[i] for i in idx]
                try:
                    res = await self._aretry(lambda: self._host.send_writes(self._owners[oi], part_reqs, now,
                                                                            orders.tag(oi, pos)))
                except MemactorsError as exc:
                    orders.release(oi, pos)
                    # This call's writes were not confirmed; the other calls' results stand (as
                    # write_many's PartialWrite): each says so, with itself and its key to resubmit.
                    for i in idx:
                        out[i] = PartialWrite(f"not confirmed ({type(exc).__name__}: {exc})", results=[None],
                                              items=[R.request_fields(reqs[i])], failed=[0])
                    return
                orders.ended(oi, pos)
            for i, d in zip(idx, res):
                out[i] = errors.decode(d) if errors.is_encoded(d) else R.WriteResult(**d)

        jobs = []
        for oi, idx in by_owner.items():
            gate = asyncio.Semaphore(window)
            jobs += [part(oi, idx[k:k + size], gate, k // size) for k in range(0, len(idx), size)]
        _count(self, "owner_calls", len(jobs))
        await asyncio.gather(*jobs)
        self._alerts.writes(reqs, out)  # blocked writes, held injections, as write_many reports them
        return out

    async def _a_recall(self, plans: list, now: int) -> list:
        by_owner = self._route_plans(plans)
        refs = {oi: self._host.send_recalls(self._owners[oi], [plans[i].owner_req for i in idx])
                for oi, idx in by_owner.items()}
        _count(self, "owner_calls", len(refs))
        answers = dict(zip(refs, await asyncio.gather(*[self._calls.aget(r) for r in refs.values()])))
        return self._finish_plans(plans, by_owner, answers)

    async def _a_recall_at(self, items: list, now: int) -> list:
        from . import history

        # A recall in the past folds the ledger: rare, heavy, off the loop. Each one's error is its own.
        return [await _kept(asyncio.to_thread(lambda p=p, at=at: history.recall_at(self, p, at)))
                for p, at in items]

    async def _a_lookup(self, items: list, now: int) -> list:
        n = len(self._owners)

        async def one(actor: str, scope: str | None, kw: dict, limit: int | None) -> list:
            if scope is None:  # by id alone: the ledger's index names each one's scope
                where = await self._calls.aget(self._ledger.scopes_of.remote(kw["memory_ids"]))
                found = []
                for sc in sorted({s for s in where.values() if s is not None}):
                    try:
                        self._check_read(actor, [parse_scope(sc)])
                    except AccessDenied:  # one who cannot read its scope learns nothing of the id: as never written
                        continue
                    found += await one(actor, sc, {"memory_ids": [m for m, s in where.items() if s == sc],
                                                   "purpose": kw.get("purpose")}, None)
                off = kw.get("offset", 0)
                return found[off:off + limit] if limit is not None else found[off:]
            try:
                self._check_read(actor, [parse_scope(scope)])
            except AccessDenied:
                raise AccessDenied("a memory asked for lies beyond the actor's read grants") from None
            owner = self._owners[owner_index(parse_scope(scope), n)]
            rows = await self._calls.aget(owner.live.remote([scope], actor, now, limit=limit, **kw))
            return [Memory.of(r) for r in rows]

        _count(self, "owner_calls", len(items))
        return await asyncio.gather(*[_kept(one(*it)) for it in items])

    async def _a_forget(self, fops: list, now: int) -> list:
        n = len(self._owners)
        by_owner: dict[int, list[int]] = {}
        for i, op in enumerate(fops):
            by_owner.setdefault(owner_of_memory(op.memory_id, n), []).append(i)
        out: list = [None] * len(fops)

        async def owner(oi: int, idx: list[int]) -> None:
            res = await self._aretry(lambda: self._owners[oi].submit.remote([fops[i] for i in idx], now))
            for i, d in zip(idx, res):
                if isinstance(d, dict) and d.get("not_here"):  # an id from before tenant tags: the ledger routes it
                    d = await _kept(asyncio.to_thread(self._by_memory, fops[i]))
                out[i] = d if isinstance(d, MemactorsError) else (
                    errors.decode(d) if errors.is_encoded(d) else ForgetResult.of(d))

        _count(self, "owner_calls", len(by_owner))
        await asyncio.gather(*[owner(oi, idx) for oi, idx in by_owner.items()])
        return out

    async def _a_grant(self, grants: list, now: int) -> list:
        # Grants change every owner's table and the facade's: the one grant path, off the loop.
        try:
            done = await asyncio.to_thread(self.grant_many, grants)
        except MemactorsError:
            if len(grants) == 1:
                raise
            # one grant's failure is its own (the ops of other calls coalesced here too): each alone
            return [r[0] if isinstance(r, list) else r for r in [await _kept(self._a_grant([g], now)) for g in grants]]
        return [GrantResult(g["actor"], g["scope"], g["read"], g["write"], g.get("clearance") or "confidential")
                for g in done]

    async def _aretry(self, make_ref):
        """An owner call; back pressure and a restarting owner waited out (same ops, same keys)
        until the call timeout."""
        deadline = time.monotonic() + self.config.runtime.call_timeout_s
        delay = 0.05
        while True:
            try:
                return await self._calls.aget(make_ref())
            except (BackPressure, errors.OwnerUnavailable):
                if time.monotonic() > deadline:
                    raise
                await asyncio.sleep(delay)
                delay = min(delay * 2, 1.0)

    # --- the loop behind the sync face ------------------------------------------------------------

    def _batch_loop(self):
        if self._loop is None:
            with _START:
                if self._loop is None:
                    loop = asyncio.new_event_loop()
                    threading.Thread(target=loop.run_forever, name="memactors-batch", daemon=True).start()
                    self._loop = loop
        return self._loop

    def _stop_batch_loop(self) -> None:
        loop, self._loop = self._loop, None
        if loop is not None:
            loop.call_soon_threadsafe(loop.stop)


_START = threading.Lock()


def _running_loop():
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


def _at(i: int, exc: MemactorsError) -> MemactorsError:
    msg = str(exc)
    if msg.startswith(("op at position", "write at position")):
        return exc
    out = type(exc)(f"op at position {i}: {msg}")
    out.__dict__.update(exc.__dict__)  # what it carries (a Blocked's gate) goes with it
    return out


def _raise_unconfirmed(out: list) -> None:
    """Writes of the batch that were not confirmed (their owner call failed) raise one
    ``PartialWrite`` as ``write_many``'s does: what the others did, and those writes to resubmit."""
    failed = [i for i, x in enumerate(out) if isinstance(x, PartialWrite)]
    if failed:
        done = sum(not isinstance(x, MemactorsError) for x in out)
        raise PartialWrite(
            f"{len(failed)} of {len(out)} ops were not confirmed (first at position {failed[0]}: {out[failed[0]]}); "
            f"{done} were done. Resubmit err.items (they keep their idempotency keys): nothing is written twice.",
            results=[None if isinstance(x, MemactorsError) else x for x in out],
            items=[out[i].items[0] for i in failed], failed=failed)


def _raise_first(items: list, ran: bool = True) -> None:
    """The first refused op raises, naming its position (an owner's refusal, an idempotency
    conflict say, names none); ``err.results`` what the others did (None each when refused
    before anything was sent, ``ran=False``), ``err.failed`` the refused positions (as
    ``write_many``'s item errors)."""
    failed = [i for i, x in enumerate(items) if isinstance(x, MemactorsError)]
    if failed:
        bad = _at(failed[0], items[failed[0]]) if len(items) > 1 else items[0]  # awrite says what write says
        bad.results = [None if isinstance(x, MemactorsError) or not ran else x for x in items]
        bad.failed = failed
        raise bad


async def _kept(coro):
    """A coroutine's result, or the typed error it raised."""
    try:
        return await coro
    except MemactorsError as exc:
        return exc


async def _guard(coro, idx: list[int], out: list) -> None:
    """One kind's results into ``out``; a failure of the whole kind is each of its ops' error."""
    try:
        res = await coro
    except MemactorsError as exc:
        res = [exc] * len(idx)
    for i, r in zip(idx, res):
        out[i] = r


def _count(rt, name: str, k: int) -> None:
    stats = rt.__dict__.setdefault("_batch_stats", {"flushes": 0, "units": 0, "owner_calls": 0})
    stats[name] += k


class _Coalescer:
    """The ops of every ``abatch`` awaiting on one loop in the same turn, sent as one batch."""

    def __init__(self, rt) -> None:
        self._rt = weakref.ref(rt)
        self._pending: list[tuple[list, asyncio.Future]] = []

    async def run(self, units: list) -> list:
        fut = asyncio.get_running_loop().create_future()
        if not self._pending:
            asyncio.get_running_loop().call_soon(self._flush)  # after every coroutine ready this turn
        self._pending.append((units, fut))
        return await fut

    def _flush(self) -> None:
        calls, self._pending = self._pending, []
        asyncio.ensure_future(self._send(calls))

    async def _send(self, calls: list) -> None:
        rt = self._rt()
        flat = [u for units, _ in calls for u in units]
        try:
            if rt is None:
                raise NotFound("the runtime is gone")
            _count(rt, "flushes", 1)
            _count(rt, "units", len(flat))
            out = await rt._execute(flat)
        except BaseException as exc:  # noqa: BLE001 - every waiting call hears it
            for _, fut in calls:
                if not fut.done():
                    fut.set_exception(exc)
            return
        k = 0
        for units, fut in calls:
            if not fut.done():
                fut.set_result(out[k:k + len(units)])
            k += len(units)


_COALESCERS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _coalescer(rt) -> _Coalescer:
    per_loop = _COALESCERS.setdefault(asyncio.get_running_loop(), weakref.WeakKeyDictionary())
    c = per_loop.get(rt)
    if c is None:
        c = per_loop[rt] = _Coalescer(rt)
    return c
