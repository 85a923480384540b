"""The process host (DESIGN section 9): the same cores (``ScopeCore``, ``LedgerCore``), ledger
and Lance files inside the caller's process, no Ray. One agent process, notebooks, CLI verbs,
most tests: a runtime opens in a fraction of a second and costs one process.

The cores run on one event loop in a thread of their own. The facade calls them through
``LocalHandle``s, which look like Ray actor handles (``handle.method.remote(...)`` returns a
future), so the facade's code is the same on both hosts; the cores reach each other through
``engine.ports.LocalPort`` on that loop.
"""

from __future__ import annotations

import asyncio
import concurrent.futures as cf
import inspect
import os
import sys
import threading
import weakref
from dataclasses import dataclass

from ..core.errors import RuntimeClosed, Unavailable


class _Method:
    __slots__ = ("_loop", "_fn")

    def __init__(self, loop, fn) -> None:
        self._loop, self._fn = loop, fn

    def remote(self, *args, **kw) -> cf.Future:
        fn = self._fn

        if not self._loop.is_running() or self._loop in _STOPPING:  # a call sent now would never be answered
            raise RuntimeClosed("this runtime was closed; connect() again")

        async def run():
            out = fn(*args, **kw)
            return await out if inspect.isawaitable(out) else out

        return asyncio.run_coroutine_threadsafe(run(), self._loop)


class LocalHandle:
    """An object on the host's loop, called like a Ray actor: ``h.method.remote(*args)``."""

    def __init__(self, obj, loop) -> None:
        self._obj, self._loop = obj, loop

    def __getattr__(self, name: str) -> _Method:
        return _Method(self._loop, getattr(self._obj, name))


class DirectRecall:
    """The hot recall path of the process host: the core's read-only recall called in the
    caller's thread, as the Ray host's socket thread calls it (no hop to the loop). It reads
    the hot state through indexes built under the hot cache's lock: never a batch half committed."""

    def __init__(self, owner: LocalHandle) -> None:
        self._core = owner._obj

    def call(self, args: dict) -> dict | None:
        out = self._core.recall_direct(args)
        return None if out.get("not_ready") else out

    def teardown(self) -> None:
        pass


@dataclass
class LocalActors:
    ledger: LocalHandle
    owners: list
    gate_workers: list
    embed_workers: list
    loop: object
    thread: object

    def all(self) -> list:
        return [*self.owners, self.ledger]


class ProcessHost:
    name = "process"
    detached = False
    link = None  # never attached to another process's runtime
    gone = False

    def __init__(self) -> None:
        self.cpus = len(os.sched_getaffinity(0))

    def size(self, rc) -> None:
        """``num_owners = 0``: two cores on the one loop (as many as the Ray host's default had;
        they share a thread, so CPUs do not size them); no gate workers (pools are in process)."""
        if rc.num_owners == 0:
            rc.num_owners = 2
        if rc.gate_workers < 0:
            rc.gate_workers = 0

    def still_there(self) -> bool:
        return True

    # --- start and stop ---------------------------------------------------------------------

    def start(self, data_dir: str, config, namespace: str, *, detached: bool) -> LocalActors:
        """The folder's ledger writer and owners, in this process. A folder the ledger cannot
        open (locked, tampered, no key) raises its typed error and leaves nothing running."""
        from ..engine.core import ScopeCore
        from ..engine.ledger import LedgerCore
        from ..engine.pools import LocalPools
        from ..engine.ports import LocalPeers
        from ..engine.rebuild import rebuild

        loop = asyncio.new_event_loop()
        thread = threading.Thread(target=loop.run_forever, name="memactors-process-host", daemon=True)
        thread.start()
        cfg = config.to_dict()
        peers = LocalPeers()

        async def build():
            ledger = LedgerCore(data_dir, cfg, peers, rebuild)
            ledger.ready()
            peers.objects["ledger"] = ledger
            owners = []
            for i in range(config.runtime.num_owners):
                owners.append(ScopeCore(i, data_dir, cfg, peers, LocalPools))
                peers.objects[f"owner-{i}"] = owners[-1]
            # Each opens L2 and replays the ledger. All of them finish before a failure is raised:
            # the ledger's connection refuses to close under another owner's read still running.
            done = await asyncio.gather(*[o.stats() for o in owners], return_exceptions=True)
            failed = next((r for r in done if isinstance(r, BaseException)), None)
            if failed is not None:
                try:
                    await ledger.shutdown()
                except Exception:  # noqa: BLE001 - the owner's error is the one to report
                    pass
                raise failed
            return ledger, owners

        try:
            ledger, owners = asyncio.run_coroutine_threadsafe(build(), loop).result()
        except BaseException:
            _stop_loop(loop, thread)
            raise
        return LocalActors(LocalHandle(ledger, loop), [LocalHandle(o, loop) for o in owners], [], [], loop, thread)

    def stop(self, actors: LocalActors) -> None:
        """End the owners' flush loops, checkpoint the ledger and release the folder's lock,
        then stop the loop."""
        for o in actors.owners:
            try:
                o.stop_flushing.remote().result(timeout=30)
            except Exception:  # noqa: BLE001 - the loop stops below either way
                pass
        try:
            actors.ledger.shutdown.remote().result(timeout=30)
        except Exception:  # noqa: BLE001 - the loop stops below either way
            pass
        _stop_loop(actors.loop, actors.thread)

    def shutdown(self) -> None:
        pass

    # --- calls ------------------------------------------------------------------------------

    def get(self, ref, timeout: float | None):
        try:
            return ref.result(timeout=timeout)
        except cf.TimeoutError:
            raise Unavailable(f"no answer within {timeout or 0:.0f} s; the call may still complete (retry with "
                              "the same idempotency keys)") from None

    def wait(self, refs: list, timeout: float | None) -> list:
        done, _ = cf.wait(refs, timeout=timeout, return_when=cf.FIRST_COMPLETED)
        return list(done)

    def typed(self, exc: BaseException, timeout_s: float | None = None) -> BaseException:
        """The cores raise the project's errors themselves; a DuckDB error that still gets out
        (the ledger file damaged under a read no core expected to fail) is typed here."""
        duckdb = sys.modules.get("duckdb")
        if duckdb is not None and isinstance(exc, duckdb.Error):
            from ..store.ledger_checks import ledger_error

            return ledger_error(exc, "of this data folder")
        return exc

    def is_failure(self, exc: BaseException) -> bool:
        return False

    # --- work the facade hands out ------------------------------------------------------------

    def plan(self, l2_path: str, now_us: int, cfg, workers: int | None):
        from ..actors.sweep_plan import plan_in_process

        return plan_in_process(l2_path, now_us, cfg, workers=workers)

    def rebuild(self, data_dir: str, cfg, workers: int | None) -> dict:
        from ..engine.rebuild import in_processes, rebuild

        return rebuild(data_dir, cfg, workers=workers, fold=in_processes, cpus=os.cpu_count() or 1)

    def direct(self, owner, timeout_s: float):
        return DirectRecall(owner)

    @staticmethod
    def send_recalls(owner, reqs: list):
        """Recall requests to a core: as they are (it shares this process)."""
        return owner.recall_many.remote(reqs)

    @staticmethod
    def send_writes(owner, reqs: list, now: int, order: tuple | None = None):
        """Checked write requests to a core: as they are (it shares this process; the facade
        validated them once). ``order``: the part's place in its call (``engine.turns``)."""
        return owner.submit.remote(reqs, now, order)

    metrics = False  # counters exported as gauges (``gauge``)

    def gauge(self, name: str, description: str, tags: tuple = ()):
        return None


_STOPPING: weakref.WeakSet = weakref.WeakSet()  # loops being stopped: no call is taken in


def _stop_loop(loop, thread) -> None:
    async def cancel_all():
        me = asyncio.current_task()
        for _ in range(10):  # again for a call that got in as the loop was marked
            tasks = [t for t in asyncio.all_tasks() if t is not me]
            if not tasks:
                return
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    _STOPPING.add(loop)

    try:
        asyncio.run_coroutine_threadsafe(cancel_all(), loop).result(timeout=10)
    except Exception:  # noqa: BLE001 - stopping regardless
        pass
    loop.call_soon_threadsafe(loop.stop)
    thread.join(timeout=10)
    if not thread.is_alive():
        loop.close()
