"""`memactors bench thresholds`: the retrieval-threshold harness (``memactors.bench``) on a
fresh store of its own."""

from __future__ import annotations

import os

import click

import memactors
from memactors.bench.grid import DEFAULT_GRID
from memactors.cli.fresh import fresh as fresh_folder
from memactors.cli.group import CliError, Group, cli, data_folder
from memactors.cli.output import Out
from memactors.store.layout import resolve


@cli.group(cls=Group)
def bench() -> None:
    """Benchmarks that load a labelled dataset into a fresh store of their own."""


@bench.command("thresholds")
@click.option("--dataset", required=True, type=click.Path(exists=True),
              help="A LoCoMo .json file, or a folder of them (one conversation each).")
@click.option("--grid", default=DEFAULT_GRID, show_default=True,
              help="name=values;...: values comma-separated, a:b:step an inclusive range, weights as 0.4/0.3/0.2/0.1.")
@click.option("--workers", type=click.IntRange(1, 64), default=1, show_default=True,
              help="Ray tasks scoring configurations at once.")
@click.option("--out", "out_dir", default="bench-out", show_default=True, metavar="OUT",
              help="Folder for report.json, report.md and pr_vs_threshold.png.")
@click.option("--max-questions", type=click.IntRange(1), help="Only the first N questions of each conversation.")
@click.option("--bootstrap", type=click.IntRange(0, 100_000), default=1000, show_default=True,
              help="Paired bootstrap resamples of the queries per configuration (0: none).")
@click.option("--embedder", default="hash-ngram-v1", show_default=True,
              help="Embedder of the store: hash-ngram-v1, or all-minilm-l6-v2 (the [minilm] extra).")
@click.option("--context", type=click.Choice(["none", "prev"]), default="none", show_default=True,
              help="prev: write each turn with its session's previous turn as retrieval context (indexed, not shown).")
@click.option("--beta", type=click.FloatRange(0, min_open=True), default=1.0, show_default=True,
              help="Recommend by F-beta: 1 is F1; 2 when a missed memory costs more than a stray one.")
@click.option("--fresh", is_flag=True, help="Delete DIR first (only if it looks like a memactors data folder).")
@click.option("--data", default=".memactors-bench", show_default=True, metavar="DIR", callback=data_folder,
              help="The benchmark's own store: must be new or empty (never your main data folder).")
@click.option("--json", "as_json", is_flag=True, help="Print the whole report as one JSON object instead of tables.")
def bench_thresholds(dataset: str, grid: str, workers: int, out_dir: str, max_questions: int | None, bootstrap: int,
                     context: str, beta: float, embedder: str, fresh: bool, data: str, as_json: bool) -> None:
    """Retrieval thresholds: load DATASET into a fresh store through the gate, recall every question
    once, score every grid configuration on Ray tasks (recall@k, precision, F1, hit rate, FPR,
    governance counters) beside BM25, and recommend a threshold by cross-validation across
    conversations. Exit code 1 when a governance counter (a cross-scope, expired, superseded or
    deleted memory recalled at any configuration) is not 0."""
    from memactors.bench import parse_grid, run_thresholds
    from memactors.bench.grid import check_params
    from memactors.bench.harness import NO_FLOOR
    from memactors.bench.locomo import load_locomo
    from memactors.bench.report import governance_failures

    try:  # a parameter the recall does not take is refused before a store is made for it
        check_params(parse_grid(grid), memactors.Runtime.recall)
    except ValueError as exc:
        raise CliError(f"--grid: {exc}") from None
    try:  # a dataset that cannot be read is refused before a Ray runtime is started for it
        load_locomo(dataset, max_questions=max_questions)
    except ValueError as exc:
        raise CliError(f"--dataset: {exc}") from None
    if fresh:
        fresh_folder(data)
    path = resolve(data)
    if os.path.isdir(path) and os.listdir(path):
        raise CliError(f"{path} is not empty: the benchmark needs a fresh store (--fresh deletes it)")
    out = Out(as_json)
    dim = 512 if embedder == "use-multilingual-v3" else 384  # the embedder's own dimension
    cfg = {**NO_FLOOR, "embedder": {"name": embedder, "dim": dim}}  # no floor: the grid sets thresholds
    if embedder != "hash-ngram-v1":  # a model: load it once, in an embedding actor, not in every owner
        cfg["runtime"] = {**cfg.get("runtime", {}), "embed_workers": 1}
    rt = memactors.connect(path, address="local", config=cfg)
    try:
        rep = run_thresholds(rt, dataset, grid=grid, num_workers=workers, out_dir=out_dir, progress=not as_json,
                             max_questions=max_questions, n_boot=bootstrap, beta=beta,
                             context=None if context == "none" else context)
    except ValueError as exc:
        raise CliError(str(exc)) from None
    finally:
        rt.close()
    if as_json:
        out.json(rep)
    else:
        _print(out, rep)
    bad = governance_failures(rep)
    if bad:  # a memory that must never come back came back: the run fails, whatever it recommends
        click.echo(f"error: governance counters must be 0 (max over the grid): {', '.join(bad)}", err=True)
        click.get_current_context().exit(1)


def _print(out: Out, rep: dict) -> None:
    rec, g = rep["recommendation"], rep["gate"]
    rows = [[k, ", ".join(f"{a}={b}" for a, b in v["config"].items() if a != "top_k"),
             (v["cv"] or v["in_sample"])["f1"], (v["cv"] or v["in_sample"])["recall"],
             (v["cv_baseline"] or v["baseline_in_sample"])["f1"], rep["bm25"]["by_top_k"][k]["overall"]["recall"]]
            for k, v in rec["by_top_k"].items()]
    out.table(["top_k", f"recommended by {rec['objective']}", "CV F1", "CV recall", "F1, lowest threshold",
               "BM25 recall"], rows,
              title="per top_k (figures held out by conversation)")
    out.kv([("recommended", f"{rec['config']}"), ("why", rec["why"]),
            ("governance", rep["governance"]["max_over_grid"]),
            ("gate", f"{g['evidence_kept_out']} of {g['evidence_turns']} evidence turns kept out of L2 "
                     f"{g['kept_out_by_rule']}"),
            ("evidence", f"{rep['dataset']['evidence']['unparseable_count']} unparseable"),
            ("outputs", ", ".join(v for v in rep["outputs"].values())),
            ("seconds", rep["timings"]["total_s"])])
