"""Grants carry the reason they were given: in the ledger event, in ``rt.grants()`` and in
``memactors grants``; the reason passes the write gate like any text kept in clear."""

from __future__ import annotations

import orjson
import pytest

import memactors
from memactors.core.errors import InvalidRecord


@pytest.fixture
def rt():
    r = memactors.connect("memory://")
    yield r
    r.close()


def test_a_reason_is_kept_with_the_grant_and_in_its_event(rt):
    g = rt.grant("support", "/org/acme/user/alice/", reason="ticket 4411: read her preferences")
    assert g["reason"] == "ticket 4411: read her preferences" and g["by"] == "admin"
    rt.grant("agent", "/org/acme/")
    by_actor = {x["actor"]: x for x in rt.grants()}
    assert by_actor["support"]["reason"] == "ticket 4411: read her preferences"
    assert by_actor["agent"]["reason"] is None
    rt.grant("auditor", "/global/")
    reasons = [r[0] for r in rt.audit.sql("SELECT reason FROM events WHERE action = 'grant' ORDER BY seq",
                                          actor="auditor")]
    assert reasons[:2] == ["grant changed: ticket 4411: read her preferences", "grant changed"]


def test_a_later_change_replaces_the_reason(rt):
    rt.grant("support", "/org/acme/", reason="onboarding")
    rt.grant("support", "/org/acme/", write=True, reason="migration, approved by ops")
    assert rt.grants("support")[0]["reason"] == "migration, approved by ops"
    rt.grant("support", "/org/acme/", read=False, write=False, reason="migration done")
    assert rt.grants("support") == []


def test_a_reason_goes_through_the_gate(rt):
    g = rt.grant("support", "/org/acme/", reason="call the user back on 13800138000")
    assert "13800138000" not in g["reason"]
    rows = rt.audit.sql("SELECT reason, snapshot FROM events WHERE action = 'grant'", actor="support")
    assert all(b"13800138000" not in bytes(s) and "13800138000" not in r for r, s in rows)
    with pytest.raises(InvalidRecord) as e:
        rt.grant("support", "/org/acme/", reason="key AKIAQYLPMN5HFTXW7Z3B for the export")
    assert "AKIA" not in str(e.value)
    assert rt.grants("support")[0]["reason"] == g["reason"]  # the refused change wrote nothing


@pytest.mark.parametrize("bad", ["", "   ", "x" * 1001, 42, b"bytes"])
def test_a_bad_reason_is_refused_typed(rt, bad):
    with pytest.raises(InvalidRecord):
        rt.grant("support", "/org/acme/", reason=bad)
    with pytest.raises(InvalidRecord):
        rt.grant_many([{"actor": "support", "scope": "/org/acme/", "reason": bad}])
    assert rt.grants("support") == []


def test_the_reason_survives_a_reopen(tmp_path):
    path = str(tmp_path / "data")
    with memactors.connect(path) as rt:
        rt.grant("support", "/org/acme/", reason="quarterly audit")
    with memactors.connect(path) as rt:
        assert rt.grants("support")[0]["reason"] == "quarterly audit"


def test_cli_grants_shows_the_reason(tmp_path, monkeypatch):
    import contextlib

    from click.testing import CliRunner

    import memactors.cli.grants as cmd
    from memactors.cli import cli

    @contextlib.contextmanager
    def in_process(data, **_):  # the command's own code, on the process host (no Ray start per verb)
        with memactors.connect(data, host="process") as r:
            yield r, "embedded"

    monkeypatch.setattr(cmd, "open_runtime", in_process)
    data = str(tmp_path / "data")
    r = CliRunner().invoke(cli, ["grant", "support", "/org/acme/", "--reason", "quarterly audit", "--data", data])
    assert r.exit_code == 0, r.output
    assert "quarterly audit" in r.output
    r = CliRunner().invoke(cli, ["grants", "--data", data, "--json"])
    assert r.exit_code == 0, r.output
    assert orjson.loads(r.output)["grants"][0]["reason"] == "quarterly audit"


def test_the_granting_actor_is_kept_without_a_reason(tmp_path):
    """`by` was dropped from a grant given without a reason: `grant` returned no `by` and
    `grants()` said None, though the event's actor names it."""
    path = str(tmp_path / "data")
    with memactors.connect(path) as rt:
        g = rt.grant("b", "/org/acme/user/alice/", by="ops-lead")
        assert (g["reason"], g["by"]) == (None, "ops-lead")
        rt.grant("c", "/org/acme/")  # by defaults to "admin"
        assert {x["actor"]: x["by"] for x in rt.grants()} == {"b": "ops-lead", "c": "admin"}
    with memactors.connect(path) as rt:  # read back from the ledger
        assert {x["actor"]: (x["reason"], x["by"]) for x in rt.grants()} == {"b": (None, "ops-lead"),
                                                                             "c": (None, "admin")}


def test_cli_grants_shows_who_granted(tmp_path):
    from click.testing import CliRunner

    from memactors.cli import cli

    data = str(tmp_path / "data")
    r = CliRunner().invoke(cli, ["grant", "b", "/org/acme/", "--by", "ops-lead", "--data", data])
    assert r.exit_code == 0, r.output
    r = CliRunner().invoke(cli, ["grants", "--data", data], env={"COLUMNS": "200"})
    assert r.exit_code == 0 and "ops-lead" in r.output, r.output
