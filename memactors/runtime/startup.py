"""Starting (or finding) a data folder's actors: the ledger writer, the gate and embedding
pools and the scope owners, all named in the folder's own Ray namespace, so any driver or
worker attached to the cluster finds the same ones."""

from __future__ import annotations

import time
from dataclasses import dataclass

import ray
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

from ..actors.embed_pool import EmbedWorker
from ..actors.gate_pool import GateWorker
from ..actors.ledger_writer import LedgerWriter
from ..engine.naming import LEDGER, embed_worker_name, gate_worker_name, owner_name
from ..actors.owner import ScopeOwner
from ..engine.flush import l2_unreadable
from ..core.config import Config
from ..core.errors import MemactorsError
from ..actors.ports import unwrap


@dataclass
class Actors:
    ledger: object
    owners: list
    gate_workers: list
    embed_workers: list

    def all(self) -> list:
        return [*self.owners, *self.gate_workers, *self.embed_workers, self.ledger]


def sized(rc) -> None:
    """Resolve ``[runtime] num_owners = 0`` and ``gate_workers = -1`` (the defaults) from the
    Ray cluster's CPUs: one owner per two CPUs, 1 to 8, and a gate worker per two owners, at
    least one. On 2 cores one owner wrote no slower than two and costs ~300 MB less (RESULTS.md);
    a client attached to an `up` runtime sees the same cluster, so it finds the same owners."""
    if rc.num_owners == 0:
        rc.num_owners = max(1, min(int(ray.cluster_resources().get("CPU", 1)) // 2, 8))
    if rc.gate_workers < 0:
        rc.gate_workers = max(1, rc.num_owners // 2)


def start(data_dir: str, config: Config, namespace: str, *, detached: bool) -> Actors:
    """Start or find this folder's actors. The ledger writer opens the folder first: a folder
    it cannot open (locked, read-only, tampered, no key) raises its typed error and leaves
    nothing running.

    Every actor's process is started at once (each is a Ray worker importing memactors, about a
    second of CPU: one after another they took ~4 s on 2 cores); only the ledger writer touches
    the folder as it starts, taking its lock. The others are asked for nothing until it is ready:
    an owner opens L2 and replays the ledger when it is first called."""
    cfg = config.to_dict()
    lifetime = "detached" if detached else None
    rc = config.runtime
    embed = (config.embedder.name, config.embedder.dim) if not rc.embed_workers else None
    place = _spread()
    makes = {
        "ledger": [lambda: LedgerWriter.options(name=LEDGER, namespace=namespace, get_if_exists=True,
                                                lifetime=lifetime).remote(data_dir, cfg, namespace)],
        "gates": [lambda i=i: GateWorker.options(name=gate_worker_name(i), namespace=namespace, get_if_exists=True,
                                                 lifetime=lifetime).remote(config.gate, embed)
                  for i in range(rc.gate_workers)],
        "embeds": [lambda i=i: EmbedWorker.options(name=embed_worker_name(i), namespace=namespace,
                                                   get_if_exists=True, lifetime=lifetime).remote(
                                                       config.embedder.name, config.embedder.dim)
                   for i in range(rc.embed_workers)],
        "owners": [lambda i=i: ScopeOwner.options(
            name=owner_name(i), namespace=namespace, get_if_exists=True, lifetime=lifetime,
            max_restarts=rc.owner_max_restarts, **place(i)).remote(i, data_dir, cfg, namespace)
            for i in range(rc.num_owners)],
    }
    names = [LEDGER, *map(gate_worker_name, range(rc.gate_workers)),
             *map(embed_worker_name, range(rc.embed_workers)), *map(owner_name, range(rc.num_owners))]
    deadline = time.monotonic() + 30.0
    made = {k: [_fresh(m, deadline) for m in ms] for k, ms in makes.items()}  # the ledger's first: the others look it up
    try:
        [ledger] = _ready(made["ledger"], makes["ledger"], deadline, lambda a: a.ready.remote())
    except (ray.exceptions.RayTaskError, ray.exceptions.RayActorError) as exc:
        for a in [*made["gates"], *made["embeds"], *made["owners"]]:
            ray.kill(a, no_restart=True)  # none of them has touched the folder
        _released(names, namespace)
        raise unwrap(exc) from None
    actors = Actors(ledger, [], [], [])
    try:
        actors.gate_workers = _ready(made["gates"], makes["gates"], deadline)
        actors.embed_workers = _ready(made["embeds"], makes["embeds"], deadline)
    except BaseException:
        for a in made["owners"]:
            ray.kill(a, no_restart=True)
        stop(actors)
        _released(names, namespace)
        raise
    try:  # owners open L2 and replay the ledger at start: one that cannot leaves nothing running
        actors.owners = _ready(made["owners"], makes["owners"], deadline, lambda a: a.stats.remote())
    except (ray.exceptions.RayTaskError, ray.exceptions.RayActorError) as exc:
        stop(actors)
        _released(names, namespace)
        raise _owner_failed(exc, data_dir) from None
    return actors


def _released(names: list[str], namespace: str, timeout: float = 10.0) -> None:
    """Wait (bounded) until Ray has freed each of these actor names: ``ray.kill`` returns before
    the actor is gone, and a start that failed must leave nothing running when it raises (a
    caller that checks, or connects again at once, would otherwise still find one)."""
    deadline = time.monotonic() + timeout
    for name in names:
        while time.monotonic() < deadline:
            try:
                ray.get_actor(name, namespace=namespace)
            except ValueError:  # no live actor of that name
                break
            time.sleep(0.05)


def _spread():
    """Owner i's placement options: on a cluster, node i modulo the nodes with CPUs (soft: on
    another node if that one is gone), so the owners and the hot state they hold are spread over
    the nodes; one node: Ray's default. Ray's SPREAD does not promise that for actors that need
    no CPU, and honours a soft node affinity only for an actor that asks for some resource: a
    token 1 MiB of memory, which blocks no task."""
    nodes = sorted(n["NodeID"] for n in ray.nodes() if n.get("Alive") and n.get("Resources", {}).get("CPU", 0) > 0)
    if len(nodes) < 2:
        return lambda i: {}
    return lambda i: {"scheduling_strategy": NodeAffinitySchedulingStrategy(nodes[i % len(nodes)], soft=True),
                      "memory": 1 << 20}


def _fresh(make, deadline: float):
    """``make()``, retried while Ray frees a name still held by a dying actor."""
    while True:
        try:
            return make()
        except Exception:  # noqa: BLE001 - Ray's own errors for a name being torn down vary
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def _ready(actors: list, makes: list, deadline: float, probe=lambda a: a.__ray_ready__.remote()) -> list:
    """The actors ``makes`` started or found, each answering ``probe``. One found by name may be
    dying: its owner was a driver that was killed (a crash, then a fresh connect), and Ray takes
    such actors down a moment later. Its name is retried until Ray has freed it and a fresh
    actor starts; an actor whose own start failed raises at once (the others are stopped)."""
    actors = list(actors)
    todo = list(range(len(actors)))
    while todo:
        refs = [probe(actors[i]) for i in todo]
        dying = []
        for i, ref in zip(todo, refs):
            try:
                ray.get(ref)
            except (ray.exceptions.RayTaskError, ray.exceptions.RayActorError) as exc:
                if (isinstance(exc, ray.exceptions.RayActorError) and not exc.actor_init_failed
                        and time.monotonic() < deadline):
                    dying.append(i)
                    continue
                for a in actors:
                    ray.kill(a, no_restart=True)
                raise
        if dying:
            time.sleep(0.2)
            for i in dying:
                actors[i] = _fresh(makes[i], deadline)
        todo = dying
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
