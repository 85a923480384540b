"""A second local Ray in one process (connect, close, connect again: a notebook that reconnects)
starts as the first did. ``ray.init`` writes its session's spilling directory into the system
config it is handed; the runtime's config was one dict shared by every init, so the second Ray
spilled into the first session's folder and Ray printed its warning on the caller's stderr.
And a Ray host after a process-host runtime in the same process: lance's and lancedb's at-fork
hooks warned on stderr at each of the forks ``ray.init`` makes (its servers exec at once)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

SCRIPT = r"""
import os, sys
import memactors
from memactors.head import SYSTEM_CONFIG
before = dict(SYSTEM_CONFIG)
path = sys.argv[1]
with memactors.connect(path, host="process") as rt:  # lance and lancedb imported here first
    rt.grant("a", "/org/acme/", read=True, write=True)
for text in ("Alice likes green tea", "Bob likes black coffee"):
    with memactors.connect(path, host="ray", config={"runtime": {"num_owners": 1, "gate_workers": 0}}) as rt:
        rt.grant("a", "/org/acme/", read=True, write=True)
        rt.write("/org/acme/user/alice/", text, actor="a")
        hits = rt.recall("tea coffee", actor="a", allowed_scopes=["/org/acme/user/alice/"]).hits
print(len(hits), dict(SYSTEM_CONFIG) == before, flush=True)
"""


def test_a_second_local_ray_in_one_process_starts_clean(tmp_path):
    # Ray's behaviour, in a process of its own: this one may hold the suite's shared Ray.
    env = dict(os.environ, RAY_AUTH_MODE="disabled")
    res = subprocess.run([sys.executable, "-c", SCRIPT, str(tmp_path / "data")], capture_output=True, text=True,
                         env=env, timeout=300)
    assert res.returncode == 0, res.stderr[-2000:]
    assert res.stdout.split() == ["2", "True"]
    assert "spilling" not in res.stderr and "fork" not in res.stderr, res.stderr[-2000:]


def test_the_ray_settings_cannot_be_changed_in_place():
    from memactors.head import SYSTEM_CONFIG

    with pytest.raises(TypeError):
        SYSTEM_CONFIG["object_spilling_config"] = "{}"  # type: ignore[index]
