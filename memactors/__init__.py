"""memactors: a governed memory runtime for LLM agents, on Ray.

    import memactors
    rt = memactors.connect("./data")
    rt.grant("agent-1", "/org/acme/user/alice/", write=True)
    rt.write("/org/acme/user/alice/", "Alice prefers green tea", actor="agent-1")
    rt.recall("what does alice drink?", actor="agent-1", task_id="t1",
              allowed_scopes=["/org/acme/user/alice/"], purpose="answer")
"""

from .core.clock import ManualClock, SystemClock
from .core.config import Config
from .core.errors import (
    AccessDenied,
    BackPressure,
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
    RuntimeClosed,
    StoreError,
    ValidationError,
)
from .core.records import WriteResult
from .core.scopes import Scope, parse_scope
from .runtime import Hit, RecallResult, Runtime, connect

__version__ = "0.1.0"

__all__ = [
    "AccessDenied",
    "BackPressure",
    "Config",
    "ConfigError",
    "DataFolderLocked",
    "EmbedderMismatch",
    "Hit",
    "IdempotencyConflict",
    "InvalidIdentifier",
    "InvalidRecord",
    "InvalidScope",
    "LedgerKeyMissing",
    "LedgerTampered",
    "ManualClock",
    "MemactorsError",
    "NoGrants",
    "NotFound",
    "RecallResult",
    "Runtime",
    "RuntimeClosed",
    "Scope",
    "StoreError",
    "SystemClock",
    "ValidationError",
    "WriteResult",
    "__version__",
    "connect",
    "parse_scope",
]
