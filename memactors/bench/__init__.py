"""The retrieval-threshold harness (DESIGN section 5; issue 4): LoCoMo and a synthetic
governance set loaded into a store, every query recalled once, a grid of thresholds and top_k
scored on Ray tasks, a BM25 baseline beside it, and a cross-validated recommendation.

    from memactors.bench import run_thresholds
    report = run_thresholds(rt, "../shared/data/locomo", num_workers=2, out_dir="bench-out")
"""

from .grid import DEFAULT_GRID, configurations, parse_grid
from .harness import run_thresholds
from .locomo import load_locomo, parse_evidence

__all__ = ["DEFAULT_GRID", "configurations", "load_locomo", "parse_evidence", "parse_grid", "run_thresholds"]
