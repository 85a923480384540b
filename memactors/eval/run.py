"""Running the release gate: cases through the public API on a fresh data folder with a
``ManualClock``, every probe judged, then (the runtime closed) the residue scan.

Order: grants; every case's first writes in one ``write_many``; the "supersede" writes in a
second; the forgets; the clock moved once, by the most any case asks; the probes (top 5 each);
if a case asks for a sweep: the clock moved again, one ``rt.gc()``, the probes asked after it;
flush, a purge of old versions when the runtime has one, close; the scan.

A probe is judged on its own terms and the run's: any hit outside the probe's visible scopes
(its allowed scopes and their ancestors, computed here, not taken from the runtime) is a
cross-scope leak; any hit that is a trap of any case counts under that trap's counter; any hit
whose content holds a blocked secret counts as a blocked secret recalled.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any

import memactors
from memactors import InvalidRecord, ManualClock, parse_scope

from .report import RECALL_COUNTERS, RESIDUE_COUNTERS, STALE_COUNTER, Count, Report, cap_examples
from .residue import Needle, Matcher, scan_residue
from .scenarios import Case, check_set

DEFAULT_MIN_RECALL = 0.95
TOP_K = 5
PURPOSE = "release-gate"

Recall = Callable[..., Any]  # recall(rt, **kwargs of Runtime.recall) -> RecallResult


def default_recall(rt, **kw):
    """The recall the gate judges: ``rt.recall`` itself. Tests pass a wrapper to plant a leak."""
    return rt.recall(**kw)


def label(case: Case | str, key: str) -> str:
    """A write's name in reports: "case id/key"."""
    return f"{case.id if isinstance(case, Case) else case}/{key}"


def needles_for(cases: list[Case], memory_ids: dict[str, str | None]) -> list[Needle]:
    """What the residue scan looks for: each forgotten write's text and marker word, and each
    blocked write's secret."""
    out = []
    for c in cases:
        for w in c.writes:
            if w.trap == "forgotten":
                out.append(Needle(label(c, w.key), "forgotten", (w.text, w.marker), memory_ids.get(label(c, w.key))))
            elif w.trap == "blocked":
                out.append(Needle(label(c, w.key), "blocked", (w.secret,)))
    return out


def run_eval(target: str | os.PathLike | Callable[[ManualClock], Any], cases: list[Case], *, scan: bool = True,
             recall: Recall | None = None, min_recall: float = DEFAULT_MIN_RECALL, config: Any = None,
             set_name: str = "custom") -> Report:
    """Run ``cases`` and judge them. ``target`` is a data folder (new or empty; the runtime is
    opened there with ``config``) or a factory ``target(clock) -> Runtime`` that connects a fresh
    folder with that clock. ``recall(rt, **kw)`` replaces ``rt.recall`` (a test plants a leak);
    ``scan=False`` skips the residue scan (those counters are then not measured)."""
    check_set(cases)
    if not isinstance(min_recall, (int, float)) or not 0 <= min_recall <= 1:
        raise InvalidRecord("min_recall is a number in [0, 1]")
    clock = ManualClock()
    if callable(target):
        rt = target(clock)
    else:
        path = os.fspath(target)
        if os.path.exists(path) and (not os.path.isdir(path) or os.listdir(path)):
            raise InvalidRecord("the eval needs a new or empty data folder: every byte in it is scanned")
        rt = memactors.connect(path, config=config, clock=clock)
    data_dir, timings = rt.data_dir, {}
    try:
        play = _Play(rt, cases, clock, recall or default_recall, timings)
        play.run()
        t = time.perf_counter()
        rt.flush()
        purge = _purge(rt)
        timings["purge_s"] = time.perf_counter() - t
    finally:
        t = time.perf_counter()
        rt.close()
        timings["close_s"] = time.perf_counter() - t
    report = play.report(set_name, min_recall)
    if scan:
        t = time.perf_counter()
        needles = needles_for(cases, report.memory_ids)
        report = report.with_residue(scan_residue(data_dir, needles), needles, purge)
        timings["scan_s"] = time.perf_counter() - t
    report.timings = {k: round(v, 3) for k, v in timings.items()}
    return report


def _purge(rt) -> str:
    """Clean old versions when the runtime can (``rt.purge()``): forgotten bytes must be gone."""
    purge = getattr(rt, "purge", None)
    if purge is None:
        return "none: this runtime has no purge (old Lance versions and the full-text index keep erased rows)"
    purge()
    return "rt.purge()"


class _Play:
    """One run of a set on one runtime: what each write got, and each probe's verdicts."""

    def __init__(self, rt, cases: list[Case], clock: ManualClock, recall: Recall, timings: dict) -> None:
        self.rt, self.cases, self.clock, self.recall, self.timings = rt, cases, clock, recall, timings
        self.ids: dict[str, str | None] = {}
        self.decisions: dict[str, str] = {}
        self.traps: dict[str, str] = {}  # memory id -> trap
        self.counters = {name: Count() for name in (*RECALL_COUNTERS.values(), STALE_COUNTER,
                                                     *RESIDUE_COUNTERS.values())}
        self.examples: list[dict] = []
        self.must = {"expected": 0, "found": 0}
        self.ledger: dict = {}
        secrets = [Needle(label(c, w.key), "blocked", (w.secret,)) for c in cases for w in c.writes if w.secret]
        self.secrets = Matcher(secrets)

    def run(self) -> None:
        t = time.perf_counter()
        grants = {(g.actor, g.scope): g for c in self.cases for g in c.grants}
        self.rt.grant_many([{"actor": g.actor, "scope": g.scope, "read": g.read, "write": g.write}
                            for g in grants.values()])
        first = [(c, w) for c in self.cases for w in c.writes if w.key not in c.later]
        later = [(c, w) for c in self.cases for a in c.actions if a.op == "supersede" for w in [c.write(a.key)]]
        for batch in (first, later):
            results = self.rt.write_many([_item(w) for _c, w in batch]) if batch else []
            for (c, w), r in zip(batch, results):
                self._written(c, w, r)
        self.timings["write_s"] = time.perf_counter() - t
        t = time.perf_counter()
        for c in self.cases:
            for a in c.actions:
                mid = self.ids.get(label(c, a.key)) if a.op == "forget" else None
                if mid is not None:  # none: the write stored nothing, and its decision is already a failure
                    self.rt.forget(mid, actor=c.write(a.key).actor, reason="release gate scenario",
                                   scope="fact" if a.fact else "memory")
        self.timings["forget_s"] = time.perf_counter() - t
        days = max(c.advance_days for c in self.cases)
        if days:
            self.clock.advance(days=days)
        t = time.perf_counter()
        self._probes(after_sweep=False)
        self.timings["recall_s"] = time.perf_counter() - t
        sweep = max((c.sweep_days for c in self.cases if c.sweep_days is not None), default=None)
        if sweep is not None:
            t = time.perf_counter()
            self.clock.advance(days=sweep)
            self.rt.gc()
            self._probes(after_sweep=True)
            self.timings["sweep_s"] = time.perf_counter() - t
        t = time.perf_counter()
        self._ledger()
        self.timings["ledger_s"] = time.perf_counter() - t

    def _probes(self, *, after_sweep: bool) -> None:
        for c in self.cases:
            for i, p in enumerate(c.probes):
                if p.after_sweep == after_sweep:
                    self._probe(c, i, p)

    def _ledger(self) -> None:
        """The ledger's side of forgetting: each forgotten memory has a tombstone and its data
        key is destroyed (``rt.audit.erased``), and the hash chain still verifies."""
        gone = [(c, w) for c in self.cases for w in c.writes if w.trap == "forgotten" and self.ids.get(label(c, w.key))]
        proven = 0
        for c, w in gone:
            e = self.rt.audit.erased(self.ids[label(c, w.key)], actor=w.actor)
            if e.get("tombstone_seq") is not None and e.get("key_destroyed"):
                proven += 1
            else:
                self.examples.append({"counter": "erasure_unproven", "case": c.id, "write": w.key,
                                      "memory_id": e.get("memory_id"), "tombstone_seq": e.get("tombstone_seq"),
                                      "key_destroyed": e.get("key_destroyed")})
        v = self.rt.audit.verify()
        self.ledger = {"verified": bool(v.get("ok")), "first_bad_seq": v.get("first_bad_seq"),
                       "events": v.get("events"), "erasures": len(gone), "erasures_proven": proven}

    def _written(self, c: Case, w, r) -> None:
        key = label(c, w.key)
        self.ids[key] = r.memory_id
        self.decisions[key] = r.decision
        if r.memory_id is not None and w.trap is not None:
            self.traps[r.memory_id] = w.trap
        if r.decision != w.expect:
            self.examples.append({"counter": "unexpected_decisions", "case": c.id, "write": w.key,
                                  "expected": w.expect, "got": r.decision})

    def _probe(self, c: Case, i: int, p) -> None:
        visible = {str(a) for s in p.allowed_scopes for a in parse_scope(s).ancestors()}
        res = self.recall(self.rt, query=p.query, actor=p.actor, task_id=c.id, allowed_scopes=list(p.allowed_scopes),
                          purpose=PURPOSE, top_k=TOP_K)
        hits = list(res.hits)[:TOP_K]
        tripped: dict[str, dict] = {}
        for h in hits:
            where = {"case": c.id, "probe": i, "memory_id": h.memory_id, "scope": h.scope}
            if h.scope not in visible:
                tripped.setdefault(RECALL_COUNTERS["cross_scope"], where)
            trap = self.traps.get(h.memory_id)
            if trap is not None:
                tripped.setdefault(RECALL_COUNTERS[trap], where)
            if self.secrets.find((h.content or "").encode("utf-8")):
                tripped.setdefault(RECALL_COUNTERS["blocked"], where)
        asked = {RECALL_COUNTERS[c.write(k).trap] for k in p.must_not}
        for name in asked | set(tripped):
            self.counters[name].trials += 1
        for name, where in tripped.items():
            self.counters[name].violations += 1
            self.examples.append({"counter": name, **where})
        got = {h.memory_id for h in hits}
        flagged = {h.memory_id for h in hits if h.stale}
        if p.stale:
            self.counters[STALE_COUNTER].trials += 1
            unflagged = [k for k in p.stale if self.ids.get(label(c, k)) in got - flagged]
            if unflagged:
                self.counters[STALE_COUNTER].violations += 1
                self.examples.append({"counter": STALE_COUNTER, "case": c.id, "probe": i, "write": unflagged[0],
                                      "memory_id": self.ids.get(label(c, unflagged[0]))})
        for k in p.must:
            self.must["expected"] += 1
            mid = self.ids.get(label(c, k))
            if mid is not None and mid in got:
                self.must["found"] += 1
            else:
                self.examples.append({"counter": "must_recall_at_5", "case": c.id, "probe": i, "write": k,
                                      "memory_id": mid})

    def report(self, set_name: str, min_recall: float) -> Report:
        by_kind: dict[str, int] = {}
        for c in self.cases:
            by_kind[c.kind] = by_kind.get(c.kind, 0) + 1
        unexpected = sum(1 for e in self.examples if e["counter"] == "unexpected_decisions")
        return Report(
            set={"name": set_name, "cases": len(self.cases), "by_kind": by_kind,
                 "writes": len(self.decisions), "probes": sum(len(c.probes) for c in self.cases),
                 "clock_advanced_days": max(c.advance_days for c in self.cases)},
            counters=self.counters, must_recall=dict(self.must, min_recall=min_recall),
            decisions={"writes": len(self.decisions), "unexpected": unexpected}, ledger=self.ledger,
            memory_ids=dict(self.ids), examples=cap_examples(self.examples))


def _item(w) -> dict:
    item = {"scope": w.scope, "text": w.text, "actor": w.actor, "source": w.source}
    for k in ("subject", "predicate", "object", "confidence", "ttl_days", "soft_ttl_days"):
        if getattr(w, k) is not None:
            item[k] = getattr(w, k)
    return item
