"""memactors: a governed memory runtime for LLM agents, on Ray.

    import memactors
    rt = memactors.connect("./data")
    rt.grant("agent-1", "/org/acme/user/alice/", write=True)
    rt.write("/org/acme/user/alice/", "Alice prefers green tea", actor="agent-1")
    rt.recall("what does alice drink?", actor="agent-1", task_id="t1",
              allowed_scopes=["/org/acme/user/alice/"], purpose="answer")

    # or through a handle bound to the agent's identity (each verb one op of memactors.ops):
    alice = rt.agent("agent-1", task_id="t1", purpose="answer", scopes=["/org/acme/user/alice/"])
    alice.remember("Alice's flight leaves Friday"); alice.recall("when does alice fly?")
"""

from typing import TYPE_CHECKING, Any

from .core.clock import ManualClock, SystemClock
from .core.config import Config
from .core.errors import (
    AccessDenied,
    BackPressure,
    BadArguments,
    Blocked,
    ConfigError,
    DataFolderLocked,
    EmbedderMismatch,
    IdempotencyConflict,
    InvalidIdentifier,
    InvalidRecord,
    InvalidScope,
    LedgerKeyMissing,
    LedgerTampered,
    MemactorsError,
    NoGrants,
    NotFound,
    OwnerUnavailable,
    PartialWrite,
    RuntimeClosed,
    ServerError,
    SessionClosed,
    SessionExpired,
    StoreError,
    Unavailable,
    ValidationError,
)
from .core.records import WriteResult
from .core.retriever import Retriever
from .core.scopes import Scope, parse_scope

if TYPE_CHECKING:
    from .runtime import Agent, ForgetResult, GrantResult, Hit, Memory, RecallResult, Runtime, Session, connect, restore

__version__ = "0.1.0"

__all__ = [
    "AccessDenied",
    "Agent",
    "BackPressure",
    "BadArguments",
    "Blocked",
    "Config",
    "ConfigError",
    "DataFolderLocked",
    "EmbedderMismatch",
    "ForgetResult",
    "GrantResult",
    "Hit",
    "IdempotencyConflict",
    "InvalidIdentifier",
    "InvalidRecord",
    "InvalidScope",
    "LedgerKeyMissing",
    "LedgerTampered",
    "ManualClock",
    "MemactorsError",
    "Memory",
    "NoGrants",
    "NotFound",
    "OwnerUnavailable",
    "PartialWrite",
    "RecallResult",
    "Retriever",
    "Runtime",
    "RuntimeClosed",
    "Scope",
    "ServerError",
    "Session",
    "SessionClosed",
    "SessionExpired",
    "StoreError",
    "SystemClock",
    "Unavailable",
    "ValidationError",
    "WriteResult",
    "__version__",
    "connect",
    "parse_scope",
    "restore",
]

# The runtime (and with it ray, duckdb and lancedb, ~0.5 s) is imported on first use, so that
# `import memactors` stays light for the command line and for code that only needs the errors.
_LAZY = frozenset({"Agent", "ForgetResult", "GrantResult", "Hit", "Memory", "RecallResult", "Runtime", "Session",
                   "connect", "restore"})


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        from . import runtime

        value = getattr(runtime, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
