"""The simulation on a two-node Ray cluster (issue 10): the same small world as
``test_sim_memactors``, run in a process of its own on a ``ray.cluster_utils.Cluster`` of two
nodes with the scope owners on both, gives the same totals (every governance counter 0, the
same memories, operations and accuracy) as on this session's one-node Ray."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import orjson

from memactors.sim import COUNTERS
from test_sim_memactors import SMALL, _run, _same
import pytest

pytestmark = pytest.mark.ray  # what is Ray's: actors, kills, clusters, the server

HERE = Path(__file__).resolve().parent


def test_two_nodes_give_the_same_run_as_one(ray_session, tmp_path):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(HERE.parent), os.environ.get("PYTHONPATH", "")]))
    # Files, not pipes: nothing reads them while the one-node run goes on, and a full pipe
    # would stop the child.
    out, log = open(tmp_path / "two.out", "w+"), open(tmp_path / "two.log", "w+")
    p = subprocess.Popen([sys.executable, str(HERE / "sim_two_nodes.py"), str(tmp_path / "two"), orjson.dumps(SMALL)],
                         stdout=out, stderr=log, text=True, env=env)
    try:
        _, one, _ = _run(tmp_path, "one")  # meanwhile, on this session's one-node Ray
        p.wait(timeout=600)
    finally:
        if p.poll() is None:
            p.kill()
        out.seek(0), log.seek(0)
        stdout, stderr = out.read(), log.read()
        out.close(), log.close()
    lines = [ln for ln in stdout.splitlines() if ln.startswith("RESULT ")]
    assert p.returncode == 0 and lines, stderr[-3000:]
    two = orjson.loads(lines[-1][len("RESULT "):])
    assert two["nodes"] == 2 and len(two["owner_nodes"]) == 2, two["owner_nodes"]  # owners on both nodes
    assert all(two["counters"][c] == 0 for c in COUNTERS), two["counters"]
    assert _same(two) == _same(one) and two["counters"] == one["counters"]
