"""Testing aids for memactors and its users: record a workload's history, then check the
runtime against it after faults (Jepsen-style). Importing this starts nothing.

    h = History(tmp / "c1.jsonl", client="c1")
    Workload(["/org/acme/user/alice/"], actor="agent", seed=1).run(rt, h, 200)
    events = read_history(tmp)
    report = collect(rt, history_scopes(events), actor="checker").check(events)
    assert report.ok, report.summary()
"""

from .checker import CATEGORIES, CheckReport, check
from .collect import Collected, collect, history_scopes, ledger_events, store_view
from .history import History, read_history
from .workload import Op, Workload

__all__ = [
    "CATEGORIES",
    "CheckReport",
    "Collected",
    "History",
    "Op",
    "Workload",
    "check",
    "collect",
    "history_scopes",
    "ledger_events",
    "read_history",
    "store_view",
]
