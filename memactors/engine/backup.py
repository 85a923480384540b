"""A backup taken by the ledger writer while the runtime runs (``memactors.store.backup`` has
the files; ``memactors.runtime.backup`` the facade and the schedule).

Consistency: L2 is a projection that trails the ledger, and the ledger records which events
Lance has applied. With every owner's L2 flushes held (each owner's flush lock: a flush under
way finishes first, its applied marks committed), the ledger's snapshot and Lance's newest
version describe the same applied events; that moment is all the hold lasts (milliseconds),
and writes go on meanwhile, acknowledged by the ledger as ever. The copies are made after it:
the ledger from the snapshot on a cursor of its own (commits go on), L2 from that version.
A purge (which drops old Lance versions and rewrites the ledger file) waits for a backup and a
backup for a purge; a sweep's maintenance (old versions cleaned past their retention) is kept
off by taking the sweep lease for the backup's length.

The backup holds the anchor of its last event but not the folder's key (docs/threat-model.md);
``memactors.runtime.backup`` seals the key into it afterwards when given a key passphrase.
"""

from __future__ import annotations

import asyncio
import os
import time
import uuid

from ..core.errors import BackPressure
from ..store import backup as B
from .l2_pending import l2_table_exists
from .leases import aheld

LEASE_S = 3_600.0  # the sweep lease a backup holds, at most
LEASE_WAIT_S = 120.0  # how long a backup waits for a running sweep to end


async def backup(core, dest: str) -> dict:
    """A consistent backup of ``core``'s folder (ledger, L2 and the anchor, no key) into the
    new, empty folder ``dest``. Returns the manifest with the time each part took."""
    t0 = time.perf_counter()
    holder = f"backup-{uuid.uuid4().hex}"
    deadline = time.monotonic() + LEASE_WAIT_S
    async with core.exclusive():
        while not core.sweep_lease(holder, LEASE_S):
            if time.monotonic() > deadline:
                raise BackPressure("a sweep of this data folder has been running for a while; the backup did not "
                                   "start: retry once it has ended")
            await asyncio.sleep(0.5)
        try:
            return await _copy(core, dest, t0)
        finally:
            core.sweep_release(holder)


async def _copy(core, dest: str, t0: float) -> dict:
    l2_dir = os.path.join(core.data_dir, "l2")
    os.makedirs(dest, exist_ok=True)
    await core.flush()
    if not l2_table_exists(l2_dir):  # a new folder nothing was flushed to yet: the copy needs a table
        await core.peers.owner(0).l2_ready()
    snap = await asyncio.to_thread(B.LedgerSnapshot, core.ledger, os.path.join(dest, B.LEDGER_FILE))
    try:
        owners = [core.peers.owner(i) for i in range(core.num_owners)]
        t_hold = time.perf_counter()
        async with aheld(owners):
            seq = await asyncio.to_thread(snap.begin)
            version = await asyncio.to_thread(B.l2_version, l2_dir)
        held = time.perf_counter() - t_hold
        erased = await asyncio.to_thread(snap.erased)
        t_l2 = time.perf_counter()
        rows = await asyncio.to_thread(B.export_l2, l2_dir, version, os.path.join(dest, B.L2_DIR), erased)
        t_ledger = time.perf_counter()
        out = await asyncio.to_thread(snap.write)
    except BaseException:
        await asyncio.to_thread(snap.close)
        raise
    t_key = time.perf_counter()
    key = core.ledger.key
    B.write_anchor(dest, key, seq, snap.hash)  # the anchor only: the key stays in its key folder
    return B.write_manifest(dest, {
        "folder_id": key.folder_id, "lineage": core.ledger.lineage, "seq": seq, "hash": snap.hash.hex(),
        "ts": snap.ts, "events": out["events"], "l2_version": version, "rows": rows, "key": "none",
        "seconds": {"hold": round(held, 4), "l2": round(t_ledger - t_l2, 3), "ledger": round(t_key - t_ledger, 3),
                    "total": round(time.perf_counter() - t0, 3)}})
