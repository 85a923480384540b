"""`memactors rollback` and `memactors fork`: undo by compensating events, and a new data folder
as of a point (`memactors audit at` shows the store as it stood then); `memactors history`: the
versions of a memory's fact."""

from __future__ import annotations

import click

from memactors.cli.group import POINT_HELP, CliError, cli, common, parse_point
from memactors.cli.output import HISTORY_COLUMNS, Out, change_lines, history_rows
from memactors.core import records as R
from memactors.core.scopes import check_identifier, parse_scope
from memactors.server import open_runtime

def _time(value: str | None, flag: str) -> str | None:
    """A time for --since/--until. All digits would be a ledger seq elsewhere: here it is refused,
    never read as microseconds."""
    if value is None:
        return None
    if parse_point(value) != value:
        raise CliError(f"{flag} takes an ISO 8601 time (e.g. 2026-11-30T10:00:00Z), not a ledger seq: "
                       "--to SEQ undoes everything after a seq")
    return value


@cli.command()
@click.option("--to", "to", metavar="T", help="Undo everything after T (a seq or ISO time). " + POINT_HELP)
@click.option("--memory-id", help="Undo this memory (and reinstate what it superseded).")
@click.option("--source-kind", help="Undo every write from this source kind (e.g. web).")
@click.option("--by", "by_actor", metavar="ACTOR", help="Undo every write made by this actor.")
@click.option("--since", metavar="TIME", help="With --source-kind/--by: writes at or after TIME (ISO 8601).")
@click.option("--until", metavar="TIME", help="With --source-kind/--by: writes before TIME (ISO 8601).")
@click.option("--cascade", is_flag=True, help="Undo what was derived only from the undone memories too.")
@click.option("--scope", help="Limit --to / --source-kind / --by to this subtree.")
@click.option("--actor", required=True, help="Who rolls back (needs write grants on what changes).")
@click.option("--reason", required=True, help="Why (in every compensating event).")
@click.option("--dry-run", is_flag=True, help="Print the plan; change nothing.")
@common
def rollback(to: str | None, memory_id: str | None, source_kind: str | None, by_actor: str | None,
             since: str | None, until: str | None, cascade: bool, scope: str | None, actor: str, reason: str,
             dry_run: bool, data: str, as_json: bool) -> None:
    """Undo by compensating events (history is never rewritten): to a point in time, one memory
    with what was derived from it, or every write of a source kind or actor. verify() runs first;
    a forgotten memory stays forgotten (the plan says so)."""
    where = {k: v for k, v in (("source_kind", source_kind), ("actor", by_actor),
                               ("since", _time(since, "--since")), ("until", _time(until, "--until"))) if v is not None}
    if (since or until) and not (source_kind or by_actor):
        raise CliError("--since/--until go with --source-kind or --by")
    if sum(x is not None for x in (to, memory_id, where or None)) != 1:
        raise CliError("give one of --to, --memory-id, or --source-kind/--by")
    check_identifier(actor, "actor")  # before a runtime starts: bad input costs nothing
    if memory_id is not None:
        R.check_memory_id(memory_id)
    if scope is not None:
        parse_scope(scope)
    at = parse_point(to) if to is not None else None
    out = Out(as_json)
    with open_runtime(data) as (rt, _mode):
        plan = rt.rollback(at=at, memory_id=memory_id, where=where or None,
                           cascade=cascade, scope=scope, actor=actor, reason=reason, dry_run=dry_run)
    if as_json:
        out.json(plan.to_dict())
        return
    for line in plan.summary().splitlines():
        out.line(line)


@cli.command()
@click.argument("path")
@click.option("--at", "at", metavar="T", help="The point to fork at (default: now). " + POINT_HELP)
@click.option("--workers", type=click.IntRange(1, 256), help="Ray tasks rebuilding the fork's L2.")
@common
def fork(path: str, at: str | None, workers: int | None, data: str, as_json: bool) -> None:
    """A new data folder PATH holding this one as of T: its ledger verifies on its own, its L2 is
    rebuilt from it, memories erased here stay erased there. This folder is not touched."""
    point = parse_point(at) if at is not None else None
    out = Out(as_json)
    with open_runtime(data) as (rt, _mode):
        res = rt.fork(path, at=point, workers=workers)
    if as_json:
        out.json(res)
    else:
        out.kv([(k.replace("_", " "), v) for k, v in res.items()])


@cli.command("history")
@click.argument("memory_id", required=False)
@click.option("--scope", help="With --subject and --predicate: the fact to show (instead of MEMORY_ID).")
@click.option("--subject", help="The fact's subject.")
@click.option("--predicate", help="The fact's predicate.")
@click.option("--actor", required=True, help="Who asks (needs a read grant on the scope).")
@common
def history_cmd(memory_id: str | None, scope: str | None, subject: str | None, predicate: str | None, actor: str,
                data: str, as_json: bool) -> None:
    """Every version of MEMORY_ID's fact (or of --scope/--subject/--predicate), oldest first: its
    content (gone once erased), when and by whom it was written, its source, the gate's verdict
    then (rule ids and spans), and every change since with why it happened."""
    fact = (scope, subject, predicate)
    if (memory_id is None) == all(x is None for x in fact) or (memory_id is None and None in fact):
        raise CliError("give MEMORY_ID, or --scope, --subject and --predicate together")
    check_identifier(actor, "actor")
    if memory_id is not None:
        R.check_memory_id(memory_id)
    else:
        parse_scope(scope)
    out = Out(as_json)
    with open_runtime(data) as (rt, _mode):
        h = rt.history(memory_id if memory_id is not None else fact, actor=actor)
    if as_json:
        out.json(h)
        return
    title = f"{h['scope']}  {h['subject'] or '(text only)'} / {h['predicate'] or '-'}"
    out.table(HISTORY_COLUMNS, history_rows(h["versions"]), title=title)
    for line in change_lines(h["versions"]):
        out.line(line)
