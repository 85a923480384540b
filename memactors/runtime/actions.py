"""Action dependence (DESIGN section 5; seed 002's tool gateway records whether an action
depended on long-term memory): ``session.before_tool(name, args)`` returns a ``ToolCall``, the
pull recall made for that call and a handle; ``session.after_tool(call, outcome, cited=...)``
(or leaving ``with session.before_tool(...) as call:``) logs the action with the recalls shown
to the model for it (the tool's pull recall and the session's push) and the memories they
returned and the model cited. ``rt.audit.actions(memory_id)`` answers "which actions depended
on M", and a targeted rollback of M reports them as affected.

Logged: ids, the session's actor, task, purpose and scope, the tool's name (through the write
gate) and its outcome (an identifier). Never the tool's arguments, nor any content.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from ..core import records as R
from ..core import validate as V
from ..core.errors import InvalidRecord
from ..core.scopes import check_identifier
from ..gate.free_text import gated_text
from .results import RecallResult

MAX_TOOL_CHARS = 256


@dataclass(slots=True)
class ToolCall(RecallResult):
    """What ``before_tool`` returns: the pull recall made for the call (its ``hits`` and
    ``recall_id``, as any recall result) and the handle to pass to ``after_tool``. As a
    context manager it logs the action on leaving the block: ``outcome`` (default "ok", or
    "error" when the block raised) and ``cited`` as set on it."""

    action_id: str = ""
    tool: str = ""
    started_at: int = 0
    recall_ids: list = field(default_factory=list)  # the tool's pull recall, and the push shown before it
    recalled: list = field(default_factory=list)  # the memory ids those recalls returned
    shown: dict = field(default_factory=dict)  # recall id -> the memory ids it returned
    outcome: str | None = None
    cited: list | None = None
    logged: bool = False
    session: object = field(default=None, repr=False, compare=False)

    def __enter__(self) -> ToolCall:
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if not self.logged:
            outcome = self.outcome or ("error" if exc_type is not None else "ok")
            self.session.after_tool(self, outcome, cited=self.cited)


def tool_call(session, name: str, result: RecallResult, pushed: RecallResult | None, now_us: int) -> ToolCall:
    """The handle of one tool call: ``result`` (its pull recall) with what the session showed
    the model besides (its current push)."""
    recalls = [result, *([pushed] if pushed is not None else [])]
    recalled = sorted({h.memory_id for r in recalls for h in r.hits})
    tool = gated_text(session._rt.gate, name, "the tool name", MAX_TOOL_CHARS, source="tool")  # noqa: SLF001
    return ToolCall(result.recall_id, result.hits, result.visible_scopes, result.path, result.removed,
                    action_id=uuid.uuid4().hex, tool=tool, started_at=now_us,
                    recall_ids=[r.recall_id for r in recalls], recalled=recalled,
                    shown={r.recall_id: [h.memory_id for h in r.hits] for r in recalls}, session=session)


def log_action(rt, session, call: object, outcome: object, cited: object) -> dict:
    """Log one completed tool call (``Session.after_tool``); citations are marked on the recalls
    that returned them. Returns the logged row."""
    if not isinstance(call, ToolCall) or call.session is not session:
        raise InvalidRecord("after_tool takes the ToolCall this session's before_tool returned")
    if call.logged:
        raise InvalidRecord("this tool call was logged already")
    outcome = check_identifier(outcome, "outcome")
    used = [] if cited is None else [R.check_memory_id(m) for m in V.str_list(cited, "cited", max_len=R.MAX_TOP_K)]
    if set(used) - set(call.recalled):
        raise InvalidRecord("cited names memories the recalls of this tool call did not return")
    if used:
        for rid in call.recall_ids:
            ids = [m for m in used if m in set(call.shown.get(rid, ()))]
            if ids:
                session.cite(rid, ids)
    row = {"action_id": call.action_id, "ts": call.started_at, "ended_at": rt.clock.now_us(), "actor": session.actor,
           "task_id": session.task_id, "purpose": session.purpose, "scope": session.scope, "tool": call.tool,
           "outcome": outcome, "allowed_scopes": [session.scope], "recall_ids": list(call.recall_ids),
           "recalled": list(call.recalled), "cited": sorted(set(used))}
    rt._evidence.flush()  # noqa: SLF001 - the recalls it names are in the log before it
    rt._calls.get(rt._ledger.log_actions.remote([row]))  # noqa: SLF001
    call.logged, call.outcome, call.cited = True, outcome, row["cited"]
    return row

