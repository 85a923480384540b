"""Any str a user can send goes through the text pipeline without a raw error (pure: no Ray):
the embedder, the gate, the tokenizer, normalise and content_hash. NUL and other control
characters, zero-width and bidi marks, lone surrogates, 1 MB of text."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memactors.core import records as R
from memactors.core import scoring as S
from memactors.core.errors import InvalidRecord
from memactors.embed import HashEmbedder
from memactors.gate import Gate
from memactors.gate.policy import SOURCE_KINDS

ANY_CHAR = st.characters(categories=("L", "M", "N", "P", "S", "Z", "Cc", "Cf", "Co", "Cs"))
NO_SURROGATE = st.characters(categories=("L", "M", "N", "P", "S", "Z", "Cc", "Cf", "Co"))
# Characters that steer the scanner and the embedder: separators, code fences, triggers.
TRICKY = st.sampled_from(["\x00", "\x01", "\u200b", "\u202e", "\ufeff", "```", "\n", "=", "eval(", "13800138000",
                          "sk-", "eyJ", "-----BEGIN ", "ignore previous instructions", "我喜欢", "İ", "ς", "😀", "\ud800"])
TEXT = st.lists(st.one_of(st.text(alphabet=ANY_CHAR, max_size=20), TRICKY), max_size=12).map("".join)
PINNED = os.path.join(os.path.dirname(__file__), "fixtures", "hash_embedder_pinned.json")
GATE = Gate()


def test_embedder_vectors_are_those_of_the_separator_version():
    """Vectors computed with the code before document boundaries came from lengths."""
    with open(PINNED) as f:
        pinned = json.load(f)
    for dim, vecs in pinned["vectors"].items():
        got = HashEmbedder(int(dim)).embed(pinned["texts"])
        assert np.array_equal(got, np.asarray(vecs, dtype=np.float32)), dim


def test_nul_inside_a_text_does_not_shift_documents():
    e = HashEmbedder(32)
    v = e.embed(["a\x00b tea", "green tea", "\x00", "x\x00\x00y"])
    assert v.shape == (4, 32)
    assert np.array_equal(v[1], e.embed(["green tea"])[0])
    assert np.array_equal(v[0], e.embed(["a b tea"])[0])  # NUL is a non-word character like a space
    assert not v[2].any()


def test_embedder_refuses_non_str_typed():
    for bad in (None, "abc", [b"x"], [1], ["a", None]):
        with pytest.raises(InvalidRecord):
            HashEmbedder(8).embed(bad)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(alphabet=NO_SURROGATE, max_size=40) | TRICKY.filter(lambda t: t != "\ud800"), max_size=8),
       st.sampled_from([8, 64, 384]))
def test_embedder_shape_and_unit_norm_for_any_batch(texts, dim):
    e = HashEmbedder(dim)
    v = e.embed(texts)
    assert v.shape == (len(texts), dim) and v.dtype == np.float32 and np.isfinite(v).all()
    norms = np.linalg.norm(v, axis=1)
    assert np.all((np.abs(norms - 1) < 1e-5) | (norms == 0))
    # Every document is embedded as if alone: nothing leaks across boundaries.
    for i, t in enumerate(texts):
        assert np.array_equal(v[i], e.embed([t])[0])


@settings(max_examples=100, deadline=None)
@given(st.lists(TEXT, min_size=1, max_size=5))
def test_embedder_takes_lone_surrogates_too(texts):
    v = HashEmbedder(16).embed(texts)
    assert v.shape == (len(texts), 16) and np.isfinite(v).all()


@settings(max_examples=300, deadline=None)
@given(TEXT, st.sampled_from(SOURCE_KINDS))
def test_gate_scans_any_str(text, source):
    rep = GATE.scan(text, source)
    assert rep.decision in {"accepted", "redacted", "working_only", "pending", "blocked"}
    assert (rep.text is None) == (rep.decision == "blocked")
    for h in rep.hits:
        assert 0 <= h.start <= h.end <= len(text)
    assert isinstance(GATE.redact_all(text), str)


def test_gate_refuses_non_str_and_unknown_source_typed():
    for bad in (None, b"x", 5, ["x"]):
        with pytest.raises(InvalidRecord):
            GATE.scan(bad)
        with pytest.raises(InvalidRecord):
            GATE.redact_all(bad)
    for bad in ("rumour", ["web"], None):
        with pytest.raises(InvalidRecord, match="unknown source kind") as e:
            GATE.scan("x", bad)
        assert "rumour" not in str(e.value)


@settings(max_examples=300, deadline=None)
@given(TEXT)
def test_tokenize_normalise_and_hash_take_any_str(text):
    toks = S.tokenize(text)
    assert all(isinstance(t, str) and t for t in toks)
    assert isinstance(R.normalise(text), str)
    assert len(R.content_hash(text)) == 64


def test_content_hash_unchanged_for_ordinary_text():
    import hashlib

    for t in ("Alice likes green tea", "我喜欢喝绿茶", "a\x00b", "\u202eevil\u200b"):
        assert R.content_hash(t) == hashlib.sha256(R.normalise(t).encode("utf-8")).hexdigest()


@pytest.mark.parametrize("unit", ["a", "\x00", "\u200b", "我", "key=", "```\neval(", "13800138000 ", "\u202e"])
def test_one_megabyte_goes_through(unit):
    text = unit * (1_000_000 // len(unit))
    with pytest.raises(InvalidRecord, match="more than the 32000 allowed"):
        R.write_request({"scope": "/org/a/", "text": text, "actor": "a"})
    # The stages below the door take it anyway (a query or a tool result may be long).
    GATE.scan(text, "tool")
    S.tokenize(text)
    R.content_hash(text)
    assert HashEmbedder(64).embed([text, "tea"]).shape == (2, 64)
