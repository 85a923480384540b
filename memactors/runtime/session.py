"""Sessions: the hooks of the agent loop over L0, L1 and L2 (DESIGN section 2), and ``Tick``.

``rt.session(scope, actor=..., task_id=..., goal=...)`` returns a ``Session`` bound to one scope
and task:

- ``start()``: fills L0 (goal, plan, constraints: each written through the gate to L1) and
  pushes (push recall at ``[recall].push_threshold``, above the pull threshold);
- ``observe(source, content, importance=..., critical=False)``: into L0 and, through the gate,
  into the scope's L1 working pool. Observations are buffered and written in one batch at the
  next hook that needs them (``before_llm``, ``before_tool``, ``end_turn``...);
- ``before_llm()``: the rendered L0 plus the pushed memories, pushed again every
  ``push_refresh_turns`` turns, within a token budget (CJK-aware);
- ``before_tool(name, args)``: a pull recall for the tool call, returned as a ``ToolCall``
  handle; ``after_tool(call, outcome, cited=...)`` logs the action with what it depended on;
- ``end_turn()``: promotion L1 -> L2 by the rules of ``memactors.core.promotion`` (one
  ``PromoteOp`` per promoted item, its ledger event naming the item), then the next turn (a
  ledger mark, so a resumed session continues there even after turns that wrote nothing);
- ``complete(summary, outcome)``: everything checked first; then the session's end claimed at
  its owner (a session completed already, elsewhere too, refuses with ``SessionClosed``), the
  last promotion, the session's remaining L1 items released (one ledger event each, their
  history kept), the task's outcome as a vault memory derived from the session's items, and the
  session is closed.

L0 lives with the session (in the agent's process: it is rendered every turn); every change of
it is also a working-pool item whose ``session`` field (set by the runtime, never by a caller's
write) names the session, its actor and the item's place in L0, so ``Session.resume`` rebuilds
L0 from the ledger after a crash (from the session's own items only, for its own actor only),
and a killed owner rebuilds the working pool from the ledger. Text the gate held shows as
``HELD`` in every slot. A promoted item leaves L1 (its vault copy is what recall serves), and so
do the session's earlier items of the same fact. A session's items stay in L1 as long as the
session: until ``complete()``, or until it has been idle for ``[runtime].session_ttl_s`` (no new
item): then its handle refuses every hook with ``SessionExpired``, and ``resume`` finds nothing.

Batches: ``start_all``, ``flush_all``, ``recall_all``, ``end_turn_all`` and ``complete_all`` run
the hooks of many sessions at once (a simulation tick: one ``write_many``, one ``recall_many``,
one promotion call per owner); each hook of one session is the batch of one.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field, replace

import orjson

from ..core import promotion as P
from ..core import records as R
from ..core import validate as V
from ..core.budget import estimate_tokens, select
from ..core.errors import (AccessDenied, Blocked, InvalidRecord, MemactorsError, NotFound, PartialWrite, SessionClosed,
                           SessionExpired)
from ..core.idempotency import made_key_of, made_key_prefix
from ..core.l0 import ERASED, L0, Observation, check_source, quote
from ..core.ops import PromoteOp, StatusOp
from ..core.scopes import check_identifier, parse_scope
from ..core.versions import expired
from ..core.working import KEPT
from .actions import log_action, tool_call
from .arguments import typed_calls
from .session_items import HELD, SHOWN_SLOTS, place, read_back, record_marks, served, step_mark, turn_mark

# source label -> source kind: "user", "tool:search", "web:https-host" ... (or a kind's own name)
_KINDS = {"user": "user_stated", "task": "user_stated", "admin": "config_change", "config": "config_change",
          "tool": "tool", "web": "web", "document": "document", "doc": "document", "agent": "agent_inferred",
          "reasoning": "agent_inferred", "outcome": "task_outcome", "pattern": "pattern"}
RELEASED = "released: its session ended"  # the ledger's reason for an L1 item let go by complete()
ENDED_ELSEWHERE = ("this session was completed by another copy of it (a resumed one); nothing was written: "
                   "open a new one")


def source_kind(label: str) -> str:
    """The source kind of an observation's source label: its prefix before ':' ("tool:search"
    -> tool), or a source kind's own name. Raises InvalidRecord for anything else."""
    check_source(label)
    head = label.split(":", 1)[0].lower()
    if head in R.SOURCE_CONFIDENCE:
        return head
    if head in _KINDS:
        return _KINDS[head]
    raise InvalidRecord(f"an observation's source starts with one of {sorted(_KINDS)} or a source kind "
                        f"({', '.join(R.SOURCE_CONFIDENCE)}), e.g. 'tool:search'")


@dataclass(slots=True)
class Prompt:
    """What ``before_llm`` returns: the prompt text, its estimated tokens, and the memories it
    shows (``memory_ids``, from push recall ``recall_id``: cite what the model used)."""

    text: str
    tokens: int
    memory_ids: list[str] = field(default_factory=list)
    recall_id: str | None = None


@dataclass(slots=True)
class TurnResult:
    """What ``end_turn`` did: the turn that ended, the promotions (one result per promoted
    item) and, per rule, the items left in L1."""

    turn: int
    promoted: list[dict] = field(default_factory=list)
    kept: dict[str, int] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)


@dataclass(slots=True)
class _Pending:
    item: R.WriteRequest  # the write, its session field set
    obs: Observation | None  # what enters L0 once written (None: not an L0 observation)
    slot: str
    label: str


@typed_calls("session")
class Session:
    """One agent session bound to ``scope`` and ``task_id`` (see the module docstring). Build
    it with ``rt.session(...)``; not thread-safe (one agent loop drives it)."""

    def __init__(self, rt, scope: str, *, actor: str, task_id: str, goal: str, plan=(), constraints=(),
                 purpose: str = "task", _l0: L0 | None = None, _id: str | None = None) -> None:
        self._rt = rt
        self.scope = str(parse_scope(scope))
        self.actor = check_identifier(actor, "actor")
        self.task_id = check_identifier(task_id, "task_id")
        self.purpose = V.purpose(purpose)
        self.l0 = _l0 if _l0 is not None else L0.new(goal, plan, constraints)
        self.turn = 0
        self.started = _l0 is not None
        self.closed = False
        self.expired = False  # idle past [runtime].session_ttl_s: closed, and every hook says so
        self.errors: list[str] = []  # observations refused or blocked: "ErrorClass: message" / "blocked: tags"
        self.promoted: list[dict] = []
        self._pending: list[_Pending] = []
        self._history: list[P.Candidate] = []  # items already through promotion
        self._new: list[P.Candidate] = []  # items written, not yet through promotion
        self._items: list[str] = []  # every working item of the session, oldest first
        self._gone: set[str] = set()  # items of it out of L1 already (promoted, or of a promoted fact)
        self._goal_id: str | None = None  # its goal item: releasing it is what ends the session
        self._shown: dict[str, tuple[str, str]] = {}  # id -> (slot, text) of its goal, plan, constraint, note items
        self._steps: dict[str, int] = {}  # id -> place in the plan of its step items, in the order written
        self._plan_ids: dict[int, str] = {}  # place in the plan -> the id of its plan item
        self._step_at: int | None = None  # the place its last advance() recorded (the step mark)
        self.id = _id or uuid.uuid4().hex  # the session's id in its items' session field
        self._claim = f"{made_key_prefix()}-1"  # this object's claim of the session's end (a made key: not screened)
        self._pushed = None
        self._pushed_turn = 0
        # The pushed memories the last prompt showed (its budget may leave some out); None: no prompt
        # since the push (the caller shows the push as start() returned it, every hit)
        self._in_prompt: list[str] | None = None
        self._pushed_grants = -1
        self._active_us = rt.clock.now_us()  # when it last wrote: the working pool ages it from then
        if _l0 is None:
            self._gate_scaffold()

    # --- the hooks -----------------------------------------------------------------------

    def start(self):
        """Fill L0 and push: returns the push recall's result (``RecallResult``)."""
        return start_all(self._rt, [self])[0]

    def observe(self, source: str, content: str, *, importance: float = 0.5, critical: bool = False,
                subject: str | None = None, predicate: str | None = None, object: str | None = None,
                ttl_days: float | None = None, category: str | None = None) -> None:
        """Something the agent saw: into L0 (recent observations, critical ones kept first) and,
        through the gate, into the working pool (written at the next hook that needs it).
        ``source``: "user", "tool:NAME", "web", "document", "agent" (reasoning), "admin" or a
        source kind. Structured fields and ``category`` (e.g. preference, instruction) are what
        promotion reads; ``ttl_days`` a hard TTL that promotion never extends. Bad input raises
        a ValidationError now; nothing is buffered for it."""
        self._check_open()
        kind = source_kind(source)
        if not isinstance(critical, bool):
            raise InvalidRecord("critical must be true or false")
        slot = "reasoning" if kind in P.REASONING_SOURCES else "observation"
        item = self._item(content, kind, slot, 0, critical, source, importance=importance, subject=subject,
                          predicate=predicate, object=object, ttl_days=ttl_days,
                          category="default" if category is None else category)
        self._pending.append(_Pending(item, Observation(source, content, float(item.importance), critical,
                                                         self.turn), slot, source))

    def note(self, text: str) -> None:
        """Append to the scratchpad (L0 keeps the last 500 characters; L1 keeps the note)."""
        self._check_open()
        self._pending.append(_Pending(self._item(text, "agent_inferred", "scratchpad", 0, False, "agent"), None,
                                      "scratchpad", "agent"))

    def advance(self, steps: int = 1) -> None:
        """Move to a later step of the plan (recorded in L1, so a resumed session knows it)."""
        self._check_open()
        self.l0.advance(steps)
        if self.l0.current_step is not None:
            self._step_at = self.l0.step
            record_marks(self._rt, [self], step_mark, self.l0.step, "step")
            # a copy of its plan item's text: erasing either erases both (core.erasure); the place
            # is the step mark's, so an erased step text does not take the session back
            plan_id = self._plan_ids.get(self.l0.step)
            self._pending.append(_Pending(self._item(self.l0.current_step, "user_stated", "step", self.l0.step, False,
                                                     "task", copy_of=[plan_id] if plan_id else None),
                                          None, "step", "task"))

    def before_llm(self, token_budget: int | None = None) -> Prompt:
        """The rendered L0 and the pushed memories (pushed again once ``push_refresh_turns``
        turns have passed). Within ``token_budget`` (None: L0 whole, memories within
        ``[recall].push_token_budget``) L0 keeps goal, step and constraints, then critical
        observations; memories take what is left."""
        self._check_open()
        V.integer(token_budget, "token_budget", 1, R.MAX_TOKEN_BUDGET, allow_none=True)
        self._drop_erased()  # first: a session completed elsewhere writes nothing more
        flush_all(self._rt, [self])
        k = self._rt.config.recall.push_refresh_turns
        fresh = self._pushed is None or self.turn - self._pushed_turn >= k
        if fresh:
            self._set_push(_run_pushes(self._rt, [self])[0])
        else:
            self._rt._sync_grants()  # noqa: SLF001 - a grant revoked or a clearance lowered since the push
            if self._rt._grant_seq != self._pushed_grants:  # noqa: SLF001
                # Pushed again under the grants as they are now; refused (no read grant left), what
                # was pushed before is dropped first and the refusal raised, as a first push's is.
                fresh, self._pushed = True, None
                self._set_push(_run_pushes(self._rt, [self])[0])
        return self._render(token_budget)

    def _drop_erased(self) -> None:
        """What was erased since it entered this session's prompt (an L0 observation, a pushed
        memory), or is past its hard TTL (an observation, a note), leaves it: a forget by anyone,
        asked of the ledger in one call (a push made after it needs no check: recall never
        returns an erased memory). The same call finds a session completed by another copy of
        it (its goal item released): SessionClosed."""
        pushed = [h.memory_id for h in self._pushed.hits] if self._pushed is not None else []
        ids = sorted({o.memory_id for o in self.l0.observations if o.memory_id} | set(pushed) | set(self._shown))
        if not ids:
            return
        now = self._rt._calls.get(self._rt._ledger.history_call.remote("now_and_then", ids, None))  # noqa: SLF001
        _refuse_ended([self], now)
        gone = {m for m in ids if (now.get(m) or (None,))[0] is None}
        # A pushed memory that recall no longer serves (superseded by a newer version, past its hard
        # TTL, archived, held) leaves too: the prompt never shows an old value as the current one.
        t = self._rt.clock.now_us()
        gone |= {m for m in pushed if m not in gone and not served(now[m][0], t)}
        # An observation or note past its hard TTL leaves as its L1 item leaves recall (whatever its
        # status: a promoted item is superseded, yet its observation stays shown until then).
        l0 = {o.memory_id for o in self.l0.observations if o.memory_id} | {m for m, _ in self.l0.notes}
        gone |= {m for m in l0 - gone if now[m][0] is not None and expired(now[m][0], t)}
        if gone:
            self.l0.drop(gone)  # observations and notes, by their items
            for m in gone & self._shown.keys():
                slot, text = self._shown.pop(m)
                if slot not in ("scratchpad", "step"):
                    self.l0.erase(slot, text)
            if gone & self._steps.keys():
                self._steps = {m: n for m, n in self._steps.items() if m not in gone}
                self.l0.step = place(self._steps, self.l0.plan, self._step_at)
            if gone & set(pushed):
                self._pushed.hits = [h for h in self._pushed.hits if h.memory_id not in gone]

    def before_tool(self, name: str, args: object = None, *, top_k: int | None = None):
        """A pull recall for a tool call: the tool's name and its arguments (rendered with
        sorted keys) are the query; the session's scope (and its ancestors) are visible.
        Returns a ``ToolCall`` (``memactors.runtime.actions``): the recall's result, and the
        handle to pass back with the tool's outcome (``after_tool``; or use it as a context
        manager), so the evidence log links the action to the memories it was shown."""
        self._check_open()
        V.text(name, "tool name", 256)
        query = f"{name}: {_render_args(args)}" if args is not None else name
        # Of the push, what the model was shown: the memories the last prompt held, not every hit.
        pushed = self._pushed
        if pushed is not None and self._in_prompt is not None:
            hits = [h for h in pushed.hits if h.memory_id in set(self._in_prompt)]
            pushed = replace(pushed, hits=hits) if hits else None
        return tool_call(self, name, self.recall(query, top_k=top_k), pushed, self._rt.clock.now_us())

    def after_tool(self, call, outcome: str = "ok", *, cited: list[str] | None = None) -> dict:
        """The tool of ``call`` (what ``before_tool`` returned) finished with ``outcome`` (an
        identifier: "ok", "error", "refused", ...): the action is logged with the recalls made
        for it and the memories they returned; ``cited``: those the model used (marked on their
        recalls). ``rt.audit.actions(memory_id)`` then finds it. Returns the logged row."""
        self._check_open()
        return log_action(self._rt, self, call, outcome, cited)

    def recall(self, query: str, *, allowed_scopes: list[str] | None = None, top_k: int | None = None):
        """A pull recall through the session (its actor, task and purpose); the session's own
        observations are written first, so it sees them."""
        self._check_open()
        out = recall_all(self._rt, [(self, query, allowed_scopes, top_k)])[0]
        if isinstance(out, MemactorsError):
            raise out
        return out

    def retrieve(self, retriever, query: str | None = None, *, top_k: int | None = None):
        """L3 recall through the session (``rt.retrieve``): ``query`` defaults to the focus
        (goal and current step). Results are never stored; observe one to keep it in L1."""
        self._check_open()
        return self._rt.retrieve(retriever, query if query is not None else self.l0.focus(), actor=self.actor,
                                 task_id=self.task_id, allowed_scopes=[self.scope], purpose=self.purpose,
                                 top_k=self._rt.config.recall.default_top_k if top_k is None else top_k)

    def cite(self, recall_id: str, memory_ids: list[str]) -> int:
        """Mark which hits the model used (resets their uncited run: see demotion)."""
        return self._rt.mark_cited(recall_id, memory_ids, actor=self.actor)

    def end_turn(self) -> TurnResult:
        """Write what is pending, promote what the rules say (L1 -> L2), start the next turn.
        A session completed by another copy of it (a resumed one) raises SessionClosed."""
        self._check_open()
        if _ended_elsewhere([self], rt=self._rt):
            raise SessionClosed(ENDED_ELSEWHERE)
        return _end_turns(self._rt, [self])[0]

    def complete(self, summary: str = "", outcome: str = "success") -> dict:
        """End the task: the last promotion, the session's remaining L1 items released (ledger
        events; their history kept), the outcome (with ``summary``, if any) written to the vault
        as a ``task_outcome`` memory derived from the session's items, the session closed. Bad
        input raises a ValidationError before anything changes; a session completed already
        (by another process too) raises ``SessionClosed``. Returns {"turn": TurnResult,
        "outcome": WriteResult or a typed error}."""
        self._check_open()
        out = complete_all(self._rt, [(self, summary, outcome)])[0]
        res = out["outcome"]
        unclaimed = not self.closed or self._goal_id is None or isinstance(res, SessionClosed)
        if isinstance(res, MemactorsError) and unclaimed:
            raise res  # the session's end was not claimed: nothing changed
        return out

    @property
    def pending(self) -> int:
        return len(self._pending)

    # --- recovery ------------------------------------------------------------------------

    @classmethod
    def resume(cls, rt, scope: str, *, actor: str, task_id: str, purpose: str = "task") -> Session:
        """The session of ``task_id`` in ``scope`` rebuilt from the ledger: L0 (goal, plan and
        step, constraints, recent observations, scratchpad) and the turn it was in, from the
        items the session itself wrote (the runtime's ``session`` field; the newest session of
        the task if there were several). Only the session's own actor resumes it (anyone else:
        AccessDenied). A completed session raises ``SessionClosed``; none there, or one idle for
        longer than ``[runtime].session_ttl_s``, NotFound."""
        scope = str(parse_scope(scope))
        check_identifier(actor, "actor")
        check_identifier(task_id, "task_id")
        V.purpose(purpose)
        runs: dict[str, list[dict]] = {}  # session id -> its items, in the order written
        for r in rt._session_items(scope, actor):
            if r["session"]["task"] == task_id:
                runs.setdefault(r["session"]["id"], []).append(r)
        goals = {sid: next((r for r in rs if r["session"]["slot"] == "goal"), None) for sid, rs in runs.items()}
        mine = [sid for sid, g in goals.items() if g is not None and g["session"]["actor"] == actor]
        if not mine:
            if any(goals.values()):
                raise AccessDenied("this task's session belongs to another actor: only its own actor resumes it")
            raise NotFound("no session of this task in this scope")
        sid = mine[-1]
        goal, items = goals[sid], [r for r in runs[sid] if r["session"]["actor"] == actor]
        if goal["status"] not in R.LIVE:
            raise SessionClosed("this session was completed: start a new one")
        if max(r["created_at"] for r in items) < rt.clock.now_us() - int(rt.config.runtime.session_ttl_s * 1e6):
            raise NotFound("no session of this task in this scope: it was idle for longer than "
                           "[runtime].session_ttl_s and was let go")
        # Each step in its place: an erased one (gone from the ledger) reads ERASED, as it did in the
        # live session, so the current step (a place in the plan) is still the one it was.
        steps = {r["session"]["n"]: r["content"] for r in items if r["session"]["slot"] == "plan"}
        marked = rt._calls.get(rt._ledger.mark_of.remote(step_mark(sid)))  # noqa: SLF001
        last = max([*steps, *(r["session"]["n"] for r in items if r["session"]["slot"] == "step"), marked or 0])
        plan = [steps.get(i, ERASED) for i in range(last + 1)] if steps or marked else []
        l0 = L0(goal["content"], plan)
        s = cls(rt, scope, actor=actor, task_id=task_id, goal=goal["content"], purpose=purpose, _l0=l0, _id=sid)
        s._goal_id = goal["memory_id"]
        s._active_us = max(r["created_at"] for r in items)
        # The turn the live session was at: its turn mark (an ended turn may have written no item),
        # else (a session from before turn marks) the turn of its newest item.
        ended = rt._calls.get(rt._ledger.mark_of.remote(turn_mark(sid)))  # noqa: SLF001
        s.turn = max([r["session"]["turn"] for r in items] + [ended or 0])
        read_back(s, items, rt.gate)
        s._step_at = marked
        l0.step = place(s._steps, plan, marked)
        return s

    # --- internals -----------------------------------------------------------------------

    def _check_open(self) -> None:
        self._rt._check_open()  # noqa: SLF001 - a closed runtime refuses every hook (RuntimeClosed), buffered ones too
        if self.started and not self.closed and (
                self._rt.clock.now_us() - self._active_us > self._rt.config.runtime.session_ttl_s * 1e6):
            self.closed = self.expired = True  # the working pool has let its items go: nothing to go on from
        if self.expired:
            raise SessionExpired("this session wrote nothing for longer than [runtime].session_ttl_s and was let "
                                 "go; start a new one")
        if self.closed:
            raise SessionClosed("this session was completed; open a new one")

    def _item(self, text: object, kind: str, slot: str, n: int, critical: bool, label: str,
              copy_of: list[str] | None = None, **kw) -> R.WriteRequest:
        """A working-pool write of this session (a typed error now, for bad input, before anything
        is buffered), its ``session`` field naming the session and the item's place in L0."""
        from ..core.lifecycle import ttl_policy

        # Built whole and validated once (the keywords are ours, all of them fields): the checks run
        # in the order they always did, the session field's last, so a bad input's error is the same.
        # Its idempotency key its own, now: a resubmission after a PartialWrite writes once.
        req = R.WriteRequest(scope=self.scope, text=text, actor=self.actor, source=kind, pool="working",
                             source_id=label, idempotency_key=f"{made_key_prefix()}-0", copy_of=copy_of,
                             session={"id": self.id, "task": self.task_id, "actor": self.actor, "turn": self.turn,
                                      "slot": slot, "n": n, "critical": critical}, **kw).validate()
        ttl_policy(req.category, req.ttl_days, req.soft_ttl_days, self._rt.config.lifecycle)
        return req

    def _gate_scaffold(self) -> None:
        """Goal, plan and constraints must pass the gate as they are (a key or an injected
        instruction in them refuses the session); L0 shows them as L1 will keep them."""
        gate = self._rt.gate

        def kept(text: str, what: str) -> str:
            rep = gate.scan(text, "user_stated")
            if rep.decision in ("blocked", "pending"):
                raise InvalidRecord(f"the session's {what} did not pass the write gate ({rep.decision}: "
                                    f"{', '.join(rep.tags) or 'no tags'})")
            return rep.text

        self.l0.goal = kept(self.l0.goal, "goal")
        self.l0.plan = [kept(s, f"plan step {i + 1}") for i, s in enumerate(self.l0.plan)]
        self.l0.constraints = [kept(c, f"constraint {i + 1}") for i, c in enumerate(self.l0.constraints)]

    def _scaffold_items(self) -> list[_Pending]:
        out = [_Pending(self._item(self.l0.goal, "user_stated", "goal", 0, False, "task"), None, "goal", "task")]
        out += [_Pending(self._item(s, "user_stated", "plan", i, False, "task"), None, "plan", "task")
                for i, s in enumerate(self.l0.plan)]
        out += [_Pending(self._item(c, "user_stated", "constraint", i, True, "task", category="instruction"), None,
                         "constraint", "task") for i, c in enumerate(self.l0.constraints)]
        return out

    def _written(self, p: _Pending, res) -> None:
        """One buffered write came back: into L0 (as the gate left it) and the promotion queue."""
        if isinstance(res, MemactorsError):
            self.errors.append(f"{type(res).__name__}: {res}")
            return
        if res.decision == R.BLOCKED or res.memory_id is None:
            self.errors.append(f"blocked: {', '.join(res.gate.get('tags', [])) or 'by the write gate'}")
            return
        self._items.append(res.memory_id)
        self._active_us = max(self._active_us, self._rt.clock.now_us())
        if p.slot == "goal":
            self._goal_id = res.memory_id
        elif p.slot == "step":
            self._steps[res.memory_id] = p.item.session["n"]
        elif p.slot == "plan":
            self._plan_ids[p.item.session["n"]] = res.memory_id
        shown = HELD if res.status == "pending" else self._stored_text(p, res)
        if p.slot in SHOWN_SLOTS:
            self._shown[res.memory_id] = (p.slot, shown)
        if p.slot == "scratchpad":
            self.l0.note(shown, res.memory_id)
        if p.obs is not None:
            self.l0.observe(Observation(p.obs.source, shown, p.obs.importance, p.obs.critical, p.obs.turn,
                                        memory_id=res.memory_id))
        if p.slot not in ("goal", "plan", "step"):
            it = p.item
            self._new.append(P.Candidate(
                res.memory_id, self._stored_text(p, res), it.source, p.obs.turn if p.obs else self.turn, p.slot,
                it.subject, it.predicate, it.object, it.category, res.decision, tuple(res.gate.get("tags", ())),
                res.status or "active"))

    def _stored_text(self, p: _Pending, res) -> str:
        if res.decision != R.REDACTED:
            return p.item.text
        return self._rt.gate.scan(p.item.text, p.item.source).text  # the same gate, the same text

    def _set_push(self, res) -> None:
        self._pushed, self._pushed_turn, self._in_prompt = res, self.turn, None
        self._pushed_grants = self._rt._grant_seq  # noqa: SLF001 - the grants it was pushed under

    def _render(self, token_budget: int | None) -> Prompt:
        rc = self._rt.config.recall
        l0_text = self.l0.to_prompt(token_budget)
        hits = list(self._pushed.hits) if self._pushed is not None else []
        if hits:  # nor a copy of one (what a resumed session promoted before: ids it no longer knows)
            own = self.l0.texts()
            hits = [h for h in hits if h.content not in own]
        budget = rc.push_token_budget if token_budget is None else max(0, token_budget - estimate_tokens(l0_text) - 4)
        # Each memory costs what it takes as shown (quoted: its line breaks indented), not its bare text.
        chosen, _ = select([{"content": quote(h.content), "hit": h} for h in hits], max_items=rc.push_max_items,
                           token_budget=budget)

        def render(chosen: list[dict]) -> str:
            return l0_text + ("\n## Memories\n" + "\n".join(f"- {c['content']}" for c in chosen) if chosen else "")

        text = render(chosen)
        while chosen and token_budget is not None and estimate_tokens(text) > token_budget:
            chosen = chosen[:-1]  # never over the budget for a memory (L0's own slots may be, when it is too small)
            text = render(chosen)
        self._in_prompt = [c["hit"].memory_id for c in chosen]
        return Prompt(text, estimate_tokens(text), list(self._in_prompt),
                      self._pushed.recall_id if self._pushed is not None else None)


# --- batches: many sessions' hooks at once -----------------------------------------------------

def _sessions(sessions, call: str) -> list[Session]:
    """A batch helper's sessions, each a ``Session`` and in it once: a bad list is refused before
    any of them changes."""
    if not isinstance(sessions, (list, tuple)) or not all(isinstance(s, Session) for s in sessions):
        raise InvalidRecord(f"{call} takes a list of sessions")
    if len({id(s) for s in sessions}) != len(sessions):
        raise InvalidRecord(f"a session is in this {call} batch twice")
    return list(sessions)


def start_all(rt, sessions: list[Session]) -> list:
    """``start()`` of many sessions: their goals, plans and constraints in one write, their
    pushes in one batch of recalls. Returns the push results in order. Every session is checked
    before any is started (one started already refuses the batch and leaves the others as they were)."""
    sessions = _sessions(sessions, "start_all")
    for s in sessions:
        s._check_open()
        if s.started:
            raise InvalidRecord(f"session {s.task_id} was started already")
    for s in sessions:
        s._pending[:0] = s._scaffold_items()
        s.started = True
    flush_all(rt, sessions)
    pushes = _run_pushes(rt, sessions, return_errors=len(sessions) > 1)
    for s, res in zip(sessions, pushes):
        if isinstance(res, MemactorsError):
            s.errors.append(f"{type(res).__name__}: {res}")
        else:
            s._set_push(res)
    return pushes


def flush_all(rt, sessions: list[Session], extra: list[dict] = ()) -> list:
    """Every pending observation of these sessions in one ``write_many`` (through the gate, to
    the working pool); each result lands in its session's L0 and promotion queue. A refused
    item is recorded in ``session.errors``; the others are written. ``extra``: other writes
    (``write_many`` items) sent in the same batch; returns their results (or typed errors)."""
    owners = [(s, p) for s in _sessions(sessions, "flush_all") for p in s._pending]
    if not owners and not extra:
        return []
    for s in sessions:
        s._pending = []
    try:
        results = rt._write_many([p.item for _, p in owners] + list(extra), True, sessions=True)
    except PartialWrite as exc:
        # What was confirmed lands; the rest goes back to its session's buffer, for the next hook
        # (each item's idempotency key makes that resubmission safe).
        for (s, p), res in zip(owners, exc.results):
            if res is None:
                s._pending.append(p)
            else:
                s._written(p, res)
        raise
    except BaseException:  # nothing written (a closed runtime, the ledger down...): nothing lost either
        for s in sessions:
            s._pending = [p for o, p in owners if o is s] + s._pending
        raise
    for (s, p), res in zip(owners, results):
        s._written(p, res)
    return results[len(owners):]


def recall_all(rt, asks: list[tuple]) -> list:
    """Pull recalls through many sessions in one ``recall_many``: ``asks`` holds (session, query,
    allowed_scopes or None for the session's scope, top_k or None). Pending observations are
    written first. A refused request gets its typed error in place of its result."""
    if not isinstance(asks, (list, tuple)) or not all(
            isinstance(a, tuple) and len(a) == 4 and isinstance(a[0], Session) for a in asks):
        raise InvalidRecord("recall_all takes a list of (session, query, allowed_scopes, top_k)")
    flush_all(rt, list({id(s): s for s, *_ in asks}.values()))
    reqs = []
    for s, query, allowed, top_k in asks:
        reqs.append({"query": query, "actor": s.actor, "task_id": s.task_id, "purpose": s.purpose,
                     "allowed_scopes": allowed if allowed is not None else [s.scope],  # checked there
                     "top_k": top_k if top_k is not None else rt.config.recall.default_top_k})
    return rt.recall_many(reqs, return_errors=True)


def _ended_elsewhere(sessions: list[Session], now: dict | None = None, rt=None) -> list[Session]:
    """Those of these sessions completed by another copy of them (a resumed one, in another
    process too): their goal item released (``now``: the ledger's records by id, else asked of
    ``rt`` in one call). Each is closed, so none of its hooks writes or promotes anything more."""
    if now is None:  # the goals released: one query of clear columns (a fold unseals every event)
        goals = [s._goal_id for s in sessions if s._goal_id is not None]
        ask = rt._ledger.let_go.remote(goals, RELEASED) if goals else None  # noqa: SLF001
        gone = set(rt._calls.get(ask)) if ask is not None else set()  # noqa: SLF001
        ended = [s for s in sessions if s._goal_id in gone]
    else:
        ended = [s for s in sessions if s._goal_id is not None
                 and (now.get(s._goal_id) or (None,))[0] is not None and now[s._goal_id][0]["status"] not in KEPT]
    for s in ended:
        s.closed = True
        s._pushed = None
    return ended


def _refuse_ended(sessions: list[Session], now: dict) -> None:
    if _ended_elsewhere(sessions, now):
        raise SessionClosed(ENDED_ELSEWHERE)


def end_turn_all(rt, sessions: list[Session]) -> list[TurnResult]:
    """``end_turn()`` of many sessions: pending writes in one batch, promotions by rule in one
    call per owner (each promoted item leaves L1; so do the session's earlier items of the same
    fact, in a second call when there are any), each session on to its next turn. A session
    completed by another copy of it (a resumed one) is closed and left out: nothing of it is
    written, its result names the SessionClosed."""
    sessions = _sessions(sessions, "end_turn_all")
    ended = {id(s) for s in _ended_elsewhere(sessions, rt=rt)}
    done = iter(_end_turns(rt, [s for s in sessions if id(s) not in ended]))
    return [TurnResult(s.turn, errors=[f"SessionClosed: {ENDED_ELSEWHERE}"]) if id(s) in ended else next(done)
            for s in sessions]


def _end_turns(rt, sessions: list[Session], record: bool = True) -> list[TurnResult]:
    flush_all(rt, sessions)
    min_turns = rt.config.lifecycle.promote_min_turns
    ops, whose, out = [], [], []
    for s in sessions:
        tr = TurnResult(s.turn)
        for v in P.decide(s._new, s._history, min_turns=min_turns):
            if v.promote:
                ops.append(PromoteOp(v.memory_id, s.actor, v.rule, v.category, made_key_of(f"promote-{v.memory_id}")))
                whose.append((s, tr))
            else:
                tr.kept[v.rule] = tr.kept.get(v.rule, 0) + 1
        s._history += s._new
        s._new = []
        out.append(tr)
    same = []  # the sessions' other L1 items of each promoted fact: their vault copy is the one recalled
    for (s, tr), res in zip(whose, rt._submit_by_memory(ops) if ops else []):
        if isinstance(res, MemactorsError):
            tr.errors.append(f"{type(res).__name__}: {res}")
            continue
        tr.promoted.append(res)
        src = res["promoted_from"]
        s._gone.add(src)
        key = next(P.fact_key(c) for c in s._history if c.memory_id == src)
        for c in s._history:
            if c.memory_id not in s._gone and P.refusal(c) is None and P.fact_key(c) == key:
                s._gone.add(c.memory_id)
                same.append((s, StatusOp(c.memory_id, "superseded", s.actor, f"the same fact was promoted from {src}",
                                         f"same-{c.memory_id}", folded_into=res.get("memory_id"))))
    _submit_quietly(rt, same)
    if record:  # not at complete(): a completed session is never resumed
        _record_turns(rt, sessions)
    for s, tr in zip(sessions, out):
        s.promoted += tr.promoted
        s.errors += tr.errors
        s.turn += 1
    return out


def _record_turns(rt, sessions: list[Session]) -> None:
    """Each session's next turn as a ledger mark (one call for the batch). A turn that observed
    nothing writes no item, so without it a resumed session would restart at its newest item's
    turn and count a fact seen again as seen in that turn. A failure lands in ``errors``: the
    turn has ended (its promotions are made), only a resume would see an earlier one."""
    record_marks(rt, sessions, turn_mark, None, "turn")


def _submit_quietly(rt, asks: list[tuple]) -> None:
    """(session, op) pairs on the one change path; an error lands in its session's errors (an
    item gone already is no error: it is out of L1 either way)."""
    for (s, _), res in zip(asks, rt._submit_by_memory([op for _, op in asks]) if asks else []):
        if isinstance(res, MemactorsError) and not isinstance(res, NotFound):
            s.errors.append(f"{type(res).__name__}: {res}")


def complete_all(rt, asks: list[tuple]) -> list[dict]:
    """``complete()`` of many sessions (``asks``: (session, summary, outcome)). Everything is
    checked first (a bad ask raises a ValidationError, and nothing of the batch changes); then
    each session's end is claimed at its owner (its goal item released: one completed already,
    by another process too, gets ``SessionClosed`` as its outcome and nothing else), its last
    promotions run, its remaining L1 items are released (a ledger event each, history kept)
    and the outcomes written in one batch. Returns {"turn", "outcome"} per ask, in order."""
    from ..core.lifecycle import ttl_policy

    if not isinstance(asks, (list, tuple)):
        raise InvalidRecord("complete_all takes a list of (session, summary, outcome)")
    reqs, seen = [], set()
    for ask in asks:
        if not (isinstance(ask, tuple) and len(ask) == 3 and isinstance(ask[0], Session)):
            raise InvalidRecord("complete_all takes a list of (session, summary, outcome)")
        s, summary, outcome = ask
        s._check_open()
        if id(s) in seen:
            raise InvalidRecord("a session is completed once: it is twice in this batch")
        seen.add(id(s))
        head = f"Task {s.task_id} ended ({check_identifier(outcome, 'outcome')})"
        V.text(summary, "summary", R.MAX_CONTENT_CHARS - len(head) - 2, allow_blank=True)
        text = head + (f": {summary}" if summary else ".")
        req = R.write_request(dict(scope=s.scope, text=text, actor=s.actor, source="task_outcome",
                                   category="task_learning", importance=0.6,
                                   idempotency_key=made_key_of(f"outcome-{s.id}")))
        ttl_policy(req.category, req.ttl_days, req.soft_ttl_days, rt.config.lifecycle)
        rep = rt.gate.scan(text, "task_outcome")
        if rep.decision == R.BLOCKED:  # a summary that could never be written: refused before the end is claimed
            raise Blocked("the write gate blocks this summary (err.gate names the rules); the session is still "
                          "open: complete it with another summary", gate=rep.summary())
        reqs.append(req)
    sessions = [s for s, _, _ in asks]
    out = [{"turn": TurnResult(s.turn), "outcome": None} for s in sessions]
    started = [i for i, s in enumerate(sessions) if s._goal_id is not None]
    for i in set(range(len(sessions))) - set(started):  # its start was refused (or never made): nothing to end
        sessions[i].closed = True
        out[i]["outcome"] = InvalidRecord("this session has no goal item (never started, or its start was "
                                          "refused): there is nothing to complete")
    claims = [StatusOp(sessions[i]._goal_id, "evicted", sessions[i].actor, RELEASED, sessions[i]._claim)
              for i in started]
    ended = []
    for i, res in zip(started, rt._submit_by_memory(claims) if claims else []):
        s = sessions[i]
        if isinstance(res, NotFound) and (refused := _may_write(rt, s)) is not None:
            res = refused  # its write grant went since the start: the owner answers as for an unknown id; still open
        elif isinstance(res, NotFound):  # its goal is out of L1: completed already (or erased)
            s.closed = True
            res = SessionClosed("this session was completed already, or its goal was erased; nothing was changed")
        if isinstance(res, MemactorsError):
            out[i]["outcome"] = res
        else:
            s._gone.add(s._goal_id)
            ended.append(i)
    for i, tr in zip(ended, _end_turns(rt, [sessions[i] for i in ended], record=False)):
        out[i]["turn"] = tr
    _submit_quietly(rt, [(sessions[i], StatusOp(m, "evicted", sessions[i].actor, RELEASED, made_key_of(f"release-{m}")))
                         for i in ended for m in sessions[i]._items if m not in sessions[i]._gone])
    # The outcome derives from the session's items, those erased meanwhile left out (one query)
    items = sorted({m for i in ended for m in sessions[i]._items[-R.MAX_DERIVED_FROM:]})
    erased = set(rt._calls.get(rt._ledger.let_go.remote(items, None))) if items else set()  # noqa: SLF001
    for i in ended:
        reqs[i].derived_from = sorted(set(sessions[i]._items[-R.MAX_DERIVED_FROM:]) - erased) or None
    for i, res in zip(ended, rt._write_many([reqs[i] for i in ended], True, sessions=True) if ended else []):
        out[i]["outcome"] = res
        sessions[i].closed = True
        sessions[i]._pushed = None
    return out


def _may_write(rt, s: Session) -> MemactorsError | None:
    """Why ``s``'s actor may not write its scope now, or None: what a claim answered NotFound
    means when it is not None (an owner answers a claim on a scope the actor cannot read as
    for an unknown id; read as "completed already", it closed the session for good). One that
    may still read is refused by the owner itself, with AccessDenied."""
    try:
        rt._check_write([(s.actor, parse_scope(s.scope))])  # noqa: SLF001
    except MemactorsError as exc:
        return exc
    return None


def _run_pushes(rt, sessions: list[Session], return_errors: bool = False) -> list:
    """Push recalls for these sessions (their L0's focus), one batch, at the push threshold.
    With ``return_errors`` a refused push gets its typed error in place of its result."""
    rc = rt.config.recall
    plans = []
    for s in sessions:
        try:
            plan = rt._plan_recall(s.l0.focus(), s.actor, s.task_id, [s.scope], s.purpose, rc.push_max_items,
                                   rc.push_token_budget, rc.push_threshold, None, "push")
            # The session's own items are in L0 already: pushing them back would crowd out memories.
            plan.exclude = frozenset(s._items) | {p["memory_id"] for p in s.promoted}  # and their vault copies
            plan.owner_req["m"] += len(plan.exclude)
            plans.append(plan)
        except MemactorsError as exc:
            if not return_errors:
                raise
            plans.append(exc)
    out = rt._run_plans(plans)
    if not return_errors:
        for r in out:
            if isinstance(r, MemactorsError):
                raise r
    return out


def _render_args(args: object) -> str:
    """Tool arguments as query text: JSON with sorted keys (anything else as its str)."""
    if isinstance(args, str):
        return args[:R.MAX_CONTENT_CHARS - 300]
    try:
        return orjson.dumps(args, option=orjson.OPT_SORT_KEYS, default=str).decode()[:R.MAX_CONTENT_CHARS - 300]
    except TypeError:
        return str(args)[:R.MAX_CONTENT_CHARS - 300]
