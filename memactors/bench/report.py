"""The harness's outputs: ``report.json``, ``report.md`` and ``pr_vs_threshold.png``.

matplotlib comes with the ``[bench]`` extra and is imported only here, lazily: without it the
plot is skipped with a message saying which extra to install; JSON and markdown are always written.
"""

from __future__ import annotations

import os

import orjson

from .locomo import CATEGORIES


def governance_failures(report: dict) -> list[str]:
    """The governance counters (max over the grid) that are not 0, as "kind: n"; each must be 0,
    and ``memactors bench thresholds`` exits 1 when this is not empty."""
    gov = (report.get("governance") or {}).get("max_over_grid") or {}
    return [f"{k}: {v}" for k, v in gov.items() if v]


def _f(v) -> str:
    return "-" if v is None else f"{v:.3f}" if isinstance(v, float) else str(v)


def _cfg(c: dict) -> list[str]:
    return [_f(c["threshold"]), str(c["top_k"])] + ([str(c["weights"])] if "weights" in c else [])


def _ci(row: dict) -> str:
    c = row.get("ci95", {}).get("f1")
    return f" ({c[0]:.3f}-{c[1]:.3f})" if c else ""


def _sorted(rows: list[dict]) -> list[dict]:
    return sorted(rows, key=lambda r: (str(r["config"].get("weights", "")), r["config"]["top_k"],
                                       r["config"]["threshold"]))


def _table(head: list[str], rows: list[list[str]]) -> list[str]:
    return ["| " + " | ".join(head) + " |", "|" + "---|" * len(head), *("| " + " | ".join(r) + " |" for r in rows)]


def _by_category(report: dict) -> list[str]:
    """Unthresholded recall@k by category, embedder beside BM25, at each top_k of the grid."""
    cats = sorted(int(c) for c in report["dataset"]["questions_by_category"])
    head = ["retriever", "k", *[f"{c} {CATEGORIES.get(c, '?')}" for c in cats], "overall (1-4)"]
    rows, seen = [], set()
    for row in report["configs"]:
        c = row["config"]
        key = (c["top_k"], c.get("weights"))
        if key in seen:
            continue
        seen.add(key)
        name = "memactors" + (f" w={c['weights']}" if "weights" in c else "")
        by = row["topk"]["by_category"]
        rows.append([name, str(c["top_k"]), *[_f(by.get(str(k), {}).get("recall")) for k in cats],
                     _f(row["topk"]["overall"]["recall"])])
    for k, v in report["bm25"]["by_top_k"].items():
        by = v["by_category"]
        rows.append(["BM25", k, *[_f(by.get(str(c), {}).get("recall")) for c in cats],
                     _f(v["overall"]["recall"])])
    return _table(head, sorted(rows, key=lambda r: (int(r[1]), r[0])))


def markdown(report: dict) -> str:
    d, gate, rec, tm = report["dataset"], report["gate"], report["recommendation"], report["timings"]
    ev = d["evidence"]
    wcol = ["weights"] if "weights" in report["grid"]["spec"] else []
    out = [
        "# Retrieval thresholds", "",
        f"Dataset `{d['path']}`: {len(d['conversations'])} conversations, {d['turns']} turns, {d['questions']} "
        f"questions (by category {d['questions_by_category']}). Overall figures are categories 1-4; category 5 "
        "(adversarial) is reported on its own.",
        f"Evidence: {ev['ids']} labels from {ev['fields']} fields; repaired {len(ev['repaired'])}, unparseable "
        f"{ev['unparseable_count']} {ev['unparseable']}, naming no turn {len(ev['dangling'])} {ev['dangling']}, "
        f"questions left without evidence {len(ev['questions_without_evidence'])}.",
        f"Gate: turn decisions {gate['turn_decisions']}; of {gate['evidence_turns']} evidence turns "
        f"{gate['evidence_kept_out']} kept out (by rule {gate['kept_out_by_rule']}), {gate['evidence_redacted']} "
        "redacted.",
        f"Retrieval: {report['retrieval']['embedder']}, floor {report['retrieval']['floor']}, depth "
        f"{report['retrieval']['depth']}; BM25: {report['bm25']['implementation']}.",
        f"Governance counters (max over the grid, must be 0): {report['governance']['max_over_grid']} over "
        f"{report['governance']['queries']} queries, planted {report['governance']['planted']}.", "",
        "## Recall@k by category (no threshold)", "", *_by_category(report), "",
        "## Grid", "",
        "Thresholded metrics, then the same top_k without a threshold and BM25 at that top_k; "
        "governance counters cross-scope/expired/superseded/deleted.", "",
        *_table(["threshold", "top_k", *wcol, "recall", "F1 (95% CI)", "precision", "hit rate", "FPR", "hits/q",
                 "top-k recall", "top-k precision", "top-k F1", "BM25 recall", "BM25 precision", "BM25 F1",
                 "gov x/e/s/d"],
                [[*_cfg(r["config"]), _f(r["overall"]["recall"]), _f(r["overall"]["f1"]) + _ci(r),
                  *(_f(r["overall"][m]) for m in ("precision", "hit_rate", "fpr", "returned_per_query")),
                  *(_f(r["topk"]["overall"][m]) for m in ("recall", "precision", "f1")),
                  *(_f(r["bm25"][m]) for m in ("recall", "precision", "f1")),
                  "/".join(str(v) for v in r["governance"].values())] for r in _sorted(report["configs"])]), "",
        "## Recommendation", "", f"At the default top_k ({rec['top_k']}): `{rec['config']}`. {rec['why']}", "",
        *_table(["top_k", "recommended", "CV F1", "CV recall", "CV precision", "CV F1 at lowest threshold",
                 f"{rec['objective']} gain 95% CI (in-sample)"],
                [[k, ", ".join(f"{a}={b}" for a, b in v["config"].items() if a != "top_k"),
                  *((_f((v["cv"] or v["in_sample"])[m]) for m in ("f1", "recall", "precision"))),
                  _f((v["cv_baseline"] or v["baseline_in_sample"])["f1"]), str(v.get("gain_ci95", "-"))]
                 for k, v in rec["by_top_k"].items()]), "",
    ]
    if rec["folds"]:
        out += [f"Folds at top_k {rec['top_k']}:", ""]
        out += _table(["held out", "chosen on the other conversations", f"tuned {rec['objective']}", "held-out recall",
                       "held-out precision", "held-out F1"],
                      [[f["held_out_conversation"], ", ".join(f"{k}={v}" for k, v in f["config"].items()),
                        _f(f["tuned"]), _f(f["held_out"]["recall"]), _f(f["held_out"]["precision"]),
                        _f(f["held_out"]["f1"])] for f in rec["folds"]]) + [""]
    out += ["## Timings (s)", "", ", ".join(f"{k} {v}" for k, v in tm.items()), ""]
    return "\n".join(out)


def plot(report: dict, path: str) -> str | None:
    """Precision, recall and F1 against threshold, one panel per top_k; the recommendation marked."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "matplotlib is not installed: plots skipped (pip install 'memactors[bench]')"
    recs = report["recommendation"]["by_top_k"]
    head = report["recommendation"]["config"]
    rows = [r for r in report["configs"] if r["config"].get("weights") == head.get("weights")]
    ks = sorted({r["config"]["top_k"] for r in rows})
    fig, axes = plt.subplots(1, len(ks), figsize=(3.2 * len(ks) + 1, 3.4), sharey=True, squeeze=False)
    for ax, k in zip(axes[0], ks):
        rs = sorted((r for r in rows if r["config"]["top_k"] == k), key=lambda r: r["config"]["threshold"])
        xs = [r["config"]["threshold"] for r in rs]
        for m, style in (("recall", "-o"), ("precision", "-s"), ("f1", "-^")):
            ax.plot(xs, [r["overall"][m] if r["overall"][m] is not None else float("nan") for r in rs], style,
                    ms=3, label=m)
        bm = report["bm25"]["by_top_k"][str(k)]["overall"]["recall"]
        ax.axhline(bm, color="grey", ls=":", label="BM25 recall")
        rec = recs[str(k)]["config"]
        if rec.get("weights") == head.get("weights"):
            ax.axvline(rec["threshold"], color="red", ls="--", label="recommended threshold")
        ax.set_title(f"top_k={k}" + (" (default)" if k == report["recommendation"]["top_k"] else ""))
        ax.set_xlabel("threshold")
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel("categories 1-4")
    if head.get("weights"):
        fig.suptitle(f"weights {head['weights']} (vector/keyword/recency/importance)", fontsize=9)
    axes[0][-1].legend(fontsize=7, loc="best")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return None


def write_outputs(report: dict, out_dir: str) -> dict:
    os.makedirs(out_dir, exist_ok=True)
    paths = {"json": os.path.join(out_dir, "report.json"), "markdown": os.path.join(out_dir, "report.md")}
    png = os.path.join(out_dir, "pr_vs_threshold.png")
    skipped = plot(report, png)
    if skipped:
        paths["plot_skipped"] = skipped
    else:
        paths["plot"] = png
    with open(paths["markdown"], "w", encoding="utf-8") as f:
        f.write(markdown(report))
    with open(paths["json"], "wb") as f:
        f.write(orjson.dumps(dict(report, outputs=paths), option=orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS))
    return paths
