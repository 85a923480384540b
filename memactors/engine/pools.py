"""The prepare stage in the caller's process (the process host): the gate and the embedder
called in place. The Ray host's pools of stateless workers (``memactors.actors.gate_pool``,
``embed_pool``) have the same two methods."""

from __future__ import annotations

from .prepare import prepare


class LocalGatePool:
    def __init__(self, gate, local_embedder) -> None:
        self.gate = gate
        self.local_embedder = local_embedder  # a callable: the in-process embedder, or None

    async def prepare(self, cols: dict, *, remote: bool) -> dict:
        return prepare(self.gate, cols, self.local_embedder())


class LocalEmbedPool:
    def __init__(self, local) -> None:
        self.local = local  # a callable returning the embedder (built on first need)

    async def embed(self, texts: list[str]):
        return self.local().embed(texts)


class LocalPools:
    """What a core asks its host for: ``gate_pool`` and ``embed_pool``, here in process."""

    @staticmethod
    def gate_pool(gate, local_embedder) -> LocalGatePool:
        return LocalGatePool(gate, local_embedder)

    @staticmethod
    def embed_pool(local) -> LocalEmbedPool:
        return LocalEmbedPool(local)
