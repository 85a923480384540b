"""docs/governance.md's Python examples run as written."""

import os
import re

DOC = os.path.join(os.path.dirname(__file__), "..", "docs", "governance.md")


def test_governance_examples_run():
    text = open(DOC, encoding="utf-8").read()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert len(blocks) == 3
    for i, code in enumerate(blocks):
        exec(compile(code, f"docs/governance.md[{i}]", "exec"), {})
