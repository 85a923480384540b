"""Chaos tests: crash, storage and concurrency faults, overload, bad input (``chaoslib`` holds
the fault injection, ``driver.py`` the driver process the tests kill).

The long loops are marked ``chaos`` and left out of the default run (``make chaos`` runs them,
``CHAOS_ROUNDS`` sets their rounds, default 20); the default run does one round of each fault.
"""

from __future__ import annotations

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))  # chaoslib, for the tests and benchmarks alike


@pytest.fixture
def chaos_base(tmp_path):
    return tmp_path


def pytest_collection_modifyitems(items):
    """Every chaos test is about the Ray host: actors killed, restarted, overloaded."""
    here = os.path.dirname(__file__)
    for item in items:
        if str(item.fspath).startswith(here):
            item.add_marker(pytest.mark.ray)
