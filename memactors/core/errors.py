"""Every error memactors raises on purpose. One module, one hierarchy::

    MemactorsError
     ├── ValidationError          bad input, refused before it reaches a query (also a ValueError)
     │    ├── InvalidIdentifier   an id outside [A-Za-z0-9_.-], "." / "..", or one that looks like personal data or a secret
     │    ├── InvalidScope        a scope path outside the scope tree
     │    ├── InvalidRecord       a field of a write or recall out of range
     │    ├── IdempotencyConflict an idempotency key reused for a different write
     │    ├── BadArguments        a call missing a required argument, or given one it has not (also a TypeError)
     │    └── Blocked             the write gate blocked the write (err.gate: rule ids and spans); nothing stored
     ├── AccessDenied             grants or scope rules refuse the call (also a PermissionError)
     │    ├── NoGrants            the actor holds no grant at all (says how to add one)
     │    └── PurposeRefused      a recall's purpose is not listed in [recall.purposes]
     ├── NotFound                 an unknown memory id (also a LookupError)
     ├── BackPressure             a bounded queue is full; retry later, nothing was written
     ├── PartialWrite             part of a batch was not confirmed: err.results, err.items to resubmit
     ├── ConfigError              a configuration value is wrong
     ├── StoreError               the data folder cannot be used as asked
     │    ├── DataFolderLocked    another runtime holds the data folder for writing
     │    ├── EmbedderMismatch    the store was built with another embedder
     │    ├── L2Outdated          the L2 table predates the record schema (rebuilt from the ledger)
     │    ├── LedgerKeyMissing    the ledger's key (kept outside the data folder) is not found
     │    ├── LedgerTampered      the ledger disagrees with its key, its anchor or itself
     │    └── ServerError         the long-lived runtime of `up` cannot be started, reached or read
     ├── Unavailable              a part of the runtime cannot be reached now (retry, or reconnect)
     │    └── OwnerUnavailable    a scope owner stayed unreachable; nothing further was written
     └── RuntimeClosed            the runtime was closed
          └── SessionClosed       the session was completed (it cannot be resumed or completed again)
               └── SessionExpired the session was idle for longer than [runtime].session_ttl_s and was let go

Messages never contain memory content, query text, or anything the write gate matched.
Across actor boundaries an error travels as data (``encode``/``decode``) or as itself inside
Ray's wrapper; the facade always raises the typed error, never Ray's.
"""

from __future__ import annotations


class MemactorsError(Exception):
    """Base of every error memactors raises on purpose."""


class ValidationError(MemactorsError, ValueError):
    """Input is malformed; nothing was written."""


class InvalidIdentifier(ValidationError):
    """An identifier has characters outside ASCII letters, digits, '-', '_', '.', or looks like
    personal data or a secret (a token, a phone number, an e-mail address: ``memactors.gate.identifiers``)."""


class InvalidScope(ValidationError):
    """A scope path is not one of the forms of the scope tree."""


class InvalidRecord(ValidationError):
    """A field of a write or a recall request is out of range."""


class BadArguments(ValidationError, TypeError):
    """A public call was missing required arguments (all of them named) or given unknown or too
    many ones; nothing ran. (A TypeError as well, which is what Python raises for the same.)"""


class IdempotencyConflict(ValidationError):
    """An idempotency key came back with a different write than the one it was first used for."""


class Blocked(ValidationError):
    """The write gate blocked a write (a secret, dangerous code): nothing of it was stored.
    ``gate`` holds the gate's summary: rule ids and spans, never the matched text. (``write()``
    itself returns ``decision="blocked"``; the adapters that have no decision to return raise this.)"""

    def __init__(self, message: str = "", *, gate: dict | None = None) -> None:
        super().__init__(message)
        self.gate = gate or {}

    def __reduce__(self):
        return (_blocked, (str(self), self.gate))


def _blocked(message, gate):
    return Blocked(message, gate=gate)


class AccessDenied(MemactorsError, PermissionError):
    """The actor's grants or the scope rules refuse the call."""


class NoGrants(AccessDenied):
    """The actor holds no grant at all."""


class PurposeRefused(AccessDenied):
    """A recall's purpose is not one the configuration's ``[recall.purposes]`` lists (with such a
    table, a purpose must be listed to recall anything)."""


class NotFound(MemactorsError, LookupError):
    """No memory with that id is visible to the caller."""


class BackPressure(MemactorsError):
    """A bounded queue is full. Nothing was written; retry after a pause."""


class PartialWrite(MemactorsError):
    """Part of a batch was not confirmed in time. ``results`` has a result per item (None where
    not confirmed), ``failed`` their positions, ``items`` those writes with their idempotency
    keys: resubmitting them never writes anything twice."""

    def __init__(self, message: str = "", *, results: list | None = None, items: list | None = None,
                 failed: list | None = None) -> None:
        super().__init__(message)
        self.results, self.items, self.failed = results or [], items or [], failed or []

    def __reduce__(self):  # crosses process boundaries with its payload
        return (_partial_write, (str(self), self.results, self.items, self.failed))


def _partial_write(message, results, items, failed):
    return PartialWrite(message, results=results, items=items, failed=failed)


class ConfigError(MemactorsError):
    """A configuration value is missing or wrong."""


class StoreError(MemactorsError):
    """The data folder cannot be used as asked."""


class DataFolderLocked(StoreError):
    """Another runtime has the data folder open for writing."""


class EmbedderMismatch(StoreError):
    """The store's vectors were made by a different embedder."""


class L2Outdated(StoreError):
    """The L2 table predates this runtime's record schema; it is rebuilt from the ledger."""


class LedgerKeyMissing(StoreError):
    """The ledger's key is not where the configuration says (it lives outside the data folder)."""


class LedgerTampered(StoreError):
    """The ledger fails a check against its key, its anchor or its own chain; the message names
    the first bad seq or the table."""


class ServerError(StoreError):
    """The long-lived runtime of a data folder (``memactors up``) cannot be started or reached,
    or its ``runtime.json`` is unreadable or names a Ray head that is gone."""


class Unavailable(MemactorsError):
    """A part of the runtime cannot be reached now."""


class OwnerUnavailable(Unavailable):
    """A scope owner stayed unreachable (Ray could not restart it in time)."""


class RuntimeClosed(MemactorsError):
    """The runtime was closed."""


class SessionClosed(RuntimeClosed):
    """The session was completed: its hooks, ``resume_session`` and a second ``complete`` refuse."""


class SessionExpired(SessionClosed):
    """The session wrote nothing for longer than ``[runtime].session_ttl_s``: the working pool let
    its items go, and its handle refuses every hook (start a new session)."""


def encode(exc: MemactorsError) -> dict:
    """An error as data, to cross a boundary that cannot carry exception types (the direct
    path's socket, one item of a batch)."""
    return {"error": type(exc).__name__, "message": str(exc)}


def decode(d: dict) -> MemactorsError:
    """The typed error an ``encode``d one stands for (MemactorsError for a name not known here)."""
    cls = globals().get(d.get("error"), MemactorsError)
    if not (isinstance(cls, type) and issubclass(cls, MemactorsError)):
        cls = MemactorsError
    return cls(d.get("message", ""))


def is_encoded(value: object) -> bool:
    return isinstance(value, dict) and "error" in value and "message" in value and len(value) == 2
