"""Purpose policy (issue 23 item 2): ``[recall.purposes]`` maps a purpose to the categories,
source kinds and sensitivities it may see. No table: everything (nothing changes). With one: an
unlisted purpose is refused (``PurposeRefused``, an ``AccessDenied``) on every recall path, a
listed one sees only what its rule allows (in the pre-filter, beside the clearance), and the
evidence log names the rule that applied."""

from __future__ import annotations

import pytest

import memactors
from memactors import Retriever
from memactors.core.config import Config
from memactors.core.errors import AccessDenied, ConfigError, PurposeRefused
from memactors.testing import drop_hot, runtime_on, unique_org

POLICY = {"deploy": {"categories": ["instruction"], "source_kinds": ["config_change", "tool"],
                     "sensitivities": ["public", "internal"]},
          "support": {},  # listed with no limits: everything the grants allow
          "marketing": {"sensitivities": ["public"], "categories": ["default"]}}
CFG = {"runtime": {"num_owners": 2, "l2_flush_interval_s": 0.2}, "recall": {"min_score": -1.0, "purposes": POLICY}}
# (category, source, sensitivity) of each memory written
ROWS = [("instruction", "config_change", "internal"), ("instruction", "tool", "public"), ("instruction", "tool", "confidential"),
        ("instruction", "user_stated", "internal"), ("default", "config_change", "public"),
        ("default", "user_stated", "internal")]


def _tag(c, s, v) -> str:
    return f"{c}-{s}-{v}"


def _allowed(rule: dict, row) -> bool:
    c, s, v = row
    return (c in rule.get("categories", [c]) and s in rule.get("source_kinds", [s])
            and v in rule.get("sensitivities", [v]) and v != "restricted")


@pytest.fixture
def world(tmp_path):
    scope = f"/org/{unique_org('pur')}/user/u/"
    rt = runtime_on(tmp_path, CFG)
    rt.grant("w", scope, write=True)
    for c, s, v in ROWS:
        rt.write(scope, f"deployment fact tagged {_tag(c, s, v)}", actor="w", category=c, source=s, sensitivity=v)
    yield rt, scope
    rt.close()


def _tags(hits) -> set[str]:
    return {h.content.rsplit(" ", 1)[-1] for h in hits}


def _want(purpose) -> set[str]:
    return {_tag(*r) for r in ROWS if _allowed(POLICY[purpose], r)}


@pytest.mark.parametrize("path", ["hot", "cold"])
def test_a_listed_purpose_sees_only_what_its_rule_allows(world, path):
    rt, scope = world
    if path == "cold":
        drop_hot(rt)
    for purpose in POLICY:
        res = rt.recall("deployment fact tagged", actor="w", task_id="t", allowed_scopes=[scope], purpose=purpose,
                        top_k=20, threshold=0.0)
        assert _tags(res.hits) == _want(purpose), (path, purpose)
        ev = rt.explain(res.recall_id, actor="w")
        assert ev["filters"]["purpose_rule"] == purpose
    assert _want("deploy") == {"instruction-config_change-internal", "instruction-tool-public"}


def test_an_unlisted_purpose_is_refused_on_every_path(world):
    rt, scope = world
    kw = dict(actor="w", task_id="t", allowed_scopes=[scope], purpose="curiosity")
    for call in (lambda: rt.recall("deployment", **kw), lambda: rt.recall(None, **kw),
                 lambda: rt.recall("deployment", at=1, **kw), lambda: rt.push("deployment", **kw),
                 lambda: rt.recall_many([dict(query="deployment", **kw)]),
                 lambda: rt.retrieve(_Docs(), "deployment", **kw),
                 lambda: rt.agent("w", purpose="curiosity", scopes=[scope]).list(),
                 lambda: rt.agent("w", purpose="curiosity", scopes=[scope]).recall("deployment")):
        with pytest.raises(PurposeRefused) as e:
            call()
        assert isinstance(e.value, AccessDenied) and "curiosity" not in str(e.value)
    with pytest.raises(PurposeRefused):
        rt.session(scope, actor="w", task_id="s", goal="deploy the service", purpose="curiosity").start()
    out = rt.recall_many([dict(query="deployment", **kw), dict(kw, query="deployment", purpose="support")],
                         return_errors=True)
    assert isinstance(out[0], PurposeRefused) and _tags(out[1].hits)


def test_lookups_and_the_past_follow_the_rule(world):
    rt, scope = world
    ag = rt.agent("w", purpose="deploy", scopes=[scope])
    assert {m.content.rsplit(" ", 1)[-1] for m in ag.list()} == _want("deploy")
    seq = rt.audit.sql("SELECT max(seq) FROM events", actor="w")[0][0]
    res = rt.recall("deployment fact tagged", actor="w", task_id="t", allowed_scopes=[scope], purpose="marketing",
                    top_k=20, threshold=0.0, at=seq)
    assert _tags(res.hits) == _want("marketing")


class _Docs(Retriever):
    name = "runbook"

    def retrieve(self, query: str, k: int) -> list[dict]:
        return [{"content": "runbook page about deployment", "sensitivity": "internal"}]


def test_l3_results_follow_the_rule(world):
    rt, scope = world
    kw = dict(actor="w", task_id="t", allowed_scopes=[scope], threshold=0.0)
    assert rt.retrieve(_Docs(), "deployment", purpose="support", **kw).hits
    assert not rt.retrieve(_Docs(), "deployment", purpose="deploy", **kw).hits  # a document is not a tool or config
    assert not rt.retrieve(_Docs(), "deployment", purpose="marketing", **kw).hits  # internal is above public


def test_no_table_means_no_policy(tmp_path):
    with memactors.connect("memory://") as rt:
        s = "/org/np/user/u/"
        rt.grant("w", s, write=True)
        rt.write(s, "u likes tea", actor="w", category="preference", source="tool")
        res = rt.recall("tea", actor="w", task_id="t", allowed_scopes=[s], purpose="anything-at-all", threshold=0.0)
        assert len(res.hits) == 1
        assert rt.explain(res.recall_id, actor="w")["filters"]["purpose_rule"] is None


@pytest.mark.parametrize("purposes, match", [
    ([], r"must be a table"), ({"bad name": {}}, r"entry 1's name is not valid"),
    ({"p": []}, r"entry 1 must be a table"), ({"p": {"categorys": ["x"]}}, r"1 unknown key"),
    ({"p": {"sensitivities": ["secret"]}}, r"sensitivities must be one of"),
    ({"p": {"source_kinds": ["rumour"]}}, r"source_kinds must be one of"),
    ({"p": {"categories": "instruction"}}, r"categories must be a list"),
    ({"p": {"categories": ["o p"]}}, r"not valid"),
    ({"p": {"categories": ["nosuch"]}}, r"\[lifecycle\] does not define"),
])
def test_a_bad_purpose_table_is_a_config_error(purposes, match):
    with pytest.raises(ConfigError, match=match) as e:
        Config.from_dict({"recall": {"purposes": purposes}})
    assert "bad name" not in str(e.value) and "rumour" not in str(e.value)


def test_a_purpose_table_round_trips():
    cfg = Config.from_dict({"recall": {"purposes": POLICY}})
    assert Config.from_dict(cfg.to_dict()).recall.purposes == cfg.recall.purposes
    assert cfg.recall.purposes["deploy"]["sensitivities"] == ["internal", "public"]
