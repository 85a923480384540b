"""The batch simulation's loop: advance the clock tick by tick, ask the policy what each agent
does, validate the actions, send the same actions in the same order to every backend, time each
backend's tick and judge what it returned.

Per tick: lifecycle sweep when due (before the tick, every ``sweep_every_days``), the world's
views, the policy's actions, each backend's ``apply`` (timed alone: the world and the policy are
not counted in a backend's latency), memory counts every ``counts_every_ticks``. At the end each
backend's files are scanned for the planted secrets, then it is closed.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import replace

from ..core.errors import ConfigError, ValidationError
from .actions import Recall, validate
from .backend import MemoryBackend, error_string
from .metrics import BackendMetrics
from .planted import SecretScanner
from .policy import AgentPolicy, ScriptedPolicy
from .report import Report, progress as progress_bar
from .world import World, WorldConfig

MAX_SAMPLES = 20  # error samples kept in the report (type and message, never content)


def run(world_cfg: WorldConfig, backends: list[MemoryBackend], *, policy: AgentPolicy | None = None,
        progress: bool = True, scan_storage: bool = True) -> Report:
    """Run the world on every backend side by side; return the Report (``report.exit_code()``
    is non-zero when a governed backend broke a governance rule)."""
    t_wall = time.perf_counter()
    if len({b.name for b in backends}) != len(backends):
        raise ConfigError("two backends share a name: give each its own (its report column)")
    world = World(world_cfg)
    cfg = world.cfg
    policy = policy or ScriptedPolicy(seed=cfg.seed, top_k=cfg.top_k)
    live: list[tuple[MemoryBackend, BackendMetrics]] = []
    skipped: dict[str, str] = {}
    for b in backends:
        try:
            b.setup(world)
        except ImportError as e:  # an optional dependency is missing: say which, go on without it
            skipped[b.name] = str(e)
            continue
        live.append((b, BackendMetrics(world, b.name, bool(getattr(b, "governed", False)))))
    runner = {"actions": 0, "invalid_actions": Counter(), "policy_errors": Counter(), "samples": [],
              "world_s": 0.0, "policy_s": 0.0}
    per_sweep = cfg.sweep_every_days * cfg.ticks_per_day
    scanner = SecretScanner(())  # grows with the world's pastes: a hit is searched for every value planted so far
    try:
        with progress_bar(progress, cfg.ticks, [b.name for b, _ in live]) as update:
            for tick in range(cfg.ticks):
                now = world.now_us(tick)
                if per_sweep and tick and tick % per_sweep == 0:
                    for b, m in live:
                        t = time.perf_counter()
                        summary = b.sweep(now)
                        m.sweep(tick, time.perf_counter() - t, summary)
                actions = _actions(world, policy, tick, runner)
                scanner.add_from(world.planted)
                rows = {}
                for b, m in live:
                    t = time.perf_counter()
                    try:
                        result = b.apply(tick, now, actions)
                    except Exception as e:  # a backend that raises loses the tick, not the run
                        result = None
                        _sample(runner, tick, b.name, "backend", e)
                    rows[b.name] = m.tick(tick, actions, result, time.perf_counter() - t, scanner)
                    if tick % cfg.counts_every_ticks == 0 or tick == cfg.ticks - 1:
                        m.counts(b.counts())
                update(tick, world.day(tick + 1), rows)
        for b, m in live:
            if scan_storage:
                m.secrets_stored(scanner.by_kind(scanner.scan_paths(b.storage_paths())))
    finally:
        for b, _ in live:
            b.close()
    runner["wall_s"] = time.perf_counter() - t_wall
    runner["invalid_actions"] = dict(sorted(runner["invalid_actions"].items()))
    runner["policy_errors"] = dict(sorted(runner["policy_errors"].items()))
    report = Report(config=cfg.to_dict(), policy=getattr(policy, "name", type(policy).__name__),
                    world=world.summary(), runner=runner)
    names = {b.name: m for b, m in live}
    for b in backends:
        m = names.get(b.name)
        governed = bool(getattr(b, "governed", False))
        if m is None:
            report.backends.append({"name": b.name, "governed": governed, "skipped": skipped.get(b.name),
                                    "totals": None, "counters": {}, "secrets_stored": {}, "ticks": []})
            if governed:
                report.failures.append(f"{b.name}: not run ({skipped.get(b.name)})")
            continue
        report.backends.append({"name": b.name, "governed": governed, "skipped": None, "totals": m.totals(),
                                "counters": dict(m.counters), "secrets_stored": m.secrets_stored_by_kind,
                                "ticks": m.rows})
        report.failures += m.failures()
    return report


def _actions(world: World, policy: AgentPolicy, tick: int, runner: dict) -> list:
    """Every valid action of the tick, in agent order; probes filled from the ground truth."""
    t = time.perf_counter()
    views = world.step(tick)
    runner["world_s"] += time.perf_counter() - t
    t = time.perf_counter()
    out = []
    for view in views:
        try:
            acts = policy.act(view)
        except Exception as e:  # a policy (an LLM client, say) that raises costs its agent the tick
            runner["policy_errors"][type(e).__name__] += 1
            _sample(runner, tick, view.agent, "policy", e)
            continue
        if not isinstance(acts, (list, tuple)):
            runner["invalid_actions"]["InvalidRecord"] += 1
            continue
        for a in acts:
            try:
                a = validate(a, view.agent)
            except ValidationError as e:
                runner["invalid_actions"][type(e).__name__] += 1
                _sample(runner, tick, view.agent, "action", e)
                continue
            if isinstance(a, Recall) and a.probe is not None:
                a = replace(a, probe=world.probe(a.probe, tick))
            out.append(a)
    runner["actions"] += len(out)
    runner["policy_s"] += time.perf_counter() - t
    return out


def _sample(runner: dict, tick: int, who: str, where: str, e: BaseException) -> None:
    if len(runner["samples"]) < MAX_SAMPLES:
        # Our validation errors describe without echoing; a policy's or a backend's own exception
        # may carry anything (an LLM client's message, a prompt): keep only its type.
        err = error_string(e) if where == "action" else type(e).__name__
        runner["samples"].append({"tick": tick, "who": who, "where": where, "error": err})


