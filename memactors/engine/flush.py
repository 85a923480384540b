"""An owner's L2 write-behind: the outbox flushed to Lance in batches (DESIGN section 9).

Mixed into ``ScopeCore``. Changes are committed to the ledger first (that is the
acknowledgement); Lance trails by at most the flush interval. After Lance has a batch, the
ledger marks its seqs applied, so a restarted owner replays exactly the rest. A failed flush
puts its batch back and the loop retries; the ledger still holds everything meanwhile.
"""

from __future__ import annotations

import asyncio
import contextlib
import concurrent.futures as cf
import dataclasses
import shlex
import logging
import time
from collections import Counter

from ..core.errors import StoreError
from .l2_pending import PendingL2
from .outbox import Batch, joined

log = logging.getLogger("memactors.owner")

# How long a joint flush (``apply_joint``) waits for every owner's batch before it fails them
# all (each owner then keeps its batch for its own flush loop): an owner restarting, or one
# whose flush lock another holds, must not keep the others' batches waiting longer.
JOINT_WAIT_S = 30.0
_CALLED_OFF = ("a joint L2 flush was called off (another owner's share could not come); "
               "each owner keeps its own and writes it with its next flush")


class FlushMixin:
    # Seqs Lance has applied that the ledger has not yet committed as applied. Kept until it
    # has: a ledger writer killed meanwhile loses what it held, and the rows would then look
    # unknown to verify() (a false alarm) until the next reopen replayed them.
    _unmarked: list[int] = []  # replaced per instance, never mutated in place

    async def _flush_soon(self) -> None:
        """Flush now if possible (after an erasure, after a replay). A failure only leaves the
        work to the flush loop: the changes are committed to the ledger already."""
        try:
            await self._flush()
        except Exception:  # noqa: BLE001 - pending changes are kept; the loop retries
            log.exception("L2 flush failed; the flush loop will retry")

    # The scopes of the batch on its way to Lance (taken from the outbox, not yet applied), and
    # an event set once it landed or went back: a scope loaded meanwhile waits for it (``_load``).
    _landing: tuple[set[str], asyncio.Event] | None = None

    _defer_until = 0.0  # monotonic: the owner's own flushes wait until then (``defer_flushes``)

    async def defer_flushes(self, seconds: float) -> None:
        """Let the flush loop and a full outbox wait ``seconds`` (0: flush again as usual): a
        sweep's lease (``flush_hold.deferred``), renewed while its changes land."""
        await self._ready()
        self._defer_until = time.monotonic() + seconds if seconds > 0 else 0.0

    def _flush_deferred(self) -> bool:
        return time.monotonic() < self._defer_until

    _flush_task: asyncio.Task | None = None

    async def stop_flushing(self) -> None:
        """End the flush loop (the process host's close, once its last flush is done): a round
        racing the ledger's shutdown failed on its closed connection and logged it."""
        task, self._flush_task = self._flush_task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def _flush_loop(self) -> None:
        n = 0
        while True:
            await asyncio.sleep(self.cfg.runtime.l2_flush_interval_s)
            if self._flush_deferred():
                continue
            n += 1
            try:  # access counts every 10th round: they need not trail by less
                await self._flush(access=n % 10 == 0)
            except Exception:  # noqa: BLE001 - keep flushing; the ledger still holds everything
                log.exception("L2 flush failed; will retry")

    async def _pull_access(self) -> list:
        """Access counts from recalls and citations (kept by the ledger writer) into the outbox,
        as column patches: L2's last_accessed_at and counts follow recalls, off the hot path."""
        rows = await self.ledger.access_changes(self.index, self.num_owners)
        for mid, scope, retrieved, cited, last, _streak, _ver in rows:
            self.outbox.patch(mid, scope, {"retrieved_count": retrieved, "cited_count": cited,
                                           "last_accessed_at": last})
        return [(r[0], r[6]) for r in rows]

    async def _flush(self, force_index: bool = False, access: bool = False, compact: bool = True,
                     joint: tuple | None = None) -> int:
        async with self._flush_lock:
            await self._mark_applied()  # an earlier flush's marks the ledger did not take
            synced = await self._pull_access() if access else []
            batch = self.outbox.take()
            if batch is None:
                if joint is not None:  # nothing of this owner's: the joint still counts it in
                    await self._joint_part(joint, Batch())
                return 0
            t0 = time.perf_counter()
            self._landing = landing = (batch.scopes(), asyncio.Event())
            try:
                if joint is not None:  # every owner's batch in one set of Lance commits (``apply_joint``)
                    await self._joint_part(joint, dataclasses.replace(batch, seqs=[]))  # rows, not seqs
                elif len(batch):  # seqs alone (grants, events with no L2 effect) only need marking
                    await asyncio.to_thread(self.l2.apply, batch)
            except Exception as exc:
                self.outbox.restore(batch)
                raise StoreError(f"L2 could not be written ({type(exc).__name__}); the ledger holds every change "
                                 "and L2 catches up by itself once the disk has room and is writable") from exc
            finally:
                self._landing = None
                landing[1].set()
            self._tick("l2_flush", t0)
            if isinstance(self.l2, PendingL2) and self.l2.store is not None:
                self.l2 = self.l2.store  # opened by this flush: no stand-in from here on
            # Lance has the batch: its seqs are ours to mark before any other call can fail (a
            # ledger writer killed during access_synced once lost them: verify() then reported
            # L2 rows missing and unknown until the owner restarted).
            self._unmarked = [*self._unmarked, *batch.seqs]
            # Whole rows written as upserts (a replay) count too: a scope Lance holds is never
            # again taken for empty (that made versions restart beside a live one).
            self.l2_scopes.update(r["scope"] for r in (*batch.new.values(), *batch.rows.values()))
            if synced:
                await self.ledger.access_synced(synced)
            await self._mark_applied()
            self._flushes += 1
            self._unindexed += len(batch.new)
            # An explicit flush brings indexes up to date too, but not for a handful of rows:
            # every index rewrite is a new set of files (the full-text index whole), and a
            # flush after every 20 writes made ~9 index folders and ~4 MB a cycle.
            due = self.cfg.runtime.l2_reindex_rows
            if self._unindexed >= due or (force_index and self._unindexed >= max(1, due // 10)):
                try:  # an optimisation: rows outside the index are still found, only slower
                    await asyncio.to_thread(self.l2.reindex)
                    self._unindexed = 0
                except Exception:  # noqa: BLE001 - another owner's commit won the race; next flush retries
                    log.warning("reindex deferred: concurrent commit", exc_info=True)
            if len(batch):  # rows went to Lance (never only seqs: that would open a table not there yet)
                if compact:
                    await self._compact_small(look=force_index)
                if self._flushes % 200 == 0:  # old versions (kept 7 days) pruned now and then
                    try:
                        await asyncio.to_thread(self.l2.prune_versions)
                    except Exception:  # noqa: BLE001 - housekeeping: a later flush tries again
                        log.warning("old L2 versions not pruned", exc_info=True)
            self.hot.evict(self.outbox.dirty_scopes() | {s for s, lk in self.locks.items() if lk.locked()})
            return len(batch)

    async def _joint_part(self, joint: tuple, batch: Batch) -> None:
        key, n, applier = joint
        call = self.apply_joint(key, n, batch) if applier is None else applier.apply_joint.remote(key, n, batch)
        await (asyncio.wrap_future(call) if isinstance(call, cf.Future) else call)

    _appended = 0  # fragments this owner appended since it last looked for small ones

    async def _compact_small(self, look: bool = False) -> None:
        """Each flush appends a fragment: compact them once ``l2_compact_fragments`` are small
        (under the flush lock, so this owner's next flush never races it; another owner's
        commit that wins makes Lance plan it again). Listing the fragments reads the table's
        manifest (~2.5 ms, beside the commit of a single write): the flush loop looks once this
        owner's own appends, with as many from each other owner, could make that many (an
        explicit flush, ``look``, always does)."""
        due = self.cfg.runtime.l2_compact_fragments
        if not due:
            return
        self._appended += 1
        if not look and self._appended < -(-due // self.num_owners):
            return
        self._appended = 0
        try:  # an optimisation: a query over many fragments is slower, not wrong
            t0 = time.perf_counter()
            if await asyncio.to_thread(self.l2.compact_small, due, self.cfg.lifecycle.compact_small_fragment_rows):
                self._tick("l2_compact", t0)
        except Exception:  # noqa: BLE001 - the next flush tries again
            log.warning("compaction deferred", exc_info=True)

    async def _mark_applied(self) -> None:
        """Have the ledger commit which events Lance holds (under the flush lock). On failure
        the seqs stay here and the next flush tries again."""
        if self._unmarked:
            await self.ledger.mark_applied(self._unmarked)
            self._unmarked = []

    async def flush(self, compact: bool = True, joint: tuple | None = None) -> int:
        """Write everything committed so far to Lance now (tests, benchmarks, shutdown).
        ``compact=False``: leave small fragments to the caller (a sweep, whose maintenance
        compacts next: the flush's compaction was that work done twice, 4.3 of a 1M sweep's 11 s).
        ``joint``: ``(key, n, applier)``, this flush one of ``n`` whose batches ``applier`` (an
        owner's handle; None: this owner) writes to Lance together (``apply_joint``)."""
        await self._ready()
        n = await self._flush(force_index=True, access=True, compact=compact, joint=joint)
        await self.ledger.flush()
        return n

    _joints: dict | None = None  # key -> (owners expected, [(batch, future)], timer)

    async def apply_joint(self, key: str, n: int, batch) -> None:
        """One of ``n`` owners' outbox batches (a sweep's shares, each sent by its owner's flush,
        which holds that owner's flush lock meanwhile): once all ``n`` are here they reach Lance
        as one batch, one delete and one merge per column set for all, where owners one after
        another made each of those once an owner (a 1M sweep: 2.2 s for two owners' shares).
        Returns when Lance has them; raises for every owner if it could not, or if not all came
        within ``JOINT_WAIT_S`` (each owner then keeps its batch for its own flush loop)."""
        await self._ready()
        loop = asyncio.get_running_loop()
        if self._joints is None:
            self._joints = {}
        if key in self._aborted:
            raise StoreError(_CALLED_OFF)
        if key not in self._joints:
            self._joints[key] = (n, [], loop.call_later(JOINT_WAIT_S, self._joint_expired, key))
        want, parts, timer = self._joints[key]
        fut = loop.create_future()
        parts.append((batch, fut))
        if len(parts) >= want:
            del self._joints[key]
            timer.cancel()
            try:
                merged = joined([b for b, _ in parts])
                if len(merged):
                    await asyncio.to_thread(self.l2.apply, merged)
            except Exception as exc:  # noqa: BLE001 - every owner of the joint hears it and keeps its batch
                for _, f in parts:
                    if not f.done():
                        f.set_exception(exc)
            else:
                for _, f in parts:
                    if not f.done():
                        f.set_result(None)
        await fut

    def _joint_expired(self, key: str, why: str = "") -> None:
        _, parts, timer = self._joints.pop(key, (0, [], None))
        if timer is not None:
            timer.cancel()
        err = StoreError(why or f"a joint L2 flush did not gather its owners' batches in {JOINT_WAIT_S:g} s; "
                         "each owner keeps its own and writes it with its next flush")
        for _, f in parts:
            if not f.done():
                f.set_exception(err)

    _aborted: set = frozenset()  # joints called off (``abort_joint``): a part arriving later fails at once

    async def abort_joint(self, key: str) -> None:
        """Call off a joint flush (the sweeper, once another owner's flush failed: its share will
        not come): the parts here, and any that arrive later, fail now instead of after
        ``JOINT_WAIT_S``; each owner keeps its batch for its own next flush."""
        self._aborted = {*self._aborted, key}
        if self._joints and key in self._joints:
            self._joint_expired(key, _CALLED_OFF)

    _hold: asyncio.TimerHandle | None = None
    _hold_token: str | None = None  # whose hold it is (flush_hold: a lease its holder renews)

    async def hold_flushes(self, seconds: float, token: str = "") -> bool:
        """Hold this owner's L2 flushes off (writes are still acknowledged: the ledger has them)
        while another owner rewrites the shared table: a Lance compaction conflicts with every
        update committed meanwhile, and under steady writes it would never land. A lease:
        released by ``release_flushes(token)`` or after ``seconds``, whichever comes first; the
        holder renews it by calling again with its token (``flush_hold.held``), so a holder that
        dies keeps flushes (and writers waiting on them) held for one lease at most."""
        await self._ready()
        if self._hold is not None and self._hold_token == token:  # a renewal
            self._hold.cancel()
        else:
            await self._flush_lock.acquire()
            self._hold_token = token
        self._hold = asyncio.get_running_loop().call_later(seconds, self._end_hold)
        return True

    async def release_flushes(self, token: str = "") -> None:
        if self._hold_token == token:
            self._end_hold()

    def _end_hold(self) -> None:
        if self._hold is not None:
            self._hold.cancel()
            self._hold = None
            self._hold_token = None
            self._flush_lock.release()

    async def maintain_l2(self, deleted_fraction: float, small_fragments: int, small_rows: int,
                          retention_s: float) -> dict:
        """Compaction and version cleanup after a sweep (``L2Store.maintain``); Lance commits of
        other owners meanwhile are retried by both sides."""
        await self._ready()
        async with self._flush_lock:
            return await asyncio.to_thread(self.l2.maintain, deleted_fraction, small_fragments, small_rows,
                                           retention_s)

    async def purge_l2(self) -> dict:
        """L2's part of a purge (``L2Store.purge``), with this owner's flushes held off (the
        caller holds the others': every Lance write of an owner runs under its flush lock, so
        none is in flight while the purge removes the files no version refers to)."""
        await self._ready()
        async with self._flush_lock:
            return await asyncio.to_thread(self.l2.purge)

    async def check_l2(self, digests: bool = False) -> dict:
        """Compare the L2 rows of this owner's scopes with what the ledger's applied events say
        they must be: rows missing (deleted behind our back), rows the ledger does not know
        (added behind our back) and rows changed (edited behind our back): moved to another
        scope, or with ``digests`` (``audit.verify``; opening checks without) any governed
        column (``records.GOVERNED``: content, sensitivity, status, ...) other than the
        ledger's fold of the record says. Consistent under concurrent writes: no flush of this
        owner runs while it compares, and events not yet applied are in neither side."""
        await self._ready()
        await self._flush()
        async with self._flush_lock:
            expected = await self.ledger.l2_expected(digests)
            try:
                have = await asyncio.to_thread(self.l2.governed_digests if digests else self.l2.ids_and_scopes)
            except Exception as exc:  # a damaged data file: L2 is a projection, rebuilt from the ledger
                raise l2_unreadable(self.data_dir, exc) from exc
        col = "digest" if digests else "scope"

        def mine(tbl) -> list[tuple[str, object]]:
            ids, scopes, marks = (tbl.column(c).to_pylist() for c in ("memory_id", "scope", col))
            keep = {s for s in set(scopes) if self._mine(s)}
            return [(m, k) for m, s, k in zip(ids, scopes, marks) if s in keep]

        rows = mine(have)
        want, got = dict(mine(expected)), dict(rows)
        # A second row of one memory is a row the ledger does not know either (appended behind our
        # back: a cold recall would return the memory twice). Rows are written by id (replays upsert).
        twice = sorted(m for m, n in Counter(m for m, _ in rows).items() if n > 1) if len(rows) != len(got) else []
        missing, unknown = sorted(want.keys() - got.keys()), sorted(got.keys() - want.keys())
        changed = sorted(m for m, k in rows if m in want and want[m] is not None and k != want[m])
        return {"owner": self.index, "rows": len(rows), "missing": len(missing),
                "unknown": len(unknown) + len(rows) - len(got), "changed": len(changed),
                "example": (missing or unknown or twice or changed or [None])[0]}


def l2_unreadable(data_dir: str, exc: BaseException) -> StoreError:
    """L2 cannot be read: the error says what to do (it is a projection of the ledger)."""
    # Our own finding is said in full, a library's error by its type only (its text may quote
    # data). By name: importing store.lance_store here would load lancedb into every driver.
    why = str(exc) if type(exc).__name__ == "L2FileDamaged" else type(exc).__name__
    return StoreError(f"L2 under {data_dir}/l2 cannot be read ({why}); the ledger holds every change: rebuild "
                      f"L2 from it with `memactors rebuild --data {shlex.quote(data_dir)}`, then connect again")
