"""`memactors review list|approve|reject`: the queue of writes the gate held as pending;
`memactors review due|confirm|retire`: memories due for their category's periodic review."""

from __future__ import annotations

import click

from memactors.cli.group import CliError, Group, cli, common
from memactors.cli.output import Out, decision_text, when
from memactors.core import records as R
from memactors.core.scopes import check_identifier, parse_scope
from memactors.server import open_runtime

REVIEW_COLUMNS = ["memory id", "scope", "source", "created", "content (as stored, redacted)"]


@cli.group(cls=Group)
def review() -> None:
    """The review queues: writes the gate held as pending (instructions from untrusted sources),
    and memories due for their periodic review (entity facts, instructions)."""


@review.command("list")
@click.argument("scope")
@click.option("--actor", required=True, help="Who reviews (needs a read grant on SCOPE).")
@common
def review_list(scope: str, actor: str, data: str, as_json: bool) -> None:
    """List the pending writes of SCOPE (content as stored: already redacted)."""
    parse_scope(scope)  # validate before paying for a runtime
    check_identifier(actor, "actor")
    out = Out(as_json)
    with open_runtime(data) as (rt, _):
        items = rt.review.pending(scope, actor=actor)
    if as_json:
        out.json({"pending": items})
        return
    out.table(REVIEW_COLUMNS, [[i["memory_id"], i["scope"], i["source_kind"], when(i["created_at"]), i["content"]]
                               for i in items], title=f"pending in {scope}", empty="nothing pending")


@review.command("due")
@click.argument("scope")
@click.option("--actor", required=True, help="Who reviews (needs a read grant on SCOPE).")
@common
def review_due(scope: str, actor: str, data: str, as_json: bool) -> None:
    """List the memories of SCOPE due for their periodic review (flagged by a sweep)."""
    parse_scope(scope)
    check_identifier(actor, "actor")
    out = Out(as_json)
    with open_runtime(data) as (rt, _):
        items = rt.review.due(scope, actor=actor)
    if as_json:
        out.json({"due": items})
        return
    out.table(["memory id", "scope", "category", "updated", "content"],
              [[i["memory_id"], i["scope"], i["category"], when(i["updated_at"]), i["content"]] for i in items],
              title=f"due for review in {scope}", empty="nothing due")


def _answer(keep: bool, memory_id: str, actor: str, reason: str, data: str, as_json: bool) -> None:
    R.check_memory_id(memory_id)
    check_identifier(actor, "actor")
    if not reason.strip():
        raise CliError("--reason must not be empty")
    out = Out(as_json)
    with open_runtime(data) as (rt, _):
        res = (rt.review.confirm if keep else rt.review.retire)(memory_id, actor=actor, reason=reason)
    if as_json:
        out.json(res)
        return
    out.kv([("decision", decision_text(res["decision"])), ("memory id", res.get("memory_id"))])


@review.command("confirm")
@click.argument("memory_id")
@click.option("--actor", required=True, help="Who confirms (needs a write grant on the scope; logged).")
@click.option("--reason", required=True, help="Why (logged).")
@common
def review_confirm(memory_id: str, actor: str, reason: str, data: str, as_json: bool) -> None:
    """Confirm a memory due for review still holds: its review clock restarts."""
    _answer(True, memory_id, actor, reason, data, as_json)


@review.command("retire")
@click.argument("memory_id")
@click.option("--actor", required=True, help="Who retires it (needs a write grant on the scope; logged).")
@click.option("--reason", required=True, help="Why (logged).")
@common
def review_retire(memory_id: str, actor: str, reason: str, data: str, as_json: bool) -> None:
    """Retire a memory due for review: evicted (out of recall; a rollback can bring it back)."""
    _answer(False, memory_id, actor, reason, data, as_json)


def _decide(approve: bool, memory_id: str, actor: str, reason: str, data: str, as_json: bool) -> None:
    R.check_memory_id(memory_id)  # validate before paying for a runtime
    check_identifier(actor, "actor")
    if not reason.strip():
        raise CliError("--reason must not be empty")
    out = Out(as_json)
    with open_runtime(data) as (rt, _):
        res = (rt.review.approve if approve else rt.review.reject)(memory_id, actor=actor, reason=reason)
    if as_json:
        out.json(res)
        return
    out.kv([("decision", decision_text(res["decision"])), ("memory id", res.get("memory_id")),
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
