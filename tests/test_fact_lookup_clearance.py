"""A fact with a live version above a reader's clearance beside one it may see (found by the
governance model's LangGraph store): a lookup by fact answered from the fact's newest live
version only, so a reader not cleared for that one got nothing, about one time in two (the
newest of two versions numbered alike was the one with the higher random id). The store's
``get`` then said the key was empty and its ``delete`` erased nothing, silently."""

from __future__ import annotations

import pytest

import memactors
from memactors import ops as O
from memactors.integrations.langgraph import MemactorsStore

ALICE = "/org/fl/user/alice/"
PHONE = "call me at 13812345600"  # the gate makes such a write confidential


@pytest.fixture
def rt(tmp_path):
    rt = memactors.connect(str(tmp_path / "data"), host="process")
    rt.grant("w1", ALICE, write=True, clearance="internal")
    rt.grant("oracle", ALICE, clearance="restricted")
    yield rt
    rt.close()


def _fact(rt, actor, subject):
    return [m.content for m in rt.batch([O.Lookup(scope=ALICE, actor=actor, facts=[(subject, "likes")])])[0]]


def test_a_reader_gets_the_newest_version_it_may_see(rt):
    for i in range(12):  # the newest of the two was picked by random id: a dozen facts meet both orders
        subject = f"alice{i}"
        rt.write(ALICE, "Alice likes tea", actor="w1", subject=subject, predicate="likes", object="tea")
        # above w1's own clearance once the gate has seen the number: w1 cannot see it, so its
        # next version is numbered as if it were not there, and both stay live
        rt.write(ALICE, f"Alice likes coffee, {PHONE}", actor="w1", subject=subject, predicate="likes",
                 object="coffee")
        rt.write(ALICE, "Alice likes water", actor="w1", subject=subject, predicate="likes", object="water")
        assert _fact(rt, "w1", subject) == ["Alice likes water"], i
        # a reader cleared for both gets the one written last of the two numbered alike
        assert _fact(rt, "oracle", subject) == ["Alice likes water"], i
    rt.grant("low", ALICE, clearance="public")
    assert _fact(rt, "low", "alice0") == []  # both above it


def test_the_store_gets_and_deletes_what_its_actor_may_see(rt):
    store = MemactorsStore(rt, actor="w1", root=ALICE)
    oracle = MemactorsStore(rt, actor="oracle", root=ALICE)
    for i in range(6):
        key = f"k{i}"
        store.put(("n",), key, {"text": "tea"})
        store.put(("n",), key, {"text": f"coffee, {PHONE}"})
        store.put(("n",), key, {"text": "water"})
        assert store.get(("n",), key).value == {"text": "water"}, i
        store.delete(("n",), key)
        assert store.get(("n",), key) is None, i
        # what w1 could not see stays, for those cleared for it (DOCS: versions a writer cannot see)
        left = oracle.get(("n",), key)
        assert left is not None and left.value["text"].startswith("coffee"), i
