"""`memactors grant` and `memactors grants`: bind actors to scopes, list the bindings."""

from __future__ import annotations

import click
from rich.text import Text

from memactors.cli.group import cli, common
from memactors.cli.output import GRANT_COLUMNS, Out, grant_rows
from memactors.core.grants import GrantTable
from memactors.core.scopes import check_identifier
from memactors.server import open_runtime


@cli.command()
@click.argument("actor")
@click.argument("scope")
@click.option("--read/--no-read", default=True, show_default=True, help="Read SCOPE and its descendants.")
@click.option("--write/--no-write", default=False, show_default=True, help="Write SCOPE and its descendants.")
@click.option("--by", default="admin", show_default=True, help="Who makes the change (logged).")
@click.option("--reason", help="Why this share (kept in the ledger event, through the write gate).")
@click.option("--clearance", type=click.Choice(["public", "internal", "confidential", "restricted"]),
              default="confidential", show_default=True, help="The most sensitive memories ACTOR may recall there.")
@common
def grant(actor: str, scope: str, read: bool, write: bool, by: str, reason: str | None, clearance: str, data: str,
          as_json: bool) -> None:
    """Grant ACTOR read (and write) on SCOPE; --no-read without --write revokes. Shows ACTOR's grants."""
    GrantTable.make(actor, scope, read=read, write=write, clearance=clearance)  # validate before paying for a runtime
    check_identifier(by, "--by")
    out = Out(as_json)
    with open_runtime(data, create=True) as (rt, _mode):
        g = rt.grant(actor, scope, read=read, write=write, by=by, reason=reason, clearance=clearance)
        mine = rt.grants(actor)
    if as_json:
        out.json({"grant": g, "revoked": not (read or write), "grants": mine})
        return
    out.line(Text(f"{'revoked' if not (read or write) else 'granted'}: {actor} on {g['scope']}", style="green"))
    out.table(GRANT_COLUMNS, grant_rows(mine), title=f"grants of {actor}")


@cli.command()
@click.argument("actor", required=False)
@common
def grants(actor: str | None, data: str, as_json: bool) -> None:
    """List the grants (of ACTOR, or of everyone), each with the reason it was given and who gave it."""
    if actor is not None:
        check_identifier(actor, "actor")
    out = Out(as_json)
    with open_runtime(data) as (rt, _mode):
        gs = rt.grants(actor)
    if as_json:
        out.json({"grants": gs})
        return
    out.table(GRANT_COLUMNS, grant_rows(gs), empty="no grants")
