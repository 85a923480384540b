"""Starting (or finding) a data folder's actors: the ledger writer, the gate and embedding
pools and the scope owners, all named in the folder's own Ray namespace, so any driver or
worker attached to the cluster finds the same ones."""

from __future__ import annotations

from dataclasses import dataclass

import ray

from ..actors.embed_pool import EmbedWorker
from ..actors.gate_pool import GateWorker
from ..actors.ledger_writer import LedgerWriter
from ..actors.naming import LEDGER, embed_worker_name, gate_worker_name, owner_name
from ..actors.owner import ScopeOwner
from ..actors.owner_flush import l2_unreadable
from ..core.config import Config
from ..core.errors import MemactorsError
from .calls import unwrap


@dataclass
class Actors:
    ledger: object
    owners: list
    gate_workers: list
    embed_workers: list

    def all(self) -> list:
        return [*self.owners, *self.gate_workers, *self.embed_workers, self.ledger]


def start(data_dir: str, config: Config, namespace: str, *, detached: bool) -> Actors:
    """Start or find this folder's actors. The ledger writer opens the folder first: a folder
    it cannot open (locked, read-only, tampered, no key) raises its typed error and leaves
    nothing running."""
    cfg = config.to_dict()
    lifetime = "detached" if detached else None
    ledger = LedgerWriter.options(name=LEDGER, namespace=namespace, get_if_exists=True,
                                  lifetime=lifetime).remote(data_dir, cfg, namespace)
    try:
        ray.get(ledger.ready.remote())
    except (ray.exceptions.RayTaskError, ray.exceptions.RayActorError) as exc:
        ray.kill(ledger, no_restart=True)
        raise unwrap(exc) from None
    rc = config.runtime
    embed = (config.embedder.name, config.embedder.dim) if not rc.embed_workers else None
    gates = [GateWorker.options(name=gate_worker_name(i), namespace=namespace, get_if_exists=True,
                                lifetime=lifetime).remote(config.gate, embed)
             for i in range(rc.gate_workers)]
    embeds = [EmbedWorker.options(name=embed_worker_name(i), namespace=namespace, get_if_exists=True,
                                  lifetime=lifetime).remote(config.embedder.name, config.embedder.dim)
              for i in range(rc.embed_workers)]
    owners = [ScopeOwner.options(name=owner_name(i), namespace=namespace, get_if_exists=True, lifetime=lifetime,
                                 max_restarts=rc.owner_max_restarts).remote(i, data_dir, cfg, namespace)
              for i in range(rc.num_owners)]
    actors = Actors(ledger, owners, gates, embeds)
    try:  # owners open L2 and replay the ledger at start: one that cannot leaves nothing running
        ray.get([o.stats.remote() for o in owners])
    except (ray.exceptions.RayTaskError, ray.exceptions.RayActorError) as exc:
        stop(actors)
        raise _owner_failed(exc, data_dir) from None
    return actors


def _owner_failed(exc: BaseException, data_dir: str) -> BaseException:
    """Why a scope owner could not start, typed. Anything but our own error is L2 unreadable:
    it is a projection of the ledger, so the advice is the rebuild."""
    out = unwrap(exc)
    if isinstance(out, MemactorsError):
        return out
    return l2_unreadable(data_dir, getattr(exc, "cause", None) or exc)


def stop(actors: Actors) -> None:
    """Checkpoint the ledger and release the folder's lock, then stop every actor."""
    try:
        ray.get(actors.ledger.shutdown.remote(), timeout=30)
    except Exception:  # noqa: BLE001 - killing it below releases the lock as well
        pass
    for a in actors.all():
        ray.kill(a, no_restart=True)
