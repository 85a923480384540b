"""The retrieval-threshold harness: load a labelled set into a store, recall, score a grid.

    report = run_thresholds(rt, "../shared/data/locomo", grid="threshold=0:0.9:0.1;top_k=1,3,5,10,20",
                            num_workers=2, out_dir="bench-out")

Steps: LoCoMo turns and the synthetic governance set are written through ``rt`` (so through
the gate, like any write); every question is recalled once per retrieval configuration at the
grid's deepest top_k with no threshold (the driver does the recalls); the BM25 baseline ranks
the same turns; each configuration's metrics are computed on Ray tasks (``num_workers`` at
once); leave-one-conversation-out cross-validation recommends a configuration.

``rt`` must have been opened with ``[recall].min_score`` at or below the grid's lowest
threshold (``NO_FLOOR``: the CLI opens its store with -1), else the floor would hide what the
grid means to measure; where the recall takes a ``threshold`` the harness passes 0 (fused
scores are never below it).
"""

from __future__ import annotations

import inspect
import time
from collections import Counter
from contextlib import nullcontext
from dataclasses import dataclass, field

import numpy as np

from . import bm25 as bm25_mod
from .governance import ACTOR as GOV_ACTOR
from .governance import build_governance
from .grid import DEFAULT_GRID, check_params, configurations, fan_out, parse_grid, retrieval_key
from .locomo import CATEGORIES, SCORED_CATEGORIES, load_locomo
from .metrics import GOV_KINDS, Ranked, metrics_for

ACTOR = "locomo-bench"
# The store config the harness wants: no recall floor, so every threshold of a grid is measurable.
NO_FLOOR = {"recall": {"min_score": -1.0}}
STORED = {"accepted", "redacted", "refreshed", "superseded_previous"}  # decisions that put the turn in L2
RECALLABLE = STORED | {"working_only"}  # working_only: in the L1 pool, recallable for the session's lifetime


def _write_turns(rt, convs, context: str | None = None) -> tuple[dict, dict]:
    """Write every turn (``context="prev"``: with the session's previous turn as retrieval
    context); returns (dia maps per conversation, gate report)."""
    items, where = [], []
    for ci, c in enumerate(convs):
        prev = None
        for t in c.turns:
            item = {"scope": c.scope, "text": t.content, "actor": ACTOR, "source": "user_stated"}
            if context == "prev" and prev is not None and prev.session == t.session:
                item["context"] = prev.content
            items.append(item)
            where.append((ci, t.dia_id))
            prev = t
    results = rt.write_many(items)
    maps = [{"dia_to_mem": {}, "mem_to_dia": {}, "decision": {}, "rules": {}} for _ in convs]
    for (ci, dia), res in zip(where, results):
        m = maps[ci]
        m["decision"][dia] = res.decision
        m["rules"][dia] = sorted({h.get("rule", "?") for h in (res.gate or {}).get("hits", [])})
        if res.memory_id is not None and res.decision in RECALLABLE:
            m["dia_to_mem"][dia] = res.memory_id
            m["mem_to_dia"].setdefault(res.memory_id, set()).add(dia)
    return maps, _gate_report(convs, maps)


def _gate_report(convs, maps) -> dict:
    decisions, ev_dec, out_rules = Counter(), Counter(), Counter()
    evidence = kept_out = redacted = 0
    for c, m in zip(convs, maps):
        decisions.update(m["decision"].values())
        for dia in {e for q in c.questions for e in q.evidence}:
            evidence += 1
            d = m["decision"].get(dia, "missing")
            ev_dec[d] += 1
            redacted += d == "redacted"
            if d not in STORED:
                kept_out += 1
                out_rules.update(m["rules"].get(dia) or ["(no rule)"])
    # "Kept out" = kept out of L2 (blocked, pending, working_only): not a long-term memory.
    return {"turn_decisions": dict(decisions), "evidence_turns": evidence, "evidence_kept_out": kept_out,
            "evidence_redacted": redacted, "evidence_by_decision": dict(ev_dec), "kept_out_by_rule": dict(out_rules)}


def _queries(convs, maps, gov) -> list[dict]:
    qs = []
    for ci, (c, m) in enumerate(zip(convs, maps)):
        for q in c.questions:
            qs.append({"qid": q.qid, "query": q.question, "scope": c.scope, "category": q.category, "group": ci,
                       "labels": set(q.evidence), "mem_to_dia": m["mem_to_dia"], "forbidden": {}})
    for g in gov.queries if gov else []:
        qs.append({"qid": g["qid"], "query": g["query"], "scope": g["allowed_scopes"][0], "category": 0, "group": -1,
                   "labels": set(), "mem_to_dia": {}, "forbidden": g["forbidden"]})
    return qs


def _write_fields() -> set[str]:
    from ..core.records import WriteRequest

    return set(WriteRequest.__dataclass_fields__)


def _recall_kwargs(rt, key: tuple) -> dict:
    """Keyword arguments of ``rt.recall`` for one retrieval configuration: its grid parameters,
    and no threshold (the grid applies thresholds to the scores) where the recall takes one."""
    check_params(dict(key), rt.recall)
    kwargs = {"threshold": 0.0} if "threshold" in inspect.signature(rt.recall).parameters else {}  # scores >= 0
    kwargs.update(key)
    return kwargs


def _retrieve(rt, qs: list[dict], depth: int, groups: list[str], tick, kwargs: dict) -> tuple[Ranked, dict]:
    """Recall every query once at ``depth`` through the recall contract; pack the ranked table."""
    Q = len(qs)
    scores = np.full((Q, depth), np.nan, np.float32)
    gain = np.zeros((Q, depth), np.int16)
    forbidden = np.zeros((Q, depth), np.int8)
    comps = None
    lat = []
    for i, q in enumerate(qs):
        t0 = time.perf_counter()
        res = rt.recall(q["query"], actor=ACTOR if q["group"] >= 0 else GOV_ACTOR, task_id=f"bench-{i}",
                        allowed_scopes=[q["scope"]], purpose="benchmark", top_k=depth, **kwargs)
        lat.append(time.perf_counter() - t0)
        visible = set(res.visible_scopes)
        for j, h in enumerate(res.hits[:depth]):
            scores[i, j] = h.score
            gain[i, j] = len(q["mem_to_dia"].get(h.memory_id, set()) & q["labels"])
            kind = q["forbidden"].get(h.memory_id) or (None if h.scope in visible else "cross_scope")
            forbidden[i, j] = 0 if kind is None else GOV_KINDS.index(kind) + 1
            c = getattr(h, "components", None)  # fused recall's components, when the facade's hits carry them
            if c:
                comps = comps if comps is not None else np.zeros((Q, depth, 4), np.float32)
                comps[i, j] = [c.get(k, 0.0) for k in ("vector", "keyword", "recency", "importance")]
        tick(1)
    ms = np.array(lat) * 1e3
    stats = {"recalls": Q, "seconds": round(float(np.sum(lat)), 3),
             "p50_ms": round(float(np.percentile(ms, 50)), 3) if Q else None,
             "p95_ms": round(float(np.percentile(ms, 95)), 3) if Q else None}
    return _pack(qs, scores, gain, forbidden, groups, comps), stats


def _pack(qs, scores, gain, forbidden, groups, comps=None) -> Ranked:
    return Ranked(scores=scores, gain=gain, forbidden=forbidden,
                  n_labels=np.array([len(q["labels"]) for q in qs], np.int32),
                  category=np.array([q["category"] for q in qs], np.int8),
                  group=np.array([q["group"] for q in qs], np.int16), groups=groups, components=comps)


def _bm25(convs, maps, qs: list[dict], depth: int, groups: list[str]) -> Ranked:
    """The baseline over the turns the store can recall, per conversation (its scope)."""
    lq = [q for q in qs if q["group"] >= 0]
    scores = np.full((len(lq), depth), np.nan, np.float32)
    gain = np.zeros((len(lq), depth), np.int16)
    for ci, (c, m) in enumerate(zip(convs, maps)):
        kept = [t for t in c.turns if t.dia_id in m["dia_to_mem"]]
        rows = [i for i, q in enumerate(lq) if q["group"] == ci]
        ranked = bm25_mod.rank([t.content for t in kept], [lq[i]["query"] for i in rows], depth)
        for i, hits in zip(rows, ranked):
            for j, (d, s) in enumerate(hits):
                scores[i, j] = s
                gain[i, j] = len(m["mem_to_dia"][m["dia_to_mem"][kept[d].dia_id]] & lq[i]["labels"])
    return _pack(lq, scores, gain, np.zeros_like(gain, dtype=np.int8), groups)


def _progress(enabled: bool):
    if not enabled:
        return nullcontext(None)
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    return Progress(TextColumn("{task.description:<10}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                    console=Console(stderr=True), transient=False)


@dataclass
class Prepared:
    """Everything a threshold cannot change, computed once: the ranked tables of each retrieval,
    the BM25 baseline, and the report's dataset, gate and governance parts."""

    grid: dict
    configs: list[dict]
    groups: list[str]
    ranked: dict
    bm25: dict
    default_top_k: int
    report: dict
    timings: dict = field(default_factory=dict)


def prepare(rt, dataset: str, *, grid: str | dict = DEFAULT_GRID, progress: bool = True, governance: bool = True,
            max_questions: int | None = None, context: str | None = None) -> Prepared:
    """Load ``dataset`` and the governance set into ``rt`` (a fresh store) and recall every query
    once per retrieval configuration; nothing here depends on a threshold or a top_k <= depth.
    ``context="prev"`` writes each turn with the previous turn of its session as retrieval
    context (indexed beside it, never shown), where the runtime's writes take one."""
    t_all = time.perf_counter()
    timings: dict[str, float] = {}
    g = parse_grid(grid)
    configs = configurations(g)
    keys = list(dict.fromkeys(retrieval_key(c) for c in configs))
    kwargs = {key: _recall_kwargs(rt, key) for key in keys}  # refused here, before anything is written
    if context not in (None, "prev"):
        raise ValueError(f"context must be None or 'prev', not {context!r}")
    if context and "context" not in _write_fields():
        raise ValueError("this runtime's writes take no retrieval context")
    floor = float(rt.config.recall.min_score)
    if min(g["threshold"]) < floor:
        raise ValueError(f"the grid's lowest threshold {min(g['threshold'])} is below the store's "
                         f"[recall].min_score {floor}: open the store with a lower floor")
    depth = max(g["top_k"])
    t = time.perf_counter()
    convs, ev_stats = load_locomo(dataset, max_questions=max_questions)
    groups = [c.conv_id for c in convs]
    timings["load_s"] = time.perf_counter() - t
    n_turns = sum(len(c.turns) for c in convs)
    with _progress(progress) as bar:
        tick = (lambda tid: (lambda n: bar.advance(tid, n))) if bar else (lambda tid: (lambda n: None))
        t = time.perf_counter()
        rt.grant(ACTOR, "/org/locomo/", write=True)
        gov = build_governance(rt) if governance else None
        w = bar.add_task("writing", total=n_turns) if bar else None
        maps, gate = _write_turns(rt, convs, context)
        tick(w)(n_turns)
        timings["write_s"] = time.perf_counter() - t
        if gov:
            timings["expiry_wait_s"] = gov.wait_for_expiry()
        qs = _queries(convs, maps, gov)
        ranked, recall_stats = {}, {}
        r = bar.add_task("recalling", total=len(qs) * len(keys)) if bar else None
        t = time.perf_counter()
        for key in keys:
            ranked[key], recall_stats[str(dict(key))] = _retrieve(rt, qs, depth, groups, tick(r), kwargs[key])
        timings["recall_s"] = time.perf_counter() - t
    t = time.perf_counter()
    base = _bm25(convs, maps, qs, depth, groups)
    bm = {k: metrics_for(base, threshold=None, top_k=k) for k in g["top_k"]}
    timings["bm25_s"] = time.perf_counter() - t
    timings["prepare_s"] = time.perf_counter() - t_all
    report = {
        "dataset": {"path": dataset, "conversations": groups, "turns": n_turns, "context": context,
                    "questions": sum(len(c.questions) for c in convs),
                    "questions_by_category": dict(Counter(str(q.category) for c in convs for q in c.questions)),
                    "evidence": ev_stats.to_dict()},
        "categories": {str(k): v for k, v in CATEGORIES.items()},
        "scored_categories": list(SCORED_CATEGORIES),
        "category_5": "adversarial: excluded from overall, reported on its own in by_category",
        "gate": gate,
        "governance": {"planted": gov.written if gov else {}, "queries": len(gov.queries) if gov else 0},
        "retrieval": {"embedder": f"{rt.config.embedder.name}/{rt.config.embedder.dim}", "floor": floor,
                      "depth": depth, "by_key": recall_stats,
                      "components": any(v.components is not None for v in ranked.values())},
        "bm25": {"implementation": bm25_mod.implementation(),
                 "by_top_k": {str(k): {"overall": v["overall"], "by_category": v["by_category"]}
                              for k, v in bm.items()}},
    }
    return Prepared(g, configs, groups, ranked, bm, rt.config.recall.default_top_k, report, timings)


def score(prep: Prepared, *, num_workers: int = 1, n_boot: int = 1000, out_dir: str | None = None,
          progress: bool = True, beta: float = 1.0) -> dict:
    """Score every configuration of ``prep`` on Ray tasks (``num_workers`` at once), recommend
    by F-``beta`` (F1 by default), and write the outputs to ``out_dir``; returns the report."""
    t0 = time.perf_counter()
    with _progress(progress) as bar:
        gtask = bar.add_task("grid", total=len(prep.configs)) if bar else None
        done = (lambda n: bar.advance(gtask, n)) if bar else None
        results, fan = fan_out(prep.ranked, prep.configs, num_workers=num_workers, n_boot=n_boot, on_done=done)
    from .recommend import recommend

    rec = recommend(prep.configs, results, prep.groups, default_top_k=prep.default_top_k, beta=beta)
    rows = []
    for c, res in zip(prep.configs, results):
        res.pop("conv_sums", None)
        res.pop("boot", None)
        rows.append({"config": c, **res, "bm25": prep.bm25[c["top_k"]]["overall"]})
    timings = dict(prep.timings, **fan, score_s=time.perf_counter() - t0)
    timings["total_s"] = timings["prepare_s"] + timings["score_s"]
    report = dict(prep.report)
    report["governance"] = dict(report["governance"],
                                max_over_grid={k: max(r["governance"][k] for r in rows) for k in GOV_KINDS})
    report.update(grid={"spec": prep.grid, "configurations": len(prep.configs), "retrievals": len(prep.ranked),
                        "workers": num_workers, "bootstrap_resamples": n_boot},
                  configs=rows, recommendation=rec,
                  timings={k: round(v, 3) if isinstance(v, float) else v for k, v in timings.items()})
    if out_dir:
        from .report import write_outputs

        report["outputs"] = write_outputs(report, out_dir)
    return report


def run_thresholds(rt, dataset: str, *, grid: str | dict = DEFAULT_GRID, num_workers: int = 1,
                   out_dir: str | None = None, progress: bool = True, governance: bool = True,
                   max_questions: int | None = None, n_boot: int = 1000, beta: float = 1.0,
                   context: str | None = None) -> dict:
    """Run the harness on ``rt`` (a fresh store): ``prepare`` then ``score``; returns the report."""
    prep = prepare(rt, dataset, grid=grid, progress=progress, governance=governance, max_questions=max_questions,
                   context=context)
    return score(prep, num_workers=num_workers, n_boot=n_boot, out_dir=out_dir, progress=progress, beta=beta)
