"""The one Arrow schema, JSON, the embedder (pure, no Ray)."""

import subprocess
import sys

import numpy as np
import orjson
import pytest

from memactors.core import records as R
from memactors.core.errors import InvalidRecord
from memactors.embed import HashEmbedder


def test_schema_is_the_single_definition():
    s = R.memory_schema(8)
    assert s.names == list(R.FIELDS)
    assert s.field("vector").type.list_size == 8
    req = R.WriteRequest("/org/a/user/u/", "hello", "agent").validate()
    rec = R.build_record(req, "hello", R.new_memory_id(), 10)
    tbl = R.to_arrow([rec], np.ones((1, 8), np.float32), 8)
    assert tbl.schema.equals(s, check_metadata=False)
    assert set(orjson.loads(R.to_json(rec))) == set(R.PUBLIC_FIELDS)


@pytest.mark.parametrize(
    "kw",
    [{"confidence": 1.5}, {"source": "rumour"}, {"sensitivity": "top"}, {"pool": "l3"}, {"ttl_days": -1},
     {"subject": "x"}, {"text": ""}, {"text": "x" * 40_000}],
)
def test_bad_writes_are_refused(kw):
    base = dict(scope="/org/a/user/u/", text="hello", actor="agent")
    with pytest.raises(InvalidRecord):
        R.write_request({**base, **kw})


def test_unknown_fields_are_refused():
    with pytest.raises(InvalidRecord):
        R.write_request({"scope": "/org/a/", "text": "x", "actor": "a", "colour": "red"})


def test_embedder_is_deterministic_across_processes():
    e = HashEmbedder(64)
    texts = ["Alice likes green tea", "我喜欢喝绿茶", ""]
    v = e.embed(texts)
    assert v.shape == (3, 64) and v.dtype == np.float32
    assert np.allclose(np.linalg.norm(v[:2], axis=1), 1.0) and not v[2].any()
    code = "from memactors.embed import HashEmbedder; print(HashEmbedder(64).embed(['Alice likes green tea'])[0].tolist())"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert np.allclose(orjson.loads(out), v[0])


def test_a_batch_past_a_chunk_gets_each_texts_own_vector():
    from memactors.embed import hashing

    e = HashEmbedder(32)
    texts = [f"note {i} about tea" if i % 3 else f"第{i}条笔记 İstanbul" for i in range(hashing.CHUNK * 2 + 7)]
    whole = e.embed(texts)
    assert whole.shape == (len(texts), 32)
    for i in (0, 1, hashing.CHUNK - 1, hashing.CHUNK, hashing.CHUNK + 1, len(texts) - 1):
        assert np.array_equal(whole[i], e.embed([texts[i]])[0])


def test_embedder_similarity_makes_sense():
    e = HashEmbedder(384)
    a, b, c = e.embed(["the user dislikes brand X coffee", "user does not like brand X coffee", "flight to Tokyo"])
    assert a @ b > 0.4 > a @ c
    zh = e.embed(["我不喜欢X品牌的咖啡", "我讨厌X品牌咖啡", "明天去东京的航班"])
    assert zh[0] @ zh[1] > 0.3 > zh[0] @ zh[2]
