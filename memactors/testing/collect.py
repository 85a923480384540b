"""Gather what the checker compares a history with, through the public API only.

- ``ledger_events(rt, actor=...)``: the ledger's events via ``rt.audit.sql`` (paged by seq),
  plain snapshots (status, refresh, forget, block) decoded into ``data``; memory content stays
  encrypted and is never read.
- ``store_view(rt, scopes, actor=...)``: the store as a list of rows ``{memory_id, scope,
  subject, predicate, object, status, version, content, pool, review}``, built from recall,
  which brings these limits:

  * only what recall may show: active vault memories and the scope's live L1 working-pool
    items. Superseded, pending and forgotten memories never appear (the checker takes their
    status from the ledger and the acknowledgements instead), nor hard-expired ones;
  * at most ``top_k`` (1,000, the recall maximum) rows per scope: a scope that fills it is
    named in the notes and the view is incomplete there;
  * recall resolves conflicts (same subject+predicate, different object): a loser is hidden,
    but the winner names it in ``conflict.overrides``; such a memory, when in the same scope,
    is added back (its scope from the ledger) as read by id (``ops.Lookup``: its version,
    object, content, status and review flag, so a close call's flagged pair behind a third
    winner is seen as flagged), or as an active row with those None when the read finds it
    not live, so a second active version still shows up;
  * each recall is itself logged as evidence (the ``recalls`` table, not ``events``) and
    counted as an access of the memories it returns.

- ``collect(rt, scopes, actor=...)``: both, plus ``rt.audit.verify()``.

``actor`` needs read grants covering the scopes (``rt.grant("checker", "/global/")``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable

import orjson

from ..core.idempotency import caller_key
from ..ops import Lookup
from .checker import CheckReport, check
from .history import canonical_scope

_COLUMNS = ("seq", "ts", "scope", "action", "memory_id", "version", "actor", "reason", "encrypted", "snapshot",
            "idem_key")
_PLAIN = ("status", "refresh", "forget", "block")  # actions whose snapshot is plain JSON, never content
RECALL_MAX = 1000


def ledger_events(rt: Any, *, actor: str, scopes: Iterable[str] | None = None, page: int = 50_000) -> list[dict]:
    """Every event but grants (of ``scopes`` only, if given), in seq order."""
    want = None if scopes is None else {canonical_scope(s) for s in scopes}
    query = (f"SELECT {', '.join(_COLUMNS)} FROM events WHERE seq > ? AND action NOT IN ('grant', 'mark') "
             "ORDER BY seq LIMIT ?")
    out, last = [], 0
    while True:
        rows = rt.audit.sql(query, [last, page], actor=actor)
        for row in rows:
            ev = dict(zip(_COLUMNS, row))
            ev["idem_key"] = caller_key(ev["idem_key"])  # as the history's invocations name it
            snap, enc = ev.pop("snapshot"), ev.pop("encrypted")
            ev["data"] = orjson.loads(bytes(snap)) if (not enc and snap and ev["action"] in _PLAIN) else None
            if want is None or ev["scope"] in want:
                out.append(ev)
        if len(rows) < page:
            return out
        last = rows[-1][0]


def store_view(rt: Any, scopes: Iterable[str], *, actor: str, ledger: list[dict] | None = None,
               query: str = "memory", top_k: int = RECALL_MAX) -> tuple[list[dict], list[str]]:
    """(rows, notes): the active memories of ``scopes`` as recall shows them (see the limits
    above). ``ledger``, when given, places memories recall hid behind a conflict winner."""
    scope_of = {e["memory_id"]: e["scope"] for e in ledger or [] if e["action"] == "write"}
    rows: dict[str, dict] = {}
    extra: list[dict] = []
    notes = []
    for scope in sorted({canonical_scope(s) for s in scopes}):
        res = rt.recall(query, actor=actor, task_id="history-check", allowed_scopes=[scope], purpose="check",
                        top_k=top_k, threshold=0.0)
        if len(res.hits) >= top_k:
            notes.append(f"store view of {scope} is cut at {top_k} rows")
        for h in res.hits:
            if h.scope != scope:
                continue  # an ancestor's memory: its own scope's recall lists it
            rows.setdefault(h.memory_id, {
                "memory_id": h.memory_id, "scope": h.scope, "subject": h.subject, "predicate": h.predicate,
                "object": h.object, "status": "active", "version": h.version, "content": h.content, "pool": h.pool,
                "review": getattr(h, "review", None)})
            for mid in (h.conflict or {}).get("overrides", []):
                if scope_of.get(mid) == h.scope:
                    extra.append({"memory_id": mid, "scope": h.scope, "subject": h.subject, "predicate": h.predicate,
                                  "object": None, "status": "active", "version": None, "content": None,
                                  "pool": "vault"})
    if extra:  # read by id: a hidden loser's version, object and review flag (a close call's pair)
        ids = sorted({r["memory_id"] for r in extra} - rows.keys())
        found = {m.memory_id: m for m in rt.batch([Lookup(actor, None, ids, purpose="check")])[0]} if ids else {}
        for r in extra:
            m = found.get(r["memory_id"])
            if m is not None:
                r.update(version=m.version, object=m.object, content=m.content, review=m.review, status=m.status)
    for r in extra:
        rows.setdefault(r["memory_id"], r)
    return list(rows.values()), notes


@dataclass
class Collected:
    ledger_events: list[dict]
    store_rows: list[dict]
    verify: dict | None
    notes: list[str] = field(default_factory=list)

    def check(self, history_events: Iterable[dict], **kw: Any) -> CheckReport:
        report = check(history_events, self.ledger_events, self.store_rows, self.verify, **kw)
        report.notes += self.notes
        return report


def collect(rt: Any, scopes: Iterable[str], *, actor: str, verify: bool = True) -> Collected:
    """The ledger events and store view of ``scopes`` and ``rt.audit.verify()`` (if ``verify``)."""
    scopes = sorted({canonical_scope(s) for s in scopes})
    events = ledger_events(rt, actor=actor, scopes=scopes)
    rows, notes = store_view(rt, scopes, actor=actor, ledger=events)
    return Collected(events, rows, rt.audit.verify() if verify else None, notes)


def history_scopes(history_events: Iterable[dict]) -> list[str]:
    """The scopes a history wrote to: what ``collect`` should gather."""
    return sorted({ev["scope"] for ev in history_events if ev.get("type") == "invoke" and ev.get("op") == "write"
                   and ev.get("scope")})
