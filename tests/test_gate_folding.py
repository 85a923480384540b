"""Values hidden from the rules by characters a reader does not see as different: zero-width
and other invisible format characters inside a value, fullwidth digits and letters (what a
Chinese input method types), Unicode hyphens. The gate also scans the text as a reader sees
it; what that finds decides, and the folded text is what may be kept. Text without such a
value is kept exactly as typed."""

from __future__ import annotations

import pytest

import memactors
from memactors.gate import Gate
from memactors.gate.scanner import fold

GATE = Gate()
TOKEN = "ghp_" + "0bobzjcU9kCTGRBI1oOZSHCoHPbzRKZuQOBd"
ZW = ("\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad", "\u202e")


def _fullwidth(s: str) -> str:
    return "".join(chr(ord(c) + 0xFEE0) if c.isascii() and c.isalnum() else c for c in s)


@pytest.mark.parametrize("text", [
    "call me at " + _fullwidth("13812345678"),
    "电话：" + _fullwidth("13812345678") + "，谢谢",
    "phone 138\u20101234\u20105678",
    "phone 138\u22121234\u22125678",
    *[f"call me at 138{z}1234{z}5678" for z in ZW],
])
def test_a_hidden_phone_number_is_redacted(text):
    rep = GATE.scan(text, "user_stated")
    assert rep.decision == "redacted" and "[PHONE_CN]" in rep.text
    assert "5678" not in rep.text and "５６７８" not in rep.text


@pytest.mark.parametrize("text", [
    f"my key is {TOKEN[:12]}{z}{TOKEN[12:]}" for z in ZW
] + [f"my key is {_fullwidth(TOKEN)}"])
def test_a_hidden_secret_is_blocked(text):
    assert GATE.scan(text, "user_stated").decision == "blocked"
    assert "[API_KEY]" in GATE.redact_all(text)  # queries and reasons: the placeholder, never the value


@pytest.mark.parametrize("text", [
    "我喜欢吃饺子，你呢？（周三见）",
    "ＡＢＣ company makes good phones",
    "the meeting is in room\u00a0２０１ at ３ pm",
    "naïve café résumé — a note",
    "a zero\u200bwidth joiner in a word",
])
def test_text_with_nothing_hidden_is_kept_as_typed(text):
    rep = GATE.scan(text, "user_stated")
    assert rep.decision == "accepted" and rep.text == text
    assert GATE.redact_all(text) == text


def test_fold_touches_only_the_characters_that_can_hide_a_value():
    assert fold("plain ascii 13812345678") is None and fold("我喜欢吃饺子，你呢？") is None
    assert fold("a\u200bb ＡＢ１ 1\u20132") == "ab AB1 1-2"


def test_a_write_keeps_no_hidden_value(tmp_path):
    with memactors.connect("memory://") as rt:
        s = "/org/acme/user/alice/"
        rt.grant("a", s, write=True)
        r = rt.write(s, "Alice's mobile is " + _fullwidth("13812345678"), actor="a")
        assert r.decision == "redacted"
        hit = rt.recall("Alice mobile", actor="a", task_id="t", allowed_scopes=[s], purpose="p").hits[0]
        assert hit.content == "Alice's mobile is [PHONE_CN]"
