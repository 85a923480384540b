"""A GC plan worker killed mid-plan (issue 8): SIGKILL of the process running a scan task
(``ray::_plan_ranges``, one of the sweep's plan workers) or the sweep's plan task itself
(``ray::_plan_task``, which runs the scan tasks) while it works, at a random moment. Ray runs the
task again and the plan must equal an uninterrupted plan of the same dataset version: the same
rows, rules, tenants and bytes.

The dataset is a Lance table of the plan's columns, large enough that a scan takes a few tenths
of a second on this machine (``CHAOS_PLAN_ROWS``). The default run does one round per victim;
``make chaos`` runs ``CHAOS_ROUNDS`` (default 20)."""

from __future__ import annotations

import os
import random
import signal
import threading
import time

import numpy as np
import pyarrow as pa
import pytest

from chaoslib import procs_with, rounds_from_env

ROWS = int(os.environ.get("CHAOS_PLAN_ROWS", "1200000"))
VICTIMS = {"scan": "ray::_plan_ranges", "plan": "ray::_plan_task"}


def _table(n: int, now_us: int, seed: int = 3) -> pa.Table:
    from memactors.core import gc_plan as G
    from memactors.core.clock import US_PER_DAY
    from memactors.core.records import memory_schema

    rng = np.random.default_rng(seed)
    ts = pa.timestamp("us", tz="UTC")
    updated = now_us - rng.integers(0, 400 * US_PER_DAY, n)
    statuses = np.array(["active", "superseded", "stale", "pending"])
    orgs = pa.array(rng.integers(0, 50, n)).cast(pa.string())
    cols = {
        "memory_id": pa.array(np.arange(n)).cast(pa.string()),
        "scope": pa.compute.binary_join_element_wise("/org/t", orgs, "/user/u/", ""),
        "status": pa.array(statuses[rng.integers(0, 4, n)]),
        "confidence": pa.array(rng.choice([1.0, 0.7, 0.29], n).astype(np.float32)),
        "created_at": pa.array(updated, ts), "updated_at": pa.array(updated, ts),
        "last_accessed_at": pa.array(updated + rng.integers(0, 30 * US_PER_DAY, n), ts, mask=rng.random(n) < 0.4),
        "retrieved_count": pa.array(rng.poisson(2, n).astype(np.int32)),
        "soft_expires_at": pa.array(updated + rng.integers(1, 120, n) * US_PER_DAY, ts, mask=rng.random(n) < 0.2),
        "hard_expires_at": pa.array(updated + rng.integers(20, 400, n) * US_PER_DAY, ts, mask=rng.random(n) < 0.3),
        "review": pa.array(np.where(rng.random(n) < 0.05, "contradiction", None).tolist(), pa.string()),
        "category": pa.array(rng.choice(["default", "preference", "task_learning"], n)),
    }
    schema = memory_schema(8)
    fields = [schema.field(c) for c in G.PLAN_COLUMNS]
    return pa.table([cols[f.name].cast(f.type) for f in fields], schema=pa.schema(fields))


@pytest.fixture(scope="module")
def dataset(ray_session, tmp_path_factory):
    import lance

    from memactors.actors import sweep_plan as SP
    from memactors.core.clock import ManualClock

    now = ManualClock().advance(days=400)
    path = str(tmp_path_factory.mktemp("plan-kill") / "memories.lance")
    lance.write_dataset(_table(ROWS, now), path, max_rows_per_file=ROWS // 6)
    return path, now, SP.plan_dataset(path, now, workers=2)


def _kill_when_seen(title: str, delay: float, stop: threading.Event, out: dict) -> None:
    """SIGKILL the first process running ``title``, ``delay`` s after it appears (if it still
    runs it: ``out["hit"]``)."""
    while not stop.is_set():
        pids = procs_with(title)
        if pids:
            time.sleep(delay)
            if procs_with(title):
                os.kill(pids[0], signal.SIGKILL)
                out["hit"] = pids[0]
            return
        time.sleep(0.003)


def _round(dataset, victim: str, rng: random.Random) -> dict:
    from memactors.actors import sweep_plan as SP
    from memactors.actors import sweeper
    from memactors.core.config import Config

    path, now, reference = dataset
    stop, out = threading.Event(), {}
    killer = threading.Thread(target=_kill_when_seen, args=(VICTIMS[victim], rng.uniform(0.0, 0.1), stop, out))
    killer.start()
    try:
        t0 = time.monotonic()
        if victim == "scan":
            plan = SP.plan_dataset(path, now, workers=2)
        else:
            plan = sweeper.plan(path, now, Config(), workers=2)
        out["seconds"] = time.monotonic() - t0
    finally:
        stop.set()
        killer.join()
    out["same"] = plan.same_decisions(reference) and plan.bytes_total == reference.bytes_total
    out["rows"] = plan.rows_scanned
    return out


@pytest.mark.parametrize("victim", sorted(VICTIMS))
def test_a_killed_plan_worker_leaves_the_plan_unchanged(dataset, victim):
    out = _round(dataset, victim, random.Random(1))
    assert out["same"] and out["rows"] == ROWS, out
    assert out.get("hit"), f"no {VICTIMS[victim]} process was caught running: {out}"


@pytest.mark.chaos
@pytest.mark.timeout(3600)
@pytest.mark.parametrize("victim", sorted(VICTIMS))
def test_many_rounds(dataset, victim):
    rng = random.Random(2)
    rounds = [_round(dataset, victim, rng) for _ in range(rounds_from_env(20))]
    assert all(r["same"] and r["rows"] == ROWS for r in rounds), rounds
    assert sum(bool(r.get("hit")) for r in rounds) >= len(rounds) // 2, rounds
