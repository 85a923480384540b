"""Leases over the owners' L2 flushes, taken by a core on its own event loop (a purge in the
ledger writer) and renewed while it works (``LEASE_S``), so that a holder that dies leaves them
in force for one lease at most. The driver's side is ``memactors.actors.flush_hold``."""

from __future__ import annotations

import asyncio
import contextlib
import uuid

LEASE_S = 10.0  # how long a dead holder can keep flushes held
RENEW_S = 3.0  # how often a live holder renews


@contextlib.asynccontextmanager
async def aheld(owners: list):
    """``async with aheld(owner_ports):`` the other owners' flushes wait while one owner
    rewrites the shared Lance table (their updates would preempt its rewrite commit)."""
    token = uuid.uuid4().hex
    await asyncio.gather(*[o.hold_flushes(LEASE_S, token) for o in owners])

    async def renew() -> None:
        while True:
            await asyncio.sleep(RENEW_S)
            with contextlib.suppress(Exception):
                await asyncio.gather(*[o.hold_flushes(LEASE_S, token) for o in owners])

    task = asyncio.get_running_loop().create_task(renew())
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        await asyncio.gather(*[o.release_flushes(token) for o in owners])
