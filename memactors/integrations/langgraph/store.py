"""``MemactorsStore``: LangGraph's ``BaseStore`` over a memactors runtime (DESIGN section 14).

A store is bound to one actor (its grants are the store's reach). A namespace maps to a scope
through ``scope_of`` (default: everything under the store's ``root`` scope, the namespace kept
as the record's subject); ``(namespace, key)`` is the entity key, so a second ``put`` is a new
version and the old one superseded; ``get`` reads the live version; ``delete`` is erasure;
``search`` with a query is a governed recall (logged as evidence), scored and ordered as
LangGraph's backends score (``scores.FieldScores``), and without one a read of the live items;
``put(ttl=)`` is a hard TTL in minutes (expired items are never returned, swept by
``sweep_ttl``). Every op goes through ``rt.abatch``: grants, the gate, the ledger apply, and
concurrent stores' ops coalesce per owner.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from langgraph.store.base import (BaseStore, GetOp, IndexConfig, Item, ListNamespacesOp, Op, PutOp, Result,
                                  SearchItem, SearchOp, TTLConfig, validate_op_namespace)

from ... import ops as O
from ...core import validate as V
from ...core.scopes import parse_scope
from ...core.errors import Blocked, InvalidRecord, MemactorsError
from ...core.records import BLOCKED
from ...core.scoring import Weights
from . import mapping as M
from .scores import FieldScores

# A query search considers at most this many items, the most similar to the query (the recall's
# top_k cap): it returns at most that many, and a filtered or narrowed one finds only what passes
# among them. Such a search starts with a window of NARROW_WINDOW (or 4 x offset+limit) and
# widens it 4-fold until offset+limit items pass or the scope has no more.
MAX_SEARCH_WINDOW = 1000
NARROW_WINDOW = 100
SCORED_WINDOW = 50  # candidates a query search orders by similarity at least, when an item has several texts
# A query search's recall ranks by similarity alone, as LangGraph's stores do (the governance is
# the recall's: grants, scopes, TTL, evidence). The two tiny weights only keep an item of no
# positive similarity above the 0.0 threshold (LangGraph returns it, with its negative score);
# every item of the store has the same importance, so they order nothing else.
BY_SIMILARITY = Weights(vector=1.0, keyword=0.0, recency=1e-6, importance=1e-6)
# LangGraph's last put wins: every put is the store's own voice at the cap of confidence, and the
# same voice's newest word is the fact's new version. A read's refresh is an update of the very
# version it read (``replaces``): it renews an unchanged item, and when a put landed since it read
# (a race of threads) there is no such live version and the refresh is dropped, never writing the
# older value back over it.
PUT_CONFIDENCE = 1.0
# put(ttl=0): expired as it is written, as LangGraph's stores have it (the shortest TTL there is
# here: a microsecond)
AT_ONCE_DAYS = 1 / 86_400_000_000


def _blocked_message(positions: list[int], n_puts: int, n_ops: int, reads: int) -> str:
    """What a batch with blocked puts did: which were blocked, that the others were applied
    (``n_puts``: the puts and deletes applied, an item's last in the batch; ``reads``: the gets,
    searches and listings, not run)."""
    if n_ops == 1:
        return "the write gate blocked this value (err.gate names the rules); nothing was stored"
    where = ", ".join(map(str, positions))
    them = "the put at position" if len(positions) == 1 else "the puts at positions"
    others = n_puts - len(positions)
    done = (f"the batch's other {others} put{'' if others == 1 else 's'} (deletes included) "
            f"{'was' if others == 1 else 'were'} applied and stand" if others else "the batch has no other put")
    return (f"the write gate blocked {them} {where} of the batch (err.gate names the first one's rules): "
            f"{'it was' if len(positions) == 1 else 'they were'} not stored; {done}"
            + (f"; its {reads} read{'' if reads == 1 else 's'} did not run" if reads else ""))


class MemactorsStore(BaseStore):
    supports_ttl = True

    def __init__(self, rt, *, actor: str, root: str, scopes: list[str] | None = None,
                 scope_of: Callable[[tuple[str, ...]], str] | None = None, task_id: str = "langgraph",
                 purpose: str = "store", source: str = "agent_inferred", index: IndexConfig | None = None,
                 ttl: TTLConfig | None = None, owns_runtime: bool = False) -> None:
        """``rt``: a runtime (``memactors.connect``); ``actor`` needs read and write grants on
        ``root`` (and on every scope ``scope_of`` returns; ``scopes``: every scope the store
        reads, default ``[root]``). ``index``: LangGraph's ``IndexConfig``; its ``fields`` pick
        the text indexed beside the value (the runtime's embedder embeds; see ``connect`` for a
        store with its own). ``ttl``: LangGraph's ``TTLConfig`` (default_ttl in minutes,
        refresh_on_read, sweep_interval_minutes)."""
        self._rt = rt
        self._agent = rt.agent(actor, task_id=task_id, purpose=purpose, scopes=list(scopes or [root]), home=root)
        self._scope_of = scope_of or (lambda ns: self._agent.home)
        self._mapped = scope_of is not None  # namespaces live in scopes of their own
        self._source = source
        self.index_config = index
        self.embeddings = (index or {}).get("embed")
        self.ttl_config = ttl
        self._fields = M.index_fields(index)
        self._scores = FieldScores(rt, index)
        # One text per item: its record's vector is of that text, so the recall's order is the
        # score's and a page's window is the page; with several, a wider window is re-ordered.
        self._one_text = M.one_text(self._fields)
        self._owns = owns_runtime
        self._sweeper: tuple[threading.Thread, threading.Event] | None = None

    @classmethod
    def connect(cls, path: str = "memory://", *, actor: str, root: str, index: IndexConfig | None = None,
                ttl: TTLConfig | None = None, config: dict | None = None, clock=None, **kw: Any) -> MemactorsStore:
        """A store on its own runtime (closed with the store): ``path`` as for
        ``memactors.connect`` (default ``memory://``), ``actor`` granted read and write on
        ``root``. With ``index["embed"]`` (LangChain ``Embeddings`` or a function of a list of
        texts) that embedder is the runtime's (process host only: it lives in this process)."""
        import memactors

        from .embed import embedder_config

        cfg = dict(config or {})
        if index and index.get("embed") is not None:
            cfg["embedder"] = embedder_config(index["embed"], index["dims"])
        rt = memactors.connect(path, config=cfg or None, clock=clock, host="process" if index else None)
        try:
            rt.grant(actor, root, read=True, write=True, by="langgraph-store")
            return cls(rt, actor=actor, root=root, index=index, ttl=ttl, owns_runtime=True, **kw)
        except BaseException:
            rt.close()
            raise

    # --- BaseStore ----------------------------------------------------------------------------

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        ops = M.checked_ops(ops)
        if ops and all(isinstance(op, SearchOp) and op.query for op in ops):
            return self._searches(ops)
        return asyncio.run_coroutine_threadsafe(self._run(ops), self._rt._batch_loop()).result()

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        return await self._run(M.checked_ops(ops))

    # --- the mapping, as phases of rt.abatch ---------------------------------------------------

    async def _run(self, ops: list) -> list:
        for op in ops:
            validate_op_namespace(op)
        results: list = [None] * len(ops)
        puts: dict[tuple, int] = {}
        for i, op in enumerate(ops):
            if isinstance(op, PutOp):
                puts[(op.namespace, op.key)] = i  # the last put of an item in a batch wins
        await self._apply_puts([(i, ops[i]) for i in puts.values()], len(ops),
                               sum(not isinstance(op, PutOp) for op in ops))
        reads = [(i, op) for i, op in enumerate(ops) if not isinstance(op, PutOp)]
        if reads:
            refresh: list = []
            scopes = self._agent.scopes
            if self._needs_mapped([op for _, op in reads]):
                scopes = self._with_mapped([await self._rt._calls.aget(r) for r in self._mapped_refs()])  # noqa: SLF001
            tops: dict[int, int] = {}  # a narrowed query search's widened window, by position
            while reads:
                asks = [self._read_ops(op, scopes, tops.get(i)) for i, op in reads]
                reads = self._fill(results, reads, asks, await self._call([q for a in asks for q in a]), refresh, tops)
            if refresh:  # reading restarts the TTL of the items read: each written again (a refresh)
                await self._call(refresh, return_errors=True)
        return results

    def _searches(self, ops: list) -> list:
        """Query searches alone (a sync ``search``): recalls, which ``rt.batch`` serves in this
        thread as ``rt.recall`` is, without the hop to the background loop."""
        for op in ops:
            validate_op_namespace(op)
        results: list = [None] * len(ops)
        refresh: list = []
        reads = list(enumerate(ops))
        scopes = self._agent.scopes
        if self._needs_mapped(ops):
            scopes = self._with_mapped(self._rt._calls.get(self._mapped_refs()))  # noqa: SLF001
        tops: dict[int, int] = {}
        while reads:
            asks = [self._read_ops(op, scopes, tops.get(i)) for i, op in reads]
            reads = self._fill(results, reads, asks, self._rt.batch([q for a in asks for q in a]), refresh, tops)
        if refresh:
            self._rt.batch(refresh, return_errors=True)
        return results

    def _fill(self, results: list, reads: list, asks: list, done: list, refresh: list, tops: dict) -> list:
        """Each read's result from its share of ``done`` (the answers to its ``asks``). Returns
        the narrowed query searches to ask again with a wider window (``tops``: by position)."""
        k, again = 0, []
        for (i, op), a in zip(reads, asks):
            wider = self._wider(op, a, done[k:k + len(a)])
            if wider is not None:
                tops[i] = wider
                again.append((i, op))
            else:
                results[i] = self._read_result(op, done[k:k + len(a)], refresh)
            k += len(a)
        return again

    def _wider(self, op, asked: list, done: list) -> int | None:
        """A wider window for a narrowed query search whose window held fewer than offset+limit
        items that pass its filter and prefix, when the recall filled it (the scope may hold
        more) and it is below MAX_SEARCH_WINDOW; else None."""
        if not (isinstance(op, SearchOp) and op.query and self._narrow(op)):
            return None
        top_k = asked[0].top_k
        if top_k >= MAX_SEARCH_WINDOW or len(done[0].hits) < top_k:
            return None
        if sum(1 for _ in self._kept(op, done[0].hits)) >= op.offset + op.limit:
            return None
        return min(MAX_SEARCH_WINDOW, 4 * top_k)

    def _narrow(self, op: SearchOp) -> bool:
        """Whether a query search keeps only some of its recall's hits (a filter, or a namespace
        prefix its scope does not narrow to)."""
        return bool(op.filter) or (bool(op.namespace_prefix) and self._prefix_scope(op.namespace_prefix) is None)

    @staticmethod
    def _kept(op: SearchOp, rows):
        """(row, item) of the rows under the search's namespace prefix that pass its filter."""
        prefix, flt = tuple(op.namespace_prefix), op.filter
        n = len(prefix)
        for m in rows:
            d = M.parse(m.content)
            if d is not None and d["namespace"][:n] == prefix and (not flt or M.passes(d["value"], flt)):
                yield m, d

    async def _call(self, ops: list, *, return_errors: bool = False) -> list:
        return await self._rt.abatch(ops, return_errors=return_errors) if ops else []

    async def _apply_puts(self, puts: list[tuple[int, PutOp]], n_ops: int, n_reads: int) -> None:
        """The puts and deletes (each with its position in the batch of ``n_ops``) in one call.
        A put the gate blocks is not stored; the batch's other puts and deletes are (they are
        not undone), and its reads do not run: the ``Blocked`` names the position(s)."""
        writes, deletes = [], []
        for i, op in puts:
            M.screen(op.namespace, op.key)
            (writes if op.value is not None else deletes).append((i, op))
        first = [self._write(op) for _, op in writes] + [self._fact(op) for _, op in deletes]
        out = await self._call(first)
        gone = [m.memory_id for found in out[len(writes):] for m in found]
        if gone:  # before a blocked put's error: the batch's other puts are stored, its deletes done as well
            await self._call([self._agent.forget_op(m, reason="langgraph store delete", erase="fact") for m in gone])
        blocked = [(i, res) for (i, _), res in zip(writes, out) if res.decision == BLOCKED]
        if blocked:
            raise Blocked(_blocked_message([i for i, _ in blocked], len(puts), n_ops, n_reads), gate=blocked[0][1].gate)

    def _write(self, op: PutOp) -> O.Write:
        # minutes, checked here: a str or a NaN would otherwise fail untyped in the arithmetic below
        V.number(op.ttl, "ttl (minutes)", 0, None, allow_none=True)
        ttl = op.ttl
        own = op.index if isinstance(op.index, list) else None  # the put's own field paths, kept with it
        fields = own if own is not None else self._fields
        if not isinstance(op.value, Mapping):  # LangGraph's values are dicts: a list of pairs is not one
            raise InvalidRecord(f"a store item's value is a dict (a JSON object), not {type(op.value).__name__}")
        value = dict(op.value)
        M.content_of(op.namespace, op.key, value, ttl)  # a value that is not JSON: refused typed, before its texts are read
        if M.keys_collide(value, self._rt.gate.redact_all):
            raise InvalidRecord("two keys of one object in this value would be stored as one (personal data in a key "
                                "is redacted to its kind's placeholder, and a non-str key is written as a string): "
                                "one of them would be lost, so nothing was stored; key such objects by other names")
        texts = M.field_texts(value, fields) if op.index is not False else []  # once, for both uses below
        embed = self._scores.embed_text(texts)
        return self._agent.write_op(
            M.content_of(op.namespace, op.key, value, ttl, op.index is not False, own, embed is not None),
            scope=self._scope_of(op.namespace),
            subject=M.subject_of(op.namespace), predicate=M.predicate_of(op.namespace, op.key), source=self._source,
            confidence=PUT_CONFIDENCE,
            # LangGraph's item lives until deleted or its TTL runs out: no category lifetime
            ttl_days=("never" if ttl is None else ttl / 1440.0 if ttl else AT_ONCE_DAYS), soft_ttl_days="never",
            context=None if op.index is False else M.index_text(texts, fields), embed_text=embed)

    def _fact(self, op) -> O.Lookup:
        return self._agent.lookup_op(scope=self._scope_of(op.namespace),
                                     facts=[(M.subject_of(op.namespace), M.predicate_of(op.namespace, op.key))])

    # With a ``scope_of`` of the caller's, namespaces live in scopes of their own, under the
    # store's: a listing or a search not narrowed to one of them reads every such scope the
    # runtime holds memories of (each owner says which of its scopes under the store's are
    # readable by the store's actor), not only the store's own.
    def _needs_mapped(self, ops: list) -> bool:
        return self._mapped and any(isinstance(op, ListNamespacesOp) or isinstance(op, SearchOp)
                                    and self._prefix_scope(op.namespace_prefix) is None for op in ops)

    def _mapped_refs(self) -> list:
        return [o.scopes_under.remote(root, self._agent.actor) for root in self._agent.scopes
                for o in self._rt._owners]  # noqa: SLF001

    def _with_mapped(self, found: list[list[str]]) -> list[str]:
        return list(dict.fromkeys([*self._agent.scopes, *(s for part in found for s in part)]))

    def _read_ops(self, op, scopes: list[str], top_k: int | None = None) -> list:
        if isinstance(op, GetOp):
            return [self._fact(op)]
        if isinstance(op, (SearchOp, ListNamespacesOp)):
            M.check_page(op.limit, op.offset)
        if isinstance(op, SearchOp):
            M.check_filter(op.filter)
        if isinstance(op, SearchOp) and op.query:
            only = self._prefix_scope(op.namespace_prefix)
            window = op.offset + op.limit
            # The window is ordered by similarity, then sliced. With several texts an item's score
            # is its best text's, not its record's similarity: the same window for every page up
            # to SCORED_WINDOW results, so those pages neither repeat nor skip an item. A narrowed
            # search's window is widened by _wider until enough items pass.
            wide = window if self._one_text else max(window, SCORED_WINDOW)
            if top_k is None:
                top_k = min(MAX_SEARCH_WINDOW, max(4 * window, NARROW_WINDOW) if self._narrow(op) else wide)
            return [self._agent.recall_op(op.query, top_k=top_k, threshold=0.0, weights=BY_SIMILARITY,
                                          scopes=[only] if only is not None else scopes)]
        if isinstance(op, SearchOp):
            prefix = M.subject_of(op.namespace_prefix) if op.namespace_prefix else None
            only = self._prefix_scope(op.namespace_prefix)
            return [self._agent.lookup_op(scope=s, subject_prefix=prefix) for s in ([only] if only is not None else scopes)]
        if isinstance(op, ListNamespacesOp):
            return [self._agent.lookup_op(scope=s) for s in scopes]
        raise ValueError(f"unknown LangGraph op {type(op).__name__}")

    def _prefix_scope(self, prefix: tuple) -> str | None:
        """With a ``scope_of`` of the caller's, the scope a namespace prefix maps to: a search
        under it reads that scope (and its ancestors) in the pre-filter, not every scope of the
        store; None when there is no mapping, no prefix, or the mapping does not take the prefix."""
        if not self._mapped or not prefix:
            return None
        try:
            return str(parse_scope(self._scope_of(tuple(prefix))))
        except Exception:  # noqa: BLE001 - a mapping made for whole namespaces: search every scope
            return None

    def _read_result(self, op, done: list, refresh: list):
        if isinstance(op, GetOp):
            for m in done[0]:
                d = M.parse(m.content)
                if d is not None and d["namespace"] == op.namespace and d["key"] == op.key:
                    self._refresh(op, m, d, refresh)
                    return Item(value=d["value"], key=d["key"], namespace=d["namespace"],
                                created_at=M.when(m.created_at), updated_at=M.when(m.updated_at))
            return None
        if isinstance(op, ListNamespacesOp):
            seen = set()
            for found in done:
                for m in found:
                    d = M.parse(m.content)
                    if d is not None and M.matches(d["namespace"], op.match_conditions):
                        ns = d["namespace"]
                        seen.add(ns[: op.max_depth] if op.max_depth is not None else ns)
            return sorted(seen)[op.offset: op.offset + op.limit]
        # SearchOp
        if op.query:
            found = list(self._kept(op, done[0].hits))
            scored = [x for x in found if x[1].get("indexed", True)]
            items = [(h, d, s) for (h, d), s in zip(scored, self._scores.of(op.query, scored))]
            items.sort(key=lambda x: -x[2])  # by similarity, as LangGraph's backends order (a stable sort)
            if len(scored) < len(found):  # unindexed: after, unscored
                items += [(h, d, None) for h, d in found if not d.get("indexed", True)]
        else:
            rows = [m for found in done for m in found]
            rows.sort(key=lambda m: (-m.updated_at, m.memory_id))
            items = [(m, d, None) for m, d in self._kept(op, rows)]
        out = []
        refreshes = getattr(op, "refresh_ttl", False)
        for m, d, score in items[op.offset: op.offset + op.limit]:
            if refreshes:
                self._refresh(op, m, d, refresh)
            made = M.when(m.created_at)
            out.append(SearchItem(namespace=d["namespace"], key=d["key"], value=d["value"], created_at=made,
                                  updated_at=made if m.updated_at == m.created_at else M.when(m.updated_at),
                                  score=score))
        return out

    def _refresh(self, op, m, d: dict, refresh: list) -> None:
        if d.get("ttl") and getattr(op, "refresh_ttl", False):  # written again as it was put, index included
            index = False if d.get("indexed") is False else d.get("fields")
            again = self._write(PutOp(d["namespace"], d["key"], d["value"], index=index, ttl=d["ttl"]))
            again.replaces = m.memory_id
            refresh.append(again)

    def setup(self) -> None:
        """Nothing to set up (the runtime's storage is ready at connect); here for LangGraph's API."""

    @staticmethod
    def _item(memory) -> dict | None:
        return M.parse(memory.content)

    def _stored(self, namespace: tuple, key: str):
        """The item's record as held, expired or not (until a sweep removes it): for inspection."""
        from ...core.records import entity_key
        from ...runtime.results import Memory

        rt, scope = self._rt, self._scope_of(namespace)
        ek = entity_key(M.subject_of(namespace), M.predicate_of(namespace, key))
        rows = rt._calls.get(rt._owner(scope).live.remote([scope], self._agent.actor, rt.clock.now_us(),
                                                         entity_keys=[ek], include_expired=True,
                                                         purpose=self._agent.purpose))
        return Memory.of(rows[0]) if rows else None

    # --- TTL -------------------------------------------------------------------------------------

    def sweep_ttl(self) -> int:
        """Remove hard-expired items from storage now (a GC sweep of the store's scopes);
        returns how many memories the sweep evicted. Expired items are never returned before."""
        n = 0
        for s in self._agent.scopes:
            n += int(self._rt.gc(scope=s).by_rule.get("hard_expired", 0))
        return n

    def start_ttl_sweeper(self, sweep_interval_minutes: float | None = None) -> None:
        """Sweep every ``sweep_interval_minutes`` (default the TTLConfig's) in a thread."""
        minutes = sweep_interval_minutes or (self.ttl_config or {}).get("sweep_interval_minutes")
        if not minutes or self._sweeper is not None:
            return
        stop = threading.Event()

        def loop() -> None:
            while not stop.wait(minutes * 60):
                try:
                    self.sweep_ttl()
                except MemactorsError:  # the next round tries again; a closed runtime ends it
                    if self._rt._calls.closed:
                        return

        t = threading.Thread(target=loop, name="memactors-ttl-sweeper", daemon=True)
        t.start()
        self._sweeper = (t, stop)

    def stop_ttl_sweeper(self, timeout: float | None = None) -> bool:
        if self._sweeper is None:
            return True
        t, stop = self._sweeper
        stop.set()
        t.join(timeout)
        self._sweeper = None
        return not t.is_alive()

    def close(self) -> None:
        self.stop_ttl_sweeper()
        if self._owns:
            self._rt.close()

    def __enter__(self) -> MemactorsStore:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class AsyncMemactorsStore(MemactorsStore):
    """``MemactorsStore`` for async code, as LangGraph's async stores are: the sync methods
    refuse on a thread that runs an event loop (waiting there would block the loop; await the
    ``a``-methods instead) and serve anywhere else. ``MemactorsStore`` serves them on any
    thread, a notebook's loop included."""

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return super().batch(ops)
        raise asyncio.InvalidStateError(
            "a sync method of AsyncMemactorsStore was called on the event loop's thread: it would block the loop; "
            "await its async twin (abatch, aput, aget, asearch, adelete, alist_namespaces), or use MemactorsStore")
