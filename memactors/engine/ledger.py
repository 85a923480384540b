"""LedgerCore: the one owner of the DuckDB ledger file, with group commit, and no Ray in it.
The Ray host runs it as the named ledger writer actor (``memactors.actors.ledger_writer``);
the process host in the caller's process.

Callers ``await append(items)``; items that arrive while a commit runs wait for the next one,
so many writes share one transaction (bounded by ``ledger_commit_max_events`` and a short
wait). A write is acknowledged only after its transaction committed. Recall evidence is
buffered and committed with the next group, never on a caller's path.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import logging
import time
import fcntl
import gc
import os
from concurrent.futures import ThreadPoolExecutor

import duckdb

from ..core.config import Config

log = logging.getLogger("memactors.ledger")
from ..core.errors import (AccessDenied, BackPressure, DataFolderLocked, InvalidRecord, MemactorsError, NoGrants,
                           NotFound, RuntimeClosed, StoreError)
from ..core.grants import GrantTable
from ..core.history_view import cleared
from ..core.visibility import RANK
from ..core.scopes import GLOBAL, parse_scope
from ..store import sandbox
from ..store.sandbox_process import SandboxProcess
from ..core import events as E
from ..core.idempotency import IdempotencyCache
from ..store.entries import EMPTY, merge
from ..store.ledger import Ledger
from ..store.ledger_checks import damaged, ledger_error

# The writer folds the ledger's log into its file once it has been idle this long with half
# of ledger_wal_max_mb logged; DuckDB does it inside a commit at the whole size. Each
# checkpoint costs a lot whatever its size (0.1-2.3 s on a 200k-memory ledger here), so few
# large ones: 200k sweep events committed in 3.0 s with DuckDB's default 16 MB, 0.4 s plus
# one 0.24 s checkpoint with 128 MB (a 100 MB log replays in 0.5 s at open).
IDLE_S = 1.0
# Recall evidence rows a side transaction takes at most while writes wait (~50 us each): the
# writes queued meanwhile commit between two of them, instead of after the evidence of a whole tick.
SIDE_RECALLS = 128
# ... and when none wait: a side transaction's fixed cost (the access upsert's most of all, ~6 ms)
# spread over more rows (81 -> 35 us CPU a row from 128 to 1024, /tmp micro on a sim's rows).
SIDE_RECALLS_IDLE = 1024
# audit.sql queries running or waiting at once (one runs at a time, up to sandbox.TIMEOUT_S
# each); past this a query is refused with BackPressure rather than queued behind minutes of them.
SQL_QUEUE = 16


def _typed_errors(cls):
    """A DuckDB error leaving a public method of ``cls`` becomes the project's (``_typed``): on
    the process host it would reach the caller as it is, and on the Ray host as "an actor
    failed", when the file is damaged (a block read for the first time long after open)."""
    def typed(fn):
        if inspect.iscoroutinefunction(fn):
            @functools.wraps(fn)
            async def call(self, *args, **kw):
                try:
                    return await fn(self, *args, **kw)
                except duckdb.Error as exc:
                    raise self._typed(exc) from None
        else:
            @functools.wraps(fn)
            def call(self, *args, **kw):
                try:
                    return fn(self, *args, **kw)
                except duckdb.Error as exc:
                    raise self._typed(exc) from None
        return call

    for name, fn in list(vars(cls).items()):
        if not name.startswith("_") and inspect.isfunction(fn):
            setattr(cls, name, typed(fn))
    return cls


@_typed_errors
class LedgerCore:
    def __init__(self, data_dir: str, config: dict, peers=None, rebuild=None) -> None:
        """``peers``: ``owner(i)`` ports (a purge calls the owners); ``rebuild``: the host's
        ``engine.rebuild.rebuild`` (an outdated L2 is rebuilt at start)."""
        gc.set_threshold(50_000, 20, 100)  # large batches of short-lived objects; see owner.py
        full = Config.from_dict(config)
        self.cfg, self.lifecycle = full.runtime, full.lifecycle
        self.num_owners = full.runtime.num_owners
        self.peers = peers
        self._rebuild = rebuild
        self._purge_due: float | None = None
        # audit.sql's own thread: a slow query (up to 30 s) would otherwise hold one of the
        # default executor's few threads, which every commit runs on, and a handful held them all.
        self._sql_pool = ThreadPoolExecutor(1, thread_name_prefix="memactors-audit-sql")
        self._sandbox = SandboxProcess()  # a process of its own: a query's memory cannot end this one
        self._sql_waiting = 0
        # A folder that cannot be opened (locked, read-only, tampered, key missing) is reported
        # by ready() as a typed error: raising here would only say "the actor died".
        self._failed: MemactorsError | None = None
        self._shut = False  # shutdown() began: no batch is taken in
        try:
            self._open(data_dir)
        except MemactorsError as exc:
            self._failed = exc.with_traceback(None)
        except OSError as exc:
            self._failed = StoreError(f"cannot open the data folder {data_dir}: {_what(exc)}; it must be a "
                                      "writable folder with free space (`memactors audit verify` checks it "
                                      "read-only)")
        except duckdb.Error as exc:
            if damaged(exc):  # LedgerTampered: `audit verify` then reads the file itself and names the table
                self._failed = ledger_error(exc, os.path.join(data_dir, "ledger.duckdb"))
            else:
                self._failed = StoreError(f"cannot open the ledger in {data_dir}: {_what(exc)}; if the disk is full or "
                                          "read-only, fix that and connect again; if the file is damaged, restore "
                                          "the data folder from a backup (the ledger is the source of truth)")
        if self._failed is not None and getattr(self, "ledger", None) is not None:
            # Opened, then failed reading (a damaged block): closed, or DuckDB keeps the file
            # open read-write in this process and `audit verify` cannot open it read-only next.
            try:
                self.ledger.con.close()
            except duckdb.Error:
                pass
        if self._failed is not None and getattr(self, "_lock", None) is not None:
            self._lock.close()  # releases the folder's lock if this process took it

    def _open(self, data_dir: str) -> None:
        self.data_dir = data_dir
        os.makedirs(data_dir, exist_ok=True)
        # The lock file keeps a second runtime (another Ray cluster, another machine on a shared
        # folder) from writing the same data folder. The process holds it while it lives.
        self._lock = open(os.path.join(data_dir, "lock"), "a+")
        try:
            fcntl.flock(self._lock.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            raise DataFolderLocked(
                f"{data_dir} is open for writing by another memactors runtime; "
                "attach to it (after `memactors up`: connect(DIR, detached=True)) or stop it first"
            ) from None
        self.ledger = Ledger(os.path.join(data_dir, "ledger.duckdb"), self.cfg.key_dir,
                             wal_max_mb=self.cfg.ledger_wal_max_mb)
        # Idempotency keys recognised for retries: those of the last window, measured back from
        # the newest event (not the wall clock: a simulation's clock may run anywhere).
        self.known = IdempotencyCache(int(self.cfg.idempotency_window_s * 1_000_000))
        rows, ts = self.ledger.idempotency_since(self.ledger.newest_ts() - self.known.window_us)
        self.known.load(rows, ts)
        self.grant_table = GrantTable()
        self.grant_seq = 0
        self._refresh_grants()
        if self.ledger.unpurged():  # a purge due when this folder was last closed (or its process died)
            self._purge_due = time.monotonic() + self.lifecycle.purge_delay_s
        self.queue: list[tuple[dict, asyncio.Future, int]] = []  # (batch, its future, recall rows in then)
        self.recall_buffer: list[dict] = []
        self.applied_buffer: list[int] = []
        # A flush returns once the writes queued before it and the recall rows handed in before
        # it are committed: rows are counted in and out, each flush keeps the count at its call,
        # and waits (once out of the queue) among ``_held`` until that many are out.
        self._recalls_in = self._recalls_out = 0
        self._held: list[tuple[asyncio.Future, int]] = []
        self._wake: asyncio.Event | None = None
        self._loop_task = None

    def _typed(self, exc: BaseException) -> StoreError:
        return ledger_error(exc, os.path.join(getattr(self, "data_dir", "?"), "ledger.duckdb"))

    async def _purge_loop(self) -> None:
        while True:
            await asyncio.sleep(min(5.0, max(0.5, self.lifecycle.purge_delay_s / 4)))
            if self._purge_due is not None and time.monotonic() >= self._purge_due:
                try:
                    await self.purge()
                except Exception:  # noqa: BLE001 - retried at the next round; nothing is lost meanwhile
                    log.exception("scheduled purge failed; will retry")
                    self._purge_due = time.monotonic() + 30.0

    async def purge(self) -> dict:
        """Erasures down to the bytes, now: owners flush (erased rows leave L2), L2 rewrites
        fragments with deleted rows, rebuilds its full-text index and drops older versions, and
        the ledger file is rewritten without the freed blocks that held destroyed keys."""
        from .leases import aheld

        self._purge_due = None
        upto = self.ledger.last_seq  # an erasure committed from here on is due again (_commit)
        async with self.exclusive():  # not while a backup reads an older version and the ledger file
            owners = [self.peers.owner(i) for i in range(self.num_owners)]
            await asyncio.gather(*[o.flush() for o in owners])
            async with aheld(owners[1:]):  # the rewrite would be preempted by other owners' updates meanwhile
                l2 = await owners[0].purge_l2()
            await self.flush()
            async with self._con_lock:
                await asyncio.to_thread(self.ledger.unpin_aged, self.known.newest - self.known.window_us)
                ledger = await asyncio.to_thread(self.ledger.compact_file)
                await asyncio.to_thread(self.ledger.mark_purged, upto)
        return {"l2": l2, "ledger": ledger}

    async def purge_if_due(self) -> dict | None:
        """``purge`` now if an erasure's is due (a runtime closing does not leave it for a timer
        that stops with it); None if none is."""
        return await self.purge() if self._purge_due is not None else None

    def exclusive(self) -> asyncio.Lock:
        """Held by a purge and by a backup: one drops the old Lance versions and rewrites the
        ledger file that the other is reading."""
        if getattr(self, "_exclusive", None) is None:
            self._exclusive = asyncio.Lock()
        return self._exclusive

    async def backup_to(self, dest_dir: str) -> dict:
        """A consistent backup of this folder into ``dest_dir`` while writes go on
        (``memactors.engine.backup``)."""
        from .backup import backup

        self._ensure_loop()
        return await backup(self, dest_dir)

    _folded: tuple | None = None  # ((last seq, applied marks), the fold l2_expected(True) gave)

    def ready(self) -> bool:
        if self._failed is not None:
            raise self._failed
        return True

    def _ensure_loop(self) -> None:
        if self._loop_task is None:
            asyncio.get_running_loop().create_task(self._purge_loop())
            self._wake = asyncio.Event()
            self._con_lock = asyncio.Lock()  # every write on the ledger connection holds it
            self._rebuild_lock = asyncio.Lock()
            self._fold_lock = asyncio.Lock()
            self._loop_task = asyncio.get_running_loop().create_task(self._commit_loop())

    async def append(self, batch: dict | None) -> list[tuple[str, object]]:
        """Commit a batch of entries (``memactors.store.entries.encode``); returns per entry
        ("ok", seqs), ("dup", stored result), ("conflict", None) or ("stale", None) (decided
        against a copy or an erasure committed since: ``store.ledger_races``). Acknowledged only
        once its transaction committed."""
        if self._shut:  # its commit loop is gone: it would never be answered
            raise RuntimeClosed("this runtime was closed; nothing of this batch was written")
        self._ensure_loop()
        fut = asyncio.get_running_loop().create_future()
        self.queue.append((batch or EMPTY, fut, self._recalls_in))
        self._wake.set()
        return await fut

    async def _commit_loop(self) -> None:
        wait_s = self.cfg.ledger_commit_max_wait_ms / 1000
        while True:
            if self.ledger.wal_bytes() >= self.cfg.ledger_wal_max_mb << 19:  # half the limit
                try:  # idle for a moment: fold the log in now, not inside a later commit
                    async with asyncio.timeout(IDLE_S):  # (not wait_for: in 3.11 it could lose a cancel)
                        await self._wake.wait()
                except TimeoutError:
                    await self._checkpoint()
            await self._wake.wait()
            self._wake.clear()
            if wait_s > 0:
                await asyncio.sleep(wait_s)  # let concurrent callers join this group
            while self.queue or self.recall_buffer or self.applied_buffer:
                group, n = [], 0
                while self.queue and (not group or n + len(self.queue[0][0]["ts"]) <= self.cfg.ledger_commit_max_events):
                    batch, fut, mark = self.queue.pop(0)
                    group.append((batch, fut, mark))
                    n += len(batch["ts"])
                take = SIDE_RECALLS if self.queue else SIDE_RECALLS_IDLE
                recalls, self.recall_buffer = self.recall_buffer[:take], self.recall_buffer[take:]
                applied, self.applied_buffer = self.applied_buffer, []
                # A write is acknowledged once its events are committed; the side tables (recall
                # evidence, access counts, what L2 applied) follow in a transaction of their own,
                # a bounded share of the evidence at a time, and a flush returns once what was
                # handed in before it is in: a write never waits for the evidence of a tick's
                # recalls (50 us a row) before its own commit.
                writes = [(b, f) for b, f, _ in group if b["idem_key"]]
                self._held += [(f, mark) for b, f, mark in group if not b["idem_key"]]
                try:
                    async with self._con_lock:
                        results = await asyncio.to_thread(self._commit, merge([b for b, _ in writes])) \
                            if writes else []
                        pos = 0
                        for batch, fut in writes:
                            k = len(batch["idem_key"])
                            if not fut.done():
                                fut.set_result(results[pos:pos + k])
                            pos += k
                        writes = []
                        if recalls or applied:
                            await asyncio.to_thread(self.ledger.log_side, recalls, applied)
                except Exception as exc:  # the group failed: every caller not yet answered hears it, typed
                    err = exc if isinstance(exc, MemactorsError) else self._typed(exc) if damaged(exc) else StoreError(
                        f"the ledger could not commit ({_what(exc)}); nothing of this batch was written: "
                        "retry with the same idempotency keys once the disk has room and is writable")
                    failed, self._held = [f for _, f in writes] + [f for f, _ in self._held], []
                    for fut in failed:
                        if not fut.done():
                            fut.set_exception(err)
                    self._recalls_out += len(recalls)
                    continue
                self._recalls_out += len(recalls)
                done = [f for f, mark in self._held if mark <= self._recalls_out]
                self._held = [(f, mark) for f, mark in self._held if mark > self._recalls_out]
                for fut in done:
                    if not fut.done():
                        fut.set_result([])

    async def _checkpoint(self) -> None:
        try:
            async with self._con_lock:
                await asyncio.to_thread(self.ledger.checkpoint)
        except duckdb.Error:  # the log stays; DuckDB folds it in at its size limit
            log.warning("idle checkpoint failed; the next commit over the limit does it", exc_info=True)

    def _commit(self, batch: dict):
        results = self.ledger.commit(batch, self.known)
        if any(batch["destroy"]) and self._purge_due is None:
            # An erasure: its bytes leave old Lance versions and freed DuckDB blocks within the
            # configured delay (``purge`` does it at once).
            self._purge_due = time.monotonic() + self.lifecycle.purge_delay_s
        if E.GRANT in batch["action"]:
            self._refresh_grants()
        return results

    def _refresh_grants(self) -> None:
        for seq, g in self.ledger.grants_since(self.grant_seq):
            self.grant_table.put(GrantTable.from_event(g))
            self.grant_seq = seq

    def log_recalls(self, rows: list[dict]) -> None:
        self.recall_buffer.extend(rows)
        self._recalls_in += len(rows)
        self._ensure_loop()
        self._wake.set()

    async def mark_applied(self, seqs: list[int]) -> None:
        """Record that L2 has applied these events; returns once that is committed (the owner
        keeps them until then, so a writer killed before the commit loses nothing)."""
        self.applied_buffer.extend(seqs)
        await self.flush()

    def digest_key(self) -> bytes:
        # Handed to the runtime's own processes only, so they can digest queries in place.
        return self.ledger.digest_key

    def fingerprint_key(self) -> bytes:
        # For owners: they fingerprint requests to tell a retry from a reused idempotency key.
        return self.ledger.fingerprint_key

    def pseudonym_key(self) -> bytes:
        # For the runtime, when [gate].pseudonymise_identifiers is on: ids that look like
        # personal data become keyed pseudonyms, stable for the life of this folder's key.
        return self.ledger.pseudonym_key

    async def unapplied(self, scopes: list[str] | None = None) -> list:
        """Events L2 has not applied (decoded changes with their seqs), for a restarting owner."""
        await self.flush()
        return await asyncio.to_thread(self.ledger.unapplied, scopes)

    async def working_since(self, ts: int) -> list:
        return await asyncio.to_thread(self.ledger.working_since, ts)

    async def working_in(self, scopes: list[str], before: int | None = None) -> list:
        """Working-pool items of these scopes and their later changes, decoded (``Ledger.working_in``)."""
        await self.flush()
        return await asyncio.to_thread(self.ledger.working_in, scopes, before)

    async def authors_of(self, memory_ids: list[str]) -> dict[str, str]:
        await self.flush()
        return await asyncio.to_thread(self.ledger.authors_of, memory_ids)

    async def history(self, memory_ids: list[str]) -> list:
        """Every event of these memories, decoded: a record projected from the ledger alone."""
        await self.flush()
        return await asyncio.to_thread(self.ledger.history, memory_ids)

    async def provenance(self, roots: list[str]) -> tuple[dict, list]:
        """What an erasure of ``roots`` weighs, across every scope (``Ledger.provenance``)."""
        await self.flush()
        return await asyncio.to_thread(self.ledger.provenance, roots)

    async def successions(self, scope: str, memory_id: str) -> list[str]:
        """The versions an update linked to a text-only memory (``Ledger.successions``)."""
        await self.flush()
        return await asyncio.to_thread(self.ledger.successions, scope, memory_id)

    async def touched_since(self, memory_ids: list[str], seq: int, ts: int) -> dict[str, int | None]:
        """``Ledger.touched_since``, once the recall rows handed in before are committed."""
        await self.flush()
        return await asyncio.to_thread(self.ledger.touched_since, memory_ids, seq, ts)

    def seq(self) -> int:
        """The last committed event's seq."""
        return self.ledger.last_seq

    async def write_keys_of(self, memory_ids: list[str]) -> list[tuple[str, int]]:
        """The idempotency keys of the writes that made these memories (committed: an owner asks
        once its erasure is durable, ``IdempotencyCache.unpin``)."""
        return await asyncio.to_thread(self.ledger.write_keys_of, memory_ids)

    async def scopes_of(self, memory_ids: list[str]) -> dict[str, str]:
        await self.flush()
        return await asyncio.to_thread(self.ledger.scopes_of, memory_ids)

    def idempotency_window(self) -> tuple[dict, dict]:
        """The keys this writer recognises (its window) and their times, for a starting owner."""
        rows, ts = self.ledger.idempotency_since(self.known.newest - self.known.window_us)
        return rows, ts

    async def idempotency_of(self, keys: list[str]) -> tuple[dict, dict]:
        """What committed under these keys (an owner whose commit failed learns which did)."""
        await self.flush()
        return await asyncio.to_thread(self.ledger.idempotency_of, keys)

    def grants(self) -> list[dict]:
        return self.grant_table.to_list()

    def grants_since(self, seq: int) -> tuple[int, list[dict]]:
        """Grant changes after ``seq`` and the newest grant seq: owners follow them incrementally.
        Nothing newer than the grant table this writer keeps (every grant commits here): no read
        (a refused recall asks, and the read was a statement over the events table each time)."""
        if seq >= self.grant_seq:
            return self.grant_seq, []
        return self.grant_seq, [g for s, g in self.ledger.grants_since(seq)]

    async def flush(self) -> None:
        """Wait until everything handed in so far is committed."""
        await self.append(None)

    async def verify(self, tail: bool = False):
        await self.flush()
        return (await asyncio.to_thread(self.ledger.verify, tail=tail)).to_dict()

    async def recall_log(self, recall_id: str, actor: str):
        """One recall's evidence, for an actor whose read grants cover the recall's scopes."""
        await self.flush()
        log = self._owned_log(recall_id, actor)
        log["cited"] = self.ledger.citations(recall_id)
        return log

    async def mark_cited(self, recall_id: str, memory_ids: list[str], ts: int, actor: str) -> int:
        await self.flush()
        self._owned_log(recall_id, actor)
        async with self._con_lock:  # the writer connection takes one statement stream at a time
            return await asyncio.to_thread(self.ledger.mark_cited, recall_id, memory_ids, ts)

    def _owned_log(self, recall_id: str, actor: str) -> dict:
        """The evidence of a recall belongs to whoever may read its scopes: the check runs here,
        against the ledger's own grants, so a caller that skips the facade gets no further. An
        unknown id and a refused one read alike (no probing for other users' recall ids)."""
        log = self.ledger.recall_log(recall_id)
        try:
            self.grant_table.check_recall(
                actor, [parse_scope(s) for s in (log or {}).get("allowed_scopes") or []])
            ok = log is not None and (log["actor"] == actor or self._cleared_for(log, actor))
        except AccessDenied:
            ok = False
        if not ok:
            raise NotFound(f"no recall {recall_id} visible to actor {actor!r}")
        if log["actor"] != actor:  # the query's digest is its own actor's: another reader could
            log["query_digest"] = None  # test guesses of it against the digests of its own recalls
        return log

    def _cleared_for(self, log: dict, actor: str) -> bool:
        """Another reader sees a recall's evidence (its hits' ids and scores) only when cleared,
        in every scope it read, for what that recall was cleared for."""
        mine = self.grant_table.clearances(actor, [parse_scope(s) for s in log.get("allowed_scopes") or []])
        return all(level is None or RANK[level] <= RANK.get(mine.get(scope), -1)
                   for scope, level in (log.get("filters", {}).get("clearance") or {}).items())

    async def rebuild_l2(self, config: dict) -> dict | None:
        """Rebuild L2 from this ledger if its table predates the record schema (owners ask at
        start; the first one rebuilds, the others find it done). None when nothing was to do."""
        from ..store.lance_store import L2Store  # lancedb here only for this rare path

        self._ensure_loop()
        async with self._rebuild_lock:
            if not await asyncio.to_thread(L2Store.outdated, os.path.join(self.data_dir, "l2")):
                return None
            await self.flush()
            async with self._con_lock:
                return await asyncio.to_thread(self._rebuild, self.data_dir, Config.from_dict(config),
                                               ledger=self.ledger)

    async def finish_erasures(self) -> int:
        """Delete the data keys of the sweep's erasures (``Ledger.finish_erasures``): a sweep's
        last step before it returns. How many there were."""
        self._ensure_loop()
        async with self._con_lock:
            return await asyncio.to_thread(self.ledger.finish_erasures)

    def sweep_lease(self, holder: str, ttl_s: float) -> bool:
        """One sweep at a time per folder: a lease that runs out by itself (a driver that died
        mid-sweep does not block the next one for longer than ``ttl_s``)."""
        import time

        now = time.monotonic()
        current = getattr(self, "_lease", None)
        if current is None or current[0] == holder or current[1] < now:
            self._lease = (holder, now + ttl_s)
            return True
        return False

    def sweep_release(self, holder: str) -> None:
        if getattr(self, "_lease", None) and self._lease[0] == holder:
            self._lease = None

    # --- history: point in time, rollback, fork -------------------------------------------------

    async def history_call(self, name: str, *args):
        """One of the ledger's history queries (``memactors.store.ledger_history``), on a
        committed view (the names in ``_HISTORY``)."""
        if name not in _HISTORY:
            raise InvalidRecord("not a history query")
        await self.flush()
        return await asyncio.to_thread(getattr(self.ledger, name), *args)

    async def let_go(self, memory_ids: list[str], reason: str | None) -> list[str]:
        """``Ledger.let_go`` on what is committed, without waiting for the queue (``history_call``
        flushes first): what it asks about (a session's release, an erasure) was acknowledged before."""
        return await asyncio.to_thread(self.ledger.let_go, memory_ids, reason)

    async def fork_to(self, dest_dir: str, upto: int, key_dir: str) -> dict:
        """A new data folder's ledger: this one up to ``upto``, its chain intact, vouched for by
        the fork's own key and anchor (its L2 is rebuilt from it next)."""
        await self.flush()

        def build() -> dict:
            os.makedirs(dest_dir, exist_ok=True)
            path = os.path.join(dest_dir, "ledger.duckdb")
            if os.path.exists(path):
                raise StoreError(f"{dest_dir} already holds a ledger: a fork needs a new folder")
            Ledger(path, key_dir).close()  # an empty ledger with its own folder id and key
            out = self.ledger.export_to(path, upto)
            Ledger(path, key_dir, adopt=True).close()
            return out

        async with self._con_lock:
            return await asyncio.to_thread(build)

    async def counters(self) -> dict:
        await self.flush()
        return await asyncio.to_thread(self.ledger.counters)

    async def access_changes(self, owner: int, num_owners: int) -> list[tuple]:
        """Access counts L2 has not seen, of memories this owner holds."""
        from .naming import owner_index

        await self.flush()
        rows = await asyncio.to_thread(self.ledger.access_changes)
        return [r for r in rows if owner_index(parse_scope(r[1]), num_owners) == owner]

    async def mark_of(self, name: str) -> int | None:
        """The newest value of a watermark (``Ledger.mark_of``), every commit so far counted."""
        await self.flush()
        return await asyncio.to_thread(self.ledger.mark_of, name)

    async def set_aside_past_hard(self, now_us: int, dry_run: bool = False) -> list[tuple[str, str]]:
        """The memories no L2 row holds past their hard TTL (``Ledger.set_aside_past_hard``)."""
        await self.flush()
        async with self._con_lock:  # it writes its index
            return await asyncio.to_thread(self.ledger.set_aside_past_hard, int(now_us), dry_run=bool(dry_run))

    async def uncited_runs(self, min_streak: int, since_ts: int = 0) -> list[tuple[str, str, int]]:
        """Candidates for demotion (``Ledger.uncited_runs``), with every recall handed in so far counted."""
        await self.flush()
        return await asyncio.to_thread(self.ledger.uncited_runs, min_streak, since_ts)

    async def access_synced(self, pairs: list) -> None:
        async with self._con_lock:
            await asyncio.to_thread(self.ledger.access_synced, pairs)

    async def l2_expected(self, digests: bool = False):
        """What L2 should hold by the events applied so far (owners compare it with Lance). With
        ``digests`` each owner of a verify asks for the same fold: made once for the events and
        the applied marks as they stand (``_folded``)."""
        await self.flush()
        if not digests:
            return await asyncio.to_thread(self.ledger.l2_expected)
        async with self._fold_lock:
            state = (self.ledger.last_seq, await asyncio.to_thread(self.ledger.applied_count))
            if self._folded is None or self._folded[0] != state:
                self._folded = (state, await asyncio.to_thread(self.ledger.l2_expected, True))
            return self._folded[1]

    async def erasure(self, memory_id: str, actor: str) -> dict:
        await self.flush()
        out = await asyncio.to_thread(self.ledger.erasure, memory_id)
        if out is None or not await asyncio.to_thread(self._seen, actor, [memory_id]):
            raise NotFound(f"no memory {memory_id} visible to actor {actor!r} in the ledger")
        return out

    def _seen(self, actor: str, memory_ids: list[str]) -> set[str]:
        """Those of ``memory_ids`` that ``actor`` is shown: a read grant on the memory's scope and
        its clearance there covering the memory's sensitivity (its record's, or its tombstone's);
        to any other reader the id is unknown, as in a recall. Blocking (run in a thread)."""
        scopes = {m: s for m, s in self.ledger.scopes_of(memory_ids).items() if self._may_read(actor, s)}
        levels = self.ledger.levels_of(list(scopes))
        return {m for m, s in scopes.items()
                if levels[m] is None or levels[m] in self.grant_table.sees(actor, parse_scope(s))}

    async def shown_ids(self, memory_ids: list[str], actor: str) -> list[str]:
        """Those of ``memory_ids`` that ``actor`` is shown (``_seen``), as the ledger's grants are now."""
        await self.flush()
        return sorted(await asyncio.to_thread(self._seen, actor, memory_ids))

    async def fact_history(self, memory_id: str | None, scope: str | None, entity_key: str | None,
                           actor: str) -> dict:
        """The versions of a memory's fact, or of (scope, entity key) (``Ledger.fact_history``),
        for an actor who may read that scope: checked here, against the ledger's own grants,
        before anything is decrypted. Unknown and refused read alike (NotFound)."""
        await self.flush()
        if memory_id is not None:
            scope = (await asyncio.to_thread(self.ledger.scopes_of, [memory_id])).get(memory_id)
        out = None
        if scope is not None and self._may_read(actor, scope):
            out = await asyncio.to_thread(self.ledger.fact_history, scope, memory_id, entity_key)
        if out is not None:
            out = cleared(out, self.grant_table.sees(actor, parse_scope(scope)), memory_id)
        if out is None:
            raise NotFound(f"no memory or fact of that name visible to actor {actor!r}")
        return out

    def _may_read(self, actor: str, scope: str) -> bool:
        try:
            self.grant_table.check_recall(actor, [parse_scope(scope)])
        except AccessDenied:
            return False
        return True

    async def log_actions(self, rows: list[dict]) -> None:
        """Completed tool calls and what they depended on (``Ledger.log_actions``): evidence,
        committed before this returns."""
        async with self._con_lock:
            await asyncio.to_thread(self.ledger.log_actions, rows)

    async def actions_on(self, memory_id: str, actor: str) -> list[dict]:
        """The actions that depended on ``memory_id``, for an actor shown that memory (else
        NotFound, as for an unknown id); only actions it is shown (``Ledger.actions_on``)."""
        await self.flush()
        if not await asyncio.to_thread(self._seen, actor, [memory_id]):
            raise NotFound(f"no memory of that id visible to actor {actor!r}")
        return await self._actions([memory_id], actor)

    async def actions_on_many(self, memory_ids: list[str], actor: str) -> list[dict]:
        """As ``actions_on`` for many memories at once (a rollback's report), without the
        per-memory check: only actions ``actor`` is shown come back."""
        await self.flush()
        return await self._actions(memory_ids, actor)

    async def _actions(self, memory_ids: list[str], actor: str) -> list[dict]:
        await self._levels_current()
        return await asyncio.to_thread(self.ledger.actions_on, memory_ids, self._reads(actor))

    async def changed_under(self, prefix: str, seq: int, actor: str) -> int:
        """How many memories under ``prefix`` changed after ``seq``, of those ``actor`` is shown
        (``Ledger.changed_under``): ``audit.at``'s count."""
        await self.flush()
        await self._levels_current()
        return await asyncio.to_thread(self.ledger.changed_under, prefix, int(seq), self._reads(actor))

    async def _levels_current(self) -> None:
        """The sensitivity index up to the last event: the audit views' clearance rule reads it."""
        async with self._con_lock:  # it writes (the writer connection takes one statement stream at a time)
            await asyncio.to_thread(self.ledger.index_levels)

    def _reads(self, actor: str) -> list[tuple[str, str]]:
        """``actor``'s read grants as (scope prefix, clearance) pairs, "/" for /global/ (every
        scope): what the audit views' clearance rule takes (``store.ledger_audit``)."""
        return [("/" if g.scope == GLOBAL else str(g.scope), g.clearance)
                for g in self.grant_table.grants_of(actor) if g.read]

    async def sql(self, query: str, params: list | None, actor: str) -> list[tuple]:
        """One SELECT over the events, recalls and citations ``actor`` may read, in a sandbox
        (memactors.store.sandbox): never the ledger file itself, never keys."""
        sandbox.check_select(query)  # refused before anything is copied
        await self.flush()
        await self._levels_current()
        reads = self._reads(actor)
        if not reads:
            raise NoGrants(f"actor {actor!r} has no read grants; audit.sql shows only what an actor may read")
        if self._sql_waiting >= SQL_QUEUE:
            raise BackPressure(f"audit.sql: {self._sql_waiting} queries are running or waiting; retry later")
        self._sql_waiting += 1
        queued = time.monotonic()

        def run() -> list[tuple]:
            if time.monotonic() - queued > self.cfg.call_timeout_s:  # its caller has stopped waiting
                raise BackPressure("audit.sql: the query waited too long behind others; retry later")
            # The copy is made when the query's turn comes, not while it waits.
            return self._sandbox.run(query, params, self.ledger.readable_tables(reads, actor))
        try:
            return await asyncio.get_running_loop().run_in_executor(self._sql_pool, run)
        finally:
            self._sql_waiting -= 1

    async def shutdown(self) -> None:
        """Checkpoint and close the ledger, then release the folder's lock. Once the statement
        on the writer connection (a commit still in flight at close()) is done: DuckDB refuses
        to close a busy connection, and the lock stayed held until the process exited."""
        self._sql_pool.shutdown(wait=False, cancel_futures=True)
        self._sandbox.close()
        self._shut = True
        try:
            if self._loop_task is not None:
                async with self._con_lock:
                    self.ledger.close()
            else:
                self.ledger.close()
            for _, fut, _ in self.queue:  # handed in, never committed
                if not fut.done():
                    fut.set_exception(RuntimeClosed("this runtime was closed before the batch was committed; nothing "
                                                    "of it was written"))
            self.queue.clear()
        finally:
            fcntl.flock(self._lock.fileno(), fcntl.LOCK_UN)
            self._lock.close()


_HISTORY = frozenset({"seq_at", "ts_of", "bounds", "state_at", "rollback_targets", "now_and_then", "superseded_by",
                      "dependents", "changed_since", "records_at", "subtree_at", "rollback_inputs",
                      "as_of_inputs"})


def _what(exc: BaseException) -> str:
    if isinstance(exc, OSError):
        return exc.strerror or type(exc).__name__
    return (str(exc).splitlines() or [type(exc).__name__])[0][:200]

