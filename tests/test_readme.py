"""The README's Python example runs as written (on a tmp folder)."""

import os
import re

README = os.path.join(os.path.dirname(__file__), "..", "README.md")


def test_readme_example_runs(ray_session, tmp_path, capsys):
    text = open(README, encoding="utf-8").read()
    code = re.search(r"## In Python\n\n```python\n(.*?)```", text, re.S).group(1)
    assert len(code.strip().splitlines()) <= 22
    exec(compile(code.replace('"./data"', repr(str(tmp_path / "data"))), "README.md", "exec"), {})
    out = capsys.readouterr().out
    assert "superseded_previous 2" in out and "'ok': True" in out
