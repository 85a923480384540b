"""The release gate (`memactors eval`): the cases and their generator, the residue scanner on
real LanceDB and DuckDB files, the report's verdict, and the gate on a real runtime: the small
set holds every recall counter at 0, a planted cross-scope leak and planted residue fail it,
and the command line refuses bad options before a runtime starts."""

from __future__ import annotations

import os
import pathlib
import shutil

import orjson
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memactors import InvalidRecord
from memactors.eval import (COUNTERS, SMALL_SET, Count, Needle, Report, case_from_dict, cases_to_json, check_set,
                            generate, needles_for, run_eval, scan_residue, small_set)
from memactors.eval import residue as residue_mod
from memactors.eval.report import RECALL_COUNTERS, RESIDUE_COUNTERS
from memactors.eval.scenarios import KINDS, _VARIANTS

SMALL_CFG = {"runtime": {"num_owners": 2, "l2_flush_interval_s": 0.2}}
SHIPPED = os.path.join(os.path.dirname(__file__), "..", "memactors", "eval", "data", "small.json")


# --- the cases ------------------------------------------------------------------------------


def test_the_shipped_small_set_is_what_the_generator_makes():
    want = cases_to_json(generate(SMALL_SET["cases"], SMALL_SET["seed"]), name="small", seed=SMALL_SET["seed"])
    assert open(SHIPPED, "rb").read() == want, (
        "memactors/eval/data/small.json is stale: run "
        "`python -c 'from memactors.eval.scenarios import write_small_set; write_small_set()'`")
    cases = small_set()
    assert len(cases) == SMALL_SET["cases"] and check_set(cases) is cases
    assert {c.kind for c in cases} == set(KINDS)
    assert {(c.kind, c.variant) for c in cases} == {(k, v) for k, vs in _VARIANTS.items() for v in vs}


def test_the_generator_is_seeded_and_a_longer_set_starts_with_a_shorter_one():
    assert generate(10, seed=5) == generate(20, seed=5)[:10]
    assert generate(10, seed=5) != generate(10, seed=6)
    assert [c.kind for c in generate(2 * len(KINDS), seed=1)] == list(KINDS) * 2
    markers = [w.marker for c in generate(300, seed=3) for w in c.writes if w.marker]
    assert len(markers) == len(set(markers))  # a forgotten memory's word is its own
    for bad in (0, -1, 1.5, True):
        with pytest.raises(InvalidRecord):
            generate(bad)


def _doc(case):
    return orjson.loads(cases_to_json([case], name="t", seed=None))["cases"][0]


@pytest.mark.parametrize("change, message", [
    (lambda d: d.update(kind="sideways"), "kind"),
    (lambda d: d["probes"][0].update(must=["nowhere"]), "only the case's writes"),
    (lambda d: d["probes"][0].update(must=d["probes"][0]["must_not"]), "must are writes without a trap"),
    (lambda d: d["writes"][0].pop("marker"), "carry a marker"),
    (lambda d: d["writes"].append(dict(d["writes"][0])), "unique keys"),
    (lambda d: d["actions"].append({"op": "shred", "key": "gone"}), "op is"),
    (lambda d: d["writes"][0].update(colour="red"), "an object with the fields"),
])
def test_a_malformed_case_is_refused_without_echoing_it(change, message):
    forgotten = next(c for c in generate(7, seed=0) if c.kind == "forgotten" and c.variant == "one_memory")
    assert case_from_dict(_doc(forgotten)) == forgotten
    d = _doc(forgotten)
    change(d)
    with pytest.raises(InvalidRecord, match=message) as err:
        case_from_dict(d, 3)
    assert "position 3" in str(err.value) and forgotten.writes[0].text not in str(err.value)


def test_a_set_whose_clock_outlives_a_memory_that_must_come_back_is_refused():
    cases = generate(7, seed=0)
    own = cases[0].writes[0]
    assert own.key in cases[0].probes[0].must
    short = case_from_dict({**_doc(cases[0]), "writes": [dict(_doc(cases[0])["writes"][0], ttl_days=2)]
                            + _doc(cases[0])["writes"][1:]})
    with pytest.raises(InvalidRecord, match="expires before the probes"):
        check_set([short, *cases[1:]])  # the expired case moves the clock 10 days
    check_set([short])  # alone, the clock does not move
    with pytest.raises(InvalidRecord, match="unique"):
        check_set([cases[0], cases[0]])


def test_the_eval_is_an_application_of_the_public_api():
    """memactors.eval imports memactors' public face (and the simulation's secret shapes), never
    the runtime's insides: actors, stores, core or the runtime package."""
    import ast

    folder = os.path.join(os.path.dirname(SHIPPED), "..")
    for name in sorted(f for f in os.listdir(folder) if f.endswith(".py")):
        tree = ast.parse(open(os.path.join(folder, name), encoding="utf-8").read())
        mods = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.level == 0 and n.module}
        mods |= {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        inside = {m for m in mods if m.startswith("memactors")} - {"memactors", "memactors.sim.planted"}
        assert not inside, f"memactors/eval/{name} imports {sorted(inside)}"


# --- the residue scanner (real Lance and DuckDB files, no runtime) -----------------------------


@settings(max_examples=200, deadline=None)
@given(st.lists(st.binary(min_size=1, max_size=6), min_size=1, max_size=30), st.binary(max_size=6))
def test_the_trie_pattern_matches_exactly_its_words(words, other):
    import re

    from memactors.eval.residue import trie_pattern

    pattern = re.compile(trie_pattern(words))
    assert all(pattern.fullmatch(w) for w in words)
    assert (pattern.fullmatch(other) is not None) == (other in words)
    assert all(m.group() in words for m in pattern.finditer(b"\x00".join(words) + other))


def test_the_scanner_finds_needles_in_raw_files_lance_versions_fts_indexes_and_duckdb(tmp_path, monkeypatch):
    import duckdb
    import lance

    root = tmp_path / "data"
    root.mkdir()
    gone, secret, clean = "Velmo keeps the key at the tusrandel market", "ghp_" + "Ab1" * 12, "never written here"
    needles = [Needle("c1/gone", "forgotten", (gone, "tusrandel"), "m1"), Needle("c2/secret", "blocked", (secret,)),
               Needle("c3/clean", "forgotten", (clean, "zzqqxx"), "m9")]
    (root / "notes.bin").write_bytes(b"\x00head" + secret.encode("utf-16-le") + b"tail")
    (root / "split.txt").write_bytes(b"x" * 5 + b"tusrandel" + b"y" * 5)
    monkeypatch.setattr(residue_mod, "_CHUNK", 8)  # the word straddles two chunks
    ds_path = str(root / "l2" / "memories.lance")
    t = pa.table({"memory_id": ["m1", "m2"], "content": [gone, "something else"],
                  "search_text": ["velmo keeps key tusrandel market", "something else"]})
    lance.write_dataset(t, ds_path)
    ds = lance.dataset(ds_path)
    ds.create_scalar_index("search_text", "INVERTED")
    ds.delete("memory_id = 'm1'")
    con = duckdb.connect(str(root / "ledger.duckdb"))
    con.execute("CREATE TABLE notes (id INTEGER, tags VARCHAR[])")
    con.execute("INSERT INTO notes VALUES (1, ['a', ?])", [secret])
    con.close()

    found = scan_residue(root, needles)
    assert set(found.found) == {"c1/gone", "c2/secret"}  # the clean needle matches nothing
    g, s = found.found["c1/gone"], found.found["c2/secret"]
    assert "file split.txt (utf-8)" in g
    assert any(p.startswith("l2/memories.lance version 1, column content") for p in g)
    assert not any("version 3" in p for p in g)  # the latest version no longer holds it
    assert any(p.startswith("full-text index l2/memories.lance/_indices/") for p in g)
    assert "file notes.bin (utf-16-le)" in s and "duckdb ledger.duckdb table notes, column tags" in s
    assert found.scanned["lance_versions"] == 3 and found.scanned["duckdb_tables"] == 1
    assert found.scanned["fts_indexes"] == 1
    assert not any(gone in p or secret in p for places in found.found.values() for p in places)


# --- the report ------------------------------------------------------------------------------


def _report(**counts) -> Report:
    counters = {name: Count(0, 5) for name in COUNTERS}
    counters.update({k: Count(*v) for k, v in counts.items()})
    return Report(set={"name": "t", "cases": 3, "writes": 6, "probes": 3}, counters=counters,
                  must_recall={"expected": 10, "found": 10, "min_recall": 0.9},
                  decisions={"writes": 20, "unexpected": 0}, memory_ids={}, residue={"scanned": {}, "purge": None})


def test_the_verdict_fails_on_any_counter_a_low_recall_or_an_unexpected_decision():
    assert _report().exit_code() == 0 and _report().failures() == []
    for name in COUNTERS:
        rep = _report(**{name: (1, 5)})
        assert rep.exit_code() == 1 and rep.failures() == [f"{name}: 1 of 5 (20.0%) must be 0"]
    low = _report()
    low.must_recall["found"] = 8
    assert low.exit_code() == 1 and "below the floor" in low.failures()[0]
    odd = _report()
    odd.decisions["unexpected"] = 1
    assert odd.exit_code() == 1 and "decided otherwise" in odd.failures()[0]
    orjson.dumps(_report().to_dict())
    broken = _report()
    broken.ledger = {"verified": False, "first_bad_seq": 7, "events": 9, "erasures": 2, "erasures_proven": 1}
    assert broken.failures() == ["ledger: the hash chain does not verify (first bad seq 7)",
                                 "ledger: 1 of 2 forgotten memories have no tombstone or still have their data key"]
    unscanned = _report(post_forget_residue=(1, 5))
    unscanned.residue = None  # a run with scan=False: the residue counters are not measured, not passed
    assert unscanned.failures() == [] and [r[-1] for r in unscanned.rows()
                                           if r[0] in RESIDUE_COUNTERS.values()] == ["not scanned"] * 2


def test_bench_governance_counters_must_be_zero():
    from memactors.bench.report import governance_failures

    clean = {"governance": {"max_over_grid": {"cross_scope": 0, "expired": 0, "superseded": 0, "deleted": 0}}}
    assert governance_failures(clean) == []
    leaky = {"governance": {"max_over_grid": {"cross_scope": 2, "expired": 0, "superseded": 0, "deleted": 1}}}
    assert governance_failures(leaky) == ["cross_scope: 2", "deleted: 1"]


def test_bench_thresholds_exits_1_when_a_governance_counter_is_not_zero(tmp_path, monkeypatch):
    from click.testing import CliRunner

    import memactors
    import memactors.bench
    from memactors import cli as cli_mod

    class Closed:
        def close(self):
            pass

    rep = {"governance": {"max_over_grid": {"cross_scope": 1, "expired": 0, "superseded": 0, "deleted": 0}}}
    monkeypatch.setattr(memactors, "connect", lambda *a, **k: Closed())
    monkeypatch.setattr(memactors.bench, "run_thresholds", lambda *a, **k: rep)
    tiny = str(pathlib.Path(__file__).parent / "fixtures" / "locomo_tiny")  # a dataset it can read (checked first)
    args = ["bench", "thresholds", "--dataset", tiny, "--data", str(tmp_path / "d"), "--json"]
    res = CliRunner().invoke(cli_mod.cli, args)
    assert res.exit_code == 1 and "governance counters must be 0" in res.stderr and "cross_scope: 1" in res.stderr
    rep["governance"]["max_over_grid"]["cross_scope"] = 0
    assert CliRunner().invoke(cli_mod.cli, args).exit_code == 0


# --- the gate on a real runtime ---------------------------------------------------------------


def _factory(folder):
    import memactors

    return lambda clock: memactors.connect(os.path.join(folder, "data"), config=SMALL_CFG, clock=clock)


@pytest.fixture(scope="module")
def small_run(ray_session, tmp_path_factory):
    folder = str(tmp_path_factory.mktemp("eval-small"))
    cases = small_set()
    return run_eval(_factory(folder), cases, set_name="small"), os.path.join(folder, "data"), cases


def test_the_small_set_holds_every_recall_counter_at_zero(small_run):
    rep, _data, cases = small_run
    for name in RECALL_COUNTERS.values():
        c = rep.counters[name]
        assert c.violations == 0 and c.trials >= 7, (name, rep.examples)
    assert rep.counters["stale_unflagged"] == Count(0, 14), rep.examples  # 7 recalled cases, asked twice
    assert rep.decisions == {"writes": sum(len(c.writes) for c in cases), "unexpected": 0}, rep.examples
    assert rep.recall_at_5 >= rep.must_recall["min_recall"] and rep.must_recall["expected"] == 121
    assert rep.counters["blocked_secret_storage"] == Count(0, 14)
    assert rep.counters["post_forget_residue"].trials == 21
    assert rep.ledger["verified"] and rep.ledger["erasures"] == 21
    assert rep.residue["scanned"]["lance_versions"] >= 1 and rep.residue["scanned"]["duckdb_tables"] >= 7
    shown = orjson.dumps(rep.to_dict()).decode()  # ids and places, never content
    content = [v for c in cases for w in c.writes for v in (w.text, w.secret, w.marker) if v]
    assert not [v for v in content if v in shown]


def test_every_forgotten_memory_has_a_tombstone_and_no_data_key(small_run):
    rep, _data, _cases = small_run
    assert rep.ledger["erasures_proven"] == rep.ledger["erasures"], [
        e for e in rep.examples if e["counter"] == "erasure_unproven"]


def test_the_small_set_passes_the_gate(small_run):
    rep, _data, _cases = small_run
    assert rep.failures() == [] and rep.exit_code() == 0


def test_planted_residue_in_a_lance_file_fails_the_gate(small_run, tmp_path):
    import lance

    rep, data, cases = small_run
    copy = str(tmp_path / "data")
    shutil.copytree(data, copy)
    needles = needles_for(cases, rep.memory_ids)
    blocked = next(n for n in needles if n.kind == "blocked")
    ds_path = os.path.join(copy, "l2", "memories.lance")
    row = lance.dataset(ds_path).to_table().slice(0, 1)
    i = row.schema.get_field_index("content")
    row = row.set_column(i, row.schema.field(i), pa.array([f"planted: {blocked.values[0]}"], pa.string()))
    lance.write_dataset(row, ds_path, mode="append")  # a secret written straight into L2, past the gate

    planted = rep.with_residue(scan_residue(copy, needles), needles)
    assert planted.counters["blocked_secret_storage"] == Count(1, 14)
    assert planted.exit_code() == 1
    assert any(f.startswith("blocked_secret_storage: 1 of 14") for f in planted.failures())
    where = next(e for e in planted.examples if e["counter"] == "blocked_secret_storage")
    assert f"{where['case']}/{where['write']}" == blocked.label
    assert any(p.startswith("file l2/memories.lance/data/") for p in where["where"])
    assert any("column content" in p for p in where["where"])


def test_a_planted_cross_scope_leak_fails_the_gate(ray_session, tmp_path):
    cases = [c for c in small_set() if c.kind != "soft_expired"][:14]  # one probe each
    earlier: list = []

    def leaky(rt, **kw):
        """The scope filter switched off: a hit from an earlier probe (another tenant) comes back."""
        res = rt.recall(**kw)
        planted = earlier[:1]
        earlier[:] = list(res.hits)
        res.hits = list(res.hits)[:4] + planted
        return res

    rep = run_eval(_factory(str(tmp_path)), cases, scan=False, recall=leaky)
    leak = rep.counters["cross_scope_leak"]
    assert leak.violations == len(cases) - 1 and rep.exit_code() == 1
    assert rep.failures()[0].startswith(f"cross_scope_leak: {leak.violations} of {leak.trials}")
    assert all(rep.counters[n].violations == 0 for n in COUNTERS if n != "cross_scope_leak")
    ex = next(e for e in rep.examples if e["counter"] == "cross_scope_leak")
    assert ex["scope"] not in [s for c in cases if c.id == ex["case"] for p in c.probes for s in p.allowed_scopes]
    assert rep.residue is None and all(r[-1] == "not scanned" for r in rep.rows() if r[0] in RESIDUE_COUNTERS.values())


# --- the command line -------------------------------------------------------------------------


@pytest.mark.parametrize("args, message", [
    (["--seed", "3"], "--seed applies to --set generated only"),
    (["--cases", "500"], "the small set has 112 cases"),
    (["--out", "/nonexistent-folder/r.json"], "--out: its folder does not exist"),
    (["--data", "USED"], "is not a new or empty folder"),
    (["--set", "huge"], "Invalid value for '--set'"),
    (["--cases", "0"], "Invalid value for '--cases'"),
    (["--min-recall", "1.5"], "Invalid value for '--min-recall'"),
])
def test_the_cli_refuses_bad_options_before_starting_a_runtime(args, message, tmp_path, monkeypatch):
    from click.testing import CliRunner

    import memactors
    from memactors import cli as cli_mod

    monkeypatch.setattr(memactors, "connect", lambda *a, **k: (_ for _ in ()).throw(AssertionError("connected")))
    used = tmp_path / "used"
    used.mkdir()
    (used / "notes.txt").write_text("keep")
    res = CliRunner().invoke(cli_mod.cli, ["eval", *[str(used) if a == "USED" else a for a in args]])
    assert res.exit_code == 2 and message in res.stderr, (res.exit_code, res.stderr, res.exception)
    assert (used / "notes.txt").read_text() == "keep"


def test_the_cli_prints_the_report_and_its_exit_code_is_the_verdict(tmp_path, monkeypatch):
    """The command is a thin layer: what run_eval reports is printed (tables or JSON), saved with
    --out, and decides the exit code. (run_eval itself runs on a real runtime above.)"""
    from click.testing import CliRunner

    import memactors.eval
    from memactors import cli as cli_mod

    calls = []

    def fake_run(path, cases, **kw):
        calls.append((path, len(cases), kw))
        return _report(cross_scope_leak=(1, 3)) if len(calls) == 1 else _report()

    monkeypatch.setattr(memactors.eval, "run_eval", fake_run)
    out = tmp_path / "report.json"
    args = ["eval", "--set", "generated", "--cases", "7", "--seed", "11", "--data", str(tmp_path / "scratch"),
            "--out", str(out)]
    res = CliRunner().invoke(cli_mod.cli, [*args, "--json"])
    doc = orjson.loads(res.stdout)
    assert res.exit_code == 1 == doc["exit_code"] and doc["failures"] == ["cross_scope_leak: 1 of 3 (33.3%) must be 0"]
    assert orjson.loads(out.read_bytes()) == doc
    assert calls[0][:2] == (str(tmp_path / "scratch"), 7) and calls[0][2]["min_recall"] == 0.95
    res = CliRunner().invoke(cli_mod.cli, ["eval", "--cases", "3", "--min-recall", "0.5"])  # tables, a temp folder
    assert res.exit_code == 0 and "gate: PASS" in res.stdout and "cross_scope_leak" in res.stdout, res.stdout
    assert calls[1][1] == 3 and calls[1][2]["min_recall"] == 0.5 and not os.path.exists(calls[1][0])
