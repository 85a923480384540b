"""The memory as MCP tools (``memactors mcp``; ``pip install 'memactors[mcp]'``)."""

try:
    import mcp.server.mcpserver  # noqa: F401
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError("memactors.integrations.mcp needs the MCP SDK 2.x: pip install 'memactors[mcp]'") from exc

from .server import SESSIONS_PER_ACTOR, HTTPServer, TokenFile, build, free_port
from .tokens import mint

__all__ = ["SESSIONS_PER_ACTOR", "HTTPServer", "TokenFile", "build", "free_port", "mint"]
