"""What an action depended on: ``before_tool`` returns a handle, ``after_tool`` (or leaving its
``with`` block) logs the action with the recalls made for it and the memories they returned
and the model cited; ``rt.audit.actions(M)`` lists the actions that depended on M, and a
rollback of M reports them. Answers belong to whoever may read the scopes."""

from __future__ import annotations

import asyncio

import pytest

import memactors
from memactors.core.errors import InvalidRecord, NotFound, ValidationError
from memactors.runtime.actions import ToolCall
from memactors.runtime.results import RecallResult
from memactors.testing import unique_org


@pytest.fixture(scope="module")
def rt(tmp_path_factory):
    r = memactors.connect(str(tmp_path_factory.mktemp("actions") / "data"),
                          config={"runtime": {"num_owners": 2, "l2_flush_interval_s": 0.2}})
    r.grant("admin-a", "/global/", write=True)
    yield r
    r.close()


@pytest.fixture
def org(rt):
    o = unique_org("act")
    for u in ("alice", "bob"):
        rt.grant(f"{u}-{o}", f"/org/{o}/user/{u}/", write=True)
    rt.grant(f"lead-{o}", f"/org/{o}/", write=True)
    return o


def seat(rt, o, user="alice"):
    return rt.write(f"/org/{o}/user/{user}/", f"{user} always wants a window seat on flights", actor=f"{user}-{o}",
                    subject=user, predicate="seat", object="window")


def session(rt, o, user="alice", task="trip"):
    s = rt.session(f"/org/{o}/user/{user}/", actor=f"{user}-{o}", task_id=task, goal="book the flights for the trip")
    s.start()
    return s


def test_after_tool_links_the_action_to_what_it_was_shown_and_cited(rt, org):
    m = seat(rt, org)
    s = session(rt, org)
    call = s.before_tool("book_flight", {"seat": "window", "route": "flights to Lisbon"})
    assert isinstance(call, ToolCall) and isinstance(call, RecallResult)  # still the recall's result
    assert m.memory_id in [h.memory_id for h in call.hits] and call.recall_id in call.recall_ids
    row = s.after_tool(call, "ok", cited=[m.memory_id])
    assert row["outcome"] == "ok" and row["cited"] == [m.memory_id] and row["tool"] == "book_flight"
    got = rt.audit.actions(m.memory_id, actor=f"alice-{org}")
    assert [a["action_id"] for a in got] == [call.action_id]
    assert got[0]["depended_on"] == [m.memory_id] and got[0]["cited_of_those"] == [m.memory_id]
    assert rt.explain(call.recall_id, actor=f"alice-{org}")["cited"] == [m.memory_id]  # marked on its recall
    assert set(got[0]) >= {"ts", "ended_at", "task_id", "purpose", "scope", "recall_ids", "recalled"}
    assert not any("window" in str(v) for k, v in got[0].items() if k != "tool")  # ids, never content


def test_the_push_shown_before_the_call_counts_too(rt, org):
    m = seat(rt, org)
    s = rt.session(f"/org/{org}/user/alice/", actor=f"alice-{org}", task_id="push",
                   goal="window seat on flights for alice")
    pushed = s.start()
    assert m.memory_id in [h.memory_id for h in pushed.hits]
    call = s.before_tool("lookup_weather", {"city": "Lisbon"})
    assert pushed.recall_id in call.recall_ids and m.memory_id in call.recalled
    s.after_tool(call, "ok")
    assert call.action_id in [a["action_id"] for a in rt.audit.actions(m.memory_id, actor=f"alice-{org}")]


def test_a_context_manager_logs_ok_or_error(rt, org):
    m = seat(rt, org)
    s = session(rt, org, task="ctx")
    with s.before_tool("book_flight window seat", {"x": 1}) as call:
        call.cited = [m.memory_id]
    with pytest.raises(RuntimeError):
        with s.before_tool("book_flight window seat", {"x": 2}) as failed:
            raise RuntimeError("the booking API is down")
    got = {a["action_id"]: a for a in rt.audit.actions(m.memory_id, actor=f"alice-{org}")}
    assert got[call.action_id]["outcome"] == "ok" and got[call.action_id]["cited"] == [m.memory_id]
    assert got[failed.action_id]["outcome"] == "error"


def test_after_tool_refuses_what_is_not_its_own_typed(rt, org):
    m = seat(rt, org)
    other = seat(rt, org, "bob")
    s, t = session(rt, org, task="a"), session(rt, org, "bob", task="b")
    call = s.before_tool("book_flight window seat")
    with pytest.raises(InvalidRecord):
        t.after_tool(call, "ok")  # another session's handle
    with pytest.raises(InvalidRecord):
        s.after_tool(object(), "ok")
    with pytest.raises(InvalidRecord) as e:
        s.after_tool(call, "ok", cited=[other.memory_id])  # not among what this call was shown
    assert other.memory_id not in str(e.value)
    for bad in ("not ok!", "", None, 3):
        with pytest.raises(ValidationError):
            s.after_tool(call, bad)
    s.after_tool(call, "refused")
    with pytest.raises(InvalidRecord):
        s.after_tool(call, "ok")  # once
    assert [a["outcome"] for a in rt.audit.actions(m.memory_id, actor=f"alice-{org}")] == ["refused"]


def test_a_tool_name_passes_the_gate(rt, org):
    s = session(rt, org, task="gate")
    call = s.before_tool("notify 13800138000", {"msg": "hi"})
    row = s.after_tool(call, "ok")
    assert "13800138000" not in row["tool"]
    with pytest.raises(InvalidRecord):
        s.before_tool("export with AKIAQYLPMN5HFTXW7Z3B")


def test_actions_belong_to_whoever_may_read_the_scopes(rt, org):
    m = seat(rt, org)
    s = session(rt, org, task="grants")
    s.after_tool(s.before_tool("book_flight window seat"), "ok")
    assert rt.audit.actions(m.memory_id, actor=f"lead-{org}")  # the tenant's reader
    for intruder in (f"bob-{org}", "nobody-at-all"):
        with pytest.raises(NotFound) as e:
            rt.audit.actions(m.memory_id, actor=intruder)
        assert m.memory_id not in str(e.value)
    with pytest.raises(NotFound) as unknown:
        rt.audit.actions("0" * 32, actor=f"bob-{org}")
    with pytest.raises(NotFound) as refused:
        rt.audit.actions(m.memory_id, actor=f"bob-{org}")
    assert str(unknown.value) == str(refused.value)
    # The ledger writer filters by the reader's grants itself: bob's reader, asking for alice's
    # memory through the handle (skipping the per-memory check), sees none of alice's actions.
    got = rt._calls.get(rt._ledger.actions_on_many.remote([m.memory_id], f"bob-{org}"))  # noqa: SLF001
    assert got == []


def test_a_rollback_reports_the_actions_that_depended_on_what_it_undoes(rt, org):
    m = seat(rt, org)
    keep = rt.write(f"/org/{org}/user/alice/", "alice flies from Porto", actor=f"alice-{org}")
    s = session(rt, org, task="rb")
    call = s.before_tool("book_flight window seat")
    s.after_tool(call, "ok", cited=[m.memory_id])
    plan = rt.rollback(memory_id=m.memory_id, actor="admin-a", reason="poisoned", dry_run=True)
    assert [a["action_id"] for a in plan.affected_actions] == [call.action_id]
    assert "actions that depended on them: 1" in plan.summary()
    assert plan.to_dict()["affected_actions"][0]["depended_on"] == [m.memory_id]
    applied = rt.rollback(memory_id=m.memory_id, actor="admin-a", reason="poisoned")
    assert [a["action_id"] for a in applied.affected_actions] == [call.action_id]
    other = rt.rollback(memory_id=keep.memory_id, actor="admin-a", reason="unrelated", dry_run=True)
    assert all(m.memory_id not in a["depended_on"] for a in other.affected_actions)


def test_async_session_after_tool(rt, org):
    m = seat(rt, org)

    async def go():
        s = await rt.asession(f"/org/{org}/user/alice/", actor=f"alice-{org}", task_id="async",
                              goal="book the flights")
        await s.start()
        call = await s.before_tool("book_flight window seat")
        await s.after_tool(call, "ok")
        return call

    call = asyncio.run(go())
    assert call.action_id in [a["action_id"] for a in rt.audit.actions(m.memory_id, actor=f"alice-{org}")]


def test_a_fork_keeps_the_actions(rt, org, tmp_path):
    m = seat(rt, org)
    s = session(rt, org, task="fork")
    call = s.before_tool("book_flight window seat")
    s.after_tool(call, "ok")
    rt.write(f"/org/{org}/user/alice/", "alice landed", actor=f"alice-{org}")  # the fork point: after the action
    rt.fork(str(tmp_path / "fork"))
    with memactors.connect(str(tmp_path / "fork")) as f:
        assert call.action_id in [a["action_id"] for a in f.audit.actions(m.memory_id, actor="admin-a")]


def test_cli_audit_actions(rt, org, monkeypatch, tmp_path):
    import contextlib

    import orjson
    from click.testing import CliRunner

    import memactors.cli.audit as cmd
    from memactors.cli import cli

    m = seat(rt, org)
    s = session(rt, org, task="cli")
    call = s.before_tool("book_flight window seat")
    s.after_tool(call, "ok", cited=[m.memory_id])

    @contextlib.contextmanager
    def this_runtime(data):
        yield rt, "attached"

    monkeypatch.setattr(cmd, "open_runtime", this_runtime)
    res = CliRunner().invoke(cli, ["audit", "actions", m.memory_id, "--actor", f"alice-{org}", "--json",
                                   "--data", str(tmp_path)])
    assert res.exit_code == 0, res.output
    assert [a["action_id"] for a in orjson.loads(res.output)["actions"]] == [call.action_id]
    res = CliRunner().invoke(cli, ["audit", "actions", m.memory_id, "--actor", f"alice-{org}", "--data", str(tmp_path)])
    assert res.exit_code == 0 and call.action_id[-12:] in res.output  # ids are shown by their last characters
    res = CliRunner().invoke(cli, ["audit", "actions", m.memory_id, "--actor", "nobody", "--data", str(tmp_path)])
    assert res.exit_code == 2 and m.memory_id not in res.output
