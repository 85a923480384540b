"""L2 of a folder that has no table yet, opened when first used.

Importing lancedb is most of a new runtime's start (0.6 s of the process host's 1.2 s), and a
folder without an L2 table has nothing in it to check, load or search: writes are acknowledged
by the ledger and wait in the outbox, so the first flush can open it. A call made before then
opens the table in the calling thread; the core makes its L2 calls in worker threads
(``asyncio.to_thread``), so the event loop never waits for the import.
"""

from __future__ import annotations

import os
import threading

from ..store.layout import L2_TABLE


def l2_table_exists(l2_dir: str) -> bool:
    return os.path.isdir(os.path.join(l2_dir, f"{L2_TABLE}.lance"))


class PendingL2:
    """Stands for an ``L2Store`` until its first use; ``open_store`` makes the real one."""

    def __init__(self, open_store, l2_dir: str) -> None:
        self._open, self._dir = open_store, l2_dir
        self._lock = threading.Lock()
        self.store = None

    def opened(self):
        with self._lock:  # two worker threads may ask at once: one table, opened once
            if self.store is None:
                self.store = self._open()
        return self.store

    # Reads that may come before the first flush. A table nobody created yet holds no rows, and
    # opening it to say so would cost the import this class defers. While this owner has not
    # opened L2 it has flushed nothing, so no row of its scopes is anywhere; a table another
    # owner created meanwhile is opened and read.

    def _absent(self) -> bool:
        return self.store is None and not l2_table_exists(self._dir)

    def ids_and_scopes(self):
        if self._absent():
            import pyarrow as pa

            return pa.table({"memory_id": pa.array([], pa.string()), "scope": pa.array([], pa.string())})
        return self.opened().ids_and_scopes()

    def governed_digests(self):
        if self._absent():
            from ..core.records import DIGESTS

            return DIGESTS.empty_table()
        return self.opened().governed_digests()

    def counts(self, now_us: int) -> dict:
        if self._absent():
            from ..store.l2_counts import empty, table_counts

            return table_counts(empty(), now_us)
        return self.opened().counts(now_us)

    def versions_of_many(self, facts: list) -> list[dict]:
        return [] if self._absent() else self.opened().versions_of_many(facts)

    def __getattr__(self, name: str):
        store = self.store
        if store is not None:
            return getattr(store, name)

        def call(*args, **kw):  # runs where it is called: in a worker thread
            return getattr(self.opened(), name)(*args, **kw)

        return call
