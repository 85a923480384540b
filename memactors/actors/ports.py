"""The Ray host's ports (``memactors.engine.ports``): a core's peers are named actors of the
data folder's namespace, and Ray's errors become the project's where a call is awaited."""

from __future__ import annotations

import asyncio

import ray

from ..core import errors
from ..core.errors import MemactorsError
from ..engine.naming import LEDGER, owner_name

DOWN = (ray.exceptions.RayActorError, ray.exceptions.ActorUnavailableError)


def unwrap(exc: BaseException) -> BaseException:
    """A memactors error raised inside an actor, without Ray's wrapper and remote traceback."""
    cause = getattr(exc, "cause", None)
    if isinstance(cause, MemactorsError):
        return type(cause)(*cause.args)
    return exc


def typed(exc: BaseException) -> MemactorsError:
    """A failure of another actor as the project's typed error, never Ray's wrapper: a
    memactors error raised there as itself; the actor down or restarting ``OwnerUnavailable``
    (callers retry it with the same keys); anything else a ``StoreError``."""
    cause = getattr(exc, "cause", exc)
    if isinstance(cause, MemactorsError):
        return type(cause)(*cause.args)
    if isinstance(cause, DOWN):
        return errors.OwnerUnavailable("an actor of this runtime is down or restarting; nothing further was done "
                                       "(retry with the same idempotency keys)")
    return errors.StoreError(f"an actor failed ({type(cause).__name__}); nothing further was done")


async def _awaited(ref):
    try:
        return await ref
    except (ray.exceptions.RayError, MemactorsError) as exc:
        raise typed(exc) from None


class RemotePort:
    """A named actor as a port: each call sent at once, its errors typed where it is awaited."""

    __slots__ = ("_handle",)

    def __init__(self, handle) -> None:
        self._handle = handle

    def __getattr__(self, name: str):
        method = getattr(self._handle, name)
        return lambda *args, **kw: asyncio.ensure_future(_awaited(method.remote(*args, **kw)))


class RayPeers:
    """The ledger writer and the owners of one data folder, found by name in its namespace."""

    def __init__(self, namespace: str) -> None:
        self.namespace = namespace

    def ledger(self) -> RemotePort:
        return RemotePort(ray.get_actor(LEDGER, namespace=self.namespace))

    def owner(self, index: int) -> RemotePort:
        return RemotePort(ray.get_actor(owner_name(index), namespace=self.namespace))
