"""Bad input never crashes and is never silently accepted (pure: no Ray).

Every call either works or raises a MemactorsError subclass, and the message never holds the
text it was given (checked with a marker planted in every generated string)."""

from __future__ import annotations

import math
from dataclasses import fields
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memactors.core import records as R
from memactors.core import scoring as S
from memactors.core import validate as V
from memactors.core.config import ALLOWED, Config, EmbedderConfig, RecallConfig, RuntimeConfig, check_value
from memactors.core.errors import (
    ConfigError,
    InvalidIdentifier,
    InvalidRecord,
    InvalidScope,
    MemactorsError,
    ValidationError,
)
from memactors.embed import embedder_names

MARK = "QZXMARK"  # planted in generated strings: no message may contain it
SURROGATE = st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF)
# Any code point: letters, marks, digits, controls (NUL included), format (zero-width, bidi),
# separators, private use, lone surrogates.
ANY_CHAR = st.characters(categories=("L", "M", "N", "P", "S", "Z", "Cc", "Cf", "Co", "Cs"))
ANY_TEXT = st.text(alphabet=ANY_CHAR, max_size=60)
MARKED_TEXT = st.builds(lambda a, b: a + MARK + b, ANY_TEXT, ANY_TEXT)
NUMBERS = st.one_of(st.integers(), st.integers(min_value=-(2**3000), max_value=2**3000),
                    st.floats(allow_nan=True, allow_infinity=True), st.fractions(),
                    st.sampled_from([np.float32(0.5), np.float64("nan"), np.int64(3), np.bool_(True)]))
SCALARS = st.one_of(st.none(), st.booleans(), NUMBERS, MARKED_TEXT, st.binary(max_size=20).map(lambda b: b + MARK.encode()),
                    st.builds(object))
ANYTHING = st.recursive(SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=5), st.tuples(inner, inner),
                                                          st.dictionaries(MARKED_TEXT, inner, max_size=3)), max_leaves=8)


def works_or_typed(fn, *args, **kw):
    """Call; return (True, result) or (False, error) for a MemactorsError whose message does not
    echo a planted marker. Any other exception fails the test."""
    try:
        return True, fn(*args, **kw)
    except MemactorsError as exc:
        assert MARK not in str(exc), str(exc)
        return False, exc


# --- checkers: inputs that must pass and must not ------------------------------------------


@pytest.mark.parametrize("ok", ["hello", "a\x00b", "tab\tnew\nline\r", "zero\u200bwidth", "\u202eRTL\u202c x",
                                "我喜欢绿茶", "emoji 😀", "x" * 100])
def test_text_allows_controls_zero_width_and_rtl_inside(ok):
    assert V.text(ok, "text", 100) == ok


@pytest.mark.parametrize("bad, why", [
    (None, "None"), (b"abc", "bytes"), (["x"], "a list"), (5, "an int"), (True, "a bool"),
    ("", "empty or blank"), ("   \n\t", "empty or blank"), ("\x00\x00", "empty or blank"),
    ("\u200b\u202e\ufeff", "empty or blank"), ("x" * 101, "101 characters"),
    ("ab\ud800cd", "position 3 of 5"), ("\udfff", "position 1 of 1"), ("😀\udc00", "position 2"),
])
def test_text_refuses_and_describes(bad, why):
    with pytest.raises(InvalidRecord, match="text") as e:
        V.text(bad, "text", 100)
    assert why in str(e.value)


def test_text_options_and_error_class():
    assert V.text(None, "f", 5, allow_none=True) is None
    assert V.text("", "f", 5, allow_blank=True) == ""
    with pytest.raises(ConfigError):
        V.text(3, "f", 5, error=ConfigError)


@pytest.mark.parametrize("ok, want", [(0, 0.0), (1, 1.0), (0.5, 0.5), (np.float32(0.25), 0.25), (np.int64(1), 1.0),
                                      (Fraction(1, 4), 0.25)])
def test_number_takes_real_numbers(ok, want):
    assert V.number(ok, "x", 0, 1) == want


@pytest.mark.parametrize("bad, why", [
    (True, "a bool"), (np.bool_(False), "bool"), ("0.3", "a str of 3 characters"), (b"1", "bytes"), (None, "None"),
    ([0.5], "a list"), (float("nan"), "NaN"), (float("inf"), "infinity"), (-float("inf"), "-infinity"),
    (-0.1, "-0.1"), (1.5, "1.5"), (1.0000001, "not 1.0000001"), (10**400, "magnitude 1e400"), (13800138000, "magnitude 1e10"), (-2.5e7, "magnitude 1e7"), (Fraction(10**400, 3), "too large"), (object(), "an object"),
])
def test_number_refuses_and_describes(bad, why):
    with pytest.raises(InvalidRecord, match="x must be a number from 0 to 1") as e:
        V.number(bad, "x", 0, 1)
    assert why in str(e.value)


def test_numbers_in_text_fields_are_not_shown():
    with pytest.raises(InvalidRecord) as e:
        V.text(13800138000, "text", 100)
    assert "138" not in str(e.value) and "an int" in str(e.value)


def test_number_bounds():
    assert V.number(None, "x", 0, 1, allow_none=True) is None
    with pytest.raises(InvalidRecord, match="> 0 and <= 10"):
        V.number(0, "x", 0, 10, lo_open=True)
    assert V.number(1e-9, "x", 0, 10, lo_open=True) == 1e-9
    assert V.number(-5, "x", None, 10) == -5.0
    assert V.number(1e300, "x", 0, None) == 1e300


@pytest.mark.parametrize("bad", [True, False, 5.0, "5", None, 0, 1001, -1, 10**30, float("nan"), [5], np.bool_(True)])
def test_integer_refuses(bad):
    with pytest.raises(InvalidRecord, match="top_k must be an integer from 1 to 1,000"):
        V.integer(bad, "top_k", 1, 1000)


def test_integer_takes_ints_and_numpy_ints():
    assert V.integer(5, "k", 1, 10) == 5 and type(V.integer(np.int64(5), "k", 1, 10)) is int
    assert V.integer(None, "k", 1, 10, allow_none=True) is None


@pytest.mark.parametrize("bad", [["web"], {"web": 1}, {"web"}, None, 1, True, b"web", "Web", "web ", object()])
def test_choice_refuses_any_value_even_unhashable(bad):
    with pytest.raises(InvalidRecord, match="source must be one of"):
        V.choice(bad, "source", ("user_stated", "web"))


def test_choice_keeps_types_apart():
    assert V.choice("web", "s", ("user_stated", "web")) == "web"
    assert V.choice(1, "n", (1, 2)) == 1
    with pytest.raises(InvalidRecord):
        V.choice(True, "n", (1, 2))  # True == 1 in Python, not here


def test_str_list():
    assert V.str_list(("a", "b"), "ids") == ["a", "b"]
    for bad in ("ab", b"ab", None, {"a": 1}, {"a"}, 5, ["a", 5], ["a", None]):
        with pytest.raises(InvalidRecord, match="ids"):
            V.str_list(bad, "ids")
    with pytest.raises(InvalidRecord, match="1 to 2 items, not 3"):
        V.str_list(["a", "b", "c"], "ids", min_len=1, max_len=2)
    with pytest.raises(InvalidRecord, match=r"ids\[1\] has a lone surrogate"):
        V.str_list(["a", "b\ud800"], "ids", max_chars=10)


@pytest.mark.parametrize("bad", [float("nan"), "0.3", b"abc", True, -0.01, 1.01, None, [0.3], float("inf")])
def test_threshold_refuses(bad):
    with pytest.raises(InvalidRecord, match="threshold must be a number from 0 to 1"):
        V.threshold(bad)


def test_threshold_takes_unit_interval():
    assert V.threshold(0) == 0.0 and V.threshold(0.35) == 0.35 and V.threshold(1) == 1.0
    assert V.threshold(None, allow_none=True) is None


@pytest.mark.parametrize("bad", [5, None, b"abc", [1e308] * 4, [2**1100] * 4, [None] * 4, ["a"] * 4, ["0.4"] * 4,
                                 {"vector": "x"}, {"vector": None}, [float("nan")] * 4, {1: 2}, [[1]] * 4,
                                 "1e400/1/1/1", "nan/1/1/1", object(), "a/b/c/d", [True, 1, 1, 1], [0, 0, 0, 0],
                                 [-1, 1, 1, 1], [1, 1, 1], "x" * 1000, np.zeros((2, 2)), {"vector": 2**2000}])
def test_weights_refuse_everything_malformed_with_invalid_record(bad):
    with pytest.raises(InvalidRecord, match="weight"):
        V.weights(bad)
    with pytest.raises(InvalidRecord):  # Weights.parse itself: no TypeError/OverflowError escapes
        S.Weights.parse(bad)


def test_weights_valid_forms_unchanged():
    assert V.weights([0.4, 0.3, 0.2, 0.1]) == S.DEFAULT_WEIGHTS
    assert V.weights("2/1/1/0").normalised().as_tuple() == pytest.approx((0.5, 0.25, 0.25, 0.0))
    assert V.weights({"vector": 1}).keyword == 0.3
    assert V.weights(np.array([1.0, 1.0, 1.0, 1.0])).normalised().vector == 0.25
    assert V.weights((1e308, 0, 0, 0)).normalised().vector == 1.0
    with pytest.raises(ConfigError, match=r"\[recall\]\.weights"):
        V.weights(5, what="[recall].weights", error=ConfigError)


# --- properties: any value into any checker --------------------------------------------------


@settings(max_examples=300, deadline=None)
@given(ANYTHING)
def test_every_checker_works_or_raises_typed_without_echo(value):
    for fn in (lambda v: V.text(v, "t", 50), lambda v: V.number(v, "n", -5, 5), lambda v: V.integer(v, "i", 0, 9),
               lambda v: V.choice(v, "c", ("a", "b")), lambda v: V.str_list(v, "l", max_len=3, max_chars=30),
               V.threshold, V.weights, S.Weights.parse):
        ok, out = works_or_typed(fn, value)
        if ok and fn is V.threshold:
            assert isinstance(out, float) and 0.0 <= out <= 1.0
        if ok and fn in (V.weights, S.Weights.parse):
            assert math.isclose(sum(out.normalised().as_tuple()), 1.0)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=ANY_CHAR, max_size=80))
def test_text_decides_any_str_and_names_the_surrogate_position(s):
    ok, out = works_or_typed(V.text, s, "text", 60)
    has_surrogate = any(0xD800 <= ord(c) <= 0xDFFF for c in s)
    if ok:
        assert out == s and not has_surrogate and len(s) <= 60
        out.encode("utf-8")  # what passes can be stored as UTF-8
    elif has_surrogate and len(s) <= 60:
        first = next(i for i, c in enumerate(s) if 0xD800 <= ord(c) <= 0xDFFF)
        assert f"position {first + 1} of {len(s)}" in str(out)


@settings(max_examples=300, deadline=None)
@given(st.floats(allow_nan=True, allow_infinity=True) | st.integers(min_value=-(2**2000), max_value=2**2000))
def test_number_is_exactly_finite_and_in_range(x):
    ok, out = works_or_typed(V.number, x, "n", -1, 1)
    try:
        expected = math.isfinite(float(x)) and -1 <= x <= 1
    except OverflowError:
        expected = False
    assert ok == expected


# --- WriteRequest and RecallRequest ----------------------------------------------------------

BASE_WRITE = dict(scope="/org/a/user/u/", text="hello", actor="agent")


@pytest.mark.parametrize("kw, err", [
    ({"text": "a\ud800b"}, InvalidRecord), ({"text": b"abc"}, InvalidRecord), ({"text": ["x"]}, InvalidRecord),
    ({"text": "\u200b\x00 "}, InvalidRecord), ({"confidence": True}, InvalidRecord),
    ({"confidence": float("nan")}, InvalidRecord), ({"confidence": "0.3"}, InvalidRecord),
    ({"importance": True}, InvalidRecord), ({"importance": float("inf")}, InvalidRecord),
    ({"ttl_days": True}, InvalidRecord), ({"ttl_days": 0}, InvalidRecord), ({"soft_ttl_days": 10**400}, InvalidRecord),
    ({"source": ["web"]}, InvalidRecord), ({"source": {}}, InvalidRecord), ({"sensitivity": ["x"]}, InvalidRecord),
    ({"pool": {"a": 1}}, InvalidRecord), ({"subject": "s\ud800", "predicate": "p"}, InvalidRecord),
    ({"subject": "s", "predicate": 5}, InvalidRecord), ({"object": "x" * 513}, InvalidRecord),
    ({"source_id": ""}, InvalidRecord), ({"context": b"x"}, InvalidRecord), ({"context": "c\udc00"}, InvalidRecord),
    ({"scope": ["x"]}, InvalidScope), ({"scope": "/org/a/user/u\x00/"}, InvalidIdentifier),
    ({"actor": None}, InvalidIdentifier), ({"idempotency_key": 5}, InvalidIdentifier),
    ({"text": "x" * 1_000_000}, InvalidRecord),
])
def test_bad_writes_get_the_typed_error(kw, err):
    with pytest.raises(err):
        R.write_request({**BASE_WRITE, **kw})


@pytest.mark.parametrize("text", ["a\x00b", "ctl \x01\x1b[31m", "zero\u200bwidth", "\u202eevil\u202c", "x" * 32_000,
                                  "混合 text \u200f"])
def test_user_text_that_works(text):
    req = R.write_request({**BASE_WRITE, "text": text, "context": "\x00"})
    assert req.text == text
    from memactors.engine.prepare import prepare
    from memactors.gate import Gate

    out = prepare(Gate(), {"text": [text], "source": [req.source], "context": [req.context]})
    rec = R.build_record(req, out["text"][0], R.new_memory_id(), 1, content_hash_=out["content_hash"][0],
                         search_text=out["search_text"][0])
    assert len(rec["content_hash"]) == 64
    R.fingerprint(req, b"k" * 32)  # orjson takes it


def test_valid_writes_keep_their_values():
    req = R.write_request({**BASE_WRITE, "ttl_days": 7, "importance": 1, "source": "web"})
    assert req.ttl_days == 7 and type(req.ttl_days) is int  # the idempotency fingerprint is unchanged
    assert req.importance == 1 and req.confidence == 0.3 and type(req.confidence) is float
    req = R.write_request({**BASE_WRITE, "importance": np.float32(0.5), "ttl_days": np.int64(3)})
    assert type(req.importance) is float and type(req.ttl_days) is float  # orjson/Arrow-ready


@pytest.mark.parametrize("item", [None, [1], "text", 5, b"x", {"scope": "/org/a/", "text": "x", "actor": "a", 1: 2},
                                  {"scope": "/org/a/", "text": "x", "actor": "a", MARK: 1}, {"text": "x"}])
def test_write_request_refuses_non_dicts_and_odd_keys(item):
    ok, err = works_or_typed(R.write_request, item)
    assert not ok and isinstance(err, InvalidRecord)


def test_unknown_field_suggests_a_known_one():
    with pytest.raises(InvalidRecord, match="did you mean 'subject'"):
        R.write_request({**BASE_WRITE, "subjet": "x"})


def test_write_requests_isolates_bad_items():
    out = R.write_requests([BASE_WRITE, {**BASE_WRITE, "text": "bad\ud800"}, None, {**BASE_WRITE, "text": "a\x00b"}])
    assert isinstance(out[0], R.WriteRequest) and isinstance(out[3], R.WriteRequest)
    assert isinstance(out[1], InvalidRecord) and str(out[1]).startswith("write at position 1: ")
    assert isinstance(out[2], InvalidRecord) and "position 2" in str(out[2])
    for bad in (None, "abc", {"a": 1}, 5, (x for x in [])):
        with pytest.raises(InvalidRecord, match="write_many takes a list"):
            R.write_requests(bad)
    with pytest.raises(InvalidRecord, match="at most 2"):
        R.write_requests([BASE_WRITE] * 3, max_items=2)


WRITE_VALUES = {
    "scope": st.one_of(st.just("/org/a/user/u/"), ANYTHING), "text": st.one_of(MARKED_TEXT, ANYTHING),
    "actor": st.one_of(st.just("agent"), ANYTHING), "subject": ANYTHING, "predicate": ANYTHING, "object": ANYTHING,
    "source": st.one_of(st.sampled_from(sorted(R.SOURCE_CONFIDENCE)), ANYTHING), "source_id": ANYTHING,
    "confidence": ANYTHING, "sensitivity": st.one_of(st.sampled_from(R.SENSITIVITIES), ANYTHING), "ttl_days": ANYTHING,
    "soft_ttl_days": ANYTHING, "importance": ANYTHING, "pool": st.one_of(st.sampled_from(R.POOLS), ANYTHING),
    "idempotency_key": ANYTHING, "context": ANYTHING,
}


@settings(max_examples=400, deadline=None)
@given(st.fixed_dictionaries({}, optional=WRITE_VALUES))
def test_any_write_validates_or_is_refused_typed(overrides):
    ok, req = works_or_typed(R.write_request, {**BASE_WRITE, **overrides})
    if not ok:
        assert isinstance(req, ValidationError)
        return
    assert isinstance(req.text, str) and req.text.encode("utf-8")
    assert type(req.confidence) is float and 0.0 <= req.confidence <= 1.0
    assert type(req.importance) in (int, float) and 0.0 <= req.importance <= 1.0
    for name in ("ttl_days", "soft_ttl_days"):
        v = getattr(req, name)
        assert v is None or (type(v) in (int, float) and 0 < v <= R.MAX_TTL_DAYS)
    assert req.source in R.SOURCE_CONFIDENCE and req.pool in R.POOLS and req.sensitivity in R.SENSITIVITIES
    R.fingerprint(req, b"k" * 32)
    R.build_record(req, req.text, R.new_memory_id(), 1)


BASE_RECALL = dict(query="what tea?", actor="a", task_id="t", allowed_scopes=["/org/a/"], purpose="p")


@pytest.mark.parametrize("kw, err", [
    ({"query": "q\ud800"}, InvalidRecord), ({"query": b"q"}, InvalidRecord), ({"query": "\u200b"}, InvalidRecord),
    ({"top_k": True}, InvalidRecord), ({"top_k": 5.0}, InvalidRecord), ({"top_k": 0}, InvalidRecord),
    ({"token_budget": True}, InvalidRecord), ({"token_budget": 10**30}, InvalidRecord),
    ({"allowed_scopes": 5}, InvalidRecord), ({"allowed_scopes": "/org/a/"}, InvalidRecord),
    ({"allowed_scopes": {"/org/a/": 1}}, InvalidRecord), ({"allowed_scopes": []}, InvalidRecord),
    ({"allowed_scopes": None}, InvalidRecord), ({"allowed_scopes": ["/org/a/"] * 1001}, InvalidRecord),
    ({"allowed_scopes": [None]}, InvalidScope), ({"allowed_scopes": [["x"]]}, InvalidScope),
    ({"purpose": 1}, InvalidRecord),  # a name or text: not text at all
])
def test_bad_recalls_get_the_typed_error(kw, err):
    with pytest.raises(err):
        R.RecallRequest(**{**BASE_RECALL, **kw}).validate()


def test_valid_recalls_unchanged():
    from memactors.core.scopes import parse_scope

    req = R.RecallRequest(**{**BASE_RECALL, "allowed_scopes": ("/org/a", parse_scope("/global/"))}).validate()
    assert req.allowed_scopes == ["/org/a/", "/global/"] and req.top_k == 5 and req.token_budget is None
    assert R.RecallRequest(**{**BASE_RECALL, "query": "a\x00b", "top_k": np.int64(3)}).validate().top_k == 3


@settings(max_examples=300, deadline=None)
@given(st.fixed_dictionaries({}, optional={"query": st.one_of(MARKED_TEXT, ANYTHING), "actor": ANYTHING,
                                           "task_id": ANYTHING, "purpose": ANYTHING, "allowed_scopes": ANYTHING,
                                           "top_k": ANYTHING, "token_budget": ANYTHING}))
def test_any_recall_validates_or_is_refused_typed(overrides):
    ok, req = works_or_typed(lambda: R.RecallRequest(**{**BASE_RECALL, **overrides}).validate())
    if ok:
        assert type(req.top_k) is int and 1 <= req.top_k <= R.MAX_TOP_K
        assert req.token_budget is None or type(req.token_budget) is int
        assert req.allowed_scopes and all(isinstance(s, str) for s in req.allowed_scopes)


# --- Config ----------------------------------------------------------------------------------


def test_allowed_table_covers_every_key_and_every_default_is_allowed():
    for section, cls in (("runtime", RuntimeConfig), ("embedder", EmbedderConfig), ("recall", RecallConfig)):
        assert set(ALLOWED[section]) == {f.name for f in fields(cls)}, section
        default = cls()
        for key in ALLOWED[section]:
            assert check_value(section, key, getattr(default, key)) == getattr(default, key), (section, key)


@pytest.mark.parametrize("data, match", [
    ({"runtime": [1]}, r"\[runtime\] must be a table"), ({"recall": "x"}, r"\[recall\] must be a table"),
    ({"runtime": {"call_timeout_s": -1}}, r"call_timeout_s must be a number > 0 and <= 604,800"),
    ({"runtime": {"call_timeout_s": 0}}, r"call_timeout_s must be a number > 0"),
    ({"runtime": {"write_batch_max": 0}}, r"write_batch_max must be an integer from 1 to 1,000,000"),
    ({"runtime": {"num_owners": -1}}, r"num_owners must be an integer from 0"),
    ({"runtime": {"num_owners": True}}, r"num_owners must be an integer.*a bool"),
    ({"runtime": {"num_owners": 2.0}}, r"num_owners must be an integer.*a float"),
    ({"runtime": {"idempotency_window_s": -1.0}}, r"idempotency_window_s must be a number from 0"),
    ({"runtime": {"l2_flush_interval_s": 0}}, r"l2_flush_interval_s must be a number > 0"),
    ({"runtime": {"session_ttl_s": 2**2000}}, r"session_ttl_s .* not a number of magnitude 1e602"),
    ({"runtime": {"owner_max_restarts": -2}}, r"owner_max_restarts must be an integer from -1"),
    ({"runtime": {"key_dir": 5}}, r"key_dir must be a string"), ({"runtime": {"key_dir": "/a\x00b"}}, r"NUL"),
    ({"embedder": {"dim": 4}}, r"dim must be an integer from 8 to 4,096"), ({"embedder": {"dim": 10**9}}, r"dim"),
    ({"embedder": {"name": ""}}, r"name is empty"), ({"embedder": {"name": 5}}, r"name must be a string"),
    ({"recall": {"threshold": float("nan")}}, r"threshold must be a number from 0 to 1, not NaN"),
    ({"recall": {"threshold": "0.3"}}, r"threshold .* not a str of 3 characters"),
    ({"recall": {"threshold": True}}, r"threshold .* not a bool"), ({"recall": {"threshold": 1.5}}, r"threshold"),
    ({"recall": {"weights": 5}}, r"\[recall\]\.weights"), ({"recall": {"weights": ["a"] * 4}}, r"weights"),
    ({"recall": {"weights": [1e308] * 4}}, r"sum must be a finite number"),
    ({"recall": {"default_top_k": 0}}, r"default_top_k"), ({"recall": {"compiled_path": 1}}, r"true or false"),
    ({"recall": {"min_score": -2.0}}, r"min_score must be a number from -1 to 1"),
    ({"runtime": {"num_ownerz": 2}}, r"unknown key \[runtime\]\.\(a str of 10 characters\) \(did you mean 'num_owners'\?\)"),
    ({"runtime": {1: 2}}, r"unknown key \[runtime\]\.\(an int"), ({"storage": {}}, r"unknown config section"),
    ({"grants": {"a": 1}}, r"grants must be a list"), ({"grants": [{"actor": 1, "scope": "/global/"}]}, r"grants\[0\]\.actor"),
    ({"grants": [{"actor": "a", "scope": "/nope/"}]}, r"scope"), ({"grants": [{"actor": "a"}]}, r"grants\[0\]"),
    ({"grants": [{"actor": "a", "scope": "/global/", "read": "no"}]}, r"grants\[0\]\.read must be true or false"),
    ({"grants": [{"actor": "a", "scope": "/global/", "admin": True}]}, r"unknown key"),
    ({"grants": [{"actor": "a", "scope": "/org/x/"}, {"actor": "b", "scope": "/org/x/"},
                 {"actor": "a", "scope": "/org/x", "read": False}]}, r"grants\[2\] and grants\[0\] name the same"),
    ({"grants": [{"actor": "a", "scope": "/global/"}, {"actor": "a", "scope": "/global/", "clearance": "public"}]},
     r"list each binding once"),
    ({"gate": [1]}, r"\[gate\] must be a table"), ([1], r"a configuration is a table"), ("x", r"a configuration"),
])
def test_config_refuses_with_key_and_range(data, match):
    with pytest.raises(ConfigError, match=match):
        Config.from_dict(data)


def test_config_valid_values_and_embedder_registry():
    cfg = Config.from_dict({"runtime": {"call_timeout_s": 5, "num_owners": 3}, "recall": {"weights": (1, 1, 0, 0)},
                            "embedder": {"name": "all-minilm-l6-v2"}}, embedders=embedder_names())
    assert cfg.runtime.call_timeout_s == 5.0 and type(cfg.runtime.call_timeout_s) is float
    assert cfg.recall.weights == [1.0, 1.0, 0.0, 0.0]
    assert Config.from_dict(None) == Config() == Config.from_dict({"runtime": None})
    assert Config.from_dict({"recall": {"min_score": -1.0}}).recall.min_score == -1.0  # the harness's "no floor"
    same = [{"actor": "a", "scope": "/global/"}, {"actor": "a", "scope": "/global/", "clearance": "confidential"}]
    assert len(Config.from_dict({"grants": same}).grants) == 2  # a repeated binding that agrees is no conflict
    with pytest.raises(ConfigError, match="not a registered embedder.*known: .*hash-ngram-v1"):
        Config.from_dict({"embedder": {"name": "nope"}}, embedders=embedder_names())
    bad = Config()
    bad.runtime.write_batch_max = 0
    with pytest.raises(ConfigError, match="write_batch_max"):
        bad.checked()
    assert Config().checked(embedders=embedder_names()) == Config()


def test_embedder_names_load_no_model():
    import sys

    assert "hash-ngram-v1" in embedder_names()
    assert "sentence_transformers" not in sys.modules and "torch" not in sys.modules


CONFIG_KEYS = [(s, k) for s in ALLOWED for k in ALLOWED[s]]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(CONFIG_KEYS), ANYTHING), max_size=4),
       st.one_of(st.none(), st.sampled_from(["runtime", "recall", "embedder", "grants", "gate", "other"])),
       ANYTHING)
def test_any_config_loads_or_is_refused_typed(pairs, section, junk):
    data: dict = {}
    for (s, k), v in pairs:
        data.setdefault(s, {})[k] = v
    if section is not None:
        data[section] = junk  # a whole section replaced by anything
    ok, cfg = works_or_typed(Config.from_dict, data, embedders=embedder_names())
    if ok:
        assert cfg.checked(embedders=embedder_names()) == cfg  # what loads is inside every range


def test_hex_ids():
    mid = R.new_memory_id()
    assert V.hex_id(mid, "recall_id") == mid == R.check_memory_id(mid)
    for bad in (1, None, mid.upper(), mid[:-1], mid + "0", [mid], mid.encode(), "\u0660" * 32):
        with pytest.raises(InvalidRecord, match="must be 32 lowercase hex characters"):
            V.hex_id(bad, "recall_id")


def test_a_lone_surrogate_in_a_reason_or_a_lookup_is_refused_typed_and_spares_other_calls():
    """A reason or a lookup's fact with half a UTF-16 pair (model output through json.loads) is
    InvalidRecord before anything is sent; another agent's calls coalesced beside it on the same
    loop are answered as if it were not there (it once failed them with a raw TypeError, their
    writes stored anyway)."""
    import asyncio

    import memactors
    from memactors import ops
    from memactors.core.errors import InvalidRecord

    with memactors.connect("memory://") as rt:
        A, B = "/org/v/user/alice/", "/org/v/user/bob/"
        rt.grant("alice", A, write=True)
        rt.grant("bob", B, write=True)
        mb = rt.write(B, "Bob likes jazz", actor="bob").memory_id
        for call in (lambda: rt.forget(mb, actor="bob", reason="asked \ud800"),
                     lambda: rt.grant("carol", B, reason="ticket \ud800"),
                     lambda: rt.batch([ops.Lookup("bob", B, facts=[("x\ud800", "p")], purpose="answer")])):
            with pytest.raises(InvalidRecord):
                call()
        got = rt.batch([ops.Lookup("bob", B, facts=[("x\ud800", "p")], purpose="answer")], return_errors=True)
        assert isinstance(got[0], InvalidRecord)

        async def both():
            bob = rt.agent("bob", task_id="t", purpose="answer", scopes=[B])
            alice = rt.agent("alice", task_id="t", purpose="answer", scopes=[A])
            return await asyncio.gather(bob.aforget(mb, reason="x \ud800"), alice.aremember("Alice likes tea"),
                                        return_exceptions=True)

        bad, ok = asyncio.run(both())
        assert isinstance(bad, InvalidRecord) and ok.decision == "accepted"
        assert [h.memory_id for h in rt.recall("jazz", actor="bob", task_id="t", allowed_scopes=[B],
                                              purpose="answer").hits] == [mb]


def test_flag_takes_only_a_bool():
    assert V.flag(True, "f") is True and V.flag(False, "f") is False
    for bad in ("no", "", 1, 0, None, np.array([1, 0]), np.bool_(True), [True]):
        with pytest.raises(InvalidRecord, match="f is true or false, not"):
            V.flag(bad, "f")


def test_bad_batch_and_many_arguments_are_refused_typed_and_write_nothing():
    """A non-bool ``return_errors`` ("no" was taken as yes, a NumPy array raised NumPy's
    ValueError), a lookup's ``memory_ids`` that is not a list (a TypeError for the whole batch,
    no position) and a forget's array ``erase`` each get a typed error; nothing is written."""
    import asyncio

    import memactors
    from memactors import ops

    S = "/org/fl/user/alice/"
    with memactors.connect("memory://") as rt:
        rt.grant("a1", S, write=True)
        m = rt.write(S, "Alice likes tea", actor="a1").memory_id
        rt.flush()
        seq = rt.audit.head()["seq"]
        item = [dict(scope=S, text="Alice likes figs", actor="a1")]
        for bad in ("no", 1, np.array([1, 0]), None):
            for call in (lambda: rt.write_many(item, return_errors=bad),
                         lambda: rt.recall_many([dict(query="x", actor="a1", allowed_scopes=[S], task_id="t",
                                                      purpose="p")], return_errors=bad),
                         lambda: rt.batch([ops.Write(S, "Alice likes jam", "a1")], return_errors=bad),
                         lambda: asyncio.run(rt.awrite_many(item, return_errors=bad)),
                         lambda: asyncio.run(rt.arecall_many([], return_errors=bad)),
                         lambda: asyncio.run(rt.abatch([], return_errors=bad))):
                with pytest.raises(InvalidRecord, match="return_errors is true or false"):
                    call()
        with pytest.raises(InvalidRecord, match=r"op at position 1: memory_ids must be a list"):
            rt.batch([ops.Write(S, "Alice likes jam", "a1"), ops.Lookup("a1", S, memory_ids=5)])
        for erase in (np.array([1, 2]), "Fact", None):
            with pytest.raises(InvalidRecord, match="erase must be one of"):
                rt.batch([ops.Forget(m, "a1", "r", erase=erase)])
            with pytest.raises(InvalidRecord, match="erase must be one of"):
                rt.forget(m, actor="a1", reason="r", erase=erase)
        rt.flush()
        assert rt.audit.head()["seq"] == seq  # nothing written
        got = rt.batch([ops.Lookup("a1", S, memory_ids=5), ops.Lookup("a1", S, memory_ids=[m])], return_errors=True)
        assert isinstance(got[0], InvalidRecord) and "position 0" in str(got[0])
        assert [x.memory_id for x in got[1]] == [m]  # the others run


@pytest.mark.parametrize("actor", ["", "\ud800", "x" * 10_000_000, "a b", 5])
def test_an_agent_handle_refuses_a_bad_actor_when_it_is_made(actor):
    import memactors
    from memactors.core.errors import InvalidIdentifier

    with memactors.connect("memory://") as rt:
        with pytest.raises(InvalidIdentifier, match="actor is not valid"):
            rt.agent(actor, scopes=["/org/ag/user/alice/"])
        with pytest.raises(InvalidIdentifier, match="task_id is not valid"):
            rt.agent("a1", task_id="", scopes=["/org/ag/user/alice/"])
