"""`memactors explain RECALL_ID` and `memactors cite RECALL_ID MEMORY_ID...`: replay the evidence
of one recall, and record which of its hits the model used."""

from __future__ import annotations

import click

from memactors.cli.group import cli, common
from memactors.cli.output import Out, show_evidence
from memactors.core import records as R
from memactors.core.scopes import check_identifier
from memactors.server import open_runtime


@cli.command()
@click.argument("recall_id")
@click.option("--actor", required=True, help="Who asks (read grants must cover the recall's scopes).")
@common
def explain(recall_id: str, actor: str, data: str, as_json: bool) -> None:
    """Why each hit of RECALL_ID came back (its score and the components behind it, conflicts it
    won), the filters applied, and how many candidates the threshold, conflicts and budget removed."""
    check_identifier(recall_id, "recall_id")  # validate before paying for a runtime
    check_identifier(actor, "actor")
    out = Out(as_json)
    with open_runtime(data) as (rt, _):
        ev = rt.explain(recall_id, actor=actor)
    if as_json:
        out.json(ev)
        return
    show_evidence(out, ev)


@cli.command()
@click.argument("recall_id")
@click.argument("memory_ids", nargs=-1, required=True)
@click.option("--actor", required=True, help="Who marks them (read grants must cover the recall's scopes).")
@common
def cite(recall_id: str, memory_ids: tuple[str, ...], actor: str, data: str, as_json: bool) -> None:
    """Record that the model used MEMORY_IDS, hits of RECALL_ID (evidence for `explain`)."""
    check_identifier(recall_id, "recall_id")  # validate before paying for a runtime
    for m in memory_ids:
        R.check_memory_id(m)
    check_identifier(actor, "actor")
    out = Out(as_json)
    with open_runtime(data) as (rt, _):
        n = rt.mark_cited(recall_id, list(memory_ids), actor=actor)
    if as_json:
        out.json({"recall_id": recall_id, "cited": n})
    else:
        out.line(f"{n} hit(s) marked cited")
