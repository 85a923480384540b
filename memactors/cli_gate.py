"""The gate's verbs: `memactors scan` (the gate alone, no store) and `memactors review ...`.

Registered on the ``cli`` group when ``memactors.cli`` imports this module.
"""

from __future__ import annotations

import sys

import click
from rich.text import Text

from memactors.cli import Out, _decision, _fmt, _short, cli, common, open_runtime
from memactors.core import records as R

REVIEW_COLUMNS = ["memory id", "scope", "source", "created", "content (as stored, redacted)"]


@cli.command()
@click.option("--text", "text", help="The text to scan (default: read standard input).")
@click.option("--source", type=click.Choice(sorted(R.SOURCE_CONFIDENCE)), default="user_stated", show_default=True,
              help="Where the text comes from: untrusted kinds (web, document, tool) get the injection rules.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object instead of a table.")
def scan(text: str | None, source: str, as_json: bool) -> None:
    """Run the write gate alone, with no store: the decision, the rule hits (ids, spans,
    reasons) and the text as it would be stored. Never prints a matched value."""
    from memactors.gate import Gate

    if text is None:
        text = sys.stdin.read()
    report = Gate().scan(text, source)
    out = Out(as_json)
    if as_json:
        out.json({**report.summary(), "stored_text": report.text})
        return
    out.kv([("decision", _decision(report.decision)), ("risk", f"{report.risk:.2f}"),
            ("tags", ", ".join(report.tags) or "-")])
    out.table(["rule", "category", "node", "span", "action", "reason"],
              [[h.rule, h.category, h.node, f"{h.start}-{h.end}", h.action, h.reason] for h in report.hits],
              title="hits", empty="no hits")
    out.line(Text("stored as:", style="bold"))
    out.line(report.text if report.text is not None else "(nothing: blocked)")


@cli.group()
def review() -> None:
    """The review queue: writes the gate held as pending (instructions from untrusted sources)."""


@review.command("list")
@click.argument("scope")
@click.option("--actor", required=True, help="Who reviews (needs a read grant on SCOPE).")
@common
def review_list(scope: str, actor: str, data: str, as_json: bool) -> None:
    """List the pending writes of SCOPE (content as stored: already redacted)."""
    out = Out(as_json)
    with open_runtime(data) as (rt, _):
        items = rt.review.pending(scope, actor=actor)
    if as_json:
        out.json({"pending": items})
        return
    out.table(REVIEW_COLUMNS, [[i["memory_id"], i["scope"], i["source_kind"], _fmt(i["created_at"]), i["content"]]
                               for i in items], title=f"pending in {scope}", empty="nothing pending")


def _decide(approve: bool, memory_id: str, actor: str, reason: str, data: str, as_json: bool) -> None:
    out = Out(as_json)
    with open_runtime(data) as (rt, _):
        res = (rt.review.approve if approve else rt.review.reject)(memory_id, actor=actor, reason=reason)
    if as_json:
        out.json(res)
        return
    out.kv([("decision", _decision(res["decision"])), ("memory id", _short(res.get("memory_id"), 32)),
            ("outcome", res.get("outcome", "-"))])


@review.command("approve")
@click.argument("memory_id")
@click.option("--actor", required=True, help="Who approves (needs a write grant on the scope; logged).")
@click.option("--reason", required=True, help="Why (logged).")
@common
def review_approve(memory_id: str, actor: str, reason: str, data: str, as_json: bool) -> None:
    """Approve a pending write: it takes effect now, through versions and dedup like any write."""
    _decide(True, memory_id, actor, reason, data, as_json)


@review.command("reject")
@click.argument("memory_id")
@click.option("--actor", required=True, help="Who rejects (needs a write grant on the scope; logged).")
@click.option("--reason", required=True, help="Why (logged).")
@common
def review_reject(memory_id: str, actor: str, reason: str, data: str, as_json: bool) -> None:
    """Reject a pending write: it is erased (its data key destroyed); the decision stays in the ledger."""
    _decide(False, memory_id, actor, reason, data, as_json)
