"""The one description of a data folder's layout. Path logic only: nothing here opens a file.

    DIR/
      ledger.duckdb    the hash-chained ledger (DuckDB), the source of truth
      l2/              the LanceDB L2 store; its table is ``memories``
      lock             held (flock) by the ledger writer while a runtime has DIR open for writing
      runtime.json     written by ``memactors up``: where its long-lived runtime is
      up.lock          held (flock) by ``memactors up`` and ``down`` while they start or stop it

The ledger's key and anchor live outside the folder (see ``store.ledger_key``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

LEDGER_FILE = "ledger.duckdb"
L2_DIR = "l2"
L2_TABLE = "memories"
LOCK_FILE = "lock"
RUNTIME_FILE = "runtime.json"
UP_LOCK_FILE = "up.lock"


def resolve(path: str | os.PathLike) -> str:
    """The absolute, symlink-free form of a data folder path (``~`` expanded); one folder has one
    name, so its Ray namespace and its runtime.json are the same whichever way it was spelled."""
    return os.path.realpath(os.path.expanduser(os.fspath(path)))


@dataclass(frozen=True)
class Layout:
    """The paths inside one data folder. ``Layout(data_dir).ledger`` and so on; ``data_dir`` is
    used as given (call :func:`resolve` first for the canonical form)."""

    data_dir: str

    def __post_init__(self) -> None:
        object.__setattr__(self, "data_dir", os.fspath(self.data_dir))

    @property
    def ledger(self) -> str:
        return os.path.join(self.data_dir, LEDGER_FILE)

    @property
    def l2(self) -> str:
        return os.path.join(self.data_dir, L2_DIR)

    @property
    def lock(self) -> str:
        return os.path.join(self.data_dir, LOCK_FILE)

    @property
    def runtime_file(self) -> str:
        return os.path.join(self.data_dir, RUNTIME_FILE)

    @property
    def up_lock(self) -> str:
        return os.path.join(self.data_dir, UP_LOCK_FILE)


# What a data folder holds, and nothing else: the ledger (and DuckDB's log and a purge's
# rewrite of it), L2, the locks, runtime.json.
OWN_ENTRIES = frozenset({LEDGER_FILE, f"{LEDGER_FILE}.wal", f"{LEDGER_FILE}.compact", f"{LEDGER_FILE}.compact.wal",
                         L2_DIR, LOCK_FILE, RUNTIME_FILE, UP_LOCK_FILE})


def looks_like_data_folder(path: str | os.PathLike) -> bool:
    """True when ``path`` is a folder that is empty (but for lock files) or holds a ledger and
    nothing a data folder does not hold: the only folders a ``--fresh`` may delete. False for a
    missing path, a file, or a folder of other things (another program's folder with a file
    named ledger.duckdb among its own was deleted whole). Whether the ledger file is ours is
    the ledger's to say when it is opened (``Ledger``: a DuckDB file of other tables is refused)."""
    path = os.fspath(path)
    if not os.path.isdir(path):
        return False
    entries = set(os.listdir(path))
    if not entries - {LOCK_FILE, UP_LOCK_FILE}:
        return True
    return LEDGER_FILE in entries and entries <= OWN_ENTRIES
