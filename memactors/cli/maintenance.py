"""`memactors rebuild` and `memactors purge`: maintenance of a data folder's storage."""

from __future__ import annotations

import click

from memactors.cli.group import cli, common
from memactors.cli.output import Out


@cli.command()
@click.option("--workers", type=click.IntRange(1, 256), help="Processes (Ray tasks on Ray) folding the ledger (default: one per CPU, one for a small ledger).")
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


@cli.command()
@common
def purge(data: str, as_json: bool) -> None:
    """Erase down to the bytes now: rows deleted from L2 (forgotten, evicted) leave its data
    files, full-text index and old versions; destroyed data keys leave the ledger file's freed
    blocks (otherwise done within [lifecycle].purge_delay_s of an erasure)."""
    from memactors.server import open_runtime

    out = Out(as_json)
    with open_runtime(data) as (rt, _):
        res = rt.purge()
    if as_json:
        out.json(res)
    else:
        out.kv([("L2", ", ".join(f"{k} {v}" for k, v in res["l2"].items())),
                ("ledger file", f"{res['ledger']['bytes_before']:,} -> {res['ledger']['bytes_after']:,} bytes")])
