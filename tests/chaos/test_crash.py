"""Crash faults (``chaoslib.FAULTS``): SIGKILL of an owner, the ledger writer, a gate worker,
an embedding worker, every owner and the ledger together while Lance trails the ledger
(``flush_gap``), a driver process mid-burst, a whole local Ray, and an owner or the ledger
writer while a sweep, a rollback or a purge lands (``op_faults``). Every round: the history
checker finds nothing, ``connect`` reopens the folder and it verifies, the lock is free after
``close()`` and no process of the round is left.

The default run does one round of each; ``make chaos`` runs ``CHAOS_ROUNDS`` (default 20)."""

from __future__ import annotations

import pytest

from chaoslib import FAULTS, rounds_from_env, run_fault


def _assert_clean(rounds):
    bad = [r for r in rounds if not r.ok]
    assert not bad, "\n".join(f"round {r.index}: " + "; ".join(r.problems) for r in bad)
    assert sum(r.acked for r in rounds) > 0


# An open bug, not yet fixed: after a driver on the shared Ray is killed mid-burst, a fresh
# connect sometimes leaves several active versions of one fact (seen in about 1 run in 3; the
# new owners decide while the dead driver's owners are still being torn down). Tracked in
# issue 12; `make chaos` runs the loop strictly.
KNOWN = {"driver": pytest.mark.xfail(strict=False, reason="open bug: multiple active versions after a driver kill")}


@pytest.mark.parametrize("fault", [pytest.param(f, marks=KNOWN[f]) if f in KNOWN else f for f in FAULTS])
def test_one_round(ray_session, chaos_base, fault):
    _assert_clean(run_fault(chaos_base, fault, 1, seed=1))


@pytest.mark.chaos
@pytest.mark.timeout(7200)
@pytest.mark.parametrize("fault", FAULTS)
def test_many_rounds(ray_session, chaos_base, fault):
    _assert_clean(run_fault(chaos_base, fault, rounds_from_env(20), seed=2))
