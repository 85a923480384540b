"""A run's report and its outputs: the rich progress bar, the summary table (one column per
backend) with its legend and the outcome in sentences, ``report.json``, and three PNG plots
(operations per second; the same beside the governance counters' running totals; memory counts,
over simulated days). matplotlib comes with the ``[sim]`` extra and is imported only in ``plot``:
without it the plots are skipped with a note.
"""

from __future__ import annotations

import os
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field

import orjson

from .metrics import COUNTERS, LABELS
from .verdict import sentences


@dataclass
class Report:
    """What ``run`` measured. ``backends`` holds one dict per backend: name, governed, skipped
    (a reason, or None), totals, counters, secrets_stored (by kind) and ticks (one row per tick)."""

    config: dict
    policy: str
    world: dict
    runner: dict
    backends: list[dict] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)

    def exit_code(self) -> int:
        """0 when every governed backend kept every counter at 0 and ran; 1 otherwise. An
        ungoverned baseline's counters are reported, never fatal."""
        return 1 if self.failures else 0

    def backend(self, name: str) -> dict:
        return next(b for b in self.backends if b["name"] == name)

    def to_dict(self) -> dict:
        return asdict(self) | {"exit_code": self.exit_code()}


# -- while running ---------------------------------------------------------------------------

@contextmanager
def progress(enabled: bool, total: int, backends: list[str], console=None):
    """A rich progress bar over ticks (on stderr, or ``console``); yields ``update(tick, day,
    rows)`` where rows maps a backend's name to its latest tick row. Disabled: a no-op updater.
    No time-remaining column: beside two backends' rates it was clipped at 80 columns."""
    if not enabled:
        yield lambda tick, day, rows: None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    bar = Progress(TextColumn("day {task.fields[day]:>6}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                   TextColumn("{task.fields[rate]}"), console=console or Console(stderr=True))
    with bar:
        task = bar.add_task("ticks", total=total, day="0", rate="")

        def update(tick: int, day: float, rows: dict) -> None:
            rate = "  ".join(f"{n} {r['ops_per_s']:,.0f}/s" for n, r in rows.items() if r.get("ops_per_s"))
            bar.update(task, completed=tick + 1, day=f"{day:.1f}", rate=rate)

        yield update


# -- after the run ---------------------------------------------------------------------------

def _fmt(v) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:,.3f}" if abs(v) < 100 else f"{v:,.0f}"
    if isinstance(v, int):
        return f"{v:,}"
    return str(v)


def _counts(by_kind: dict) -> str:
    """``{"InvalidRecord": 3}`` as "InvalidRecord 3", none as "none" (never Python's braces)."""
    return ", ".join(f"{k} {n:,}" for k, n in by_kind.items()) or "none"


def _memories(counts: dict) -> str:
    parts = []
    for pool, by_status in sorted(counts.items()):
        if isinstance(by_status, dict):
            parts += [f"{pool}/{status} {n:,}" for status, n in sorted(by_status.items()) if n]
    return "\n".join(parts) or "-"  # one per line: the cell folds instead of widening the table


def summary_rows(report: Report) -> list[tuple[str, list[str]]]:
    """(label, one cell per backend) rows of the summary table."""
    bs = report.backends
    rows: list[tuple[str, list[str]]] = [("governed", ["yes" if b["governed"] else "no (baseline)" for b in bs])]
    if any(b["skipped"] for b in bs):
        rows.append(("ran", ["skipped (below)" if b["skipped"] else "yes" for b in bs]))
    live = [b.get("totals") or {} for b in bs]
    rows += [
        ("memory operations", [_fmt(t.get("ops")) for t in live]),
        ("operations per second", [_fmt(t.get("ops_per_s")) for t in live]),
        ("tick ms: median/p95/max", ["/".join(_fmt(t["tick_ms"][k]) for k in ("p50", "p95", "max"))
                                     if t else "-" for t in live]),
        ("hits per recall", [_fmt(t.get("hits_per_recall")) for t in live]),
        ("accuracy (clean probes)", [_fmt(t.get("accuracy")) for t in live]),
        ("current value in top k", [_fmt(t.get("probe_recall")) for t in live]),
    ]
    for c in COUNTERS:
        rows.append((LABELS[c][0], [_fmt(b["counters"].get(c)) if b.get("totals") else "-" for b in bs]))
    rows += [
        ("refused or failed", ["\n".join(f"{k} {v:,}" for k, v in t.get("errors", {}).items()) or "0"
                               if t else "-" for t in live]),
        ("sweeps (count, s)", [f"{t['sweeps']['count']}, {t['sweeps']['seconds']:.2f}" if t else "-" for t in live]),
        ("memories at the end", [_memories(t.get("memories", {})) if t else "-" for t in live]),
    ]
    return rows


def legend() -> list[str]:
    """What each governance counter counts, one line each (printed under the table)."""
    return [f"  {label}: {meaning}" for label, meaning in (LABELS[c] for c in COUNTERS)]


def print_summary(report: Report, console=None) -> None:
    """The table (80 columns: cells fold), the counters' legend, the runner's line, the outcome
    in sentences, then PASS or FAIL."""
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    console = console or Console()
    w, r = report.world, report.runner
    table = Table(title=f"simulation: {w['users']:,} users, {w['orgs']} orgs, {w['days']} days, "
                        f"{w['ticks']} ticks, {report.policy} policy")
    table.add_column("", no_wrap=True)
    for b in report.backends:
        table.add_column(b["name"], justify="right", overflow="fold")
    counters = {LABELS[c][0] for c in COUNTERS}
    for label, cells in summary_rows(report):  # Text: a cell's "[sim]" is not rich markup
        table.add_row(label, *map(Text, cells), style="bold" if label in counters else None)
    console.print(table)
    console.print("the governance counters (each must stay 0 on a governed store):", highlight=False)
    for line in legend():
        console.print(line, highlight=False)
    console.print(f"runner: {r['actions']:,} actions ({sum(w['planted_secrets'].values()):,} planted secrets), "
                  f"invalid {_counts(r['invalid_actions'])}, policy errors {_counts(r['policy_errors'])}\n"
                  f"        world {r['world_s']:.2f} s, policy {r['policy_s']:.2f} s, wall {r['wall_s']:.2f} s",
                  highlight=False)
    console.print()
    for line in sentences(report):
        console.print(line, highlight=False, markup=False)
    if report.failures:
        console.print(Text("FAIL", style="bold red") + Text(": " + "; ".join(report.failures)))
    elif any(b["governed"] for b in report.backends):
        console.print("[bold green]PASS[/]: every governed backend kept every counter at 0")
    else:
        console.print("no governed backend in this run: the counters above are reported, not judged")


def write_json(report: Report, path: str) -> None:
    with open(path, "wb") as f:
        f.write(orjson.dumps(report.to_dict(), option=orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS
                             | orjson.OPT_SERIALIZE_NUMPY))


def plot(report: Report, out_dir: str) -> tuple[list[str], str | None]:
    """``ops_per_s.png``, ``governance.png`` and ``memories.png`` in ``out_dir``. Returns (paths, note when skipped)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return [], "matplotlib is not installed: plots skipped (pip install 'memactors[sim]')"
    live = [b for b in report.backends if b.get("ticks")]
    paths = []
    fig, ax = plt.subplots(figsize=(7.5, 3.8))
    for b in live:
        xs = [r["day"] for r in b["ticks"]]
        ax.plot(xs, [r["ops_per_s"] or float("nan") for r in b["ticks"]], lw=1.2, label=b["name"])
    ax.set_xlabel("simulated day")
    ax.set_ylabel("memory operations / s")
    ax.set_yscale("log")
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=8)
    ax.set_title("throughput per tick", fontsize=10)
    fig.tight_layout()
    paths.append(os.path.join(out_dir, "ops_per_s.png"))
    fig.savefig(paths[-1], dpi=110)
    plt.close(fig)

    paths.append(_plot_governance(plt, live, out_dir))

    fig, axes = plt.subplots(1, max(len(live), 1), figsize=(4.2 * max(len(live), 1) + 0.5, 3.6), squeeze=False)
    for ax, b in zip(axes[0], live):
        series: dict[str, list] = {}
        rows = [r for r in b["ticks"] if "counts" in r]
        for r in rows:
            for pool, by in r["counts"].items():
                for status in by if isinstance(by, dict) else ():
                    series.setdefault(f"{pool}/{status}", [])
        for key in sorted(series):
            pool, status = key.split("/", 1)
            ax.plot([r["day"] for r in rows], [r["counts"].get(pool, {}).get(status, 0) for r in rows], lw=1.2,
                    label=key)
        ax.set_title(b["name"], fontsize=10)
        ax.set_xlabel("simulated day")
        ax.grid(alpha=0.3)
        if series:
            ax.legend(fontsize=7)
    axes[0][0].set_ylabel("memories")
    fig.suptitle("memories by pool and status", fontsize=10)
    fig.tight_layout()
    paths.append(os.path.join(out_dir, "memories.png"))
    fig.savefig(paths[-1], dpi=110)
    plt.close(fig)
    return paths, None


def _plot_governance(plt, live: list[dict], out_dir: str) -> str:
    """``governance.png``: throughput per tick beside each counter's running total per tick
    (one line per backend and counter that left 0; a governed store's are flat at 0)."""
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 3.8))
    for b in live:
        xs = [r["day"] for r in b["ticks"]]
        left.plot(xs, [r["ops_per_s"] or float("nan") for r in b["ticks"]], lw=1.2, label=b["name"])
        drawn = False
        for c in COUNTERS:
            total, ys = 0, []
            for r in b["ticks"]:
                total += r.get("counters", {}).get(c, 0)
                ys.append(total)
            if total:
                right.plot(xs, ys, lw=1.2, label=f"{b['name']}: {LABELS[c][0]}")
                drawn = True
        if not drawn:
            right.plot(xs, [0] * len(xs), lw=2, label=f"{b['name']}: every counter 0")
    left.set(xlabel="simulated day", ylabel="memory operations / s", yscale="log", title="throughput per tick")
    right.set(xlabel="simulated day", ylabel="running total", title="governance counters", yscale="symlog")
    for ax in (left, right):
        ax.grid(alpha=0.3, which="both")
        ax.legend(fontsize=7)
        ax.title.set_fontsize(10)
    fig.tight_layout()
    path = os.path.join(out_dir, "governance.png")
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def write_outputs(report: Report, out_dir: str, *, plots: bool = True) -> dict:
    """report.json and the plots in ``out_dir``; returns what was written (and any note)."""
    os.makedirs(out_dir, exist_ok=True)
    out: dict = {"json": os.path.join(out_dir, "report.json")}
    if plots:
        paths, note = plot(report, out_dir)
        out["plots"] = paths
        if note:
            out["note"] = note
    report.runner["outputs"] = out
    write_json(report, out["json"])
    return out
