"""``rt.agent(actor, task_id=..., purpose=..., scopes=[...])``: a handle bound to one identity.

It carries what every call would otherwise repeat (the actor, its task and purpose, the scopes
it reads, the scope it writes to) and each of its verbs only builds one op of
``memactors.ops`` and hands it to ``rt.batch`` (``a``-prefixed twins: ``rt.abatch``), so grants,
the gate, evidence and the ledger apply exactly as to any other call. The host application
makes the handle; the model inside the agent chooses queries, never the identity.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from .. import ops as O
from ..core.errors import InvalidRecord
from ..core import records as R
from ..core.scopes import check_identifier, parse_scope
from ..core.records import WriteResult
from .arguments import typed_calls
from .results import ForgetResult, Memory, RecallResult


@typed_calls("agent")
class Agent:
    def __init__(self, rt, actor: str, *, scopes: list[str], task_id: str = R.UNSPECIFIED, purpose: str = R.UNSPECIFIED,
                 home: str | None = None) -> None:
        ids = rt._ids
        if not isinstance(scopes, (list, tuple)):  # a set has no first scope to be home
            raise InvalidRecord(f"an agent's scopes are a list: scopes=[...], not {type(scopes).__name__}")
        if not scopes:
            raise InvalidRecord("an agent reads at least one scope: scopes=[...]")
        self._rt = rt
        # screened (pseudonymised where asked), then its shape checked: a bad one is refused here,
        # not at the handle's first call
        self.actor = check_identifier(ids.id(actor, "actor"), "actor")
        self.task_id = check_identifier(ids.id(task_id, "task_id"), "task_id")
        self.purpose = ids.purpose(purpose, rt.gate.redact_all)
        # Parsed now: a malformed scope or home is refused here, not at the agent's first call.
        self.scopes = [str(parse_scope(s)) for s in ids.scopes(list(scopes))]
        # where remember() writes
        self.home = str(parse_scope(ids.scope(home))) if home is not None else self.scopes[0]

    def __repr__(self) -> str:
        return f"Agent(actor={self.actor!r}, task_id={self.task_id!r}, scopes={self.scopes!r})"

    # --- ops, built ---------------------------------------------------------------------------

    def write_op(self, text: str, *, scope: str | None = None, subject: str | None = None, predicate: str | None = None,
                 object: str | None = None, source: str = "user_stated", source_id: str | None = None,
                 confidence: float | None = None, sensitivity: str = "internal", ttl_days: float | str | None = None,
                 soft_ttl_days: float | str | None = None, importance: float = 0.5, pool: str = "vault",
                 idempotency_key: str | None = None, context: str | None = None, category: str = "default",
                 derived_from: list[str] | None = None, embed_text: str | None = None) -> O.Write:
        """A ``Write`` of this agent into ``scope`` (default: home); the fields are ``memactors.ops.Write``'s."""
        return O.Write(scope=self.home if scope is None else scope, text=text, actor=self.actor, subject=subject,
                       predicate=predicate, object=object, source=source, source_id=source_id, confidence=confidence,
                       sensitivity=sensitivity, ttl_days=ttl_days, soft_ttl_days=soft_ttl_days, importance=importance,
                       pool=pool, idempotency_key=idempotency_key, context=context, category=category,
                       derived_from=derived_from, embed_text=embed_text)

    def recall_op(self, query: str | None, *, top_k: int | None = None, scopes: list[str] | None = None,
                  token_budget: int | None = None, threshold: float | None = None, weights: Any = None,
                  at: int | str | datetime | None = None, where: dict | None = None) -> O.Recall:
        # None is the agent's scopes; anything else is checked as given (an empty list is refused,
        # never widened to the agent's scopes).
        scopes = list(self.scopes) if scopes is None else list(scopes) if isinstance(scopes, (list, tuple)) else scopes
        return O.Recall(query, self.actor, self.task_id, scopes, self.purpose, top_k,
                        token_budget, threshold, weights, at, where)

    def forget_op(self, memory_id: str, *, reason: str, erase: str = "memory") -> O.Forget:
        return O.Forget(memory_id, self.actor, reason, erase)

    def lookup_op(self, *, scope: str | None = None, memory_ids: list[str] | None = None,
                  facts: list[tuple[str, str]] | None = None, subject_prefix: str | None = None,
                  limit: int | None = None, offset: int = 0) -> O.Lookup:
        return O.Lookup(self.actor, scope, memory_ids, facts, subject_prefix, limit, self.purpose, offset)

    # --- verbs ----------------------------------------------------------------------------------

    def remember(self, text: str, *, scope: str | None = None, subject: str | None = None, predicate: str | None = None,
                 object: str | None = None, source: str = "user_stated", source_id: str | None = None,
                 confidence: float | None = None, sensitivity: str = "internal", ttl_days: float | str | None = None,
                 soft_ttl_days: float | str | None = None, importance: float = 0.5, pool: str = "vault",
                 idempotency_key: str | None = None, context: str | None = None, category: str = "default",
                 derived_from: list[str] | None = None, embed_text: str | None = None) -> WriteResult:
        """Write a memory through the gate into ``scope`` (default: the agent's home scope)."""
        return self._rt.batch([self.write_op(**_args(locals()))])[0]

    def recall(self, query: str | None, *, top_k: int | None = None, scopes: list[str] | None = None,
               token_budget: int | None = None, threshold: float | None = None, weights: Any = None,
               at: int | str | datetime | None = None, where: dict | None = None) -> RecallResult:
        """A governed recall over the agent's scopes (or ``scopes=``); ``top_k`` hits at most;
        ``where``: structured filters (``Runtime.recall``)."""
        return self._rt.batch([self.recall_op(query, top_k=top_k, scopes=scopes, token_budget=token_budget,
                                              threshold=threshold, weights=weights, at=at, where=where)])[0]

    def get(self, memory_id: str) -> Memory | None:
        """The live memory with this id, if the agent may read it (None: no such live memory)."""
        found = self._rt.batch([self.lookup_op(memory_ids=[memory_id])])[0]
        return found[0] if found else None

    def list(self, *, scope: str | None = None, subject_prefix: str | None = None,
             limit: int | None = 100, offset: int = 0) -> list[Memory]:
        """Live memories of ``scope`` (default: home), oldest first, a page at a time: at most
        ``limit`` after the first ``offset`` (the next page: ``offset + limit``)."""
        return self._rt.batch([self.lookup_op(scope=self.home if scope is None else scope,
                                              subject_prefix=subject_prefix, limit=limit, offset=offset)])[0]

    def forget(self, memory_id: str, *, reason: str, erase: str = "memory") -> ForgetResult:
        """Erase a memory (``erase="fact"``: every version of its fact). Not undoable."""
        return self._rt.batch([self.forget_op(memory_id, reason=reason, erase=erase)])[0]

    # --- async twins: the same ops through rt.abatch (coalesced with other agents') -------------

    async def aremember(self, text: str, *, scope: str | None = None, subject: str | None = None, predicate: str | None = None,
                       object: str | None = None, source: str = "user_stated", source_id: str | None = None,
                       confidence: float | None = None, sensitivity: str = "internal", ttl_days: float | str | None = None,
                       soft_ttl_days: float | str | None = None, importance: float = 0.5, pool: str = "vault",
                       idempotency_key: str | None = None, context: str | None = None, category: str = "default",
                       derived_from: list[str] | None = None, embed_text: str | None = None) -> WriteResult:
        return (await self._rt.abatch([self.write_op(**_args(locals()))]))[0]

    async def arecall(self, query: str | None, *, top_k: int | None = None, scopes: list[str] | None = None,
                      token_budget: int | None = None, threshold: float | None = None, weights: Any = None,
                      at: int | str | datetime | None = None, where: dict | None = None) -> RecallResult:
        return (await self._rt.abatch([self.recall_op(query, top_k=top_k, scopes=scopes, token_budget=token_budget,
                                                      threshold=threshold, weights=weights, at=at, where=where)]))[0]

    async def aget(self, memory_id: str) -> Memory | None:
        found = (await self._rt.abatch([self.lookup_op(memory_ids=[memory_id])]))[0]
        return found[0] if found else None

    async def alist(self, *, scope: str | None = None, subject_prefix: str | None = None,
                    limit: int | None = 100, offset: int = 0) -> list[Memory]:
        return (await self._rt.abatch([self.lookup_op(scope=self.home if scope is None else scope,
                                                      subject_prefix=subject_prefix,
                                                      limit=limit, offset=offset)]))[0]

    async def aforget(self, memory_id: str, *, reason: str, erase: str = "memory") -> ForgetResult:
        return (await self._rt.abatch([self.forget_op(memory_id, reason=reason, erase=erase)]))[0]


def _args(names: dict) -> dict:
    """A verb's own arguments (its ``locals()`` on entry), for the op builder with the same
    parameters: the signature is written once per verb, never the forwarding."""
    return {k: v for k, v in names.items() if k != "self"}
