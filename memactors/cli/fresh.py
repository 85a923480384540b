"""``--fresh`` (demo, bench): delete a data folder first, but only one that is plainly a
memactors data folder and that no runtime is using."""

from __future__ import annotations

import os
import shlex
import shutil

from memactors.cli.group import CliError
from memactors.server import folder_in_use
from memactors.store.layout import LEDGER_FILE, Layout, looks_like_data_folder, resolve


def fresh(data: str) -> None:
    """Delete the data folder ``data`` (as the user typed it) if it exists; raise CliError and
    delete nothing when it is not a folder, does not look like a data folder, has a runtime
    up (runtime.json) or is held open by one (its lock)."""
    path = resolve(data)
    if not os.path.exists(path):
        return
    if not os.path.isdir(path):
        raise CliError(f"--fresh: {path} is not a folder; refusing to delete it")
    if not looks_like_data_folder(path):
        raise CliError(f"--fresh: {path} is not empty and has no {LEDGER_FILE}, so it does not look like a "
                       "memactors data folder; refusing to delete it")
    if os.path.exists(Layout(path).runtime_file):
        raise CliError(f"--fresh: a runtime is up on {path}; run `memactors down --data {shlex.quote(data)}` first")
    if folder_in_use(path):
        raise CliError(f"--fresh: {path} is open by another memactors runtime; refusing to delete it")
    shutil.rmtree(path)
