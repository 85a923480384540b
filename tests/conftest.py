"""Test set-up: pure tests need nothing; actor and storage tests share ONE real local Ray,
started once per session, and put their LanceDB/DuckDB files in tmp folders."""

from __future__ import annotations

import os

import tempfile

# In-process Ray only: no token written under $HOME. The server tests start Ray heads in
# subprocesses with it unset (Ray's default, token auth on) and HOME in a temp folder.
os.environ.setdefault("RAY_AUTH_MODE", "disabled")
# Ledger keys live outside data folders (~/.memactors/keys by default): tests keep theirs in a
# folder of their own, never in the user's home.
os.environ["MEMACTORS_KEY_DIR"] = tempfile.mkdtemp(prefix="memactors-test-keys-")

import pytest


@pytest.fixture(scope="session")
def ray_session():
    import ray

    if not ray.is_initialized():
        ray.init(address="local", num_cpus=4, include_dashboard=False, log_to_driver=False, configure_logging=False)
    yield ray
    ray.shutdown()


@pytest.fixture
def data_dir(tmp_path):
    return str(tmp_path / "data")


@pytest.fixture
def runtime(ray_session, data_dir):
    import memactors

    rt = memactors.connect(data_dir, config={"runtime": {"num_owners": 2, "l2_flush_interval_s": 0.2}})
    yield rt
    rt.close()
