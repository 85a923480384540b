"""Check a recorded history against what the runtime holds afterwards. Pure: plain lists of dicts.

``check(history_events, ledger_events, store_rows, verify_result)`` takes

- ``history_events``: what ``read_history`` returns (invoke/ok/fail/info records);
- ``ledger_events``: ledger events as dicts ``{seq, scope, action, memory_id, version, idem_key,
  data}`` where ``data`` is the decoded plain snapshot of status/refresh/forget/block events
  (``{"status": "superseded", ...}``) and None for encrypted ones (``collect.ledger_events``);
- ``store_rows``: the store as the public API shows it, dicts ``{memory_id, scope, subject,
  predicate, object, status, version, content}`` and optionally ``pool`` (``collect.store_view``
  today; a read-by-id call later);
- ``verify_result``: ``rt.audit.verify()`` (None: not checked, and the report says so).

Only the scopes the history wrote to are checked (or ``scopes=``); grant events are ignored.

What an operation's outcome means:

- ``ok``: acknowledged. ``fail`` with ``definite``: nothing was written. Any other ``fail``,
  an ``info`` or no completion at all: *indeterminate* (in flight at a crash): its effect may be
  present or absent, never present twice.
- Decisions, for an acknowledged write: ``blocked`` is acknowledged but stores nothing; the
  ledger must hold its ``block`` event (the refusal is audited), no memory is expected.
  ``accepted``/``redacted``/``superseded_previous`` make a new version, active at the ack.
  ``refreshed`` returns the *existing* memory (its id and version): the ledger must hold a
  ``refresh`` event under the write's key; no new version. ``merged`` (a near-copy of a live
  text-only memory) likewise, with a ``merge`` event. ``kept_as_superseded`` and
  ``pending`` make a new version that is not active (never visible as active until a status
  event says so). A write to the working pool (``write_working`` event, or ``working_only``)
  lives in L1 only: it must be in the ledger, the store may or may not show it.
- A memory is expected active in the store when its last ledger status event (or, without
  one, its acknowledgement) says active and no forget event names it.

Anomalies, each a list of examples (dicts with a ``kind``):

- ``lost``: an acknowledged write or forget missing from the ledger, or a memory expected
  active missing from the store;
- ``duplicated``: one idempotency key with more than one write event, one memory id written
  twice, acks of one key naming different memories, a store row twice, or two active
  text-only memories with the same content in one scope;
- ``phantom``: a write or forget event (or a store row) no acknowledged or in-flight
  operation explains;
- ``version_order``: versions of one subject+predicate with a gap in 1..n, a number given
  again while its first holder is on record (an erased or evicted version's number is free:
  the next version is one above the highest on record), below one on record in ledger order,
  not increasing with acknowledgement order, or an ack naming another version than
  the ledger (a refresh of an older version still live beside a newer one in a close call
  awaiting review is in order);
- ``multiple_active``: more than one active version of one subject+predicate in one scope
  (unless each is flagged as a contradiction awaiting review: a close call keeps both);
- ``superseded_visible``: a memory the ledger (or its ack) says is superseded or pending,
  shown as active;
- ``forgotten_visible``: a forgotten memory in the store, or in a recall begun after the
  forget was acknowledged;
- ``chain``: ``verify()`` not ok.
"""

from __future__ import annotations

import bisect
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any, Iterable

from ..core.records import GONE, normalise
from .history import canonical_scope

CATEGORIES = ("lost", "duplicated", "phantom", "version_order", "multiple_active", "superseded_visible",
              "forgotten_visible", "chain")
PRIMARY = ("write", "write_working", "refresh", "merge", "block")  # the one event a write leaves under its key
NEW_VERSION = ("accepted", "redacted", "superseded_previous", "kept_as_superseded", "pending", "contradiction_queued")
ACTIVE_AT_ACK = ("accepted", "redacted", "superseded_previous", "refreshed", "merged", "contradiction_queued")
SAME_MEMORY = ("refreshed", "merged")  # the write names an existing memory: no new version
INF = float("inf")


@dataclass
class CheckReport:
    anomalies: dict[str, list[dict]] = field(default_factory=lambda: {c: [] for c in CATEGORIES})
    counts: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not any(self.anomalies.values())

    def add(self, category: str, **example: Any) -> None:
        self.anomalies[category].append(example)

    def to_dict(self, max_examples: int | None = None) -> dict:
        return {"ok": self.ok, "counts": self.counts, "notes": list(self.notes),
                "anomalies": {c: {"count": len(v), "examples": v[:max_examples] if max_examples else list(v)}
                              for c, v in self.anomalies.items()}}

    def summary(self, max_examples: int = 3) -> str:
        w = self.counts.get("writes", {})
        head = (f"history check: {'ok' if self.ok else 'FAILED'} ({w.get('invoked', 0)} writes: {w.get('acked', 0)} "
                f"acked, {w.get('failed', 0)} failed, {w.get('indeterminate', 0)} indeterminate; "
                f"{self.counts.get('ledger_events', 0)} ledger events, {self.counts.get('store_rows', 0)} store rows)")
        lines = [head]
        for c in CATEGORIES:
            found = self.anomalies[c]
            if found:
                lines.append(f"  {c}: {len(found)}")
                lines += [f"    e.g. {ex}" for ex in found[:max_examples]]
        lines += [f"  note: {n}" for n in self.notes]
        return "\n".join(lines)


@dataclass
class _Op:
    op_id: str
    op: str
    inv: dict
    done: dict | None = None

    @property
    def state(self) -> str:
        """ok | failed (definitely nothing written) | indeterminate."""
        if self.done is None:
            return "indeterminate"
        if self.done["type"] == "ok":
            return "ok"
        if self.done["type"] == "fail" and self.done.get("definite"):
            return "failed"
        return "indeterminate"

    def brief(self) -> dict:
        d = self.done if self.done and self.done["type"] == "ok" else {}
        return {"op_id": self.op_id, "state": self.state, "memory_id": d.get("memory_id"),
                "version": d.get("version"), "decision": d.get("decision")}


def _ops(history_events: Iterable[dict], report: CheckReport) -> list[_Op]:
    ops: dict[str, _Op] = {}
    orphans = 0
    for ev in history_events:
        if ev["type"] == "invoke":
            ops[ev["op_id"]] = _Op(ev["op_id"], ev["op"], ev)
        elif ev["op_id"] in ops and ops[ev["op_id"]].done is None:
            ops[ev["op_id"]].done = ev
        else:
            orphans += 1
    if orphans:
        report.notes.append(f"{orphans} completion records without an open invoke were ignored")
    return list(ops.values())


def _entity(scope: str, subject: Any, predicate: Any) -> tuple[str, str, str] | None:
    if subject is None or predicate is None:
        return None
    return (scope, normalise(subject), normalise(predicate))


class _Ledger:
    """The ledger events of the checked scopes, indexed the ways the checks need."""

    def __init__(self, events: list[dict]) -> None:
        self.events = sorted(events, key=lambda e: e["seq"])
        self.by_key: dict[str, list[dict]] = defaultdict(list)
        self.writes: dict[str, list[dict]] = defaultdict(list)  # memory id -> write/write_working events
        self.status: dict[str, list[str]] = defaultdict(list)  # memory id -> statuses, in seq order
        self.forgets: dict[str, list[dict]] = defaultdict(list)
        self.disputed: set[str] = set()  # both sides of close calls flagged for review
        self.gone_at: dict[str, int] = {}  # memory id -> seq of its erasure or eviction (off record)
        for e in self.events:
            a, mid = e["action"], e.get("memory_id")
            reason = e.get("reason") or ""
            if a == "annotate" and reason.startswith("contradicted by "):
                self.disputed |= {mid, reason[len("contradicted by "):].split(":")[0].strip()}
            if a in PRIMARY and e.get("idem_key"):
                self.by_key[e["idem_key"]].append(e)
            if a in ("write", "write_working"):
                self.writes[mid].append(e)
            elif a == "status" and (e.get("data") or {}).get("status"):
                self.status[mid].append(e["data"]["status"])
                if e["data"]["status"] in GONE:
                    self.gone_at.setdefault(mid, e["seq"])
            elif a == "forget":
                self.forgets[mid].append(e)
                self.gone_at.setdefault(mid, e["seq"])

    def on_record(self, mid: str, seq: float) -> bool:
        """Whether memory ``mid`` was still on record (not erased or evicted) at ``seq``."""
        return mid not in self.gone_at or self.gone_at[mid] > seq

    def final_status(self, mid: str, at_ack: str | None) -> str | None:
        """tombstoned, the last status event's status, else the acknowledged status (None: unknown)."""
        if self.forgets.get(mid):
            return "tombstoned"
        if self.status.get(mid):
            return self.status[mid][-1]
        return at_ack


def check(history_events: Iterable[dict], ledger_events: Iterable[dict], store_rows: Iterable[dict],
          verify_result: dict | None, *, scopes: Iterable[str] | None = None) -> CheckReport:
    """Check one run; see the module docstring for what each anomaly means."""
    report = CheckReport()
    ops = _ops(history_events, report)
    writes = [o for o in ops if o.op == "write"]
    forgets = [o for o in ops if o.op == "forget"]
    recalls = [o for o in ops if o.op == "recall"]
    if scopes is None:
        checked = {o.inv.get("scope") for o in writes} | {o.done.get("scope") for o in forgets
                                                          if o.state == "ok" and o.done.get("scope")}
    else:
        checked = {canonical_scope(s) for s in scopes}
    checked.discard(None)
    ledger = _Ledger([e for e in ledger_events if canonical_scope(e["scope"]) in checked and e["action"] not in ("grant", "mark")])
    rows = [dict(r, scope=canonical_scope(r["scope"])) for r in store_rows]
    rows = [r for r in rows if r["scope"] in checked]
    states = Counter(o.state for o in writes)
    report.counts = {
        "scopes": len(checked),
        "writes": {"invoked": len(writes), "acked": states["ok"], "failed": states["failed"],
                   "indeterminate": states["indeterminate"]},
        "decisions": dict(Counter(o.done["decision"] for o in writes if o.state == "ok")),
        "forgets": dict(Counter(o.state for o in forgets)),
        "recalls": dict(Counter(o.state for o in recalls)),
        "ledger_events": len(ledger.events),
        "store_rows": len(rows),
    }
    # A memory's status as its latest acknowledgement (a new version, or a refresh of it) said.
    acked = sorted((o for o in writes if o.state == "ok"), key=lambda o: o.done["ts"])
    ack_status = {o.done["memory_id"]: o.done.get("status") for o in acked
                  if o.done.get("decision") in (*NEW_VERSION, *SAME_MEMORY)}
    _check_lost(report, writes, forgets, ledger, rows, ack_status)
    _check_duplicated(report, writes, ledger, rows)
    _check_phantom(report, writes, forgets, ledger, rows)
    _check_versions(report, writes, ledger, rows)
    _check_visible(report, forgets, recalls, ledger, rows, ack_status)
    if verify_result is None:
        report.notes.append("verify() was not checked")
    elif not verify_result.get("ok"):
        report.add("chain", first_bad_seq=verify_result.get("first_bad_seq"), reason=verify_result.get("reason"),
                   table=verify_result.get("table"))
    return report


def _check_lost(report: CheckReport, writes: list[_Op], forgets: list[_Op], ledger: _Ledger, rows: list[dict],
                ack_status: dict) -> None:
    active = {r["memory_id"] for r in rows if r.get("status") == "active"}
    present = {r["memory_id"]: r.get("status") for r in rows}
    seen: set[str] = set()
    unkeyed = 0
    for o in writes:
        if o.state != "ok":
            continue
        key, d = o.inv.get("idempotency_key"), o.done
        mid, decision = d.get("memory_id"), d.get("decision")
        prims = ledger.by_key.get(key, []) if key is not None else []
        if decision == "blocked":
            if key is not None and not any(e["action"] == "block" for e in prims):
                report.add("lost", kind="not_in_ledger", **o.brief(), idempotency_key=key)
            continue
        if key is None:
            unkeyed += 1
            events = ledger.writes.get(mid, [])  # the memory's own write (a refresh cannot be told apart)
        else:
            events = [e for e in prims if e.get("memory_id") == mid]
        if not events:
            report.add("lost", kind="not_in_ledger", **o.brief(), idempotency_key=key)
            continue
        if events[0].get("version") != d.get("version"):
            report.add("version_order", kind="ack_mismatch", **o.brief(), ledger_version=events[0].get("version"))
        working = o.inv.get("pool") == "working" or decision == "working_only" or any(
            e["action"] == "write_working" for e in ledger.writes.get(mid, []))
        if working or mid in seen:
            continue
        seen.add(mid)
        if ledger.final_status(mid, ack_status.get(mid)) == "active" and mid not in active:
            report.add("lost", kind="not_in_store", **o.brief(), store_status=present.get(mid))
    for o in forgets:
        if o.state == "ok" and not ledger.forgets.get(o.inv.get("memory_id")):
            report.add("lost", kind="forget_not_in_ledger", op_id=o.op_id, memory_id=o.inv.get("memory_id"))
    if unkeyed:
        report.notes.append(f"{unkeyed} acknowledged writes carried no idempotency key: matched by memory id only")


def _check_duplicated(report: CheckReport, writes: list[_Op], ledger: _Ledger, rows: list[dict]) -> None:
    for key, prims in ledger.by_key.items():
        if len(prims) > 1:
            report.add("duplicated", kind="key_written_twice", idempotency_key=key,
                       seqs=[e["seq"] for e in prims], memory_ids=[e.get("memory_id") for e in prims])
    for mid, evs in ledger.writes.items():
        if len(evs) > 1:
            report.add("duplicated", kind="memory_written_twice", memory_id=mid, seqs=[e["seq"] for e in evs])
    acks: dict[str, dict[str, str]] = defaultdict(dict)  # key -> memory id -> first op id
    for o in writes:
        key = o.inv.get("idempotency_key")
        if o.state == "ok" and key is not None:
            acks[key].setdefault(o.done.get("memory_id"), o.op_id)
    for key, by_mid in acks.items():
        if len(by_mid) > 1:
            report.add("duplicated", kind="acks_disagree", idempotency_key=key, acks=by_mid)
    for mid, n in Counter(r["memory_id"] for r in rows).items():
        if n > 1:
            report.add("duplicated", kind="store_row_twice", memory_id=mid, rows=n)
    same: dict[tuple, list[str]] = defaultdict(list)
    for r in rows:
        if (r.get("status") == "active" and r.get("subject") is None and r.get("pool", "vault") != "working"
                and r.get("content") is not None):
            same[(r["scope"], normalise(r["content"]))].append(r["memory_id"])
    for (scope, _), mids in same.items():
        if len(set(mids)) > 1:
            report.add("duplicated", kind="same_content_active", scope=scope, memory_ids=sorted(set(mids)))


def _check_phantom(report: CheckReport, writes: list[_Op], forgets: list[_Op], ledger: _Ledger,
                   rows: list[dict]) -> None:
    by_key: dict[str, list[_Op]] = defaultdict(list)
    for o in writes:
        if o.inv.get("idempotency_key") is not None:
            by_key[o.inv["idempotency_key"]].append(o)
    # An unkeyed write in flight gets a key of the runtime's making: it cannot be told from a phantom.
    blind = {o.inv.get("scope") for o in writes if o.inv.get("idempotency_key") is None and o.state == "indeterminate"}
    unexplained = 0
    for key, prims in ledger.by_key.items():
        ops = by_key.get(key, [])
        if any(o.state != "failed" for o in ops):
            continue
        if not ops and prims[0]["scope"] in blind:
            unexplained += 1
            continue
        report.add("phantom", kind="failed_write_present" if ops else "unknown_key", idempotency_key=key,
                   seq=prims[0]["seq"], action=prims[0]["action"], memory_id=prims[0].get("memory_id"),
                   ops=[o.op_id for o in ops])
    if unexplained:
        report.notes.append(f"{unexplained} write events could belong to unkeyed writes in flight: not judged")
    asked = {o.inv.get("memory_id") for o in forgets if o.state != "failed"}
    for mid, evs in ledger.forgets.items():
        if mid not in asked:
            report.add("phantom", kind="unrequested_forget", memory_id=mid, seq=evs[0]["seq"])
    acked = {o.done.get("memory_id") for o in writes if o.state == "ok"}
    for r in rows:
        mid = r["memory_id"]
        if mid not in ledger.writes and mid not in acked:
            report.add("phantom", kind="store_row_not_in_ledger", memory_id=mid, scope=r["scope"])


def _check_versions(report: CheckReport, writes: list[_Op], ledger: _Ledger, rows: list[dict]) -> None:
    entity_of: dict[str, tuple | None] = {}
    for r in rows:
        if r.get("subject") is not None:
            entity_of[r["memory_id"]] = _entity(r["scope"], r["subject"], r.get("predicate"))
    inv_of_key = {o.inv["idempotency_key"]: o.inv for o in writes if o.inv.get("idempotency_key") is not None}
    groups: dict[tuple, list[dict]] = defaultdict(list)
    unplaced: set[str] = set()  # scopes with a versioned write whose entity is unknown: no gap verdicts there
    for e in ledger.events:
        if e["action"] != "write":
            continue
        mid = e.get("memory_id")
        ent = entity_of.get(mid)
        if ent is None and mid not in entity_of:
            inv = inv_of_key.get(e.get("idem_key"))
            if inv is None:
                unplaced.add(e["scope"])
                continue
            ent = _entity(e["scope"], inv.get("subject"), inv.get("predicate"))
        if ent is not None:
            groups[ent].append(e)
    for ent, evs in groups.items():
        versions = [e.get("version") for e in evs]
        for k, b in enumerate(evs):
            # Against the versions still on record when it was written: an erased or evicted
            # version leaves no trace, its number included (ScopeState.next_version).
            held = [a for a in evs[:k] if ledger.on_record(a.get("memory_id"), b["seq"])]
            twice = [a for a in held if a.get("version") == b.get("version")]
            if twice:
                report.add("version_order", kind="version_twice", entity=list(ent), version=b.get("version"),
                           memory_ids=[a.get("memory_id") for a in twice] + [b.get("memory_id")])
            top = max(held, key=lambda a: a.get("version"), default=None)
            if top is not None and b.get("version") < top.get("version"):
                report.add("version_order", kind="ledger_order", entity=list(ent),
                           earlier={"seq": top["seq"], "version": top.get("version")},
                           later={"seq": b["seq"], "version": b.get("version")})
        missing = sorted(set(range(1, max(versions) + 1)) - set(versions))
        if missing and ent[0] not in unplaced:
            report.add("version_order", kind="version_gap", entity=list(ent), missing=missing[:10])
    _check_ack_order(report, writes, ledger)


def _check_ack_order(report: CheckReport, writes: list[_Op], ledger: _Ledger) -> None:
    """Real-time order: a write invoked after another's ack must get a higher version (a
    refresh: at least the highest version made active before it, forgotten memories aside).
    Ops sharing an idempotency key are one write: invoked at the first invoke, acknowledged at
    the first ack (a retry replays the first result, however late it asks)."""
    first_inv: dict[str, int] = {}
    for o in writes:
        k = o.inv.get("idempotency_key") or o.op_id
        first_inv[k] = min(first_inv.get(k, o.inv["ts"]), o.inv["ts"])
    logical: dict[str, _Op] = {}
    for o in sorted((o for o in writes if o.state == "ok"), key=lambda o: o.done["ts"]):
        logical.setdefault(o.inv.get("idempotency_key") or o.op_id, o)
    groups: dict[tuple, list[tuple[int, _Op]]] = defaultdict(list)
    for k, o in logical.items():
        if o.inv.get("pool") == "working" or o.done.get("decision") not in (*NEW_VERSION, *SAME_MEMORY):
            continue
        ent = _entity(o.inv.get("scope"), o.inv.get("subject"), o.inv.get("predicate"))
        if ent is not None and o.done.get("version") is not None:
            groups[ent].append((first_inv[k], o))
    for ent, items in groups.items():
        done = sorted((o for _, o in items), key=lambda o: o.done["ts"])
        ts = [o.done["ts"] for o in done]
        best_all, best_active = [], []  # prefix maxima over acks in ack order: (version, op)
        for o in done:
            v = o.done["version"]
            prev_all = best_all[-1] if best_all else (0, None)
            prev_act = best_active[-1] if best_active else (0, None)
            best_all.append((v, o) if v > prev_all[0] else prev_all)
            counts = o.done["decision"] in ACTIVE_AT_ACK and not ledger.forgets.get(o.done.get("memory_id"))
            best_active.append((v, o) if counts and v > prev_act[0] else prev_act)
        for inv_ts, b in items:
            i = bisect.bisect_left(ts, inv_ts)  # acks strictly before b was first invoked
            if i == 0:
                continue
            refreshed = b.done["decision"] in SAME_MEMORY
            if refreshed and b.done.get("memory_id") in ledger.disputed:
                continue  # an older version still live beside a newer one, awaiting review
            v, a = (best_active if refreshed else best_all)[i - 1]
            if a is not None and not refreshed and not ledger.on_record(a.done.get("memory_id"), _write_seq(ledger, b)):
                # the highest was erased or evicted before this one was written: its number is free
                at = _write_seq(ledger, b)
                v, a = max(((o.done["version"], o) for o in done[:i] if ledger.on_record(o.done.get("memory_id"), at)),
                           key=lambda p: p[0], default=(0, None))
            if a is not None and (b.done["version"] < v if refreshed else b.done["version"] <= v):
                report.add("version_order", kind="ack_order", entity=list(ent), earlier=a.brief(), later=b.brief())


def _write_seq(ledger: _Ledger, o: _Op) -> float:
    evs = ledger.writes.get(o.done.get("memory_id"))
    return evs[0]["seq"] if evs else INF


def _check_visible(report: CheckReport, forgets: list[_Op], recalls: list[_Op], ledger: _Ledger, rows: list[dict],
                   ack_status: dict) -> None:
    forgot_at: dict[str, int] = {}
    for o in forgets:
        if o.state == "ok":
            mid = o.inv.get("memory_id")
            forgot_at[mid] = min(forgot_at.get(mid, o.done["ts"]), o.done["ts"])
    gone = set(forgot_at) | set(ledger.forgets)
    entities: dict[tuple, list[dict]] = defaultdict(list)
    for r in rows:
        mid = r["memory_id"]
        if mid in gone and r.get("status") != "tombstoned":
            report.add("forgotten_visible", kind="in_store", memory_id=mid, scope=r["scope"], status=r.get("status"))
            continue
        if r.get("status") != "active":
            continue
        final = ledger.final_status(mid, ack_status.get(mid))
        if final in ("superseded", "pending", "stale", "evicted"):
            report.add("superseded_visible", memory_id=mid, scope=r["scope"], expected=final)
        ent = _entity(r["scope"], r.get("subject"), r.get("predicate"))
        if ent is not None and r.get("pool", "vault") != "working":
            entities[ent].append(r)
    for ent, rs in entities.items():
        # Several live versions are right only while a close call awaits review: each flagged.
        if len({r["memory_id"] for r in rs}) > 1 and not all(r.get("review") == "contradiction" for r in rs):
            report.add("multiple_active", entity=list(ent),
                       active=sorted(({"memory_id": r["memory_id"], "version": r.get("version")} for r in rs),
                                     key=lambda x: (x["version"] or 0, x["memory_id"])))
    for o in recalls:
        if o.state != "ok":
            continue
        for h in o.done.get("hits", []):
            t = forgot_at.get(h["memory_id"])
            if t is not None and t < o.inv["ts"]:
                report.add("forgotten_visible", kind="in_recall", memory_id=h["memory_id"], recall=o.op_id)
