"""``MemactorsStore`` beyond LangGraph's own tests (tests/langgraph_vendored): governance as
everywhere (the gate on string leaves, grants, erasure, the ledger, evidence), versions, TTL on
our clock, namespace-to-scope mapping, and a compiled StateGraph whose nodes read and write the
store across two threads, no LLM."""

from __future__ import annotations

import asyncio

import pytest

pytest.importorskip("langgraph.store.base")

from langgraph.store.base import GetOp, PutOp, SearchOp  # noqa: E402

import memactors  # noqa: E402
from memactors import Blocked, ManualClock  # noqa: E402
from memactors.integrations.langgraph import MemactorsStore  # noqa: E402

ROOT = "/org/acme/user/alice/"
NS = ("memories", "alice")


@pytest.fixture(scope="module")
def rt():
    clock = ManualClock()
    with memactors.connect("memory://", clock=clock) as r:
        r.grant("lg", ROOT, write=True)
        r.grant("other", "/org/acme/user/bob/", write=True)
        yield r


@pytest.fixture
def store(rt):
    return MemactorsStore(rt, actor="lg", root=ROOT)


def test_a_second_put_is_a_new_version_and_get_reads_the_live_one(rt, store):
    store.put(NS, "tea", {"text": "Alice drinks lapsang"})
    store.put(NS, "tea", {"text": "Alice drinks sencha now"})
    assert store.get(NS, "tea").value == {"text": "Alice drinks sencha now"}
    versions = [m for m in rt.agent("lg", scopes=[ROOT]).list(limit=None) if '"tea"' in m.content]
    assert len(versions) == 1 and versions[0].version == 2  # the first is superseded, kept in the ledger


def test_string_leaves_pass_the_gate(store):
    store.put(NS, "contact", {"note": "reach her on +1 415 555 2671", "n": 3, "tags": ["x", "email a@b.co"]})
    got = store.get(NS, "contact").value
    assert "415" not in got["note"] and got["n"] == 3 and "a@b.co" not in got["tags"][1]
    with pytest.raises(Blocked) as e:
        store.put(NS, "key", {"deep": {"k": "sk-" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6"}})
    assert "sk-" not in str(e.value) and e.value.gate["decision"] == "blocked"
    assert store.get(NS, "key") is None


def test_keys_and_labels_that_look_like_personal_data_are_refused(store):
    with pytest.raises(memactors.InvalidIdentifier) as e:
        store.put(("users", "alice"), "+14155552671", {"v": 1})
    assert "4155552671" not in str(e.value)


def test_delete_is_erasure(rt, store):
    store.put(NS, "gone", {"text": "to be erased"})
    store.delete(NS, "gone")
    assert store.get(NS, "gone") is None
    assert all(i.key != "gone" for i in store.search(NS, query="to be erased"))
    assert rt.audit.verify()["ok"]


def test_the_store_reaches_only_its_actors_grants(rt):
    with pytest.raises(memactors.AccessDenied):
        MemactorsStore(rt, actor="other", root=ROOT).put(NS, "k", {"v": 1})
    with pytest.raises(memactors.AccessDenied):
        MemactorsStore(rt, actor="lg", root="/org/acme/user/bob/").search(NS, query="anything")


def test_a_query_search_is_a_recall_logged_as_evidence(rt, store):
    store.put(NS, "food", {"text": "Alice loves grilled sardines"})
    hits = store.search(NS, query="grilled sardines")
    assert hits[0].key == "food" and hits[0].score > 0
    rows = rt.audit.sql("select count(*) from recalls where actor = 'lg'", actor="lg")
    assert rows[0][0] >= 1


def test_ttl_is_a_hard_ttl_in_minutes_on_the_runtime_clock(rt, store):
    store.put(NS, "brief", {"text": "a short-lived note"}, ttl=10)
    store.put(NS, "lasting", {"text": "a lasting note"})
    rt.clock.advance(seconds=9 * 60)
    assert store.get(NS, "brief", refresh_ttl=True) is not None  # restarts its ten minutes
    rt.clock.advance(seconds=9 * 60)
    assert store.get(NS, "brief", refresh_ttl=False) is not None
    rt.clock.advance(seconds=2 * 60)
    assert store.get(NS, "brief") is None and store.get(NS, "lasting") is not None
    assert all(i.key != "brief" for i in store.search(NS))
    assert store.sweep_ttl() >= 1


def test_namespaces_can_map_to_scopes(rt):
    rt.grant("multi", "/org/acme/", write=True)
    store = MemactorsStore(rt, actor="multi", root="/org/acme/", scopes=["/org/acme/user/u1/", "/org/acme/user/u2/"],
                           scope_of=lambda ns: f"/org/acme/user/{ns[1]}/")
    store.put(("users", "u1"), "k", {"v": 1})
    store.put(("users", "u2"), "k", {"v": 2})
    assert store.get(("users", "u1"), "k").value == {"v": 1}
    assert rt.agent("multi", scopes=["/org/acme/user/u2/"]).list()[0].scope == "/org/acme/user/u2/"
    assert sorted(store.list_namespaces(prefix=("users",))) == [("users", "u1"), ("users", "u2")]


def test_batch_and_abatch_mix_ops(store):
    out = store.batch([PutOp(NS, "a", {"v": 1}), PutOp(NS, "b", {"v": 2}), GetOp(NS, "a"),
                       SearchOp(NS, filter={"v": {"$gte": 2}})])
    assert out[0] is None and out[2].value == {"v": 1} and [i.key for i in out[3]] == ["b"]

    async def go():
        return await asyncio.gather(*[store.aget(NS, k) for k in ("a", "b", "missing")])
    a, b, missing = asyncio.run(go())
    assert (a.value, b.value, missing) == ({"v": 1}, {"v": 2}, None)


def test_a_compiled_state_graph_reads_and_writes_the_store_across_two_threads(rt):
    from typing import TypedDict

    from langgraph.graph import END, START, StateGraph

    store = MemactorsStore(rt, actor="lg", root=ROOT)

    class State(TypedDict):
        user: str
        said: str
        answer: str

    def remember(state: State, *, store) -> dict:  # no LLM: the node writes what the user said
        store.put(("prefs", state["user"]), "drink", {"text": state["said"]})
        return {}

    def answer(state: State, *, store) -> dict:
        found = store.search(("prefs", state["user"]), query="drink")
        return {"answer": found[0].value["text"] if found else "nothing known"}

    g = StateGraph(State)
    g.add_node("remember", remember)
    g.add_node("answer", answer)
    g.add_edge(START, "remember")
    g.add_edge("remember", "answer")
    g.add_edge("answer", END)
    app = g.compile(store=store)
    out1 = app.invoke({"user": "alice", "said": "Alice drinks oolong", "answer": ""}, {"configurable": {"thread_id": "1"}})
    assert out1["answer"] == "Alice drinks oolong"

    reader = StateGraph(State)
    reader.add_node("answer", answer)
    reader.add_edge(START, "answer")
    reader.add_edge("answer", END)
    out2 = reader.compile(store=store).invoke({"user": "alice", "said": "", "answer": ""},
                                              {"configurable": {"thread_id": "2"}})
    assert out2["answer"] == "Alice drinks oolong"  # another thread, the same memory

    async def both():
        return await app.ainvoke({"user": "alice", "said": "Alice drinks matcha", "answer": ""},
                                 {"configurable": {"thread_id": "3"}})
    assert asyncio.run(both())["answer"] == "Alice drinks matcha"


def test_a_mapped_namespace_is_searched_in_its_own_scope(rt):
    rt.grant("mapper", "/org/acme/", write=True)
    store = MemactorsStore(rt, actor="mapper", root="/org/acme/", scope_of=lambda ns: f"/org/acme/user/{ns[1]}/")
    store.put(("users", "carol", "m"), "k1", {"text": "Carol keeps bees"})
    store.put(("users", "dave", "m"), "k1", {"text": "Dave keeps bees too"})
    assert rt.agent("mapper", scopes=["/org/acme/user/carol/"]).list()[0].scope == "/org/acme/user/carol/"
    hits = store.search(("users", "carol"), query="who keeps bees?")
    assert [h.value["text"] for h in hits] == ["Carol keeps bees"]
    # a partial prefix reads every scope under the store's root that holds memories
    assert {"Carol keeps bees", "Dave keeps bees too"} <= {h.value.get("text") for h in store.search(("users",), query="bees")}
    both = MemactorsStore(rt, actor="mapper", root="/org/acme/", scope_of=lambda ns: f"/org/acme/user/{ns[1]}/",
                          scopes=["/org/acme/user/carol/", "/org/acme/user/dave/"])
    assert sorted(h.value["text"] for h in both.search(("users",), query="who keeps bees?")) == \
        ["Carol keeps bees", "Dave keeps bees too"]
    listed = store.search(("users", "dave", "m"))
    assert [h.value["text"] for h in listed] == ["Dave keeps bees too"]


def test_a_mapped_stores_listing_and_searches_find_every_namespace_it_put(rt):
    # BaseStore's contract: what was put is listed and found, also when scope_of puts each
    # namespace in a scope of its own below the store's root (no scopes= given). Another
    # root's scopes stay out, though the actor may read them.
    rt.grant("teams", "/org/teamco/", write=True)
    rt.grant("teams", "/org/acme/user/erin/", write=True)
    store = MemactorsStore(rt, actor="teams", root="/org/teamco/",
                           scope_of=lambda ns: f"/org/teamco/project/{ns[0]}/")
    store.put(("red", "notes"), "n1", {"text": "the red team meets on Mondays"})
    store.put(("blue", "notes"), "n1", {"text": "the blue team meets on Fridays"})
    MemactorsStore(rt, actor="teams", root="/org/acme/user/erin/").put(("erin",), "n1", {"text": "erin meets the team"})
    assert store.list_namespaces() == [("blue", "notes"), ("red", "notes")]
    assert store.list_namespaces(prefix=("red",)) == [("red", "notes")]
    assert sorted(i.value["text"] for i in store.search(())) == ["the blue team meets on Fridays",
                                                                 "the red team meets on Mondays"]
    assert sorted(i.value["text"] for i in store.search((), query="when does the team meet?")) == \
        ["the blue team meets on Fridays", "the red team meets on Mondays"]
    assert asyncio.run(store.alist_namespaces()) == [("blue", "notes"), ("red", "notes")]


def test_a_search_scores_by_the_cosine_of_the_best_indexed_field(rt):
    """LangGraph's score: cosine of the query to the best field text, the runtime's embedder's
    vectors when the index names none; ordered by it; only what the recall let through."""
    import json

    import numpy as np

    store = MemactorsStore(rt, actor="lg", root=ROOT, index={"dims": 384, "fields": ["title", "body"]})
    ns = ("scored",)
    store.put(ns, "a", {"title": "green tea in kyoto", "body": "a long note about trains"})
    store.put(ns, "b", {"title": "mountain trains", "body": "green tea in kyoto"})
    store.put(ns, "c", {"other": "green tea in kyoto"})  # no indexed field: scored 0
    store.put(ns, "d", {"title": "green tea in kyoto"}, index=False)  # unindexed: last, unscored
    out = store.search(ns, query="green tea in kyoto", limit=10)
    e = rt.embedder
    q = e.embed(["green tea in kyoto"])[0]

    def best(*texts):
        return max(float(np.dot(v, q)) for v in e.embed(list(texts)))

    got = {i.key: i.score for i in out}
    assert got["a"] == pytest.approx(best("green tea in kyoto", "a long note about trains"), abs=1e-5)
    assert got["b"] == pytest.approx(best("mountain trains", "green tea in kyoto"), abs=1e-5)
    assert got["a"] == pytest.approx(1.0, abs=1e-5) and got["b"] == pytest.approx(1.0, abs=1e-5)
    assert got["c"] == 0.0 and got["d"] is None
    assert [i.key for i in out][-1] == "d"
    scored = [i.score for i in out if i.score is not None]
    assert scored == sorted(scored, reverse=True)
    # the whole value (the default "$") is LangGraph's JSON text of it
    plain = MemactorsStore(rt, actor="lg", root=ROOT)
    value = {"text": "Alice drinks matcha"}
    plain.put(("plain",), "m", value)
    (hit,) = plain.search(("plain",), query="matcha")
    v = e.embed([json.dumps(value, sort_keys=True, ensure_ascii=False)])[0]
    assert hit.score == pytest.approx(float(np.dot(v, e.embed(["matcha"])[0])), abs=1e-5)
    # another actor's items never appear, whatever their score
    other = MemactorsStore(rt, actor="other", root="/org/acme/user/bob/")
    other.put(ns, "z", {"title": "green tea in kyoto"})
    assert "z" not in {i.key for i in store.search(ns, query="green tea in kyoto")}


def test_query_search_pages_neither_repeat_nor_skip():
    """Pages of one query search, ordered by similarity, cover the same results as one page,
    also where the recall's own ranking differs (here it weighs recency most; similarity does not)."""
    clock = ManualClock()
    cfg = {"recall": {"weights": [0.1, 0.1, 0.8, 0.0]}}  # vector, keyword, recency, importance
    with memactors.connect("memory://", clock=clock, config=cfg) as r:
        r.grant("lg", ROOT, write=True)
        store = MemactorsStore(r, actor="lg", root=ROOT, index={"dims": 384, "fields": ["title"]},
                               scope_of=lambda ns: ROOT)  # a namespace with a scope of its own: no wider window
        ns = ("paged",)
        words = ["maple", "copper", "violet", "harbor", "lantern", "meadow", "falcon", "pebble", "cinder", "orchid",
                 "tundra", "marble", "willow", "saffron", "glacier", "thistle", "ember", "juniper", "quartz", "heron",
                 "cobalt", "fennel", "garnet", "hazel", "indigo", "jasper", "kestrel", "lichen", "mango", "nutmeg"]
        for i, w in enumerate(words):
            title = f"tea in the alps with {w}" if i < 15 else f"{w} {words[i - 15]} tea and mountains"
            store.put(ns, f"k{i}", {"title": title})
            clock.advance(days=2)  # the later, less similar ones are the recent ones
        whole = [(i.key, i.score) for i in store.search(ns, query="tea in the alps", limit=30)]
        pages = [(i.key, i.score) for off in range(0, 30, 4)
                 for i in store.search(ns, query="tea in the alps", limit=4, offset=off)]
    assert pages == whole and len({k for k, _ in whole}) == 30
    assert [s for _, s in whole] == sorted((s for _, s in whole), reverse=True)


def test_one_indexed_text_is_the_records_vector_and_older_items_still_score():
    """A put whose value has one indexed text is written with it as its ``embed_text``: the
    recall's similarity is the score. An item written before (its record's vector of the whole
    item) is scored from its field text as before; both in similarity order."""
    import numpy as np
    import orjson

    from memactors.integrations.langgraph import mapping as M

    with memactors.connect("memory://", clock=ManualClock()) as r:
        r.grant("lg", ROOT, write=True)
        store = MemactorsStore(r, actor="lg", root=ROOT, index={"dims": 384, "fields": ["title"]})
        ns = ("one",)
        store.put(ns, "new", {"title": "oolong from taiwan", "n": 1})
        old = {"title": "oolong tea from taiwan hills"}
        legacy = store._agent.write_op(M.content_of(ns, "old", old, None, True, None), subject=M.subject_of(ns),
                                       predicate=M.predicate_of(ns, "old"), source="agent_inferred",
                                       context=M.index_text(M.field_texts(old, ["title"]), ["title"]))
        assert r.batch([legacy])[0].memory_id
        items = {orjson.loads(m.content)["key"]: orjson.loads(m.content) for m in store._agent.list(limit=None)}
        assert items["new"].get("embedded") is True and "embedded" not in items["old"]
        e = r.embedder
        q = e.embed(["oolong from taiwan"])[0]
        out = store.search(ns, query="oolong from taiwan")
        got = {i.key: i.score for i in out}
        assert got["new"] == pytest.approx(float(e.embed(["oolong from taiwan"])[0] @ q), abs=1e-5)
        assert got["old"] == pytest.approx(float(e.embed(["oolong tea from taiwan hills"])[0] @ q), abs=1e-5)
        assert [i.key for i in out] == ["new", "old"]
        # a store with its own embedder (not the runtime's) never takes the record's similarity
        own = MemactorsStore(r, actor="lg", root=ROOT,
                             index={"dims": 384, "fields": ["title"], "embed": lambda ts: [[1.0] * 384 for _ in ts]})
        assert all(i.score == pytest.approx(1.0) for i in own.search(ns, query="anything"))
        assert np.isfinite(q).all()


def test_a_ttl_of_zero_minutes_is_expired_once_put(rt, store):
    store.put(NS, "gone", {"text": "expired as it is put"}, ttl=0)
    rt.clock.advance(seconds=0.001)  # the runtime's clock (manual here) is a microsecond on
    assert store.get(NS, "gone") is None and all(i.key != "gone" for i in store.search(NS))
    assert store._stored(NS, "gone") is not None  # noqa: SLF001 - held until a sweep takes it
    store.sweep_ttl()
    assert store._stored(NS, "gone") is None  # noqa: SLF001


def test_an_item_without_a_ttl_lives_until_deleted():
    """LangGraph's item has no lifetime but its TTL: no category's soft or hard expiry applies."""
    clock = ManualClock()
    with memactors.connect("memory://", clock=clock) as r:
        r.grant("lg", ROOT, write=True)
        store = MemactorsStore(r, actor="lg", root=ROOT)
        store.put(("keep",), "k", {"text": "Alice keeps a teapot"})
        clock.advance(days=800)
        assert store.sweep_ttl() == 0
        assert not any(r.gc(scope=ROOT).by_rule.values())  # neither expired nor soft-expired and unused
        assert store.get(("keep",), "k").value == {"text": "Alice keeps a teapot"}
        (hit,) = store.search(("keep",), query="teapot")
        rec = store._stored(("keep",), "k")
        assert hit.key == "k" and rec.hard_expires_at is None


def test_a_refresh_rewrites_the_item_as_it_was_put():
    """Reading with refresh_ttl writes the item again with its own index (fields or index=False)."""
    import orjson

    clock = ManualClock()
    with memactors.connect("memory://", clock=clock) as r:
        r.grant("lg", ROOT, write=True)
        store = MemactorsStore(r, actor="lg", root=ROOT, index={"dims": 384, "fields": ["body"]})
        store.put(("rf",), "own", {"title": "pu-erh cakes", "body": "stored in a cellar"}, index=["title"], ttl=10)
        store.put(("rf",), "none", {"title": "pu-erh cakes", "body": "stored in a cellar"}, index=False, ttl=10)

        def held():
            return {orjson.loads(m.content)["key"]: orjson.loads(m.content) for m in store._agent.list(limit=None)}

        before = held()
        clock.advance(seconds=5 * 60)
        assert store.get(("rf",), "own", refresh_ttl=True) and store.get(("rf",), "none", refresh_ttl=True)
        after = held()
        assert after["own"]["fields"] == ["title"] and after["own"].get("embedded") is True
        assert after["none"]["indexed"] is False and "embedded" not in after["none"]
        assert {k: v["value"] for k, v in after.items()} == {k: v["value"] for k, v in before.items()}
        clock.advance(seconds=7 * 60)  # 12 minutes after the put, 7 after the refresh
        (hit,) = [i for i in store.search(("rf",), query="pu-erh cakes") if i.key == "own"]
        assert hit.score == pytest.approx(1.0, abs=1e-5)  # its one indexed text is the query's


def test_the_async_store_refuses_its_sync_methods_on_the_loop_and_the_sync_store_serves_them(rt):
    from memactors.integrations.langgraph import AsyncMemactorsStore

    astore = AsyncMemactorsStore(rt, actor="lg", root=ROOT)
    store = MemactorsStore(rt, actor="lg", root=ROOT)

    async def main():
        for call in (lambda: astore.put(("aio",), "k", {"v": 1}), lambda: astore.get(("aio",), "k"),
                     lambda: astore.search(("aio",), query="v"), lambda: astore.delete(("aio",), "k"),
                     lambda: astore.list_namespaces(prefix=("aio",)), lambda: astore.batch([GetOp(("aio",), "k")])):
            with pytest.raises(asyncio.InvalidStateError):
                call()
        await astore.aput(("aio",), "k", {"v": 2})
        assert (await astore.aget(("aio",), "k")).value == {"v": 2}
        # off the loop's thread the sync methods serve; MemactorsStore serves them on it (a notebook)
        assert (await asyncio.to_thread(astore.get, ("aio",), "k")).value == {"v": 2}
        assert store.get(("aio",), "k").value == {"v": 2}

    asyncio.run(main())
    assert astore.get(("aio",), "k").value == {"v": 2}  # no loop here: served


def test_a_number_leaf_the_gate_redacts_comes_back_as_its_placeholder(store):
    """The gate reads the item as JSON text: a phone or card number given as a number is kept as
    its placeholder, and the item still reads back (get, search, namespaces), that leaf a str."""
    store.put(("contacts",), "alice", {"name": "Alice", "mobile": 13812345678, "visits": 3})
    store.put(("contacts",), "bob", {"card": 4111111111111111, "rank": [1, 2]})
    assert store.get(("contacts",), "alice").value == {"name": "Alice", "mobile": "[PHONE_CN]", "visits": 3}
    assert store.get(("contacts",), "bob").value == {"card": "[BANK_CARD]", "rank": [1, 2]}
    assert {i.key for i in store.search(("contacts",))} == {"alice", "bob"}
    assert ("contacts",) in store.list_namespaces()


@pytest.mark.parametrize("value", [{"a": b"x"}, {"a": {1, 2}}, {"a": object()}, {"a": {2: "x", "3": "y"}},
                                   [1, 2], "a string", 5, [("a", 1)]])
def test_a_value_that_is_not_json_is_refused_typed_and_stores_nothing(store, value):
    from memactors.core.errors import InvalidRecord

    with pytest.raises(InvalidRecord):
        store.put(("bad",), "k", value)
    assert store.get(("bad",), "k") is None


@pytest.mark.parametrize("value", [
    {"alice@example.com": "tea", "bob@example.org": "coffee"},  # both read back as "[EMAIL]"
    {"[EMAIL]": "a placeholder as a key", "carol@example.net": "tea"},
    {"notes": [{"+44 20 7946 0958": 1, "+44 20 7946 0959": 2}]},  # nested in a list
    {1: "an int key", "1": "a str key"},  # orjson writes both as "1"
])
def test_keys_that_would_be_stored_as_one_are_refused_and_store_nothing(store, value):
    """The item is stored as JSON text the gate redacts: two keys of one object that read the
    same afterwards would leave one of them, the other lost without a word."""
    from memactors.core.errors import InvalidRecord

    store.put(("clash",), "k", {"kept": 1})
    with pytest.raises(InvalidRecord, match="stored as one"):
        store.put(("clash",), "k", value)
    assert store.get(("clash",), "k").value == {"kept": 1}


def test_keys_that_stay_apart_are_stored(store):
    store.put(("apart",), "one", {"alice@example.com": "tea", "note": "a single address key is redacted"})
    assert store.get(("apart",), "one").value == {"[EMAIL]": "tea", "note": "a single address key is redacted"}
    store.put(("apart",), "nested", {"a": {"a": 1}, "b": [{"a": 2}, {"a": 3}], "c": {2: "x", 3: "y"}})
    assert store.get(("apart",), "nested").value == {"a": {"a": 1}, "b": [{"a": 2}, {"a": 3}], "c": {"2": "x", "3": "y"}}


@pytest.mark.parametrize("page", [{"limit": -1}, {"offset": -1}, {"limit": 1.5}])
def test_a_page_is_counted_from_the_start_or_refused(store, page):
    from memactors.core.errors import InvalidRecord

    store.put(("pages",), "k", {"text": "a page of notes"})
    with pytest.raises(InvalidRecord):
        store.search(("pages",), **page)
    with pytest.raises(InvalidRecord):
        store.list_namespaces(**page)
    assert len(store.search(("pages",), limit=0)) == 0 and len(store.search(("pages",))) == 1


@pytest.mark.parametrize("value", [{"a": float("nan")}, {"a": [1.0, float("inf")]}, {"a": {"b": -float("inf")}}])
def test_nan_and_infinities_are_refused_not_stored_as_null(store, value):
    from memactors.core.errors import InvalidRecord

    with pytest.raises(InvalidRecord):
        store.put(("nan",), "k", value)
    assert store.get(("nan",), "k") is None
    store.put(("nan",), "none", {"a": None, "b": 1.5})  # a real null still goes through
    assert store.get(("nan",), "none").value == {"a": None, "b": 1.5}


def test_a_signed_or_float_number_the_gate_redacts_still_reads_back(store):
    store.put(("contacts",), "float", {"mobile": 13812345678.0, "n": 2})
    store.put(("contacts",), "neg", {"mobile": -13812345678, "rank": [1, -2.5e3]})
    f, n = store.get(("contacts",), "float"), store.get(("contacts",), "neg")
    assert f is not None and n is not None  # not silently lost: the item parses
    assert "[PHONE_CN]" in f.value["mobile"] and "13812345678" not in f.value["mobile"] and f.value["n"] == 2
    assert "[PHONE_CN]" in n.value["mobile"] and n.value["rank"] == [1, -2.5e3]
    assert {"float", "neg"} <= {i.key for i in store.search(("contacts",))}


@pytest.mark.parametrize("ttl", ["5", [5], -1])
def test_a_ttl_that_is_not_minutes_is_refused_typed(store, ttl):
    from memactors.core.errors import InvalidRecord

    with pytest.raises(InvalidRecord):
        store.put(("ttl",), "k", {"v": 1}, ttl=ttl)
    assert store.get(("ttl",), "k") is None


def test_a_blocked_put_in_a_batch_still_leaves_the_batchs_deletes_done(store):
    store.put(("mixed",), "old", {"v": "to be deleted"})
    secret = "sk-" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6"
    with pytest.raises(Blocked):
        store.batch([PutOp(("mixed",), "bad", {"k": secret}), PutOp(("mixed",), "new", {"v": "kept"}),
                     PutOp(("mixed",), "old", None)])
    assert store.get(("mixed",), "bad") is None and store.get(("mixed",), "new") is not None
    assert store.get(("mixed",), "old") is None  # as the batch's other puts were stored, its delete was done


def test_a_blocked_put_in_a_batch_names_its_position_and_says_the_others_stand(rt, store):
    """The error once said "nothing was stored" and named no put, while the batch's other puts
    were stored: it names the blocked put's position and says the others were applied."""
    secret = {"note": "aws key AKIAQYLPMN5HFTXW7Z3B secret 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"}
    with pytest.raises(Blocked) as e:
        store.batch([PutOp(("bt",), "one", {"v": "first fine"}), PutOp(("bt",), "two", secret),
                     PutOp(("bt",), "three", {"v": "third"}), GetOp(("bt",), "one")])
    msg = str(e.value)
    assert "position 1 of the batch" in msg and "other 2 puts" in msg and "were applied" in msg
    assert "nothing was stored" not in msg and "did not run" in msg and "AKIA" not in msg
    assert e.value.gate["decision"] == "blocked"
    assert sorted(i.key for i in store.search(("bt",))) == ["one", "three"]  # what it says: the others stand
    with pytest.raises(Blocked, match="nothing was stored"):  # a put alone: nothing of it was stored
        store.put(("bt",), "four", secret)
    assert store.get(("bt",), "four") is None


def test_the_last_put_wins_after_a_repeated_put_or_a_refresh(store):
    """A repeated put and a read's refresh renew the live version (raising its confidence): a
    newer put must still replace it, as in every LangGraph store."""
    store.put(("lw",), "same", {"v": "a"})
    store.put(("lw",), "same", {"v": "a"})
    store.put(("lw",), "same", {"v": "b"})
    assert store.get(("lw",), "same").value == {"v": "b"}
    store.put(("lw",), "read", {"v": 0}, ttl=60)
    for i in range(1, 4):
        assert store.get(("lw",), "read", refresh_ttl=True).value == {"v": i - 1}
        store.put(("lw",), "read", {"v": i}, ttl=60)
    assert store.get(("lw",), "read", refresh_ttl=False).value == {"v": 3}


def test_a_refresh_racing_a_newer_put_never_writes_the_older_value_back(rt):
    """A thread's get(refresh_ttl=True) read v1; another thread's put of v2 lands before the
    refresh is written: the refresh loses to it."""
    store = MemactorsStore(rt, actor="lg", root=ROOT)
    store.put(("race",), "k", {"v": 1}, ttl=60)
    plain = store._call

    async def put_first_then(ops, **kw):
        if kw.get("return_errors"):  # the refresh: another writer's put gets in before it
            await MemactorsStore(rt, actor="lg", root=ROOT).aput(("race",), "k", {"v": 2}, ttl=60)
        return await plain(ops, **kw)

    store._call = put_first_then
    assert store.get(("race",), "k", refresh_ttl=True).value == {"v": 1}
    store._call = plain
    assert store.get(("race",), "k", refresh_ttl=False).value == {"v": 2}


@pytest.mark.parametrize("vector, error", [
    ([float("nan")] + [1.0] * 7, "InvalidRecord"),  # a model that overflows on one input
    ([1e308] * 8, "InvalidRecord"),  # infinite once float32
    ([1.0] * 5, "ConfigError"),  # another dimension than index["dims"]
    (None, "ConfigError"),
    (["a"] * 8, "ConfigError"),
])
def test_an_embed_function_that_returns_no_usable_vector_refuses_the_put_and_writes_nothing(tmp_path, vector, error):
    # A NaN vector was stored: every L2 flush of the folder failed from then on, also after a reopen.
    def embed(texts):
        return [[1.0] * 8 if "fine" in t else vector for t in texts]

    index = {"dims": 8, "embed": embed, "fields": ["text"]}
    store = MemactorsStore.connect(str(tmp_path / "d"), actor="lg", root=ROOT, index=index)
    store.put(("n",), "good", {"text": "a fine note"})
    with pytest.raises(memactors.MemactorsError) as e:
        store.put(("n",), "bad", {"text": "this one is not"})
    assert type(e.value).__name__ == error and store.get(("n",), "bad") is None
    store._rt.flush()  # noqa: SLF001 - L2 takes the rest
    assert store._rt.audit.verify()["ok"]  # noqa: SLF001
    store.close()
    store = MemactorsStore.connect(str(tmp_path / "d"), actor="lg", root=ROOT, index=index)
    assert [i.key for i in store.search(("n",), query="a fine note")] == ["good"]
    store.close()


def test_a_filtered_query_search_finds_a_match_beyond_the_first_window(rt):
    """A query search with a filter ranked only its best 100 by similarity and missed a match
    outside them ([] where InMemoryStore finds it): it widens until enough pass or the scope
    has no more (up to MAX_SEARCH_WINDOW), sync and async, and a page deep in the matches too."""
    from memactors.integrations.langgraph import store as S

    rt.grant("wide", "/org/acme/user/wide/", write=True)
    st = MemactorsStore(rt, actor="wide", root="/org/acme/user/wide/")
    st.batch([PutOp(("w",), f"k{i}", {"text": f"note number {i} about tea", "flag": i == 7, "odd": i % 2})
              for i in range(400)])
    assert 400 > getattr(S, "NARROW_WINDOW", 100)
    assert [i.key for i in st.search(("w",), query="note about tea", filter={"flag": True})] == ["k7"]
    assert [i.key for i in asyncio.run(st.asearch(("w",), query="note about tea", filter={"flag": True}))] == ["k7"]
    got = st.search(("w",), query="note about tea", filter={"odd": 1}, limit=50, offset=150)
    assert len(got) == 50 and all(i.value["odd"] == 1 for i in got)  # matches 150-199 of the 200
    assert st.search(("w",), query="note about tea", filter={"flag": "never"}) == []  # the scope ran out: ends
    assert [i.key for i in st.search(("w",), query="note about tea", filter={"flag": True}, limit=1)] == ["k7"]


def test_non_json_values_and_names_the_store_cannot_hold_are_refused_in_its_own_terms(rt, store):
    """A datetime or UUID leaf was stored as a str with index=False and refused as "objects must
    be keyed by str" with the default index; a lone surrogate in a key as "value must be
    JSON-serialisable"; a value over 32,000 characters and a key over 500 in the runtime's words
    ("write at position 0: predicate has 612 characters"). Each is InvalidRecord saying what is
    wrong, and nothing is stored."""
    import datetime
    import uuid

    from memactors.core.errors import InvalidRecord
    from memactors.integrations.langgraph import mapping as M

    rt.flush()
    seq = rt.audit.head()["seq"]
    ns = ("nj",)
    for index in ({}, {"index": False}, {"index": ["t"]}):
        for leaf in (datetime.datetime(2020, 1, 1), uuid.UUID(int=5), b"x", {1, 2}):
            with pytest.raises(InvalidRecord, match=r"value must be JSON: .* is not a JSON value") as e:
                store.put(ns, "k", {"t": "x", "deep": [{"when": leaf}]}, **index)
            assert "2020" not in str(e.value) and "0005" not in str(e.value)
    with pytest.raises(InvalidRecord, match=r"a key has a lone surrogate"):
        store.put(ns, "\ud800", {"v": 1})
    with pytest.raises(InvalidRecord, match=r"a namespace label has a lone surrogate"):
        store.put(("nj\ud800",), "k", {"v": 1})
    with pytest.raises(InvalidRecord, match=r"a string in a LangGraph value has a lone surrogate"):
        store.put(ns, "k", {"v": "a\ud800"})
    with pytest.raises(InvalidRecord, match=r"stored as JSON of at most 32,000 characters .* this one has 40,0"):
        store.put(ns, "k", {"v": "x" * 40_000})
    with pytest.raises(InvalidRecord, match=r"a key has 501 characters, more than the 500 allowed"):
        store.put(ns, "k" * 501, {"v": 1})
    with pytest.raises(InvalidRecord, match=r"a namespace is stored as its labels joined by '/': at most 512"):
        store.put(("n" * 300, "m" * 300), "k", {"v": 1})
    rt.flush()
    assert rt.audit.head()["seq"] == seq and store.search(ns) == []  # nothing was written
    assert M.MAX_KEY_CHARS == 500 and M.MAX_ITEM_CHARS == 32_000
    store.put(ns, "k" * 500, {"v": (1, 2), "n": None, "f": 1.5, "b": True, "s": "x" * 31_000})  # the limits hold
    assert store.get(ns, "k" * 500).value["v"] == [1, 2]


@pytest.mark.parametrize("ops", [None, 5, 1.5, object(), "put", {"op": 1}])
def test_a_batch_that_is_no_list_of_ops_is_refused_typed(store, ops):
    with pytest.raises(memactors.BadArguments):  # a TypeError too, as LangGraph's own stores raise
        store.batch(ops)


@pytest.mark.parametrize("op", [None, 5, "get", GetOp(NS, "\ud800"), GetOp(NS, 5), GetOp(5, "k"),
                                GetOp({"a": 1}, "k"), SearchOp(NS, query=5), SearchOp(NS, filter=["a"]),
                                SearchOp(None)])
def test_an_op_the_store_cannot_read_is_refused_typed_and_nothing_of_the_batch_runs(store, op):
    with pytest.raises(memactors.InvalidRecord):  # a ValueError too
        store.batch([PutOp(("typed", "alice"), "first", {"text": "Alice likes tea"}), op])
    assert store.get(("typed", "alice"), "first") is None
    with pytest.raises(memactors.InvalidRecord):
        asyncio.run(store.abatch([op]))


@pytest.mark.parametrize("depth", ["x", -1, 1.5, {}])
def test_a_listing_depth_that_is_no_count_is_refused_typed(store, depth):
    with pytest.raises(memactors.InvalidRecord):
        store.list_namespaces(max_depth=depth)


def test_a_namespace_given_as_a_list_reads_as_its_tuple(store):
    store.batch([PutOp(["listed", "alice"], "k", {"text": "Alice likes green tea"})])
    item = store.batch([GetOp(["listed", "alice"], "k")])[0]
    assert item.value == {"text": "Alice likes green tea"} and item.namespace == ("listed", "alice")
    assert store.list_namespaces(prefix=("listed",), max_depth=1) == [("listed",)]
