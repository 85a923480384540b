"""An ``IndexConfig``'s embedder as the runtime's: LangChain ``Embeddings`` (``embed_documents``)
or a function of a list of texts, registered under a name of its own (the registry of
``memactors.embed``), so the store's vectors come from the model the LangGraph user chose.
It lives in this process: a runtime on the process host (or ``memory://``) only."""

from __future__ import annotations

import numpy as np

from ...core.errors import ConfigError
from ...embed import register_embedder


class _Wrapped:
    def __init__(self, name: str, fn, dim: int) -> None:
        self.name, self._fn, self.dim = name, fn, dim

    def embed(self, texts: list[str]) -> np.ndarray:
        out = self._fn(list(texts))
        try:
            with np.errstate(all="ignore"):  # an overflow is a vector that is not finite: the write is refused
                vecs = np.asarray(out, dtype=np.float32).reshape(len(texts), self.dim)
                norms = np.linalg.norm(vecs, axis=1, keepdims=True)
                return vecs / np.where(norms == 0, 1.0, norms)  # unit vectors, as the embedder protocol says
        except (TypeError, ValueError):  # the function's output, not the caller's input: no numpy trace
            raise ConfigError(f"index['embed'] must return, for each text, a list of {self.dim} numbers "
                              f"(index['dims']); for {len(texts)} text(s) it returned {_shape(out)}") from None


def _shape(out) -> str:
    """What an embed function returned, described by its shape, never its values."""
    try:
        a = np.asarray(out, dtype=object)
        kinds = sorted({type(v).__name__ for v in a.ravel()[:64]})
        return f"an array of shape {a.shape}" + (f" of {', '.join(kinds)}" if kinds else "")
    except Exception:  # noqa: BLE001 - anything a user's function may return
        return f"a {type(out).__name__}"


def embedder_config(embed, dims: int) -> dict:
    """``[embedder]`` for a runtime whose embedder is ``embed`` (registered on first use)."""
    if isinstance(embed, str):
        raise ConfigError("a provider string needs langchain's init_embeddings: pass the Embeddings object instead")
    fn = embed.embed_documents if hasattr(embed, "embed_documents") else embed
    if not callable(fn):
        raise ConfigError("index['embed'] is an Embeddings object or a function of a list of texts")
    name = f"langgraph-{type(embed).__module__}.{type(embed).__qualname__}-{dims}".replace("<", "").replace(">", "")
    register_embedder(name, lambda dim, fn=fn, name=name: _Wrapped(name, fn, dim))
    return {"name": name, "dim": int(dims)}


def wraps(embedder, embed) -> bool:
    """Whether a runtime's ``embedder`` is ``embed`` itself (``embedder_config`` made it)."""
    fn = getattr(embed, "embed_documents", embed)
    return isinstance(embedder, _Wrapped) and embedder._fn == fn
