"""Embedders: one small protocol, a registry by name, and the dependency-free default."""

from .base import Embedder, get_embedder, register_embedder
from .hashing import HashEmbedder

__all__ = ["Embedder", "HashEmbedder", "get_embedder", "register_embedder"]
