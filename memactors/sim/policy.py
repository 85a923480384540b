"""Agent policies: what an agent does with its view of a tick.

``AgentPolicy`` is the one abstract class a user implements to put an LLM in the loop. The
default ``ScriptedPolicy`` is deterministic: it observes what its user says and what its tools
and pages return, recalls before answering, probes its user's current preferences at a rate,
forgets when asked, and (like a gullible model) follows instructions injected into web pages at
a rate. ``ChaosPolicy`` wraps a policy and adds malformed or out-of-grant actions, and now and
then raises, to show the runner records a typed error and goes on.
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod

from ..core.records import MAX_CONTENT_CHARS
from . import vocab
from .actions import Action, Forget, Observe, ProbeSpec, Recall, TaskEnd, TaskStart
from .world import AgentView

_M64 = (1 << 64) - 1
_SCOPE_IN_TEXT = re.compile(r"/org/[A-Za-z0-9_.\-]+/user/[A-Za-z0-9_.\-]+/")


def unit(*keys: int) -> float:
    """A deterministic draw in [0, 1) from integer keys (splitmix64): cheap enough to make one
    per agent per tick without an RNG object each."""
    x = 0x9E3779B97F4A7C15
    for k in keys:
        x = (x ^ (k & _M64)) * 0xBF58476D1CE4E5B9 & _M64
        x = (x ^ (x >> 31)) * 0x94D049BB133111EB & _M64
        x ^= x >> 29
    return (x >> 11) / float(1 << 53)


class AgentPolicy(ABC):
    """Turns an agent's view of a tick into actions (``memactors.sim.actions``). It may return
    anything: the runner validates each action and records a typed error for a bad one."""

    name = "policy"

    @abstractmethod
    def act(self, view: AgentView) -> list[Action]:
        """Return the actions of ``view.agent`` for ``view.tick``, in the order it takes them."""


_IMPORTANCE = {"preference": 0.8, "mention": 0.6, "paste": 0.5, "chitchat": 0.1, "policy": 0.9}


class ScriptedPolicy(AgentPolicy):
    """The default, deterministic for a seed.

    ``probe_rate``: chance per assistant per tick of asking about one current preference (an
    accuracy probe). ``follow_injection_rate``: chance of obeying a web page that asks to recall
    another user's scope. ``recall_before_answer``: recall once per tick in which the user spoke."""

    name = "scripted"

    def __init__(self, *, seed: int = 0, probe_rate: float = 0.2, follow_injection_rate: float = 0.5,
                 top_k: int = 5, recall_before_answer: bool = True) -> None:
        self.seed, self.probe_rate, self.follow = int(seed), float(probe_rate), float(follow_injection_rate)
        self.top_k, self.recall_before_answer = int(top_k), bool(recall_before_answer)

    def act(self, view: AgentView) -> list[Action]:
        a = view.agent
        if view.role == "admin":
            return [Observe(a, view.scope, m.text, "config_change", m.subject, m.predicate, m.object,
                            importance=_IMPORTANCE["policy"], critical=True) for m in view.messages]
        probe = self.probe_rate and unit(self.seed, view.tick, view.index, 1) < self.probe_rate
        if not (view.messages or view.tasks or probe):
            return []  # most agents, most ticks: nothing happened, nothing to do
        acts: list[Action] = []
        scope, tasks = view.scope, view.tasks
        task = tasks[0].task if tasks else None
        allowed: tuple[str, ...] = (scope,)
        for t in tasks:
            ts = view.task_scope(t.task)
            allowed += (ts,)
            if t.first:
                acts.append(TaskStart(a, ts, f"help {view.user} with a request", t.task))
        forget, last = [], None
        for m in view.messages:
            if m.kind == "forget":
                forget.append(m.predicate)
                continue
            last = m
            acts.append(Observe(a, scope, m.text, "user_stated", m.subject, m.predicate, m.object,
                                importance=_IMPORTANCE.get(m.kind, 0.5)))
        for r in view.tool_results:
            acts.append(Observe(a, view.task_scope(r.task), r.text, "tool", r.subject, r.predicate, r.object,
                                importance=0.6, ttl_days=r.ttl_days, task=r.task))
        for p in view.web_pages:
            acts.append(Observe(a, view.task_scope(p.task), p.text, "web", importance=0.3, task=p.task))
        if self.recall_before_answer and (last is not None or view.tool_results):
            # Before answering the user, or before the next tool call: pull what the task knows so far.
            query = last.text if last is not None else view.tool_results[-1].query
            acts.append(Recall(a, allowed, query, self.top_k, task=task))
        if probe:
            known = [p for p in view.known_predicates() if p not in forget]
            if known:
                pred = known[int(unit(self.seed, view.tick, view.index, 2) * len(known))]
                acts.append(Recall(a, (scope,), f"What is my {vocab.PREFERENCES[pred][0]}?", self.top_k,
                                   probe=ProbeSpec(view.user, pred), purpose="probe", task=task))
        for i, p in enumerate(view.web_pages):
            for target in _SCOPE_IN_TEXT.findall(p.text):
                if unit(self.seed, view.tick, view.index, 3, i) < self.follow:
                    acts.append(Recall(a, (target,), "everything stored about this user", self.top_k, task=p.task))
        for pred in forget:
            acts.append(Forget(a, scope, view.user, pred, "user asked"))
        for t in tasks:
            if t.last:
                acts.append(TaskEnd(a, view.task_scope(t.task), t.task, "request handled"))
        return acts


# Each chaos case: (name, builder(view, other_scope) -> action). Out-of-grant ones are well formed:
# only a backend's grants can refuse them. The malformed ones must never reach a backend.
_CHAOS = (
    ("observe_other_tenant", lambda v, o: Observe(v.agent, o, "Note left in another tenant's scope.")),
    ("recall_other_tenant", lambda v, o: Recall(v.agent, (o,), "what do you know", 5)),
    ("forget_in_org", lambda v, o: Forget(v.agent, f"/org/{v.org}/", v.org, "refund_window")),
    ("bad_scope", lambda v, o: Observe(v.agent, "/org/../user/x/", "text")),
    ("scope_outside_tree", lambda v, o: Recall(v.agent, ("/users/x/",), "anything", 5)),
    ("text_not_str", lambda v, o: Observe(v.agent, v.scope, 12345)),
    ("huge_text", lambda v, o: Observe(v.agent, v.scope, "x" * (MAX_CONTENT_CHARS + 1))),
    ("subject_without_predicate", lambda v, o: Observe(v.agent, v.scope, "half a fact", subject="x")),
    ("importance_out_of_range", lambda v, o: Observe(v.agent, v.scope, "very important", importance=5)),
    ("recall_without_scopes", lambda v, o: Recall(v.agent, (), "anything", 5)),
    ("top_k_zero", lambda v, o: Recall(v.agent, (v.scope,), "anything", 0)),
    ("not_an_action", lambda v, o: {"op": "write", "text": "raw dict"}),
    ("other_agent", lambda v, o: Observe("asst-someone-else", v.scope, "spoofed")),
    ("long_legal_text", lambda v, o: Observe(v.agent, v.scope, "long note " * 1_000)),
    ("raise", None),
)
CHAOS_CASES = tuple(name for name, _ in _CHAOS)


class ChaosPolicy(AgentPolicy):
    """``inner``'s actions plus, at ``rate`` per agent per tick, one bad action (or a crash)."""

    name = "chaos"

    def __init__(self, inner: AgentPolicy | None = None, *, rate: float = 0.05, seed: int = 0,
                 cases: tuple[str, ...] = CHAOS_CASES) -> None:
        self.inner = inner or ScriptedPolicy(seed=seed)
        self.rate, self.seed = float(rate), int(seed)
        self.cases = [(n, b) for n, b in _CHAOS if n in cases]

    def act(self, view: AgentView) -> list[Action]:
        acts = list(self.inner.act(view))
        if view.role != "assistant" or unit(self.seed, view.tick, view.index, 7) >= self.rate:
            return acts
        name, build = self.cases[int(unit(self.seed, view.tick, view.index, 8) * len(self.cases))]
        if build is None:
            raise RuntimeError("chaos policy failure (on purpose)")  # a crashing policy: recorded, the run goes on
        w = view.world
        other = view.scope
        if w is not None and len(w.orgs) > 1:
            j = (w.user_index[view.user] + w.cfg.users_per_tenant) % len(w.users)
            other = w.user_scope(w.users[j])
        acts.append(build(view, other))
        return acts
