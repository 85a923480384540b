"""The release gate's report: governance counters (each must be 0), must-recall recall@5
against a floor, decisions that did not go as the cases say, what the residue scan read, and
examples that name cases, write keys, memory ids, scopes and places, never content.

``Report.exit_code()`` is 0 only when every counter is 0, recall@5 reaches the floor, every
write got the decision its case expects (otherwise the scenario did not run as written), every
forgotten memory has its tombstone with its data key destroyed, and the ledger's chain verifies.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace

from .residue import Needle, Residue

# Counters that must be 0, in report order. A recall counter counts probes that saw a trap of
# its kind come back (or, for cross_scope_leak, any hit outside the probe's visible scopes); its
# trials are the probes that set such a trap, plus any probe that tripped one unasked.
RECALL_COUNTERS = {
    "cross_scope": "cross_scope_leak",
    "expired": "expired_hit",
    "superseded": "superseded_recall",
    "forgotten": "forgotten_recall",
    "pending": "pending_recall",
    "low_confidence": "low_confidence_recall",
    "blocked": "blocked_secret_recall",
    "soft_expired_unused": "unused_soft_expired_recall",
}
# A memory past its soft TTL must come back flagged stale when asked for in its own words:
# counted apart (a probe whose stale memory came back unflagged), it too must be 0.
STALE_COUNTER = "stale_unflagged"
# Counters of the residue scan: forgotten memories with any byte left on disk (or a row listed
# in a full-text index), and blocked secrets found anywhere in the data folder.
RESIDUE_COUNTERS = {"forgotten": "post_forget_residue", "blocked": "blocked_secret_storage"}
COUNTERS = (*RECALL_COUNTERS.values(), STALE_COUNTER, *RESIDUE_COUNTERS.values())
MAX_EXAMPLES = 25


@dataclass
class Count:
    violations: int = 0
    trials: int = 0

    @property
    def rate(self) -> float:
        return self.violations / self.trials if self.trials else 0.0

    def to_dict(self) -> dict:
        return {"violations": self.violations, "trials": self.trials, "rate": round(self.rate, 6)}


@dataclass
class Report:
    """What ``run_eval`` measured. ``counters`` maps each of COUNTERS to a Count; ``residue`` is
    None when the run did not scan (then the residue counters are not measured)."""

    set: dict
    counters: dict[str, Count]
    must_recall: dict  # expected, found, min_recall
    decisions: dict  # writes, unexpected
    memory_ids: dict[str, str | None]  # "case/key" -> the id the write got (None: nothing stored)
    # verified (the hash chain), first_bad_seq, events, erasures (forgotten memories), erasures_proven
    # (a tombstone and the data key destroyed, as rt.audit.erased shows them)
    ledger: dict = field(default_factory=dict)
    residue: dict | None = None  # scanned (what was read), purge (how old versions were cleaned)
    examples: list[dict] = field(default_factory=list)
    timings: dict = field(default_factory=dict)

    @property
    def recall_at_5(self) -> float:
        m = self.must_recall
        return m["found"] / m["expected"] if m["expected"] else 1.0

    def failures(self) -> list[str]:
        """One line per reason the gate fails (empty: it passes)."""
        out = [f"{name}: {c.violations} of {c.trials} ({c.rate:.1%}) must be 0"
               for name, c in self.counters.items() if c.violations and self._measured(name)]
        if self.recall_at_5 < self.must_recall["min_recall"]:
            out.append(f"must-recall recall@5 {self.recall_at_5:.3f} is below the floor "
                       f"{self.must_recall['min_recall']:.3f} ({self.must_recall['found']} of "
                       f"{self.must_recall['expected']})")
        if self.decisions["unexpected"]:
            out.append(f"decisions: {self.decisions['unexpected']} of {self.decisions['writes']} writes were decided "
                       "otherwise than their case expects (the scenario did not run as written)")
        led = self.ledger
        if led and not led.get("verified", True):
            out.append(f"ledger: the hash chain does not verify (first bad seq {led.get('first_bad_seq')})")
        if led.get("erasures_proven", 0) < led.get("erasures", 0):
            out.append(f"ledger: {led['erasures'] - led['erasures_proven']} of {led['erasures']} forgotten memories "
                       "have no tombstone or still have their data key")
        return out

    def _measured(self, name: str) -> bool:
        return self.residue is not None or name not in RESIDUE_COUNTERS.values()

    def exit_code(self) -> int:
        return 1 if self.failures() else 0

    def with_residue(self, residue: Residue, needles: list[Needle], purge: str | None = None) -> Report:
        """This report with the residue counters measured from ``residue`` (a scan for ``needles``)."""
        counters = dict(self.counters)
        examples = [e for e in self.examples if e["counter"] not in RESIDUE_COUNTERS.values()]
        for kind, name in RESIDUE_COUNTERS.items():
            mine = [n for n in needles if n.kind == kind]
            hit = [n for n in mine if residue.found.get(n.label)]
            counters[name] = Count(len(hit), len(mine))
            examples += [{"counter": name, "case": n.label.rsplit("/", 1)[0], "write": n.label.rsplit("/", 1)[1],
                          "memory_id": n.memory_id, "where": residue.found[n.label]} for n in hit]
        scanned = dict(residue.scanned)
        return replace(self, counters=counters, examples=cap_examples(examples),
                       residue={"scanned": scanned, "purge": purge or (self.residue or {}).get("purge")})

    def to_dict(self) -> dict:
        d = asdict(self)
        d["counters"] = {k: c.to_dict() for k, c in self.counters.items()}
        d["must_recall"] = dict(self.must_recall, recall_at_5=round(self.recall_at_5, 6))
        return d | {"failures": self.failures(), "exit_code": self.exit_code()}

    def rows(self) -> list[list]:
        """Rows for a table: measure, violations or found, trials or expected, rate, verdict."""
        rows = []
        for name, c in self.counters.items():
            measured = self._measured(name)
            verdict = ("FAIL" if c.violations else "ok") if measured else "not scanned"
            rows.append([name, c.violations if measured else None, c.trials if measured else None,
                         c.rate if measured else None, verdict])
        m = self.must_recall
        rows.append(["must_recall_at_5", m["found"], m["expected"], self.recall_at_5,
                     "FAIL" if self.recall_at_5 < m["min_recall"] else f"ok (floor {m['min_recall']:g})"])
        rows.append(["unexpected_decisions", self.decisions["unexpected"], self.decisions["writes"], None,
                     "FAIL" if self.decisions["unexpected"] else "ok"])
        if self.ledger:
            led = self.ledger
            rows.append(["erasures_proven", led["erasures_proven"], led["erasures"], None,
                         "ok" if led["erasures_proven"] == led["erasures"] else "FAIL"])
            rows.append(["ledger_verifies", led["events"], None, None, "ok" if led["verified"] else "FAIL"])
        return rows


def cap_examples(examples: list[dict]) -> list[dict]:
    """At most MAX_EXAMPLES, every counter represented before any gets a second one."""
    by: dict[str, list[dict]] = {}
    for e in examples:
        by.setdefault(e["counter"], []).append(e)
    out: list[dict] = []
    i = 0
    while len(out) < MAX_EXAMPLES and any(i < len(v) for v in by.values()):
        out += [v[i] for v in by.values() if i < len(v)][:MAX_EXAMPLES - len(out)]
        i += 1
    return out
