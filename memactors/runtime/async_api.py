"""The async twins of the facade's methods (``Runtime`` inherits them). Writes, recalls and
forgets are ops through ``abatch`` (``memactors.runtime.batch``): awaited on the caller's loop,
coalesced with every other coroutine's ops there, no thread per call. The rest (grants, sweeps,
history, sessions) still run their sync method in a thread, so a loop never blocks on them."""

from __future__ import annotations

import asyncio
import os
from typing import Any

from .. import ops as O
from ..core import records as R
from ..core import validate as V
from ..core.errors import MemactorsError
from .arguments import check_as
from .history import RollbackPlan
from .recall_api import recall_args
from .lifecycle import GCResult
from .results import RecallResult
from .renamed import UNSET, renamed
from ..core.l0 import L0
from .session import Prompt, Session, TurnResult


class AsyncAPI:
    async def awrite(self, scope: str, text: str, **kw: Any) -> R.WriteResult:
        check_as(type(self).write, "rt.awrite()", (self, scope, text), kw)  # write()'s BadArguments
        return (await self.awrite_many([dict(kw, scope=scope, text=text)]))[0]

    async def awrite_many(self, items: list, *, return_errors: bool = False) -> list[R.WriteResult]:
        self._check_open()
        checked = self._checked_writes(items, return_errors)  # write_many's own checks, its errors
        return await self._arun([r if isinstance(r, MemactorsError) else ("write", r) for r in checked], return_errors)

    async def arecall(self, query: str, **kw: Any) -> RecallResult:
        check_as(type(self).recall, "rt.arecall()", (self, query), kw)  # recall()'s BadArguments
        return (await self.abatch([_recall_op(dict(kw, query=query))]))[0]

    async def arecall_many(self, requests: list[dict], *, return_errors: bool = False) -> list[RecallResult]:
        return_errors = V.flag(return_errors, "return_errors")
        if not isinstance(requests, (list, tuple)):
            raise R.InvalidRecord("recall_many takes a list of recall requests (dicts of recall() arguments)")
        ops = []
        for i, rq in enumerate(requests):
            try:
                ops.append(_recall_op(rq))
            except MemactorsError as exc:
                if not return_errors:
                    raise type(exc)(f"request at position {i}: {exc}") from None
                ops.append(type(exc)(f"request at position {i}: {exc}"))
        return await self.abatch(ops, return_errors=return_errors)

    async def aforget(self, memory_id: str, *, actor: str, reason: str, erase: str = "memory",
                      scope: Any = UNSET) -> dict:
        erase = renamed("aforget", "scope", scope, "erase", erase, "memory")
        return (await self.abatch([O.Forget(memory_id, actor, reason, erase)]))[0].to_dict()

    async def agrant(self, actor: str, scope: str, **kw: Any) -> dict:
        return await asyncio.to_thread(self.grant, actor, scope, **kw)

    async def agrant_many(self, grants: list[dict]) -> list[dict]:
        return await asyncio.to_thread(self.grant_many, grants)

    async def apush(self, goal: str, **kw: Any) -> RecallResult:
        return await asyncio.to_thread(self.push, goal, **kw)

    async def asession(self, scope: str, **kw: Any) -> AsyncSession:
        return AsyncSession(await asyncio.to_thread(self.session, scope, **kw))

    async def aresume_session(self, scope: str, **kw: Any) -> AsyncSession:
        return AsyncSession(await asyncio.to_thread(self.resume_session, scope, **kw))

    async def apromote(self, memory_id: str, to_scope: str, **kw: Any) -> dict:
        return await asyncio.to_thread(self.promote, memory_id, to_scope, **kw)

    async def ademote_unused(self, **kw: Any) -> dict:
        return await asyncio.to_thread(self.demote_unused, **kw)

    async def aretrieve(self, retriever, query: str, **kw: Any) -> RecallResult:
        return await asyncio.to_thread(self.retrieve, retriever, query, **kw)

    async def amark_cited(self, recall_id: str, memory_ids: list[str], *, actor: str) -> int:
        return await asyncio.to_thread(self.mark_cited, recall_id, memory_ids, actor=actor)

    async def aexplain(self, recall_id: str, *, actor: str) -> dict:
        return await asyncio.to_thread(self.explain, recall_id, actor=actor)

    async def apurge(self) -> dict:
        return await asyncio.to_thread(self.purge)

    async def agc(self, **kw: Any) -> GCResult:
        return await asyncio.to_thread(self.gc, **kw)

    async def arollback(self, **kw: Any) -> RollbackPlan:
        return await asyncio.to_thread(self.rollback, **kw)

    async def afork(self, path: str | os.PathLike, **kw: Any) -> dict:
        return await asyncio.to_thread(self.fork, path, **kw)

    async def ahistory(self, target, *, actor: str) -> dict:
        return await asyncio.to_thread(self.history, target, actor=actor)

    async def aupdate(self, memory_id: str, text: str, **kw: Any) -> R.WriteResult:
        return await asyncio.to_thread(self.update, memory_id, text, **kw)

    async def abackup(self, dest: str | os.PathLike, *, key_passphrase: str | None = None) -> dict:
        return await asyncio.to_thread(self.backup, dest, key_passphrase=key_passphrase)

    async def aclose(self) -> None:
        await asyncio.to_thread(self.close)


def _recall_op(rq) -> O.Recall:
    a = recall_args(rq, frozenset({"at", "as_of"}))
    at = renamed("arecall", "as_of", a.get("as_of", UNSET), "at", a.get("at"))
    return O.Recall(a["query"], a["actor"], a["task_id"], a["allowed_scopes"], a["purpose"], a["top_k"],
                    a["token_budget"], a["threshold"], a["weights"], at, a["where"])


class AsyncSession:
    """The async twin of ``Session``: the same hooks, awaitable (``await rt.asession(...)``)."""

    def __init__(self, session: Session) -> None:
        self.session = session

    @property
    def l0(self) -> L0:
        return self.session.l0

    async def start(self):
        return await asyncio.to_thread(self.session.start)

    async def observe(self, source: str, content: str, **kw) -> None:
        self.session.observe(source, content, **kw)  # buffered: no I/O

    async def before_llm(self, token_budget: int | None = None) -> Prompt:
        return await asyncio.to_thread(self.session.before_llm, token_budget)

    async def before_tool(self, name: str, args: object = None, **kw):
        return await asyncio.to_thread(self.session.before_tool, name, args, **kw)

    async def after_tool(self, call, outcome: str = "ok", **kw) -> dict:
        return await asyncio.to_thread(self.session.after_tool, call, outcome, **kw)

    async def recall(self, query: str, **kw):
        return await asyncio.to_thread(self.session.recall, query, **kw)

    async def end_turn(self) -> TurnResult:
        return await asyncio.to_thread(self.session.end_turn)

    async def complete(self, summary: str = "", outcome: str = "success") -> dict:
        return await asyncio.to_thread(self.session.complete, summary, outcome)
