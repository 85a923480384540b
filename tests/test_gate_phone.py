"""International and national phone numbers (``pii.phone``, libphonenumber): the labelled set
in tests/fixtures/phone_numbers.json, numbers in prose that must stay, and what is kept."""

import json
import pathlib
import re

import pytest

from memactors.gate import Gate
from memactors.gate.rules.phone import REGIONS

SET = json.loads((pathlib.Path(__file__).parent / "fixtures" / "phone_numbers.json").read_text("utf-8"))
G = Gate()


@pytest.mark.parametrize("text", SET["match"])
def test_phone_numbers_are_redacted_whole(text):
    r = G.scan(text)
    assert r.decision == "redacted" and "[PHONE]" in r.text
    assert "pii.phone" in G.prescan(text)
    assert re.search(r"\d{2}", r.text.replace("[PHONE]", "")) is None or not any(
        d in r.text for d in re.findall(r"\d{4,}", text)), "no digit group of the number survives"


@pytest.mark.parametrize("text", SET["no_match"])
def test_numbers_in_prose_are_not_phones(text):
    r = G.scan(text)
    assert not [h for h in r.hits if h.rule in ("pii.phone", "pii.phone_cn")], r.text


def test_the_set_is_large_and_covers_every_region():
    assert len(SET["match"]) >= 50 and len(SET["no_match"]) >= 70
    assert set(REGIONS) >= {"US", "GB", "DE", "FR", "JP", "IN", "AU"}


def test_chinese_mobiles_stay_with_their_own_rule():
    for text in ("13812345678", "+86 138 1234 5678", "call 139-0000-1111 now"):
        assert [h.rule for h in G.scan(text).hits] == ["pii.phone_cn"]


def test_several_numbers_in_one_text_each_redacted():
    r = G.scan("office (212) 555-0199, London +44 20 7946 0958, 手机 13812345678")
    assert r.text == "office [PHONE], London [PHONE], 手机 [PHONE_CN]"


def test_a_phone_word_makes_a_bare_run_a_phone_but_not_any_run():
    assert G.scan("call me at 4155550132").text == "call me at [PHONE]"
    assert G.scan("request 4155550132 took 12ms").decision == "accepted"
    assert G.scan("order number 4155550132").decision == "accepted"


def test_redact_all_covers_phones_and_the_report_holds_no_value():
    text = "ring +1 415 555 0132"
    assert G.redact_all(text) == "ring [PHONE]"
    assert "415" not in json.dumps(G.scan(text).summary())


def test_a_text_full_of_look_alikes_stays_bounded():
    import time

    # 2,000 distinct phone-shaped groups (31k characters): each costs libphonenumber calls
    text = " ".join(f"({i:03d}) {i * 7 % 1000:03d} {i * 13 % 10000:04d}" for i in range(2000))
    t0 = time.process_time()  # the work it costs, whatever else the machine runs
    G.scan(text)
    assert time.process_time() - t0 < 5.0
