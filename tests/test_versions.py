"""Versions and dedup decisions (pure, no Ray)."""

from memactors.core import records as R
from memactors.core.versions import ScopeState, decide_write

S = "/org/a/user/u/"


def rec(text, subject=None, predicate=None, obj=None, confidence=1.0, now=1):
    req = R.WriteRequest(S, text, "agent", subject=subject, predicate=predicate, object=obj,
                         confidence=confidence).validate()
    return R.build_record(req, text, R.new_memory_id(), now)


def write(state, r, now=1):
    d = decide_write(state, r, now)
    for x in d.records:
        state.put(x)
    return d


def test_seed_000_story_only_newest_highest_confidence_is_active():
    st = ScopeState()
    d1 = write(st, rec("dislikes brand X", "user", "brand_x_opinion", "dislikes"))
    d2 = write(st, rec("not considering the category at all", "user", "brand_x_opinion", "not considering"))
    d3 = write(st, rec("likes brand X's new series", "user", "brand_x_opinion", "likes new series"))
    assert [d1.decision, d2.decision, d3.decision] == [R.ACCEPTED, R.SUPERSEDED_PREVIOUS, R.SUPERSEDED_PREVIOUS]
    assert [d.record["version"] for d in (d1, d2, d3)] == [1, 2, 3]
    assert d3.record["supersedes"] == d2.record["memory_id"]
    assert [r["content"] for r in st.live()] == ["likes brand X's new series"]


def test_lower_confidence_is_kept_as_superseded():
    st = ScopeState()
    write(st, rec("likes tea", "user", "drink", "tea", confidence=0.9))
    d = write(st, rec("likes coffee", "user", "drink", "coffee", confidence=0.5))
    assert d.decision == R.KEPT_AS_SUPERSEDED and d.record["status"] == "superseded"
    assert d.record["version"] == 2
    assert [r["content"] for r in st.live()] == ["likes tea"]
    d = write(st, rec("likes water", "user", "drink", "water", confidence=0.95))
    assert d.record["version"] == 3  # versions never repeat, even after a kept-as-superseded one


def test_text_dedup_on_normalised_content():
    st = ScopeState()
    d1 = write(st, rec("Alice  likes GREEN tea."))
    d2 = write(st, rec("alice likes green tea"), now=5)
    assert d2.decision == R.REFRESHED and d2.record["memory_id"] == d1.record["memory_id"]
    assert d2.record["updated_at"] == 5
    assert len(st.live()) == 1


def test_same_entity_same_object_refreshes():
    st = ScopeState()
    write(st, rec("likes tea", "user", "drink", "tea"))
    d = write(st, rec("likes tea", "user", "drink", "tea"))
    assert d.decision == R.REFRESHED and len(st.live()) == 1


def test_a_new_version_inherits_the_ttl_policy_and_a_refresh_restarts_it():
    day = 86_400_000_000
    st = ScopeState()
    req = R.WriteRequest(S, "likes tea", "agent", subject="user", predicate="drink", object="tea", ttl_days=10,
                         soft_ttl_days=2).validate()
    first = write(st, R.build_record(req, "likes tea", R.new_memory_id(), 0), now=0).record
    assert first["hard_expires_at"] == 10 * day and first["soft_expires_at"] == 2 * day
    d = write(st, rec("likes coffee", "user", "drink", "coffee", now=5 * day), now=5 * day)
    assert d.record["hard_ttl_days"] == 10 and d.record["hard_expires_at"] == 15 * day  # inherited, from now
    again = write(st, rec("likes coffee", "user", "drink", "coffee", now=9 * day), now=9 * day)
    assert again.decision == R.REFRESHED and again.record["hard_expires_at"] == 19 * day  # restarted


# --- close calls: contradictions awaiting review ------------------------------------------

from hypothesis import given, settings, strategies as st  # noqa: E402
import pytest  # noqa: E402

SOURCES = ("user_stated", "agent_inferred", "task_outcome")


def sourced(obj, source, confidence):
    req = R.WriteRequest(S, f"carol city {obj}", "agent", subject="carol", predicate="city", object=obj,
                         source=source, confidence=confidence).validate()
    return R.build_record(req, req.text, R.new_memory_id(), 1)


def live_of(state):
    return [r for r in state.live() if r.get("entity_key")]


def test_a_close_call_keeps_both_and_the_next_close_call_does_not_pile_up():
    # The bug: the older flagged version took the index back, so each later close call was
    # compared with it alone and every earlier newcomer stayed live (20 live versions of one fact).
    state = ScopeState()
    write(state, sourced("paris", "user_stated", 0.8))
    d = write(state, sourced("rome", "agent_inferred", 0.7))
    assert d.decision == R.CONTRADICTION
    assert {r["review"] for r in live_of(state)} == {"contradiction"} and len(live_of(state)) == 2
    newest = d.record["memory_id"]
    assert state.by_entity[d.record["entity_key"]] == newest  # the newest, not the older flagged one
    for obj in ("oslo", "lima", "kyiv", "baku"):
        write(state, sourced(obj, "agent_inferred", 0.7))
    live = live_of(state)
    assert sorted(r["object"] for r in live) == ["baku", "paris"]  # one per side of the dispute
    assert all(r["review"] == "contradiction" for r in live)


def test_a_decisive_write_ends_the_dispute():
    state = ScopeState()
    write(state, sourced("paris", "user_stated", 0.8))
    write(state, sourced("rome", "agent_inferred", 0.7))
    d = write(state, sourced("oslo", "user_stated", 1.0))  # beats paris (same voice) and rome (gap 0.3)
    assert d.decision == R.SUPERSEDED_PREVIOUS and len(d.changed) == 2
    [live] = live_of(state)
    assert live["object"] == "oslo" and not live.get("review")


def test_a_write_that_loses_to_one_side_is_kept_as_superseded():
    state = ScopeState()
    write(state, sourced("paris", "user_stated", 0.8))
    write(state, sourced("rome", "agent_inferred", 0.7))
    # markedly less sure than its own voice's live version (by more than contradiction_gap)
    d = write(state, sourced("oslo", "agent_inferred", 0.45))
    assert d.decision == R.KEPT_AS_SUPERSEDED and d.record["status"] == "superseded"
    assert sorted(r["object"] for r in live_of(state)) == ["paris", "rome"]
    # a little less sure, the same voice's newest word is its version: beside paris, still in dispute
    d = write(state, sourced("lima", "agent_inferred", 0.6))
    assert d.decision == R.CONTRADICTION
    assert sorted(r["object"] for r in live_of(state)) == ["lima", "paris"]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["paris", "rome", "oslo", "lima"]), st.sampled_from(SOURCES),
                          st.sampled_from([0.5, 0.6, 0.7, 0.75, 0.8, 0.9, 1.0])), min_size=1, max_size=25))
def test_live_versions_of_a_fact_stay_one_per_source_and_flagged_when_several(writes):
    state = ScopeState()
    for obj, source, conf in writes:
        write(state, sourced(obj, source, conf))
        live = live_of(state)
        assert 1 <= len(live) <= len(SOURCES)
        assert len({r["source_kind"] for r in live}) == len(live)  # one live version per voice
        if len(live) > 1:
            assert all(r.get("review") == "contradiction" for r in live)
        key = live[0]["entity_key"]
        newest = max(live, key=lambda r: r["version"])
        assert state.by_entity[key] == newest["memory_id"]
        assert state.live_ids(key) == {r["memory_id"] for r in live}


def test_the_next_version_is_one_above_the_highest_on_record():
    st = ScopeState()
    write(st, rec("likes tea", "user", "drink", "tea", confidence=0.9))
    kept = write(st, rec("likes coffee", "user", "drink", "coffee", confidence=0.5)).record  # v2, superseded
    live = write(st, rec("likes water", "user", "drink", "water", confidence=0.95)).record  # v3, live
    assert live["version"] == 3
    key = live["entity_key"]
    st.remove(live["memory_id"])  # erased: its number goes with it
    assert st.next_version(key) == 3
    st.put({**kept, "status": "evicted"})  # a superseded version evicted
    assert st.next_version(key) == 2
    st.hold_version(key, 2, kept["memory_id"])  # counted once, however often it is put
    st.hold_version(key, 2, kept["memory_id"])
    assert st.versions[key].count((2, kept["memory_id"])) == 1
    assert dict(st.stage().versions.items()) == st.versions


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["set", "del", "pop", "stage"]), st.integers(0, 7), st.integers()),
                max_size=40), st.lists(st.integers(0, 7), max_size=6))
def test_a_layer_reads_and_commits_as_a_copy_of_the_dict_would(ops, start):
    """``Layer`` (a staged batch's view of a scope's dict): every read, the iteration order and
    the dict after ``commit`` equal what the same edits of a copy give; the base is untouched
    until then, and a layer over a layer (a probe) reads the same."""
    from memactors.core.versions import Layer

    base = {k: -k for k in start}
    frozen = dict(base)
    copy, layer = dict(base), Layer(base)
    for op, k, v in ops:
        if op == "set":
            copy[k] = v
            layer[k] = v
        elif op == "del":
            if k in copy:
                del copy[k]
                del layer[k]
            else:
                with pytest.raises(KeyError):
                    del layer[k]
        elif op == "pop":
            assert layer.pop(k, "none") == copy.pop(k, "none")
        else:  # a probe over the layer reads the same, and leaves it alone
            probe = Layer(layer)
            probe[k] = v
            assert probe[k] == v and layer.get(k) == copy.get(k)
        assert list(layer.keys()) == list(copy) and list(layer.values()) == list(copy.values())
        assert len(layer) == len(copy) and bool(layer) == bool(copy)
        assert all((j in layer) == (j in copy) and layer.get(j) == copy.get(j) for j in range(8))
        assert base == frozen and list(base) == list(frozen)
    layer.commit()
    assert base == copy and list(base.items()) == list(copy.items())


TEXTS = ["Alice likes tea", "Alice does not like tea", "Bob hates coffee", "The meeting is at 3pm",
         "The meeting is at 5pm", "爱丽丝喜欢绿茶", "鲍勃不住在上海", "room 101 is free", ""]


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["active", "superseded", "pending", "remove", "commit"]),
                          st.integers(0, 9), st.sampled_from(TEXTS), st.booleans()), max_size=30))
def test_counted_cues_stay_what_a_recount_gives(steps):
    """A scope's counted cue keys, kept by ``put`` and ``remove`` through staged batches and
    their commits, always equal a recount over its live text-only memories."""
    from collections import Counter

    def recount(s):
        fresh = ScopeState(dict(s.records.items()))
        fresh.build_cues()
        return Counter(fresh.cues)

    base = ScopeState()
    base.build_cues()
    staged = base.stage()
    for status, i, text, entity in steps:
        if status == "commit":
            staged.commit()
            assert Counter(base.cues) == recount(base)
            staged = base.stage()
            continue
        mid = f"m{i}"
        if status == "remove":
            staged.remove(mid)
        else:
            old = staged.get(mid)
            if old is not None and old["content"] != text:  # a memory's content never changes
                text = old["content"]
            r = rec(text or "x", subject="u" if entity else None, predicate="p" if entity else None)
            staged.put({**r, "memory_id": mid, "status": status, "content": text, "version": 1})
        assert Counter(dict(staged.cues.items())) == recount(staged)
    staged.commit()
    assert Counter(base.cues) == recount(base)
