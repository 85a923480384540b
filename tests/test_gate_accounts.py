"""Identifiers an organisation or a platform gives a person (employee, student and member numbers,
social handles) through the public API: found, kept as written by default, reported and raised
to ``confidential``, so a reader cleared only for ``internal`` never recalls them; a policy may
redact them as it does an e-mail address."""

from __future__ import annotations

import pytest

import memactors
from memactors.gate import Gate, GatePolicy
from memactors.gate.policy import KEPT_IDENTIFIER_RULES

S = "/org/ids/user/u/"
SAID = {
    "pii.org_id": "Una's employee ID is E-483920 at the plant",
    "pii.social_handle": "Una said her Instagram is @una_k88 for the plant photos",
}


def _recall(rt, actor, query):
    return rt.recall(query, actor=actor, task_id="t", allowed_scopes=[S], purpose="p", threshold=0.0, top_k=20)


def test_each_identifier_is_kept_as_said_reported_and_raised_to_confidential():
    with memactors.connect("memory://") as rt:
        rt.grant("w", S, write=True)
        rt.grant("low", S, clearance="internal")
        plain = rt.write(S, "Una works at the plant", actor="w", sensitivity="public")
        for rid, text in SAID.items():
            res = rt.write(S, text, actor="w")
            assert res.decision == "accepted" and rid in {h["rule"] for h in res.gate["hits"]}, rid
            version = rt.history(res.memory_id, actor="w")["versions"][0]
            assert version["sensitivity"] == "confidential" and version["content"] == text, rid
        assert [h.memory_id for h in _recall(rt, "low", "Una plant").hits] == [plain.memory_id]
        assert len(_recall(rt, "w", "Una plant employee Instagram").hits) == 3


def test_a_policy_redacts_them_as_an_email_is():
    cfg = {"gate": {"rules": {r: "redact" for r in KEPT_IDENTIFIER_RULES}}}
    with memactors.connect("memory://", config=cfg) as rt:
        rt.grant("w", S, write=True)
        contents = []
        for text in SAID.values():
            res = rt.write(S, text, actor="w")
            assert res.decision == "redacted"
            contents.append(rt.history(res.memory_id, actor="w")["versions"][0]["content"])
        assert contents == ["Una's employee ID is [ID_NUMBER] at the plant",
                            "Una said her Instagram is [HANDLE] for the plant photos"]


def test_the_default_policy_allows_them():
    assert all(GatePolicy().rules[r] == "allow" for r in KEPT_IDENTIFIER_RULES)
    assert set(KEPT_IDENTIFIER_RULES) <= {r.id for r in Gate().rules}


@pytest.mark.parametrize("text", [
    "use the @property decorator", "cc @alice can you review?", "Follow us on Twitter @AcmeCorp",
    "my git tag is v1.2.3", "his handle on the situation was great", "employee count: 48213",
    "Student IDs are 8 digits long", "The user's employee list has 48213 rows.",
])
def test_names_and_numbers_that_are_no_ones_are_no_hit(text):
    for source in ("user_stated", "tool"):
        assert not {h.rule for h in Gate().scan(text, source).hits} & set(KEPT_IDENTIFIER_RULES), (source, text)
