"""Defects found by driving the command line and the agent handle as a user would: each test
fails without its fix. The runtime ones use the process host (no Ray, about a second each)."""

from __future__ import annotations

import os
import re
import shlex

import orjson
import pytest
from click.testing import CliRunner

import memactors
from memactors import cli as cli_mod
from memactors.core.errors import InvalidRecord, InvalidScope


@pytest.fixture
def no_runtime(monkeypatch):
    def refuse(*a, **kw):
        raise AssertionError("the command opened a runtime before validating its input")

    monkeypatch.setattr(memactors, "connect", refuse)


def _one_line_error(res, needle: str = "") -> str:
    assert res.exit_code == 2, res.output
    assert res.stdout == "" and "Traceback" not in res.output
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), res.stderr
    assert needle in lines[0]
    return lines[0]


@pytest.mark.parametrize("args", [["stats"], ["down"], ["up"], ["grant", "a1", "/org/acme/"], ["audit", "verify"],
                                  ["write", "/org/acme/", "hi", "--actor", "a1"]], ids=lambda a: " ".join(a[:2]))
def test_an_empty_data_path_is_refused_never_read_as_the_current_folder(no_runtime, tmp_path, monkeypatch, args):
    """`--data "$DIR"` with DIR unset: `down` used to act on the current folder (exit 0)."""
    monkeypatch.chdir(tmp_path)
    _one_line_error(CliRunner().invoke(cli_mod.cli, [*args, "--data", ""]), "--data is empty")
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("args", [["bench", "thresholds", "--dataset", ".", "--fresh"], ["eval"], ["simulate"]],
                         ids=lambda a: a[0])
def test_an_empty_data_path_is_refused_by_the_verbs_with_their_own_data_option(no_runtime, tmp_path, monkeypatch,
                                                                                args):
    """`bench thresholds --fresh --data "$DIR"` with DIR unset deleted the current folder when it
    was a data folder (its --data skipped the check); `simulate` ran in a folder of its choosing."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "keep.txt").write_text("keep me")
    res = CliRunner().invoke(cli_mod.cli, [*args, "--data", ""])
    assert res.exit_code == 2 and "Traceback" not in res.output
    last = res.stderr.strip().splitlines()[-1]  # simulate's errors are click's usage block, as its other options'
    assert "--data" in last and "empty" in last, res.stderr
    assert os.listdir(tmp_path) == ["keep.txt"]


@pytest.mark.parametrize("args", [["up"], ["grant", "a1", "/org/acme/"], ["stats"], ["mcp", "--actor", "a1"]],
                         ids=lambda a: a[0])
def test_a_data_path_that_is_a_file_is_refused_in_one_line(no_runtime, tmp_path, args):
    """`up` raised FileExistsError from os.makedirs; `grant` blamed a runtime.json that cannot exist."""
    f = tmp_path / "notes.txt"
    f.write_text("keep me")
    _one_line_error(CliRunner().invoke(cli_mod.cli, [*args, "--data", str(f)]), "is a file, not a data folder")
    assert f.read_text() == "keep me"


def test_restore_with_an_empty_to_is_refused_not_restored_into_data(tmp_path):
    """`restore SRC --to "$DEST"` with DEST unset restored into --data (here a folder of its own)."""
    run = lambda *a: CliRunner().invoke(cli_mod.cli, list(a))  # noqa: E731
    src, bk, other = str(tmp_path / "src"), str(tmp_path / "bk"), tmp_path / "other"
    assert run("grant", "a1", "/org/acme/", "--data", src).exit_code == 0
    assert run("backup", bk, "--data", src).exit_code == 0
    _one_line_error(run("restore", bk, "--to", "", "--data", str(other)), "--to is empty")
    assert not other.exists()


def test_mcp_token_in_a_missing_folder_is_one_line(tmp_path):
    res = CliRunner().invoke(cli_mod.cli, ["mcp", "token", "a1", "--tokens", str(tmp_path / "nope" / "tokens.json")])
    _one_line_error(res, "--tokens")
    assert not (tmp_path / "nope").exists()


def test_an_os_error_is_one_line_not_a_traceback(tmp_path, monkeypatch):
    from memactors.integrations.mcp import tokens

    def denied(path, actor):
        raise PermissionError(13, "Permission denied", path)

    monkeypatch.setattr(tokens, "mint", denied)
    res = CliRunner().invoke(cli_mod.cli, ["mcp", "token", "a1", "--tokens", str(tmp_path / "t.json")])
    assert _one_line_error(res) == f"error: Permission denied: {tmp_path / 't.json'}"


def test_suggested_commands_quote_a_data_path_with_spaces(tmp_path):
    data = str(tmp_path / "my data ü")
    os.makedirs(data)
    open(os.path.join(data, "ledger.duckdb"), "wb").close()
    open(os.path.join(data, "runtime.json"), "wb").close()
    line = _one_line_error(CliRunner().invoke(cli_mod.cli, ["demo", "--fresh", "--data", data]), "--fresh")
    assert f"memactors down --data {shlex.quote(data)}`" in line
    assert shlex.split(line.split("`")[1])[-1] == data  # the command as a shell reads it


def test_demo_suggests_a_recall_a_shell_can_run(tmp_path):
    data = str(tmp_path / "demo data")
    res = CliRunner().invoke(cli_mod.cli, ["demo", "--data", data], env={"COLUMNS": "400"})
    assert res.exit_code == 0, res.output
    tried = next(line for line in res.stdout.splitlines() if line.startswith("try: "))
    assert shlex.split(tried[len("try: "):])[-2:] == ["--data", data]


def test_review_shows_times_and_whole_ids(tmp_path):
    """The review queue printed raw microseconds; a decision printed the id behind an ellipsis,
    which a pasted id then fails to parse."""
    data = str(tmp_path / "d")
    run = lambda *a: CliRunner().invoke(cli_mod.cli, [*a, "--data", data], env={"COLUMNS": "300"})  # noqa: E731
    assert run("grant", "ag", "/org/a/user/u/", "--write").exit_code == 0
    wrote = orjson.loads(run("write", "/org/a/user/u/", "The museum opens at nine.", "--source", "web",
                             "--actor", "ag", "--json").stdout)
    assert wrote["decision"] == "pending"
    listed = run("review", "list", "/org/a/user/u/", "--actor", "ag").stdout
    assert re.search(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", listed) and not re.search(r"\d{16}", listed)
    res = run("review", "reject", wrote["memory_id"], "--actor", "ag", "--reason", "no")
    assert res.exit_code == 0 and wrote["memory_id"] in res.stdout and "…" not in res.stdout


@pytest.mark.parametrize("args", [["review", "approve", "0" * 32], ["contradictions", "resolve", "0" * 32]],
                         ids=lambda a: " ".join(a[:2]))
def test_sub_commands_of_every_group_name_every_missing_option(no_runtime, args):
    res = CliRunner().invoke(cli_mod.cli, args)
    assert res.exit_code == 2 and "missing options: --actor, --reason" in res.output


@pytest.mark.parametrize("text, needle", [("", "empty"), ("a" * 32_001, "more than the 32000"),
                                          ("tea \ud800", "lone surrogate")], ids=["empty", "long", "surrogate"])
def test_scan_refuses_what_a_write_would_refuse(text, needle):
    """scan called these "accepted" and showed how they would be stored; write refuses them."""
    _one_line_error(CliRunner().invoke(cli_mod.cli, ["scan", "--text", text]), needle)


def test_scan_still_scans_a_text_a_write_takes():
    res = CliRunner().invoke(cli_mod.cli, ["scan", "--json", "--text", "Alice likes green tea"])
    assert res.exit_code == 0 and orjson.loads(res.stdout)["decision"] == "accepted"


def test_an_agent_with_a_malformed_scope_or_home_is_refused_when_made():
    """rt.agent() took scopes=[None] and home="nope" and failed only at the agent's first call."""
    with memactors.connect("memory://") as rt:
        for bad in ([None], [3], ["alice"], ["/org/acme/users/x/"]):
            with pytest.raises(InvalidScope):
                rt.agent("a1", scopes=bad)
        for home in ("nope", 3):
            with pytest.raises(InvalidScope):
                rt.agent("a1", scopes=["/org/acme/user/alice/"], home=home)
        with pytest.raises(InvalidRecord, match="a list"):
            rt.agent("a1", scopes={"/org/acme/user/alice/"})  # a set has no first scope to write to
        with pytest.raises(InvalidRecord, match="at least one"):
            rt.agent("a1", scopes=[])
        rt.grant("a1", "/org/acme/user/alice/", write=True)
        a = rt.agent("a1", scopes=["/org/acme/user/alice"], home="/org/acme/user/alice")
        assert a.scopes == ["/org/acme/user/alice/"] and a.home == "/org/acme/user/alice/"
        w = a.remember("Alice likes green tea")
        assert a.get(w.memory_id).content == "Alice likes green tea"
