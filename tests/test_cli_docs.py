"""The command line is documented and light: every command is in docs/cli.md, the generated
reference (docs/cli-reference.md) matches the commands' help, the package has no import cycle, and importing it loads neither Ray nor the stores."""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys

import click
import pytest

from memactors import cli as cli_mod

ROOT = os.path.join(os.path.dirname(__file__), "..")
CLI_DIR = os.path.join(ROOT, "memactors", "cli")


def _commands(group: click.Group, prefix: tuple[str, ...] = ()):
    for name, cmd in sorted(group.commands.items()):
        yield (*prefix, name), cmd
        if isinstance(cmd, click.Group):
            yield from _commands(cmd, (*prefix, name))


ALL = [p for p, _ in _commands(cli_mod.cli)]


def _command_line_section() -> str:
    return open(os.path.join(ROOT, "docs", "cli.md"), encoding="utf-8").read()


def test_the_generated_reference_is_current():
    from memactors.cli_reference import render

    with open(os.path.join(ROOT, "docs", "cli-reference.md"), encoding="utf-8") as f:
        assert f.read() == render(), "docs/cli-reference.md is stale: python -m memactors.cli_reference > it"


def documented(path: tuple[str, ...], section: str) -> bool:
    """True when the section shows ``memactors VERB`` for a top-level command, or the group word
    followed by the sub-command, alone or in an alternation (``review approve|reject``)."""
    if len(path) == 1:
        return re.search(rf"\bmemactors {re.escape(path[0])}\b(?![-\w])", section) is not None
    *parents, leaf = path
    alt = rf"(?:[\w-]+\|)*{re.escape(leaf)}(?:\|[\w-]+)*(?![-\w])"
    return re.search(rf"\b{re.escape(' '.join(parents))} {alt}", section) is not None


@pytest.mark.parametrize("path", ALL, ids=[" ".join(p) for p in ALL])
def test_every_command_is_documented(path):
    assert documented(path, _command_line_section()), f"`memactors {' '.join(path)}` is missing from docs/cli.md"


def test_the_documentation_check_matches_and_refuses():
    section = "memactors up / memactors down\nmemactors review list SCOPE | review approve|reject ID\n" \
              "memactors grants [ACTOR]\n"
    for path in [("up",), ("down",), ("grants",), ("review",), ("review", "list"), ("review", "approve"),
                 ("review", "reject")]:
        assert documented(path, section), path
    for path in [("grant",), ("review-x",), ("audit",), ("review", "delete"), ("review", "app"), ("list",)]:
        assert not documented(path, section), path


def test_every_command_has_help_text():
    for path, cmd in _commands(cli_mod.cli):
        assert (cmd.help or "").strip(), f"`memactors {' '.join(path)}` has no help text"


def _cli_imports(path: str) -> set[str]:
    tree = ast.parse(open(path, encoding="utf-8").read())
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            mod = node.module if node.level == 0 else f"memactors.cli.{node.module}"
            if mod == "memactors.cli":
                found |= {f"memactors.cli.{a.name}" for a in node.names}
            elif mod.startswith("memactors.cli."):
                found.add(mod)
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("memactors.cli")}
    return found


def test_command_modules_import_only_the_shared_modules():
    """No cycles: command modules import the group, the output module and the --fresh helper;
    only ``memactors.cli`` (the package) imports the command modules."""
    shared = {"memactors.cli.group", "memactors.cli.output", "memactors.cli.fresh"}
    modules = [f for f in os.listdir(CLI_DIR) if f.endswith(".py") and f not in ("__init__.py", "__main__.py")]
    assert {"group.py", "output.py", "server.py", "memory.py", "audit.py"} <= set(modules)
    for name in modules:
        wrong = _cli_imports(os.path.join(CLI_DIR, name)) - shared
        assert not wrong, f"memactors/cli/{name} imports {sorted(wrong)}"
    for name in ("group.py", "output.py"):
        assert _cli_imports(os.path.join(CLI_DIR, name)) == set(), name


def test_importing_the_cli_loads_neither_ray_nor_the_stores():
    code = ("import sys, memactors.cli; from memactors.cli import main; "
            "print(sorted(m for m in ('ray', 'lancedb', 'duckdb', 'lance') if m in sys.modules))")
    env = dict(os.environ, PYTHONPATH=os.path.abspath(ROOT))
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60)
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == "[]", f"importing memactors.cli imported {res.stdout.strip()}"


def test_help_and_scan_run_without_ray():
    code = ("import sys\nfrom click.testing import CliRunner\nfrom memactors.cli import cli\n"
            "assert CliRunner().invoke(cli, ['--help']).exit_code == 0\n"
            "assert CliRunner().invoke(cli, ['scan', '--text', 'hello there']).exit_code == 0\n"
            "print(sorted(m for m in ('ray', 'lancedb', 'duckdb') if m in sys.modules))")
    env = dict(os.environ, PYTHONPATH=os.path.abspath(ROOT))
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60)
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == "[]"


def test_console_script_entry_point():
    import tomllib

    scripts = tomllib.load(open(os.path.join(ROOT, "pyproject.toml"), "rb"))["project"]["scripts"]
    module, func = scripts["memactors"].split(":")
    assert (module, func) == ("memactors.cli", "main")
    assert callable(getattr(cli_mod, func))
    res = subprocess.run([sys.executable, "-m", "memactors.cli", "--version"], capture_output=True, text=True,
                         env=dict(os.environ, PYTHONPATH=os.path.abspath(ROOT)), timeout=60)
    assert res.returncode == 0 and "memactors" in res.stdout, res.stderr
