"""The Ray owner's collector hook (``actors.owner.freeze_survivors``), in a child process: a
hook that freezes objects must not run in the test process's own collector."""

from __future__ import annotations

import subprocess
import sys

CHILD = """
import gc
import weakref

from memactors.actors.owner import freeze_survivors

gc.disable()  # collections only where this script asks for them
gc.callbacks.append(freeze_survivors)
kept = [{"i": [i]} for i in range(2000)]  # an owner's records: they outlive the young collection


class Node:
    pass


young = Node()
young.me = young  # a cycle that dies young
del young
held = Node()
gone = weakref.ref(held)
frozen = gc.get_freeze_count()
assert gc.collect(0) >= 1, "the young cycle is collected"
assert gc.get_freeze_count() >= frozen + 2 * len(kept), "what survived it is frozen"
assert gc.collect(1) == 0 and gc.get_count()[0] == 0, "the middle generation holds nothing to scan"
late = Node()
late.me = late
gc.collect(2)  # a full collection (Ray's requests) still reclaims a cycle not yet frozen
del late
assert gc.collect(2) >= 1
del held  # frozen, and still freed by its reference count (a scope leaving the hot cache)
assert gone() is None
print("ok")
"""


def test_an_owner_freezes_what_outlives_a_young_collection_and_still_collects_cycles_that_die_young():
    out = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr
