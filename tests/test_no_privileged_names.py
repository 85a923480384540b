"""No actor name is privileged: the runtime's own work (sweeps, demotion) acts as an identity no
caller can pass and no grant can name; a fresh folder has no grants; a folder from before holds
a built-in grant that connect revokes. And the rules that guard the vault hold for any caller:
/global/ memories are not demoted by one tenant's uncited recalls, an owner refuses to promote
an item the promotion rules never promote, and bad arguments to the admin verbs are typed."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

import memactors
from memactors.core.errors import InvalidIdentifier, InvalidRecord, NoGrants, StoreError
from memactors.core.grants import RETIRED_SYSTEM_ACTOR, SYSTEM_ACTOR
from memactors.core.ops import PromoteOp
from memactors.testing import owner_for, unique_org

CFG = {"runtime": {"num_owners": 2, "l2_flush_interval_s": 0.2}}


@pytest.fixture(scope="module")
def rt(ray_session, tmp_path_factory):
    # A manual clock: the sweep test moves it past a TTL instead of waiting for one
    r = memactors.connect(str(tmp_path_factory.mktemp("priv") / "data"), config=CFG, clock=memactors.ManualClock())
    yield r
    r.close()


def test_a_fresh_folder_has_no_grants_and_the_old_name_reads_nothing(rt):
    assert rt.grants() == []
    org = unique_org("h4")
    s = f"/org/{org}/user/u/"
    rt.grant("ag-h4", s, write=True)
    rt.write(s, "a secret plan of the org", actor="ag-h4")
    with pytest.raises(NoGrants):
        rt.recall("secret plan", actor=RETIRED_SYSTEM_ACTOR, task_id="t", allowed_scopes=[s], purpose="p")
    with pytest.raises(NoGrants):
        rt.audit.sql("SELECT count(*) FROM events", actor=RETIRED_SYSTEM_ACTOR)
    for call in (lambda: rt.recall("x", actor=SYSTEM_ACTOR, task_id="t", allowed_scopes=[s], purpose="p"),
                 lambda: rt.write(s, "x", actor=SYSTEM_ACTOR),
                 lambda: rt.grant(SYSTEM_ACTOR, "/global/", write=True),
                 lambda: rt.forget("0" * 32, actor=SYSTEM_ACTOR, reason="r")):
        with pytest.raises(InvalidIdentifier):
            call()


def test_sweeps_and_demotion_still_work_without_a_grant(rt):
    org = unique_org("gc")
    s = f"/org/{org}/user/u/"
    rt.grant("ag-gc", s, write=True)
    rt.write(s, "expires very soon", actor="ag-gc", ttl_days=0.0001)
    rt.flush()
    rt.clock.advance(days=0.0002)  # past its hard TTL
    res = rt.gc(scope=s)
    assert res.applied["by_rule"]["hard_expired"] == 1
    assert all(g["actor"] != SYSTEM_ACTOR for g in rt.grants())


def test_an_old_folders_built_in_grant_is_revoked_at_connect(ray_session, tmp_path):
    data = str(tmp_path / "data")
    r = memactors.connect(data, config=CFG)
    r.grant(RETIRED_SYSTEM_ACTOR, "/global/", write=True, by="memactors")  # what older versions granted
    r.close()
    r = memactors.connect(data, config=CFG)
    try:
        assert r.grants(RETIRED_SYSTEM_ACTOR) == []
        with pytest.raises(NoGrants):
            r.recall("x", actor=RETIRED_SYSTEM_ACTOR, task_id="t", allowed_scopes=["/global/"], purpose="p")
    finally:
        r.close()


def test_one_tenants_uncited_recalls_never_demote_a_global_memory(rt):
    org = unique_org("m2")
    rt.grant("admin-m2", "/global/", write=True)
    rt.grant("reader-m2", f"/org/{org}/user/x/")
    rt.grant("reader-m2", "/global/")
    g = rt.write("/global/", "Company-wide: the Aurelian holiday is on the 3rd", actor="admin-m2").memory_id
    for _ in range(6):
        rt.recall("Aurelian holiday", actor="reader-m2", task_id="t", purpose="p", threshold=0.0,
                  allowed_scopes=[f"/org/{org}/user/x/", "/global/"])
    assert rt.demote_unused(after=3).get("demoted", 0) == 0
    hits = rt.recall("Aurelian holiday", actor="admin-m2", task_id="t", allowed_scopes=["/global/"], purpose="p",
                     threshold=0.0).hits
    assert any(h.memory_id == g and h.pool == "vault" for h in hits)


@pytest.mark.parametrize("text", ["import os\nos.system('rm -rf /')\n", "haha ok thanks"])
def test_an_owner_applies_the_promotion_rules_to_a_direct_promotion(rt, text):
    org = unique_org("l3")
    s = f"/org/{org}/user/u/"
    rt.grant("ag-l3", s, write=True)
    w = rt.write(s, f"```python\n{text}```" if "os." in text else text, actor="ag-l3", pool="working")
    assert w.memory_id is not None
    out = rt._calls.get(owner_for(rt, s).submit.remote(  # the owner's entry point, called directly
        [PromoteOp(w.memory_id, "ag-l3", "explicit", "default", "p-1")], rt.clock.now_us()))[0]
    assert out["error"] == "InvalidRecord" and "never promoted" in out["message"]


def test_admin_verbs_refuse_bad_arguments_typed(rt, tmp_path):
    org = unique_org("l7")
    s = f"/org/{org}/user/u/"
    rt.grant("ag-l7", s, write=True)
    m = rt.write(s, "a memory to roll back", actor="ag-l7").memory_id
    for bad in (None, 5, "a\0b", b"bytes"):
        with pytest.raises(InvalidRecord):
            rt.fork(bad)
    with pytest.raises(StoreError):
        rt.fork(f"{rt.data_dir}/l2/inside")
    with pytest.raises(InvalidRecord):
        rt.gc(progress=5)
    with pytest.raises(InvalidIdentifier):
        rt.rollback(where={"actor": 5}, actor="ag-l7", reason="r", dry_run=True)
    with pytest.raises(InvalidRecord):
        rt.rollback(where={"source_kind": "nope"}, actor="ag-l7", reason="r", dry_run=True)
    with pytest.raises(InvalidRecord):
        rt.rollback(memory_id=m, cascade="no", actor="ag-l7", reason="r", dry_run=True)
    with pytest.raises(InvalidRecord):  # a dry run refuses the reason the real run would
        rt.rollback(memory_id=m, actor="ag-l7", reason="x" * 2000, dry_run=True)

    class Surrogates(memactors.Retriever):
        name = "surrogates"

        def retrieve(self, query, k):
            return [{"content": "half a pair \ud800 here"}]

    with pytest.raises(InvalidRecord):
        rt.retrieve(Surrogates(), "pair", actor="ag-l7", task_id="t", allowed_scopes=[s], purpose="p")


@pytest.mark.parametrize("rate", ["2", "nan", "-0.1"])
def test_simulate_refuses_a_chaos_rate_outside_0_1(tmp_path, rate):
    from memactors.cli import cli

    res = CliRunner().invoke(cli, ["simulate", "--chaos", rate, "--out", str(tmp_path / "o"), "--backend", "dict",
                                    "--no-plots", "--no-progress"])
    assert res.exit_code == 2 and "chaos rate" in res.output
