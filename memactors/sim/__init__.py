"""The batch simulation: a seeded world with no LLM in the loop, run side by side on memory
backends (memactors, and LangGraph's SqliteStore as the ungoverned baseline), judged on
throughput, latency, accuracy against the ground truth and governance counters that must be 0.

    from memactors.sim import WorldConfig, DictBackend, run
    report = run(WorldConfig(tenants=2, users_per_tenant=5, days=5), [DictBackend()])
    report.exit_code()

``python -m memactors.sim --config configs/sim-default.toml`` runs it from the command line.
"""

from . import backend_memactors as _backend_memactors  # noqa: F401 - registers "memactors"; Ray starts at setup()
from . import backend_sqlite as _backend_sqlite  # noqa: F401 - registers "langgraph-sqlite"; langgraph loads at setup()
from .actions import Forget, Observe, ProbeSpec, Recall, TaskEnd, TaskStart, validate
from .backend import BACKENDS, DictBackend, MemoryBackend, TickResult, register_backend
from .backend_memactors import MemactorsBackend
from .backend_sqlite import SqliteStoreBackend
from .metrics import COUNTERS, evaluate_probe, judge_hit
from .planted import SecretScanner, make_secret
from .policy import AgentPolicy, ChaosPolicy, ScriptedPolicy
from .report import Report, print_summary, write_outputs
from .runner import run
from .world import AgentView, Grant, Rates, World, WorldConfig

__all__ = [
    "BACKENDS",
    "COUNTERS",
    "AgentPolicy",
    "AgentView",
    "ChaosPolicy",
    "DictBackend",
    "Forget",
    "Grant",
    "MemactorsBackend",
    "MemoryBackend",
    "Observe",
    "ProbeSpec",
    "Rates",
    "Recall",
    "Report",
    "ScriptedPolicy",
    "SecretScanner",
    "SqliteStoreBackend",
    "TaskEnd",
    "TaskStart",
    "TickResult",
    "World",
    "WorldConfig",
    "evaluate_probe",
    "judge_hit",
    "make_secret",
    "print_summary",
    "register_backend",
    "run",
    "validate",
    "write_outputs",
]
