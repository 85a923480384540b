"""The embedder protocol. A store records its embedder's name and dimension in table metadata."""

from __future__ import annotations

from typing import Callable, Protocol

import numpy as np

from ..core.errors import ConfigError


class Embedder(Protocol):
    name: str
    dim: int

    def embed(self, texts: list[str]) -> np.ndarray:
        """Return float32 unit vectors, shape (len(texts), dim)."""
        ...


_REGISTRY: dict[str, Callable[[int], Embedder]] = {}


def register_embedder(name: str, factory: Callable[[int], Embedder]) -> None:
    _REGISTRY[name] = factory


def embedder_names() -> tuple[str, ...]:
    """The registered embedder names, sorted (for ``Config.from_dict(..., embedders=...)``).
    The registry holds factories only: listing it loads no model."""
    return tuple(sorted(_REGISTRY))


def get_embedder(name: str, dim: int) -> Embedder:
    try:
        factory = _REGISTRY[name]
    except KeyError:
        raise ConfigError(f"unknown embedder {name!r}; known: {sorted(_REGISTRY)}") from None
    return factory(dim)
