"""The typed actions an agent policy emits, and their validation at the runner's door.

An action names the agent that emits it; the runner refuses an action naming another agent (the
host application sets an agent's identity, the model inside it does not). Validation checks
shape only (types, scope syntax, ranges, sizes): whether the agent *may* touch a scope is the
backend's business, and the metrics count what an ungoverned backend let through.
Messages describe what is wrong and never echo a text, a query or a rejected identifier.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..core.errors import InvalidRecord
from ..core.records import MAX_CONTENT_CHARS, SOURCE_CONFIDENCE
from ..core.scopes import check_identifier, parse_scope

MAX_TOP_K = 100
MAX_FIELD_CHARS = 512


@dataclass(frozen=True, slots=True)
class Observe:
    """Something the agent saw (its user's message, a tool result, a web page) to remember."""

    agent: str
    scope: str
    text: str
    source: str = "user_stated"
    subject: str | None = None
    predicate: str | None = None
    object: str | None = None
    importance: float = 0.5
    critical: bool = False  # a constraint: kept in view for the whole task
    ttl_days: float | None = None  # hard expiry, days after the write
    task: str | None = None  # the task (session) it belongs to, if any


@dataclass(frozen=True, slots=True)
class ProbeSpec:
    """An accuracy probe: the user's current value for ``predicate`` and the values they held
    before. A policy gives user and predicate; the runner fills current and outdated from the
    world's ground truth at the tick."""

    user: str
    predicate: str
    current: str | None = None
    outdated: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Recall:
    """A recall over ``allowed_scopes`` (each scope's ancestors are visible too)."""

    agent: str
    allowed_scopes: tuple[str, ...]
    query: str
    top_k: int = 5
    probe: ProbeSpec | None = None
    purpose: str = "answer"
    task: str | None = None


@dataclass(frozen=True, slots=True)
class Forget:
    """Erase what ``scope`` holds about ``subject`` + ``predicate`` (every version)."""

    agent: str
    scope: str
    subject: str
    predicate: str
    reason: str = "user asked"


@dataclass(frozen=True, slots=True)
class TaskStart:
    """A task (a session of the agent loop) begins in ``scope``, a task scope."""

    agent: str
    scope: str
    goal: str
    task: str
    constraints: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class TaskEnd:
    """The task ends; a governed backend promotes what its rules say and cleans up."""

    agent: str
    scope: str
    task: str
    summary: str = ""


Action = Observe | Recall | Forget | TaskStart | TaskEnd
ACTION_TYPES = (Observe, Recall, Forget, TaskStart, TaskEnd)
MEMORY_OPS = (Observe, Recall, Forget)  # what throughput counts


def _text(value: object, what: str, *, empty_ok: bool = False) -> str:
    if not isinstance(value, str) or (not empty_ok and not value.strip()):
        raise InvalidRecord(f"{what} must be a non-empty string")
    if len(value) > MAX_CONTENT_CHARS:
        raise InvalidRecord(f"{what} is longer than {MAX_CONTENT_CHARS} characters ({len(value)})")
    return value


def _field(value: object, what: str) -> None:
    if value is not None and (not isinstance(value, str) or not value.strip() or len(value) > MAX_FIELD_CHARS):
        raise InvalidRecord(f"{what} must be a non-empty string of at most {MAX_FIELD_CHARS} characters")


def _unit(value: object, what: str) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 <= float(value) <= 1.0:
        raise InvalidRecord(f"{what} must be a number between 0 and 1")


def validate(action: object, agent: str) -> Action:
    """Check ``action`` as emitted by ``agent``; return it, or raise a ValidationError subclass
    (InvalidRecord, InvalidScope, InvalidIdentifier) that says what is wrong."""
    if not isinstance(action, ACTION_TYPES):
        raise InvalidRecord(f"a policy returned a {type(action).__name__}, not one of "
                            f"{', '.join(t.__name__ for t in ACTION_TYPES)}")
    if action.agent != agent:  # ``agent`` comes from the world, valid: equality checks both
        raise InvalidRecord("an action names another agent than the one that emitted it")
    if isinstance(action, Observe):
        parse_scope(action.scope)
        _text(action.text, "text")
        if action.source not in SOURCE_CONFIDENCE:
            raise InvalidRecord(f"source must be one of {sorted(SOURCE_CONFIDENCE)}")
        if (action.subject is None) != (action.predicate is None):
            raise InvalidRecord("subject and predicate go together: give both or neither")
        for name in ("subject", "predicate", "object", "task"):
            _field(getattr(action, name), name)
        _unit(action.importance, "importance")
        if action.ttl_days is not None and (isinstance(action.ttl_days, bool) or not isinstance(
                action.ttl_days, (int, float)) or not 0 < float(action.ttl_days) <= 36_500):
            raise InvalidRecord("ttl_days must be a positive number of days (at most 36500)")
    elif isinstance(action, Recall):
        if not isinstance(action.allowed_scopes, (tuple, list)) or not action.allowed_scopes:
            raise InvalidRecord("a recall must name its allowed_scopes (a non-empty list)")
        for s in action.allowed_scopes:
            parse_scope(s)
        _text(action.query, "query")
        if isinstance(action.top_k, bool) or not isinstance(action.top_k, int) or not 1 <= action.top_k <= MAX_TOP_K:
            raise InvalidRecord(f"top_k must be an integer from 1 to {MAX_TOP_K}")
        if action.probe is not None and not isinstance(action.probe, ProbeSpec):
            raise InvalidRecord("probe must be a ProbeSpec")
        _field(action.task, "task")
    elif isinstance(action, Forget):
        parse_scope(action.scope)
        _field(action.subject, "subject")
        _field(action.predicate, "predicate")
        if action.subject is None or action.predicate is None:
            raise InvalidRecord("a forget names a subject and a predicate")
        _text(action.reason, "reason")
    else:  # TaskStart / TaskEnd
        if parse_scope(action.scope).kind != "task":
            raise InvalidRecord("a task starts and ends in a task scope (/org/O/user/U/task/T/)")
        check_identifier(action.task, "task")
        _text(action.goal if isinstance(action, TaskStart) else action.summary,
              "goal" if isinstance(action, TaskStart) else "summary", empty_ok=isinstance(action, TaskEnd))
    return action
