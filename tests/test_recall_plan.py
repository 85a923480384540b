"""The facade plans a recall from the grant table's kept view (``GrantTable.recall_view``):
what it keeps must never outlive a grant change. A revoke, a narrower clearance or a new
grant between two calls takes effect on the next call, a refused actor or scope is refused on
every call, and the query is still gated before it is logged."""

from __future__ import annotations

import pytest

from memactors.core.errors import AccessDenied, NoGrants
from memactors.core.visibility import RANK
from memactors.testing import runtime_on, unique_org

CFG = {"runtime": {"num_owners": 2, "l2_flush_interval_s": 0.2}, "recall": {"min_score": -1.0}}


@pytest.fixture
def world(tmp_path):
    org = unique_org("plan")
    alice, bob = f"/org/{org}/user/alice/", f"/org/{org}/user/bob/"
    rt = runtime_on(tmp_path, CFG)
    rt.grant("w", f"/org/{org}/", write=True, clearance="restricted")
    rt.grant("a", alice)
    for lvl in ("public", "confidential"):
        rt.write(alice, f"alice likes tea, note {lvl}", actor="w", sensitivity=lvl)
    rt.write(bob, "bob likes coffee", actor="w")
    yield rt, alice, bob
    rt.close()


def _req(scope, actor="a"):
    return {"query": "what does alice like", "actor": actor, "task_id": "t", "allowed_scopes": [scope],
            "purpose": "answer", "top_k": 10, "threshold": 0.0}


def _levels(res) -> set[str]:
    return {h.content.rsplit(" ", 1)[-1] for h in res.hits}


def test_a_revoke_between_two_calls_refuses_the_next(world):
    rt, alice, _ = world
    for _ in range(2):  # the second call plans from the kept view
        assert _levels(rt.recall_many([_req(alice)])[0]) == {"public", "confidential"}
    rt.grant("a", alice, read=False, write=False)
    with pytest.raises(NoGrants):
        rt.recall_many([_req(alice)])
    with pytest.raises(NoGrants):
        rt.recall("tea", actor="a", task_id="t", allowed_scopes=[alice], purpose="answer")
    rt.grant("a", alice)
    assert len(rt.recall_many([_req(alice)])[0].hits) == 2


def test_a_lowered_clearance_between_two_calls_takes_effect(world):
    rt, alice, _ = world
    assert _levels(rt.recall_many([_req(alice)])[0]) == {"public", "confidential"}
    rt.grant("a", alice, clearance="public")
    assert _levels(rt.recall_many([_req(alice)])[0]) == {"public"}
    rt.grant("a", alice, clearance="confidential")
    assert _levels(rt.recall_many([_req(alice)])[0]) == {"public", "confidential"}


def test_a_refused_scope_is_refused_on_every_call_beside_allowed_ones(world):
    rt, alice, bob = world
    for _ in range(3):
        out = rt.recall_many([_req(alice), _req(bob), _req(alice, "nobody")], return_errors=True)
        assert len(out[0].hits) == 2
        assert isinstance(out[1], AccessDenied) and "position 1" in str(out[1])
        assert isinstance(out[2], NoGrants)
    rt.grant("a", bob)  # granted between calls: the next call sees bob's scope
    assert [h.content for h in rt.recall_many([_req(bob)])[0].hits] == ["bob likes coffee"]


def test_the_query_is_gated_before_it_is_digested(world):
    rt, alice, _ = world
    secret = "what does alice like, call 415-555-0100 or mail alice@example.com"
    plan = rt._plan_recall(secret, "a", "t", [alice], "answer", 5, None, None, None, "pull")  # noqa: SLF001
    assert "415-555-0100" not in plan.text and "alice@example.com" not in plan.text
    assert plan.text == rt.gate.redact_all(secret)


def test_hit_from_is_the_dataclass_built_from_the_fields_it_names():
    from memactors.runtime.results import HIT_ATTRS, Hit, hit_from

    full = {k: f"v-{k}" for k in HIT_ATTRS} | {"components": {"vector": 0.5}, "pool": "vault", "content_hash": "x"}
    for d in (full, {"memory_id": "m1", "score": 0.25}, {}):
        got, want = hit_from(d), Hit(**{k: d[k] for k in HIT_ATTRS if k in d})
        assert got == want and got.to_dict() == want.to_dict()
    a, b = hit_from({}), hit_from({})
    assert a.components == {} and a.components is not b.components  # a default dict of its own


def test_recall_ids_are_version_4_uuids():
    import uuid

    from memactors.runtime.results import new_recall_id

    ids = {new_recall_id() for _ in range(2000)}
    assert len(ids) == 2000
    for i in ids:
        u = uuid.UUID(i)
        assert u.hex == i and u.version == 4 and u.variant == uuid.RFC_4122


def _reference_row(req, result, digest, now, *, mode, weights, threshold, candidates, info, flt=None) -> dict:
    """evidence_row as it was written before its hits were built by ``_hit_row``."""
    row = {
        "recall_id": result.recall_id, "ts": now, "actor": req.actor, "task_id": req.task_id,
        "purpose": req.purpose, "allowed_scopes": req.allowed_scopes, "visible_scopes": result.visible_scopes,
        "query_digest": digest, "top_k": req.top_k,
        "hits": [{"memory_id": h.memory_id, "scope": h.scope, "version": h.version, "score": round(h.score, 6),
                  "relevance": round(h.relevance, 6), "components": {k: round(v, 6) for k, v in h.components.items()},
                  "stale": h.stale, "conflict": h.conflict} for h in result.hits],
        "filters": {"scopes": result.visible_scopes, "status": ["active", "stale"], "not_hard_expired_at": now,
                    "mode": mode, "threshold": threshold, "weights": weights.as_tuple(),
                    "token_budget": req.token_budget, "candidates": candidates, "tokens": info["tokens"],
                    "best_below": result.best_below},
        "removed": result.removed,
    }
    if flt is not None:
        row["filters"].update({"purpose_rule": flt.rule.name if flt.rule is not None else None,
                               "where": sorted(flt.where.to_wire()) if flt.where is not None else [],
                               "clearance": {s: max(v, key=RANK.get) if v else None
                                             for s, v in sorted(flt.sensitivities.items())}})
        row["filters"]["listing"] = req.query is None
    return row


def test_the_evidence_row_is_byte_identical_to_the_reference():
    import pickle
    import random

    import orjson

    from memactors.core import records as R
    from memactors.core.scoring import Weights
    from memactors.core.visibility import RecallFilter, PurposeRule, Where
    from memactors.runtime.evidence import evidence_row
    from memactors.runtime.results import recall_result

    rnd = random.Random(7)
    values = [0.0, -0.0, 1.0, 0.5, 1e-9, -1e-9, 0.1234565, 0.1234575, 2.5e-7, 0.999999949, 1 / 3]
    for n in range(300):
        hits = []
        for i in range(rnd.randrange(0, 7)):
            score = rnd.choice(values) if rnd.random() < 0.4 else rnd.random()
            stale = rnd.random() < 0.3
            rel = score * 2 if stale else (score if rnd.random() < 0.9 else rnd.choice(values))
            comps = {k: (rnd.choice(values) if rnd.random() < 0.3 else rnd.random())
                     for k in ("vector", "keyword", "recency", "importance")}
            hits.append({"memory_id": f"m{i}", "scope": "/org/a/user/b/", "version": 1 + i, "score": score,
                         "relevance": rel, "components": comps, "stale": stale, "content": "x",
                         "conflict": {"overrides": ["m9"], "reason": "newer"} if i == 1 else None})
        info = {"removed": {"threshold": n % 3, "max_items": 0}, "tokens": 17 * n, "best_below": rnd.random()}
        res = recall_result(hits, info, visible=["/org/a/user/b/", "/org/a/", "/global/"], path="hot",
                            threshold=0.25)
        req = R.RecallRequest(None if n % 5 == 0 else "q", "a", "t", ["/org/a/user/b/"], "answer", 5,
                              None if n % 2 else 100)
        flt = RecallFilter.make({"/org/a/user/b/": "confidential", "/org/a/": "internal", "/global/": "public"},
                                PurposeRule("answer", sensitivities=frozenset({"public", "internal"})) if n % 4 else None,
                                Where(category="food") if n % 7 == 0 else None)
        kw = dict(mode="pull", weights=Weights(), threshold=0.25, candidates=n, info=info,
                  flt=flt if n % 6 else None)
        for _ in range(2):  # the second row from the filter's kept description
            got, want = evidence_row(req, res, "d" * 64, 123 + n, **kw), _reference_row(req, res, "d" * 64, 123 + n, **kw)
            assert orjson.dumps(got) == orjson.dumps(want)
            assert pickle.dumps(got) == pickle.dumps(want)
            assert repr(got) == repr(want)
        if kw["flt"] is not None:  # each row's filters its own: changing one changes no other
            a, b = evidence_row(req, res, "d", 1, **kw), evidence_row(req, res, "d", 1, **kw)
            a["filters"]["clearance"]["/global/"] = "x"
            a["filters"]["where"].append("x")
            assert b["filters"] == want["filters"] | {"not_hard_expired_at": 1}


def test_a_kept_view_serves_one_filter_a_purpose_rule_and_a_grant_change_makes_new_ones():
    from memactors.core.grants import GrantTable
    from memactors.core.visibility import PurposeRule

    t = GrantTable([GrantTable.make("a", "/org/o/user/u/", clearance="internal")])
    view = t.recall_view("a", ("/org/o/user/u/",))
    rule = PurposeRule("answer", sensitivities=frozenset({"public"}))
    assert view.recall_filter(None) is view.recall_filter(None)
    assert view.recall_filter(rule) is view.recall_filter(PurposeRule("answer", sensitivities=frozenset({"public"})))
    assert view.recall_filter(None).sensitivities["/org/o/user/u/"] == {"public", "internal"}
    assert view.recall_filter(rule).sensitivities["/org/o/user/u/"] == {"public"}
    t.put(GrantTable.make("a", "/org/o/user/u/", clearance="public"))
    again = t.recall_view("a", ("/org/o/user/u/",))
    assert again is not view and again.recall_filter(None).sensitivities["/org/o/user/u/"] == {"public"}
    assert again.recall_filter(None).describe()["clearance"] == {"/global/": "public", "/org/o/": "public",
                                                                 "/org/o/user/u/": "public"}
