"""The governed backend: memactors itself, driven the way an agent app drives it.

Every agent acts through sessions and the batched operations, one call of each kind per tick:

- ``TaskStart`` opens a ``Session`` on the task scope (goal and constraints into L0 and L1, a
  push recall); all of a tick's starts go in one batch (``start_all``);
- an ``Observe`` of a task goes to its session (L0, and through the gate into the working pool);
  any other ``Observe`` (what the user states, an admin's policy) is a vault write. All of a
  tick's writes, session items and vault writes alike, are one ``write_many``;
- every ``Recall`` of the tick is one ``recall_many`` (grants checked per request: a page's
  "recall everything about that other user" is refused, as it must be);
- each open session then ends its turn (promotion L1 -> L2 by rule, one call per owner), and a
  ``TaskEnd`` completes its session (last promotion, the outcome written);
- the tick's ``Forget``s are one ``rt.batch`` of ``ops.Forget(erase="fact")`` (every version of
  the fact, one call per owner), found by the newest write of its subject and predicate in that
  scope.

The runtime runs on a ``ManualClock`` set to the simulated time each tick, so recency, TTLs and
the session TTL follow the simulated clock; ``sweep`` is ``rt.gc()``. Demotion is not run: the
scripted policy never cites what it used, so every recalled memory would look unused.
Bad input from a policy (refused by the runner before it gets here) or refused by memactors
(a grant, the gate, a validation) becomes that action's error; the tick goes on.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from .. import ops as O
from ..core.clock import US_PER_DAY, ManualClock
from ..core.errors import AccessDenied, MemactorsError
from ..core.scopes import parse_scope
from .actions import Action, Forget, Observe, Recall, TaskEnd, TaskStart
from .backend import TickResult, error_string, register_backend

HIT_FIELDS = ("memory_id", "scope", "content", "subject", "predicate", "object", "score")


class MemactorsBackend:
    """memactors on a data folder in ``path`` (its own Ray when none runs). ``config``: extra
    runtime configuration (merged over a small default: two owners)."""

    name = "memactors"
    governed = True

    def __init__(self, path: str, *, config: dict | None = None, name: str = "memactors") -> None:
        self.name, self.path, self._extra = name, path, config or {}
        self.rt = self.clock = None
        self._sessions: dict[tuple[str, str], object] = {}  # (agent, task) -> Session
        self._facts: dict[tuple[str, str, str], str] = {}  # (scope, subject, predicate) -> newest memory id

    # --- the protocol ----------------------------------------------------------------------

    def setup(self, world) -> None:
        import memactors

        cfg = world.cfg
        self.clock = ManualClock(world.now_us(0))
        # The working pool holds a session's items for as long as a task may stay open.
        ttl_s = int((cfg.task_days_max + 1) * US_PER_DAY / 1_000_000)
        base = {"runtime": {"num_owners": 2, "session_ttl_s": ttl_s, "working_pool_size": 400}}
        config = _merge(base, self._extra)
        self.rt = memactors.connect(os.path.join(self.path, "data"), config=config, clock=self.clock)
        self.rt.grant_many([{"actor": g.agent, "scope": g.scope, "read": g.read, "write": g.write}
                            for g in world.grants()])

    def apply(self, tick: int, now_us: int, actions: Sequence[Action]) -> TickResult:
        from ..runtime.session import Session, complete_all, end_turn_all, flush_all, start_all

        if now_us > self.clock.now_us():
            self.clock.set(now_us)
        res = TickResult()
        info = res.info
        starting = []
        for i, a in enumerate(actions):
            if isinstance(a, TaskStart):
                try:
                    s = Session(self.rt, a.scope, actor=a.agent, task_id=a.task, goal=a.goal,
                                constraints=a.constraints, purpose="task")
                except MemactorsError as e:
                    res.errors[i] = error_string(e)
                    continue
                self._sessions[(a.agent, a.task)] = s
                starting.append(s)
        if starting:
            start_all(self.rt, starting)
        active: dict[int, object] = {}
        direct, direct_at = [], []
        for i, a in enumerate(actions):
            if not isinstance(a, Observe):
                continue
            s = self._sessions.get((a.agent, a.task)) if a.task is not None else None
            if s is not None and s.scope == _norm(a.scope):
                try:
                    s.observe(a.source, a.text, importance=a.importance, critical=a.critical, subject=a.subject,
                              predicate=a.predicate, object=a.object, ttl_days=a.ttl_days)
                    active[id(s)] = s
                except MemactorsError as e:
                    res.errors[i] = error_string(e)
                continue
            item = dict(scope=a.scope, text=a.text, actor=a.agent, source=a.source, subject=a.subject,
                        predicate=a.predicate, object=a.object, importance=a.importance)
            if a.ttl_days is not None:
                item["ttl_days"] = a.ttl_days
            if a.task is not None:  # a task's observation without its session: the working pool
                item["pool"] = "working"
            direct.append(item)
            direct_at.append(i)
        written = flush_all(self.rt, list(active.values()), direct)
        for i, item, r in zip(direct_at, direct, written):
            if isinstance(r, MemactorsError):
                res.errors[i] = error_string(r)
                continue
            info[f"write_{r.decision}"] = info.get(f"write_{r.decision}", 0) + 1
            if r.memory_id is not None and item.get("subject") and item.get("pool") != "working":
                self._facts[(_norm(item["scope"]), item["subject"], item["predicate"])] = r.memory_id
        for s in active.values():
            info["session_errors"] = info.get("session_errors", 0) + len(s.errors)
            s.errors.clear()
        self._recalls(actions, res)
        open_now = [s for s in self._sessions.values() if not s.closed and (id(s) in active or s.pending)]
        if open_now:
            for tr in end_turn_all(self.rt, open_now):
                info["promoted"] = info.get("promoted", 0) + len(tr.promoted)
        self._forgets(actions, res)
        ending = []
        for i, a in enumerate(actions):
            if isinstance(a, TaskEnd):
                s = self._sessions.pop((a.agent, a.task), None)
                if s is None:
                    res.errors[i] = "NotFound: no open session for this task"
                elif s.closed:
                    continue
                else:
                    ending.append((s, a.summary, "success"))
        if ending:
            for out in complete_all(self.rt, ending):
                info["promoted"] = info.get("promoted", 0) + len(out["turn"].promoted)
        return res

    def _recalls(self, actions: Sequence[Action], res: TickResult) -> None:
        idx, reqs = [], []
        for i, a in enumerate(actions):
            if isinstance(a, Recall):
                idx.append(i)
                reqs.append({"query": a.query, "actor": a.agent, "task_id": a.task or "none",
                             "allowed_scopes": list(a.allowed_scopes), "purpose": a.purpose, "top_k": a.top_k})
        if not reqs:
            return
        for i, r in zip(idx, self.rt.recall_many(reqs, return_errors=True)):
            if isinstance(r, MemactorsError):
                res.errors[i] = error_string(r)
            else:
                res.hits[i] = [{k: getattr(h, k) for k in HIT_FIELDS} for h in r.hits]

    def _forgets(self, actions: Sequence[Action], res: TickResult) -> None:
        """The tick's forgets as one ``rt.batch`` (one call per owner, not one per forget)."""
        at, ops, facts = [], [], []
        for i, a in enumerate(actions):
            if not isinstance(a, Forget):
                continue
            try:
                scope = _norm(a.scope)
                fact = (scope, a.subject, a.predicate)
                mid = None if fact in facts else self._facts.get(fact)  # asked twice this tick: erased once
                if mid is None:  # nothing written: still refused outside the agent's grants
                    self._check_write(a.agent, scope)
                    continue
            except MemactorsError as e:
                res.errors[i] = error_string(e)
                continue
            at.append(i)
            ops.append(O.Forget(mid, actor=a.agent, reason=a.reason, erase="fact"))
            facts.append(fact)
        if not ops:
            return
        for i, fact, r in zip(at, facts, self.rt.batch(ops, return_errors=True)):
            if isinstance(r, MemactorsError):
                res.errors[i] = error_string(r)
                continue
            self._facts.pop(fact, None)
            res.info["forgotten"] = res.info.get("forgotten", 0) + 1

    def _check_write(self, actor: str, scope: str) -> None:
        if not any(g["write"] and parse_scope(g["scope"]).is_ancestor_or_self(parse_scope(scope))
                   for g in self.rt.grants(actor)):
            raise AccessDenied("no write grant covers this scope")

    def sweep(self, now_us: int) -> dict | None:
        if now_us > self.clock.now_us():
            self.clock.set(now_us)
        r = self.rt.gc()
        return {f"gc_{rule}": n for rule, n in (r.by_rule or {}).items()}

    def storage_paths(self) -> list[str]:
        self.rt.flush()
        return [self.rt.data_dir]

    def counts(self) -> dict[str, dict[str, int]]:
        calls, rt = self.rt._calls, self.rt  # noqa: SLF001 - the same narrow reads rt.stats() makes, without its walk
        rt.flush()  # L2 as of now (the runner does not time this call)
        l2 = calls.get(rt._owners[0].l2_counts.remote(self.clock.now_us()))  # noqa: SLF001
        working = sum(o["working_items"] for o in calls.get([o.stats.remote() for o in rt._owners]))  # noqa: SLF001
        return {"vault": dict(l2.get("by_status", {})), "working": {"live": working}}

    def close(self) -> None:
        if self.rt is not None:
            self.rt.close()
            self.rt = None


def _norm(scope: str) -> str:
    try:
        return str(parse_scope(scope))
    except MemactorsError:
        return scope


def _merge(base: dict, extra: dict) -> dict:
    out = {k: dict(v) if isinstance(v, dict) else v for k, v in base.items()}
    for k, v in extra.items():
        out[k] = {**out.get(k, {}), **v} if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


register_backend("memactors", lambda workdir: MemactorsBackend(workdir))
