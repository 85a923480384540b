"""The Ray host's scope owner: a ``ScopeCore`` (``memactors.engine.core``) as a named async
actor, its peers and pools reached through Ray (DESIGN section 9). Everything it does is the
core's; this shell only tells it where the others are."""

from __future__ import annotations

import asyncio
import gc
import inspect

import ray

from ..core.config import Config
from ..engine.core import ScopeCore
from ..engine.naming import embed_worker_name, gate_worker_name
from .embed_pool import EmbedPool
from .gate_pool import GatePool
from .hot_socket import HotServer
from .packed import PACKED, Packed, unpacked
from .ports import RayPeers


class RayPools:
    """The prepare stage's pools of named workers (the core falls back to itself when none answers)."""

    def __init__(self, namespace: str, gate_workers: int, embed_workers: int) -> None:
        self.namespace, self.gates, self.embeds = namespace, gate_workers, embed_workers

    def gate_pool(self, gate, local_embedder) -> GatePool:
        return GatePool([gate_worker_name(i) for i in range(self.gates)], self.namespace, gate, local_embedder)

    def embed_pool(self, local) -> EmbedPool:
        return EmbedPool([embed_worker_name(i) for i in range(self.embeds)], self.namespace, local)


def freeze_survivors(phase: str, info: dict) -> None:
    """A ``gc.callbacks`` hook: what outlives a young collection leaves the collector's view.

    An owner's heap is its hot state: records and indexes that live as long as their scope is
    hot and hold no cycles. Python's collector scans each survivor of a young collection again
    when the middle generation fills, about every 10^6 survivors: a pause of 0.3-0.9 s at
    10^5-10^6 memories that collected nothing (measured: 0 objects in every such collection of
    a 200k store's build and sweep; the young ones found ~350 in all). Frozen after their young
    collection, survivors are never scanned again; a young collection still reclaims the cycles
    that die young (the only ones measured). The oldest generation, where survivors would
    otherwise go, is collected about once in 10^8 allocations at the owners' thresholds, and
    Ray's own ``gc.collect`` requests skip frozen objects."""
    if phase == "stop" and info["generation"] < 2:
        gc.freeze()


class _Shell:
    """The actor's class: a ``ScopeCore`` held, not inherited, so that Ray sees (and wraps with
    its per-call tracing hooks) only the core's public methods; the core's own calls among its
    parts (a decision per write, a fold per change) stay plain calls (measured: the wrappers
    were about 5% of an owner's time in a write stream)."""

    def __init__(self, index: int, data_dir: str, config: dict, namespace: str) -> None:
        rc = Config.from_dict(config).runtime
        self.core = ScopeCore(index, data_dir, config, RayPeers(namespace),
                              RayPools(namespace, rc.gate_workers, rc.embed_workers))
        self._hot: HotServer | None = None
        if freeze_survivors not in gc.callbacks:  # the actor's own process (never a caller's: the process host)
            gc.callbacks.append(freeze_survivors)

    async def hot_endpoint(self) -> dict | None:
        """Where a driver on this node reaches the direct path (``actors.hot_socket``), started
        on first ask; None if it cannot be (the driver uses plain calls)."""
        if self._hot is None:
            loop, core = asyncio.get_running_loop(), self.core

            def write(cols: dict, now: int) -> list:  # on the socket's thread: the write runs on the actor's loop
                return asyncio.run_coroutine_threadsafe(core.write_batch(cols, now), loop).result()

            try:
                self._hot = HotServer(core.recall_direct, write)
            except OSError:
                return None
        return self._hot.endpoint()


def _forward(name: str, fn):
    if name in PACKED:
        async def method(self, *args, **kwargs):
            return Packed(await getattr(self.core, name)(*map(unpacked, args), **kwargs))
    elif inspect.iscoroutinefunction(fn):
        async def method(self, *args, **kwargs):
            return await getattr(self.core, name)(*args, **kwargs)
    else:
        def method(self, *args, **kwargs):
            return getattr(self.core, name)(*args, **kwargs)
    method.__name__ = method.__qualname__ = name
    method.__doc__ = fn.__doc__
    return method


for _name, _fn in inspect.getmembers(ScopeCore, inspect.isfunction):
    if not _name.startswith("_"):
        setattr(_Shell, _name, _forward(_name, _fn))

ScopeOwner = ray.remote(num_cpus=0, max_concurrency=1000)(type("ScopeOwner", (_Shell,), {"__module__": __name__}))
