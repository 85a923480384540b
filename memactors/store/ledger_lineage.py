"""A folder's line (the ledger side of forks, copies and restores): a ledger made a folder of
its own under the same key, and the memories its line erased elsewhere erased here too.

Mixed into ``Ledger``. A fork's ledger is adopted (``_adopt``: re-vouched, re-anchored); a
plain copy of a folder (``cp -r``) found away from its id's home becomes a folder of its own at
its first open (``_is_copy``, ``_become_copy``: the key folder records each id's home); a
restore, a fork and a copy erase again what their origin erased after them (``erase_again``).
"""

from __future__ import annotations

import os
import time
import uuid

import orjson

from ..core import events as E
from ..core.errors import LedgerTampered
from ..core.idempotency import IdempotencyCache
from ..core.project import Change
from .entries import Entry, encode
from .ledger_key import read_erased, read_home, write_home


class LedgerLineage:
    def _adopt(self) -> None:
        row = self._x("SELECT max(seq) FROM events")[0]
        self.last_seq = int(row[0] or 0)
        if not self.last_seq:
            return
        self.last_hash = bytes(self._x("SELECT hash FROM events WHERE seq = ?", [self.last_seq])[0][0])
        for seq, h in self._x("SELECT seq, hash FROM events WHERE action = 'grant' OR seq = ?", [self.last_seq]):
            self._x("UPDATE events SET mac = ? WHERE seq = ?", [self.key.mac(seq, bytes(h)), seq])
        self.key.write_head(self.last_seq, self.last_hash)
        # Memories erased in the original after the fork point have no key here: the fork
        # erases them too, with its own forget events (it never holds what was erased).
        later = self._x("""SELECT DISTINCT e.memory_id, e.scope FROM events e
                           WHERE e.action IN ('write', 'write_working') AND e.encrypted
                             AND NOT EXISTS (SELECT 1 FROM keys k WHERE k.memory_id = e.memory_id)
                             AND NOT EXISTS (SELECT 1 FROM events f WHERE f.memory_id = e.memory_id
                                             AND f.action = 'forget') ORDER BY 1""")
        if later:
            self.erase_again(later, "erased in the original after the fork point", "memactors-fork",
                             f"fork-erasures-{self.last_seq}")

    def _is_copy(self) -> bool:
        """Whether this folder is a copy (``cp -r``) of the one its folder id belongs to, which
        still holds its ledger elsewhere. A folder moved (the recorded one gone) takes the id with
        it; one found first records itself as the id's home."""
        here = os.path.realpath(os.path.dirname(self.path))
        home = read_home(self.key.directory, self.key.folder_id)
        if home == here:
            return False
        if home is not None and os.path.exists(os.path.join(home, os.path.basename(self.path))):
            return True
        write_home(self.key.directory, self.key.folder_id, here)
        return False

    def _become_copy(self) -> None:
        """A copy becomes a folder of its own: a new folder id and lineage under the same key
        (its MACs, digests and pseudonyms hold), anchored at its own newest event once that
        agrees with the original's anchor (the copy holds the anchored event, or is older than
        it: a copy of a live folder). What the original erased since is erased here too, as a
        restore and a fork do."""
        head = self.key.read_head()
        if head is not None and head[0] <= self.last_seq:
            row = self._x("SELECT hash FROM events WHERE seq = ?", [head[0]])
            if not row or E.blob(row[0][0]) != head[1]:
                origin = read_home(self.key.directory, self.key.folder_id)
                raise LedgerTampered(f"the ledger at {self.path} (a copy of {origin}) does not match its original's "
                                     f"anchor at seq {head[0]}: it was changed outside memactors")
        if self.last_seq:
            mac = self._x("SELECT mac FROM events WHERE seq = ?", [self.last_seq])[0][0]
            if not self.key.check(self.last_seq, self.last_hash, mac):
                raise LedgerTampered(f"the ledger at {self.path} (a copy) ends at seq {self.last_seq}, an event the "
                                     "ledger key does not vouch for: events were cut outside memactors")
        origin = self.lineage
        new_id = uuid.uuid4().hex
        key = self.key.install(self.key.directory, new_id)
        with self._transaction():
            self._set_meta("folder_id", new_id.encode())
            self._set_meta("lineage", new_id.encode())
        self.key, self.lineage = key, new_id
        if self.last_seq:
            key.write_head(self.last_seq, self.last_hash)
        write_home(key.directory, new_id, os.path.realpath(os.path.dirname(self.path)))
        gone = read_erased(key.directory, origin) or set()
        if gone:
            held = self._x("""SELECT DISTINCT e.memory_id, e.scope FROM events e
                              WHERE e.action IN ('write', 'write_working') AND list_contains(?, e.memory_id)
                                AND EXISTS (SELECT 1 FROM keys k WHERE k.memory_id = e.memory_id) ORDER BY 1""",
                           [sorted(gone)])
            self.erase_again(held, "erased in the original after this copy was made", "memactors-copy",
                             f"copy-erasures-{new_id}", in_l2=True)

    def erase_again(self, pairs: list[tuple[str, str]], reason: str, actor: str, idem_key: str,
                    in_l2: bool = False) -> list[str]:
        """Erase (memory id, scope) pairs this ledger still holds that were erased elsewhere (a
        fork's origin after the fork point, a backup's folder after the backup): a forget event
        each, their data keys destroyed, in one commit. ``in_l2``: the folder's L2 still holds
        their rows (a copy's), so the owners delete them (else L2 is written without them).
        Returns the ids."""
        if not pairs:
            return []
        now = int(time.time() * 1_000_000)
        ids = [m for m, _ in pairs]
        # The tombstone keeps the sensitivity where the record still opens here (a backup's; a
        # fork's were erased in the original, their keys not copied): what its events are shown at.
        level = {m: r.get("sensitivity") for m, r in self.fold("list_contains(?, e.memory_id)", [ids]).records.items()}
        changes = [Change(E.FORGET, s, m, patch={"status": "tombstoned", **({"sensitivity": level[m]} if level.get(m)
                                                                            else {})}, reason=reason) for m, s in pairs]
        self.commit(encode([Entry(idem_key, actor, now, changes, orjson.dumps({"decision": "forgotten",
                                                                                "forgotten": ids}),
                                  destroy_keys=ids, l2=[True] * len(changes) if in_l2 else None)]), IdempotencyCache(0))
        return ids
