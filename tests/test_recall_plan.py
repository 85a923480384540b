"""The facade plans a recall from the grant table's kept view (``GrantTable.recall_view``):
what it keeps must never outlive a grant change. A revoke, a narrower clearance or a new
grant between two calls takes effect on the next call, a refused actor or scope is refused on
every call, and the query is still gated before it is logged."""

from __future__ import annotations

import pytest

from memactors.core.errors import AccessDenied, NoGrants
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
