"""Every gate rule with its own must-match and must-not-match samples (tests/fixtures/
gate_rule_samples.json, the way gitleaks ships true and false positives with each rule)."""

import json
import pathlib

import pytest

from memactors.gate import RULES, Gate
from memactors.gate.rules import CATEGORIES

SAMPLES = json.loads((pathlib.Path(__file__).parent / "fixtures" / "gate_rule_samples.json").read_text("utf-8"))
G = Gate()
MATCH = [(rid, s["source"], t) for rid, s in SAMPLES.items() for t in s["match"]]
NO_MATCH = [(rid, s["source"], t) for rid, s in SAMPLES.items() for t in s["no_match"]]


def _ids(cases):
    return [f"{rid}-{i}" for i, (rid, _, _) in enumerate(cases)]


def test_every_rule_has_samples_and_every_sample_a_rule():
    assert set(SAMPLES) == set(RULES)
    for rid, s in SAMPLES.items():
        assert len(s["match"]) >= 2 and len(s["no_match"]) >= 2, rid


def test_the_gate_doc_counts_the_rules_there_are():
    doc = (pathlib.Path(__file__).parent.parent / "docs" / "gate.md").read_text("utf-8")
    assert f"runs {len(RULES)} independent rules" in doc


@pytest.mark.parametrize("rid,source,text", MATCH, ids=_ids(MATCH))
def test_rule_matches_its_samples(rid, source, text):
    assert rid in G.prescan(text, source), "the pre-scan must select the rule"
    assert rid in {h.rule for h in G.scan(text, source).hits}


@pytest.mark.parametrize("rid,source,text", NO_MATCH, ids=_ids(NO_MATCH))
def test_rule_does_not_match_its_counter_samples(rid, source, text):
    assert rid not in {h.rule for h in G.scan(text, source).hits}


@pytest.mark.parametrize("rid", sorted(RULES))
def test_rule_declares_where_it_comes_from(rid):
    r = RULES[rid]
    assert r.category in CATEGORIES and rid.startswith(r.category.split("_")[0])
    assert r.origin and r.reason and 0 <= r.risk <= 1 and r.binds
    assert (r.placeholder is not None) == (r.category in ("pii", "secret"))
    assert (r.sensitivity != "") == (r.category in ("pii", "secret"))


@pytest.mark.parametrize("rid,source,text", [c for c in MATCH if c[0].startswith(("pii.", "secret."))],
                         ids=_ids([c for c in MATCH if c[0].startswith(("pii.", "secret."))]))
def test_matched_values_never_reach_the_report_or_the_kept_text(rid, source, text):
    r = G.scan(text, source)
    values = {text[h.start : h.end] for h in r.hits if h.category in ("pii", "secret")}
    logged = json.dumps(r.summary(), ensure_ascii=False)
    kept = {text[h.start : h.end] for h in r.hits if h.action == "allow"}  # the policy keeps these as said
    for v in values:
        assert v not in logged
        assert r.text is None or v in kept or v not in r.text
    assert G.redact_all(text) != text


def test_injection_rules_ignore_the_users_own_words():
    for rid in ("injection.ignore_previous", "injection.standing_order", "injection.role_override"):
        for text in SAMPLES[rid]["match"]:
            assert not [h for h in G.scan(text, "user_stated").hits if h.category == "injection"]
            assert not [h for h in G.scan(text, "config_change").hits if h.category == "injection"]
            assert G.scan(text, "tool").decision == "pending"
