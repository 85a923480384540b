"""Recall as a new user calls it: ``task_id`` and ``purpose`` optional (logged as "unspecified"),
``purpose`` a name or ordinary text (gated before it is logged), a call that does not fit the
signature a typed ``BadArguments`` naming every missing argument, and a thin recall that says
what the threshold removed (``RecallResult.note``, ``best_below``; the CLI's ``--explain``).
On the process host (real LanceDB and DuckDB files, no Ray)."""

from __future__ import annotations

import asyncio
import json

import pytest
from click.testing import CliRunner

import memactors
from memactors import cli as cli_mod
from memactors.core.errors import BadArguments, InvalidRecord, PurposeRefused
from memactors.testing import runtime_on, unique_org


@pytest.fixture(scope="module")
def rt(tmp_path_factory):
    r = runtime_on(tmp_path_factory.mktemp("ergo"), {"runtime": {"host": "process"}})
    yield r
    r.close()


@pytest.fixture
def scope(rt):
    s = f"/org/{unique_org('ergo')}/user/u/"
    rt.grant("ag", s, write=True)
    rt.write(s, "Alice likes green tea in the morning", actor="ag")
    rt.write(s, "Alice commutes by bicycle", actor="ag")
    return s


def test_task_and_purpose_default_to_unspecified_and_are_logged(rt, scope):
    res = rt.recall("what does alice drink", actor="ag", allowed_scopes=[scope])
    ev = rt.explain(res.recall_id, actor="ag")
    assert (ev["task_id"], ev["purpose"]) == ("unspecified", "unspecified")
    handle = rt.agent("ag", scopes=[scope])
    assert (handle.task_id, handle.purpose) == ("unspecified", "unspecified")
    ev = rt.explain(handle.recall("tea").recall_id, actor="ag")
    assert ev["purpose"] == "unspecified"
    many = rt.recall_many([{"query": "tea", "actor": "ag", "allowed_scopes": [scope]}])
    assert rt.explain(many[0].recall_id, actor="ag")["task_id"] == "unspecified"


@pytest.mark.parametrize("purpose, logged", [
    ("answer", "answer"),
    ("answer the user's question", "answer the user's question"),
    ("  answer\tthe\n question ", "answer the question"),  # one purpose, one spelling
    ("follow up with bob@example.com about the invoice", "follow up with [EMAIL] about the invoice"),
])
def test_purpose_is_a_name_or_text_and_text_passes_the_gate(rt, scope, purpose, logged):
    res = rt.recall("tea", actor="ag", allowed_scopes=[scope], purpose=purpose)
    assert rt.explain(res.recall_id, actor="ag")["purpose"] == logged


@pytest.mark.parametrize("purpose", ["", "   ", "x" * 201, 5, None, ["answer"]])
def test_a_purpose_that_is_no_text_is_refused_typed(rt, scope, purpose):
    with pytest.raises(InvalidRecord, match="purpose"):
        rt.recall("tea", actor="ag", allowed_scopes=[scope], purpose=purpose)


def test_free_text_purposes_meet_a_purpose_table_like_any_other(tmp_path):
    table = {"answer": {}}
    r = runtime_on(tmp_path, {"runtime": {"host": "process"}, "recall": {"purposes": table}})
    try:
        s = f"/org/{unique_org('ergo')}/user/u/"
        r.grant("ag", s, write=True)
        r.write(s, "Alice likes green tea", actor="ag")
        assert r.recall("tea", actor="ag", allowed_scopes=[s], purpose="answer", threshold=0).hits
        for refused in ("answer the user's question", None):  # unlisted text; the default, unlisted
            with pytest.raises(PurposeRefused):
                if refused is None:
                    r.recall("tea", actor="ag", allowed_scopes=[s])
                else:
                    r.recall("tea", actor="ag", allowed_scopes=[s], purpose=refused)
    finally:
        r.close()


def test_a_call_missing_arguments_names_all_of_them_typed(rt, scope):
    with pytest.raises(BadArguments, match=r"rt\.recall\(\) needs actor=, allowed_scopes= \(missing\)") as e:
        rt.recall("tea")
    assert isinstance(e.value, TypeError) and "RecallAPI" not in str(e.value)
    with pytest.raises(BadArguments, match=r"rt\.recall\(\): got an unexpected keyword argument 'scopes'"):
        rt.recall("tea", actor="ag", scopes=[scope])
    with pytest.raises(BadArguments, match=r"rt\.write\(\) needs actor="):
        rt.write(scope, "text")
    with pytest.raises(BadArguments, match=r"agent\.recall\(\)"):
        rt.agent("ag", scopes=[scope]).recall()
    with pytest.raises(BadArguments, match=r"rt\.arecall\(\)"):
        asyncio.run(rt.arecall())


def test_a_type_error_inside_a_call_is_not_renamed(rt, scope, monkeypatch):
    """Only a call that does not bind becomes BadArguments; a TypeError from within stays itself."""
    def broken(*a, **kw):
        raise TypeError("deep inside")

    monkeypatch.setattr(rt, "_recall", broken)
    with pytest.raises(TypeError, match="deep inside") as e:
        rt.recall("tea", actor="ag", allowed_scopes=[scope])
    assert not isinstance(e.value, BadArguments)


def test_a_thin_recall_says_what_the_threshold_removed(rt, scope):
    res = rt.recall("quantum chromodynamics on a lattice", actor="ag", allowed_scopes=[scope], threshold=0.99)
    assert res.hits == [] and res.removed["threshold"] == 2
    assert res.threshold == 0.99 and 0 < res.best_below < 0.99
    assert res.note().startswith("2 candidates fell under the relevance threshold 0.99 (the best at ")
    assert res.to_dict()["best_below"] == res.best_below
    assert rt.explain(res.recall_id, actor="ag")["filters"]["best_below"] == res.best_below
    everything = rt.recall("quantum chromodynamics on a lattice", actor="ag", allowed_scopes=[scope], threshold=0)
    assert len(everything.hits) == 2 and everything.best_below is None and everything.note() is None
    assert max(h.relevance for h in everything.hits) == pytest.approx(res.best_below, abs=1e-6)


def test_cli_recall_without_task_or_purpose_explains_and_reports_the_threshold(tmp_path):
    data = str(tmp_path / "d")
    run = lambda *a: CliRunner().invoke(cli_mod.cli, [*a, "--data", data])  # noqa: E731
    assert run("grant", "ag", "/org/a/user/u/", "--write").exit_code == 0
    assert run("write", "/org/a/user/u/", "Alice likes green tea", "--actor", "ag").exit_code == 0
    res = run("recall", "quantum chromodynamics", "--actor", "ag", "--scope", "/org/a/user/u/", "--threshold", "0.99")
    assert res.exit_code == 0, res.output
    text = " ".join(res.output.split())
    assert "no hits" in text and "1 candidate fell under the relevance threshold 0.99" in text
    assert "a lower --threshold would return it" in text
    res = run("recall", "green tea", "--actor", "ag", "--scope", "/org/a/user/u/", "--threshold", "0",
              "--purpose", "answer the user's question", "--explain", "--json")
    out = json.loads(res.output)
    assert out["hits"] and out["explain"]["purpose"] == "answer the user's question"
    res = run("recall", "green tea", "--actor", "ag", "--scope", "/org/a/user/u/", "--threshold", "0", "--explain")
    assert res.exit_code == 0 and "best under the threshold" in res.output and "why" in res.output


def test_cli_names_every_missing_option_at_once(tmp_path):
    res = CliRunner().invoke(cli_mod.cli, ["recall", "q", "--data", str(tmp_path / "d")])
    assert res.exit_code == 2 and "missing options: --actor, --scope" in res.output
    assert not (tmp_path / "d").exists()
    res = CliRunner().invoke(cli_mod.cli, ["recall", "--help"])
    assert res.exit_code == 0 and "--threshold" in res.output


def test_the_error_is_in_the_public_hierarchy():
    assert issubclass(memactors.BadArguments, memactors.ValidationError)


def test_an_agents_list_pages_and_refuses_a_bad_offset():
    import memactors
    from memactors.core.errors import InvalidRecord

    with memactors.connect("memory://") as rt:
        rt.grant("pager", "/org/pg/user/u/", write=True)
        ag = rt.agent("pager", scopes=["/org/pg/user/u/"])
        wrote = [ag.remember(f"page item {i} about hiking").memory_id for i in range(7)]
        pages = [[m.memory_id for m in ag.list(limit=3, offset=o)] for o in (0, 3, 6)]
        assert [len(p) for p in pages] == [3, 3, 1] and sum(pages, []) == wrote
        assert [m.memory_id for m in ag.list(limit=None, offset=5)] == wrote[5:]
        for bad in (-1, 1.5, True):
            with pytest.raises(InvalidRecord):
                ag.list(offset=bad)
        other = rt.agent("nobody", scopes=["/org/pg/user/u/"])
        with pytest.raises(memactors.AccessDenied):
            other.list(offset=3)


def test_push_refuses_a_zero_count_or_budget_as_recall_does(rt, scope):
    """``top_k=0`` / ``token_budget=0`` are out of range for push as for recall (InvalidRecord),
    never quietly read as "the default" (5 items, 2,000 tokens); None is the default."""
    kw = dict(actor="ag", task_id="t", allowed_scopes=[scope], threshold=0.0)
    for bad in ({"top_k": 0}, {"token_budget": 0}):
        with pytest.raises(InvalidRecord):
            rt.push("alice", **kw, **bad)
        with pytest.raises(InvalidRecord):
            rt.recall("alice", **kw, **bad)
    assert len(rt.push("alice", **kw, top_k=1).hits) == 1
    assert len(rt.push("alice", **kw, top_k=None).hits) == 2


def test_a_sessions_l3_recall_refuses_a_zero_count_as_recall_does():
    """``Session.retrieve(top_k=0)`` is refused like every other recall's zero count, never
    widened to the default."""
    from memactors import Retriever
    from memactors.core.errors import InvalidRecord

    class Docs(Retriever):
        name = "wiki"

        def retrieve(self, query: str, k: int) -> list[dict]:
            return [{"content": f"wiki page {i} about hotels"} for i in range(k)]

    with memactors.connect("memory://") as rt:
        rt.grant("a", "/org/o/user/u/", write=True)
        s = rt.session("/org/o/user/u/", actor="a", task_id="t", goal="find a hotel")
        s.start()
        with pytest.raises(InvalidRecord):
            s.retrieve(Docs(), "hotels", top_k=0)
        assert len(s.retrieve(Docs(), "hotels", top_k=2).hits) == 2
        assert len(s.retrieve(Docs(), "hotels").hits) == rt.config.recall.default_top_k


def test_the_configured_default_top_k_holds_on_every_recall_path():
    """``[recall].default_top_k`` is the count a recall returns when none is asked for, on every
    path (``recall``, ``arecall``, ``recall_many``, an ``ops.Recall``, the agent handle, L3, a
    session); one asked for still wins."""
    from memactors import Retriever
    from memactors import ops as O

    class Docs(Retriever):
        name = "wiki"

        def retrieve(self, query: str, k: int) -> list[dict]:
            return [{"content": f"wiki page {i} about the garden"} for i in range(k)]

    scope = "/org/o/user/u/"
    with memactors.connect("memory://", config={"recall": {"default_top_k": 2, "min_score": -1.0}}) as rt:
        rt.grant("a", scope, write=True)
        rt.write_many([{"scope": scope, "text": f"garden note {i}: the {w} bed", "actor": "a"}
                       for i, w in enumerate(("rose", "tulip", "herb", "bean", "onion", "kale"))])
        kw = dict(actor="a", allowed_scopes=[scope], threshold=0.0)
        agent = rt.agent("a", scopes=[scope])
        counts = {
            "recall": len(rt.recall("garden bed", **kw).hits),
            "arecall": len(asyncio.run(rt.arecall("garden bed", **kw)).hits),
            "recall_many": len(rt.recall_many([dict(query="garden bed", **kw)])[0].hits),
            "ops": len(rt.batch([O.Recall("garden bed", "a", "t", [scope], "p", threshold=0.0)])[0].hits),
            "agent": len(agent.recall("garden bed", threshold=0.0).hits),
            "l3": len(rt.retrieve(Docs(), "garden", **kw).hits),
        }
        assert counts == dict.fromkeys(counts, 2)
        assert len(rt.recall("garden bed", top_k=4, **kw).hits) == 4


def test_recall_many_takes_at_as_recall_does():
    """A request of ``recall_many`` may carry ``at=`` (a point in time), answered as
    ``recall(at=)`` answers it, beside requests of now; a point outside the ledger is that
    request's NotFound (in place with ``return_errors``)."""
    from memactors.core.errors import NotFound

    scope = "/org/o/user/u/"
    with memactors.connect("memory://") as rt:
        rt.grant("a", scope, write=True)
        first = rt.write(scope, "the garden gate is painted green", actor="a")
        then = rt.audit.head()["seq"]
        rt.forget(first.memory_id, actor="a", reason="r")
        rt.write(scope, "the garden gate is painted blue", actor="a")
        kw = dict(query="garden gate painted", actor="a", allowed_scopes=[scope], threshold=0.0)
        got = rt.recall_many([dict(kw), dict(kw, at=then), dict(kw, at=10**9)], return_errors=True)
        assert [h.content for h in got[0].hits] == ["the garden gate is painted blue"]
        assert [h.memory_id for h in got[1].hits] == [h.memory_id for h in rt.recall(at=then, **kw).hits]
        assert isinstance(got[2], NotFound) and "position 2" in str(got[2])
        with pytest.raises(NotFound):
            rt.recall_many([dict(kw), dict(kw, at=10**9)])
