"""Leases over the owners' L2 flushes, which their holder renews while it works (``LEASE_S``),
so that a holder that dies (a killed driver mid-sweep, a killed ledger writer mid-purge) leaves
them in force for one lease at most.

- ``held``: the other owners' flushes wait while one owner rewrites the shared Lance table (a
  sweep's compaction, a purge): their updates would preempt its rewrite commit. Writers that
  wait on a flush wait as long.
- ``deferred``: the owners' own background flushes wait while a sweep's changes land, so each
  owner's share then reaches Lance in one pass; a flush someone asks for still runs.
"""

from __future__ import annotations

import contextlib
import threading
import uuid

from ..engine.leases import LEASE_S, RENEW_S
from .refs import get_all


def _hold(owners: list, token: str) -> list:
    return [o.hold_flushes.remote(LEASE_S, token) for o in owners]


@contextlib.contextmanager
def leased(take, release, renew_s: float = RENEW_S):
    """Take a lease (``take()``: the calls that take or renew it), renew it from a thread every
    ``renew_s`` while the block runs, release it after (a driver's side of every lease)."""
    get_all(take())
    stop = threading.Event()

    def renew() -> None:
        while not stop.wait(renew_s):
            with contextlib.suppress(Exception):  # an owner restarting: its lease went with it
                get_all(take())

    t = threading.Thread(target=renew, name="memactors-flush-lease", daemon=True)
    t.start()
    try:
        yield
    finally:
        stop.set()
        t.join()
        get_all(release())


def held(owners: list):
    """``with held(owners):`` (a driver: renewed from a thread)."""
    token = uuid.uuid4().hex
    return leased(lambda: _hold(owners, token), lambda: [o.release_flushes.remote(token) for o in owners])


def deferred(owners: list):
    """``with deferred(owners):`` the owners' own flushes (the flush loop, a full outbox) wait
    while a sweep's changes land, so that the sweeper then has the owners' shares written to
    Lance in one pass (``ScopeCore.apply_joint``). Unlike a hold this blocks no one: a flush
    someone asks for (``flush``, a recall as of a past point, an erasure of every version) runs
    at once; and it takes no lock an owner could need while deciding the sweep."""
    return leased(lambda: [o.defer_flushes.remote(LEASE_S) for o in owners],
                   lambda: [o.defer_flushes.remote(0.0) for o in owners])
