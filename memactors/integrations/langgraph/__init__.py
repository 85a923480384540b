"""LangGraph's store over memactors: ``MemactorsStore``, and ``AsyncMemactorsStore`` for async code
(``pip install 'memactors[langgraph]'``)."""

try:
    from langgraph.store.base import BaseStore  # noqa: F401
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError("memactors.integrations.langgraph needs LangGraph: pip install 'memactors[langgraph]'") from exc

from .store import AsyncMemactorsStore, MemactorsStore

__all__ = ["AsyncMemactorsStore", "MemactorsStore"]
