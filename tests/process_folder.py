"""A data folder on the process host with a simulated clock, as the red-team tests of lifecycle,
sweeps and semantics drive it: ``connect``, ``reopen`` (the hot state rebuilt from the ledger
and L2), and ``folder``, a fixture of Alice's scope with an agent and an org admin granted."""

from __future__ import annotations

import pytest

import memactors

S = "/org/acme/user/alice/"
A = "agent"


def connect(path, clock, **kw):
    return memactors.connect(str(path), host="process", clock=clock, **kw)


def reopen(rt, path, clock):
    """The folder closed and opened again: the hot state rebuilt from the ledger and L2."""
    rt.close()
    return connect(path, clock)


@pytest.fixture
def folder(tmp_path):
    clock = memactors.ManualClock()
    rt = connect(tmp_path / "d", clock)
    rt.grant(A, S, write=True)
    rt.grant("admin", "/org/acme/", write=True)
    yield rt, clock, tmp_path / "d"
    rt.close()
