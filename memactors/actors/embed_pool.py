"""Embedding as a stateless actor pool: for heavy embedders (MiniLM), owners send batches here
instead of loading a model each. Supervised like the gate pool: a failed call goes to the
next worker, and with none left the owner embeds in process."""

from __future__ import annotations

import itertools
import logging

import numpy as np
import ray

from ..embed import get_embedder

log = logging.getLogger("memactors.embed_pool")


@ray.remote(num_cpus=0, max_restarts=-1)
class EmbedWorker:
    def __init__(self, name: str, dim: int) -> None:
        self.embedder = get_embedder(name, dim)

    def embed(self, texts: list[str]) -> np.ndarray:
        return self.embedder.embed(texts)


class EmbedPool:
    def __init__(self, names: list[str], namespace: str, local) -> None:
        self.names = names
        self.namespace = namespace
        self.local = local  # a callable returning the in-process embedder (built on first need)
        self._next = itertools.cycle(range(len(names))) if names else None

    async def embed(self, texts: list[str]) -> np.ndarray:
        for _ in range(len(self.names)):
            name = self.names[next(self._next)]
            try:
                return await ray.get_actor(name, namespace=self.namespace).embed.remote(texts)
            except (ray.exceptions.RayActorError, ray.exceptions.ActorUnavailableError, ValueError):
                log.warning("embed worker %s unavailable; trying the next", name)
        return self.local().embed(texts)
