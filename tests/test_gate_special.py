"""Special categories of personal data (GDPR Art. 9 and 10) through the public API: kept as
written by default, reported, and raised to ``confidential``, so a reader cleared only for
``internal`` never recalls them; a policy may redact or block them per rule."""

from __future__ import annotations

import pytest

import memactors
from memactors.gate import Gate, GatePolicy
from memactors.gate.policy import SPECIAL_CATEGORY_RULES

S = "/org/sc/user/u/"
SAID = {
    "pii.health_condition": "Una was diagnosed with type 2 diabetes in march",
    "pii.sexual_orientation": "Una came out as gay to the family in march",
    "pii.beliefs": "Una is a practising Muslim and fasts during Ramadan",
    "pii.ethnic_origin": "Una is of Korean descent on the mother's side",
    "pii.criminal_record": "Una was convicted of fraud in 2015",
}


def _recall(rt, actor, query):
    return rt.recall(query, actor=actor, task_id="t", allowed_scopes=[S], purpose="p", threshold=0.0, top_k=20)


def test_every_special_category_is_kept_as_said_reported_and_raised_to_confidential():
    with memactors.connect("memory://") as rt:
        rt.grant("w", S, write=True)
        rt.grant("low", S, clearance="internal")
        plain = rt.write(S, "Una likes hiking in march", actor="w", sensitivity="public")
        wrote = {rid: rt.write(S, text, actor="w") for rid, text in SAID.items()}
        for rid, res in wrote.items():
            assert res.decision == "accepted", rid
            assert rid in {h["rule"] for h in res.gate["hits"]}, rid
            version = rt.history(res.memory_id, actor="w")["versions"][0]
            assert version["sensitivity"] == "confidential" and version["content"] == SAID[rid], rid
        assert [h.memory_id for h in _recall(rt, "low", "Una march").hits] == [plain.memory_id]
        seen = {h.memory_id for h in _recall(rt, "w", "Una march diabetes gay Muslim Korean fraud").hits}
        assert {r.memory_id for r in wrote.values()} <= seen


def test_a_higher_sensitivity_asked_for_is_kept():
    with memactors.connect("memory://") as rt:
        rt.grant("w", S, write=True, clearance="restricted")
        res = rt.write(S, SAID["pii.health_condition"], actor="w", sensitivity="restricted")
        assert rt.history(res.memory_id, actor="w")["versions"][0]["sensitivity"] == "restricted"


def test_a_policy_redacts_or_blocks_one_category_and_leaves_the_others():
    cfg = {"gate": {"rules": {"pii.health_condition": "redact", "pii.criminal_record": "block"}}}
    with memactors.connect("memory://", config=cfg) as rt:
        rt.grant("w", S, write=True)
        health = rt.write(S, SAID["pii.health_condition"], actor="w")
        assert health.decision == "redacted"
        assert rt.history(health.memory_id, actor="w")["versions"][0]["content"] == \
            "Una was diagnosed with [HEALTH] in march"
        assert rt.write(S, SAID["pii.criminal_record"], actor="w").decision == "blocked"
        assert rt.write(S, SAID["pii.beliefs"], actor="w").decision == "accepted"


def test_the_default_policy_allows_them_and_a_users_rule_table_keeps_that_default():
    for policy in (GatePolicy(), GatePolicy.from_dict({}), GatePolicy.from_dict({"rules": {"pii.email": "allow"}})):
        assert all(policy.rules[r] == "allow" for r in SPECIAL_CATEGORY_RULES)
    assert set(SPECIAL_CATEGORY_RULES) <= {r.id for r in Gate().rules}


@pytest.mark.parametrize("text", [
    "The charity funds cancer research.", "Christian Dior launched a new perfume.",
    "The European Union passed a new law.", "Black Friday sales start tomorrow.", "Is Alice pregnant?",
    "Bluetooth is disabled on this device.", "The Great Depression lasted a decade.",
    "She served two years as mayor.", "We support trans rights.", "The party starts at 8pm.",
])
def test_words_of_a_category_not_said_of_anyone_are_no_hit(text):
    assert not {h.rule for h in Gate().scan(text, "tool").hits} & set(SPECIAL_CATEGORY_RULES)


def test_each_terms_words_are_selected_by_its_rules_pre_scan():
    """The rules' triggers are stems listed apart from their terms (gate/rules/special.py, ``_words``):
    each word a rule's terms hold, written alone, must be selected by that rule's trigger."""
    import re

    from memactors.gate.rules import RULES, special as S

    kinds = {"pii.health_condition": ("_CONDITIONS", "_EVENTS", "_STATES", "_MEDICINES", "_CARE"),
             "pii.sexual_orientation": ("_ORIENTATIONS",),
             "pii.beliefs": ("_FAITHS", "_RELIGIONS", "_PARTIES", "_LABELS", "_UNIONS", "_CONGREGATIONS", "_OBSERVANCES"),
             "pii.ethnic_origin": ("_ETHNIC",), "pii.criminal_record": ("_CRIMINAL",)}
    missed = []
    for rid, names in kinds.items():
        trigger = RULES[rid].trigger
        for name in names:
            terms = getattr(S, name)
            # the pattern's words: runs of letters outside escapes, classes and group flags
            text = re.sub(r"\\[a-zA-Z]|\[[^\]]*\]|\(\?[-i:=!<]+", " ", terms.pattern)
            for w in sorted(set(re.findall(r"[A-Za-z][A-Za-z'’\-]{2,}", text))):
                m = terms.search(w)
                if m is not None and m.group() == w and not trigger(w, w.lower()):
                    missed.append((rid, w))
    assert missed == []
