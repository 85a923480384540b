"""A write's outcome does not depend on how the writes were sent: one long ``write_many``,
many short calls (``[runtime].write_batch_max``), or a scope loaded afresh from storage
between calls (a small ``hot_cache_max_memories``) decide every write alike: the same
decision, version and superseded memory for each. On the in-memory host.

Found by sending the same seeded calls under each configuration: in one long call a text
that said the opposite of an earlier one of the same call went unflagged (the batch's own
writes were taken in order, not by closeness), and in a scope held hot for long the rows of
memories since superseded took the places of the closest live ones."""

from __future__ import annotations

import random

import pytest

import memactors

WORDS = "quince harvest river stone blue green window seat flight friday vegetarian coffee tea market".split()
SUBJECTS, PREDICATES, OBJECTS = ["alice", "bob"], ["lives_in", "likes"], ["Paris", "Berlin", "tea", "coffee"]


def _calls(seed: int) -> tuple[list[str], list[list[dict]]]:
    r = random.Random(seed)
    scopes = [f"/org/inv{seed}/user/u{i}/" for i in range(2)]
    calls = []
    for n in (300, 40, 700, 5, 260):
        items = []
        for _ in range(n):
            sc = r.choice(scopes)
            if r.random() < 0.25:
                s, p, o = r.choice(SUBJECTS), r.choice(PREDICATES), r.choice(OBJECTS)
                items.append({"scope": sc, "actor": "a", "text": f"{s.title()} {p.replace('_', ' ')} {o}",
                              "subject": s, "predicate": p, "object": o,
                              "source": r.choice(["user_stated", "tool", "agent_inferred"])})
            else:
                neg = " not" if r.random() < 0.25 else ""
                words = " ".join(r.choice(WORDS) for _ in range(r.randint(2, 5)))
                items.append({"scope": sc, "actor": "a", "text": f"{r.choice(SUBJECTS).title()} is{neg} {words}"})
        calls.append(items)
    return scopes, calls


def _outcomes(seed: int, runtime: dict) -> list:
    scopes, calls = _calls(seed)
    names: dict[str, str] = {}

    def name(mid):  # ids are random: named by first appearance
        return None if mid is None else names.setdefault(mid, f"m{len(names)}")

    out = []
    with memactors.connect("memory://", config={"runtime": {"num_owners": 2, **runtime}}) as rt:
        for sc in scopes:
            rt.grant("a", sc, write=True)
        for items in calls:
            out.append([(r.decision, name(r.memory_id), r.version, name(r.supersedes)) for r in rt.write_many(items)])
    return out


@pytest.mark.parametrize("seed", [1])
def test_outcomes_do_not_depend_on_batching_or_on_the_hot_cache(seed):
    base = _outcomes(seed, {})
    assert any(d == "contradiction_queued" for call in base for d, *_ in call)  # the cases this is about
    for runtime in ({"write_batch_max": 7}, {"hot_cache_max_memories": 40}):
        other = _outcomes(seed, runtime)
        diffs = [(c, i, a, b) for c, (x, y) in enumerate(zip(base, other)) for i, (a, b) in enumerate(zip(x, y))
                 if a != b]
        assert not diffs, f"{runtime}: {len(diffs)} writes decided otherwise, the first {diffs[:3]}"


@pytest.mark.parametrize("together", [False, True])
@pytest.mark.parametrize("first, second", [("Alice is market friday", "Alice is friday market"),
                                           ("Alice is friday market", "Alice is market friday")])
def test_a_near_copy_of_two_equally_close_memories_merges_into_the_one_that_says_the_same(first, second, together):
    """The same words in another order make the same vector: a write close to both merges into
    the one that says what it says, whichever of the two was written first (the first of the
    scope's rows was taken, and its other word order kept the write apart)."""
    with memactors.connect("memory://") as rt:
        scope = "/org/inv/user/u/"
        rt.grant("a", scope, write=True)
        if together:
            a, b = rt.write_many([{"scope": scope, "actor": "a", "text": t} for t in (first, second)])
        else:
            a, b = rt.write(scope, first, actor="a"), rt.write(scope, second, actor="a")
        w = rt.write(scope, "Alice is friday friday market", actor="a")
        assert w.decision == "merged"
        assert w.memory_id == {first: a, second: b}["Alice is friday market"].memory_id
