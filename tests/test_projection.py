"""The projection (pure, hypothesis): replaying the changes of any generated history equals the
state the live path built, and the L2 rows a rebuild folds are those the live path wrote."""

from __future__ import annotations

import hypothesis.strategies as st
from hypothesis import given, settings

from memactors.core import changes as C
from memactors.core import events as E
from memactors.core import records as R
from memactors.core.config import LifecycleConfig
from memactors.core.ops import ForgetOp, ReviewOp, StatusOp
from memactors.core.project import Rows, apply, in_l2
from memactors.core.versions import ScopeState

SCOPES = ["/org/p/user/a/", "/org/p/user/b/"]
DAY = 86_400_000_000

write = st.fixed_dictionaries({
    "kind": st.just("write"),
    "scope": st.sampled_from(SCOPES),
    "entity": st.booleans(),
    "predicate": st.sampled_from(["drink", "city"]),
    "object": st.sampled_from(["tea", "coffee", "water"]),
    "text": st.sampled_from(["likes tea", "likes coffee", "Likes  TEA.", "lives in Paris", "has a cat"]),
    "confidence": st.sampled_from([0.2, 0.6, 0.7, 1.0]),
    "source": st.sampled_from(["user_stated", "tool", "agent_inferred"]),
    "pending": st.booleans(),
    "working": st.booleans(),
})
by_id = st.fixed_dictionaries({
    "kind": st.sampled_from(["forget", "forget_fact", "approve", "reject", "stale", "evict", "reinstate"]),
    "pick": st.integers(0, 50),
})
history = st.lists(st.one_of(write, by_id), min_size=1, max_size=40)


def _prep(op: dict, req: R.WriteRequest) -> C.Prepared:
    decision = "pending" if op["pending"] else ("working_only" if op["working"] else "accepted")
    return C.Prepared(decision, req.text, {}, {"decision": decision}, R.content_hash(req.text), None, None)


def run_live(ops: list[dict]):
    """The live path's shape: decide against a staged state, apply the changes to it, keep them."""
    states = {s: ScopeState() for s in SCOPES}
    rows = Rows()  # what L2 receives, row by row, as the owner's outbox would send it
    log = []
    now = 0
    for n, op in enumerate(ops):
        now += DAY
        if op["kind"] == "write":
            req = R.WriteRequest(op["scope"], op["text"], "ag", subject="u" if op["entity"] else None,
                                 predicate=op["predicate"] if op["entity"] else None,
                                 object=op["object"] if op["entity"] else None, confidence=op["confidence"],
                                 source=op["source"], idempotency_key=f"k{n}").validate()
            out = C.decide_write_op(req, C.Ctx(states[op["scope"]], now, LifecycleConfig(), prepared=_prep(op, req),
                                               new_id=R.new_memory_id()))
        else:
            known = [m for m in rows.records]
            if not known:
                continue
            mid = known[op["pick"] % len(known)]
            rec = rows.get(mid)
            state = states[rec["scope"]]
            current = state.get(mid) or rec
            try:
                if op["kind"] in ("forget", "forget_fact"):
                    targets = [current]
                    if op["kind"] == "forget_fact" and current.get("entity_key"):
                        targets += [r for r in rows.records.values() if r["memory_id"] != mid
                                    and r["scope"] == current["scope"] and r.get("entity_key") == current["entity_key"]]
                    out = C.decide_forget(ForgetOp(mid, "ag", "r", f"k{n}"), targets)
                elif op["kind"] in ("approve", "reject"):
                    out = C.decide_review(ReviewOp(mid, "reviewer", "r", op["kind"] == "approve", f"k{n}"),
                                          state.get(mid), state, now, "ag")
                else:
                    status = {"stale": "stale", "evict": "evicted", "reinstate": "active"}[op["kind"]]
                    out = C.decide_status(StatusOp(mid, status, "ag", "r", f"k{n}"), current, state)
            except R.InvalidRecord:
                continue
            except Exception as exc:  # NotFound: nothing to review, say
                if type(exc).__name__ != "NotFound":
                    raise
                continue
        for ch in out.changes:
            apply(states[ch.scope], ch)
            apply(rows, ch)
            log.append(ch)
    return states, rows, log


@settings(max_examples=300, deadline=None)
@given(history)
def test_replaying_the_changes_rebuilds_the_live_state(ops):
    states, rows, log = run_live(ops)
    replayed = {s: ScopeState() for s in SCOPES}
    folded = Rows()
    for ch in log:
        apply(replayed[ch.scope], ch)
        apply(folded, ch)
    for s in SCOPES:
        assert replayed[s].records == states[s].records
        assert replayed[s].by_entity == states[s].by_entity
        assert replayed[s].by_hash == states[s].by_hash
    assert folded.l2_rows() == rows.l2_rows()
    # Invariants of the state itself.
    for s in SCOPES:  # one live version per fact, but for a close call waiting for a reviewer
        live_keys = [r["entity_key"] for r in states[s].live() if r.get("entity_key") and r.get("review") is None]
        assert len(live_keys) == len(set(live_keys)), "one live version per fact"
    for rec in folded.l2_rows():
        assert rec["status"] not in R.GONE and rec["pool"] == "vault"
    erased = {ch.memory_id for ch in log if ch.action == E.FORGET}
    assert not erased & {r["memory_id"] for r in folded.l2_rows()}
    assert all(in_l2(r) for r in folded.l2_rows())
