"""L3 retrievers: what a retriever must return (must / must-not), stable ids, scoring with the
memories' function (no Ray); and through ``rt.retrieve`` on ``memory://``, ids that give away
nothing of what the gate redacted."""

import hashlib

import numpy as np
import pytest

import memactors
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
    raising = type("R", (Docs,), {"name": property(lambda self: 1 / 0)})()  # a bad retriever, said as one
    for bad in (object(), type("R", (Docs,), {"name": "Bad Name"})(), type("R", (Docs,), {"name": "x" * 41})(),
                raising):
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


class _Fixed(Retriever):
    name = "handbook"

    def __init__(self, results):
        self.results = results

    def retrieve(self, query, k):
        return self.results


def _blake(label, key):
    return hashlib.blake2b(f"{label}\x00{key}".encode(), digest_size=16).hexdigest()


def test_result_ids_are_keyed_and_never_of_what_the_gate_redacted():
    # A result's id is returned and logged as evidence: a plain hash of its text was matched
    # offline against guesses of the phone number the gate had redacted from what was shown.
    raw = "the refund desk phone is +1 415 555 2671"
    s = "/org/acme/user/alice/"
    with memactors.connect("memory://") as rt:
        rt.grant("ag", s)
        kw = dict(actor="ag", task_id="t", allowed_scopes=[s], purpose="p", threshold=0.0)
        docs = _Fixed([{"content": raw}, {"content": "refunds take 30 days", "id": "policy-7"}])
        res = rt.retrieve(docs, "refund desk phone", **kw)
        hits = {h.content: h.memory_id for h in res.hits}
        assert set(hits) == {"the refund desk phone is [PHONE]", "refunds take 30 days"}
        phone_id, policy_id = hits["the refund desk phone is [PHONE]"], hits["refunds take 30 days"]
        assert phone_id not in (_blake("l3:handbook", raw), _blake("l3:handbook", "the refund desk phone is [PHONE]"))
        assert policy_id != _blake("l3:handbook", "policy-7") and len(policy_id) == 32 and int(policy_id, 16) >= 0
        again = {h.content: h.memory_id for h in rt.retrieve(docs, "refund desk phone", **kw).hits}
        assert again == hits  # still stable: the key is the folder's
        logged = {h["memory_id"] for h in rt.explain(res.recall_id, actor="ag")["hits"]}
        assert logged == {phone_id, policy_id}
        assert rt.mark_cited(res.recall_id, [phone_id], actor="ag") == 1  # citable like a memory
