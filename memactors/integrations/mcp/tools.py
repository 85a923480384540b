"""The memory as MCP tools: remember, recall, forget, get, list (and mem0's add, search,
delete), each one call through the caller's agent handle (``rt.agent``), so grants, the gate,
evidence and the ledger apply as to any call. The actor comes from the transport (a bearer
token's mapping, or the stdio server's configuration), never from a tool argument.

Errors come back as MCP tool errors carrying our typed error's name and message; our messages
never contain memory content, query text or anything the gate matched, and arguments are
checked here (types and sizes) before any pydantic message could quote them.
"""

from __future__ import annotations

from typing import Any

from ...core.errors import AccessDenied, Blocked, InvalidRecord, MemactorsError

MAX_ARG_CHARS = 32_000


class MemoryTools:
    def __init__(self, rt, *, task_id: str = "mcp", purpose: str = "mcp_tool") -> None:
        self.rt, self.task_id, self.purpose = rt, task_id, purpose
        self._agents: dict[str, Any] = {}
        self._bound: dict[str, tuple] = {}  # the grants each handle was made from

    def agent(self, actor: str):
        """The actor's handle: it reads the scopes its read grants name and writes to the first
        its write grants name (grants change: looked up again when a call is refused, ``_run``)."""
        a = self._agents.get(actor)
        if a is None:
            reads, writes = self._grants(actor)
            if not reads and not writes:
                raise AccessDenied("this actor holds no grants")
            a = self.rt.agent(actor, task_id=self.task_id, purpose=self.purpose, scopes=list(reads or writes),
                              home=(writes or reads)[0])
            self._agents[actor] = a
            self._bound[actor] = (reads, writes)
        return a

    def _grants(self, actor: str) -> tuple[tuple, tuple]:
        grants = self.rt.grants(actor)
        return (tuple(g["scope"] for g in grants if g["read"]), tuple(g["scope"] for g in grants if g["write"]))

    async def _run(self, actor: str, fn):
        """``fn(handle)``. A refusal by grants other than the handle was made from (revoked, moved)
        drops the handle and tries once more with the grants now: nothing ran the first time."""
        a = self.agent(actor)
        try:
            return await fn(a)
        except AccessDenied:
            if self._grants(actor) == self._bound.get(actor):
                raise
            self._agents.pop(actor, None)
        return await fn(self.agent(actor))

    async def remember(self, actor: str, text: Any, scope: Any = None, subject: Any = None, predicate: Any = None,
                       object: Any = None, source: Any = "agent_inferred") -> dict:
        fields = {k: _opt_str(v, k) for k, v in (("subject", subject), ("predicate", predicate), ("object", object))}
        text, scope, source = _str(text, "text"), _opt_str(scope, "scope"), _str(source, "source")
        res = await self._run(actor, lambda a: a.aremember(text, scope=scope, source=source, **fields))
        if res.decision == "blocked":  # an agent must hear a refusal as an error, with the rules, not the text
            raise Blocked("the write gate blocked this memory; nothing was stored (rules: "
                          f"{', '.join(sorted({h['rule'] for h in res.gate.get('hits', [])}))})", gate=res.gate)
        return res.to_dict()

    async def recall(self, actor: str, query: Any, top_k: Any = 5, scopes: Any = None, where: Any = None) -> dict:
        if scopes is not None and (not isinstance(scopes, list) or not all(isinstance(s, str) for s in scopes)):
            raise InvalidRecord("scopes is a list of scope paths")
        if where is not None and not isinstance(where, dict):
            raise InvalidRecord("where is an object of subject, predicate, category, source_kind, since, until")
        # where's keys and values are the runtime's to check (parse_where: unknown keys never echoed)
        query, top_k = _str(query, "query"), _int(top_k, "top_k")
        res = await self._run(actor, lambda a: a.arecall(query, top_k=top_k, scopes=scopes, where=where))
        return {"recall_id": res.recall_id, "visible_scopes": res.visible_scopes,
                "hits": [{"memory_id": h.memory_id, "scope": h.scope, "content": h.content, "score": round(h.score, 6),
                          "subject": h.subject, "predicate": h.predicate, "object": h.object, "stale": h.stale}
                         for h in res.hits]}

    async def forget(self, actor: str, memory_id: Any, reason: Any = "asked by the agent", erase: Any = "memory") -> dict:
        memory_id, reason, erase = _str(memory_id, "memory_id"), _str(reason, "reason"), _str(erase, "erase")
        res = await self._run(actor, lambda a: a.aforget(memory_id, reason=reason, erase=erase))
        return res.to_dict()

    async def get(self, actor: str, memory_id: Any) -> dict:
        memory_id = _str(memory_id, "memory_id")
        m = await self._run(actor, lambda a: a.aget(memory_id))
        return {"memory": None if m is None else m.to_dict()}

    async def list(self, actor: str, scope: Any = None, limit: Any = 50, offset: Any = 0) -> dict:
        scope, limit = _opt_str(scope, "scope"), _int(limit, "limit")
        found = await self._run(actor, lambda a: a.alist(scope=scope, limit=limit, offset=offset))
        return {"memories": [m.to_dict() for m in found]}


def _str(v: Any, what: str) -> str:
    if not isinstance(v, str) or len(v) > MAX_ARG_CHARS:
        raise InvalidRecord(f"{what} is a string of at most {MAX_ARG_CHARS} characters")
    return v


def _opt_str(v: Any, what: str) -> str | None:
    return None if v is None else _str(v, what)


def _int(v: Any, what: str) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or not 0 < v <= 1000:
        raise InvalidRecord(f"{what} is a whole number from 1 to 1000")
    return v


def tool_error(exc: MemactorsError) -> str:
    """What a refused call tells the client: the typed error's name and our message (no content)."""
    return f"{type(exc).__name__}: {exc}"
