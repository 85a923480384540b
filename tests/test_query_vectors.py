"""Recent queries' vectors (runtime/query_vectors.py), and a batch of recalls served in the
caller's thread (rt.batch's fast path) answering as the loop's path and rt.recall do."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest

import memactors
from memactors import ops as O
from memactors.core.errors import AccessDenied
from memactors.embed.hashing import HashEmbedder
from memactors.runtime.query_vectors import QueryVectors


class Counting(HashEmbedder):
    def __init__(self) -> None:
        super().__init__(64)
        self.calls: list[list[str]] = []

    def embed(self, texts):
        self.calls.append(list(texts))
        return super().embed(texts)


def test_a_query_is_embedded_once_as_the_gate_left_it_and_no_text_is_kept():
    e = Counting()
    qv = QueryVectors(e, lambda q: q.replace("555-0101", "[PHONE]"), keep=2)
    v1 = qv.many(["call 555-0101"])[0]
    assert e.calls == [["call [PHONE]"]]  # the gated text, never the raw one
    assert np.array_equal(qv.many(["call 555-0101"])[0], v1) and len(e.calls) == 1
    assert np.array_equal(v1, HashEmbedder(64).embed(["call [PHONE]"])[0])
    assert all(isinstance(k, bytes) and b"555" not in k for k in qv._vecs)  # digests only
    qv.many(["b", "c"], ["b", "c"])  # the caller's gated texts; one call for both; "call ..." leaves
    assert e.calls[-1] == ["b", "c"] and len(qv._vecs) == 2
    qv.many(["call 555-0101"])
    assert e.calls[-1] == ["call [PHONE]"]


@pytest.fixture(scope="module")
def rt():
    with memactors.connect("memory://") as r:
        r.grant("qa", "/org/qv/user/a/", write=True)
        r.write_many([{"scope": "/org/qv/user/a/", "text": t, "actor": "qa"}
                      for t in ("Alice likes green tea", "Alice hikes in the Alps", "Alice reads poetry")])
        yield r


def _ids(res):
    return [h.memory_id for h in res.hits]


def test_a_batch_of_recalls_here_answers_as_the_loop_and_rt_recall(rt):
    ops = [O.Recall("what does alice drink?", "qa", "t", ["/org/qv/user/a/"], "answer", 3),
           O.Recall("where does alice hike?", "qa", "t", ["/org/qv/user/a/"], "answer", 3)]
    here = rt.batch(ops)
    loop = asyncio.run(rt.abatch(ops))
    one = rt.batch(ops[:1])
    direct = rt.recall("what does alice drink?", actor="qa", allowed_scopes=["/org/qv/user/a/"], task_id="t",
                       purpose="answer", top_k=3)
    assert [_ids(r) for r in here] == [_ids(r) for r in loop]
    assert _ids(one[0]) == _ids(here[0]) == _ids(direct)
    assert len({r.recall_id for r in here + loop + one}) == 5  # each logged as its own recall


def test_a_refused_recall_in_a_batch_here_is_its_own_error(rt):
    ops = [O.Recall("tea", "qa", "t", ["/org/qv/user/a/"], "answer", 3),
           O.Recall("tea", "qa", "t", ["/org/qv/user/b/"], "answer", 3)]
    with pytest.raises(AccessDenied):
        rt.batch(ops)
    ok, bad = rt.batch(ops, return_errors=True)
    assert _ids(ok) and isinstance(bad, AccessDenied)
