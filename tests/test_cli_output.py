"""The command line's tables fold at the terminal's edge, never clip: at 80 and 120 columns a
key-value table keeps every character of a long value with no space in it (a recall's logged
filters, as the demo's step 9 shows them), a table keeps its cells, and no line passes the
edge; a dict reads as ``key value`` pairs, never Python's braces. No Ray."""

from __future__ import annotations

import re

import pytest
from rich.console import Console

from memactors.cli.output import Out, fmt

LONG = ('{"scopes":["/org/acme/user/alice/","/org/acme/","/global/"],"status":["active","stale"],'
        '"not_hard_expired_at":1796216449720301,"threshold":0.35}')


def _out(width: int) -> Out:
    out = Out(False)
    out.console = Console(width=width, record=True, highlight=False, soft_wrap=False)
    return out


@pytest.mark.parametrize("width", [80, 120])
def test_a_long_value_folds_and_keeps_every_character(width):
    out = _out(width)
    out.kv([("filters", LONG), ("by status", {"active": 3, "stale": 1})])
    text = out.console.export_text()
    assert max(len(line) for line in text.splitlines()) <= width
    assert "…" not in text
    squeezed = re.sub(r"\s", "", text)
    assert LONG in squeezed and "bystatusactive3;stale1" in squeezed


@pytest.mark.parametrize("width", [80, 120])
def test_a_table_folds_its_cells(width):
    out = _out(width)
    out.table(["actor", "scope", "content"], [["assistant-alice", "/org/acme/user/alice/", LONG]])
    text = out.console.export_text()
    assert max(len(line) for line in text.splitlines()) <= width
    assert "…" not in text
    out = _out(width)
    out.table(["content"], [[LONG]])
    assert LONG in re.sub(r"[\s\u2500-\u257f]", "", out.console.export_text())  # box lines left out


def test_a_dict_cell_is_key_value_pairs():
    assert fmt({"active": 3, "stale": 1}) == "active 3; stale 1"
    assert fmt({"scopes": ["/a/", "/b/"], "budget": None}) == "scopes /a/, /b/; budget -"
    assert fmt({}) == "-" and fmt({"ratio": 0.5}) == "ratio 0.500"
