"""The Ray host (DESIGN section 9), the default: the cores run as named Ray actors of the data
folder's namespace (``memactors.runtime.startup``), found by any driver or worker attached to
the cluster; sweeps plan and rebuilds fold in Ray tasks. What simulations, sweeps and
clusters use."""

from __future__ import annotations

import logging
import time

import ray

from ..core import errors
from ..core.errors import MemactorsError, OwnerUnavailable, Unavailable
from ..actors.packed import Packed
from ..actors.ports import unwrap
from . import ray_link, startup
from .write_batches import columns

log = logging.getLogger("memactors.runtime")
_DOWN = (ray.exceptions.RayActorError, ray.exceptions.ActorUnavailableError)


def _typed(exc: BaseException, timeout_s: float | None = None) -> BaseException:
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
            return _typed(cause)
        log.error("an actor failed: %s", _first_line(cause))  # for the operator's log, not the caller
        return errors.StoreError(f"an actor failed ({type(cause).__name__}); nothing further was done")
    if isinstance(exc, _DOWN):
        return OwnerUnavailable("an actor of this runtime is down or restarting; nothing further was done")
    return exc


def _first_line(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {(str(exc).splitlines() or [''])[0][:300]}"


WATCH_S = 1.0  # attached to an `up` runtime: how often a waiting call checks that it still runs


class RayHost:
    name = "ray"

    def __init__(self, address: str | None, namespace: str, data_dir: str, shown: str, detached: bool) -> None:
        self.started_ray = False
        self.link = None  # ray_link.Link when attached to the folder's `up` runtime
        self.gone = False  # that runtime was seen gone
        if not ray.is_initialized():
            # A new local Ray unless told otherwise: never join a stray cluster by accident.
            self.link = ray_link.join(data_dir, shown, address, namespace, detached)
            self.started_ray = True

    def size(self, rc) -> None:
        """``num_owners = 0`` / ``gate_workers = -1``: sized to the cluster's CPUs."""
        startup.sized(rc)

    def start(self, data_dir: str, config, namespace: str, *, detached: bool):
        return startup.start(data_dir, config, namespace, detached=detached)

    def still_there(self) -> bool:
        """False (for good) once the attached runtime is seen gone; True when not attached."""
        if self.link is not None and not self.gone and not self.link.alive():
            self.gone = True
        return not self.gone

    def _watch(self, refs: list, num_returns: int, timeout: float | None) -> list:
        """ray.wait; attached, in slices of WATCH_S, raising Unavailable once the runtime is gone."""
        if self.link is None:
            return ray.wait(refs, num_returns=num_returns, timeout=timeout)[0]
        deadline = time.monotonic() + (timeout if timeout is not None else 1e9)
        while True:
            left = deadline - time.monotonic()
            done, _ = ray.wait(refs, num_returns=num_returns, timeout=max(0.0, min(WATCH_S, left)))
            if len(done) >= num_returns or left <= WATCH_S:
                return done
            if not self.still_there():
                raise self.link.gone()

    def stop(self, actors) -> None:
        startup.stop(actors)

    def shutdown(self) -> None:
        """Stop the Ray this runtime started (none it joined)."""
        if self.started_ray:
            ray.shutdown()

    def get(self, ref, timeout: float | None):
        if self.link is not None and timeout is not None:
            refs = ref if isinstance(ref, list) else [ref]
            start = time.monotonic()
            if refs:
                self._watch(refs, len(refs), timeout)
            timeout = max(0.0, timeout - (time.monotonic() - start))
        return ray.get(ref, timeout=timeout)

    def wait(self, refs: list, timeout: float | None) -> list:
        return self._watch(refs, 1, timeout)

    def typed(self, exc: BaseException, timeout_s: float | None = None) -> BaseException:
        return _typed(exc, timeout_s)

    def is_failure(self, exc: BaseException) -> bool:
        """Whether ``exc`` is Ray's (an actor died mid-call), to be typed before it is shown."""
        return isinstance(exc, ray.exceptions.RayError)

    def plan(self, l2_path: str, now_us: int, cfg, workers: int | None):
        from ..actors import sweeper

        return sweeper.plan(l2_path, now_us, cfg, workers=workers)

    def rebuild(self, data_dir: str, cfg, workers: int | None) -> dict:
        from ..actors.rebuild_tasks import rebuild

        return rebuild(data_dir, cfg, workers=workers)

    def direct(self, owner, timeout_s: float):
        from ..actors.hot_socket import HotClient

        return HotClient(owner, timeout_s)

    @staticmethod
    def send_recalls(owner, reqs: list):
        """Recall requests to an owner actor: one pickle (``actors.packed``)."""
        return owner.recall_many.remote(Packed(reqs))

    @staticmethod
    def send_writes(owner, reqs: list, now: int, order: tuple | None = None):
        """Checked write requests to an owner actor: as columns, which it validates again (any
        Ray client may call it). ``order``: the part's place in its call (``engine.turns``)."""
        return owner.write_batch.remote(columns(reqs), now, order)

    metrics = True  # counters exported as gauges (``gauge``)

    def gauge(self, name: str, description: str, tags: tuple = ()):
        from ray.util.metrics import Gauge

        return Gauge(name, description=description, tag_keys=tags)
