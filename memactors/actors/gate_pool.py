"""The gate as a stateless actor pool (DESIGN section 9): owners hand it write batches to prepare.

Preparing a write (``memactors.engine.prepare``: gate every field, derive hash and tokens,
embed with a light embedder) is CPU work with no state, so it scales out by configuration
(``gate_workers``) and off the owner's core. The pool is supervised here, not with
``ray.util.ActorPool`` (which keeps sending work to a dead actor): a failed call goes to the
next worker, and when none answers the owner prepares in process, since the code is pure.
Nothing is stored before it is scanned either way.
"""

from __future__ import annotations

import gc
import itertools
import logging

import ray

from ..embed import get_embedder
from ..gate import Gate, GatePolicy
from ..engine.prepare import prepare

log = logging.getLogger("memactors.gate_pool")


@ray.remote(num_cpus=0, max_restarts=-1)
class GateWorker:
    def __init__(self, policy: dict, embedder: tuple[str, int] | None = None) -> None:
        gc.set_threshold(50_000, 20, 100)
        self.gate = Gate(policy=GatePolicy.from_dict(policy))
        self.embedder = get_embedder(*embedder) if embedder else None

    def prepare_batch(self, cols: dict) -> dict:
        return prepare(self.gate, cols, self.embedder, cues=True)

    def scan_batch(self, texts: list[str], sources: list[str]) -> list:
        return [self.gate.scan(t, s) for t, s in zip(texts, sources)]


class GatePool:
    """Round-robin over named gate workers, with fallback to preparing in process."""

    def __init__(self, names: list[str], namespace: str, local: Gate, local_embedder) -> None:
        self.names = names
        self.namespace = namespace
        self.local = local
        self.local_embedder = local_embedder  # a callable: the in-process embedder, or None
        self._next = itertools.cycle(range(len(names))) if names else None

    async def prepare(self, cols: dict, *, remote: bool) -> dict:
        if remote:
            for _ in range(len(self.names)):
                name = self.names[next(self._next)]
                try:
                    worker = ray.get_actor(name, namespace=self.namespace)
                    return await worker.prepare_batch.remote(cols)
                except (ray.exceptions.RayActorError, ray.exceptions.ActorUnavailableError, ValueError):
                    log.warning("gate worker %s unavailable; trying the next", name)
        return prepare(self.local, cols, self.local_embedder())
