"""Bad input at the edges of the public API gets a typed error of ``memactors.core.errors`` and
writes nothing: malformed lookups, calls missing an argument on the runtime's sub-APIs, paths
that cannot be a folder, and every verb of a closed runtime."""

from __future__ import annotations

import os

import pytest

import memactors
from memactors import ops
from memactors.core.errors import (BadArguments, InvalidIdentifier, InvalidRecord, InvalidScope, MemactorsError,
                                   RuntimeClosed, StoreError)

S = "/org/acme/user/alice/"


@pytest.fixture
def rt():
    rt = memactors.connect("memory://")
    rt.grant("a", S, write=True)
    rt.write(S, "Alice likes tea", actor="a", subject="alice", predicate="drink")
    yield rt
    rt.close()


@pytest.fixture
def afile(tmp_path):
    path = tmp_path / "afile"
    path.write_text("x")
    return str(path)


def test_malformed_lookups_are_refused_typed(rt):
    agent = rt.agent("a", task_id="t", purpose="p", scopes=[S])
    with pytest.raises(InvalidRecord):
        agent.list(subject_prefix=5)
    assert [m.subject for m in agent.list(subject_prefix="ali")] == ["alice"]  # a str still lists
    for facts in ([("x",)], [("x", "y", "z")], [("x", 5)], "xy", [["alice", "drink"], None]):
        with pytest.raises(InvalidRecord):
            rt.batch([ops.Lookup("a", scope=S, facts=facts)])
    assert len(rt.batch([ops.Lookup("a", scope=S, facts=[("alice", "drink")])])[0]) == 1


def test_an_agents_empty_scope_arguments_are_refused_not_widened(rt):
    """``scopes=[]`` or ``scope=""`` given to a verb of the handle is checked as given (refused,
    as ``rt.recall``/``rt.write`` refuse it), never replaced by the agent's own scopes; left out
    (None), the agent's scopes apply."""
    agent = rt.agent("a", task_id="t", purpose="p", scopes=[S])
    for call in (lambda: agent.recall("tea", scopes=[]), lambda: agent.remember("Alice likes cake", scope=""),
                 lambda: agent.list(scope="")):
        with pytest.raises(memactors.ValidationError):
            call()
    with pytest.raises(InvalidRecord, match="must be a list"):  # a str is not split into one-character scopes
        agent.recall("tea", scopes=S)
    assert [h.content for h in agent.recall("tea", scopes=(S,)).hits] == ["Alice likes tea"]
    assert [h.content for h in agent.recall("tea").hits] == ["Alice likes tea"]
    assert [m.content for m in agent.list()] == ["Alice likes tea"]  # the cake was never written


@pytest.mark.parametrize("call", [
    lambda rt: rt.review.approve("0" * 32, actor="a"),
    lambda rt: rt.review.reject("0" * 32, reason="r"),
    lambda rt: rt.review.pending(),
    lambda rt: rt.contradictions.resolve("0" * 32),
    lambda rt: rt.contradictions.pending(S, "a", "extra"),
])
def test_a_sub_api_call_missing_an_argument_is_bad_arguments(rt, call):
    with pytest.raises(BadArguments):
        call(rt)


def test_paths_that_cannot_be_a_new_folder_are_refused_typed(rt, afile, tmp_path):
    for path in ("/proc/no-such-dir/x", afile, os.path.join(afile, "sub"), str(tmp_path / ("x" * 300))):
        for make in (rt.fork, rt.backup):
            with pytest.raises(StoreError):
                make(path)
        with pytest.raises(StoreError):
            memactors.connect(path, host="process")
    for bad in ("", "  ", "a\x00b", 5, None):
        with pytest.raises(InvalidRecord):
            memactors.connect(bad, host="process")
    assert not os.path.exists(str(tmp_path / ("x" * 300)))


def test_a_good_new_folder_still_takes_a_backup_and_a_fork(rt, tmp_path):
    assert rt.backup(str(tmp_path / "b"))["events"] > 0
    assert rt.fork(str(tmp_path / "f"))["events"] > 0


def test_grants_of_a_malformed_actor_is_refused():
    with memactors.connect("memory://") as rt:
        with pytest.raises(InvalidIdentifier):
            rt.grants("bad id!")
        assert rt.grants("ok-id") == []


@pytest.mark.parametrize("verb", [
    lambda rt: rt.write(S, "x", actor="a"), lambda rt: rt.audit.verify(), lambda rt: rt.audit.head(),
    lambda rt: rt.stats(), lambda rt: rt.review.pending(S, actor="a"), lambda rt: rt.contradictions.pending(S, actor="a"),
    lambda rt: rt.flush(), lambda rt: rt.grants(), lambda rt: rt.gc(), lambda rt: rt.history("0" * 32, actor="a"),
])
def test_every_verb_of_a_closed_runtime_is_runtime_closed(verb):
    rt = memactors.connect("memory://")
    rt.grant("a", S, write=True)
    rt.close()
    with pytest.raises(RuntimeClosed):
        verb(rt)


def test_errors_here_are_the_projects_own():
    assert issubclass(StoreError, MemactorsError) and issubclass(BadArguments, TypeError)


def test_a_refusal_by_memory_id_names_no_scope():
    """Given another tenant's memory id, a change is refused without saying where that memory
    lives (an id would otherwise tell its scope, a user's id in it)."""
    from memactors.core.errors import AccessDenied, NotFound

    with memactors.connect("memory://") as rt:
        other = "/org/zeta/user/bob-7731/"
        rt.grant("a", S, write=True)
        rt.grant("b", other, write=True)
        theirs = rt.write(other, "Bob's note on the lease", actor="b").memory_id
        calls = (lambda: rt.forget(theirs, actor="a", reason="r"),
                 lambda: rt.review.retire(theirs, actor="a", reason="r"),
                 lambda: rt.review.approve(theirs, actor="a", reason="r"),
                 lambda: rt.contradictions.resolve(theirs, actor="a", reason="r"),
                 lambda: rt.rollback(memory_id=theirs, actor="a", reason="r"),
                 lambda: rt.promote(theirs, S, actor="a", reason="r"),
                 lambda: rt.history(theirs, actor="a"))
        for call in calls:
            with pytest.raises((AccessDenied, NotFound)) as e:
                call()
            assert "zeta" not in str(e.value) and "bob-7731" not in str(e.value)
        assert rt.history(theirs, actor="b")["live"] == [theirs]  # nothing changed


def test_another_tenants_memory_id_is_refused_as_an_unknown_one():
    """An actor that cannot read a memory's scope learns nothing from its id, not even that it
    exists: every change by id answers it word for word as it answers an id never written
    (the id swapped for a placeholder). An actor that can read it but not change it is told so."""
    from memactors.core.errors import MemactorsError

    with memactors.connect("memory://") as rt:
        other = "/org/zeta/user/bob-7731/"
        rt.grant("a", S, write=True)
        rt.grant("b", other, write=True)
        rt.grant("reader", other)
        theirs = rt.write(other, "Bob's note on the lease", actor="b").memory_id
        never = theirs[:-6] + ("000000" if not theirs.endswith("000000") else "111111")
        calls = {"forget": lambda m, who: rt.forget(m, actor=who, reason="r"),
                 "retire": lambda m, who: rt.review.retire(m, actor=who, reason="r"),
                 "approve": lambda m, who: rt.review.approve(m, actor=who, reason="r"),
                 "resolve": lambda m, who: rt.contradictions.resolve(m, actor=who, reason="r"),
                 "rollback": lambda m, who: rt.rollback(memory_id=m, actor=who, reason="r"),
                 "promote": lambda m, who: rt.promote(m, S, actor=who, reason="r"),
                 "update": lambda m, who: rt.update(m, "new text", actor=who),
                 "history": lambda m, who: rt.history(m, actor=who)}

        def answer(call, m, who):
            try:
                call(m, who)
            except MemactorsError as exc:
                return type(exc).__name__, str(exc).replace(m, "ID")
            return "no error", ""

        for name, call in calls.items():
            for who in ("a", "nobody-granted"):
                assert answer(call, theirs, who) == answer(call, never, who), (name, who)
        for name in ("forget", "retire", "resolve", "rollback"):  # may read it: told it may not change it
            assert answer(calls[name], theirs, "reader")[0] == "AccessDenied", name
        assert rt.history(theirs, actor="b")["live"] == [theirs]  # nothing changed


def test_another_tenants_memory_id_reads_as_an_unknown_one():
    """A read by id (``Agent.get``, ``ops.Lookup(memory_ids=...)``) of a memory whose scope the
    actor cannot read answers as for an id never written (nothing found), not AccessDenied: the
    refusal told it the id exists. What it may read in the same lookup still comes back."""
    with memactors.connect("memory://") as rt:
        other = "/org/zeta/user/bob-7731/"
        rt.grant("a", S, write=True)
        rt.grant("b", other, write=True)
        mine = rt.write(S, "Alice likes tea", actor="a").memory_id
        theirs = rt.write(other, "Bob's note on the lease", actor="b").memory_id
        never = theirs[:-6] + ("000000" if not theirs.endswith("000000") else "111111")
        a = rt.agent("a", scopes=[S])
        assert a.get(theirs) is None and a.get(never) is None
        found = rt.batch([ops.Lookup("a", None, memory_ids=[mine, theirs, never])])[0]
        assert [m.memory_id for m in found] == [mine]
        assert rt.agent("b", scopes=[other]).get(theirs) is not None  # its own reader still sees it


# --- a batch's refusals are each op's own --------------------------------------------------------

def test_a_bad_grant_in_a_batch_refuses_the_call_before_anything_is_sent(rt):
    with pytest.raises(InvalidScope) as e:  # its scope is not in the scope tree
        rt.batch([ops.Write(S, "Alice swims daily", actor="a"), ops.Grant("erin", "/org/acme/erin/")])
    assert e.value.failed == [1] and e.value.results == [None, None]  # nothing ran: no result to show
    assert [h.content for h in rt.recall("swims", actor="a", task_id="t", allowed_scopes=[S], purpose="p",
                                         threshold=0.0).hits if "swims" in h.content] == []


def test_with_return_errors_a_bad_grant_or_past_recall_fails_alone(rt):
    out = rt.batch([ops.Grant("carol", "/org/acme/user/carol/"), ops.Grant("dave", S, clearance="top"),
                    ops.Recall("tea", actor="a", task_id="t", scopes=[S], purpose="p", at=1),
                    ops.Recall("tea", actor="a", task_id="t", scopes=[S], purpose="p", at=10**9)],
                   return_errors=True)
    assert type(out[0]).__name__ == "GrantResult" and isinstance(out[1], InvalidRecord)
    assert type(out[2]).__name__ == "RecallResult" and isinstance(out[3], MemactorsError)
    assert [g["scope"] for g in rt.grants("carol")] == ["/org/acme/user/carol/"] and rt.grants("dave") == []


def test_a_refused_batch_of_writes_shows_no_internal_units(rt):
    with pytest.raises(MemactorsError) as e:
        rt.batch([ops.Write(S, "Alice rows on Sundays", actor="a"), ops.Write(S, "x", actor="nobody")])
    assert e.value.results == [None, None] and e.value.failed == [1]


def test_the_async_twins_refuse_bad_arguments_as_their_sync_methods_do(rt):
    import asyncio

    for call, sync in ((lambda: rt.awrite(S, "x", actor="a", bogus=1), lambda: rt.write(S, "x", actor="a", bogus=1)),
                       (lambda: rt.awrite(S, "x"), lambda: rt.write(S, "x")),
                       (lambda: rt.arecall("x", actor="a"), lambda: rt.recall("x", actor="a"))):
        with pytest.raises(BadArguments) as sync_err:
            sync()
        with pytest.raises(BadArguments) as async_err:
            asyncio.run(call())
        assert isinstance(async_err.value, TypeError)
        assert str(async_err.value).replace("rt.a", "rt.") == str(sync_err.value)


def test_awrite_refused_by_its_owner_says_what_write_says(rt):
    # It said "op at position 0: ..." for a single write.
    import asyncio

    from memactors.core.errors import IdempotencyConflict

    rt.write(S, "Bob likes coffee", actor="a", idempotency_key="k1")
    with pytest.raises(IdempotencyConflict) as sync_err:
        rt.write(S, "Bob likes tea", actor="a", idempotency_key="k1")
    with pytest.raises(IdempotencyConflict) as async_err:
        asyncio.run(rt.awrite(S, "Bob likes tea", actor="a", idempotency_key="k1"))
    assert str(async_err.value) == str(sync_err.value)
