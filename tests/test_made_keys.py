"""The idempotency keys a runtime makes itself are never screened again by the owners: their
shape (consonants and a short number) can hold no personal data, no token and no word a rule
reads as context. Tried over the whole shape, and against keys that only look alike."""

from hypothesis import given, settings
from hypothesis import strategies as st

from memactors.core.idempotency import is_made_key, made_key_of, made_key_prefix
from memactors.gate.identifiers import identifier_kind

CONSONANTS = "bcdfghjklmnpqrstvwxz"


@settings(max_examples=3000, deadline=None)
@given(st.text(CONSONANTS, min_size=16, max_size=16), st.integers(0, 9_999_999))
def test_no_key_of_the_made_shape_looks_like_data(letters, n):
    key = f"m{letters}-{n}"
    assert is_made_key(key) and identifier_kind(key) is None


def test_made_keys_are_fresh_and_of_their_shape():
    keys = {f"{made_key_prefix()}-{i}" for i in range(1000)}
    assert len(keys) == 1000 and all(is_made_key(k) for k in keys)


def test_keys_that_only_look_alike_are_screened():
    for key in ("motpcode12345678-1", "m13812345678bcdfg-1", "mbcdfghjklmnpqrst-13812345678", "xoxb-1234-5678",
                "Mbcdfghjklmnpqrst-1", "mbcdfghjklmnpqrst-12345678", "mbcdfghjklmnpqrst1"):
        assert not is_made_key(key)


def test_the_runtime_passes_a_made_key_without_a_scan():
    from memactors.gate.identifiers import Identifiers

    key = f"{made_key_prefix()}-3"
    for ids in (Identifiers(), Identifiers(b"k" * 32, pseudonymise=True)):
        before = identifier_kind.cache_info()
        assert ids.id(key, "idempotency_key") == key
        after = identifier_kind.cache_info()
        assert (after.hits, after.misses) == (before.hits, before.misses)  # never scanned, nor cached
        assert ids.writes([{"scope": "/org/a/", "text": "x", "actor": "a", "idempotency_key": key}])[0][0][
            "idempotency_key"] == key
    # a key that only looks alike is still screened, and refused when it looks like data
    import pytest

    from memactors.core.errors import InvalidIdentifier
    with pytest.raises(InvalidIdentifier):
        Identifiers().id("sk-proj-" + "A1b2C3d4E5f6G7h8I9j0" * 2, "idempotency_key")


def test_the_runtimes_own_keys_are_made_keys():
    # the owners skip screening a made key (core.idempotency): a forget's or a grant's own key
    # must be one, or each such call pays a screen of a random string on its owner
    from memactors.runtime.facade import Runtime

    keys = {Runtime._new_key() for _ in range(1000)}
    assert len(keys) == 1000 and all(is_made_key(k) and identifier_kind(k) is None for k in keys)


def test_a_named_made_key_is_the_same_for_the_same_name():
    # a session item's promotion, release or outcome: a retry must find the key of the first try
    a, b = made_key_of("promote-0123abcd"), made_key_of("promote-0123abce")
    assert a == made_key_of("promote-0123abcd") and a != b and is_made_key(a) and is_made_key(b)
    assert made_key_of("\ud800") != made_key_of("")  # any str, a lone surrogate too
