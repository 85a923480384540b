"""``memactors mcp``: the memory as tools on the official MCP SDK's ``MCPServer``.

Transports: stdio (one actor, from the command line or the config) and streamable HTTP, bound
to 127.0.0.1 unless told otherwise, where every request carries a bearer token that the token
file (digests only) maps to an actor; a missing or unknown token is refused before any tool
runs, and identity never comes from a URL path or a tool argument.
"""

from __future__ import annotations

import inspect
import logging
import socket
import threading
from typing import Annotated, Any

from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.provider import AccessToken, TokenVerifier
from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field, ValidationError, WrapValidator

from ...core.errors import AccessDenied, BadArguments, ConfigError, MemactorsError
from . import tokens as T
from .tools import MemoryTools, tool_error

# Tool arguments are checked by ``tools`` itself, so a hostile argument gets our typed error,
# never a validation message that quotes it: the SDK validates nothing of them. A text is
# declared a str (the schema says so, and the SDK then keeps it as sent: for any other type it
# parses a string holding JSON, so a note '{"a": 1}' arrived as a dict and "null" as None) and
# passed on unchecked, whatever the client sent.
_AS_SENT = WrapValidator(lambda value, _handler: value)
Text = Annotated[str, _AS_SENT, Field(description="a string")]
Opt = Annotated[str, _AS_SENT, Field(description="an optional string")]
Count = Annotated[Any, Field(description="a whole number from 1 to 1000")]
Offset = Annotated[Any, Field(description="how many to skip first: a whole number from 0")]
Scopes = Annotated[Any, Field(description="an optional list of scope paths to read")]
Where = Annotated[Any, Field(description="optional filters: an object of subject, predicate, category, "
                                         "source_kind, since and until (ISO 8601 times)")]

logger = logging.getLogger("memactors.mcp")

SCOPE = "memory"  # the one OAuth scope a token grants: using the memory tools
INSTRUCTIONS = ("Governed long-term memory. remember/add writes a memory (through a write gate that "
                "redacts personal data and blocks secrets), recall/search finds memories by meaning, "
                "get and list read by id or scope, forget/delete erases. Your grants decide what you reach.")


class _Server(MCPServer):
    """MCPServer whose argument errors name fields only. The SDK's own (pydantic's) message for a
    missing argument quotes every argument given (``input_value={...}``): a secret sent under a
    mistyped name came back in the reply."""

    takes: dict[str, tuple[frozenset, frozenset]] = {}  # tool name -> (its argument names, those required)

    async def call_tool(self, name: str, arguments: dict[str, Any], context=None):
        known, required = self.takes.get(name, (None, None))
        if known is not None and isinstance(arguments, dict) and not set(arguments) <= known:
            # An argument the tool does not have (a model asking for sensitivity="restricted", a
            # misspelt top_k) was dropped silently: the call ran on defaults the caller did not ask
            # for. Refused, naming what the tool takes (never the client's names: a key may be a secret).
            missing = sorted(required - set(arguments))
            what = (f"missing: {', '.join(missing)}; " if missing else "") + \
                f"an argument it does not take (it takes {', '.join(sorted(known))})"
            raise ToolError(f"Error executing tool {name}: {tool_error(BadArguments(f'{name}: {what}'))}")
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            if not isinstance(exc.__cause__, ValidationError):
                raise
            errors = exc.__cause__.errors()
            fields = ", ".join(sorted({str(e["loc"][0]) for e in errors if e.get("loc")})) or "its arguments"
            what = "missing" if all(e["type"] == "missing" for e in errors) else "not valid"
            # Worded as the SDK words the other tool errors; field names are ours, never the client's.
            raise ToolError(f"Error executing tool {name}: "
                            f"{tool_error(BadArguments(f'{name}: {what}: {fields}'))}") from None


class TokenFile(TokenVerifier):
    """Bearer tokens checked against the token file's digests (reloaded when the file changes)."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._mtime = None
        self._table: dict[str, str] = {}
        self._reload()

    def _reload(self) -> None:
        m = T.version(self.path)  # a revoked token stops working at the next request
        if m != self._mtime:
            self._table, self._mtime = T.load(self.path), m

    async def verify_token(self, token: str) -> AccessToken | None:
        try:
            self._reload()
        except ConfigError:  # a file gone, broken or opened to others mid-serve: refuse (401), never a 500
            logger.warning("the token file %s cannot be read; every request is refused until it is fixed", self.path)
            return None
        actor = T.actor_of(self._table, token)
        if actor is None:
            return None
        return AccessToken(token=T.digest(token), client_id=actor, scopes=[SCOPE])


def build(rt, *, actor: str | None = None, tokens: str | None = None, host: str = "127.0.0.1",
          port: int = 8765) -> MCPServer:
    """The server over ``rt``: with ``actor``, every call is that actor's (stdio); with
    ``tokens`` (a token file), each HTTP request's bearer token names its actor."""
    if (actor is None) == (tokens is None):
        raise ValueError("give actor (stdio) or tokens (HTTP)")
    tools = MemoryTools(rt)
    verifier = TokenFile(tokens) if tokens is not None else None
    auth = None
    if verifier is not None:
        url = f"http://{host}:{port}"
        # Our verifier is the token's only judge (the tokens are ours, not an authorization server's).
        auth = AuthSettings(issuer_url=url, resource_server_url=f"{url}/mcp", required_scopes=[SCOPE],
                            validate_token_resource=False)
    server = _Server("memactors", instructions=INSTRUCTIONS, token_verifier=verifier, auth=auth, log_level="WARNING")

    def who() -> str:
        if actor is not None:
            return actor
        tok = get_access_token()
        if tok is None:  # the middleware refuses first; this holds if it ever did not
            raise AccessDenied("no bearer token")
        return tok.client_id

    async def call(fn, **kw) -> dict:
        try:
            return await fn(who(), **kw)
        except MemactorsError as exc:
            raise ToolError(tool_error(exc)) from None

    async def remember(text: Text, scope: Opt = None, subject: Opt = None, predicate: Opt = None,
                       object: Opt = None) -> dict:
        """Write a memory (through the write gate) into your home scope or `scope`. A fact may
        name subject, predicate and object: writing the same subject and predicate again makes a
        new version. Returns the gate's decision and the memory id."""
        return await call(tools.remember, text=text, scope=scope, subject=subject, predicate=predicate, object=object)

    async def recall(query: Text, top_k: Count = 5, scopes: Scopes = None, where: Where = None) -> dict:
        """Find memories by meaning in the scopes you may read; each hit has its id, scope,
        content and score. `where` narrows them: subject, predicate, category, source_kind, and
        since / until on when a memory was last written."""
        return await call(tools.recall, query=query, top_k=top_k, scopes=scopes, where=where)

    async def forget(memory_id: Text, reason: Opt = "asked by the agent", erase: Opt = "memory") -> dict:
        """Erase a memory for good (erase="fact": every version of its fact). Not undoable."""
        return await call(tools.forget, memory_id=memory_id, reason=reason, erase=erase)

    async def get(memory_id: Text) -> dict:
        """The live memory with this id, if you may read it."""
        return await call(tools.get, memory_id=memory_id)

    async def list_(scope: Opt = None, limit: Count = 50, offset: Offset = 0) -> dict:
        """Live memories of a scope (default: your home scope), oldest first, a page at a time
        (the next page: offset + limit)."""
        return await call(tools.list, scope=scope, limit=limit, offset=offset)

    for fn, names in ((remember, ("remember", "add")), (recall, ("recall", "search")),
                      (forget, ("forget", "delete")), (get, ("get",)), (list_, ("list",))):
        for name in names:
            server.add_tool(fn, name=name, description=fn.__doc__)
            params = inspect.signature(fn).parameters.values()
            server.takes[name] = (frozenset(p.name for p in params),
                                  frozenset(p.name for p in params if p.default is inspect.Parameter.empty))
    return server


# --- running ----------------------------------------------------------------------------------

# Open sessions one actor may hold at once: the SDK's own limit (10,000) is the server's, so one
# token opening sessions in a loop kept every other agent's new session out until its own idled
# out (30 minutes).
SESSIONS_PER_ACTOR = 64


def cap_sessions(manager, cap: int) -> None:
    """Refuse a session one actor would open past ``cap`` of its own open ones, as the SDK's
    server-wide limit is refused (503 "Too many open sessions"); its open sessions, and other
    actors, are not affected. The SDK's session manager has no per-credential limit: its
    admission step (``_admit_session``, mcp 2.3) is wrapped on this instance, counting the
    sessions it records as opened by the same credential (our token verifier's actor)."""
    admit = manager._admit_session  # noqa: SLF001

    def per_actor(requestor):
        owners = manager._session_owners.values()  # noqa: SLF001
        if requestor is not None and sum(1 for o in owners if o == requestor) >= cap:
            return None
        return admit(requestor)

    manager._admit_session = per_actor  # noqa: SLF001


class HTTPServer:
    """The streamable HTTP app under uvicorn in a thread of this process (the CLI and tests)."""

    def __init__(self, server: MCPServer, host: str = "127.0.0.1", port: int = 0,
                 sessions_per_actor: int = SESSIONS_PER_ACTOR) -> None:
        import uvicorn

        self.sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        # Accepted connections inherit it: a response written in parts otherwise waits ~40 ms on
        # Nagle and the client's delayed ACK (measured: a recall's round trip 52 ms -> 7-10 ms).
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.sock.bind((host, port))
        self.host, self.port = host, self.sock.getsockname()[1]
        # Plain JSON answers: our tools send no notifications mid-call, so no SSE stream is needed
        # (measured: p50 11 -> 7-10 ms, p95 20-25 -> 15-20 ms a recall, the client in its own process).
        app = server.streamable_http_app(host=host, json_response=True)
        cap_sessions(server._lowlevel_server._session_manager, sessions_per_actor)  # noqa: SLF001
        self.uv = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
        self.thread = threading.Thread(target=self.uv.run, kwargs={"sockets": [self.sock]}, daemon=True,
                                       name="memactors-mcp-http")

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}/mcp"

    def start(self) -> HTTPServer:
        import time

        self.thread.start()
        deadline = time.monotonic() + 30
        while not self.uv.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("the MCP HTTP server did not start")
            time.sleep(0.02)
        return self

    def stop(self) -> None:
        self.uv.should_exit = True
        self.thread.join(timeout=10)
        self.sock.close()


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]
