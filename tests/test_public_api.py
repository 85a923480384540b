"""The public face is pinned: changing it is a decision, not an accident."""

import memactors
from memactors.core import errors


def test_exported_names():
    assert set(memactors.__all__) == {
        "AccessDenied", "Agent", "BackPressure", "BadArguments", "Blocked", "Config", "ForgetResult", "GrantResult", "Memory", "ConfigError", "DataFolderLocked", "EmbedderMismatch", "Hit",
        "IdempotencyConflict", "InvalidIdentifier", "InvalidRecord", "InvalidScope", "LedgerKeyMissing",
        "LedgerTampered", "ManualClock", "MemactorsError", "NoGrants",
        "NotFound", "OwnerUnavailable", "PartialWrite", "RecallResult", "Retriever", "Runtime", "RuntimeClosed",
        "Scope", "ServerError", "Session", "SessionClosed", "SessionExpired", "StoreError", "SystemClock", "Unavailable", "ValidationError",
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
                 "update", "aupdate", "backup", "abackup", "batch", "abatch", "agent", "observe"]:
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
    from memactors.runtime.async_api import AsyncSession
    from memactors.runtime.session import Session

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


# Signatures, not only names: one name per idea (``at`` a point in time, ``top_k`` a count,
# ``erase`` what a forget takes, ``scopes`` what is read), no **extra. The old names (as_of,
# max_items, forget's scope, rollback's to) are kept for one release, defaulting to UNSET.
SIGNATURES = {
    "Runtime.batch": "(self, ops: 'list', *, return_errors: 'bool' = False) -> 'list'",
    "Runtime.abatch": "(self, ops: 'list', *, return_errors: 'bool' = False) -> 'list'",
    "Runtime.agent": "(self, actor: 'str', *, scopes: 'list[str]', task_id: 'str' = 'unspecified', "
                     "purpose: 'str' = 'unspecified', home: 'str | None' = None) -> 'Agent'",
    "Runtime.write": "(self, scope: 'str', text: 'str', *, actor: 'str', subject: 'str | None' = None, "
                     "predicate: 'str | None' = None, object: 'str | None' = None, source: 'str' = 'user_stated', "
                     "source_id: 'str | None' = None, confidence: 'float | None' = None, "
                     "sensitivity: 'str' = 'internal', ttl_days: 'float | str | None' = None, "
                     "soft_ttl_days: 'float | str | None' = None, importance: 'float' = 0.5, pool: 'str' = 'vault', "
                     "idempotency_key: 'str | None' = None, context: 'str | None' = None, "
                     "category: 'str' = 'default', derived_from: 'list[str] | None' = None, embed_text: 'str | None' = None) -> 'R.WriteResult'",
    "Runtime.recall": "(self, query: 'str | None', *, actor: 'str', allowed_scopes: 'list[str]', "
                      "task_id: 'str' = 'unspecified', purpose: 'str' = 'unspecified', top_k: 'int | None' = None, token_budget: 'int | None' = None, "
                      "threshold: 'float | None' = None, weights: 'Any' = None, "
                      "at: 'int | str | datetime | None' = None, where: 'dict | None' = None, "
                      "as_of: 'Any' = UNSET) -> 'RecallResult'",
    "Runtime.grant": "(self, actor: 'str', scope: 'str', *, read: 'bool' = True, write: 'bool' = False, "
                     "by: 'str' = 'admin', reason: 'str | None' = None, clearance: 'str' = 'confidential') -> 'dict'",
    "Runtime.push": "(self, goal: 'str', *, actor: 'str', task_id: 'str', allowed_scopes: 'list[str]', "
                    "purpose: 'str' = 'task_start', top_k: 'int | None' = None, token_budget: 'int | None' = None, "
                    "threshold: 'float | None' = None, weights: 'Any' = None, max_items: 'Any' = UNSET) "
                    "-> 'RecallResult'",
    "Runtime.forget": "(self, memory_id: 'str', *, actor: 'str', reason: 'str', erase: 'str' = 'memory', "
                      "scope: 'Any' = UNSET) -> 'dict'",
    "Runtime.rollback": "(self, *, at: 'int | str | datetime | None' = None, memory_id: 'str | None' = None, "
                        "where: 'dict | None' = None, cascade: 'bool' = False, scope: 'str | None' = None, "
                        "actor: 'str', reason: 'str', dry_run: 'bool' = False, to: 'Any' = UNSET) -> 'RollbackPlan'",
    "Runtime.fork": "(self, path: 'str | os.PathLike', *, at: 'int | str | datetime | None' = None, "
                    "workers: 'int | None' = None) -> 'dict'",
    "Runtime.awrite_many": "(self, items: 'list', *, return_errors: 'bool' = False) -> 'list[R.WriteResult]'",
    "Runtime.arecall_many": "(self, requests: 'list[dict]', *, return_errors: 'bool' = False) -> 'list[RecallResult]'",
    "Agent.recall": "(self, query: 'str | None', *, top_k: 'int | None' = None, scopes: 'list[str] | None' = None, "
                    "token_budget: 'int | None' = None, threshold: 'float | None' = None, weights: 'Any' = None, "
                    "at: 'int | str | datetime | None' = None, where: 'dict | None' = None) -> 'RecallResult'",
    "Agent.arecall": "(self, query: 'str | None', *, top_k: 'int | None' = None, scopes: 'list[str] | None' = None, "
                     "token_budget: 'int | None' = None, threshold: 'float | None' = None, weights: 'Any' = None, "
                     "at: 'int | str | datetime | None' = None, where: 'dict | None' = None) -> 'RecallResult'",
    "Agent.get": "(self, memory_id: 'str') -> 'Memory | None'",
    "Agent.list": "(self, *, scope: 'str | None' = None, subject_prefix: 'str | None' = None, "
                  "limit: 'int | None' = 100, offset: 'int' = 0) -> 'list[Memory]'",
    "Agent.forget": "(self, memory_id: 'str', *, reason: 'str', erase: 'str' = 'memory') -> 'ForgetResult'",
}
OP_FIELDS = {
    "Recall": ["query", "actor", "task_id", "scopes", "purpose", "top_k", "token_budget", "threshold", "weights", "at",
               "where"],
    "Lookup": ["actor", "scope", "memory_ids", "facts", "subject_prefix", "limit", "purpose", "offset"],
    "Forget": ["memory_id", "actor", "reason", "erase", "idempotency_key"],
    "Grant": ["actor", "scope", "read", "write", "by", "reason", "clearance"],
    "Write": ["scope", "text", "actor", "subject", "predicate", "object", "source", "source_id", "confidence",
              "sensitivity", "ttl_days", "soft_ttl_days", "importance", "pool", "idempotency_key", "context",
              "category", "derived_from", "session", "replaces", "embed_text", "copy_of"],
}


def test_signatures_are_pinned():
    import inspect

    from memactors.runtime.agent import Agent

    owners = {"Runtime": memactors.Runtime, "Agent": Agent}
    for name, want in SIGNATURES.items():
        cls, meth = name.split(".")
        assert str(inspect.signature(getattr(owners[cls], meth))) == want, name


def test_the_handle_writes_with_the_fields_of_the_write_op():
    import inspect

    from memactors.runtime.agent import Agent

    for verb in ("remember", "aremember", "write_op"):
        params = list(inspect.signature(getattr(Agent, verb)).parameters)
        # all of the op's fields but the runtime's own (session, copy_of) and an update's (replaces: rt.update)
        want = [f for f in OP_FIELDS["Write"] if f not in ("text", "actor", "session", "replaces", "copy_of")]
        assert params == ["self", "text", *want], verb
    for name in ("write", "remember", "recall", "forget"):
        for cls in (memactors.Runtime, Agent):
            if hasattr(cls, name):
                kinds = {p.kind for p in inspect.signature(getattr(cls, name)).parameters.values()}
                assert inspect.Parameter.VAR_KEYWORD not in kinds, f"{cls.__name__}.{name} takes **extra"


def test_op_fields_are_pinned():
    from memactors import ops

    for name, fields in OP_FIELDS.items():
        assert list(getattr(ops, name).__dataclass_fields__) == fields, name


def test_the_methods_without_an_async_twin_are_the_ones_api_md_names():
    """docs/api.md once said every method had an async twin."""
    import inspect
    import os
    import re

    from memactors.runtime.facade import Runtime

    with open(os.path.join(os.path.dirname(__file__), "..", "docs", "api.md"), encoding="utf-8") as f:
        text = f.read()
    listed = re.search(r"but for (.*?); the", text, re.S).group(1)
    named = set(re.findall(r"`(\w+)`", listed))
    methods = {n for n, v in inspect.getmembers(Runtime, callable) if not n.startswith("_")}
    twinless = {n for n in methods if "a" + n not in methods and not (n.startswith("a") and n[1:] in methods)}
    assert named == twinless
