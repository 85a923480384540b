"""`memactors explain RECALL_ID` and `memactors cite RECALL_ID MEMORY_ID...`: replay the evidence
of one recall, and record which of its hits the model used."""

from __future__ import annotations

import click
from rich.text import Text

from memactors.cli.group import cli, common
from memactors.cli.output import Out, fmt, short
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
    f = ev["filters"]
    out.kv([("recall", ev["recall_id"]),
            ("actor / task / purpose", f"{ev['actor']} / {ev['task_id']} / {ev['purpose']}"),
            ("visible scopes", ", ".join(ev["visible_scopes"])), ("mode", f.get("mode", "pull")),
            ("filters", f"status active, not hard-expired at {fmt(f.get('not_hard_expired_at'))}"),
            ("threshold / weights", f"{f.get('threshold')} / {f.get('weights')}"),
            ("candidates", f.get("candidates")), ("removed", ", ".join(f"{k} {v}" for k, v in ev["removed"].items())),
            ("cited", ", ".join(short(c, 12) for c in ev.get("cited", [])) or "-")])
    rows = []
    for i, h in enumerate(ev["hits"], 1):
        c = h.get("components") or {}
        why = " ".join(f"{k[:3]} {v:.2f}" for k, v in c.items())
        if h.get("stale"):
            why += "  stale x0.5"
        if h.get("conflict"):
            why += f"  won conflict ({h['conflict'].get('reason')})"
        rows.append([i, f"{h['score']:.3f}", h["scope"], short(h["memory_id"], 12), Text(why)])
    out.table(["#", "score", "scope", "memory id", "why"], rows, title="hits", empty="no hits")


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
