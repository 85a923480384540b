"""The release gate (``memactors eval``): scenario cases run through the public API, judged
on governance counters that must be 0 (cross-scope leaks, expired, superseded, forgotten,
pending and low-confidence memories recalled, blocked secrets recalled or stored, bytes of
forgotten memories left on disk) and on must-recall recall@5 against a floor.

    from memactors.eval import run_eval, small_set
    report = run_eval("./eval-data", small_set())      # a new or empty folder: it is scanned
    report.exit_code(), report.failures(), report.to_dict()

Modules: ``scenarios`` (the cases, their generator and JSON form; the shipped small set in
``data/small.json``), ``run`` (running and judging), ``residue`` (the disk scan), ``report``.
An application: it uses the public runtime API only.
"""

from .report import COUNTERS, Count, Report
from .residue import Needle, Residue, scan_residue
from .run import DEFAULT_MIN_RECALL, default_recall, needles_for, run_eval
from .scenarios import (KINDS, SMALL_SET, Action, Case, Grant, Probe, Write, case_from_dict, cases_to_json,
                        check_case, check_set, dump_cases, generate, load_cases, small_set)

__all__ = [
    "COUNTERS",
    "DEFAULT_MIN_RECALL",
    "KINDS",
    "SMALL_SET",
    "Action",
    "Case",
    "Count",
    "Grant",
    "Needle",
    "Probe",
    "Report",
    "Residue",
    "Write",
    "case_from_dict",
    "cases_to_json",
    "check_case",
    "check_set",
    "default_recall",
    "dump_cases",
    "generate",
    "load_cases",
    "needles_for",
    "run_eval",
    "scan_residue",
    "small_set",
]
