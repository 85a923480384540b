"""`memactors write`, `recall` and `forget`: one memory through the gate, the recall contract,
erasure. Each validates its input before a runtime starts."""

from __future__ import annotations

import click

from memactors.cli.group import CliError, cli, common, parse_point
from memactors.cli.output import HIT_COLUMNS, Out, decision_text, gate_summary, hit_rows, show_evidence
from memactors.core import records as R
from memactors.core import validate as V
from memactors.core.scopes import check_identifier
from memactors.server import open_runtime


@cli.command()
@click.argument("scope")
@click.argument("text")
@click.option("--actor", required=True, help="Who writes (needs a write grant on SCOPE).")
@click.option("--subject", help="Entity key, subject part (give with --predicate).")
@click.option("--predicate", help="Entity key, predicate part: same subject+predicate updates a memory.")
@click.option("--object", "object_", metavar="TEXT", help="The value (a different one makes a new version).")
@click.option("--source", type=click.Choice(sorted(R.SOURCE_CONFIDENCE)), default="user_stated", show_default=True,
              help="Where the memory comes from (sets the default confidence).")
@click.option("--confidence", type=float, help="0..1; defaults by source (user_stated 1.0 ... web 0.3).")
@click.option("--sensitivity", type=click.Choice(R.SENSITIVITIES), default="internal", show_default=True,
              help="Sensitivity label.")
@click.option("--ttl-days", type=float, help="Hard expiry in days.")
@click.option("--pool", type=click.Choice(R.POOLS), default="vault", show_default=True,
              help="vault (L2, persistent) or working (L1, session).")
@click.option("--idempotency-key", help="A retry with the same key never writes twice.")
@common
def write(scope: str, text: str, actor: str, subject: str | None, predicate: str | None, object_: str | None,
          source: str, confidence: float | None, sensitivity: str, ttl_days: float | None, pool: str,
          idempotency_key: str | None, data: str, as_json: bool) -> None:
    """Write TEXT to SCOPE through the write gate; prints the decision, memory id and version."""
    kw = dict(actor=actor, subject=subject, predicate=predicate, object=object_, source=source,
              confidence=confidence, sensitivity=sensitivity, ttl_days=ttl_days, pool=pool,
              idempotency_key=idempotency_key)
    R.write_request(dict(scope=scope, text=text, **kw))  # validate before paying for a runtime
    out = Out(as_json)
    with open_runtime(data, create=True) as (rt, _mode):
        res = rt.write(scope, text, **kw)
    if as_json:
        out.json(res.to_dict())
        return
    out.kv([("decision", decision_text(res.decision)), ("memory id", res.memory_id), ("version", res.version),
            ("scope", res.scope), ("status", res.status), ("supersedes", res.supersedes),
            ("gate", gate_summary(res.gate))])


@cli.command()
@click.argument("query")
@click.option("--actor", required=True, help="Who recalls (needs read grants covering every --scope).")
@click.option("--task-id", default=R.UNSPECIFIED, show_default=True, help="The task this recall serves (logged).")
@click.option("--scope", "scopes", multiple=True, required=True,
              help="An allowed scope (repeat for several); ancestors are visible too.")
@click.option("--purpose", default=R.UNSPECIFIED, show_default=True,
              help="Why the recall is made: a name (answer) or text; logged, and checked against [recall.purposes].")
@click.option("--top-k", type=int, default=None, help="Most hits to return (default: [recall].default_top_k, 5).")
@click.option("--threshold", type=float, help="Relevance threshold 0..1 (default: [recall].threshold).")
@click.option("--explain", "show_why", is_flag=True, help="Also print why each hit came back and what was removed.")
@click.option("--as-of", metavar="T", help="What this recall would have returned at T (a ledger seq or ISO time).")
@common
def recall(query: str, actor: str, task_id: str, scopes: tuple[str, ...], purpose: str, top_k: int,
           threshold: float | None, show_why: bool, as_of: str | None, data: str, as_json: bool) -> None:
    """Recall memories for QUERY through the recall contract; prints hits and the recall id, and
    what the threshold removed when it removed any (--explain: the whole evidence)."""
    R.RecallRequest(query, actor, task_id, list(scopes), purpose, 5 if top_k is None else top_k).validate()
    V.threshold(threshold, allow_none=True)  # validate before paying for a runtime
    at = parse_point(as_of) if as_of is not None else None
    out = Out(as_json)
    with open_runtime(data) as (rt, _mode):
        res = rt.recall(query, actor=actor, task_id=task_id, allowed_scopes=list(scopes), purpose=purpose,
                        top_k=top_k, threshold=threshold, at=at)
        ev = rt.explain(res.recall_id, actor=actor) if show_why else None
    if as_json:
        out.json(res.to_dict() | ({"explain": ev} if ev is not None else {}))
        return
    out.table(HIT_COLUMNS, hit_rows(res.hits, full_ids=True), empty="no hits")
    if res.note():
        out.line(res.note("--threshold"))
    out.kv([("recall id", res.recall_id), ("visible scopes", res.visible_scopes), ("path", res.path)])
    if ev is not None:
        show_evidence(out, ev)


@cli.command()
@click.argument("memory_id")
@click.option("--actor", required=True, help="Who forgets (logged).")
@click.option("--reason", required=True, help="Why (logged in the tombstone event).")
@click.option("--fact", is_flag=True, help="Erase every version of the memory's fact (same subject and predicate).")
@common
def forget(memory_id: str, actor: str, reason: str, fact: bool, data: str, as_json: bool) -> None:
    """Erase MEMORY_ID: a tombstone event, the row and caches gone, its data key destroyed."""
    R.check_memory_id(memory_id)
    check_identifier(actor, "actor")
    if not reason.strip():
        raise CliError("--reason must not be empty")
    out = Out(as_json)
    with open_runtime(data) as (rt, _mode):
        res = rt.forget(memory_id, actor=actor, reason=reason, erase="fact" if fact else "memory")
    if as_json:
        out.json(res)
        return
    out.kv([("decision", decision_text(res.get("decision"))), ("memory id", res.get("memory_id")),
            ("scope", res.get("scope"))])
