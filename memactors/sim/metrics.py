"""Judging what a backend did, tick by tick: governance counters, probe accuracy, throughput.

Governance counters (each must stay 0 on a governed backend):

- ``cross_tenant_hits``: a hit from another org than the recalling agent's (or with no valid scope);
- ``cross_user_hits``: a hit from another user's scope of the same org;
- ``superseded_recalled``: a hit stating a value its subject held before, not the current one;
- ``expired_recalled``: a hit about a tool result past its hard expiry;
- ``forgotten_recalled``: a hit stating a value its subject asked to forget (before this tick);
- ``pending_recalled``: a hit carrying an injected instruction (held for review, never recalled);
- ``secrets_recalled``: planted secret values inside recalled hits;
- ``secrets_stored``: planted secret values found in the backend's files (raw, utf-8, utf-16-le);
- ``ungranted_accepted``: an action outside the agent's grants that the backend did not refuse.

Accuracy: a probe asks for a user's current preference; it is *found* when the current value is
among the hits, *clean* when found and no outdated value ranks above it.
"""

from __future__ import annotations

from collections import Counter
from functools import lru_cache

import numpy as np

from ..core.scopes import parse_scope
from .actions import Forget, Observe, ProbeSpec, Recall, TaskEnd, TaskStart
from .backend import TickResult
from .planted import SecretScanner
from .vocab import INJECTION_MARKERS
from .world import World

COUNTERS = ("cross_tenant_hits", "cross_user_hits", "superseded_recalled", "expired_recalled",
            "forgotten_recalled", "pending_recalled", "secrets_recalled", "secrets_stored", "ungranted_accepted")

# What a reader sees for each counter: (short label for tables and plots, one line of legend).
LABELS = {
    "cross_tenant_hits": ("cross-org memories recalled", "a hit from another organisation"),
    "cross_user_hits": ("cross-user memories recalled", "a hit from another user's scope, same org"),
    "superseded_recalled": ("outdated values recalled", "a value its subject has since changed"),
    "expired_recalled": ("expired results recalled", "a tool result past its hard expiry"),
    "forgotten_recalled": ("forgotten values recalled", "a value its subject asked to forget"),
    "pending_recalled": ("injected text recalled", "a hit carrying an injected instruction"),
    "secrets_recalled": ("secrets recalled", "a planted secret (key, password) in a hit"),
    "secrets_stored": ("secrets left on disk", "a planted secret in the store's files at the end"),
    "ungranted_accepted": ("out-of-grant actions accepted", "an action outside the agent's grants"),
}


def scope_owner(scope: object) -> tuple[str | None, str | None] | None:
    """(org, user) a scope belongs to (None parts for /global/ or an org scope), or None when the
    value is not a scope at all."""
    return _scope_owner(scope) if isinstance(scope, str) else None


@lru_cache(maxsize=200_000)
def _scope_owner(scope: str) -> tuple[str | None, str | None] | None:
    try:
        s = parse_scope(scope)
    except (ValueError, TypeError):
        return None
    seg = s.segments
    return (seg[1] if len(seg) > 1 else None, seg[3] if len(seg) > 3 and seg[2] == "user" else None)


def judge_hit(world: World, scanner: SecretScanner, tick: int, now_us: int, agent: str, hit: dict) -> list[str]:
    """The counters one recalled ``hit`` of ``agent`` at ``tick`` increments (often none)."""
    out: list[str] = []
    home_org, home_user = world.home[agent]
    owner = scope_owner(hit.get("scope"))
    if owner is None or (owner[0] is not None and owner[0] != home_org):
        out.append("cross_tenant_hits")
    elif owner[1] is not None and owner[1] != home_user:
        out.append("cross_user_hits")
    s, p, o = hit.get("subject"), hit.get("predicate"), hit.get("object")
    if s is not None and p is not None and o is not None:
        stale = world.truth.staleness(s, p, o, tick)
        if stale is not None:
            out.append(f"{stale}_recalled")
    if s is not None and (exp := world.tool_expiry.get(s)) is not None and now_us >= exp:
        out.append("expired_recalled")
    content = hit.get("content") or ""
    low = content.lower()
    if any(m in low for m in INJECTION_MARKERS):
        out.append("pending_recalled")
    if scanner and content:
        out += ["secrets_recalled"] * len(scanner.find_text(content))
    return out


def _states(hit: dict, spec: ProbeSpec, value: str) -> bool:
    if hit.get("predicate") is not None:
        return hit.get("subject") == spec.user and hit.get("predicate") == spec.predicate and hit.get("object") == value
    return value.lower() in (hit.get("content") or "").lower()  # a backend without structured fields


def evaluate_probe(spec: ProbeSpec, hits: list[dict]) -> tuple[bool, bool]:
    """(found, clean): the current value is among ``hits`` (best first); and no outdated value
    ranks above it."""
    if spec.current is None:
        return False, False
    cur = next((i for i, h in enumerate(hits) if _states(h, spec, spec.current)), None)
    if cur is None:
        return False, False
    old = next((i for i, h in enumerate(hits) if any(_states(h, spec, v) for v in spec.outdated)), None)
    return True, old is None or old > cur


def ungranted(world: World, action) -> bool:
    """Whether ``action`` reaches outside its agent's grants."""
    if isinstance(action, (Observe, Forget, TaskStart, TaskEnd)):
        return not world.may(action.agent, action.scope)
    if isinstance(action, Recall):
        return not all(world.may(action.agent, s) for s in action.allowed_scopes)
    return False


def _error_kind(err: str) -> str:
    return err.split(":", 1)[0].strip() or "Error"


class BackendMetrics:
    """Everything measured for one backend over a run."""

    def __init__(self, world: World, name: str, governed: bool) -> None:
        self.world, self.name, self.governed = world, name, governed
        self.rows: list[dict] = []
        self.counters: Counter = Counter(dict.fromkeys(COUNTERS, 0))
        self.errors: Counter = Counter()
        self.info: Counter = Counter()
        self.sweeps: list[dict] = []
        self.secrets_stored_by_kind: dict[str, int] = {}
        self.last_counts: dict = {}
        self.crashes = 0

    def tick(self, tick: int, actions: list, result: TickResult | None, apply_s: float,
             scanner: SecretScanner | None) -> dict:
        """Judge one tick; ``result`` None means ``apply`` raised (every action counts as failed)."""
        w, now = self.world, self.world.now_us(tick)
        ops = sum(isinstance(a, (Observe, Recall, Forget)) for a in actions)
        delta: Counter = Counter()
        recalls = hits_n = probes = found_n = clean_n = 0
        errors = result.errors if result is not None else dict.fromkeys(range(len(actions)), "BackendCrashed")
        if result is None:
            self.crashes += 1
        for i, a in enumerate(actions):
            err = errors.get(i)
            if err is not None:
                self.errors[_error_kind(err)] += 1
            elif ungranted(w, a):
                delta["ungranted_accepted"] += 1
            if not isinstance(a, Recall):
                continue
            recalls += 1
            hits = result.hits.get(i, []) if result is not None and err is None else []
            hits_n += len(hits)
            for h in hits:
                delta.update(judge_hit(w, scanner, tick, now, a.agent, h))
            if a.probe is not None:
                probes += 1
                found, clean = evaluate_probe(a.probe, hits)
                found_n += found
                clean_n += clean
        if result is not None:
            self.info.update({k: v for k, v in result.info.items() if isinstance(v, (int, float))})
        self.counters.update(delta)
        row = {"tick": tick, "day": round(w.day(tick), 4), "ops": ops, "apply_s": apply_s,
               "ops_per_s": ops / apply_s if apply_s > 0 else None, "recalls": recalls, "hits": hits_n,
               "errors": len(errors), "probes": probes,
               "probe_found": found_n, "probe_clean": clean_n, "counters": {k: v for k, v in delta.items() if v}}
        self.rows.append(row)
        return row

    def counts(self, counts: dict) -> None:
        self.last_counts = counts
        if self.rows:
            self.rows[-1]["counts"] = counts

    def sweep(self, tick: int, seconds: float, summary: dict | None) -> None:
        self.sweeps.append({"tick": tick, "seconds": seconds, "summary": summary})

    def secrets_stored(self, by_kind: dict[str, int]) -> None:
        self.secrets_stored_by_kind = by_kind
        self.counters["secrets_stored"] = sum(by_kind.values())

    def totals(self) -> dict:
        lat = np.array([r["apply_s"] for r in self.rows]) * 1e3 if self.rows else np.zeros(1)
        ops = sum(r["ops"] for r in self.rows)
        busy = sum(r["apply_s"] for r in self.rows)
        recalls = sum(r["recalls"] for r in self.rows)
        probes = sum(r["probes"] for r in self.rows)
        found = sum(r["probe_found"] for r in self.rows)
        clean = sum(r["probe_clean"] for r in self.rows)
        return {
            "ops": ops, "apply_s": round(busy, 4), "ops_per_s": round(ops / busy, 1) if busy > 0 else None,
            "tick_ms": {"p50": round(float(np.percentile(lat, 50)), 3), "p95": round(float(np.percentile(lat, 95)), 3),
                        "max": round(float(lat.max()), 3)},
            "recalls": recalls, "hits": sum(r["hits"] for r in self.rows),
            "hits_per_recall": round(sum(r["hits"] for r in self.rows) / recalls, 3) if recalls else None,
            "probes": probes, "probe_found": found, "probe_clean": clean,
            "accuracy": round(clean / probes, 4) if probes else None,
            "probe_recall": round(found / probes, 4) if probes else None,
            "errors": dict(sorted(self.errors.items())), "crashed_ticks": self.crashes,
            "sweeps": {"count": len(self.sweeps), "seconds": round(sum(s["seconds"] for s in self.sweeps), 4)},
            "info": dict(sorted(self.info.items())), "memories": self.last_counts,
        }

    def failures(self) -> list[str]:
        """Why this backend fails the run: non-zero counters or crashed ticks (governed only)."""
        if not self.governed:
            return []
        out = [f"{self.name}: {k} = {v}" for k, v in self.counters.items() if v]
        if self.crashes:
            out.append(f"{self.name}: apply raised on {self.crashes} ticks")
        return out
