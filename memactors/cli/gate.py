"""`memactors scan`: the write gate alone, with no store and no runtime."""

from __future__ import annotations

import sys

import click
from click.core import ParameterSource
from rich.text import Text

from memactors.cli.group import cli
from memactors.cli.output import Out, decision_text
from memactors.core import records as R
from memactors.core import validate as V
from memactors.gate.policy import DECISION


@cli.command()
@click.option("--text", "text", help="The text to scan (default: read standard input).")
@click.option("--source", type=click.Choice(sorted(R.SOURCE_CONFIDENCE)), default="user_stated", show_default=True,
              help="Where the text comes from: untrusted kinds (web, document, tool) get the injection and "
                   "instruction rules, and web and document writes wait for review.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object instead of a table.")
def scan(text: str | None, source: str, as_json: bool) -> None:
    """Run the write gate alone, with no store: the source it took the text to come from, the
    decision and the rules that decided it, each hit (rule, span, reason) and the text as it
    would be stored. Never prints a matched value."""
    from memactors.gate import Gate

    if text is None:
        text = sys.stdin.read()
    # What a write refuses before its gate (empty, too long, lone surrogates) is refused here too:
    # scan never calls "accepted" a text no write would take.
    V.text(text, "text", R.MAX_CONTENT_CHARS)
    assumed = click.get_current_context().get_parameter_source("source") is ParameterSource.DEFAULT
    report = Gate().scan(text, source)
    deciders = sorted({h.rule for h in report.hits if DECISION[h.action] == report.decision})
    if not deciders and "pending_source" in report.tags:
        deciders = [f"source {source} ([gate].pending_sources)"]
    out = Out(as_json)
    if as_json:
        out.json({**report.summary(), "source_assumed": assumed, "decided_by": deciders, "stored_text": report.text})
        return
    out.kv([("source", f"{source} (assumed: say --source tool, web, document, ...)" if assumed else source),
            ("decision", decision_text(report.decision)), ("decided by", ", ".join(deciders) or "-"),
            ("risk", f"{report.risk:.2f}"), ("tags", ", ".join(report.tags) or "-")])
    out.table(["rule", "category", "node", "span", "action", "reason"],
              [[h.rule, h.category, h.node, f"{h.start}-{h.end}", h.action, h.reason] for h in report.hits],
              title="hits", empty="no hits")
    out.line(Text("stored as:", style="bold"))
    out.line(report.text if report.text is not None else "(nothing: blocked)")
