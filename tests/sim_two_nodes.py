"""Run the small simulation of ``test_sim_memactors`` on a two-node Ray cluster on this machine
(``ray.cluster_utils.Cluster``: a head and a second node, each a raylet of its own) and print
the report's totals and the nodes the scope owners ran on, as JSON. Used by
``test_sim_cluster.py`` in a process of its own (the test session has its Ray already).

    python tests/sim_two_nodes.py DATA_DIR CONFIG_JSON
"""

from __future__ import annotations

import os
import sys
import time

import orjson


def main(path: str, world: dict) -> None:
    os.environ.setdefault("RAY_AUTH_MODE", "disabled")
    import ray
    from ray._private import state
    from ray.cluster_utils import Cluster

    from memactors.sim import MemactorsBackend, WorldConfig, run

    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False})
    cluster.add_node(num_cpus=1)
    cluster.wait_for_nodes()
    ray.init(address=cluster.address, log_to_driver=False, configure_logging=False)
    deadline = time.monotonic() + 60  # a node is listed before its CPUs are: owners go where CPUs are
    while ray.cluster_resources().get("CPU", 0) < 2 and time.monotonic() < deadline:
        time.sleep(0.1)
    try:
        backend = MemactorsBackend(path)
        report = run(WorldConfig(**world), [backend], progress=False)
        owners = [a for a in state.actors().values() if a.get("ActorClassName", "").endswith("ScopeOwner")]
        [col] = report.backends
        out = {"totals": col["totals"], "counters": col["counters"], "nodes": len(ray.nodes()),
               "owner_nodes": sorted({a["Address"]["NodeID"] for a in owners})}
    finally:
        ray.shutdown()
        cluster.shutdown()
    sys.stdout.write("RESULT " + orjson.dumps(out).decode() + "\n")


if __name__ == "__main__":
    main(sys.argv[1], orjson.loads(sys.argv[2]))
