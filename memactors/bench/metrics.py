"""Metrics of one configuration over one retrieval's ranked results (NumPy; no Ray, no I/O).

A retrieval is run once with the widest top_k and no threshold; every (threshold, top_k[,
weights]) configuration is then a mask over its ranked table (retrieval parameters such as
weights were applied by the recall that made the table):

- recall@k:   a query's labelled items among the hits returned (after the threshold), averaged
              over labelled queries: LoCoMo's turn-level recall@k;
- precision:  returned hits that are labelled relevant, over all returned hits (micro);
- F1:         2PR / (P + R) of the two above;
- hit rate:   share of queries with at least one relevant hit returned;
- FPR:        returned hits that are not relevant, over all returned hits (1 - precision);
- governance: forbidden hits (cross-scope, expired, superseded, deleted) among returned hits.

A hit is returned when its rank < top_k and its score >= threshold, as the runtime's
``[recall].threshold`` compares, so a recommended threshold can go into the config as it is.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

GOV_KINDS = ("cross_scope", "expired", "superseded", "deleted")


@dataclass
class Ranked:
    """One retrieval's results for every query, padded to K columns (rank order)."""

    scores: np.ndarray  # float32 [Q, K], NaN where there is no hit
    gain: np.ndarray  # int16 [Q, K]: labels (evidence ids) this hit covers
    forbidden: np.ndarray  # int8 [Q, K]: 0, or 1 + index into GOV_KINDS
    n_labels: np.ndarray  # int32 [Q]
    category: np.ndarray  # int8 [Q] (0 for governance queries)
    group: np.ndarray  # int16 [Q]: conversation index, -1 for governance queries
    groups: list[str]  # conversation ids
    components: np.ndarray | None = None  # float32 [Q, K, 4] mapped components, when the recall gives them

    @property
    def depth(self) -> int:
        return self.scores.shape[1]


def returned_mask(scores: np.ndarray, threshold: float | None, top_k: int) -> np.ndarray:
    mask = ~np.isnan(scores)
    mask[:, top_k:] = False
    if threshold is not None:
        with np.errstate(invalid="ignore"):
            mask &= scores >= threshold
    return mask


def _sums(mask: np.ndarray, gain: np.ndarray, n_labels: np.ndarray, idx: np.ndarray, n: int) -> dict:
    """Additive per-group sums, so any union of groups (a CV fold) is scored exactly."""
    labelled = n_labels > 0
    mask = mask & labelled[:, None]  # a query without labels cannot be scored: none of its hits count
    found = (gain * mask).sum(axis=1)
    nrel = ((gain > 0) & mask).sum(axis=1)
    nret = mask.sum(axis=1)
    rec = np.where(labelled, found / np.maximum(n_labels, 1), 0.0)
    bc = lambda w: np.bincount(idx, weights=w, minlength=n)  # noqa: E731
    return {"queries": bc(labelled.astype(float)), "recall_sum": bc(rec),
            "hit": bc(((nrel > 0) & labelled).astype(float)),
            "returned": bc(nret.astype(float)), "relevant": bc(nrel.astype(float))}


def finish(s: dict) -> dict:
    """Metrics from summed counts (one group's, or several added together)."""
    q, ret = float(s["queries"]), float(s["returned"])
    recall = s["recall_sum"] / q if q else None
    precision = s["relevant"] / ret if ret else None
    f1 = (2 * precision * recall / (precision + recall) if precision and recall else 0.0) if q else None
    return {"recall": recall, "precision": precision, "f1": f1, "hit_rate": s["hit"] / q if q else None,
            "fpr": 1.0 - precision if precision is not None else None, "returned_per_query": ret / q if q else None,
            "queries": int(q)}


def add(parts: list[dict]) -> dict:
    return {k: sum(p[k] for p in parts) for k in parts[0]}


def _split(s: dict, i: int) -> dict:
    return {k: float(v[i]) for k, v in s.items()}


def metrics_for(r: Ranked, *, threshold: float | None, top_k: int,
                scored_categories: tuple[int, ...] = (1, 2, 3, 4)) -> dict:
    """Everything one configuration reports: overall (scored categories), per category, per
    conversation (sums, for cross-validation), and the governance counters."""
    gain, forbidden = r.gain, r.forbidden
    mask = returned_mask(r.scores, threshold, top_k)
    ncat = int(r.category.max(initial=0)) + 1
    by_cat = _sums(mask, gain, r.n_labels, r.category.astype(np.int64), ncat)
    scored = np.isin(r.category, scored_categories) & (r.group >= 0)
    ng = len(r.groups)
    conv_idx = np.where(scored, r.group, ng).astype(np.int64)  # bucket ng = not scored
    by_conv = _sums(mask, gain, r.n_labels, conv_idx, ng + 1)
    conv_sums = {g: _split(by_conv, i) for i, g in enumerate(r.groups)}
    overall = finish(add(list(conv_sums.values()))) if conv_sums else finish(_split(by_conv, ng))
    present = set(np.unique(r.category[r.group >= 0]).tolist())
    gov = {k: int(((forbidden == i + 1) & mask).sum()) for i, k in enumerate(GOV_KINDS)}
    return {"overall": overall, "by_category": {str(c): finish(_split(by_cat, c)) for c in sorted(present)},
            "conv_sums": conv_sums, "governance": gov}


@lru_cache(maxsize=4)
def _resamples(n: int, n_boot: int, seed: int) -> np.ndarray:
    # The same resamples for every configuration (fixed seed): comparisons between them are paired.
    return np.random.default_rng(seed).integers(0, n, size=(n_boot, n), dtype=np.int32)


def bootstrap(r: Ranked, mask: np.ndarray, gain: np.ndarray, n_boot: int, seed: int = 0,
              scored_categories: tuple[int, ...] = (1, 2, 3, 4)) -> dict:
    """Recall, precision and F1 of ``n_boot`` resamples (with replacement) of the scored, labelled queries."""
    keep = np.isin(r.category, scored_categories) & (r.group >= 0) & (r.n_labels > 0)
    m, g = mask[keep], gain[keep]
    if not len(m) or not n_boot:
        return {}
    rec = (g * m).sum(axis=1) / r.n_labels[keep]
    nrel = ((g > 0) & m).sum(axis=1).astype(np.float64)
    nret = m.sum(axis=1).astype(np.float64)
    idx = _resamples(len(m), n_boot, seed)
    R = rec[idx].mean(axis=1)
    ret = nret[idx].sum(axis=1)
    P = np.divide(nrel[idx].sum(axis=1), ret, out=np.zeros_like(ret), where=ret > 0)
    F = np.divide(2 * P * R, P + R, out=np.zeros_like(R), where=(P + R) > 0)
    return {"recall": R.astype(np.float32), "precision": P.astype(np.float32), "f1": F.astype(np.float32)}


def ci(values: np.ndarray) -> list[float]:
    return [round(float(v), 4) for v in np.percentile(values, [2.5, 97.5])]


def evaluate(r: Ranked, config: dict, scored_categories: tuple[int, ...] = (1, 2, 3, 4), n_boot: int = 0) -> dict:
    """One configuration ({threshold, top_k, ...}): thresholded and unthresholded top-k, and
    (``n_boot`` > 0) paired bootstrap samples of recall, precision and F1."""
    top_k = int(config["top_k"])
    if top_k > r.depth:
        raise ValueError(f"top_k {top_k} is deeper than the retrieval ({r.depth})")
    out = metrics_for(r, threshold=float(config["threshold"]), top_k=top_k, scored_categories=scored_categories)
    out["topk"] = metrics_for(r, threshold=None, top_k=top_k, scored_categories=scored_categories)
    out["topk"].pop("conv_sums")
    if n_boot:
        out["boot"] = bootstrap(r, returned_mask(r.scores, float(config["threshold"]), top_k), r.gain, n_boot,
                                scored_categories=scored_categories)
        out["ci95"] = {k: ci(v) for k, v in out["boot"].items()}
    return out


def evaluate_many(r: Ranked, configs: list[dict], n_boot: int = 0) -> list[dict]:
    return [evaluate(r, c, n_boot=n_boot) for c in configs]
