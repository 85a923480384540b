"""Recommend a threshold (and weights, when the grid has them) for each top_k, cross-validated.

top_k is the caller's choice per request, the threshold is the store's (``[recall].min_score``),
so a threshold is recommended for each top_k of the grid; the headline is the one for the
runtime's default top_k.

Within one top_k, fold i tunes on every conversation but i (the configuration with the best
F-beta, F1 by default, over their pooled counts; ties go to better recall, then the lower threshold) and scores that
choice on conversation i alone. The held-out counts of all folds, pooled, are the estimate the
recommendation is reported with, so no figure is scored on the data it was tuned on. The
recommended configuration is the one tuned on all conversations. Paired bootstrap resamples of
the queries (the same resamples for every configuration) say whether its F1 differs from the
same top_k at the grid's lowest threshold by more than noise.
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from .metrics import add, ci, finish

def fbeta(m: dict, beta: float = 1.0) -> float:
    """F-beta of a metrics dict: beta 1 is F1; beta 2 weighs recall 4x as much as precision."""
    p, r = m["precision"] or 0.0, m["recall"] or 0.0
    return (1 + beta**2) * p * r / (beta**2 * p + r) if p and r else 0.0


def _key(cfg: dict, m: dict, beta: float) -> tuple:
    return (round(fbeta(m, beta), 9), round(m["recall"] or 0.0, 9), -float(cfg["threshold"]))


def _best(idx: list[int], configs: list[dict], results: list[dict], groups: list[str], beta: float = 1.0) -> int:
    return max((_key(configs[i], finish(add([results[i]["conv_sums"][g] for g in groups])), beta), i) for i in idx)[1]


def _lowest_threshold(idx: list[int], configs: list[dict], i: int) -> int:
    rest = lambda c: {k: v for k, v in c.items() if k != "threshold"}  # noqa: E731
    return min((j for j in idx if rest(configs[j]) == rest(configs[i])), key=lambda j: float(configs[j]["threshold"]))


def _label(cfg: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in cfg.items())


def _f(v: float | None) -> str:
    return "n/a" if v is None else f"{v:.3f}"


def _slice(idx: list[int], configs: list[dict], results: list[dict], groups: list[str], beta: float) -> dict:
    chosen = _best(idx, configs, results, groups, beta)
    base = _lowest_threshold(idx, configs, chosen)
    cfg = configs[chosen]
    pooled = lambda i: finish(add([results[i]["conv_sums"][g] for g in groups]))  # noqa: E731
    out = {"config": cfg, "in_sample": pooled(chosen), "baseline_config": configs[base],
           "baseline_in_sample": pooled(base), "folds": [], "cv": None, "cv_baseline": None}
    bc, bb = results[chosen].get("boot"), results[base].get("boot")
    if bc and bb and chosen != base:
        diff = _boot_fbeta(bc, beta) - _boot_fbeta(bb, beta)
        out["gain_ci95"] = ci(diff)
        out["gain_p_positive"] = round(float((diff > 0).mean()), 3)
    if len(groups) >= 2:
        held, held_base = [], []
        for g in groups:
            train = [x for x in groups if x != g]
            i = _best(idx, configs, results, train, beta)
            held.append(results[i]["conv_sums"][g])
            held_base.append(results[_lowest_threshold(idx, configs, i)]["conv_sums"][g])
            out["folds"].append({"held_out_conversation": g, "config": configs[i],
                                 "tuned": fbeta(finish(add([results[i]["conv_sums"][x] for x in train])), beta),
                                 "held_out": finish(results[i]["conv_sums"][g])})
        out["cv"], out["cv_baseline"] = finish(add(held)), finish(add(held_base))
    out["why"] = _why(out, groups, beta)
    return out


def _why(s: dict, groups: list[str], beta: float) -> str:
    cfg, base = s["config"], s["baseline_config"]
    if cfg == base:
        head = (f"{_label(cfg)}: no threshold in the grid beats the lowest one ({base['threshold']}) on "
                f"{_name(beta)} at this top_k, so none is worth its lost recall")
    else:
        head = f"{_label(cfg)} has the best {_name(beta)} at this top_k over all {len(groups)} conversation(s)"
    if not s["folds"]:
        return head + "; with one conversation nothing can be held out, so the figures are in-sample."
    same = Counter(_label(f["config"]) for f in s["folds"]).get(_label(cfg), 0)
    cv, cb = s["cv"], s["cv_baseline"]
    text = (f"{head}, and was the pick of {same} of {len(groups)} folds (tune on the other conversations, score on "
            f"the one left out). On held-out conversations only, the fold picks reach {_name(beta)} "
            f"{fbeta(cv, beta):.3f} (recall {_f(cv['recall'])}, precision {_f(cv['precision'])}) against "
            f"{fbeta(cb, beta):.3f} (recall {_f(cb['recall'])}, precision {_f(cb['precision'])}) at threshold "
            f"{base['threshold']}")
    if "gain_ci95" in s:
        lo, hi = s["gain_ci95"]
        verdict = "more than resampling noise" if lo > 0 else "within resampling noise"
        text += (f"; the in-sample {_name(beta)} gain over it has a 95% bootstrap interval [{lo:+.3f}, {hi:+.3f}] "
                 f"({verdict})")
    return text + "."


def _boot_fbeta(b: dict, beta: float) -> np.ndarray:
    p, r = np.asarray(b["precision"], np.float64), np.asarray(b["recall"], np.float64)
    den = beta**2 * p + r
    return np.divide((1 + beta**2) * p * r, den, out=np.zeros_like(den), where=den > 0)


def _name(beta: float) -> str:
    return f"F{beta:g}"


def recommend(configs: list[dict], results: list[dict], groups: list[str], default_top_k: int = 5,
              beta: float = 1.0) -> dict:
    """Per top_k: the recommended configuration, its cross-validated estimate, and why; the
    headline is the default top_k's (or, if the grid lacks it, the best F1's). The objective is
    F-beta (``beta`` 1: F1; 2 when missing a relevant memory costs more than a stray one)."""
    by_k: dict[int, list[int]] = {}
    for i, c in enumerate(configs):
        by_k.setdefault(int(c["top_k"]), []).append(i)
    slices = {k: _slice(idx, configs, results, groups, beta) for k, idx in sorted(by_k.items())}
    head_k = default_top_k if default_top_k in slices else max(
        slices, key=lambda k: fbeta(slices[k]["cv"] or slices[k]["in_sample"], beta))
    head = slices[head_k]
    return {"objective": _name(beta), "top_k": head_k, "config": head["config"], "why": head["why"],
            "folds": head["folds"], "by_top_k": {str(k): v for k, v in slices.items()}}
