"""Several driver processes on one long-lived runtime (``memactors up``), each attached with
``connect(DIR, address=..., detached=True)``: the same subjects, idempotency keys and scopes,
forgets, recalls and ``verify()`` interleaved. Afterwards: exactly one active version per
subject+predicate, versions contiguous, no duplicates, and no false alarm from any ``verify()``
made while they ran. ``down`` then leaves no process and a free lock."""

from __future__ import annotations

import os

import pytest

from memactors.testing import read_history, unique_org

from chaoslib import alive, collected_from, down, lock_free, procs_with, run_driver, start_driver, up, wait_gone

# A small owner queue: the batched clients meet back pressure from each other.
CFG = {"runtime": {"num_owners": 2, "l2_flush_interval_s": 0.2, "owner_queue_max": 120}}


def _run(tmp_path, n_drivers: int, ops: int, seed: int) -> dict:
    """One run; returns the checker's counts (raises on any finding)."""
    data = tmp_path / "data"
    org = unique_org("cc")
    scopes = [f"/org/{org}/user/alice/", f"/org/{org}/user/bob/"]
    # The workload's grants, made by the `up` process before any driver starts.
    info = up(data, CFG, grants=[{"actor": "agent", "scope": f"/org/{org}/", "write": True},
                                 {"actor": "checker", "scope": "/global/"}])
    try:
        base = {"data": str(data), "address": info["address"], "detached": True, "config": CFG,
                "scopes": scopes, "seed": seed, "ops": ops, "hist": str(tmp_path / "hist")}
        procs, outs = [], []
        for i in range(n_drivers):
            out = str(tmp_path / f"out-{i}.json")
            outs.append(out)
            procs.append(start_driver(dict(base, mode="work", client=f"p{i}", threads=["single", "batched"],
                                           verify_every_s=0.7, out=out, log=out + ".log",
                                           spec=str(tmp_path / f"spec-{i}.json"))))
        for p in procs:
            assert p.wait(timeout=600) == 0, open(outs[procs.index(p)] + ".log").read()[-3000:]
        import orjson

        alarms = [a for o in outs for a in orjson.loads(open(o, "rb").read())["verify_alarms"]]
        assert not alarms, alarms  # verify() during the run: no false alarm
        coll = collected_from(run_driver(dict(base, mode="collect", out=str(tmp_path / "collect.json"))))
        events = read_history(tmp_path / "hist")
        report = coll.check(events)
        assert report.ok, report.summary()
        w = report.counts["writes"]
        assert w["acked"] > 0.5 * w["invoked"] and report.counts["forgets"].get("ok", 0) >= 1
        # Shared keys really were written by more than one process.
        by_key: dict[str, set] = {}
        for e in events:
            if e["type"] == "invoke" and e["op"] == "write":
                by_key.setdefault(e["idempotency_key"], set()).add(e["client"].split("-")[0])
        assert any(len(c) > 1 for c in by_key.values())
        counts = dict(report.counts, anomalies={k: len(v) for k, v in report.anomalies.items()})
    finally:
        res = down(data)
    assert res["status"] == "down", res
    assert lock_free(data)
    assert not wait_gone(procs_with(info["temp_dir"]), 30), "processes of the up runtime are left"
    assert not alive(info["ray_pid"])
    assert not os.path.exists(data / "runtime.json")
    return counts


def test_drivers_share_one_runtime(tmp_path):
    _run(tmp_path, n_drivers=3, ops=40, seed=11)


@pytest.mark.chaos
@pytest.mark.timeout(3600)
def test_drivers_share_one_runtime_long(tmp_path):
    from chaoslib import rounds_from_env

    for r in range(max(1, rounds_from_env(20) // 4)):
        _run(tmp_path / f"r{r}", n_drivers=4, ops=250, seed=100 + r)
