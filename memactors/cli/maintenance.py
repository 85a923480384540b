"""`memactors rebuild`: maintenance of a data folder that is not open by a runtime."""

from __future__ import annotations

import click

from memactors.cli.group import cli, common
from memactors.cli.output import Out


@cli.command()
@click.option("--workers", type=click.IntRange(1, 256), help="Ray tasks folding the ledger (default: one per CPU).")
@common
def rebuild(workers: int | None, data: str, as_json: bool) -> None:
    """Rebuild L2 (the LanceDB table) from the ledger alone: the ledger is the source of truth.

    Every memory's events are folded through the one projection, its content decrypted and
    embedded again; the old table's versions are purged. The folder must not be open by a
    runtime (run `memactors down` first)."""
    from memactors.server import rebuild as do_rebuild

    out = Out(as_json)
    res = do_rebuild(data, workers=workers)
    if as_json:
        out.json(res)
    else:
        out.kv([(k.replace("_", " "), v) for k, v in res.items()])
