"""The buffered randomness ids are made from (``core.randoms``): never the same bytes twice,
in one process, across threads or in a forked child."""

import os
import threading

from memactors.core.randoms import random_bytes
from memactors.core.records import new_memory_ids
from memactors.runtime.results import new_recall_id


def test_bytes_are_of_the_length_asked_and_never_repeat():
    seen = [random_bytes(16) for _ in range(5_000)]  # past several refills
    assert all(len(b) == 16 for b in seen) and len(set(seen)) == len(seen)
    assert len(random_bytes(10_000)) == 10_000  # more than a refill holds
    assert random_bytes(0) == b""


def test_threads_share_the_buffer_without_handing_out_a_byte_twice():
    out: list[bytes] = []

    def draw():
        out.extend(random_bytes(16) for _ in range(2_000))

    threads = [threading.Thread(target=draw) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(set(out)) == len(out) == 8_000


def test_a_forked_child_draws_other_bytes_than_its_parent():
    random_bytes(16)  # the parent's buffer holds bytes it has not handed out yet
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: its next ids, written back
        os.write(w, (new_recall_id() + new_memory_ids([None])[0]).encode())
        os._exit(0)
    os.close(w)
    os.waitpid(pid, 0)
    child = os.read(r, 128).decode()
    os.close(r)
    parent = new_recall_id() + new_memory_ids([None])[0]
    assert len(child) == len(parent) == 64 and child[:32] != parent[:32] and child[32:] != parent[32:]
