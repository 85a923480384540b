"""The simulation on the memactors backend (real Ray, LanceDB, DuckDB): a small world's
governance counters are 0, accuracy is above a floor, the run is deterministic for a seed,
bad input from a plugged-in policy is a typed error for that action only, and an owner killed
mid-run loses no acknowledged write."""

import pytest

from memactors.sim import COUNTERS, ChaosPolicy, MemactorsBackend, ScriptedPolicy, WorldConfig, run
from memactors.sim.actions import Observe, Recall
from memactors.sim.policy import AgentPolicy

pytestmark = pytest.mark.ray  # what is Ray's: actors, kills, clusters, the server

SMALL = dict(seed=5, tenants=2, users_per_tenant=5, days=4, onboarding_days=2, sweep_every_days=2)
TIMING = {"apply_s", "ops_per_s", "tick_ms", "sweeps"}


def _run(tmp_path, name, policy=None, backend_cls=MemactorsBackend):
    b = backend_cls(str(tmp_path / name))
    report = run(WorldConfig(**SMALL), [b], policy=policy, progress=False)
    [col] = report.backends
    return report, col, b


def _same(col):
    return {k: v for k, v in col["totals"].items() if k not in TIMING}


class Hostile(AgentPolicy):
    """The scripted agent plus, for its first assistant, an out-of-grant scope, a malformed
    observation and a huge text every tick (a plugged-in policy's bad input)."""

    def __init__(self):
        self.inner = ScriptedPolicy(seed=5)

    def act(self, view):
        acts = list(self.inner.act(view))
        if view.role == "assistant" and view.index == 0:
            other = "/org/t001/user/u00006/"
            acts += [Observe(view.agent, other, "a note left in another tenant"),
                     Recall(view.agent, (other,), "what do you know", 5),
                     Observe(view.agent, view.scope, "half a fact", subject="x"),
                     Observe(view.agent, view.scope, "x" * 100_000)]
        return acts


def test_small_simulation_governed_accurate_deterministic_and_bad_input_is_typed(ray_session, tmp_path):
    r1, a, _ = _run(tmp_path, "a", Hostile())
    t = a["totals"]
    assert r1.exit_code() == 0 and t["crashed_ticks"] == 0
    assert all(a["counters"][c] == 0 for c in COUNTERS), a["counters"]
    assert t["probes"] >= 3 and t["accuracy"] >= 0.75
    assert t["info"]["promoted"] > 0 and t["info"]["write_accepted"] > 0
    # the hostile actions: each a typed error, the rest of the tick applied, nothing of them stored
    assert t["errors"].get("AccessDenied", 0) >= 2 * SMALL["days"]
    assert r1.runner["invalid_actions"]["InvalidRecord"] >= 2 * SMALL["days"]
    r2, b, _ = _run(tmp_path, "b", Hostile())
    assert _same(a) == _same(b) and a["counters"] == b["counters"]


class KillingBackend(MemactorsBackend):
    """Kills the owner of the first tenant at tick 2 (Ray restarts it from the ledger) and
    keeps every acknowledged vault write's id."""

    acked: list

    def apply(self, tick, now_us, actions):
        import ray

        from memactors.testing import owner_for

        if tick == 2:
            ray.kill(owner_for(self.rt, "/org/t000/"), no_restart=False)
        return super().apply(tick, now_us, actions)

    def storage_paths(self):
        from memactors.core import events as E

        ids = list(self._facts.values())
        seen = {ch.memory_id for _, ch in self.rt._calls.get(self.rt._ledger.history.remote(ids))
                if ch is not None and ch.action == E.WRITE}
        type(self).missing = sorted(set(ids) - seen)
        type(self).acked = ids
        return super().storage_paths()


def test_an_owner_killed_mid_run_loses_no_acknowledged_write(ray_session, tmp_path):
    report, col, _ = _run(tmp_path, "kill", backend_cls=KillingBackend)
    assert col["totals"]["crashed_ticks"] <= 1  # the tick of the kill may fail as a whole, never half
    assert all(col["counters"][c] == 0 for c in COUNTERS), col["counters"]
    assert KillingBackend.acked and KillingBackend.missing == []
    assert report.exit_code() in (0, 1) and col["totals"]["accuracy"] >= 0.7
