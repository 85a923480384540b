"""Structured recall (issue 23 item 3): ``recall(..., where={...})`` filters on subject,
predicate, category, source kind and a time range in the pre-filter of every path, combined
with the hybrid score or alone (``query=None``: newest first); keys and values are checked,
values bound as data (never SQL from the caller), and refusals never echo the input."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

import pytest

import memactors
from memactors import Retriever, ops
from memactors.core.errors import InvalidIdentifier, InvalidRecord, ValidationError
from memactors.core.visibility import parse_where
from memactors.store import lance_store
from memactors.testing import drop_hot, runtime_on, unique_org

CFG = {"runtime": {"num_owners": 2, "l2_flush_interval_s": 0.2}, "recall": {"min_score": -1.0}}
T0 = datetime(2026, 3, 1, tzinfo=UTC)
# (day, text, subject, predicate, object, category, source)
ROWS = [
    (0, "alice prefers dark mode", "alice", "ui_theme", "dark", "preference", "user_stated"),
    (10, "alice lives in porto", "alice", "city", "porto", "entity_fact", "user_stated"),
    (20, "bob prefers light mode", "bob", "ui_theme", "light", "preference", "agent_inferred"),
    (30, "the deploy checklist has five steps", None, None, None, "instruction", "config_change"),
    (40, "alice's favourite tool is a hammer", "alice", "tool", "hammer", "preference", "tool"),
    (50, "bob's quote it's O'Brien's", "O'Brien", "quote", "x", "default", "user_stated"),
]


@pytest.fixture
def world(tmp_path):
    scope = f"/org/{unique_org('whr')}/user/u/"
    clock = memactors.ManualClock(_us(T0))
    rt = runtime_on(tmp_path, CFG, clock=clock)
    rt.grant("w", scope, write=True)
    for day, text, s, p, o, c, src in ROWS:
        clock.set(_us(T0 + timedelta(days=day)))
        rt.write(scope, text, actor="w", subject=s, predicate=p, object=o, category=c, source=src,
                 ttl_days="never", soft_ttl_days="never")
    clock.set(_us(T0 + timedelta(days=60)))
    yield rt, scope
    rt.close()


def _us(t: datetime) -> int:
    return int(t.timestamp() * 1_000_000)


def _texts(hits) -> list[str]:
    return [h.content for h in hits]


CASES = [
    ({"subject": "alice"}, {0, 1, 4}),
    ({"subject": "ALICE ", "predicate": "UI_Theme"}, {0}),  # together: normalised, as facts compare
    ({"subject": "Alice"}, set()),  # alone: as stored
    ({"predicate": "ui_theme"}, {0, 2}),
    ({"category": "preference"}, {0, 2, 4}),
    ({"source_kind": "user_stated"}, {0, 1, 5}),
    ({"category": "preference", "source_kind": "user_stated"}, {0}),
    ({"since": (T0 + timedelta(days=20)).isoformat()}, {2, 3, 4, 5}),
    ({"until": T0 + timedelta(days=20)}, {0, 1}),
    ({"since": T0 + timedelta(days=5), "until": (T0 + timedelta(days=31)).isoformat()}, {1, 2, 3}),
    ({"subject": "O'Brien"}, {5}),  # a quote is data, not syntax
    ({"subject": "x' OR '1'='1"}, set()),
    ({"subject": "alice') OR (1=1"}, set()),
    ({"predicate": "ui_theme' --"}, set()),
]


def _recall(rt, scope, query, where, **kw):
    return rt.recall(query, actor="w", task_id="t", allowed_scopes=[scope], purpose="p", top_k=20, threshold=0.0,
                     where=where, **kw)


@pytest.mark.parametrize("path", ["hot", "cold", "cold-queried"])
def test_where_selects_exactly_on_each_path(world, path, monkeypatch):
    rt, scope = world
    if path == "cold-queried":  # a small scope is scanned whole: here, the vector and full-text queries
        monkeypatch.setattr(lance_store, "SCAN_ROWS", 0)
        path = "cold"
    if path == "cold":
        drop_hot(rt)
    for where, want in CASES:
        expect = {ROWS[i][1] for i in want}
        for query in ("alice bob mode porto tool deploy quote", None):
            res = _recall(rt, scope, query, where)
            assert set(_texts(res.hits)) == expect, (path, where, query)
            if path == "cold":
                assert res.path == "cold"


def test_without_a_query_the_newest_come_first(world):
    rt, scope = world
    res = _recall(rt, scope, None, {"subject": "alice"}, )
    assert _texts(res.hits) == [ROWS[4][1], ROWS[1][1], ROWS[0][1]]
    res = rt.recall(None, actor="w", task_id="t", allowed_scopes=[scope], purpose="p", top_k=2)
    assert _texts(res.hits) == [ROWS[5][1], ROWS[4][1]]
    drop_hot(rt)
    assert _texts(_recall(rt, scope, None, {"subject": "alice"}).hits) == [ROWS[4][1], ROWS[1][1], ROWS[0][1]]
    ev = rt.explain(res.recall_id, actor="w")
    assert ev["filters"]["listing"] is True


def test_where_combines_with_the_score(world):
    rt, scope = world
    res = _recall(rt, scope, "dark mode", {"predicate": "ui_theme"})
    assert _texts(res.hits)[0] == ROWS[0][1] and set(_texts(res.hits)) == {ROWS[0][1], ROWS[2][1]}
    ev = rt.explain(res.recall_id, actor="w")
    assert ev["filters"]["where"] == ["predicate"]  # which keys, never their values


def test_every_other_path_takes_where(world):
    rt, scope = world
    w = {"subject": "alice", "since": T0 + timedelta(days=5)}
    want = {ROWS[1][1], ROWS[4][1]}
    seq = rt.audit.sql("SELECT max(seq) FROM events", actor="w")[0][0]
    rt.write(scope, "alice now lives in lisbon", actor="w", subject="alice", predicate="city", object="lisbon")
    assert set(_texts(_recall(rt, scope, "alice", w, at=seq).hits)) == want
    assert set(_texts(_recall(rt, scope, None, w, at=seq).hits)) == want
    now = {ROWS[4][1], "alice now lives in lisbon"}
    ag = rt.agent("w", scopes=[scope])
    assert set(_texts(ag.recall("alice", where=w, threshold=0.0, top_k=20).hits)) == now
    assert set(_texts(asyncio.run(ag.arecall(None, where=w, top_k=20)).hits)) == now
    (res,) = rt.batch([ops.Recall("alice", "w", "t", [scope], "p", 20, None, 0.0, None, None, w)])
    assert set(_texts(res.hits)) == now
    (res,) = rt.recall_many([dict(query="alice", actor="w", task_id="t", allowed_scopes=[scope], purpose="p",
                                  top_k=20, threshold=0.0, where=w)])
    assert set(_texts(res.hits)) == now
    # working items: filtered like the rest
    rt.write(scope, "alice scratch note", actor="w", subject="alice", predicate="scratch", object="n", pool="working")
    assert "alice scratch note" in _texts(_recall(rt, scope, "alice scratch", {"predicate": "scratch"}).hits)
    assert "alice scratch note" not in _texts(_recall(rt, scope, "alice scratch", {"predicate": "city"}).hits)


class _Docs(Retriever):
    name = "docs"

    def retrieve(self, query: str, k: int) -> list[dict]:
        return [{"content": "doc about alice", "updated_at": int((T0 + timedelta(days=3)).timestamp() * 1e6)}]


def test_l3_results_pass_only_the_filters_that_can_hold_for_them(world):
    rt, scope = world
    kw = dict(actor="w", task_id="t", allowed_scopes=[scope], purpose="p", threshold=0.0)
    assert rt.retrieve(_Docs(), "alice", where={"source_kind": "document"}, **kw).hits
    assert not rt.retrieve(_Docs(), "alice", where={"subject": "alice"}, **kw).hits  # a document has no subject
    assert not rt.retrieve(_Docs(), "alice", where={"since": T0 + timedelta(days=4)}, **kw).hits


MARK = "QZXMARK"


@pytest.mark.parametrize("where, err", [
    ({"subjekt": MARK}, InvalidRecord), ({MARK: 1}, InvalidRecord), ({"sql": f"1=1; {MARK}"}, InvalidRecord),
    ("subject = 'x'", InvalidRecord), (["subject"], InvalidRecord),
    ({"subject": 5}, InvalidRecord), ({"subject": ""}, InvalidRecord), ({"subject": MARK + "\\"}, InvalidRecord),
    ({"subject": MARK + "\x00"}, InvalidRecord), ({"subject": "x" * 600}, InvalidRecord),
    ({"category": f"{MARK} OR 1=1"}, InvalidIdentifier), ({"source_kind": MARK}, InvalidRecord),
    ({"since": MARK}, InvalidRecord), ({"since": 1.5}, InvalidRecord), ({"until": True}, InvalidRecord),
    ({"since": "2026-03-02", "until": "2026-03-01"}, InvalidRecord),
])
def test_bad_where_is_refused_typed_without_echo(world, where, err):
    rt, scope = world
    with pytest.raises(err) as e:
        _recall(rt, scope, "alice", where)
    assert MARK not in str(e.value) and "OR 1=1" not in str(e.value)
    with pytest.raises(err):
        parse_where(where)


def test_an_empty_where_is_no_filter():
    assert parse_where({}) is None and parse_where(None) is None
    assert parse_where({"subject": None}) is None
    with pytest.raises(ValidationError):
        parse_where({"subject": "a", "bogus": None})


def test_an_owner_checks_a_where_it_is_handed_again(world):
    """A caller that skips the facade hands the owner its own ``where``: checked again there,
    and its values stay data."""
    from memactors.testing import owner_for

    rt, scope = world
    drop_hot(rt)
    plan = rt._plan_recall("alice", "w", "t", [scope], "p", 20, None, 0.0, None, "pull")  # noqa: SLF001
    req = dict(plan.owner_req, qvec=rt.embedder.embed(["alice"])[0])
    owner = owner_for(rt, scope)
    for bad in ({"subject": "x' OR '1'='1"}, {"category": "preference' OR '1'='1"}, {"raw": "1=1"},
                {"since": "1=1"}):
        try:
            got = rt._calls.get(owner.recall.remote(dict(req, where=bad)))  # noqa: SLF001
        except ValidationError:
            continue
        assert got["hits"] == [], bad
    got = rt._calls.get(owner.recall.remote(dict(req, where={"subject": "alice"})))  # noqa: SLF001
    assert {h["content"] for h in got["hits"]} == {ROWS[i][1] for i in (0, 1, 4)}
