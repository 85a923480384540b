"""The configuration grid and its fan-out over Ray tasks.

A grid is ``{parameter: [values]}``; its configurations are the cross product. Parameters fall
in two kinds:

- *post* parameters (``threshold``, ``top_k``) only mask one retrieval's ranked results: they
  cost no recall (a smaller top_k is a prefix of the deepest one);
- every other parameter (``weights``, ...) is a *retrieval* parameter, passed to the recall:
  each distinct combination is recalled once (at the grid's deepest top_k, without a
  threshold) and shared by all the post configurations that go with it. Re-fusing one
  retrieval's score components under other weights would be cheaper but not exact: which
  candidates an owner returns depends on the weights.

Spec strings (the CLI's ``--grid``): ``"threshold=0:0.9:0.1;top_k=1,3,5,10,20"``; a value list
is comma-separated, ``a:b:step`` is an inclusive range, weights are written ``0.4/0.3/0.2/0.1``.
"""

from __future__ import annotations

import inspect
import itertools
import math
import time
from collections.abc import Callable

POST_PARAMS = ("threshold", "top_k")
DEFAULT_GRID = "threshold=0:0.9:0.1;top_k=1,3,5,10,20"


def _value(name: str, text):
    if name == "weights":  # one canonical label per weighting, whatever form it came in
        from ..core.scoring import Weights

        return Weights.parse(text).label()
    if name == "top_k":
        return int(text)
    try:
        return float(text)
    except ValueError:
        return text


def parse_grid(spec: str | dict) -> dict[str, list]:
    """A grid from a spec string or a dict of lists (validated either way)."""
    if isinstance(spec, dict):
        grid = {k: [_value(k, v) if k == "weights" else v for v in vs] for k, vs in spec.items()}
    else:
        grid = {}
        for part in [p.strip() for p in spec.split(";") if p.strip()]:
            name, sep, values = part.partition("=")
            name = name.strip()
            if not sep or not name or not values.strip():
                raise ValueError(f"grid part {part!r} is not name=values")
            out = []
            for v in [v.strip() for v in values.split(",") if v.strip()]:
                if v.count(":") == 2 and name != "weights":
                    a, b, step = (float(x) for x in v.split(":"))
                    if step <= 0:
                        raise ValueError(f"grid range {v!r} needs a positive step")
                    n = int(math.floor((b - a) / step + 1e-9)) + 1
                    out += [_value(name, repr(round(a + i * step, 10))) for i in range(n)]
                else:
                    out.append(_value(name, v))
            grid[name] = list(dict.fromkeys(out))
    for need in ("threshold", "top_k"):
        if not grid.get(need):
            raise ValueError(f"the grid needs {need} values")
    if any(not isinstance(k, int) or k < 1 for k in grid["top_k"]):
        raise ValueError("top_k values must be positive integers")
    # as [recall].threshold takes them: a recommended threshold goes into the config as it is
    if any(isinstance(t, bool) or not isinstance(t, (int, float)) or not 0.0 <= t <= 1.0 for t in grid["threshold"]):
        raise ValueError("threshold values must be numbers from 0 to 1")
    return grid


def check_params(grid: dict[str, list], recall) -> None:
    """Refuse a retrieval parameter ``recall`` (a runtime's recall method) does not take,
    before a store is made for the grid."""
    accepted = inspect.signature(recall).parameters
    for name in grid:
        if name not in POST_PARAMS and name not in accepted:
            raise ValueError(f"grid parameter {name!r} is not a parameter of this runtime's recall; the grid takes "
                             f"{[*POST_PARAMS, *(p for p in accepted if p in ('weights',))]}")


def configurations(grid: dict[str, list]) -> list[dict]:
    names = list(grid)
    return [dict(zip(names, combo)) for combo in itertools.product(*(grid[n] for n in names))]


def retrieval_key(config: dict) -> tuple:
    """The retrieval parameters of a configuration: configurations with equal keys share one retrieval."""
    return tuple(sorted((k, v) for k, v in config.items() if k not in POST_PARAMS))


def chunks(items: list, n: int) -> list[list]:
    size = max(1, math.ceil(len(items) / max(1, n)))
    return [items[i : i + size] for i in range(0, len(items), size)]


def fan_out(ranked_by_key: dict, configs: list[dict], *, num_workers: int, n_boot: int = 0,
            on_done: Callable[[int], None] | None = None) -> tuple[list[dict], dict]:
    """Evaluate every configuration on Ray tasks, at most ``num_workers`` running at once.

    Each retrieval's table goes to the object store once; a task evaluates a chunk of
    configurations (4 chunks a worker, so a slow chunk does not leave a worker idle). Returns
    results in ``configs`` order and timings."""
    import ray

    remote = ray.remote(num_cpus=1, max_retries=2)(_eval_chunk)
    t0 = time.perf_counter()
    refs = {k: ray.put(v) for k, v in ranked_by_key.items()}
    # Warm the workers (a fresh worker imports numpy and memactors: ~1-2 s, paid once).
    ray.get([remote.remote(None, [], 0.2) for _ in range(num_workers)])
    t1 = time.perf_counter()
    indexed = list(enumerate(configs))
    by_key: dict[tuple, list] = {}
    for i, c in indexed:
        by_key.setdefault(retrieval_key(c), []).append((i, c))
    work = [(k, part) for k, items in by_key.items() for part in chunks(items, 4 * num_workers)]
    n_tasks = len(work)
    results: list[dict | None] = [None] * len(configs)
    pending: dict = {}
    while work or pending:
        while work and len(pending) < num_workers:
            k, part = work.pop(0)
            pending[remote.remote(refs[k], [c for _, c in part], 0.0, n_boot)] = part
        done, _ = ray.wait(list(pending), num_returns=1)
        for ref in done:
            part = pending.pop(ref)
            for (i, _), res in zip(part, ray.get(ref)):
                results[i] = res
            if on_done:
                on_done(len(part))
    t2 = time.perf_counter()
    return results, {"warmup_s": round(t1 - t0, 3), "grid_s": round(t2 - t1, 3), "tasks": n_tasks,
                     "workers": num_workers}


def _eval_chunk(ranked, configs: list[dict], sleep_s: float = 0.0, n_boot: int = 0) -> list[dict]:
    if sleep_s:
        time.sleep(sleep_s)  # warm-up tasks: long enough that each lands on its own worker
    if ranked is None:
        return []
    from .metrics import evaluate_many

    return evaluate_many(ranked, configs, n_boot)
