"""A deterministic workload of writes, forgets and recalls, driven through a runtime while a
``History`` records it.

Operations are a pure function of ``(seed, client, index)``: a few subjects and predicates, so
that versions chain (the same subject+predicate with another object supersedes; the same object
again refreshes; a lower-confidence source is kept as superseded), a few text-only phrases
(refreshed by content), and optionally writes the gate redacts or blocks and working-pool
writes. A fraction of indices is *shared*: every client generates the same write there, with
the same idempotency key, as a retry from another process would. A forget names an index into
the memories this client has seen acknowledged, so which memory it erases depends on the run.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from ..core.errors import PartialWrite
from .history import History

_TEXT_ONLY = ("the office moves to the fourth floor", "quarterly review is on friday",
              "the build server restarts nightly", "lunch orders close at eleven")
# Test data the gate must act on: a phone number (redacted) and AWS's documented example key id (blocked).
_REDACTED = "call the front desk at 13812345678"
_BLOCKED = "deploy with key AKIAQYLPMN5HFTXW7Z3B today"


@dataclass(frozen=True, slots=True)
class Op:
    index: int
    kind: str  # write | forget | recall
    args: dict = field(default_factory=dict)  # write: rt.write keyword arguments; recall: query, scope
    pick: int = 0  # forget: which acknowledged memory (modulo how many this client has seen)
    shared: bool = False


@dataclass
class Workload:
    """``Workload(scopes, actor, seed=1)``; ``ops(n, client)`` lists the operations,
    ``run(rt, history, n)`` drives them. ``actor`` needs read and write grants on ``scopes``."""

    scopes: tuple[str, ...] | list[str]
    actor: str
    seed: int = 0
    subjects: tuple[str, ...] = ("alice", "bob", "carol")
    predicates: tuple[str, ...] = ("drink", "city")
    objects: tuple[str, ...] = ("tea", "coffee", "water", "juice")
    mix: tuple[float, float, float] = (0.75, 0.08, 0.17)  # write, forget, recall
    shared: float = 0.2  # fraction of indices every client writes alike (same key)
    gate_mix: bool = False  # include writes the gate redacts or blocks
    working: float = 0.0  # fraction of writes to the L1 working pool
    lower_confidence: float = 0.15  # fraction of entity writes from a lower-confidence source
    recall_top_k: int = 20

    def __post_init__(self) -> None:
        if isinstance(self.scopes, str):
            self.scopes = (self.scopes,)
        self.scopes = tuple(self.scopes)

    # --- generation --------------------------------------------------------------------------

    def op(self, index: int, client: str) -> Op:
        common = random.Random(f"{self.seed}:shared:{index}")
        if common.random() < self.shared:
            return Op(index, "write", self._write(common, f"w{self.seed}-shared-{index}"), shared=True)
        rng = random.Random(f"{self.seed}:{client}:{index}")
        x = rng.random()
        if x < self.mix[0]:
            return Op(index, "write", self._write(rng, f"w{self.seed}-{client}-{index}"))
        if x < self.mix[0] + self.mix[1]:
            return Op(index, "forget", pick=rng.randrange(1 << 30))
        s, p = rng.choice(self.subjects), rng.choice(self.predicates)
        return Op(index, "recall", {"query": f"{s} {p}", "scope": rng.choice(self.scopes)})

    def ops(self, n: int, client: str) -> list[Op]:
        return [self.op(i, client) for i in range(n)]

    def _write(self, rng: random.Random, key: str) -> dict:
        args: dict[str, Any] = {"scope": rng.choice(self.scopes), "actor": self.actor, "idempotency_key": key}
        y = rng.random()
        if self.gate_mix and y < 0.05:
            return dict(args, text=_REDACTED)
        if self.gate_mix and y < 0.10:
            return dict(args, text=_BLOCKED)
        if y < 0.2:
            return dict(args, text=rng.choice(_TEXT_ONLY))
        s, p, o = rng.choice(self.subjects), rng.choice(self.predicates), rng.choice(self.objects)
        args.update(text=f"{s} {p} {o}", subject=s, predicate=p, object=o)
        if rng.random() < self.lower_confidence:
            args["source"] = "agent_inferred"  # lower confidence: kept as superseded under a user's statement
        if rng.random() < self.working:
            args["pool"] = "working"
        return args

    # --- driving -----------------------------------------------------------------------------

    def run(self, rt: Any, history: History, n: int, *, start: int = 0, seen: list[str] | None = None) -> dict:
        """Drive ops ``start``..``start+n`` of ``history.client`` through ``rt``, recording each
        (invoke made durable before the call). Errors are recorded and the run goes on.
        ``seen``: memory ids acknowledged earlier (a forget picks among them; extended in place).
        Returns counts by outcome and ``memory_ids``, the acknowledged ids in order."""
        counts: dict[str, Any] = {"ok": 0, "fail": 0, "skipped": 0}
        seen = [] if seen is None else seen  # memory ids this client saw acknowledged, in order
        counts["memory_ids"] = seen
        for op in (self.op(i, history.client) for i in range(start, start + n)):
            if op.kind == "write":
                op_id = history.write_invoke(**op.args)
                try:
                    r = rt.write(**op.args)
                except Exception as exc:  # noqa: BLE001 - every failure is part of the history
                    history.fail(op_id, exc)
                    counts["fail"] += 1
                    continue
                history.write_ok(op_id, r)
                if r.memory_id is not None and r.decision != "blocked":
                    seen.append(r.memory_id)
            elif op.kind == "forget":
                if not seen:
                    counts["skipped"] += 1
                    continue
                mid = seen[op.pick % len(seen)]
                op_id = history.forget_invoke(mid, actor=self.actor)
                try:
                    out = rt.forget(mid, actor=self.actor, reason="workload")
                except Exception as exc:  # noqa: BLE001
                    history.fail(op_id, exc)
                    counts["fail"] += 1
                    continue
                history.forget_ok(op_id, out)
            else:
                op_id = history.recall_invoke([op.args["scope"]], actor=self.actor, query=op.args["query"])
                try:
                    res = rt.recall(op.args["query"], actor=self.actor, task_id=f"wl-{history.client}",
                                    allowed_scopes=[op.args["scope"]], purpose="workload", top_k=self.recall_top_k)
                except Exception as exc:  # noqa: BLE001
                    history.fail(op_id, exc)
                    counts["fail"] += 1
                    continue
                history.recall_ok(op_id, res)
            counts["ok"] += 1
        return counts

    def run_batched(self, rt: Any, history: History, n: int, *, batch: int = 50, start: int = 0) -> dict:
        """Like ``run`` but the writes of each ``batch`` consecutive ops go through one
        ``write_many`` (invokes fsynced together before it; forgets and recalls in between are
        skipped). An item error (IdempotencyConflict, AccessDenied) names its refused items
        (``err.failed``, ``err.results``): those are definite failures; a PartialWrite names the
        items not confirmed (indeterminate); any other error leaves the whole batch indeterminate."""
        counts = {"ok": 0, "fail": 0}
        for lo in range(start, start + n, batch):
            items = [op.args for op in (self.op(i, history.client) for i in range(lo, min(lo + batch, start + n)))
                     if op.kind == "write"]
            if not items:
                continue
            with history.batch():
                ids = [history.write_invoke(**it) for it in items]
            try:
                results = rt.write_many(items)
                failed: list[int] = []
                error: BaseException | None = None
            except Exception as exc:  # noqa: BLE001
                results = getattr(exc, "results", None)
                failed, error = list(getattr(exc, "failed", [])), exc
            with history.batch():
                for i, op_id in enumerate(ids):
                    if results is not None and results[i] is not None:
                        history.write_ok(op_id, results[i])
                        counts["ok"] += 1
                    else:
                        # An item refused on its own (err.failed of an item error): definitely not
                        # written. A PartialWrite's items were not *confirmed*: they may be written.
                        history.fail(op_id, error, definite=i in failed and not isinstance(error, PartialWrite))
                        counts["fail"] += 1
        return counts
