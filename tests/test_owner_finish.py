"""An owner that holds every candidate of a recall finishes it itself (conflicts, threshold,
count, budget), so that only the chosen hits cross back: the same hits, counts and evidence as
the facade finishing every candidate, on every kind of recall; and when /global/ answers after
all (written while the tenant's owner thought it empty) the owners are asked again."""

from __future__ import annotations

import pytest

import memactors
from memactors.core.scopes import GLOBAL, parse_scope
from memactors.engine import recall as engine_recall
from memactors.engine.naming import owner_index
from memactors.runtime import recall_api
from memactors.runtime.session import _run_pushes as run_pushes

N_OWNERS = 2
# a tenant whose owner is not /global/'s: its recalls ask two owners
ORG = next(f"/org/fin{i}/" for i in range(50)
           if owner_index(parse_scope(f"/org/fin{i}/"), N_OWNERS) != owner_index(GLOBAL, N_OWNERS))
A, B = f"{ORG}user/alice/", f"{ORG}user/bob/"


@pytest.fixture(scope="module")
def rt(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("finish")
    clock = memactors.ManualClock()
    cfg = {"runtime": {"num_owners": N_OWNERS, "key_dir": str(tmp / "keys")}}
    with memactors.connect(str(tmp / "data"), host="process", clock=clock, config=cfg) as rt:
        rt.grant("ag", ORG, write=True)
        rt.write_many([{"scope": s, "text": f"alice ordered coffee beans batch {i} from the shop", "actor": "ag",
                        "importance": (i % 7) / 7} for i in range(40) for s in (A, B) if i % 2 == (s == B)])
        fact = {"subject": "alice", "predicate": "drinks"}
        rt.write(ORG, "alice drinks coffee every morning", actor="ag", object="coffee", **fact)
        rt.write(A, "her usual is tea", actor="ag", object="tea", **fact)
        rt.write(B, "unrelated note about parking at the office", actor="ag")
        rt.flush()
        clock.advance(seconds=600)
        yield rt


def _view(rt, res) -> tuple:
    ev = rt.explain(res.recall_id, actor="ag")
    return ([(h.memory_id, h.score, h.conflict, h.stale) for h in res.hits], res.removed, res.best_below, res.path,
            ev["filters"]["candidates"], ev["removed"], [(h["memory_id"], h["score"]) for h in ev["hits"]])


def _both(rt, monkeypatch, call, seen: list | None = None):
    """``call()``'s results with the owners finishing, and with the facade finishing every
    candidate; ``seen`` gets, per answer the facade finished with the owners finishing, whether
    it was an owner's finished one."""
    finish = recall_api.RecallAPI._finish_recall

    def spy(self, plan, parts):
        if seen is not None:
            seen.append(any("final" in p for p in parts))
        return finish(self, plan, parts)
    with monkeypatch.context() as m:
        m.setattr(recall_api.RecallAPI, "_finish_recall", spy)
        finished = [_view(rt, r) for r in call()]
    with monkeypatch.context() as m:  # no owner finishes: every candidate crosses back
        m.setattr(engine_recall, "_finished", lambda part, how: part)
        whole = [_view(rt, r) for r in call()]
    return finished, whole


KW = {"actor": "ag", "task_id": "t", "purpose": "p"}
CASES = {
    "conflict and threshold": dict(query="alice drinks coffee", allowed_scopes=[A], top_k=3),
    "count cut in a tie": dict(query="alice ordered coffee beans from the shop", allowed_scopes=[A, B], top_k=4,
                               threshold=0.0),
    "token budget": dict(query="alice coffee", allowed_scopes=[A, B], top_k=10, token_budget=25, threshold=0.0),
    "everything under the threshold": dict(query="quantum chromodynamics lecture", allowed_scopes=[B], top_k=3),
    "a listing": dict(query=None, allowed_scopes=[B], top_k=5),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_recall_finished_by_its_owner_is_the_one_the_facade_finishes(rt, monkeypatch, case):
    args, seen = CASES[case], []
    finished, whole = _both(rt, monkeypatch, lambda: [rt.recall(args["query"], **KW, **{
        k: v for k, v in args.items() if k != "query"})], seen)
    assert seen == [True]  # the tenant's owner finished it
    assert finished == whole
    assert finished[0][0] or case == "everything under the threshold"


def test_recall_many_and_a_session_push_are_finished_alike(rt, monkeypatch):
    reqs = [{"query": a["query"], **KW, **{k: v for k, v in a.items() if k != "query"}} for a in CASES.values()]
    seen = []
    finished, whole = _both(rt, monkeypatch, lambda: rt.recall_many(reqs), seen)
    assert seen == [True] * len(reqs) and finished == whole
    s = rt.session(A, actor="ag", task_id="s", goal="alice ordered coffee beans")
    s.start()
    # the session's push again: it leaves out the session's own items (its goal, close to the query)
    seen = []
    finished, whole = _both(rt, monkeypatch, lambda: run_pushes(rt, [s]), seen)
    assert seen == [True] and finished == whole and finished[0][0]


def test_global_written_behind_the_tenants_owner_is_still_recalled(rt, monkeypatch):
    """/global/ gets a memory; the tenant's owner still believes /global/ empty (as before the
    global owner tells it), finishes alone, and the global owner answers with a candidate: the
    facade asks again for every candidate, and the global memory competes."""
    rt.grant("ag", "/global/", write=True)
    g = rt.write("/global/", "alice drinks coffee says the handbook", actor="ag").memory_id
    rt.flush()
    tenant = rt._owners[owner_index(parse_scope(ORG), N_OWNERS)]._obj  # noqa: SLF001 - the process host's core
    live, seen = tenant.global_live, []
    try:
        tenant.global_live = False
        # recall_many asks every owner of the visible scopes (a single recall asks /global/'s owner
        # only when the tenant's says so: the global owner tells the others before a write's ack)
        finished, whole = _both(rt, monkeypatch, lambda: rt.recall_many([{
            "query": "the handbook says alice drinks coffee", **KW, "allowed_scopes": [A], "top_k": 5,
            "threshold": 0.0}]), seen)
    finally:
        tenant.global_live = live
    assert seen == [True, False]  # finished by the tenant's owner, then asked again of both
    assert finished == whole and g in [m for m, *_ in finished[0][0]]
