"""The README's and docs/' code blocks other than Python (which tests/test_docs_examples.py runs)
stay true: every ``memactors ...`` line names a command that exists and only options it takes,
and a line that needs no store (``memactors scan --text ...``) runs; every ``make X`` is a
Makefile target; every ``pip install`` names extras pyproject.toml defines; every
``python -m M`` module and the file it is given exist; every TOML block loads as a
configuration (the gate's policy included); the package tree in docs/architecture.md is the
package's. A block that is none of these is one of the known samples of output, counted here,
so none is added unchecked. And every link and named path stays inside the repository and
exists, and no page names a tracker number."""

from __future__ import annotations

import glob
import importlib.util
import os
import re
import shlex
import tomllib

import click
import pytest
from click.testing import CliRunner

from memactors import cli as cli_mod
from memactors.core.config import Config
from memactors.gate import GatePolicy

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
FILES = ["README.md", *sorted(os.path.relpath(p, ROOT) for p in glob.glob(os.path.join(ROOT, "docs", "*.md")))]
BLOCK = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)
# Samples of what a command prints (and the data folder's layout), not code: file -> count.
SAMPLES = {"docs/gate.md": 2, "docs/reliability.md": 1, "docs/simulation.md": 1}
COMMAND_START = ("memactors ", "make ", "pip install ", ".venv/bin/python -m ")


def blocks() -> list[tuple[str, str, str]]:
    """(file, language, text) of every block that is not Python; the CLI reference is left out
    (tests/test_cli_docs.py checks it equals the commands' help)."""
    out = []
    for path in FILES:
        if path == "docs/cli-reference.md":
            continue
        with open(os.path.join(ROOT, path), encoding="utf-8") as f:
            out += [(path, lang, body) for lang, body in BLOCK.findall(f.read()) if lang != "python"]
    return out


def is_commands(body: str, lang: str = "") -> bool:
    return lang != "text" and any(line.lstrip().startswith(COMMAND_START) for line in body.splitlines())


def command_lines(body: str) -> list[str]:
    """Each command of a block: a comment (`` # ...``) and a description (after two spaces) cut
    off, an indented line joined to the command above it."""
    lines: list[str] = []
    for raw in body.splitlines():
        text = re.split(r"\s+#\s", raw, maxsplit=1)[0].rstrip()
        cont = raw[:1].isspace()
        text = re.split(r"\s{2,}", text.strip(), maxsplit=1)[0] if text.strip() else ""
        if not text:
            continue
        if cont and lines:
            lines[-1] += " " + text
        else:
            lines.append(text)
    return lines


def _subcommand(group: click.Command, word: str) -> click.Command | None:
    return group.commands.get(word) if isinstance(group, click.Group) else None


def invocations(line: str) -> list[tuple[list[str], str]]:
    """The ``memactors`` invocations of one synopsis line as (command path, its text): ``a | b``
    and ``a / b`` are alternatives when b starts a command (``memactors X``, a top-level verb,
    or a sub-command of a's group: ``review approve|reject``); otherwise b is more of a
    (``(--to T | --memory-id ID)``)."""
    out: list[tuple[list[str], str]] = []
    for seg in re.split(r"\s+[|/]\s+", line):
        words = seg.split()
        if words and words[0] == "memactors":
            words = words[1:]
        group = cli_mod.cli
        if out and words and _subcommand(cli_mod.cli, words[0]) is None:
            parent = out[-1][0][:1]  # a sub-command of the previous line's group, or more of it
            if all(_subcommand(cli_mod.cli.commands[parent[0]], w) for w in words[0].split("|")):
                words = parent + words
            else:
                out[-1] = (out[-1][0], out[-1][1] + " " + seg)
                continue
        path: list[str] = []
        for w in words:
            alts = w.split("|")
            if not all(_subcommand(group, a) for a in alts):
                break
            group = _subcommand(group, alts[0])
            path.append(alts[0])
            for a in alts[1:]:  # each alternative sub-command is checked with the same options
                out.append((path[:-1] + [a], seg))
        out.append((path, seg))
    return out


def _command(path: list[str]) -> click.Command:
    cmd: click.Command = cli_mod.cli
    for w in path:
        cmd = cmd.commands[w]
    return cmd


def _options(cmd: click.Command) -> set[str]:
    names = {"--help", "-h"}
    for p in cmd.params:
        names.update(getattr(p, "opts", ()), getattr(p, "secondary_opts", ()))
    return names


def memactors_lines() -> list[tuple[str, str]]:
    return [(path, line) for path, lang, body in blocks() if is_commands(body, lang)
            for line in command_lines(body) if line.startswith("memactors ")]


@pytest.mark.parametrize("path,line", memactors_lines())
def test_each_command_line_names_a_command_and_its_options(path, line):
    for cmd_path, seg in invocations(line):
        assert cmd_path, f"{path}: `{line}` names no memactors command"
        cmd = _command(cmd_path)
        unknown = set(re.findall(r"(?<![\w-])--[a-z][\w-]*", seg)) - _options(cmd)
        assert not unknown, f"{path}: `memactors {' '.join(cmd_path)}` takes no {sorted(unknown)}"


def test_the_command_line_check_refuses():
    assert invocations("memactors nosuchverb --x") == [([], "memactors nosuchverb --x")]
    paths = [p for p, _ in invocations("memactors review list S --actor A | review approve|reject ID --reason R")]
    assert paths == [["review", "list"], ["review", "reject"], ["review", "approve"]]
    (one, seg), = invocations("memactors rollback (--to T | --memory-id ID) --actor A")
    assert one == ["rollback"] and "--memory-id" in seg
    assert "--no-such" not in _options(_command(["scan"])) and "--text" in _options(_command(["scan"]))


@pytest.mark.parametrize("line", [line for _, line in memactors_lines()
                                  if line.startswith("memactors scan --text ") and not re.search(r"[<\[]", line)])
def test_scan_lines_run(line):
    res = CliRunner().invoke(cli_mod.cli, shlex.split(line)[1:])
    assert res.exit_code == 0, res.output
    assert "assumed" in res.output or "--source" in line  # it says which source it took


def test_make_pip_and_module_lines_exist():
    with open(os.path.join(ROOT, "Makefile"), encoding="utf-8") as f:
        targets = set(re.findall(r"^([\w-]+):", f.read(), re.M))
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        extras = set(tomllib.load(f)["project"]["optional-dependencies"])
    seen = 0
    for path, lang, body in blocks():
        for line in command_lines(body) if is_commands(body, lang) else ():
            words = shlex.split(line)
            if words[0] == "make":
                assert set(words[1:]) <= targets, f"{path}: `{line}`: no such make target"
            elif words[:2] == ["pip", "install"]:
                for spec in words[2:]:
                    named = re.findall(r"\[([\w,-]+)\]", spec)
                    assert not named or set(named[0].split(",")) <= extras, f"{path}: `{line}`: unknown extra"
            elif words[0] == ".venv/bin/python":
                assert importlib.util.find_spec(words[2]) is not None, f"{path}: no module {words[2]}"
                for arg in words[3:]:
                    assert os.path.exists(os.path.join(ROOT, arg)), f"{path}: `{line}`: no {arg}"
            else:
                continue
            seen += 1
    assert seen >= 5  # make run/test/demo, the two installs, the chitchat learner


@pytest.mark.parametrize("path,body", [(p, b) for p, lang, b in blocks() if lang == "toml"])
def test_each_toml_block_is_a_configuration(path, body):
    from memactors.embed import embedder_names

    cfg = Config.from_dict(tomllib.loads(body), embedders=embedder_names())
    GatePolicy.from_dict(cfg.gate)


def test_the_architecture_tree_is_the_package():
    (body,) = [b for p, lang, b in blocks() if p == "docs/architecture.md" and not is_commands(b)]
    names = {w.rstrip("/") for line in body.splitlines() for w in line.split("  ")[0].split() if w.endswith("/")}
    packages = {d for d in os.listdir(os.path.join(ROOT, "memactors"))  # engine/ is a namespace package
                if glob.glob(os.path.join(ROOT, "memactors", d, "*.py"))}
    assert names and names <= packages, sorted(names - packages)
    assert packages - names <= {"testing"}, sorted(packages - names)  # every package is on the map


def test_every_other_block_is_a_known_sample():
    counts: dict[str, int] = {}
    for path, lang, body in blocks():
        if is_commands(body, lang) or lang == "toml" or path == "docs/architecture.md":
            continue
        counts[path] = counts.get(path, 0) + 1
    assert counts == SAMPLES


def _texts() -> list[tuple[str, str]]:
    out = []
    for path in FILES:
        with open(os.path.join(ROOT, path), encoding="utf-8") as f:
            out.append((path, f.read()))
    return out


def test_links_and_paths_stay_inside_the_repository_and_name_no_tracker():
    for path, text in _texts():
        here = os.path.dirname(os.path.join(ROOT, path))
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text):
            assert "://" not in target and not target.startswith(("/", "..")), f"{path}: link {target}"
            assert os.path.exists(os.path.join(here, target)), f"{path}: link to a missing {target}"
        for named in re.findall(r"`((?:docs|benchmarks|configs|tests|memactors)/[\w./-]+)`", text):
            assert glob.glob(os.path.join(ROOT, named.rstrip("/"))), f"{path}: `{named}` is not in the repository"
        assert not re.search(r"(?<![\w&])#\d+\b|\bissues? \d+\b", text, re.I), f"{path} names a tracker number"
        assert not re.search(r"(?<![\w.])(?:\.\./|/work/|/home/)", text), f"{path} names a path outside the repository"
