"""Testing aids for memactors and its users. Importing this starts nothing.

A runtime for tests (``runtime``): ``runtime_on(tmp_path)`` (a runtime on a fresh folder),
``actors(rt)``, ``owner_for(rt, scope)``, ``drop_hot(rt)``, ``crash(rt)``, ``unique_org()``.

Histories and their checker (Jepsen-style: ``history``, ``workload``, ``checker``, ``collect``):

    h = History(tmp / "c1.jsonl", client="c1")
    Workload(["/org/acme/user/alice/"], actor="agent", seed=1).run(rt, h, 200)
    events = read_history(tmp)
    report = collect(rt, history_scopes(events), actor="checker").check(events)
    assert report.ok, report.summary()
"""

from .checker import CATEGORIES, CheckReport, check
from .collect import Collected, collect, history_scopes, ledger_events, store_view
from .history import History, read_history
from .runtime import actors, crash, drop_hot, owner_for, runtime_on, unique_org
from .workload import Op, Workload

__all__ = [
    "CATEGORIES",
    "CheckReport",
    "Collected",
    "History",
    "Op",
    "Workload",
    "actors",
    "check",
    "collect",
    "crash",
    "drop_hot",
    "history_scopes",
    "ledger_events",
    "owner_for",
    "read_history",
    "runtime_on",
    "store_view",
    "unique_org",
]
