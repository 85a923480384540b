"""The ledger writer killed while it holds marks (which events reached Lance) not yet
committed: once Ray has restarted it, ``verify()`` must not raise a false alarm, and nothing
acknowledged is lost."""

from __future__ import annotations

import time

import memactors
from memactors.testing import actors

from chaoslib import actor_pid, kill

S = "/org/marks/user/u/"


def _verify(rt, timeout=60.0):
    deadline = time.monotonic() + timeout
    while True:
        try:
            return rt.audit.verify()
        except memactors.Unavailable:  # the ledger writer is restarting
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def test_marks_survive_a_ledger_writer_crash(ray_session, tmp_path):
    # Every ledger group waits 0.8 s for company: the owner's flush (every 0.05 s) hands its
    # marks to the ledger writer well before the group that would commit them.
    cfg = {"runtime": {"num_owners": 1, "gate_workers": 0, "l2_flush_interval_s": 0.05,
                       "ledger_commit_max_wait_ms": 800.0}}
    rt = memactors.connect(tmp_path / "data", config=cfg)
    try:
        rt.grant("ag", S, write=True)
        res = rt.write_many([{"scope": S, "text": f"fact number {i}", "actor": "ag"} for i in range(5)])
        time.sleep(0.3)  # Lance has them; the ledger writer holds their marks, uncommitted
        kill([actor_pid(actors(rt)["ledger"])])
        v = _verify(rt)
        assert v["ok"], v
        got = rt.recall("fact number", actor="ag", task_id="t", allowed_scopes=[S], purpose="check", top_k=20)
        assert {h.memory_id for h in got.hits} == {r.memory_id for r in res}
    finally:
        rt.close()
