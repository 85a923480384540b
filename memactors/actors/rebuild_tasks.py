"""Rebuild on the Ray host: the ledger's parts folded in Ray tasks, one per CPU of the cluster
(``memactors.engine.rebuild`` does the rest)."""

from __future__ import annotations

import ray

from ..engine import rebuild as RB


@ray.remote(num_cpus=1)
def _fold_part(events, embedder):
    return RB.fold_part(events, embedder)


def fold_on_ray(n: int, read, target: RB.Target) -> list:
    """Each part's rows as an Arrow table with their access counts (the caller writes them: a
    task may run on another node)."""
    parts, access = read()
    return [RB.with_access(t, access) for t in ray.get([_fold_part.remote(p, target.embedder) for p in parts])]


def rebuild(data_dir: str, config=None, *, workers: int | None = None, ledger=None) -> dict:
    """``engine.rebuild.rebuild`` with its parts folded in Ray tasks."""
    return RB.rebuild(data_dir, config, workers=workers, ledger=ledger, fold=fold_on_ray,
                      cpus=int(ray.cluster_resources().get("CPU", 1)))
