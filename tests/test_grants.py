"""Grants: a grant covers its scope and descendants; nothing else (pure, no Ray)."""

import pytest

from memactors.core.errors import AccessDenied, NoGrants
from memactors.core.grants import GrantTable
from memactors.core.scopes import parse_scope as P


def table():
    t = GrantTable()
    t.put(GrantTable.make("agent-a", "/org/a/user/42/", write=True))
    t.put(GrantTable.make("agent-a", "/org/a/", read=True))
    t.put(GrantTable.make("admin", "/global/", write=True))
    return t


def test_write_covers_scope_and_descendants_only():
    t = table()
    t.check_write("agent-a", P("/org/a/user/42/"))
    t.check_write("agent-a", P("/org/a/user/42/task/t1/"))
    for bad in ["/org/a/user/420/", "/org/a/user/4_/", "/org/a/", "/global/", "/org/ab/user/42/", "/org/b/user/42/"]:
        with pytest.raises(AccessDenied):
            t.check_write("agent-a", P(bad))


def test_recall_beyond_read_grants_is_refused():
    t = table()
    vis = t.check_recall("agent-a", [P("/org/a/user/42/")])
    assert [str(s) for s in vis] == ["/org/a/user/42/", "/org/a/", "/global/"]
    t.check_recall("agent-a", [P("/org/a/user/7/")])  # read on /org/a/ covers its users
    for bad in ["/org/b/", "/org/ab/user/1/", "/global/"]:
        with pytest.raises(AccessDenied):
            t.check_recall("agent-a", [P(bad)])


def test_no_grants_error_says_how_to_add_one():
    with pytest.raises(NoGrants) as e:
        GrantTable().check_write("newbie", P("/org/a/user/1/"))
    assert "runtime.grant(" in str(e.value) and "memactors grant" in str(e.value)


def test_revoke_by_granting_nothing():
    t = table()
    t.put(GrantTable.make("agent-a", "/org/a/user/42/", read=False, write=False))
    with pytest.raises(AccessDenied):
        t.check_write("agent-a", P("/org/a/user/42/"))


def test_round_trip():
    t = table()
    assert sorted(map(str, GrantTable.from_list(t.to_list()).to_list())) == sorted(map(str, t.to_list()))


def test_a_recall_view_is_kept_only_until_a_grant_changes():
    """An owner keeps each (actor, scope list)'s visible set and clearances: a revocation or a
    new clearance must take effect at the next recall, a refusal is never kept, and a scope list
    that is not strings is refused as a scope (not a TypeError)."""
    from memactors.core.errors import InvalidScope

    t = table()
    allowed = ("/org/a/user/42/",)
    visible, clear = t.recall_view("agent-a", allowed)
    assert [str(s) for s in visible] == ["/org/a/user/42/", "/org/a/", "/global/"]
    assert t.recall_view("agent-a", allowed)[1] == clear
    assert clear["/org/a/user/42/"] == "confidential"
    t.put(GrantTable.make("agent-a", "/org/a/user/42/", write=True, clearance="restricted"))
    assert t.recall_view("agent-a", allowed)[1]["/org/a/user/42/"] == "restricted"
    with pytest.raises(AccessDenied):
        t.recall_view("agent-a", ("/org/b/",))
    with pytest.raises(AccessDenied):  # refused again, not kept as an empty view
        t.recall_view("agent-a", ("/org/b/",))
    t.put(GrantTable.make("agent-a", "/org/a/", read=False))
    t.put(GrantTable.make("agent-a", "/org/a/user/42/", read=False, write=False))
    with pytest.raises(NoGrants):
        t.recall_view("agent-a", allowed)
    with pytest.raises(InvalidScope):
        t.recall_view("admin", (["/global/"],))
