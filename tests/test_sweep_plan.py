"""The GC plan phase on Ray (memactors.actors.sweep_plan) over a real Lance dataset of the L2
schema with several fragments and deleted rows: the same plan for any worker count, equal to the
rules run over the whole table at once, and nothing in the dataset changed."""

from __future__ import annotations

import os

import numpy as np
import pyarrow as pa
import pytest

from memactors.actors import sweep_plan as SP
from memactors.core import gc_plan as G
from memactors.core.clock import US_PER_DAY, ManualClock
from memactors.core.config import LifecycleConfig
from memactors.core.errors import InvalidRecord
from memactors.core.records import fill_columns, memory_schema

# lance is imported inside the tests, after the session's Ray has started its processes: once
# loaded, it warns on every fork.

NOW = ManualClock().advance(days=365)
DAY = US_PER_DAY
DIM = 8


def memories(n: int, seed: int = 7) -> pa.Table:
    """n rows of the memory schema over a simulated year: every status, expiries set and unset,
    recalled and never recalled, a spread of confidences, 20 tenants and /global/."""
    rng = np.random.default_rng(seed)
    ts = pa.timestamp("us", tz="UTC")
    created = NOW - rng.integers(0, 365 * DAY, n)
    updated = created + (rng.random(n) * (NOW - created)).astype(np.int64)
    last = updated + (rng.random(n) * (NOW - updated)).astype(np.int64)
    soft = updated + rng.integers(1, 120, n) * DAY
    hard = updated + rng.integers(20, 400, n) * DAY
    orgs = rng.integers(0, 21, n)
    scopes = [("/global/" if o == 20 else f"/org/t{o}/user/u{o % 3}/") for o in orgs.tolist()]
    statuses = np.array(["active", "superseded", "stale", "pending", "evicted", "tombstoned"])
    cols = {
        "memory_id": [f"{i:032x}" for i in range(n)],
        "scope": scopes,
        "subject": pa.nulls(n, pa.string()), "predicate": pa.nulls(n, pa.string()), "object": pa.nulls(n, pa.string()),
        "content": [f"memory {i}" for i in range(n)],
        "source_kind": pa.array(["tool"] * n), "source_id": pa.nulls(n, pa.string()),
        "confidence": pa.array(rng.choice([1.0, 0.7, 0.3, 0.29, 0.1], n).astype(np.float32)),
        "sensitivity": pa.array(["internal"] * n), "pool": pa.array(["vault"] * n),
        "status": pa.array(statuses[rng.choice(6, n, p=[0.6, 0.2, 0.08, 0.06, 0.03, 0.03])]),
        "version": pa.array(np.ones(n, np.int32)), "supersedes": pa.nulls(n, pa.string()),
        "content_hash": pa.array(["h"] * n),
        "vector": pa.FixedSizeListArray.from_arrays(pa.array(np.zeros(n * DIM, np.float32)), DIM),
        "importance": pa.array(np.full(n, 0.5, np.float32)),
        "created_at": pa.array(created, ts), "updated_at": pa.array(updated, ts),
        "last_accessed_at": pa.array(last, ts, mask=rng.random(n) < 0.4),
        "retrieved_count": pa.array(rng.poisson(2, n).astype(np.int32)),
        "soft_expires_at": pa.array(soft, ts, mask=rng.random(n) < 0.2),
        "hard_expires_at": pa.array(hard, ts, mask=rng.random(n) < 0.3),
        "search_text": pa.array(["memory"] * n),
    }
    return fill_columns(cols, n, DIM)


@pytest.fixture(scope="module")
def dataset(ray_session, tmp_path_factory):
    import lance

    path = str(tmp_path_factory.mktemp("l2") / "memories.lance")
    lance.write_dataset(memories(3_000), path, max_rows_per_file=700)  # 5 fragments
    lance.write_dataset(memories(500, seed=8).slice(0, 500), path, mode="append")  # a small one
    lance.dataset(path).delete("retrieved_count = 3")  # deletion files in every fragment
    return path


def whole_table_plan(path, cfg=None) -> G.Plan:
    import lance

    t = lance.dataset(path).to_table(columns=list(G.PLAN_COLUMNS))
    return G.plan_columns(t, NOW, cfg)


def test_any_worker_count_gives_the_same_plan_as_the_whole_table(ray_session, dataset):
    import lance

    ds = lance.dataset(dataset)
    version, rows = ds.version, ds.count_rows()
    assert len(ds.get_fragments()) >= 6 and ds.count_rows(filter="retrieved_count = 3") == 0
    whole = whole_table_plan(dataset)
    plans = {w: SP.plan_dataset(dataset, NOW, workers=w) for w in (1, 3)}
    for w, p in plans.items():
        assert p.same_decisions(whole), w
        assert p.rows_scanned == rows
        assert p.source["workers"] == min(w, p.source["ranges"]) and p.source["version"] == version
        assert p.bytes_total == plans[1].bytes_total > 0
    assert 0 < whole.planned < rows and set(whole.by_rule.values()) != {0}
    assert lance.dataset(dataset).version == version  # a dry run commits nothing


def test_config_reaches_the_workers(ray_session, dataset):
    strict = LifecycleConfig(superseded_days=1.0, unused_days=1.0)
    got = SP.plan_dataset(dataset, NOW, strict, workers=2)
    assert got.same_decisions(whole_table_plan(dataset, strict))
    assert got.by_rule["superseded_old"] > whole_table_plan(dataset).by_rule["superseded_old"]


def test_an_optional_contradicted_column_is_read(ray_session, tmp_path):
    import lance

    path = str(tmp_path / "c.lance")
    t = memories(400)
    t = t.append_column("contradicted", pa.array(np.arange(400) % 2 == 0))
    lance.write_dataset(t, path, max_rows_per_file=150)
    got = SP.plan_dataset(path, NOW, workers=2)
    want = G.plan_columns(lance.dataset(path).to_table(columns=[*G.PLAN_COLUMNS, "contradicted"]), NOW)
    assert got.same_decisions(want) and got.by_rule["staleness_evict"] > 0


def test_an_l2_folder_resolves_to_its_table(tmp_path, dataset):
    assert SP.resolve_dataset(os.path.dirname(dataset)) == dataset
    assert SP.resolve_dataset(dataset) == dataset
    with pytest.raises(InvalidRecord):
        SP.resolve_dataset(42)


def test_bare_scan_reads_every_live_row(dataset):
    import lance

    before = os.sched_getaffinity(0)
    got = SP.bare_scan(dataset, pin_core=1)
    assert got["rows"] == lance.dataset(dataset).count_rows() and got["seconds"] > 0
    assert os.sched_getaffinity(0) == before  # the pin is undone


def test_pinned_tasks_give_the_same_plan(ray_session, dataset):
    assert SP.plan_dataset(dataset, NOW, workers=2, pin_cores=True).same_decisions(whole_table_plan(dataset))


def test_bad_arguments(dataset):
    for bad in (0, -1, 1.5, True):
        with pytest.raises(InvalidRecord):
            SP.plan_dataset(dataset, NOW, workers=bad)
    with pytest.raises(InvalidRecord):
        SP.plan_dataset(dataset, float(NOW))


def test_ranges_cover_every_row_once_and_deal_keeps_order(dataset):
    import lance

    frags = lance.dataset(dataset).get_fragments()
    for workers in (1, 2, 5, 64):
        items = SP.ranges(frags, workers)
        for f in frags:
            mine = [r for r in items if r.fragment_id == f.fragment_id]
            assert [r.offset for r in mine] == list(range(0, f.count_rows(), mine[0].limit))
            assert sum(r.limit for r in mine) == f.count_rows()
        groups = SP.deal(items, workers)
        assert 1 <= len(groups) <= workers and all(groups)
        assert [r for g in groups for r in g] == items


def test_deal_balances_rows():
    items = [SP.Range(i, 0, 100, 1.0) for i in range(10)]
    assert [sum(r.limit for r in g) for g in SP.deal(items, 2)] == [500, 500]
    assert [len(g) for g in SP.deal(items, 3)] == [4, 3, 3]
    assert SP.deal([], 4) == []
