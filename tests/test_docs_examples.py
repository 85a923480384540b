"""The README's and docs/' Python examples run as written: each file's ```python blocks in
order, in one namespace, in a fresh folder. A block marked ``<!-- sketch -->`` on the line
before it (reference lines with ``...``, not a program) is left out; each such mark is counted
here, so none is added by accident."""

from __future__ import annotations

import glob
import os
import re

import pytest

ROOT = os.path.join(os.path.dirname(__file__), "..")
FILES = ["README.md", *sorted(os.path.relpath(p, ROOT) for p in glob.glob(os.path.join(ROOT, "docs", "*.md")))]
BLOCK = re.compile(r"(<!-- sketch -->\n)?```python\n(.*?)```", re.S)
SKETCHES = {"docs/gate.md": 1, "docs/history.md": 4, "docs/lifecycle.md": 1, "docs/server.md": 1}


def blocks(path: str) -> list[tuple[bool, str]]:
    with open(os.path.join(ROOT, path), encoding="utf-8") as f:
        return [(bool(m.group(1)), m.group(2)) for m in BLOCK.finditer(f.read())]


def test_the_sketches_are_the_known_ones():
    assert {p: n for p in FILES if (n := sum(s for s, _ in blocks(p)))} == SKETCHES


@pytest.mark.parametrize("path", [p for p in FILES if any(not s for s, _ in blocks(p))])
def test_the_examples_run(path, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)  # "./data" and every relative path land in a fresh folder
    ns: dict = {"__name__": "__docs__"}
    for i, (sketch, code) in enumerate(blocks(path)):
        if not sketch:
            exec(compile(code, f"{path} (block {i + 1})", "exec"), ns)
    for value in list(ns.values()):  # a runtime an example left open
        close = getattr(value, "close", None)
        if type(value).__name__ == "Runtime" and close is not None:
            close()
    capsys.readouterr()
