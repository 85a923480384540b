"""`memactors audit verify` and `memactors audit recall`: the ledger's chain and a recall's
evidence."""

from __future__ import annotations

import sys

import click
from rich.text import Text

from memactors.cli.group import Group, cli, common
from memactors.cli.output import Out, print_evidence
from memactors.core.errors import LedgerTampered
from memactors.core.scopes import check_identifier
from memactors.server import open_runtime
from memactors.store.layout import resolve


@cli.group(cls=Group)
def audit() -> None:
    """Inspect the ledger: verify the hash chain, replay a recall's evidence."""


@audit.command("verify")
@common
def audit_verify(data: str, as_json: bool) -> None:
    """Walk the ledger's hash chain and MACs, check its anchor and the tables that must agree with
    it (keys, idempotency, L2); prints ok or the first bad seq or table (exit code 1 when broken)."""
    out = Out(as_json)
    try:
        with open_runtime(data) as (rt, _mode):
            v = rt.audit.verify()
    except LedgerTampered:
        # The runtime refuses a ledger that fails its open checks: verify the file directly.
        from memactors.store.ledger import verify_folder

        v = verify_folder(resolve(data))
        if v.get("ok"):  # the chain itself is sound: the open check found the problem elsewhere (L2)
            v.update(ok=False, reason="the runtime refused to open this folder (L2 disagrees with the ledger)",
                     table="l2")
    if as_json:
        out.json(v)
    else:
        out.kv([("ok", Text("yes" if v.get("ok") else "NO", style="green" if v.get("ok") else "bold red")),
                ("events", v.get("events")), ("first bad seq", v.get("first_bad_seq")), ("table", v.get("table")),
                ("reason", v.get("reason"))])
    if not v.get("ok"):
        sys.exit(1)


@audit.command("recall")
@click.argument("recall_id")
@click.option("--actor", required=True, help="Who asks (read grants must cover the recall's scopes).")
@common
def audit_recall(recall_id: str, actor: str, data: str, as_json: bool) -> None:
    """Show the evidence logged for RECALL_ID (ids, scores, filters; never content or query text)."""
    check_identifier(recall_id, "recall_id")
    check_identifier(actor, "actor")
    out = Out(as_json)
    with open_runtime(data) as (rt, _mode):
        ev = rt.audit.recall(recall_id, actor=actor)
    if as_json:
        out.json(ev)
        return
    print_evidence(out, ev)
