"""What the seeded model tests share (``test_governance_model``, ``test_lifecycle_model``): one
runtime on a manual clock, driven by a seeded sequence of calls whose problems and counts it
keeps, and one seed's run asserted clean."""

from __future__ import annotations

import random

import memactors
from memactors.core.clock import ManualClock


class ModelSequence:
    def __init__(self, seed: int, path: str, host: str, reopen_every: int) -> None:
        self.r, self.seed, self.clock = random.Random(seed), seed, ManualClock()
        self.path, self.host, self.reopen_every = path, host, reopen_every
        self.problems: list[str] = []
        self.counts: dict[str, int] = {}
        self.n = 0  # the call being made (what a problem names)

    def connect(self):
        return memactors.connect(self.path, clock=self.clock, **({} if self.host == "memory" else {"host": self.host}))

    def bad(self, msg: str) -> None:
        self.problems.append(f"call {self.n}: {msg}")

    def count(self, what: str) -> None:
        self.counts[what] = self.counts.get(what, 0) + 1

    def run(self, calls: int) -> list[str]:  # each model's own
        raise NotImplementedError


def run_seed(cls, tmp_path, seed: int, host: str, calls: int, reopen_every: int = 0):
    """``calls`` calls of ``cls``'s sequence for ``seed`` on ``host`` ("memory": ``memory://``,
    else a folder in ``tmp_path``), asserted to find no problem; the sequence, for its counts."""
    path = "memory://" if host == "memory" else str(tmp_path / f"data-{seed}")
    seq = cls(seed, path, host, reopen_every)
    problems = seq.run(calls)
    assert not problems, f"seed {seed} on {host}: {problems[:5]}"
    return seq
