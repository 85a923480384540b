"""`memactors audit verify`, `audit recall`, `audit at` and `audit actions`: the ledger's chain, a recall's
evidence, the store as it stood at a point, and the actions that depended on a memory."""

from __future__ import annotations

import sys

import click
from rich.text import Text

from memactors.cli.group import Group, cli, common, parse_point
from memactors.cli.output import Out, print_evidence
from memactors.core.errors import LedgerTampered
from memactors.core.scopes import check_identifier, parse_scope
from memactors.server import open_runtime
from memactors.store.layout import resolve


@cli.group(cls=Group)
def audit() -> None:
    """Inspect the ledger: verify the hash chain, replay a recall's evidence."""


@audit.command("verify")
@common
def audit_verify(data: str, as_json: bool) -> None:
    """Walk the ledger's hash chain and MACs, check its anchor and the tables that must agree with
    it (keys, idempotency, provenance, levels, L2); prints ok or the first bad seq or table (exit
    code 1 when broken)."""
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


@audit.command("head")
@common
def audit_head(data: str, as_json: bool) -> None:
    """The ledger's newest seq (and its first): a point to come back to with `recall --as-of`,
    `audit at`, `rollback --to` or `fork --at`."""
    out = Out(as_json)
    with open_runtime(data) as (rt, _mode):
        h = rt.audit.head()
    if as_json:
        out.json(h)
    else:
        out.kv([("seq", h["seq"]), ("first seq", h["first_seq"])])


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


@audit.command("at")
@click.argument("point", metavar="T")
@click.option("--actor", required=True, help="Who asks (needs a read grant on --scope).")
@click.option("--scope", required=True, help="The subtree to show, e.g. /org/acme/.")
@click.option("--limit", type=click.IntRange(0, 1_000_000), default=50, show_default=True,
              help="Most memories to list (counts cover all).")
@common
def audit_at(point: str, actor: str, scope: str, limit: int, data: str, as_json: bool) -> None:
    """The memories under --scope as they stood at T: counts by status and pool, how many changed
    since, and each memory's metadata (never content). Erased memories are absent from every view."""
    check_identifier(actor, "actor")
    parse_scope(scope)
    point = parse_point(point)
    out = Out(as_json)
    with open_runtime(data) as (rt, _mode):
        snap = rt.audit.at(point, actor=actor, scope=scope, limit=limit)
    if as_json:
        out.json(snap)
        return
    out.kv([("as of seq", snap["seq"]), ("ledger", f"seq {snap['first_seq']}..{snap['head_seq']}"),
            ("scope", snap["scope"]), ("by status", ", ".join(f"{k} {v}" for k, v in sorted(snap["by_status"].items()))),
            ("live by pool", ", ".join(f"{k} {v}" for k, v in sorted(snap["live_by_pool"].items()))),
            ("changed since", snap["changed_since"])])
    cols = ["memory_id", "scope", "status", "version", "pool", "source_kind", "subject", "predicate"]
    out.table(cols, [[m[c] for c in cols] for m in snap["memories"]],
              title=f"memories then{' (first ' + str(limit) + ')' if snap['truncated'] else ''}",
              empty="no memories then")


@audit.command("actions")
@click.argument("memory_id")
@click.option("--actor", required=True, help="Who asks (needs a read grant on the memory's scope).")
@common
def audit_actions(memory_id: str, actor: str, data: str, as_json: bool) -> None:
    """The logged tool calls that depended on MEMORY_ID: its recalls returned it, or the model
    cited it (ids only, never content)."""
    from memactors.core.records import check_memory_id
    from memactors.cli.output import ACTION_COLUMNS, action_rows

    check_memory_id(memory_id)
    check_identifier(actor, "actor")
    out = Out(as_json)
    with open_runtime(data) as (rt, _mode):
        rows = rt.audit.actions(memory_id, actor=actor)
    if as_json:
        out.json({"memory_id": memory_id, "actions": rows})
        return
    out.table(ACTION_COLUMNS, action_rows(rows), title=f"actions that depended on {memory_id}",
              empty="no logged action depended on it")
