"""`memactors get` and `memactors list`: live memories read by id or by scope, grant-checked
(an id the actor may not read reads as absent, like an unknown one)."""

from __future__ import annotations

import click

from memactors.cli.group import CliError, cli, common
from memactors.cli.output import Out
from memactors.core import records as R
from memactors.core.scopes import check_identifier, parse_scope
from memactors.server import open_runtime

COLUMNS = ["memory id", "version", "status", "category", "content"]


def _row(m) -> list:
    return [m.memory_id, m.version, m.status, m.category, m.content]


@cli.command("get")
@click.argument("memory_id")
@click.option("--actor", required=True, help="Who reads (needs a read grant on the memory's scope).")
@common
def get(memory_id: str, actor: str, data: str, as_json: bool) -> None:
    """The live memory MEMORY_ID, if ACTOR may read it."""
    R.check_memory_id(memory_id)
    check_identifier(actor, "actor")
    out = Out(as_json)
    with open_runtime(data) as (rt, _mode):
        m = rt.agent(actor, scopes=["/global/"]).get(memory_id)  # by id: the scopes are not consulted
    if m is None:
        raise CliError("no live memory with that id that this actor may read")
    if as_json:
        out.json(m.to_dict())
        return
    out.kv([("memory id", m.memory_id), ("scope", m.scope), ("version", m.version), ("status", m.status),
            ("source", m.source_kind), ("category", m.category), ("content", m.content)])


@cli.command("list")
@click.argument("scope")
@click.option("--actor", required=True, help="Who reads (needs a read grant on SCOPE).")
@click.option("--subject-prefix", help="Only memories whose subject starts with this.")
@click.option("--limit", type=click.IntRange(1, 10_000), default=100, show_default=True, help="Most memories shown.")
@click.option("--offset", type=click.IntRange(0), default=0, show_default=True,
              help="Skip this many first (the next page: offset + limit).")
@common(json_help="Print the page as one JSON array (an object per memory), on one line, instead of a table.")
def list_(scope: str, actor: str, subject_prefix: str | None, limit: int, offset: int, data: str,
          as_json: bool) -> None:
    """The live memories of SCOPE, oldest first, a page at a time."""
    scope = str(parse_scope(scope))
    check_identifier(actor, "actor")
    out = Out(as_json)
    with open_runtime(data) as (rt, _mode):
        agent = rt.agent(actor, scopes=[scope])
        rows = agent.list(scope=scope, subject_prefix=subject_prefix, limit=limit + 1, offset=offset)
    more, rows = len(rows) > limit, rows[:limit]
    if as_json:
        out.json([m.to_dict() for m in rows])
        return
    out.table(COLUMNS, [_row(m) for m in rows], empty="no live memories")
    if more:
        out.line(f"more: --offset {offset + limit}", style="dim")
