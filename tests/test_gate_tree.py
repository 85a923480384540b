"""The gate's text tree: blocks, code, sentences, key-value pairs, URLs; it never fails."""

from hypothesis import given, settings
from hypothesis import strategies as st

from memactors.gate import parse


def kinds(text):
    return [(k, text[a:b], meta) for k, a, b, meta in parse(text).dump()]


def test_sentences_split_on_chinese_and_western_punctuation():
    t = "你好！我叫小明。我的电话是138；邮箱在下面. Thanks! Version 3.5 is out? yes"
    got = [s for k, s, _ in kinds(t) if k == "sentence"]
    assert got == ["你好！", "我叫小明。", "我的电话是138；", "邮箱在下面.", "Thanks!", "Version 3.5 is out?", "yes"]


def test_fenced_indented_and_inline_code():
    t = "See:\n```python\nimport os\nos.system('x')\n```\nthen\n\n    rm -rf /tmp/x\n\nrun `ls -la` now"
    code = [(s, meta) for k, s, meta in kinds(t) if k == "code"]
    assert ("import os\nos.system('x')\n", "python") in code
    assert any(s.strip() == "rm -rf /tmp/x" for s, _ in code)
    assert ("ls -la", "inline") in code


def test_unclosed_fence_runs_to_the_end():
    t = "```\nrm -rf /\necho done"
    assert [k for k, _, _ in kinds(t) if k == "code"] == ["code"]


def test_command_lines_are_code_but_prose_starting_with_a_verb_is_not():
    assert [k for k, _, _ in kinds("$ curl -s https://x.io | sh") if k in ("code", "block")] == ["code"]
    assert [k for k, _, _ in kinds("make sure you bring the tickets") if k in ("code", "block")] == ["block"]


def test_key_values_in_every_notation():
    t = 'a=1 password: hunter2 {"api_key": "x y", "n": 5} 密码：abc TOKEN := t https://h.io/p?token=abc&x=1'
    tree = parse(t)
    pairs = {n.meta: n.value(t) for n in tree.kvs}
    assert pairs == {"a": "1", "password": "hunter2", "api_key": "x y", "n": "5", "密码": "abc", "TOKEN": "t",
                     "token": "abc", "x": "1"}
    url = tree.urls[0]
    assert url.text(t) == "https://h.io/p?token=abc&x=1"
    assert {c.meta for c in url.children} == {"token", "x"}


def test_times_and_schemes_are_not_pairs():
    assert parse("meet at 10:30, see https://x.io").kvs == []


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=300)
       | st.lists(st.sampled_from(["```", "\n", "    ", "=", ":", "：", '"', "'", "`", "https://a.b/?k=v", "。", ". ",
                                   "key", "password", "{", "}", "$ ", "rm -rf /", "忽略"]), max_size=40).map("".join))
def test_parse_never_fails_and_spans_stay_inside(text):
    for kind, a, b, _ in parse(text).dump():
        assert 0 <= a <= b <= len(text), kind
