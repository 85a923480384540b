"""The L1 working pool (memactors.core.working) and the record's session field: a session's items
live as long as the session, any other item its own lifetime; a committed change that takes an
item out of L1 takes it out of the pool; only the runtime's sessions set the field. Pure."""

import pytest

from memactors.core import records as R
from memactors.core.errors import InvalidRecord, ValidationError
from memactors.core.working import WorkingPool

HOUR = 3_600_000_000
SID = "ab" * 16


def item(mid, created, sid=None, status="active", scope="/org/o/user/u/"):
    tag = {"id": sid, "task": "t1", "actor": "ag", "turn": 0, "slot": "observation", "n": 0,
           "critical": False} if sid else None
    return {"memory_id": mid, "scope": scope, "created_at": created, "status": status, "hard_expires_at": None,
            "session": tag}


def ids(recs):
    return sorted(r["memory_id"] for r in recs)


def test_a_sessions_items_age_from_its_newest_item_others_from_their_own_creation():
    pool = WorkingPool(size=100, ttl_us=HOUR)
    pool.put(item("goal", 0, SID))
    pool.put(item("loose", 0))
    for day in range(1, 4):  # a turn every 50 minutes keeps the session alive for days
        for k in range(1, 30):
            pool.put(item(f"d{day}-{k}", day * 24 * HOUR + k * 50 * 60_000_000 - 24 * HOUR, SID))
    now = 3 * 24 * HOUR
    assert "goal" in ids(pool.peek("/org/o/user/u/", now)) and "loose" not in ids(pool.peek("/org/o/user/u/", now))
    assert "goal" in ids(pool.live("/org/o/user/u/", now))
    later = now + 2 * HOUR  # idle for longer than the bound: the whole session goes
    assert pool.live("/org/o/user/u/", later) == [] and len(pool) == 0
    assert pool._members == {} and pool._newest == {}  # noqa: SLF001 - nothing left behind


def test_a_patch_that_takes_an_item_out_of_l1_removes_it_and_held_items_are_listed():
    pool = WorkingPool(size=10, ttl_us=HOUR)
    for mid, status in [("a", "active"), ("h", "pending"), ("b", "active")]:
        pool.put(item(mid, 0, SID, status))
    assert ids(pool.held("/org/o/user/u/", 1)) == ["h"] and ids(pool.peek("/org/o/user/u/", 1)) == ["a", "b"]
    assert pool.patch("h", {"status": "active"}) and ids(pool.peek("/org/o/user/u/", 1)) == ["a", "b", "h"]
    for mid, status in [("a", "superseded"), ("b", "evicted")]:
        assert pool.patch(mid, {"status": status})
    assert ids(pool.peek("/org/o/user/u/", 1)) == ["h"] and pool.find("a") is None
    assert pool.patch("a", {"status": "active"}) is False  # not held: nothing to patch
    pool.patch("h", {"status": "tombstoned"})
    assert len(pool) == 0 and pool._members == {}  # noqa: SLF001


def test_the_lru_bound_still_holds_and_keeps_counts_right():
    pool = WorkingPool(size=3, ttl_us=HOUR)
    out = [m for k in range(5) for m in pool.put(item(f"i{k}", k, SID))]
    assert out == ["i0", "i1"] and pool._members == {SID: 3}  # noqa: SLF001


GOOD = {"id": SID, "task": "t1", "actor": "ag", "turn": 2, "slot": "constraint", "n": 0, "critical": True}


def test_past_the_bound_a_busy_session_gives_up_its_own_oldest_not_another_sessions_items():
    pool = WorkingPool(size=4)

    def item(i, sid=None):
        return {"memory_id": f"m{i}", "scope": "/org/o/user/u/", "status": "active", "created_at": i,
                "hard_expires_at": None, "session": {"id": sid} if sid else None}

    pool.put(item(0, "a"))  # session a's one item
    for i in range(1, 4):
        pool.put(item(i, "b"))
    assert pool.put(item(4, "b")) == ["m1"]  # b holds most: its oldest goes, a's stays
    assert pool.put(item(5)) == ["m5"]  # an item of no session goes first, even the newest
    assert pool.put(item(6, "b")) == ["m2"]
    assert {r["memory_id"] for r in pool.live("/org/o/user/u/", 10)} == {"m0", "m3", "m4", "m6"}


def test_a_write_with_a_session_field_is_checked_and_kept_in_the_record():
    req = R.WriteRequest("/org/o/user/u/", "never pay more than 500 EUR", "ag", pool="working",
                         session=dict(GOOD)).validate()
    rec = R.build_record(req, req.text, "cd" * 16, 0)
    assert rec["session"] == GOOD and R.complete({k: v for k, v in rec.items() if k != "session"})["session"] is None


@pytest.mark.parametrize("bad", [
    {**GOOD, "actor": "someone-else"}, {**GOOD, "slot": "memories"}, {**GOOD, "turn": -1}, {**GOOD, "turn": True},
    {**GOOD, "critical": 1}, {**GOOD, "id": "not-hex"}, {**GOOD, "task": "a b"}, {**GOOD, "extra": 1},
    {k: v for k, v in GOOD.items() if k != "n"}, "t1", ["t1"], 5,
])
def test_a_bad_session_field_is_refused(bad):
    with pytest.raises(ValidationError):
        R.WriteRequest("/org/o/user/u/", "text", "ag", pool="working", session=bad).validate()


def test_a_vault_write_never_carries_a_session():
    with pytest.raises(InvalidRecord):
        R.WriteRequest("/org/o/user/u/", "text", "ag", session=dict(GOOD)).validate()


@pytest.mark.parametrize("value", [dict(GOOD), None, "l0/t1/0/constraint/0/c/task"])
def test_a_callers_write_cannot_set_the_session_field(value):
    with pytest.raises(InvalidRecord, match="session"):
        R.write_request({"scope": "/org/o/user/u/", "text": "x", "actor": "ag", "pool": "working", "session": value})
    # a forged tag in source_id is only text: the record has no session
    req = R.write_request({"scope": "/org/o/user/u/", "text": "x", "actor": "ag", "pool": "working",
                           "source_id": "l0/t1/0/constraint/0/c/task"})
    assert req.session is None and R.build_record(req, "x", "cd" * 16, 0)["session"] is None


def test_a_recall_shows_one_of_identical_working_items():
    import memactors

    with memactors.connect("memory://") as rt:
        rt.grant("ag", "/org/o/user/u/", write=True)
        ids = [rt.write("/org/o/user/u/", "The hotel Avenida is near the station", actor="ag", pool="working").memory_id
               for _ in range(3)]
        assert len(set(ids)) == 3  # each kept: a working write is not deduplicated
        res = rt.recall("hotel near the station", actor="ag", task_id="t", allowed_scopes=["/org/o/user/u/"],
                        purpose="p", threshold=0.0)
        assert [h.content for h in res.hits] == ["The hotel Avenida is near the station"]
        assert res.removed["duplicate"] == 2


def test_a_scopes_view_is_rebuilt_after_every_change_to_its_items():
    """``view`` (what a recall scores a scope's items with) is built once while the scope's items
    stay as they are, and never served stale: after a write, a refresh with a new vector, a
    patch, an eviction past the bound, a removal, a promotion out of L1 and an expiry."""
    pool, scope = WorkingPool(size=3, ttl_us=HOUR), "/org/o/user/u/"

    def view():
        return pool.view(scope, lambda items, vecs: [(r["memory_id"], r["status"], vecs.get(r["memory_id"]))
                                                     for r in items])

    def fresh():  # what a build of the pool as it is gives
        return [(r["memory_id"], r["status"], pool.vector(r["memory_id"])) for r in pool.items(scope)
                if r["status"] in ("active", "stale")]

    assert view() is None  # no items: nothing built
    steps = [
        lambda: pool.put(item("a", 0, SID), "va"),
        lambda: pool.put(item("b", 1, SID), "vb"),
        lambda: pool.put(item("a", 0, SID), "va2"),  # refreshed: last in the LRU, a new vector
        lambda: pool.put(item("h", 2, SID, "pending"), "vh"),  # held for review: never served
        lambda: pool.patch("h", {"status": "active"}),
        lambda: pool.patch("a", {"status": "stale"}),
        lambda: pool.put(item("c", 3, SID), "vc"),  # past the bound: the oldest goes
        lambda: pool.remove("h"),
        lambda: pool.patch("c", {"status": "promoted"}),  # out of L1
        lambda: pool.put(item("x", 4, SID, scope="/org/o/user/v/"), "vx"),  # another scope's: no change here
        lambda: pool.live(scope, 10 * HOUR),  # the session idle past its lifetime: let go
    ]
    for step in steps:
        before = view()
        step()
        got = view()
        assert got == fresh() or (got is None and fresh() == [])
        assert view() is got  # kept while nothing changes
    assert before and got is None and pool.items(scope) == []


def test_within_is_peeks_lifetime_rule():
    pool = WorkingPool(size=100, ttl_us=HOUR)
    recs = [item("s1", 0, SID), item("loose", 0), item("s2", 5 * HOUR, SID), item("late", 3 * HOUR)]
    for r in recs:
        pool.put(r)
    for now in (0, HOUR, 2 * HOUR, 4 * HOUR, 7 * HOUR):
        kept = {r["memory_id"] for r in pool.peek("/org/o/user/u/", now)}
        assert pool.within(recs, now) == [r["memory_id"] in kept for r in recs]
