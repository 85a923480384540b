"""Test set-up: pure tests need nothing; runtime tests run on the process host (real LanceDB
and DuckDB files in tmp folders, no Ray) unless marked ``ray``: those test what is Ray's
(owners as actors, pools, kills, clusters, the server) and share ONE real local Ray, started
once per session. ``MEMACTORS_HOST=ray`` runs every runtime test on the Ray host."""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile

# In-process Ray only: no token written under $HOME. The server tests start Ray heads in
# subprocesses with it unset (Ray's default, token auth on) and HOME in a temp folder.
os.environ.setdefault("RAY_AUTH_MODE", "disabled")
# Ledger keys live outside data folders (~/.memactors/keys by default): tests keep theirs in a
# folder of their own, never in the user's home.
os.environ["MEMACTORS_KEY_DIR"] = tempfile.mkdtemp(prefix="memactors-test-keys-")
# ... and removed with this process (each xdist worker has its own): no key is left in /tmp.
atexit.register(shutil.rmtree, os.environ["MEMACTORS_KEY_DIR"], ignore_errors=True)
ALL_ON_RAY = os.environ.get("MEMACTORS_HOST") == "ray"
os.environ.setdefault("MEMACTORS_HOST", "process")

import pytest


@pytest.fixture(scope="session")
def ray_session():
    """The one local Ray of the test session (started by the first test or fixture that asks)."""
    import ray

    if not ray.is_initialized():
        from memactors.head import SYSTEM_CONFIG  # as the runtime's own local Ray has them

        ray.init(address="local", num_cpus=4, include_dashboard=False, log_to_driver=False, configure_logging=False,
                 _system_config=dict(SYSTEM_CONFIG))
    yield ray
    ray.shutdown()


def _on_ray(request) -> bool:
    return ALL_ON_RAY or request.node.get_closest_marker("ray") is not None


@pytest.fixture(autouse=True)
def _host(request, monkeypatch):
    """A test marked ``ray`` connects on the Ray host (and has the shared Ray running). A
    module's shared runtime that must be on Ray says so itself (``host="ray"``)."""
    if _on_ray(request):
        monkeypatch.setenv("MEMACTORS_HOST", "ray")
        request.getfixturevalue("ray_session")


@pytest.fixture(scope="module")
def ray_runtime(ray_session, tmp_path_factory):
    """One runtime on the Ray host for a module's tests marked ``ray`` (each test keeps to its own org)."""
    import memactors

    rt = memactors.connect(str(tmp_path_factory.mktemp("ray-rt") / "data"), host="ray",
                           config={"runtime": {"num_owners": 2, "l2_flush_interval_s": 0.2}})
    yield rt
    rt.close()


@pytest.fixture
def data_dir(tmp_path):
    return str(tmp_path / "data")


@pytest.fixture
def runtime(data_dir):
    import memactors

    rt = memactors.connect(data_dir, config={"runtime": {"num_owners": 2, "l2_flush_interval_s": 0.2}})
    yield rt
    rt.close()
