"""Calling actors from the facade: one place where Ray's errors become the project's.

A memactors error raised inside an actor comes back as itself (without Ray's wrapper and
remote traceback); an actor that died or is restarting is ``OwnerUnavailable`` once the retry
window has passed; a timeout is ``Unavailable``. Never a Ray exception to the caller.

Attached to a folder's ``up`` runtime, calls also watch that it still runs (``link``): waits
are cut into slices of ``WATCH_S`` and a runtime that went away is ``Unavailable`` within about
that long, not after the call timeout or the retry window.
"""

from __future__ import annotations

import logging
import time

import ray

from ..actors.refs import get_all
from ..core import errors
from ..core.errors import MemactorsError, OwnerUnavailable, RuntimeClosed, Unavailable

log = logging.getLogger("memactors.runtime")
RETRY_WINDOW_S = 60.0  # how long a call keeps retrying while Ray restarts an owner
WATCH_S = 1.0  # attached: how often a waiting call checks that the runtime still runs
_DOWN = (ray.exceptions.RayActorError, ray.exceptions.ActorUnavailableError)


def unwrap(exc: BaseException) -> BaseException:
    """A memactors error raised inside an actor, without Ray's wrapper and remote traceback."""
    cause = getattr(exc, "cause", None)
    if isinstance(cause, MemactorsError):
        return type(cause)(*cause.args)
    return exc


class Calls:
    def __init__(self, timeout_s: float, link=None) -> None:
        self.timeout_s = timeout_s
        self.closed = False
        self.link = link  # ray_link.Link when attached to an `up` runtime, else None
        self.gone = False  # that runtime went away

    def check_open(self) -> None:
        if self.closed:
            raise RuntimeClosed("this runtime was closed; connect() again")
        if self.gone:
            raise self.link.gone()

    def still_there(self) -> bool:
        """False (for good) once the attached runtime is seen gone; True when not attached."""
        if self.link is not None and not self.gone and not self.link.alive():
            self.gone = True
        return not self.gone

    def wait(self, refs: list, num_returns: int, timeout: float) -> tuple[list, list]:
        """ray.wait; attached, in slices, raising Unavailable once the runtime is gone."""
        if self.link is None:
            return ray.wait(refs, num_returns=num_returns, timeout=timeout)
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            done, rest = ray.wait(refs, num_returns=num_returns, timeout=max(0.0, min(WATCH_S, left)))
            if len(done) >= num_returns or left <= WATCH_S:
                return done, rest
            if not self.still_there():
                raise self.link.gone()

    def get(self, ref, timeout: float | None = None):
        """ray.get with typed errors (a list of refs comes back as a list)."""
        self.check_open()
        timeout = timeout or self.timeout_s
        left = timeout
        try:
            if self.link is not None:
                deadline = time.monotonic() + timeout
                refs = ref if isinstance(ref, list) else [ref]
                if refs:
                    self.wait(refs, len(refs), timeout)
                left = max(0.0, deadline - time.monotonic())
            if isinstance(ref, list):  # each awaited before the first error is raised
                return get_all(ref, timeout=left)
            return ray.get(ref, timeout=left)
        except ray.exceptions.RayError as exc:
            if not self.still_there():
                raise self.link.gone() from None
            raise typed(exc, timeout) from None

    def retrying(self, make_ref, window_s: float = RETRY_WINDOW_S):
        """Call an actor; while Ray restarts a killed one, retry (idempotency keys make it safe)."""
        deadline = time.monotonic() + window_s
        delay = 0.05
        while True:
            try:
                return self.get(make_ref())
            except OwnerUnavailable:
                if not self.still_there():
                    raise self.link.gone() from None
                if time.monotonic() > deadline:
                    raise OwnerUnavailable("a scope owner stayed unreachable; nothing further was written") from None
                time.sleep(delay)
                delay = min(delay * 2, 1.0)


def typed(exc: BaseException, timeout_s: float | None = None) -> BaseException:
    """The project's error for a Ray error (``exc`` is returned as is when it is neither):
    a memactors error raised in an actor as itself, an actor down or restarting as
    ``OwnerUnavailable``, a timeout as ``Unavailable``, any other failure as ``StoreError``."""
    if isinstance(exc, ray.exceptions.GetTimeoutError):
        return Unavailable(f"no answer within {timeout_s or 0:.0f} s; the call may still complete (retry with the "
                           "same idempotency keys)")
    if isinstance(exc, ray.exceptions.RayTaskError):
        out = unwrap(exc)
        if isinstance(out, MemactorsError):
            return out
        cause = getattr(exc, "cause", exc)
        if isinstance(cause, _DOWN):  # an actor this actor called died: the same for the caller
            return typed(cause)
        log.error("an actor failed: %s", _first_line(cause))  # for the operator's log, not the caller
        return errors.StoreError(f"an actor failed ({type(cause).__name__}); nothing further was done")
    if isinstance(exc, _DOWN):
        return OwnerUnavailable("an actor of this runtime is down or restarting; nothing further was done")
    return exc


def _first_line(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {(str(exc).splitlines() or [''])[0][:300]}"
