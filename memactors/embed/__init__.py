"""Embedders: one small protocol, a registry by name, and the dependency-free default."""

from .base import Embedder, embedder_names, get_embedder, register_embedder
from .hashing import HashEmbedder
from . import minilm  # noqa: F401 - registers "all-minilm-l6-v2"; its heavy imports wait until it is built
from . import use  # noqa: F401 - registers "use-multilingual-v3"; the model loads when it is built

__all__ = ["Embedder", "HashEmbedder", "embedder_names", "get_embedder", "register_embedder"]
