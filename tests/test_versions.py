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
