"""Holding the other owners' L2 flushes off while one owner rewrites the shared Lance table (a
sweep's compaction, a purge): their updates would preempt its rewrite commit. The hold is a
lease (``LEASE_S``) the holder renews while it works, so a holder that dies (a killed driver
mid-sweep, a killed ledger writer mid-purge) leaves flushes held, and writers that wait on a
flush stalled, for one lease at most, not for the whole rewrite's budget."""

from __future__ import annotations

import asyncio
import contextlib
import threading
import uuid

from .refs import get_all

LEASE_S = 10.0  # how long a dead holder can keep flushes held
RENEW_S = 3.0  # how often a live holder renews


def _hold(owners: list, token: str) -> list:
    return [o.hold_flushes.remote(LEASE_S, token) for o in owners]


@contextlib.contextmanager
def held(owners: list):
    """``with held(owners) as token:`` (a driver: renewed from a thread). The token lets the
    holder have a held owner flush (``flush_held``)."""
    token = uuid.uuid4().hex
    get_all(_hold(owners, token))
    stop = threading.Event()

    def renew() -> None:
        while not stop.wait(RENEW_S):
            with contextlib.suppress(Exception):  # an owner restarting: its hold went with it
                get_all(_hold(owners, token))

    t = threading.Thread(target=renew, name="memactors-flush-hold", daemon=True)
    t.start()
    try:
        yield token
    finally:
        stop.set()
        t.join()
        get_all([o.release_flushes.remote(token) for o in owners])


@contextlib.asynccontextmanager
async def aheld(owners: list):
    """``async with aheld(owners):`` (an actor: renewed from a task on its loop)."""
    token = uuid.uuid4().hex
    await asyncio.gather(*_hold(owners, token))

    async def renew() -> None:
        while True:
            await asyncio.sleep(RENEW_S)
            with contextlib.suppress(Exception):
                await asyncio.gather(*_hold(owners, token))

    task = asyncio.get_running_loop().create_task(renew())
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        await asyncio.gather(*[o.release_flushes.remote(token) for o in owners])
