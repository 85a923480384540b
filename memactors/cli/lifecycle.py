"""`memactors gc`, `memactors contradictions list|resolve`, `memactors stats`: memory that ages."""

from __future__ import annotations

import click
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

from memactors.cli.group import CliError, Group, cli, common
from memactors.cli.output import Out, fmt
from memactors.core import records as R
from memactors.core.scopes import check_identifier, parse_scope
from memactors.server import open_runtime


@cli.command()
@click.option("--dry-run", is_flag=True, help="Plan only: say what would happen, change nothing.")
@click.option("--scope", help="Only this scope and its descendants.")
@click.option("--workers", type=click.IntRange(1, 4096), help="Ray tasks scanning L2 for the plan (default: one per CPU).")
@common
def gc(dry_run: bool, scope: str | None, workers: int | None, data: str, as_json: bool) -> None:
    """A lifecycle sweep: plan by rule and tenant over L2 (hard_expired, soft_expired_unused,
    superseded_old, low_confidence_stale, staleness, review_due), then apply it: a ledger event
    per memory, evicted rows deleted, compaction where it pays, old versions cleaned."""
    if scope is not None:
        parse_scope(scope)
    out = Out(as_json)
    from memactors.actors.sweeper import STEPS

    with open_runtime(data) as (rt, _):
        with Progress(TextColumn("{task.description}"), BarColumn(), TimeElapsedColumn(), console=out.console,
                      disable=as_json, transient=True) as bar:
            task = bar.add_task("gc", total=len(STEPS) - (2 if dry_run else 0))

            def step(name: str) -> None:
                bar.update(task, description=f"gc: {name}", completed=STEPS.index(name))

            res = rt.gc(dry_run=dry_run, scope=scope, workers=workers, progress=step)
    if as_json:
        out.json(res.to_dict())
        return
    out.line(res.summary())


@cli.group(cls=Group)
def contradictions() -> None:
    """Close calls between versions of one fact from different sources, waiting for a reviewer."""


@contradictions.command("list")
@click.argument("scope")
@click.option("--actor", required=True, help="Who reviews (needs a read grant on SCOPE).")
@common
def contradictions_list(scope: str, actor: str, data: str, as_json: bool) -> None:
    """List the facts of SCOPE with versions flagged for a contradiction review."""
    parse_scope(scope)
    check_identifier(actor, "actor")
    out = Out(as_json)
    with open_runtime(data) as (rt, _):
        groups = rt.contradictions.pending(scope, actor=actor)
    if as_json:
        out.json({"pending": groups})
        return
    rows = [[g["subject"], g["predicate"], m["memory_id"], m["object"], m["source_kind"], fmt(m["confidence"]),
             m["content"]] for g in groups for m in g["memories"]]
    out.table(["subject", "predicate", "memory id", "object", "source", "confidence", "content"], rows,
              title=f"contradictions in {scope}", empty="nothing to review")


@contradictions.command("resolve")
@click.argument("memory_id")
@click.option("--actor", required=True, help="Who resolves (needs a write grant on the memory's scope).")
@click.option("--reason", required=True, help="Why this version is right (logged).")
@common
def contradictions_resolve(memory_id: str, actor: str, reason: str, data: str, as_json: bool) -> None:
    """Keep MEMORY_ID live; the versions flagged with it are superseded (a ledger event each)."""
    R.check_memory_id(memory_id)
    check_identifier(actor, "actor")
    if not reason.strip():
        raise CliError("--reason must not be empty")
    out = Out(as_json)
    with open_runtime(data) as (rt, _):
        res = rt.contradictions.resolve(memory_id, actor=actor, reason=reason)
    if as_json:
        out.json(res)
        return
    out.kv([("kept", res["memory_id"]), ("superseded", ", ".join(res["superseded"]) or "-")])


@cli.command()
@common
def stats(data: str, as_json: bool) -> None:
    """Lifecycle counters (writes, reads, hits, dedups, contradictions, blocks, evictions by
    rule, stale marks), memories by status, pool and tenant, expiry distribution, folder size."""
    out = Out(as_json)
    with open_runtime(data) as (rt, _):
        st = rt.stats()
    if as_json:
        out.json(st)
        return
    c, m = st["counters"], st["memories"]
    out.kv(list(c.items()), title="counters")
    out.kv([("memories", m["rows"]), ("by status", m["by_status"]), ("by pool", m["by_pool"]),
            ("working pool (L1)", m["working_pool"]), ("hard expiry", m["hard_expiry"]),
            ("soft expiry", m["soft_expiry"]), ("tenants", len(m["by_tenant"])),
            ("data folder", f"{st['data_folder']['bytes']:,} bytes in {st['data_folder']['files']:,} files")],
           title="memories")
