"""The command line of the simulation: ``python -m memactors.sim`` (and, once the CLI exposes it,
``memactors simulate``). A thin layer: read the configuration, build the backends by name, call
``run``, print the summary, write the outputs, exit non-zero when a governed backend failed.

Configuration: the ``[sim]`` table (world), ``[sim.rates]``, ``[sim.policy]`` (ScriptedPolicy's
``probe_rate``, ``follow_injection_rate``, ``recall_before_answer``, and ``chaos_rate``) and
``[sim.run]`` (``backends``, ``out``, ``plots``). Options given on the command line win.
"""

from __future__ import annotations

import os
import shutil
import sys

import click
import orjson

from ..core.errors import ConfigError
from .backend import BACKENDS
from .policy import ChaosPolicy, ScriptedPolicy
from .report import print_summary, write_outputs
from .runner import run
from .world import WorldConfig, read_table

_POLICY_KEYS = ("probe_rate", "follow_injection_rate", "recall_before_answer", "chaos_rate")
_RUN_KEYS = ("backends", "out", "plots")


def _default_backends() -> list[str]:
    return ["memactors", "langgraph-sqlite"] if "memactors" in BACKENDS else ["dict", "langgraph-sqlite"]


def _subtable(table: dict, name: str, known: tuple[str, ...]) -> dict:
    sub = table.get(name, {})
    if not isinstance(sub, dict):
        raise ConfigError(f"[sim.{name}] must be a table")
    if bad := sorted(set(sub) - set(known)):
        raise ConfigError(f"unknown [sim.{name}] keys {bad}; [sim.{name}] takes {list(known)}")
    return sub


def _check(pol: dict, runcfg: dict) -> None:
    """The values of [sim.policy] and [sim.run] (the world's are checked by WorldConfig)."""
    for k in ("probe_rate", "follow_injection_rate"):
        v = pol.get(k, 0)
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0.0 <= v <= 1.0:  # nan fails too
            raise ConfigError(f"[sim.policy] {k} must be a number between 0 and 1")
    if not isinstance(pol.get("recall_before_answer", True), bool):
        raise ConfigError("[sim.policy] recall_before_answer must be true or false")
    b = runcfg.get("backends", [])
    if not isinstance(b, list) or not all(isinstance(n, str) for n in b):
        raise ConfigError('[sim.run] backends must be a list of backend names, e.g. ["memactors"]')
    if not isinstance(runcfg.get("out", ""), str):
        raise ConfigError("[sim.run] out must be a folder name")
    if not isinstance(runcfg.get("plots", True), bool):
        raise ConfigError("[sim.run] plots must be true or false")


@click.command("simulate")
@click.option("--config", "config_path", type=click.Path(exists=True, dir_okay=False),
              help="TOML file with a [sim] table (configs/sim-default.toml).")
@click.option("--backend", "backend_names", multiple=True,
              help="Backend to run, by registered name (memactors, langgraph-sqlite, dict); repeat to run "
                   "several side by side. Default: [sim.run] backends.")
@click.option("--out", "out_dir", type=click.Path(file_okay=False), help="Folder for report.json and the plots.")
@click.option("--seed", type=int, help="Override [sim] seed.")
@click.option("--tenants", type=int, help="Override [sim] tenants.")
@click.option("--users-per-tenant", type=int, help="Override [sim] users_per_tenant.")
@click.option("--days", type=int, help="Override [sim] days.")
@click.option("--ticks-per-day", type=int, help="Override [sim] ticks_per_day.")
@click.option("--chaos", "chaos_rate", type=float, help="Add malformed/out-of-grant actions at this rate per agent-tick.")
@click.option("--no-progress", is_flag=True, help="No progress bar.")
@click.option("--no-plots", is_flag=True, help="Skip the PNG plots.")
@click.option("--keep-data", is_flag=True, help="Keep each backend's working folder under OUT/work/.")
@click.option("--data", "data_dir", type=click.Path(file_okay=False), metavar="DIR",
              help="Run the memactors backend on this data folder (DIR/data, kept for the other verbs to inspect).")
@click.option("--json", "as_json", is_flag=True, help="Print the JSON report on stdout instead of tables.")
def simulate(config_path, backend_names, out_dir, seed, tenants, users_per_tenant, days, ticks_per_day, chaos_rate,
             no_progress, no_plots, keep_data, data_dir, as_json):
    """Run the batch simulation on memory backends side by side and judge them: throughput, tick
    latency, accuracy against the ground truth, governance counters. Exits 1 when a governed
    backend has a non-zero counter."""
    try:
        table = read_table(config_path) if config_path else {}
        pol = _subtable(table, "policy", _POLICY_KEYS)
        runcfg = _subtable(table, "run", _RUN_KEYS)
        _check(pol, runcfg)
        overrides = {"seed": seed, "tenants": tenants, "users_per_tenant": users_per_tenant, "days": days,
                     "ticks_per_day": ticks_per_day}
        cfg = WorldConfig.from_dict(table | {k: v for k, v in overrides.items() if v is not None})
    except ConfigError as e:
        raise click.UsageError(str(e)) from None
    chaos = chaos_rate if chaos_rate is not None else pol.get("chaos_rate", 0)
    if isinstance(chaos, bool) or not isinstance(chaos, (int, float)) or not 0.0 <= chaos <= 1.0:  # nan fails too
        raise click.BadParameter("the chaos rate is a number from 0 to 1 (a rate per agent-tick)", param_hint="--chaos")
    if data_dir is not None and not data_dir.strip():  # an unset shell variable: never a folder of our choosing
        raise click.BadParameter("it is empty: name the data folder (or leave --data out)", param_hint="--data")
    names = list(backend_names) or list(runcfg.get("backends") or _default_backends())
    if unknown := [n for n in names if n not in BACKENDS]:
        raise click.BadParameter(f"unknown backend(s) {unknown}; known: {sorted(BACKENDS)}", param_hint="--backend")
    out_dir = out_dir or runcfg.get("out") or "sim-out"
    work = os.path.join(out_dir, "work")
    backends = []
    for n in names:
        folder = data_dir if n == "memactors" and data_dir else os.path.join(work, n)
        try:
            os.makedirs(folder, exist_ok=True)
        except OSError as e:
            raise click.BadParameter(f"cannot make the folder {folder} ({e.strerror})",
                                     param_hint="--data" if folder == data_dir else "--out") from None
        backends.append(BACKENDS[n](folder))
    policy = ScriptedPolicy(seed=cfg.seed, top_k=cfg.top_k,
                            **{k: v for k, v in pol.items() if k != "chaos_rate"})
    if chaos:
        policy = ChaosPolicy(policy, rate=chaos, seed=cfg.seed)
    try:
        report = run(cfg, backends, policy=policy, progress=not (no_progress or as_json))
    finally:
        if not keep_data:
            shutil.rmtree(work, ignore_errors=True)
    outputs = write_outputs(report, out_dir, plots=not no_plots and runcfg.get("plots", True))
    if as_json:
        with open(outputs["json"], "rb") as f:  # one object on one line, as every --json verb
            click.echo(orjson.dumps(orjson.loads(f.read())).decode())
        sys.exit(report.exit_code())
    print_summary(report)
    click.echo(f"report: {outputs['json']}" + "".join(f"\nplot: {p}" for p in outputs.get("plots", []))
               + (f"\n{outputs['note']}" if outputs.get("note") else ""))
    for b in report.backends:
        if b["skipped"]:
            click.echo(f"skipped {b['name']}: {b['skipped']}", err=True)
    sys.exit(report.exit_code())
