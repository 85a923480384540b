"""Calling the cores from the facade, on whichever host runs them: one place where the host's
errors become the project's (``host.typed``: on the Ray host, a memactors error raised inside
an actor comes back as itself, without Ray's wrapper and remote traceback; an actor that died
or is restarting is ``OwnerUnavailable`` once the retry window has passed; a timeout is
``Unavailable``). Never a Ray exception to the caller.

Attached to a folder's ``up`` runtime, the Ray host also watches that it still runs
(``ray_link.Link``): waits are cut into slices and a runtime that went away is ``Unavailable``
within about a second, not after the call timeout or the retry window.
"""

from __future__ import annotations

import time

from ..actors.packed import unpacked
from ..actors.refs import get_all
from ..core.errors import MemactorsError, OwnerUnavailable, RuntimeClosed, Unavailable

RETRY_WINDOW_S = 60.0  # how long a call keeps retrying while Ray restarts an owner


class Calls:
    def __init__(self, timeout_s: float, host) -> None:
        self.timeout_s = timeout_s
        self.host = host
        self.closed = False

    def check_open(self) -> None:
        if self.closed:
            raise RuntimeClosed("this runtime was closed; connect() again")
        if self.gone:
            raise self.host.link.gone()

    @property
    def gone(self) -> bool:
        """The attached runtime was seen gone (for good)."""
        return self.host.gone

    def still_there(self) -> bool:
        """False once the attached runtime is seen gone; True when not attached."""
        return self.host.still_there()

    def get(self, ref, timeout: float | None = None):
        """The answer of a call (a list of calls: a list), with typed errors."""
        self.check_open()
        timeout = timeout or self.timeout_s
        try:
            if isinstance(ref, list):  # each awaited before the first error is raised
                return [unpacked(v) for v in get_all(ref, timeout, self.host.get)]
            return unpacked(self.host.get(ref, timeout))
        except Exception as exc:  # noqa: BLE001 - the host's own kinds of failure, typed
            # Ray's wrapper of an actor's error is also an instance of that error: unwrap it first.
            if isinstance(exc, MemactorsError) and not self.host.is_failure(exc):
                raise
            if not self.still_there():
                raise self.host.link.gone() from None
            if self.closed:  # close() in another thread stopped what answered (a DuckDB read, an actor)
                raise _closed_under_call() from None
            raise self.host.typed(exc, timeout) from None

    def wait(self, refs: list, timeout: float | None = None) -> list:
        """Calls of ``refs`` that have answered (at least one, unless ``timeout`` passes first)."""
        return self.host.wait(refs, timeout or self.timeout_s)

    def retrying(self, make_ref, window_s: float = RETRY_WINDOW_S):
        """Call an actor; while Ray restarts a killed one, retry (idempotency keys make it safe)."""
        deadline = time.monotonic() + window_s
        delay = 0.05
        while True:
            try:
                return self.get(make_ref())
            except OwnerUnavailable:
                if not self.still_there():
                    raise self.host.link.gone() from None
                if time.monotonic() > deadline:
                    raise OwnerUnavailable("a scope owner stayed unreachable; nothing further was written") from None
                time.sleep(delay)
                delay = min(delay * 2, 1.0)


    async def aget(self, ref, timeout: float | None = None):
        """``get`` awaited on the caller's event loop (no thread blocks): a Ray object ref's
        future or the process host's, with the same typed errors."""
        import asyncio
        import concurrent.futures as cf

        self.check_open()
        timeout = timeout or self.timeout_s
        fut = ref.future() if hasattr(ref, "future") else ref  # a Ray ObjectRef: its concurrent future
        try:
            async with asyncio.timeout(timeout):  # (wait_for in 3.11 could lose the caller's cancel)
                out = await (asyncio.wrap_future(fut) if isinstance(fut, cf.Future) else fut)
            return unpacked(out)
        except MemactorsError as exc:
            if not self.host.is_failure(exc):  # (Ray's wrapper of an actor's error: typed below)
                raise
            raise self.host.typed(exc, timeout) from None
        except asyncio.CancelledError:
            if not fut.cancelled() or asyncio.current_task().cancelling():
                raise  # the caller's own task was cancelled: theirs to see
            raise _closed_under_call() from None  # the process host's loop stopped under it (close())
        except (asyncio.TimeoutError, cf.TimeoutError):
            raise Unavailable(f"no answer within {timeout:.0f} s; the call may still complete (retry with the same "
                              "idempotency keys)") from None
        except Exception as exc:  # noqa: BLE001 - the host's own kinds of failure, typed
            if self.closed:
                raise _closed_under_call() from None
            raise self.host.typed(exc, timeout) from None


def _closed_under_call() -> RuntimeClosed:
    return RuntimeClosed("this runtime was closed while the call was in flight (it may or may not have completed: "
                         "retry with the same idempotency keys after connect())")
