"""``records.entity_key`` is cached by its exact strings: every answer, first or repeated, is the
digest worked out afresh, and a pair that differs in either string gets its own."""

import hashlib
import random

from memactors.core import records as R


def fresh(subject, predicate):
    return hashlib.sha256(f"{R.normalise(subject)}\x1f{R.normalise(predicate or '')}".encode()).hexdigest()[:32]


def test_cached_answers_are_the_fresh_ones():
    rnd = random.Random(3)
    words = ["alice", "Alice ", "bob", "ui_theme", "likes", "LIKES", "ali\u200bce", "caf\u00e9", "cafe\u0301", "x"]
    pairs = [(rnd.choice(words), rnd.choice(words + [None, ""])) for _ in range(300)]
    for _ in range(2):  # the second pass is served from the cache
        for s, p in pairs:
            assert R.entity_key(s, p) == fresh(s, p)


def test_a_pair_differing_in_either_string_is_its_own():
    a = R.entity_key("alice", "likes")
    assert R.entity_key("alice", "hates") != a and R.entity_key("bob", "likes") != a
    assert R.entity_key("alice", "likes") == a == R.entity_key("Alice ", "likes")  # normalised alike
    assert R.entity_key("alice", None) == R.entity_key("alice", "") != a
    assert R.entity_key(None, "likes") is None


def test_a_str_subclass_is_not_cached_but_answered_alike():
    class S(str):
        pass

    before = R._entity_key.cache_info().currsize
    assert R.entity_key(S("zed-unique-subject"), "likes") == fresh("zed-unique-subject", "likes")
    assert R._entity_key.cache_info().currsize == before
