"""How a core reaches its peers (the ledger writer, the other scope owners), whatever hosts it.

A core calls ``await self.ledger.append(batch)``, ``self.peers.owner(i).absorb(items)``: each call
returns an awaitable that is already under way (a core pipelines ledger commits while it goes on
deciding), and fails only with the project's typed errors. The Ray host's ports
(``memactors.actors.ports``) send the call to an actor; the ones here call an object living in
the same process and event loop (the process host, ``memactors.runtime.hosts``).
"""

from __future__ import annotations

import asyncio
import inspect


def started(out) -> asyncio.Future:
    """``out`` (a coroutine, an awaitable or a plain value) as a future already under way."""
    if inspect.isawaitable(out):
        return asyncio.ensure_future(out)
    fut = asyncio.get_running_loop().create_future()
    fut.set_result(out)
    return fut


class LocalPort:
    """An object of this process as a port: its methods, each call started at once."""

    __slots__ = ("_obj",)

    def __init__(self, obj) -> None:
        self._obj = obj

    def __getattr__(self, name: str):
        fn = getattr(self._obj, name)

        def call(*args, **kw) -> asyncio.Future:
            try:
                return started(fn(*args, **kw))
            except BaseException as exc:  # noqa: BLE001 - raised where it is awaited, as over Ray
                fut = asyncio.get_running_loop().create_future()
                fut.set_exception(exc)
                return fut

        return call


class LocalPeers:
    """The peers of cores living in one process: the ledger writer and the owners by index."""

    def __init__(self) -> None:
        self.objects: dict[str, object] = {}

    def ledger(self) -> LocalPort:
        return LocalPort(self.objects["ledger"])

    def owner(self, index: int) -> LocalPort:
        return LocalPort(self.objects[f"owner-{index}"])
