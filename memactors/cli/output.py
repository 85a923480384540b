"""The one output module of the command line: rich tables for people, JSON on one line for
machines, and the shared ways of showing decisions, gate hits, recall hits, grants and
recall evidence. Nothing here echoes a value the write gate matched."""

from __future__ import annotations

import os
import sys
from typing import Any

import orjson
from rich.console import Console
from rich.table import Table
from rich.text import Text


class Out:
    """Rich tables for people, each JSON value on one line (orjson) for machines."""

    def __init__(self, as_json: bool) -> None:
        self.as_json = as_json
        self.console = Console(highlight=False, soft_wrap=False)
        if not self.console.is_terminal and not os.environ.get("COLUMNS"):
            self.console = Console(highlight=False, soft_wrap=False, width=120)  # piped: not the 80 default

    def json(self, obj: Any) -> None:
        sys.stdout.write(orjson.dumps(obj, default=str).decode() + "\n")
        sys.stdout.flush()

    def heading(self, title: str, note: str | None = None) -> None:
        if self.as_json:
            return
        self.console.print()
        self.console.rule(Text(title, style="bold cyan"), align="left")
        if note:
            self.console.print(Text(note, style="dim"))

    def line(self, text: str | Text, style: str | None = None) -> None:
        if not self.as_json:
            self.console.print(text if isinstance(text, Text) else Text(text, style=style or ""))

    def kv(self, pairs: list[tuple[str, Any]], title: str | None = None) -> None:
        if self.as_json:
            return
        t = Table(show_header=False, box=None, padding=(0, 2), title=title, title_justify="left")
        t.add_column(style="bold", no_wrap=True)
        t.add_column(overflow="fold")  # a long value with no space (a JSON filter) folds, never clipped
        for k, v in pairs:
            t.add_row(Text(k), v if isinstance(v, Text) else Text(fmt(v)))
        self.console.print(t)

    def table(self, columns: list[str], rows: list[list[Any]], title: str | None = None,
              empty: str = "(none)") -> None:
        if self.as_json:
            return
        if not rows:
            self.console.print(Text(f"{title + ': ' if title else ''}{empty}", style="yellow"))
            return
        t = Table(title=title, title_justify="left", header_style="bold", show_lines=False)
        roomy = self.console.width >= 100  # below, a text column's minimum would push the table past the edge
        for c in columns:
            wide = roomy and c.split(" ")[0] in ("content", "text", "message")
            t.add_column(c, overflow="fold", min_width=36 if wide else None,
                         no_wrap=c in ("#", "score", "ver", "decision", "read", "write") or c.endswith("id"))
        for r in rows:
            t.add_row(*[v if isinstance(v, Text) else Text(fmt(v)) for v in r])
        self.console.print(t)


def fmt(v: Any) -> str:
    """One cell: "-" for None, yes/no, floats to 3 places, lists comma-separated, a dict as
    ``key value`` pairs, ``; `` between them (never Python's braces or JSON)."""
    if v is None:
        return "-"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        return f"{v:.3f}"
    if isinstance(v, (list, tuple)):
        return ", ".join(fmt(x) for x in v) or "-"
    if isinstance(v, dict):
        return "; ".join(f"{k} {fmt(x)}" for k, x in v.items()) or "-"  # "; ": a value may be a list
    return str(v)


def short(s: str | None, n: int = 8) -> str:
    """The part of an id that tells it apart, or "-": a memory id's first 8 characters name its
    tenant (every memory of a tenant shares them), so its last ``n``, after an ellipsis."""
    if not s:
        return "-"
    return "…" + s[-n:] if len(s) == 32 else s[:n]


DECISION_STYLE = {
    "accepted": "green", "redacted": "yellow", "blocked": "bold red", "pending": "magenta",
    "working_only": "blue", "refreshed": "cyan", "superseded_previous": "green",
    "kept_as_superseded": "yellow", "forgotten": "red",
}


def decision_text(d: str | None) -> Text:
    """A write or review decision, coloured by DECISION_STYLE."""
    return Text(d or "-", style=DECISION_STYLE.get(d or "", ""))


def gate_summary(gate: dict) -> str:
    """The rules a gate report hit and its risk, or "clean"."""
    hits = gate.get("hits") or []
    if not hits:
        return "clean"
    rules = sorted({h.get("rule", "?") for h in hits})
    return f"{', '.join(rules)} (risk {float(gate.get('risk', 0)):.1f})"


def mask(text: str, gate: dict) -> str:
    """The input with every span the gate matched replaced by the rule's placeholder, so the CLI
    never echoes a matched value (a key, a phone number) back to the terminal."""
    try:
        from memactors.gate.rules import RULES
    except ImportError:  # pragma: no cover - the gate always ships rules
        RULES = {}
    # Only values are masked (pii, secrets): code, injection and low-value hits show as written.
    spans = sorted(((h["span"][0], h["span"][1], h.get("rule", "?")) for h in gate.get("hits") or []
                    if h.get("span") and h.get("category") in ("pii", "secret")), reverse=True)
    for start, end, rule in spans:
        placeholder = getattr(RULES.get(rule), "placeholder", None) or f"[{rule}]"
        text = text[:start] + placeholder + text[end:]
    return text


HIT_COLUMNS = ["#", "score", "scope", "ver", "memory id", "content"]


def hit_rows(hits: list, full_ids: bool = False) -> list[list[Any]]:
    """Rows for HIT_COLUMNS from recall hits (content as stored: already redacted)."""
    return [[i + 1, f"{h.score:.3f}", h.scope, f"v{h.version}", h.memory_id if full_ids else short(h.memory_id),
             Text(h.content)] for i, h in enumerate(hits)]


GRANT_COLUMNS = ["actor", "scope", "read", "write", "clearance", "reason", "by"]


def grant_rows(grants: list[dict]) -> list[list[Any]]:
    """Rows for GRANT_COLUMNS, ordered by actor then scope."""
    ordered = sorted(grants, key=lambda g: (g["actor"], g["scope"]))
    return [[g["actor"], g["scope"], g["read"], g["write"], g.get("clearance") or "confidential", g.get("reason") or "",
             g.get("by") or ""] for g in ordered]


def print_evidence(out: Out, ev: dict) -> None:
    """The evidence logged for one recall: who, why, which scopes and filters, the hits' ids
    and scores (never content; the query only as the start of its keyed digest)."""
    out.kv([("recall id", ev.get("recall_id")), ("actor", ev.get("actor")), ("task id", ev.get("task_id")),
            ("purpose", ev.get("purpose")), ("allowed scopes", ev.get("allowed_scopes")),
            ("visible scopes", ev.get("visible_scopes")), ("query digest", short(ev.get("query_digest"), 16) + "…"),
            ("filters", ev.get("filters")), ("removed", ev.get("removed"))])
    out.table(["#", "memory id", "scope", "score"],
              [[i + 1, h["memory_id"], h["scope"], h["score"]] for i, h in enumerate(ev.get("hits") or [])],
              title="hits logged", empty="no hits")


def show_evidence(out: Out, ev: dict) -> None:
    """One recall's evidence as `explain` prints it (also `recall --explain`)."""
    f = ev["filters"]
    below = f.get("best_below")
    out.kv([("recall", ev["recall_id"]),
            ("actor / task / purpose", f"{ev['actor']} / {ev['task_id']} / {ev['purpose']}"),
            ("visible scopes", ", ".join(ev["visible_scopes"])), ("mode", f.get("mode", "pull")),
            ("filters", f"status active, not hard-expired at {fmt(f.get('not_hard_expired_at'))}"),
            ("threshold / weights", f"{f.get('threshold')} / {f.get('weights')}"),
            ("candidates", f.get("candidates")), ("removed", ", ".join(f"{k} {v}" for k, v in ev["removed"].items())),
            ("best under the threshold", "-" if below is None else f"{below:.3f}"),
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


HISTORY_COLUMNS = ["ver", "memory id", "status", "written", "by", "source", "gate", "content"]


def when(ts_us: int | None) -> str:
    """A ledger time (microseconds) as an ISO 8601 UTC time, to the second."""
    if ts_us is None:
        return "-"
    from datetime import datetime, timezone

    return datetime.fromtimestamp(ts_us / 1e6, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def history_rows(versions: list[dict]) -> list[list[Any]]:
    """Rows for HISTORY_COLUMNS: a fact's versions, oldest first (content as stored; an erased
    version's content is gone and says so)."""
    rows = []
    for v in versions:
        gate = v.get("gate") or {}
        rules = ", ".join(sorted({h["rule"] for h in gate.get("hits") or []})) or (gate.get("decision") or "-")
        src = v.get("source") or {}
        rows.append([f"v{v['version']}", short(v["memory_id"]), v["status"], when(v["written"]["ts"]), v["written"]["actor"],
                     src.get("kind") or "-", rules,
                     Text("(erased)", style="red") if v.get("erased") else Text(v.get("content") or "")])
    return rows


def change_lines(versions: list[dict]) -> list[str]:
    """One line per later change of each version: when, who, what and why."""
    return [f"  v{v['version']} {short(v['memory_id'])}  seq {c['seq']}  {when(c['ts'])}  {c['actor']}  {c['why']}"
            + (f" (by {short(c['by'])})" if c.get("by") else "") for v in versions for c in v["changes"]]


ACTION_COLUMNS = ["action id", "when", "actor", "task", "tool", "outcome", "cited"]


def action_rows(actions: list[dict]) -> list[list[Any]]:
    """Rows for ACTION_COLUMNS: logged tool calls, oldest first."""
    return [[short(a["action_id"], 12), when(a["ts"]), a["actor"], a["task_id"], a["tool"], a["outcome"],
             bool(a.get("cited_of_those"))] for a in actions]
