"""The Ray host's ledger writer: a ``LedgerCore`` (``memactors.engine.ledger``) as the data
folder's one named actor; purges reach the owners by name, rebuilds fold in Ray tasks."""

from __future__ import annotations

import ray

from ..engine.ledger import LedgerCore
from .ports import RayPeers
from .rebuild_tasks import rebuild


@ray.remote(num_cpus=0, max_restarts=-1, max_concurrency=1000)
class LedgerWriter(LedgerCore):
    def __init__(self, data_dir: str, config: dict, namespace: str = "") -> None:
        super().__init__(data_dir, config, RayPeers(namespace), rebuild)
