"""The Ray host (DESIGN section 9), the default: the cores run as named Ray actors of the data
folder's namespace (``memactors.runtime.startup``), found by any driver or worker attached to
the cluster; sweeps plan and rebuilds fold in Ray tasks. What simulations, sweeps and
clusters use."""

from __future__ import annotations

import logging

import ray

from ..core import errors
from ..core.errors import MemactorsError, OwnerUnavailable, Unavailable
from ..actors.ports import unwrap
from . import startup

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


class RayHost:
    name = "ray"

    def __init__(self, address: str | None, namespace: str) -> None:
        self.started_ray = False
        if not ray.is_initialized():
            # "local" unless told otherwise: never join a stray cluster by accident.
            ray.init(address=address or "local", namespace=namespace, include_dashboard=False, log_to_driver=False,
                     configure_logging=False)
            self.started_ray = True

    def start(self, data_dir: str, config, namespace: str, *, detached: bool):
        return startup.start(data_dir, config, namespace, detached=detached)

    def stop(self, actors) -> None:
        startup.stop(actors)

    def shutdown(self) -> None:
        """Stop the Ray this runtime started (none it joined)."""
        if self.started_ray:
            ray.shutdown()

    def get(self, ref, timeout: float | None):
        return ray.get(ref, timeout=timeout)

    def wait(self, refs: list, timeout: float | None) -> list:
        done, _ = ray.wait(refs, num_returns=1, timeout=timeout)
        return done

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

    def compiled(self, owner, timeout_s: float):
        from .hot_path import CompiledRecall

        return CompiledRecall(owner, timeout_s)

    metrics = True  # counters exported as gauges (``gauge``)

    def gauge(self, name: str, description: str, tags: tuple = ()):
        from ray.util.metrics import Gauge

        return Gauge(name, description=description, tag_keys=tags)
