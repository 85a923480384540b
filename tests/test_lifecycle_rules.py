"""Every rule of [lifecycle] fires in a real sweep, driven through the public API on the simulated
clock: hard_expired, soft_expired_unused (and a soft-expired memory that is recalled survives:
stale but recallable), superseded_old, low_confidence_stale, staleness_evict (the contradiction
term fed from the ledger's own contradiction state), staleness_stale, review_due (the periodic
review, listable and resolvable), and demotion on the sweep schedule with its watermark in the
ledger. Each rule also has inputs that must not match."""

from __future__ import annotations

import time

import pytest

import memactors
from memactors import NotFound

A = "/org/rules/user/alice/"
CFG = {"runtime": {"num_owners": 2, "l2_flush_interval_s": 0.2}}
LONG = {"ttl_days": 3650, "soft_ttl_days": 3650}  # out of the TTL rules' way


@pytest.fixture
def rt(tmp_path):
    clock = memactors.ManualClock()
    r = memactors.connect(str(tmp_path / "data"), clock=clock, config=CFG)
    r.grant("ag", A, write=True)
    yield r
    r.close()


def _recall(rt, q, **kw):
    return rt.recall(q, actor="ag", task_id="t", allowed_scopes=[A], purpose="p", **kw)


def _ids(rt, q) -> set[str]:
    return {h.memory_id for h in _recall(rt, q, top_k=20, threshold=0.0).hits}


def test_hard_expired_evicts_at_the_next_sweep_and_recall_hides_it_at_once(rt):
    gone = rt.write(A, "the door code changes weekly", actor="ag", ttl_days=2).memory_id
    kept = rt.write(A, "the door code is set by the office", actor="ag", ttl_days=5).memory_id
    rt.clock.advance(days=3)
    assert gone not in _ids(rt, "the door code changes weekly")  # checked at recall time
    res = rt.gc()
    assert res.plan.ids("hard_expired").to_pylist() == [gone]
    assert kept in _ids(rt, "the door code is set by the office")


def test_stale_but_recallable_and_recall_keeps_it(rt):
    used = rt.write(A, "Alice prefers window seats on long flights", actor="ag", soft_ttl_days=5).memory_id
    unused = rt.write(A, "Bob keeps the spare keys under the blue mat", actor="ag", soft_ttl_days=5).memory_id
    rt.clock.advance(days=20)
    res = _recall(rt, "Alice prefers window seats on long flights")  # the default threshold
    hit = next(h for h in res.hits if h.memory_id == used)
    assert hit.stale and hit.relevance >= rt.config.recall.threshold
    assert hit.score == pytest.approx(hit.relevance * 0.5)
    ev = rt.explain(res.recall_id, actor="ag")
    assert any(h["memory_id"] == used and h["stale"] for h in ev["hits"])
    rt.clock.advance(days=20)  # day 40: recalled on day 20, so used within unused_days (30)
    plan = rt.gc()
    assert plan.plan.ids("soft_expired_unused").to_pylist() == [unused]
    assert used in _ids(rt, "Alice prefers window seats on long flights")
    assert unused not in _ids(rt, "Bob keeps the spare keys under the blue mat")
    rt.clock.advance(days=31)  # recalled on day 40 last: unused for 31 days now
    assert rt.gc().plan.ids("soft_expired_unused").to_pylist() == [used]


def test_a_stale_hit_ranks_below_an_equally_relevant_fresh_one(rt):
    rt.grant("ag", "/org/rules/", write=True)
    text = "The team offsite is in Lisbon in May"
    fresh = rt.write("/org/rules/", text, actor="ag", soft_ttl_days=60).memory_id
    stale = rt.write(A, text, actor="ag", soft_ttl_days=5).memory_id
    rt.clock.advance(days=10)
    hits = _recall(rt, text).hits
    assert [h.memory_id for h in hits[:2]] == [fresh, stale]
    assert hits[0].relevance == pytest.approx(hits[1].relevance) and hits[1].stale and not hits[0].stale


def test_superseded_old_evicts_versions_superseded_90_days_ago(rt):
    kw = dict(actor="ag", subject="alice", predicate="city", **LONG)
    v1 = rt.write(A, "Alice lives in Porto", object="Porto", **kw).memory_id
    rt.clock.advance(days=10)
    rt.write(A, "Alice lives in Oslo", object="Oslo", **kw)
    rt.clock.advance(days=89)  # superseded 89 days ago: not yet
    assert rt.gc(dry_run=True).plan.ids("superseded_old").to_pylist() == []
    rt.clock.advance(days=1)
    assert rt.gc().plan.ids("superseded_old").to_pylist() == [v1]


def test_low_confidence_stale_marks_weak_unverified_memories(rt):
    weak = rt.write(A, "Alice may like jazz", actor="ag", source="pattern", confidence=0.2, **LONG).memory_id
    sure = rt.write(A, "Alice likes chess", actor="ag", source="pattern", confidence=0.3, **LONG).memory_id
    rt.clock.advance(days=61)
    _recall(rt, "jazz chess")  # recalled is not verified: the rule counts from the last update
    ids = rt.gc().plan.ids("low_confidence_stale").to_pylist()
    assert ids == [weak] and sure not in ids
    assert next(h for h in _recall(rt, "Alice may like jazz").hits if h.memory_id == weak).stale


def test_staleness_evicts_an_open_contradiction_and_marks_an_old_unused_memory_stale(rt):
    kw = dict(actor="ag", subject="alice", predicate="seat", **LONG)
    a = rt.write(A, "Alice wants a window seat", object="window", source="user_stated", **kw)
    b = rt.write(A, "Alice wants an aisle seat", object="aisle", source="config_change", **kw)
    assert b.decision == "contradiction_queued"  # a close call: both live, flagged for review
    old = rt.write(A, "The printer on floor two jams often", actor="ag", **LONG).memory_id
    rt.clock.advance(days=100)  # contradicted: 0.4*age + 0.3*decay + 0.3 = 0.78: not yet above 0.8
    p = rt.gc(dry_run=True).plan
    assert p.ids("staleness_evict").to_pylist() == [] and old not in p.ids("staleness_stale").to_pylist()
    rt.clock.advance(days=15)  # day 115: contradicted 0.81 > 0.8, the other 0.51 > 0.5
    res = rt.gc()
    assert sorted(res.plan.ids("staleness_evict").to_pylist()) == sorted([a.memory_id, b.memory_id])
    assert res.plan.ids("staleness_stale").to_pylist() == [old]
    assert res.by_rule["staleness_evict"] == 2 and res.by_rule["staleness_stale"] == 1


def test_a_resolved_contradiction_no_longer_ages_faster(rt):
    kw = dict(actor="ag", subject="alice", predicate="seat", **LONG)
    a = rt.write(A, "Alice wants a window seat", object="window", source="user_stated", **kw)
    rt.write(A, "Alice wants an aisle seat", object="aisle", source="config_change", **kw)
    rt.contradictions.resolve(a.memory_id, actor="ag", reason="asked her")
    rt.clock.advance(days=115)
    res = rt.gc(dry_run=True).plan
    assert res.ids("staleness_evict").to_pylist() == [] and a.memory_id in res.ids("staleness_stale").to_pylist()


def test_review_due_flags_entity_facts_and_instructions_and_the_queue_resolves(rt):
    fact = rt.write(A, "Alice's manager is Bob", actor="ag", category="entity_fact").memory_id
    rule = rt.write(A, "Always answer Alice in French", actor="ag", category="instruction").memory_id
    plain = rt.write(A, "Alice visited Rome", actor="ag", **LONG).memory_id
    rt.clock.advance(days=91)  # instructions every 90 days, entity facts every 180
    res = rt.gc()
    assert res.plan.ids("review_due").to_pylist() == [rule] and res.by_rule["review_due"] == 1
    assert [r["memory_id"] for r in rt.review.due(A, actor="ag")] == [rule]
    assert next(h for h in _recall(rt, "Always answer Alice in French").hits if h.memory_id == rule).review == "periodic"
    assert rt.gc(dry_run=True).plan.ids("review_due").to_pylist() == []  # flagged once, not every sweep
    rt.clock.advance(days=90)  # day 181: unused for half a year, the fact turns stale first (a stale
    assert fact in rt.gc().plan.ids("staleness_stale").to_pylist()  # mark beats a review flag)...
    assert rt.gc().plan.ids("review_due").to_pylist() == [fact]  # ...and is flagged at the next sweep
    assert {r["memory_id"] for r in rt.review.due(A, actor="ag")} == {rule, fact}
    assert rt.review.confirm(rule, actor="ag", reason="still wanted")["decision"] == "confirmed"
    assert rt.review.retire(fact, actor="ag", reason="Bob left")["decision"] == "retired"
    assert rt.review.due(A, actor="ag") == []
    assert fact not in _ids(rt, "Alice's manager is Bob") and rule in _ids(rt, "Always answer Alice in French")
    with pytest.raises(NotFound):
        rt.review.confirm(plain, actor="ag", reason="not due")
    rt.clock.advance(days=89)  # confirmed 89 days ago: its clock restarted
    assert rt.gc(dry_run=True).plan.ids("review_due").to_pylist() == []


def test_demotion_and_review_run_on_the_sweep_schedule_and_the_watermark_is_in_the_ledger(tmp_path):
    clock = memactors.ManualClock()
    data = str(tmp_path / "data")
    cfg = {**CFG, "lifecycle": {"sweep_interval_s": 86_400.0, "demote_after": 3}}
    rt = memactors.connect(data, clock=clock, config=cfg)
    try:
        rt.grant("ag", A, write=True)
        mid = rt.write(A, "Alice likes the blue mug", actor="ag", **LONG).memory_id
        for _ in range(3):
            _recall(rt, "Alice likes the blue mug")
        runs = rt._schedule.runs  # noqa: SLF001
        clock.advance(days=1)
        deadline = time.monotonic() + 60
        while rt._schedule.runs == runs and time.monotonic() < deadline:  # noqa: SLF001
            time.sleep(0.2)
        assert rt._schedule.runs > runs  # noqa: SLF001
        hits = _recall(rt, "Alice likes the blue mug").hits
        assert mid not in {h.memory_id for h in hits} and any(h.pool == "working" for h in hits)
        assert rt.demote_unused()["checked"] == 0  # the watermark moved past what it demoted
    finally:
        rt.close()
    rt = memactors.connect(data, clock=clock, config=CFG)
    try:
        assert rt.demote_unused(after=3)["checked"] == 0  # after a restart too: the mark is in the ledger
    finally:
        rt.close()


def test_a_memory_due_again_after_a_citation_and_a_rollback_is_demoted_again():
    # The demotion's idempotency key named the memory and its streak only: the same streak
    # reached again later replayed the first demotion's answer ("demoted") and did nothing.
    with memactors.connect("memory://") as rt:
        rt.grant("ag", A, write=True)
        mid = rt.write(A, "Alice prefers green tea", actor="ag").memory_id
        for _ in range(5):
            _recall(rt, "alice green tea")
        head = rt.audit.head()["seq"]
        assert rt.demote_unused()["demoted"] == 1
        rt.rollback(at=head, actor="ag", reason="undo the demotion")
        r = _recall(rt, "alice green tea")
        rt.mark_cited(r.recall_id, [mid], actor="ag")
        for _ in range(5):
            r = _recall(rt, "alice green tea")
        assert any(h.memory_id == mid and h.pool == "vault" for h in r.hits)
        assert rt.demote_unused()["demoted"] == 1
        assert not any(h.memory_id == mid for h in _recall(rt, "alice green tea").hits)


def test_a_write_that_loses_to_another_sources_value_at_once_is_a_contradiction_resolved():
    # Won or lost at once, a contradiction resolved by the confidence gap is a ledger event with
    # that reason, and counted: the counters' "auto" counted the wins only.
    with memactors.connect("memory://") as rt:
        rt.grant("ag", A, write=True)
        rt.write(A, "Alice lives in Paris", actor="ag", subject="alice", predicate="city", object="Paris",
                 source="user_stated", confidence=0.9)
        lost = rt.write(A, "Alice lives in Oslo", actor="ag", subject="alice", predicate="city", object="Oslo",
                        source="tool", confidence=0.3)
        assert lost.decision == "kept_as_superseded"
        reasons = [r for (r,) in rt.audit.sql(f"SELECT reason FROM events WHERE memory_id = '{lost.memory_id}'",
                                              actor="ag")]
        assert reasons == ["kept as superseded: contradiction resolved by a confidence gap"]
        assert rt.stats()["counters"]["contradictions"]["auto"] == 1


def test_a_demotion_that_changes_nothing_leaves_a_folder_that_verifies():
    # An uncited run of a memory superseded since: the pass decides "unchanged" and writes no
    # event. Its pinned answer named the memory, which verify reads as an idempotency row
    # copied from another key ("rows were changed"): then rollback and a backup's restore refused.
    with memactors.connect("memory://") as rt:
        rt.grant("ag", A, write=True)
        mid = rt.write(A, "Alice likes green tea", actor="ag", subject="alice", predicate="drink",
                       object="green tea").memory_id
        for _ in range(5):
            _recall(rt, "what does alice drink")
        assert rt.update(mid, "Alice likes black tea", actor="ag").decision == "superseded_previous"
        assert rt.demote_unused() == {"checked": 1, "unchanged": 1}
        assert rt.audit.verify()["ok"]
        head = rt.audit.head()["seq"]
        rt.rollback(at=head, actor="ag", reason="a rollback reads a folder that verifies", dry_run=True)


def test_what_a_sweep_set_aside_is_erased_once_past_its_hard_ttl(rt):
    # An evicted memory keeps its data key (a rollback may bring it back) and leaves L2, which the
    # sweep plans over: its text stayed in the ledger past its hard TTL for good. So did a
    # session's items, released with their session.
    clock = rt.clock
    m = rt.write(A, "Alice's locker code is Quokka42 zebra", actor="ag", ttl_days=100, soft_ttl_days=10).memory_id
    kept = rt.write(A, "Alice's gym is Wombatfit", actor="ag", ttl_days=3650, soft_ttl_days=10).memory_id
    s = rt.session(A, actor="ag", task_id="t1", goal="Find the Numbatron receipt")
    s.start()
    s.end_turn()
    s.complete()
    clock.advance(days=50)
    assert rt.gc().by_rule["soft_expired_unused"] >= 2
    assert [v["status"] for v in rt.history(m, actor="ag")["versions"]] == ["evicted"]
    assert rt.gc(dry_run=True).by_rule["hard_expired"] == 0  # not yet: 100 days
    clock.advance(days=400)
    due = rt.gc(dry_run=True).by_rule["hard_expired"]
    assert due >= 2  # the memory and the session's goal item at least
    assert rt.gc().by_rule["hard_expired"] == due
    assert rt.audit.erased(m, actor="ag")["key_destroyed"]
    assert [v["status"] for v in rt.history(kept, actor="ag")["versions"]] == ["evicted"]  # its TTL is ten years
    for word in ("Quokka42", "Numbatron"):
        rows = rt.audit.sql("SELECT DISTINCT memory_id FROM events WHERE memory_id IS NOT NULL", actor="ag")
        ids = [r["memory_id"] if isinstance(r, dict) else r[0] for r in rows]
        assert not [i for i in ids for v in rt.history(i, actor="ag")["versions"] if word in (v.get("content") or "")]
    assert rt.gc().by_rule["hard_expired"] == 0  # erased once
    assert rt.audit.verify()["ok"]



def test_l1_items_that_leave_the_pool_with_no_event_are_erased_past_their_hard_ttl(rt):
    # A direct working-pool write, and the items of a session left idle (never completed): they
    # leave L1 with no ledger event of their own, so no set-aside status said they had gone.
    direct = rt.write(A, "working note Quollwhistle", actor="ag", pool="working", ttl_days=5).memory_id
    s = rt.session(A, actor="ag", task_id="idle", goal="Find the Dibblerpass receipt")
    s.start()
    s.observe("tool", "the receipt is under Dibblerpass", ttl_days=5)
    s.end_turn()
    rt.clock.advance(days=6)
    assert rt.gc().by_rule["hard_expired"] >= 2
    assert rt.audit.erased(direct, actor="ag")["key_destroyed"]
    rows = rt.audit.sql("SELECT DISTINCT memory_id FROM events WHERE memory_id IS NOT NULL", actor="ag")
    ids = [r["memory_id"] if isinstance(r, dict) else r[0] for r in rows]
    shown = [v.get("content") or "" for i in ids for v in rt.history(i, actor="ag")["versions"]]
    assert not [t for t in shown if "Quollwhistle" in t or "Dibblerpass receipt is" in t or "under Dibblerpass" in t]
    assert rt.audit.verify()["ok"]
