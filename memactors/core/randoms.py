"""Random bytes for the ids made one at a time on a hot path (recall ids, made idempotency keys,
memory ids), taken from one ``os.urandom`` read per 4 KiB.

Each ``os.urandom`` call releases the GIL, and a thread that releases it while another thread
runs Python waits for the switch interval (5 ms) to get it back. On the process host the
caller's thread and the cores' loop share the GIL: a recall id cost 0.9 us alone and 185 us
beside a busy thread, 0.35 us drawn from a buffer (RESULTS, sitting 30). Data keys and nonces
are not drawn from here: the ledger reads them from the OS per commit (``store.entries``).
"""

from __future__ import annotations

import os
import threading

_CHUNK = 4096
_buf = bytearray()
_lock = threading.Lock()


def random_bytes(n: int) -> bytes:
    """``n`` bytes from the OS's randomness (as ``os.urandom(n)``), buffered."""
    global _buf
    with _lock:
        if len(_buf) < n:
            _buf = bytearray(os.urandom(max(_CHUNK, n)))
        out = bytes(_buf[:n])
        del _buf[:n]
    return out


def _after_fork() -> None:
    # A child must not hand out the bytes its parent will hand out too (the same ids twice),
    # nor inherit a lock some other thread of the parent held.
    global _buf, _lock
    _buf, _lock = bytearray(), threading.Lock()


os.register_at_fork(after_in_child=_after_fork)
