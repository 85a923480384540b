"""Lifecycle sequences found by red-teaming sweeps, TTLs and promotion, on the process host with
a simulated clock. ``progress`` hears each step of ``rt.gc()``: a call made when it hears
"apply" lands between the plan and its application, as a concurrent caller's would."""

from __future__ import annotations

import pytest

import memactors
from memactors.core import promotion as P
from process_folder import connect as _connect
from memactors.testing import drop_hot

S = "/org/acme/user/alice/"
S2 = "/org/beta/user/bob/"
A = "agent"
NEVER = {"ttl_days": "never", "soft_ttl_days": "never"}


@pytest.fixture
def folder(tmp_path):
    clock = memactors.ManualClock()
    rt = _connect(tmp_path / "d", clock)
    rt.grant(A, S, write=True)
    rt.grant(A, S2, write=True)
    rt.grant("reviewer", S, write=True)
    yield rt, clock, tmp_path / "d"
    rt.close()


def _recall_one(rt, query):
    return rt.recall(query, actor=A, task_id="t", allowed_scopes=[S], purpose="test", top_k=1)


def _status(rt, mid):
    return next(v for v in rt.history(mid, actor=A)["versions"] if v["memory_id"] == mid)


def _live(rule_counts):
    return {k: v for k, v in rule_counts.items() if v}


# --- promotion (fixed in core/promotion.py) -----------------------------------------------------

def _cand(mid, content, source, *, spo=(None, None, None), category="default", slot="observation", **kw):
    return P.Candidate(mid, content, source, 0, slot, *spo, category, **kw)


def test_a_refused_copy_of_a_fact_after_it_does_not_take_its_promotion():
    """The newest item of a fact used to win even when it was refused: a page repeating the
    user's preference, or the agent restating a tool's result, later in the same turn, left the
    fact out of the vault (the promotable item "newer_item_of_same_fact", the copy refused)."""
    spo = ("TP123", "price", "320 EUR")
    vs = P.decide([_cand("u", "I prefer window seats", "user_stated", category="preference"),
                   _cand("w", "I prefer window seats", "web", gate_decision="pending", gate_tags=("pending_source",),
                         status="pending")])
    assert [(v.memory_id, v.promote, v.rule) for v in vs] == [("u", True, "explicit"), ("w", False, "untrusted_source")]
    vs = P.decide([_cand("t", "TP123 costs 320 EUR", "tool", spo=spo),
                   _cand("r", "TP123 costs 320 EUR", "agent_inferred", spo=spo, slot="reasoning"),
                   _cand("n", "TP123 costs 320 EUR", "user_stated")])  # no rule of its own: no fact key shared
    assert [(v.memory_id, v.promote, v.rule) for v in vs] == [
        ("t", True, "structured_tool_data"), ("r", False, "intermediate_reasoning"), ("n", False, "no_rule")]
    # two promotable items of one fact: still only the newest
    vs = P.decide([_cand("a", "I prefer aisle seats", "user_stated", category="preference"),
                   _cand("b", "I prefer aisle seats", "user_stated", category="preference"),
                   _cand("c", "I prefer aisle seats", "web", gate_decision="pending", gate_tags=("pending_source",))])
    assert [(v.promote, v.rule) for v in vs] == [(False, "newer_item_of_same_fact"), (True, "explicit"),
                                                 (False, "untrusted_source")]


@pytest.mark.parametrize("source, spo, category", [
    ("tool", ("TP123", "price", "320 EUR"), "default"),
    ("user_stated", (None, None, None), "preference"),
])
def test_an_item_held_for_a_configured_source_is_never_promoted(source, spo, category):
    """A source added to the gate's pending_sources holds what it writes; promotion used to
    promote such a held tool result or user preference (the owner then refused: a NotFound in
    the session's errors), as only web and document were taken for untrusted."""
    c = _cand("h", "TP123 costs 320 EUR", source, spo=spo, category=category, gate_decision="pending",
              gate_tags=("pending_source",), status="pending")
    assert P.refusal(c) == "untrusted_source"
    [v] = P.decide([c])
    assert (v.promote, v.rule) == (False, "untrusted_source")


def test_a_session_promotes_a_preference_a_page_repeats_in_the_same_turn(tmp_path):
    clock = memactors.ManualClock()
    with _connect(tmp_path / "d", clock, config={"gate": {"pending_sources": ["web", "document", "tool"]}}) as rt:
        rt.grant(A, S, write=True)
        s = rt.session(S, actor=A, task_id="t1", goal="Book a flight to Lisbon")
        s.start()
        s.observe("user", "I prefer window seats", category="preference")
        s.observe("web", "I prefer window seats")
        s.observe("tool:search", "TP123 costs 320 EUR", subject="TP123", predicate="price", object="320 EUR")
        tr = s.end_turn()
        assert [p["rule"] for p in tr.promoted] == ["explicit"]
        assert tr.kept == {"untrusted_source": 2} and tr.errors == [] and s.errors == []
        vault = {h.content: h.pool for h in rt.recall("window seats", actor=A, task_id="t", allowed_scopes=[S],
                                                      purpose="test", top_k=5).hits}
        assert vault.get("I prefer window seats") == "vault"


# --- sweeps: promises that hold (guards) -----------------------------------------------------------

def _soft_expired_pair(rt, clock):
    """Two memories of S past their 10-day soft TTL, unused (their hard TTL 300 days off)."""
    pair = [rt.write(S, t, actor=A, soft_ttl_days=10, ttl_days=300)
            for t in ("Alice parks on level three", "Alice owns a red bicycle")]
    clock.advance(days=45)
    return pair


@pytest.mark.parametrize("cold", [False, True], ids=["hot", "cold"])
def test_a_memory_recalled_before_the_sweep_survives_soft_expiry(folder, cold):
    rt, clock, path = folder
    used, unused = _soft_expired_pair(rt, clock)
    assert [h.memory_id for h in _recall_one(rt, "parks on level three").hits] == [used.memory_id]
    if cold:
        rt.close()
        rt = _connect(path, clock)
    try:
        dry = rt.gc(dry_run=True)
        assert dry.plan.ids("soft_expired_unused").to_pylist() == [unused.memory_id]
        res = rt.gc()
        assert _live(res.by_rule) == _live(dry.by_rule) == {"soft_expired_unused": 1}
        assert _status(rt, used.memory_id)["status"] == "active"
        assert rt.stats()["counters"]["evictions"] == {"soft_expired_unused": 1}
    finally:
        rt.close()


def test_a_memory_refreshed_after_the_plan_is_checked_again_and_kept(folder):
    rt, clock, _ = folder
    m, _ = _soft_expired_pair(rt, clock)

    def refresh(step):
        if step == "apply":
            assert rt.write(S, "Alice parks on level three", actor=A).decision == "refreshed"

    res = rt.gc(progress=refresh)
    assert (_live(res.by_rule), res.applied["skipped"]) == ({"soft_expired_unused": 1}, 1)
    assert _status(rt, m.memory_id)["status"] == "active"


def test_a_sweep_limited_to_a_scope_touches_no_other(folder):
    rt, clock, _ = folder
    here = rt.write(S, "Alice's parking note", actor=A, ttl_days=5)
    there = rt.write(S2, "Bob's parking note", actor=A, ttl_days=5)
    clock.advance(days=6)
    assert rt.gc(dry_run=True, scope="/org/acme/user/ali/").plan.planned == 0  # a prefix is not a parent
    res = rt.gc(scope="/org/acme/")
    assert (res.by_rule["hard_expired"], res.by_tenant) == (1, {"acme": 1})
    assert _status(rt, here.memory_id)["status"] == "tombstoned"  # past its hard TTL: erased
    assert rt.gc(dry_run=True).plan.ids("hard_expired").to_pylist() == [there.memory_id]


def test_a_periodic_review_kept_restarts_its_clock_and_retired_evicts(folder):
    rt, clock, _ = folder
    kept = rt.write(S, "Always answer Alice in French", actor=A, category="instruction")
    gone = rt.write(S, "Never call Alice before nine", actor=A, category="instruction")
    clock.advance(days=91)
    assert _live(rt.gc().by_rule) == {"review_due": 2}
    assert {d["memory_id"] for d in rt.review.due(S, actor=A)} == {kept.memory_id, gone.memory_id}
    rt.review.confirm(kept.memory_id, actor="reviewer", reason="still wanted")
    rt.review.retire(gone.memory_id, actor="reviewer", reason="no longer")
    assert rt.gc(dry_run=True).plan.planned == 0 and rt.review.due(S, actor=A) == []
    assert _status(rt, gone.memory_id)["status"] == "evicted"
    clock.advance(days=90)
    assert rt.gc(dry_run=True).plan.ids("review_due").to_pylist() == [kept.memory_id]


# --- sweeps against changes made after the plan, in scopes held hot and gone cold ----------------

def test_a_memory_recalled_after_the_plan_is_not_evicted(folder):
    rt, clock, _ = folder
    m, _ = _soft_expired_pair(rt, clock)

    def recall(step):
        if step == "apply":
            assert [h.memory_id for h in _recall_one(rt, "parks on level three").hits] == [m.memory_id]

    res = rt.gc(progress=recall)
    assert _status(rt, m.memory_id)["status"] == "active"
    assert (res.by_rule["soft_expired_unused"], res.applied["skipped"]) == (1, 1)


def test_a_dry_run_equals_the_applied_sweep_for_a_memory_last_recalled_weeks_ago(folder):
    rt, clock, _ = folder
    m = rt.write(S, "Alice parks on level three", actor=A, soft_ttl_days=10, ttl_days="never")
    clock.advance(days=500)
    assert [h.memory_id for h in _recall_one(rt, "parks on level three").hits] == [m.memory_id]
    clock.advance(days=25)  # recalled 25 days ago: not unused for 30, but stale (0.4*age + 0.3*disuse > 0.5)
    dry = rt.gc(dry_run=True)
    assert _live(dry.by_rule) == {"staleness_stale": 1}
    res = rt.gc()
    assert (_live(res.by_rule), res.applied["skipped"]) == ({"staleness_stale": 1}, 0)


@pytest.mark.parametrize("rule, ttl", [("soft_expired_unused", {"soft_ttl_days": 10, "ttl_days": 300}),
                                       ("staleness_stale", NEVER)])
def test_a_memory_erased_after_the_plan_gets_no_sweep_event(folder, rule, ttl):
    rt, clock, _ = folder
    m = rt.write(S, "Alice parks on level three", actor=A, **ttl)
    rt.write(S, "Alice owns a red bicycle", actor=A, **ttl)
    clock.advance(days=200)

    def forget(step):
        if step == "apply":
            rt.forget(m.memory_id, actor=A, reason="user asked")

    res = rt.gc(progress=forget)
    assert m.memory_id not in {h.memory_id for h in rt.recall("parks level three", actor=A, task_id="t",
                                                              allowed_scopes=[S], purpose="test", top_k=5,
                                                              threshold=0.0).hits}
    actions = [c["reason"] for c in _status(rt, m.memory_id)["changes"]]
    assert actions == ["user asked"]
    assert (res.by_rule[rule], res.applied["skipped"]) == (1, 1)


def test_a_memory_refreshed_after_the_plan_is_kept_when_its_scope_went_cold(folder):
    rt, clock, _ = folder
    m = rt.write(S, "Alice parks on level three", actor=A, soft_ttl_days=10, ttl_days=300)
    clock.advance(days=45)

    def refresh(step):
        if step == "apply":
            assert rt.write(S, "Alice parks on level three", actor=A).decision == "refreshed"
            drop_hot(rt)

    rt.gc(progress=refresh)
    assert _status(rt, m.memory_id)["status"] == "active"


def test_a_memory_recalled_after_the_plan_is_not_evicted_when_its_scope_is_cold(folder):
    rt, clock, _ = folder
    m, other = _soft_expired_pair(rt, clock)

    def recall(step):
        if step == "sync":
            drop_hot(rt)
        if step == "apply":  # served from Lance: the scope stays cold
            assert [h.memory_id for h in _recall_one(rt, "parks on level three").hits] == [m.memory_id]

    res = rt.gc(progress=recall)
    assert (_status(rt, m.memory_id)["status"], _status(rt, other.memory_id)["status"]) == ("active", "evicted")
    assert (res.by_rule["soft_expired_unused"], res.applied["skipped"]) == (1, 1)


@pytest.mark.parametrize("change", ["forget", "update"])
def test_a_memory_changed_after_the_plan_in_a_cold_scope_gets_no_sweep_event(folder, change):
    rt, clock, _ = folder
    m = rt.write(S, "Alice parks on level three", actor=A, subject="alice", predicate="parking", object="level 3",
                 soft_ttl_days=10, ttl_days=300)
    rt.write(S, "Alice owns a red bicycle", actor=A, soft_ttl_days=10, ttl_days=300)
    clock.advance(days=45)

    def act(step):
        if step == "apply":
            if change == "forget":
                rt.forget(m.memory_id, actor=A, reason="user asked")
            else:
                rt.update(m.memory_id, "Alice parks on level four", actor=A, object="level 4")
            drop_hot(rt)

    res = rt.gc(progress=act)
    actions = [c["reason"] for c in _status(rt, m.memory_id)["changes"]]
    assert not any(r.startswith("gc:") for r in actions)
    assert (res.by_rule["soft_expired_unused"], res.applied["skipped"]) == (1, 1)


def test_a_version_superseded_by_resolving_a_contradiction_is_kept_90_days(folder):
    rt, clock, _ = folder
    paris = rt.write(S, "Alice lives in Paris", actor=A, subject="alice", predicate="city", object="paris",
                     confidence=0.8, source="user_stated", **NEVER)
    clock.advance(days=100)
    rome = rt.write(S, "Alice lives in Rome", actor=A, subject="alice", predicate="city", object="rome",
                    confidence=0.7, source="tool", **NEVER)
    assert rome.decision == "contradiction_queued"
    rt.contradictions.resolve(rome.memory_id, actor=A, reason="checked")
    clock.advance(days=1)
    assert _status(rt, paris.memory_id)["status"] == "superseded"
    assert rt.gc(dry_run=True).plan.ids("superseded_old").to_pylist() == []


@pytest.mark.parametrize("how", ["refresh", "confirm"])
def test_a_stale_memory_refreshed_or_confirmed_is_active_again(folder, how):
    rt, clock, _ = folder
    if how == "refresh":
        m = rt.write(S, "Alice's favourite museum is the Louvre", actor=A, confidence=0.2, source="agent_inferred",
                     **NEVER)
        clock.advance(days=61)
        assert _live(rt.gc().by_rule) == {"low_confidence_stale": 1}
        assert rt.write(S, "Alice's favourite museum is the Louvre", actor=A, confidence=0.2,
                        source="agent_inferred").decision == "refreshed"
    else:
        m = rt.write(S, "Alice was born in Lyon", actor=A, category="entity_fact")
        clock.advance(days=181)
        assert _live(rt.gc().by_rule) == {"staleness_stale": 1}
        assert _live(rt.gc().by_rule) == {"review_due": 1}  # a stale mark beats a review flag: flagged next
        rt.review.confirm(m.memory_id, actor="reviewer", reason="still true")
    assert _status(rt, m.memory_id)["status"] == "active"
    assert [h.stale for h in _recall_one(rt, "favourite museum Louvre born Lyon").hits] == [False]


@pytest.mark.parametrize("cold", [False, True])
def test_a_memory_past_its_hard_ttl_is_erased_by_the_sweep_not_only_set_aside(folder, cold):
    """"Deleted at the next sweep": its key destroyed, nothing of it in history, recall(at=) a
    point it was live, a rollback to then, or the files after a purge. Another rule's eviction
    keeps its key (a rollback can bring it back)."""
    import os

    rt, clock, path = folder
    gone = rt.write(S, "Alice's door code is ttltokDoor", actor=A, ttl_days=1)
    kept = rt.write(S, "Alice's parking note", actor=A)
    rt.flush()
    live_at = rt.audit.head()["seq"]
    clock.advance(days=400)
    if cold:
        rt.close()
        rt = _connect(path, clock)
    res = rt.gc()
    assert res.by_rule["hard_expired"] >= 1
    erased = rt.audit.erased(gone.memory_id, actor=A)
    assert erased["tombstone_seq"] is not None and erased["key_destroyed"]
    assert all(v["content"] is None for v in rt.history(gone.memory_id, actor=A)["versions"])
    q = dict(actor=A, task_id="t", allowed_scopes=[S], purpose="test", threshold=0.0)
    assert gone.memory_id not in {h.memory_id for h in rt.recall("door code", at=live_at, **q).hits}
    rt.rollback(at=live_at, actor="reviewer", reason="undo the sweep")
    assert gone.memory_id not in {h.memory_id for h in rt.recall("door code", **q).hits}
    assert rt.stats()["counters"]["evictions"]["hard_expired"] >= 1
    rt.purge()
    for d, _, files in os.walk(path):
        for f in files:
            with open(os.path.join(d, f), "rb") as fh:
                assert b"ttltokDoor" not in fh.read(), f
    assert kept.memory_id  # (a memory of the default policy is past its hard TTL too by then)
    if cold:
        rt.close()


def test_a_dry_run_writes_nothing_and_still_plans_the_set_aside_memories(folder):
    """`gc --dry-run` "changes nothing": it brought the ledger's set-aside index up (its rows and
    its mark), so the ledger file changed. The plan is the same either way: an L1 item past its
    hard TTL is planned by the dry run as by the applied sweep."""
    import hashlib
    import os

    rt, clock, path = folder
    item = rt.write(S, "Alice's scratch note on the boiler", actor=A, pool="working", ttl_days=3)
    rt.write(S, "Alice keeps bees", actor=A)
    clock.advance(days=5)
    rt.flush()

    def files() -> dict:
        out = {}
        for d, _, names in os.walk(path):
            for f in names:
                if f.startswith("ledger"):
                    with open(os.path.join(d, f), "rb") as fh:
                        out[f] = hashlib.sha256(fh.read()).hexdigest()
        return out

    before = files()
    dry = rt.gc(dry_run=True)
    assert files() == before
    assert item.memory_id in dry.plan.to_dict(ids=True)["ids"]["hard_expired"]
    assert rt.gc(dry_run=True).plan.digest() == dry.plan.digest()
    applied = rt.gc()
    assert applied.applied["by_rule"]["hard_expired"] == dry.by_rule["hard_expired"] >= 1
    assert rt.audit.erased(item.memory_id, actor=A)["key_destroyed"]


def test_an_applied_sweep_counts_by_tenant_what_it_applied_not_what_it_planned(folder):
    """`by_rule` held applied counts and `by_tenant` planned ones: a memory written again after
    the plan was skipped yet counted for its tenant."""
    rt, clock, _ = folder
    rt.write(S, "Alice's old scooter note", actor=A, ttl_days=10, soft_ttl_days=5)
    rt.write(S2, "Bob's old scooter note", actor=A, ttl_days=10, soft_ttl_days=5)
    clock.advance(days=11)

    def again(step):
        if step == "apply":  # renewed between the plan and its application: skipped
            rt.write(S, "Alice's old scooter note", actor=A, ttl_days=10, soft_ttl_days=5)

    res = rt.gc(progress=again)
    assert res.plan.by_tenant == {"acme": 1, "beta": 1}
    assert res.applied["skipped"] == 1 and sum(res.by_rule.values()) == 1
    assert res.by_tenant == res.to_dict()["by_tenant"] == {"beta": 1}


def test_a_sweep_lease_left_by_a_dead_driver_runs_out_and_a_live_one_is_renewed(folder, monkeypatch):
    """The lease lived an hour in the ledger writer, which outlives a driver (`memactors up`): a
    driver killed mid-sweep blocked every sweep, scheduled ones silently, for that long. Now it
    is short and renewed while the sweep runs."""
    import threading
    import time

    from memactors.core.errors import BackPressure
    from memactors.runtime import lifecycle

    rt, clock, _ = folder
    monkeypatch.setattr(lifecycle, "LEASE_S", 0.6)
    monkeypatch.setattr(lifecycle, "RENEW_S", 0.1)
    rt.write(S, "Alice's note on the garden shed", actor=A, ttl_days=10, soft_ttl_days=5)
    clock.advance(days=11)
    # a driver that took the lease and died: no renewal, no release
    assert rt._calls.get(rt._ledger.sweep_lease.remote("dead-driver", lifecycle.LEASE_S))
    with pytest.raises(BackPressure):
        rt.gc()
    time.sleep(0.8)
    refused = []

    def slow(step):  # a sweep outliving its lease's first term: renewed, so still exclusive
        if step == "apply":
            time.sleep(1.0)
            try:
                lifecycle.run_gc(rt, dry_run=False, scope=None, workers=None)
            except BackPressure:
                refused.append(True)

    t = threading.Thread(target=lambda: rt.gc(progress=slow))
    t.start()
    t.join(30)
    assert refused == [True]
    assert rt.gc().applied is not None  # released at its end
