"""The async twins of the facade's methods (``Runtime`` inherits them): each runs its sync
method in a thread, so an event loop never blocks on Ray."""

from __future__ import annotations

import asyncio
import os
from typing import Any

from ..core import records as R
from .history import RollbackPlan
from .lifecycle import GCResult
from .results import RecallResult
from .session import AsyncSession


class AsyncAPI:
    async def awrite(self, scope: str, text: str, **kw: Any) -> R.WriteResult:
        return await asyncio.to_thread(self.write, scope, text, **kw)

    async def awrite_many(self, items: list) -> list[R.WriteResult]:
        return await asyncio.to_thread(self.write_many, items)

    async def arecall(self, query: str, **kw: Any) -> RecallResult:
        return await asyncio.to_thread(self.recall, query, **kw)

    async def arecall_many(self, requests: list[dict]) -> list[RecallResult]:
        return await asyncio.to_thread(self.recall_many, requests)

    async def aforget(self, memory_id: str, **kw: Any) -> dict:
        return await asyncio.to_thread(self.forget, memory_id, **kw)

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

    async def abackup(self, dest: str | os.PathLike) -> dict:
        return await asyncio.to_thread(self.backup, dest)

    async def aclose(self) -> None:
        await asyncio.to_thread(self.close)
