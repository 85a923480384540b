"""The public face is pinned: changing it is a decision, not an accident."""

import memactors
from memactors.core import errors


def test_exported_names():
    assert set(memactors.__all__) == {
        "AccessDenied", "BackPressure", "Config", "ConfigError", "DataFolderLocked", "EmbedderMismatch", "Hit",
        "IdempotencyConflict", "InvalidIdentifier", "InvalidRecord", "InvalidScope", "LedgerKeyMissing",
        "LedgerTampered", "ManualClock", "MemactorsError", "NoGrants",
        "NotFound", "OwnerUnavailable", "PartialWrite", "RecallResult", "Retriever", "Runtime", "RuntimeClosed",
        "Scope", "ServerError", "Session", "SessionClosed", "StoreError", "SystemClock", "Unavailable", "ValidationError",
        "WriteResult", "__version__",
        "connect", "parse_scope", "restore",
    }


def test_runtime_methods():
    for name in ["grant", "grants", "write", "write_many", "recall", "forget", "flush", "stats", "close",
                 "awrite", "awrite_many", "arecall", "aforget", "agrant", "aclose", "push", "push_session",
                 "mark_cited", "explain", "apush", "amark_cited", "aexplain", "grant_many", "agrant_many",
                 "recall_many", "arecall_many", "tick", "gc", "agc", "purge", "apurge", "rollback", "arollback",
                 "fork", "afork", "session", "asession", "resume_session", "aresume_session", "promote",
                 "apromote", "demote_unused", "ademote_unused", "retrieve", "aretrieve", "history", "ahistory",
                 "update", "aupdate", "backup", "abackup"]:
        assert callable(getattr(memactors.Runtime, name)), name


def test_audit_review_and_contradictions_methods():
    from memactors.runtime.audit import Audit
    from memactors.runtime.lifecycle import Contradictions
    from memactors.runtime.review import Review

    for cls, names in [(Audit, ["verify", "head", "at", "recall", "erased", "sql", "actions"]),
                       (Review, ["pending", "approve", "reject"]), (Contradictions, ["pending", "resolve"])]:
        for name in names:
            assert callable(getattr(cls, name)), f"{cls.__name__}.{name}"


def test_session_hooks():
    from memactors.runtime.session import AsyncSession, Session

    for cls in (Session, AsyncSession):
        for name in ["start", "observe", "before_llm", "before_tool", "after_tool", "recall", "end_turn", "complete"]:
            assert callable(getattr(cls, name)), f"{cls.__name__}.{name}"


def test_every_error_is_a_memactors_error_and_documented():
    doc = errors.__doc__
    for name in dir(errors):
        obj = getattr(errors, name)
        if isinstance(obj, type) and issubclass(obj, Exception) and obj.__module__ == errors.__name__:
            assert issubclass(obj, errors.MemactorsError)
            assert name in doc, f"{name} missing from the hierarchy drawn in the docstring"


def test_config_rejects_unknown_keys():
    import pytest

    with pytest.raises(errors.ConfigError):
        memactors.Config.from_dict({"runtime": {"num_ownerz": 3}})
    with pytest.raises(errors.ConfigError):
        memactors.Config.from_dict({"storage": {}})
    assert memactors.Config.from_dict({"runtime": {"num_owners": 4}}).runtime.num_owners == 4
