"""Process-host runtimes left open at interpreter exit are closed then: their L2 rows flushed,
DuckDB's objects released before Python tears its modules down (else its bindings print a
screen of "leaked" warnings), a ``memory://`` folder removed from RAM. A Ray host's actors are
Ray's to stop at exit (closing them then could wait on a cluster), so only process-host
runtimes are tracked.
"""

from __future__ import annotations

import atexit
import concurrent.futures.thread  # noqa: F401 - imported before the hook below is registered (see there)
import threading

_OPEN: set = set()


def track(rt) -> None:
    """A process-host runtime just opened."""
    _OPEN.add(rt)


def forget(rt) -> None:
    """A runtime closed (or never tracked)."""
    _OPEN.discard(rt)


def _close_at_exit() -> None:
    for rt in list(_OPEN):
        try:
            rt.close()
        except Exception:  # noqa: BLE001 - exit goes on: every acknowledged write is in the ledger
            pass


# Closing needs thread pools, which stop taking work at exit from a hook of threading's (run
# before atexit's, the last registered first): so this one is registered there, after
# concurrent.futures' own (imported above, not lazily later), to run before it.
getattr(threading, "_register_atexit", atexit.register)(_close_at_exit)
