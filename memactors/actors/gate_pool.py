"""The gate as a stateless actor pool (DESIGN section 9): owners hand it batches of texts.

Scanning is CPU work with no state, so it scales out by configuration (``gate_workers``) and
off the owner's core. The pool is supervised here, not with ``ray.util.ActorPool`` (which keeps
sending work to a dead actor): a failed call goes to the next worker, and when none answers the
owner scans in process, since the gate is pure code. Nothing is stored before it is scanned
either way.
"""

from __future__ import annotations

import gc
import itertools
import logging

import ray

from ..gate import Gate, GatePolicy

log = logging.getLogger("memactors.gate_pool")


@ray.remote(num_cpus=0, max_restarts=-1)
class GateWorker:
    def __init__(self, policy: dict) -> None:
        gc.set_threshold(50_000, 20, 100)
        self.gate = Gate(policy=GatePolicy.from_dict(policy))

    def scan_batch(self, texts: list[str], sources: list[str]) -> list:
        return [self.gate.scan(t, s) for t, s in zip(texts, sources)]


class GatePool:
    """Round-robin over named gate workers, with fallback to an in-process gate."""

    def __init__(self, names: list[str], namespace: str, local: Gate) -> None:
        self.names = names
        self.namespace = namespace
        self.local = local
        self._next = itertools.cycle(range(len(names))) if names else None

    async def scan(self, texts: list[str], sources: list[str]) -> list:
        for _ in range(len(self.names)):
            name = self.names[next(self._next)]
            try:
                worker = ray.get_actor(name, namespace=self.namespace)
                return await worker.scan_batch.remote(texts, sources)
            except (ray.exceptions.RayActorError, ray.exceptions.ActorUnavailableError, ValueError):
                log.warning("gate worker %s unavailable; trying the next", name)
        return [self.local.scan(t, s) for t, s in zip(texts, sources)]
