"""`memactors eval`: the release gate (``memactors.eval``) on a fresh store of its own."""

from __future__ import annotations

import os
import shutil
import tempfile

import click

from memactors.cli.group import CliError, cli, data_folder
from memactors.cli.output import Out


@cli.command("eval")
@click.option("--set", "set_name", type=click.Choice(["small", "generated"]), default="small", show_default=True,
              help="small: the shipped cases (what CI runs); generated: new ones from --seed.")
@click.option("--cases", "n_cases", type=click.IntRange(1, 100_000),
              help="small: only the first N cases; generated: how many (default: as many as small has).")
@click.option("--seed", type=click.IntRange(0), help="The generator's seed (--set generated only; default: small's).")
@click.option("--min-recall", type=click.FloatRange(0, 1),
              help="The floor of must-recall recall@5 (default: memactors.eval.DEFAULT_MIN_RECALL, 0.95).")
@click.option("--data", metavar="DIR", callback=data_folder,
              help="A new or empty scratch folder for the run's store, kept afterwards (default: a temporary "
                   "folder, deleted). Every byte in it is scanned: never your main data folder.")
@click.option("--out", metavar="OUT", help="Also write the report as JSON to the file OUT.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as one JSON object instead of tables.")
def eval_(set_name: str, n_cases: int | None, seed: int | None, min_recall: float | None, data: str | None,
          out: str | None, as_json: bool) -> None:
    """The release gate: run scenario cases (cross-scope, expired, superseded, forgotten, blocked,
    pending and low-confidence memories) through the public API on a fresh store, then scan every
    file, Lance version and DuckDB table for what must be gone. Reports each governance counter
    (must be 0) and must-recall recall@5; exit code 1 when any counter is not 0 or recall@5 is
    below the floor."""
    from memactors.eval import DEFAULT_MIN_RECALL, SMALL_SET, check_set, generate, run_eval, small_set

    if set_name == "small" and seed is not None:
        raise CliError("--seed applies to --set generated only")
    if set_name == "small":
        cases = small_set()
        if n_cases is not None and n_cases > len(cases):
            raise CliError(f"--cases: the small set has {len(cases)} cases")
        cases = cases[:n_cases]
    else:
        cases = generate(n_cases or SMALL_SET["cases"], SMALL_SET["seed"] if seed is None else seed)
    check_set(cases)
    if data is not None and os.path.exists(data) and (not os.path.isdir(data) or os.listdir(data)):
        raise CliError(f"--data: {os.path.abspath(data)} is not a new or empty folder "
                       "(the eval scans every byte in it)")
    if out is not None and not os.path.isdir(os.path.dirname(os.path.abspath(out))):
        raise CliError("--out: its folder does not exist")
    scratch = None if data is not None else tempfile.mkdtemp(prefix="memactors-eval-")
    path = data if data is not None else os.path.join(scratch, "data")
    try:
        report = run_eval(path, cases, min_recall=DEFAULT_MIN_RECALL if min_recall is None else min_recall,
                          set_name=set_name if n_cases is None else f"{set_name}[:{len(cases)}]")
    finally:
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)
    doc = report.to_dict()
    if out is not None:
        import orjson

        with open(out, "wb") as f:
            f.write(orjson.dumps(doc, option=orjson.OPT_INDENT_2))
    show = Out(as_json)
    if as_json:
        show.json(doc)
    else:
        _print(show, report, out)
    click.get_current_context().exit(report.exit_code())


SHOWN = 8  # example rows in the table; the JSON report has them all (up to 25)
_PLACES = (("file ", "file"), ("lance file ", "Lance file"), ("full-text index ", "full-text index"),
           ("duckdb ", "DuckDB table"))


def _places(where: list[str]) -> str:
    """Where residue was found, counted by kind of place (the JSON report names each one)."""
    kinds: dict[str, int] = {}
    for p in where:
        kind = next((k for prefix, k in _PLACES if p.startswith(prefix)), "Lance version")
        kinds[kind] = kinds.get(kind, 0) + 1
    return ", ".join(f"{k} x{n}" for k, n in kinds.items())


def _print(show: Out, report, out: str | None) -> None:
    s = report.set
    show.table(["measure", "count", "of", "rate", "verdict"], report.rows(),
               title=f"release gate: {s['cases']} cases ({s['name']}), {s['writes']} writes, {s['probes']} probes")
    rows = [[e["counter"], e["case"], e["write"] if "write" in e else f"probe {e['probe']}", e.get("memory_id"),
             e.get("scope") or e.get("got") or _places(e.get("where", []))] for e in report.examples]
    if rows:
        more = f"; {len(rows) - SHOWN} more in --json / --out" if len(rows) > SHOWN else ""
        show.table(["counter", "case", "write / probe", "memory id", "scope / decision / found in"], rows[:SHOWN],
                   title=f"examples (ids and places only, never content{more})")
    res = report.residue
    show.kv([("residue scan", ", ".join(f"{k.replace('_', ' ')} {v:,}" for k, v in res["scanned"].items())
              if res else "not run"),
             ("purge", res["purge"] if res else "-"),
             ("seconds", ", ".join(f"{k[:-2]} {v}" for k, v in report.timings.items())),
             ("report", out or "-")])
    fails = report.failures()
    show.line("gate: PASS" if not fails else "gate: FAIL\n  " + "\n  ".join(fails),
              style="bold green" if not fails else "bold red")
