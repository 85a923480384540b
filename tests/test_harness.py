"""The threshold harness: pure parts (evidence, grid, metrics, recommendation, report) without
Ray, then one run on the tiny LoCoMo slice with the session's real Ray, LanceDB and DuckDB."""

from __future__ import annotations

import inspect
import os
import pathlib
import sys
import types

import numpy as np
import orjson
import pytest

from memactors.bench import grid as G
from memactors.bench import metrics as M
from memactors.bench.locomo import load_locomo, parse_evidence
from memactors.bench.recommend import recommend

TINY = str(pathlib.Path(__file__).parent / "fixtures" / "locomo_tiny")


def test_parse_evidence_repairs_and_counts():
    assert parse_evidence(["D1:3", "D2:8"]) == (["D1:3", "D2:8"], [], [])
    assert parse_evidence(["D8:6; D9:17"]) == (["D8:6", "D9:17"], ["D8:6; D9:17"], [])
    assert parse_evidence(["D:11:26"]) == (["D11:26"], ["D:11:26"], [])
    assert parse_evidence(["D1:18", "D", "D1:20"]) == (["D1:18", "D1:20"], [], ["D"])
    assert parse_evidence(["D01:05", "D1:5"]) == (["D1:5"], ["D01:05"], [])


def test_load_tiny_locomo():
    convs, stats = load_locomo(TINY)
    assert [c.conv_id for c in convs] == ["conv-26a", "conv-26b"]
    assert [len(c.turns) for c in convs] == [35, 56]
    assert convs[0].scope == "/org/locomo/user/conv-26a/"
    assert convs[0].turns[0].content.startswith("Caroline: ")
    assert stats.repaired == ["conv-26b-q2: D8:6; D9:17"] and stats.unparseable == []
    assert stats.no_evidence == ["conv-26a-q6"]
    assert {q.category for c in convs for q in c.questions} == {1, 2, 3, 4, 5}


def test_grid_spec():
    g = G.parse_grid("threshold=0:0.4:0.2; top_k=1,5; weights=0.4/0.3/0.2/0.1,1/0/0/0")
    assert g == {"threshold": [0.0, 0.2, 0.4], "top_k": [1, 5], "weights": ["0.4/0.3/0.2/0.1", "1/0/0/0"]}
    configs = G.configurations(g)
    assert len(configs) == 12  # weights are passed to the recall: one retrieval per weights value
    assert {G.retrieval_key(c) for c in configs} == {(("weights", "0.4/0.3/0.2/0.1"),), (("weights", "1/0/0/0"),)}
    assert G.retrieval_key({"threshold": 0.1, "top_k": 5, "embedder": "x"}) == (("embedder", "x"),)
    assert len(G.configurations(G.parse_grid(G.DEFAULT_GRID))) == 50
    as_dict = G.parse_grid({"threshold": [0.5], "top_k": [5], "weights": [[0.4, 0.3, 0.2, 0.1], {"vector": 1}]})
    assert as_dict["weights"] == ["0.4/0.3/0.2/0.1", "1/0.3/0.2/0.1"]
    for bad in ("top_k=5", "threshold=0.1", "threshold=0:1:0;top_k=1", "threshold=0.1;top_k=0", "nonsense"):
        with pytest.raises(ValueError):
            G.parse_grid(bad)
    # a recommended threshold goes into [recall].threshold as it is: never NaN, out of [0, 1] or text
    for bad in ("threshold=nan;top_k=1", "threshold=5,-0.5;top_k=1", "threshold=-0.5;top_k=1", "threshold=x;top_k=1",
                "threshold=inf;top_k=1"):
        with pytest.raises(ValueError, match="threshold values must be numbers from 0 to 1"):
            G.parse_grid(bad)
    with pytest.raises(ValueError, match="threshold values"):
        G.parse_grid({"threshold": [True], "top_k": [1]})
    assert G.parse_grid("threshold=0,1;top_k=1")["threshold"] == [0.0, 1.0]


def _ranked(components=None) -> M.Ranked:
    # Query 0 (conv a, cat 1): 2 labels, hits at ranks 0 and 2. Query 1 (conv b, cat 4): 1 label,
    # never found. Query 2: governance, a deleted memory at rank 0. Query 3: cat 5.
    nan = np.nan
    return M.Ranked(
        scores=np.array([[0.9, 0.5, 0.3], [0.8, 0.2, nan], [0.7, nan, nan], [0.6, 0.1, nan]], np.float32),
        gain=np.array([[1, 0, 1], [0, 0, 0], [0, 0, 0], [1, 0, 0]], np.int16),
        forbidden=np.array([[0, 0, 0], [0, 0, 0], [4, 0, 0], [0, 0, 0]], np.int8),
        n_labels=np.array([2, 1, 0, 1], np.int32), category=np.array([1, 4, 0, 5], np.int8),
        group=np.array([0, 1, -1, 0], np.int16), groups=["a", "b"], components=components)


def test_metrics_by_hand():
    r = _ranked()
    m = M.evaluate(r, {"threshold": 0.4, "top_k": 3})
    o = m["overall"]  # returned: q0 [0.9, 0.5] (1 relevant), q1 [0.8] (none)
    assert o["recall"] == pytest.approx((0.5 + 0.0) / 2)
    assert o["precision"] == pytest.approx(1 / 3) and o["fpr"] == pytest.approx(2 / 3)
    assert o["f1"] == pytest.approx(2 * (1 / 3) * 0.25 / (1 / 3 + 0.25))
    assert o["hit_rate"] == 0.5 and o["queries"] == 2
    t = m["topk"]["overall"]  # no threshold: q0 finds both labels
    assert t["recall"] == pytest.approx(0.5) and t["precision"] == pytest.approx(2 / 5)
    assert m["by_category"]["5"]["recall"] == 1.0 and m["by_category"]["1"]["recall"] == 0.5
    assert m["governance"] == {"cross_scope": 0, "expired": 0, "superseded": 0, "deleted": 1}
    assert M.evaluate(r, {"threshold": 0.75, "top_k": 3})["governance"]["deleted"] == 0  # 0.7 < 0.75
    assert M.evaluate(r, {"threshold": 0.9, "top_k": 3})["overall"]["queries"] == 2
    assert M.evaluate(r, {"threshold": 0.9, "top_k": 3})["overall"]["precision"] == 1.0  # '>=': 0.9 stays
    assert M.evaluate(r, {"threshold": 0.95, "top_k": 3})["overall"]["precision"] is None  # nothing returned
    # Per-conversation sums add up to the overall figure: what cross-validation relies on.
    assert M.finish(M.add(list(m["conv_sums"].values())))["recall"] == o["recall"]
    boot = M.evaluate(r, {"threshold": 0.4, "top_k": 3}, n_boot=50)
    assert boot["boot"]["f1"].shape == (50,) and len(boot["ci95"]["recall"]) == 2


def test_recommend_cross_validates_per_top_k():
    configs = [{"threshold": t, "top_k": 5} for t in (0.0, 0.5)]

    def sums(rec, ret, rel):
        return {"queries": 10.0, "recall_sum": rec, "hit": rel, "returned": ret, "relevant": rel}

    # 0.5 trades a little recall for far fewer false positives in every conversation.
    results = [{"conv_sums": {g: sums(9.0, 50.0, 9.0) for g in "abc"}, "overall": {}, "topk": {"overall": {}}},
               {"conv_sums": {g: sums(5.0, 12.0, 5.0) for g in "abc"}, "overall": {}, "topk": {"overall": {}}}]
    rec = recommend(configs, results, ["a", "b", "c"], default_top_k=5)
    assert rec["config"] == {"threshold": 0.5, "top_k": 5} and rec["top_k"] == 5
    assert [f["config"]["threshold"] for f in rec["folds"]] == [0.5, 0.5, 0.5]
    s = rec["by_top_k"]["5"]
    assert s["cv"]["recall"] == pytest.approx(0.5) and s["cv_baseline"]["recall"] == pytest.approx(0.9)
    assert "3 of 3 folds" in rec["why"]
    # F2 weighs recall 4x: the lower threshold's extra recall is worth its stray hits.
    f2 = recommend(configs, results, ["a", "b", "c"], default_top_k=5, beta=2.0)
    assert f2["config"]["threshold"] == 0.0 and f2["objective"] == "F2" and "no threshold" in f2["why"]
    one = recommend(configs, results, ["a"], default_top_k=3)  # top_k 3 absent: the best slice
    assert "in-sample" in one["why"] and one["folds"] == []


def test_thresholds_below_the_store_floor_are_refused_before_any_write():
    from memactors.bench.harness import prepare
    from memactors.runtime.facade import load_config

    def recall(query, *, actor, task_id, allowed_scopes, purpose, top_k=5):  # a vector-only recall's signature
        raise AssertionError("no recall before validation")

    # min_score 0.2; no write or recall may happen before the grid is refused.
    rt = types.SimpleNamespace(config=load_config({"recall": {"min_score": 0.2}}), recall=recall)
    with pytest.raises(ValueError, match="min_score"):
        prepare(rt, TINY, grid="threshold=0.1,0.5;top_k=1")
    with pytest.raises(ValueError, match="not a parameter of this runtime's recall"):
        prepare(rt, TINY, grid="threshold=0;top_k=1;weights=1/0/0/0")


def test_cli_refuses_a_bad_grid_and_a_used_folder_before_connecting(tmp_path, monkeypatch):
    from click.testing import CliRunner

    import memactors
    from memactors import cli as cli_mod

    monkeypatch.setattr(memactors, "connect", lambda *a, **k: (_ for _ in ()).throw(AssertionError("connected")))
    res = CliRunner().invoke(cli_mod.cli, ["bench", "thresholds", "--dataset", TINY, "--grid", "top_k=5",
                                           "--data", str(tmp_path / "d")])
    assert res.exit_code == 2 and res.stderr.startswith("error: --grid:")
    # a parameter the recall does not take: refused before a store is made for the grid (was: after)
    res = CliRunner().invoke(cli_mod.cli, ["bench", "thresholds", "--dataset", TINY, "--grid",
                                           "threshold=0.5;top_k=1;foo=3", "--data", str(tmp_path / "d")])
    assert res.exit_code == 2 and "'foo' is not a parameter" in res.stderr and not (tmp_path / "d").exists()
    (tmp_path / "used").mkdir()
    (tmp_path / "used" / "notes.txt").write_text("keep")
    res = CliRunner().invoke(cli_mod.cli, ["bench", "thresholds", "--dataset", TINY, "--data", str(tmp_path / "used")])
    assert res.exit_code == 2 and "not empty" in res.stderr


def test_cli_refuses_a_dataset_it_cannot_read_before_connecting(tmp_path, monkeypatch):
    """A folder with no .json, a file that is JSON but not a conversation, malformed JSON and
    data without questions: one line, exit 2, no runtime started (was: a traceback after Ray
    started, or a crash drawing the plot)."""
    from click.testing import CliRunner

    import memactors
    from memactors import cli as cli_mod

    monkeypatch.setattr(memactors, "connect", lambda *a, **k: (_ for _ in ()).throw(AssertionError("connected")))
    (tmp_path / "empty").mkdir()
    # "dangling": no evidence names a turn (was: loaded, recalled, then a TypeError drawing the plot)
    dangling = orjson.dumps({"sample_id": "z", "conversation": {"session_1": [
        {"speaker": "A", "dia_id": "D1:1", "text": "I love green apples"}]},
        "qa": [{"question": "what fruit?", "evidence": ["D9:9"], "category": 4}]}).decode()
    for name, body in [("list", "[]"), ("qa", '{"qa": [{"evidence": []}]}'), ("broken", "{not json"), ("none", "{}"),
                       ("dangling", dangling)]:
        (tmp_path / name).mkdir()
        (tmp_path / name / "c.json").write_text(body)
    for ds in ("empty", "list", "qa", "broken", "none", "dangling"):
        res = CliRunner().invoke(cli_mod.cli, ["bench", "thresholds", "--dataset", str(tmp_path / ds),
                                               "--data", str(tmp_path / "d")])
        assert res.exit_code == 2, (ds, res.output)
        assert res.stderr.startswith("error: --dataset:") and len(res.stderr.strip().splitlines()) == 1, ds
    assert len(load_locomo(TINY)[0]) == 2  # a real one still loads


@pytest.mark.ray
def test_harness_on_tiny_locomo(runtime, ray_session, tmp_path, monkeypatch):
    import ray

    from memactors.bench import run_thresholds

    ctx = ray.get_runtime_context().get_node_id()
    out = tmp_path / "out"
    hybrid = "weights" in inspect.signature(runtime.recall).parameters  # fused recall: weights on the grid too
    spec = "threshold=0:0.6:0.2;top_k=1,5" + (";weights=0.4/0.3/0.2/0.1,1/0/0/0" if hybrid else "")
    rep = run_thresholds(runtime, TINY, grid=spec, num_workers=2, out_dir=str(out), progress=False, n_boot=200)
    assert ray.get_runtime_context().get_node_id() == ctx and not runtime._host.started_ray  # the session's Ray
    assert rep["grid"]["configurations"] == 8 * (2 if hybrid else 1)
    assert rep["grid"]["retrievals"] == (2 if hybrid else 1)  # once per weights, never per threshold or top_k
    assert rep["dataset"]["turns"] == 91 and rep["dataset"]["evidence"]["repaired"]
    gate = rep["gate"]
    assert gate["evidence_turns"] == sum(gate["evidence_by_decision"].values()) > 0
    assert gate["evidence_kept_out"] == sum(n for d, n in gate["evidence_by_decision"].items()
                                            if d not in ("accepted", "redacted", "refreshed", "superseded_previous"))
    # Governance: cross-scope (incl. the other conversation), expired, superseded, deleted never come back.
    assert rep["governance"]["planted"] == {"superseded": 8, "cross_scope": 16, "expired": 8, "deleted": 8}
    assert all(v == 0 for r in rep["configs"] for v in r["governance"].values())
    by = {(r["config"]["threshold"], r["config"]["top_k"]): r for r in rep["configs"]
          if r["config"].get("weights", "0.4/0.3/0.2/0.1") == "0.4/0.3/0.2/0.1"}
    for k in (1, 5):
        recalls = [by[(t, k)]["overall"]["recall"] for t in (0.0, 0.2, 0.4, 0.6)]
        assert recalls == sorted(recalls, reverse=True)  # a higher threshold never finds more
        assert by[(0.0, k)]["topk"]["overall"]["recall"] >= by[(0.6, k)]["overall"]["recall"]
        assert set(by[(0.0, k)]["by_category"]) == {"1", "2", "3", "4", "5"}  # category 5 reported, apart from overall
    assert by[(0.0, 5)]["topk"]["overall"]["recall"] >= by[(0.0, 1)]["topk"]["overall"]["recall"] > 0
    assert 0 <= rep["bm25"]["by_top_k"]["5"]["overall"]["recall"] <= 1
    rec = rep["recommendation"]
    assert rec["top_k"] == 5 and len(rec["folds"]) == 2 and rec["why"]
    orjson.dumps(rep)  # what `memactors bench thresholds --json` prints: plain keys and types only
    saved = orjson.loads((out / "report.json").read_bytes())
    assert saved["recommendation"]["config"] == rec["config"]
    md = (out / "report.md").read_text()
    assert "## Grid" in md and "BM25" in md and "conv-26b" in md
    if "plot" in rep["outputs"]:
        assert (out / "pr_vs_threshold.png").stat().st_size > 1000
    # Without matplotlib the plot is skipped with a message; JSON and markdown are still written.
    from memactors.bench.report import write_outputs

    monkeypatch.setitem(sys.modules, "matplotlib", None)
    paths = write_outputs(rep, str(tmp_path / "noplot"))
    assert "memactors[bench]" in paths["plot_skipped"] and os.path.exists(paths["markdown"])


@pytest.mark.parametrize("blocked", [False, True], ids=["bm25s", "fallback"])
def test_bm25_baseline_with_and_without_bm25s(monkeypatch, blocked):
    from memactors.bench import bm25

    if blocked:
        monkeypatch.setitem(sys.modules, "bm25s", None)
    elif bm25._bm25s() is None:
        pytest.skip("bm25s (the [bench] extra) is not installed")
    out = bm25.rank(["Tim: I love basketball", "John: cats are nice", "Tim: rain again"], ["basketball?", "zzz"], 5)
    assert [d for d, _ in out[0]] == [0] and out[1] == []
    assert ("not installed" in bm25.implementation()) == blocked
