"""A runtime for tests: on a fresh folder, its actors by name, its hot index dropped, a crash.

    from memactors.testing import runtime_on, drop_hot, actors

    rt = runtime_on(tmp_path)                 # a runtime on a fresh folder, small and quick
    rt.grant("agent", "/org/t1/user/u/", write=True)
    ...
    drop_hot(rt)                              # serve every scope from Lance until warmed
    rt.close()

Importing this module starts nothing; each helper uses only the public API and the actors'
published names (``memactors.engine.naming``), as any driver attached to the cluster could.
"""

from __future__ import annotations

import itertools
import os
import uuid

_SMALL = {"runtime": {"num_owners": 2, "l2_flush_interval_s": 0.2}}
_orgs = itertools.count()


def runtime_on(folder, config: dict | None = None, **kw):
    """A runtime on ``folder/data`` (created), with a small configuration unless given one."""
    import memactors

    cfg = config if config is not None else _SMALL
    return memactors.connect(os.path.join(os.fspath(folder), "data"), config=cfg, **kw)


def unique_org(prefix: str = "t") -> str:
    """A fresh tenant id: tests sharing one runtime stay apart by org."""
    return f"{prefix}{next(_orgs)}-{uuid.uuid4().hex[:6]}"


def actors(rt) -> dict:
    """The runtime's actors by their published names: ledger, owners, gate and embed workers
    (on the process host: the handles of its cores, no workers)."""
    if rt.config.runtime.host == "process":
        a = rt._actors  # noqa: SLF001 - the cores live in this process: there are no names to look up
        return {"ledger": a.ledger, "owners": list(a.owners), "gate": [], "embed": []}
    import ray

    from ..engine.naming import LEDGER, embed_worker_name, gate_worker_name, owner_name

    rc = rt.config.runtime
    get = lambda name: ray.get_actor(name, namespace=rt.namespace)  # noqa: E731
    return {"ledger": get(LEDGER), "owners": [get(owner_name(i)) for i in range(rc.num_owners)],
            "gate": [get(gate_worker_name(i)) for i in range(rc.gate_workers)],
            "embed": [get(embed_worker_name(i)) for i in range(rc.embed_workers)]}


def owner_for(rt, scope: str):
    """The owner actor that holds ``scope``."""
    from ..engine.naming import owner_index
    from ..core.scopes import parse_scope

    return actors(rt)["owners"][owner_index(parse_scope(scope), rt.config.runtime.num_owners)]


def drop_hot(rt) -> None:
    """Flush, then empty every owner's hot index: scopes are served from Lance until warmed."""
    rt._calls.get([o.drop_hot.remote() for o in actors(rt)["owners"]])  # noqa: SLF001


def crash(rt) -> None:
    """Kill the runtime's actors as a crash would (no flush, no checkpoint), and mark the
    runtime closed; ``memactors.connect`` on the same folder then recovers (Ray host only: a
    process host's cores die with its process)."""
    import ray

    for a in [*actors(rt)["owners"], actors(rt)["ledger"]]:
        ray.kill(a, no_restart=True)
    rt._calls.closed = True  # noqa: SLF001 - the runtime's own helper: nothing must be flushed now
