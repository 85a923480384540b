"""How a fact's versions are numbered once some are erased, on the process host (real LanceDB
and DuckDB files, no Ray): one above the highest version on record, the same whether the
owner holds the scope in memory or reloads it from L2 (a reload once gave an erased version's
successor a number still held by a superseded one, and the hot state another than a reload)."""

from __future__ import annotations

import memactors

S = "/org/vnum/user/u/"


def _write(rt, obj, source="user_stated"):
    return rt.write(S, f"carol drinks {obj}", actor="a", subject="carol", predicate="drink", object=obj,
                    source=source)


def _story(rt, reopen):
    """v1 tea, v2 coffee (supersedes v1), v3 juice kept as superseded (lower confidence source),
    v4 water supersedes v2; water is forgotten; then milk. Returns milk's result."""
    rt.grant("a", "/org/vnum/", write=True)
    got = [_write(rt, "tea"), _write(rt, "coffee"), _write(rt, "juice", source="agent_inferred")]
    assert [(r.version, r.decision) for r in got] == [(1, "accepted"), (2, "superseded_previous"),
                                                      (3, "kept_as_superseded")]
    water = _write(rt, "water")
    assert (water.version, water.decision) == (4, "superseded_previous")
    rt.forget(water.memory_id, actor="a", reason="test")
    rt = reopen(rt)
    return rt, _write(rt, "milk")


def test_numbering_is_the_same_held_in_memory_or_reloaded(tmp_path):
    results = {}
    for how in ("hot", "reloaded"):
        data = tmp_path / how
        rt = memactors.connect(data, host="process")

        def reopen(rt, how=how, data=data):
            if how == "hot":
                return rt
            rt.close()
            return memactors.connect(data, host="process")

        rt, milk = _story(rt, reopen)
        try:
            results[how] = (milk.version, milk.decision)
            # versions 1-3 are on record (superseded): the erased v4's number is free, none below it
            h = rt.history((S, "carol", "drink"), actor="a")
            assert [(v["version"], v["status"]) for v in h["versions"]] \
                == [(1, "superseded"), (2, "superseded"), (3, "superseded"), (4, "tombstoned"), (4, "active")]
        finally:
            rt.close()
    assert results["hot"] == results["reloaded"] == (4, "accepted")


def test_an_erased_superseded_version_frees_its_number_held_in_memory_too(tmp_path):
    """Forgetting a superseded version (not in the hot state, only counted there) frees its
    number as a reload from L2 does: the hot state once kept counting it."""
    results = {}
    for how in ("hot", "reloaded"):
        data = tmp_path / how
        rt = memactors.connect(data, host="process")
        try:
            rt.grant("a", "/org/vnum/", write=True)
            tea, juice = _write(rt, "tea"), _write(rt, "juice", source="agent_inferred")
            assert (juice.version, juice.decision) == (2, "kept_as_superseded")
            rt.forget(juice.memory_id, actor="a", reason="test")  # the superseded top version alone
            if how == "reloaded":
                rt.close()
                rt = memactors.connect(data, host="process")
            results[how, "one"] = _write(rt, "coffee").version  # v1 still on record: one above it
            rt.forget(tea.memory_id, actor="a", reason="test", erase="fact")  # every version
            if how == "reloaded":
                rt.close()
                rt = memactors.connect(data, host="process")
            results[how, "all"] = _write(rt, "milk").version  # nothing on record: it starts again
        finally:
            rt.close()
    assert results == {("hot", "one"): 2, ("reloaded", "one"): 2, ("hot", "all"): 1, ("reloaded", "all"): 1}


def test_a_superseded_version_a_sweep_evicts_frees_its_number_held_in_memory_too(tmp_path):
    """A sweep evicting a superseded version (counted in the hot state, held only in L2) frees
    its number as a reload from L2 does: the next version is the same either way."""
    results = {}
    for how in ("hot", "reloaded"):
        data, clock = tmp_path / how, memactors.ManualClock()
        rt = memactors.connect(data, host="process", clock=clock)
        try:
            rt.grant("a", "/org/vnum/", write=True)
            tea, juice = _write(rt, "tea"), _write(rt, "juice", source="agent_inferred")
            assert (tea.version, juice.version, juice.decision) == (1, 2, "kept_as_superseded")
            clock.advance(seconds=(rt.config.lifecycle.superseded_days + 1) * 86_400)
            assert _write(rt, "tea").memory_id == tea.memory_id  # said again: refreshed, stays live
            assert rt.gc().by_rule.get("superseded_old") == 1
            if how == "reloaded":
                rt.close()
                rt = memactors.connect(data, host="process", clock=clock)
            assert [v["status"] for v in rt.history(tea.memory_id, actor="a")["versions"]][:2] == ["active", "evicted"]
            results[how] = _write(rt, "coffee").version
        finally:
            rt.close()
    assert results == {"hot": 2, "reloaded": 2}
