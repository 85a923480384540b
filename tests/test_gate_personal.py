"""Bank accounts, dates of birth and home addresses (``memactors.gate.rules.personal``) through
the runtime: redacted by default, nothing of the value stored or recalled, the rule's own
policy keeps them, and the forms a record takes (a JSON key, a CSV column, a label above)."""

import pytest

import memactors
from memactors.gate import Gate

S = "/org/acme/user/alice/"
G = Gate()


@pytest.mark.parametrize("text,value,rule", [
    ('{"bank": "Chase", "account_number": "000123456789"}', "000123456789", "pii.bank_account"),
    ("Bank details\nAccount No.\n4000123456\nRouting: 021000021", "4000123456", "pii.bank_account"),
    ("Bank details\nAccount No.\n4000123456\nRouting: 021000021", "021000021", "pii.bank_account"),
    ("name,date_of_birth\nAlice,1985-03-14", "1985-03-14", "pii.birth_date"),
    ("DATE OF BIRTH: 14 MARCH 1985", "14 MARCH 1985", "pii.birth_date"),
    ("patient born on 3/14/85, allergic to penicillin", "3/14/85", "pii.birth_date"),
    ("Delivery address: 9 Elm Close, Reading RG1 2AB. Leave at the door.", "9 Elm Close", "pii.street_address"),
    ("我家住在上海市浦东新区世纪大道100号2栋1203室，周末在家", "世纪大道100号", "pii.street_address"),
])
def test_the_value_is_redacted_wherever_the_record_puts_it(text, value, rule):
    r = G.scan(text, "user_stated")
    assert rule in {h.rule for h in r.hits}
    assert r.decision == "redacted" and value not in r.text


@pytest.mark.parametrize("text", [
    "Invoice 20240314 paid from the company's account at the bank on 2024-03-14",  # a date, not an account
    "The bank opened its 1985-03-14 branch; born again as a brand in 2001",
    "Our HQ address is 500 Market St, San Francisco",  # a business's
    "Turn left at 10 Downing Street, then live at the moment",
    "She was born in March 1985",  # no day: not a date of birth
    "account balance: 1,234,567.89 at the bank",
])
def test_near_misses_stay_as_written(text):
    r = G.scan(text, "user_stated")
    assert r.decision == "accepted" and r.text == text, [h.rule for h in r.hits]


def test_the_runtime_stores_and_recalls_none_of_it():
    with memactors.connect("memory://", host="process") as rt:
        rt.grant("ag", S, read=True, write=True)
        w = [rt.write(S, t, actor="ag") for t in (
            "Alice lives at 221B Baker Street, London NW1 6XE with her cat",
            "Alice's date of birth is 14 March 1985, she prefers tea",
            "Alice's bank account number is 12345678, sort code 20-00-00, at Barclays")]
        assert [x.decision for x in w] == ["redacted"] * 3
        hits = rt.recall("Alice address birth bank account", actor="ag", allowed_scopes=[S]).to_dict()["hits"]
        text = " ".join(h["content"] for h in hits)
        assert len(hits) == 3 and "[ADDRESS]" in text and "[BIRTH_DATE]" in text and "[BANK_ACCOUNT]" in text
        for value in ("221B", "Baker", "NW1", "14 March 1985", "12345678", "20-00-00"):
            assert value not in text
        # a recall query carrying one is redacted before it is embedded or logged, and still answered
        assert rt.recall("who lives at 221B Baker Street, London?", actor="ag", allowed_scopes=[S]).to_dict()["hits"]


def test_a_rule_set_to_allow_keeps_the_value_and_still_reports_it():
    cfg = {"gate": {"rules": {"pii.street_address": "allow"}}}
    with memactors.connect("memory://", host="process", config=cfg) as rt:
        rt.grant("ag", S, read=True, write=True)
        text = "Alice lives at 221B Baker Street, London NW1 6XE"
        w = rt.write(S, text, actor="ag")
        assert w.decision == "accepted"
        assert text in [h["content"] for h in rt.recall("Alice lives", actor="ag", allowed_scopes=[S]).to_dict()["hits"]]
        # the other two keep their default
        assert rt.write(S, "Alice's DOB: 03/14/1985", actor="ag").decision == "redacted"
