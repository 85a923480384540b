"""``--fresh`` (demo, bench): delete a data folder first, but only one that is plainly a
memactors data folder and that no runtime is using; and the refusal `demo` gives without it."""

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
    if not looks_like_data_folder(path) or not _ours(os.path.join(path, LEDGER_FILE)):
        raise CliError(f"--fresh: {path} holds other things than a memactors data folder's ({LEDGER_FILE}, l2/, "
                       "its locks), so it does not look like one; refusing to delete it")
    if os.path.exists(Layout(path).runtime_file):
        raise CliError(f"--fresh: a runtime is up on {path}; run `memactors down --data {shlex.quote(data)}` first")
    if folder_in_use(path):
        raise CliError(f"--fresh: {path} is open by another memactors runtime; refusing to delete it")
    shutil.rmtree(path)


def _ours(ledger: str) -> bool:
    """Whether a ledger file (if there is one) holds the ledger's tables, not another program's."""
    if not os.path.exists(ledger):
        return True
    import duckdb

    from memactors.store.ledger import another_programs

    try:
        con = duckdb.connect(ledger, read_only=True)
    except duckdb.Error:  # damaged, or held open: not for --fresh to judge (a held one is refused next)
        return True
    try:
        names = {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
    finally:
        con.close()
    return not another_programs(names)


def refuse_used(data: str, seq: int | None = None) -> None:
    """Raise CliError when the data folder ``data`` already holds a ledger (or, attached to its
    `up` runtime, when that ledger's head ``seq`` is past 0): the demo's tenants, grants and
    memories would be mixed into it (re-granting its actors). A folder `up` serves is judged by
    ``seq`` once attached, so an `up` on a new folder still runs the demo."""
    path = resolve(data)
    if seq is None and os.path.exists(Layout(path).runtime_file):
        return
    if (seq or 0) > 0 or (seq is None and os.path.exists(Layout(path).ledger)):
        raise CliError(f"{path} already holds a memactors ledger and the demo writes grants and memories of its own "
                       f"into it; pass --fresh to delete it first, or name a new folder with --data")
