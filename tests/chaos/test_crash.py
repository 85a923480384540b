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


@pytest.mark.parametrize("fault", FAULTS)
def test_one_round(ray_session, chaos_base, fault):
    _assert_clean(run_fault(chaos_base, fault, 1, seed=1))


@pytest.mark.chaos
@pytest.mark.timeout(7200)
@pytest.mark.parametrize("fault", FAULTS)
def test_many_rounds(ray_session, chaos_base, fault):
    _assert_clean(run_fault(chaos_base, fault, rounds_from_env(20), seed=2))
