"""L3 retrievers, the pure part: what a retriever must return (must / must-not), stable ids,
scoring with the memories' function (no Ray)."""

import numpy as np
import pytest

from memactors import InvalidRecord, Retriever
from memactors.core import retriever as L3


class Docs(Retriever):
    name = "handbook"

    def retrieve(self, query, k):
        return []


@pytest.mark.parametrize("bad", [
    None, "text", {"content": "x"}, [{"content": ""}], [{"text": "x"}], [{"content": 5}],
    [{"content": "x" * 100_000}], [{"content": "x", "importance": 2}], [{"content": "x", "importance": True}],
    [{"content": "x", "updated_at": 1.5}], [{"content": "x", "id": 7}], [{"content": "x"}] * 6,
])
def test_bad_results_are_refused_without_echoing(bad):
    with pytest.raises(InvalidRecord) as e:
        L3.check_results(bad, 5)
    assert "xxxx" not in str(e.value)


def test_good_results_pass():
    out = L3.check_results([{"content": "Refunds within 30 days", "id": "p1", "importance": 0.9,
                             "updated_at": 10}, {"content": "Shipping is free"}], 5)
    assert [r["importance"] for r in out] == [0.9, 0.5] and out[1]["updated_at"] is None


def test_labels_and_ids():
    assert L3.label(Docs()) == "l3:handbook"
    for bad in (object(), type("R", (Docs,), {"name": "Bad Name"})(), type("R", (Docs,), {"name": "x" * 41})()):
        with pytest.raises(InvalidRecord):
            L3.label(bad)
    a = L3.result_id("l3:handbook", {"id": "p1", "content": "a"})
    assert a == L3.result_id("l3:handbook", {"id": "p1", "content": "b"}) != L3.result_id("l3:other", {"id": "p1"})
    assert len(a) == 32 and int(a, 16) >= 0


def test_scored_like_memories_best_first():
    res = L3.check_results([{"content": "refund policy: 30 days"}, {"content": "office opening hours"}], 5)
    vecs = np.eye(2, 4, dtype=np.float32)
    out = L3.score_results("l3:handbook", res, [r["content"] for r in res], vecs[0], vecs, "refund policy", 0)
    assert [h["content"] for h in out] == ["refund policy: 30 days", "office opening hours"]
    assert out[0]["scope"] == "l3:handbook" and out[0]["pool"] == "l3"
    assert set(out[0]["components"]) == {"vector", "keyword", "recency", "importance"}
    assert out[0]["components"]["keyword"] > 0 == out[1]["components"]["keyword"]
