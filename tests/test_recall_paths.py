"""One keyword score for one query, whatever path serves it: the same recall over one store
state scores the same (within 1e-6) from the owner's hot index, from Lance once the hot index
is dropped, after a reopen and after a rebuild of L2 from the ledger; the working pool, an
``as_of`` recall and L3 results share the keyword share of the same text; an exact-text match
scores high in a scope of any size."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime

import pytest

import memactors
from memactors import Retriever
from memactors.server import rebuild
from memactors.store import lance_store
from memactors.testing import drop_hot

A = "/org/paths/user/alice/"
ORG = "/org/paths/"
TEXTS = [
    "Alice prefers window seats on long flights",
    "Alice's passport expires in March",
    "Alice drinks green tea every morning",
    "爱丽丝喜欢靠窗的座位",
    "爱丽丝每天早上喝绿茶",
    "The quarterly report is due on Friday",
]
QUERIES = ["Alice prefers window seats on long flights", "which seat does alice like?", "green tea",
           "爱丽丝喜欢靠窗的座位", "绿茶", "when is the report due", "passport"]
CFG = {"runtime": {"num_owners": 2, "l2_flush_interval_s": 0.2}, "recall": {"min_score": -1.0}}


def _recall_all(rt) -> dict:
    out = {}
    for q in QUERIES:
        res = rt.recall(q, actor="ag", task_id="t", allowed_scopes=[A], purpose="p", top_k=20, threshold=0.0)
        out[q] = {h.memory_id: (h.score, h.relevance, dict(h.components)) for h in res.hits}
    return out


def _same(a: dict, b: dict, what: str) -> None:
    for q in QUERIES:
        assert set(a[q]) == set(b[q]), (what, q)
        for mid, (score, rel, comps) in a[q].items():
            s2, r2, c2 = b[q][mid]
            assert abs(score - s2) < 1e-6 and abs(rel - r2) < 1e-6, (what, q, score, s2)
            for k, v in comps.items():
                assert abs(v - c2[k]) < 1e-6, (what, q, k, v, c2[k])
        order_a = sorted(a[q], key=lambda m: (-a[q][m][0], m))
        order_b = sorted(b[q], key=lambda m: (-b[q][m][0], m))
        assert order_a == order_b, (what, q)


def test_the_same_recall_scores_the_same_hot_cold_reopened_and_rebuilt(ray_session, tmp_path):
    data = str(tmp_path / "data")
    clock = memactors.ManualClock()
    rt = memactors.connect(data, clock=clock, config=CFG)
    try:
        rt.grant("ag", A, write=True)
        rt.grant("ag", ORG, write=True)
        rt.write_many([{"scope": A, "text": t, "actor": "ag", "importance": 0.3 + 0.1 * i}
                       for i, t in enumerate(TEXTS)])
        rt.write(ORG, "Everyone at paths gets window seats on long flights", actor="ag")
        rt.flush()
        hot = _recall_all(rt)
        drop_hot(rt)
        cold = _recall_all(rt)
        res = rt.recall("green tea", actor="ag", task_id="t", allowed_scopes=[A], purpose="p")
        assert res.path == "cold"
    finally:
        rt.close()
    _same(hot, cold, "cold")
    rt = memactors.connect(data, clock=clock, config=CFG)
    try:
        _same(hot, _recall_all(rt), "reopened")
    finally:
        rt.close()
    rebuild(data, workers=1)
    rt = memactors.connect(data, clock=clock, config=CFG)
    try:
        _same(hot, _recall_all(rt), "rebuilt")
        exact = hot[QUERIES[0]]
        top = max(exact, key=lambda m: exact[m][0])
        assert exact[top][2]["keyword"] == 1.0  # an exact-text match: the whole query's weight
    finally:
        rt.close()


@pytest.mark.parametrize("scan_rows", [0, lance_store.SCAN_ROWS], ids=["queried", "scanned"])
def test_cold_recall_scores_the_same_over_fragments_the_flushes_compacted(tmp_path, monkeypatch, scan_rows):
    """Each flush appends a fragment; once ``l2_compact_fragments`` are small a flush compacts
    them. The cold recall over the compacted table scores as the hot index does, by the vector
    and full-text queries or by one scan of the small scope."""
    import lance

    monkeypatch.setattr(lance_store, "SCAN_ROWS", scan_rows)
    data = str(tmp_path / "data")
    cfg = {**CFG, "runtime": {**CFG["runtime"], "l2_compact_fragments": 3, "key_dir": str(tmp_path / "keys")}}
    with memactors.connect(data, host="process", config=cfg) as rt:
        rt.grant("ag", A, write=True)
        for i, t in enumerate(TEXTS):  # a flush each: a fragment each
            rt.write(A, t, actor="ag", importance=0.3 + 0.1 * i)
            rt.flush()
        frags = lance.dataset(f"{data}/l2/memories.lance").get_fragments()
        assert len(frags) < len(TEXTS) and sum(f.count_rows() for f in frags) == len(TEXTS)
        hot = _recall_all(rt)
        drop_hot(rt)
        cold = _recall_all(rt)
    _same(hot, cold, "cold after compaction")


def test_a_flush_that_leaves_compaction_to_a_sweep_appends_only(tmp_path):
    """A sweep's flushes (``flush(compact=False)``) leave small fragments to the sweep's own
    maintenance step, which compacts next; a plain flush compacts them once due."""
    import lance

    data = str(tmp_path / "data")
    # No flush of the loop's own between the calls below (under load, one came in and compacted)
    cfg = {**CFG, "runtime": {**CFG["runtime"], "l2_compact_fragments": 2, "key_dir": str(tmp_path / "keys"),
                              "l2_flush_interval_s": 3600.0}}
    with memactors.connect(data, host="process", config=cfg) as rt:
        rt.grant("ag", A, write=True)
        for t in TEXTS[:4]:  # a flush each, none compacting: a fragment each
            rt.write(A, t, actor="ag")
            for o in rt._owners:  # noqa: SLF001 - the call a sweep makes
                o.flush.remote(compact=False).result()
        assert len(lance.dataset(f"{data}/l2/memories.lance").get_fragments()) == 4
        rt.write(A, TEXTS[4], actor="ag")
        rt.flush()
        frags = lance.dataset(f"{data}/l2/memories.lance").get_fragments()
        assert len(frags) < 4 and sum(f.count_rows() for f in frags) == 5


def test_the_flush_loop_compacts_once_due_and_looks_only_when_it_could_be(tmp_path, monkeypatch):
    """The loop's flushes compact the fragments they append once ``l2_compact_fragments`` are
    small; the fragments are listed (a manifest read, beside a single write's commit) only once
    this owner's appends, with as many from each other owner, could make that many."""
    import time

    import lance

    looked, appended = [], []
    compact, apply = lance_store.L2Store.compact_small, lance_store.L2Store.apply
    monkeypatch.setattr(lance_store.L2Store, "compact_small", lambda self, *a: looked.append(1) or compact(self, *a))
    monkeypatch.setattr(lance_store.L2Store, "apply", lambda self, b: appended.append(len(b)) or apply(self, b))
    data = str(tmp_path / "data")
    cfg = {**CFG, "runtime": {**CFG["runtime"], "l2_compact_fragments": 4, "l2_flush_interval_s": 0.05,
                              "key_dir": str(tmp_path / "keys")}}
    with memactors.connect(data, host="process", config=cfg) as rt:  # two owners: one owns A
        rt.grant("ag", A, write=True)
        for i in range(8):  # a loop's flush each, mostly (no explicit flush: rt.stats() makes one)
            rt.write(A, f"note {i}: {TEXTS[i % len(TEXTS)]} (written {i * 37} minutes ago)", actor="ag")
            time.sleep(0.15)
        frags = lance.dataset(f"{data}/l2/memories.lance").get_fragments()
        appends = sum(1 for n in appended if n)
        assert sum(f.count_rows() for f in frags) == 8 and appends >= 4
        assert len(frags) < appends  # compacted
        assert len(looked) == appends // 2  # every second append of the owner's (4 due / 2 owners)


def test_a_records_numbers_read_the_same_from_memory_and_from_lance(tmp_path):
    """Lance keeps confidence, importance and TTL days as float32: a hit served cold showed
    0.800000011920929 where the hot one showed 0.8, and a TTL restarted after a reopen ended
    microseconds off where it would have before."""
    from memactors.core.clock import US_PER_DAY

    clock = memactors.ManualClock()

    def seen(rt):
        res = rt.recall("window seats", actor="ag", task_id="t", allowed_scopes=[A], purpose="p", threshold=0.0)
        return [(h.confidence, h.importance) for h in res.hits]

    with memactors.connect(str(tmp_path / "data"), host="process", config=CFG, clock=clock) as rt:
        rt.grant("ag", A, write=True)
        w = rt.write(A, "Alice prefers window seats", actor="ag", confidence=0.8, importance=0.7, ttl_days=3.3)
        hot = seen(rt)
        rt.flush()
        drop_hot(rt)
        assert seen(rt) == hot == [(0.8, 0.7)]
    with memactors.connect(str(tmp_path / "data"), host="process", config=CFG, clock=clock) as rt:
        clock.advance(days=1)
        assert rt.write(A, "Alice prefers window seats", actor="ag").decision == "refreshed"  # the TTL restarts
        [v] = rt.history(w.memory_id, actor="ag")["versions"]
    assert v["hard_expires_at"] == clock.now_us() + int(3.3 * US_PER_DAY)


class _Docs(Retriever):
    name = "docs"

    def retrieve(self, query: str, k: int) -> list[dict]:
        return [{"content": t, "id": str(i)} for i, t in enumerate(TEXTS)][:k]


def test_working_pool_as_of_and_l3_share_the_keyword_score(tmp_path):
    clock = memactors.ManualClock()
    rt = memactors.connect(str(tmp_path / "data"), clock=clock, config=CFG)
    try:
        rt.grant("ag", A, write=True)
        rt.grant("ag", "/org/paths/user/bob/", write=True)
        for t in TEXTS:
            rt.write(A, t, actor="ag")
        for t in TEXTS:  # the same texts as L1 items of another scope
            rt.write("/org/paths/user/bob/", t, actor="ag", pool="working")
        rt.flush()
        for q in QUERIES:
            kw = {}
            live = rt.recall(q, actor="ag", task_id="t", allowed_scopes=[A], purpose="p", top_k=20, threshold=0.0)
            for h in live.hits:
                kw.setdefault(h.content, set()).add(round(h.components["keyword"], 9))
            working = rt.recall(q, actor="ag", task_id="t", allowed_scopes=["/org/paths/user/bob/"], purpose="p",
                                top_k=20, threshold=0.0)
            assert {h.pool for h in working.hits} <= {"working"}
            for h in working.hits:
                kw.setdefault(h.content, set()).add(round(h.components["keyword"], 9))
            past = rt.recall(q, actor="ag", task_id="t", allowed_scopes=[A], purpose="p", top_k=20, threshold=0.0,
                             as_of=datetime.fromtimestamp(clock.now_us() / 1e6, UTC))
            assert {h.memory_id: round(h.score, 6) for h in past.hits} == {h.memory_id: round(h.score, 6)
                                                                           for h in live.hits}
            l3 = rt.retrieve(_Docs(), q, actor="ag", task_id="t", allowed_scopes=[A], purpose="p", top_k=20,
                             threshold=0.0)
            for h in l3.hits:
                kw.setdefault(h.content, set()).add(round(h.components["keyword"], 9))
            assert all(len(v) == 1 for v in kw.values()), (q, kw)
    finally:
        rt.close()


def test_an_exact_text_match_scores_high_alone_and_among_many(tmp_path):
    rt = memactors.connect(str(tmp_path / "data"), config=CFG)
    try:
        rt.grant("ag", A, write=True)
        rt.grant("ag", ORG, write=True)
        rt.write(A, "Alice prefers window seats on long flights", actor="ag")
        rt.write_many([{"scope": ORG, "text": f"note {i} about flights and seats of team {i}", "actor": "ag"}
                       for i in range(300)])
        rt.write(ORG, "Alice prefers window seats on long flights, the org says", actor="ag")
        for scope in (A, ORG):
            res = rt.recall("Alice prefers window seats on long flights", actor="ag", task_id="t",
                            allowed_scopes=[scope], purpose="p", top_k=3)
            assert res.hits and res.hits[0].components["keyword"] == 1.0
            assert res.hits[0].relevance > 0.8
    finally:
        rt.close()


@pytest.mark.parametrize("scan_rows", [0, lance_store.SCAN_ROWS], ids=["queried", "scanned"])
def test_a_cold_fact_loses_to_its_rival_in_a_more_specific_scope_as_it_does_hot(tmp_path, monkeypatch, scan_rows):
    """The org's fact matches the query best, the user's version of it (the more specific
    scope) hardly at all: the user's wins the conflict whether the scopes are hot or cold, its
    rival found by the rivals query or, over a small scope, in the scan itself (which then gives
    the hot recall's hits exactly)."""
    monkeypatch.setattr(lance_store, "SCAN_ROWS", scan_rows)
    cfg = {"runtime": {"key_dir": str(tmp_path / "keys")}, "recall": {"min_score": -1.0}}
    fact = dict(subject="alice", predicate="drinks")
    query = "alice drinks coffee every morning"
    with memactors.connect(str(tmp_path / "data"), host="process", config=cfg) as rt:
        rt.grant("ag", ORG, write=True)
        rt.write_many([{"scope": A, "text": f"alice ordered coffee beans batch {i} from the shop", "actor": "ag"}
                       for i in range(30)])
        org = rt.write(ORG, query, actor="ag", object="coffee", **fact).memory_id
        rt.write(A, "her usual is tea", actor="ag", object="tea", **fact)
        rt.flush()

        def hits(scopes):
            res = rt.recall(query, actor="ag", task_id="t", allowed_scopes=scopes, purpose="p", top_k=3, threshold=0.0)
            return [(h.memory_id, round(h.score, 6)) for h in res.hits]

        hot, hot_org = hits([A]), hits([ORG])
        drop_hot(rt)
        cold, cold_org = hits([A]), hits([ORG])
    assert hot_org == cold_org and cold_org[0][0] == org
    assert org not in {m for m, _ in hot} | {m for m, _ in cold}
    if scan_rows:  # the scan scores every row, as the hot index does: the same hits; the queries
        assert hot == cold  # pick candidates, so among the fillers' equal scores they may differ


@pytest.mark.parametrize("scan_rows", [0, lance_store.SCAN_ROWS], ids=["queried", "scanned"])
def test_a_cold_rival_that_wins_its_conflict_is_judged_on_its_relevance_as_it_is_hot(tmp_path, monkeypatch,
                                                                                       scan_rows):
    """The task's (more specific) value of a fact, gone stale, ranks below 60 fresh fillers (so
    that the vector and full-text queries find m better ones too): outside the owner's best
    candidates, it comes back as the user-level value's rival. It wins the conflict and passes
    the threshold on its own relevance, hot and after a reopen (served from Lance, by the rivals
    query or by the scan) alike: the same hits, the same scores."""
    monkeypatch.setattr(lance_store, "SCAN_ROWS", scan_rows)
    cfg = {"runtime": {"key_dir": str(tmp_path / "keys")}}
    data, clock = str(tmp_path / "data"), memactors.ManualClock()
    task = A + "task/trip/"
    fact = dict(actor="ag", subject="alice", predicate="seat")
    with memactors.connect(data, host="process", clock=clock, config=cfg) as rt:
        rt.grant("ag", A, write=True)
        rt.grant("ag", task, write=True)
        rt.write(A, "Alice seat preference: window seat", object="window", **fact)
        aisle = rt.write(task, "Alice seat preference: aisle seat", object="aisle", soft_ttl_days=1, **fact).memory_id
        rt.write_many([{"scope": A, "text": f"seat map note {i}: row {i} has a seat", "actor": "ag"}
                       for i in range(60)])
        clock.advance(days=2)

        def hits(rt):
            res = rt.recall("Alice seat preference", actor="ag", task_id="t", allowed_scopes=[task], purpose="p",
                            top_k=5, threshold=0.55)
            return res.path, [(h.memory_id, h.score, h.relevance, h.stale, (h.conflict or {}).get("reason"))
                              for h in res.hits]

        path, hot = hits(rt)
    assert path == "hot" and [h[0] for h in hot] == [aisle] and hot[0][3] and hot[0][4] == "more_specific_scope"
    with memactors.connect(data, host="process", clock=clock, config=cfg) as rt:
        path, cold = hits(rt)
    assert path == "mixed"  # both scopes from Lance (/global/, empty, is hot)
    assert [(m, st, why) for m, _, _, st, why in cold] == [(m, st, why) for m, _, _, st, why in hot]
    for (_, s1, r1, *_), (_, s2, r2, *_) in zip(hot, cold):
        assert abs(s1 - s2) < 1e-6 and abs(r1 - r2) < 1e-6


@pytest.mark.parametrize("hot", [True, False], ids=["hot", "scanned"])
def test_equal_scores_are_cut_by_memory_id_on_every_path(tmp_path, hot):
    """Sixty memories of one batch, most of which score exactly alike (their texts differ by a
    number the query does not hold), and a recall whose candidates and hits are both cut inside
    that tie: the tied ones returned are those with the smallest ids, from the hot index and
    from a scan of the cold scope alike."""
    cfg = {"runtime": {"key_dir": str(tmp_path / "keys")}, "recall": {"min_score": -1.0}}
    query = "alice ordered coffee beans from the shop"
    with memactors.connect(str(tmp_path / "data"), host="process", config=cfg) as rt:
        rt.grant("ag", A, write=True)
        rt.write_many([{"scope": A, "text": f"alice ordered coffee beans batch {i} from the shop", "actor": "ag"}
                       for i in range(60)])
        rt.flush()
        if not hot:
            drop_hot(rt)

        def hits(top_k):
            res = rt.recall(query, actor="ag", task_id="t", allowed_scopes=[A], purpose="p", top_k=top_k,
                            threshold=0.0)
            assert res.path == ("hot" if hot else "cold")
            return [(h.score, h.memory_id) for h in res.hits]

        every = sorted(hits(60), key=lambda t: (-t[0], t[1]))
        tie, size = Counter(s for s, _ in every).most_common(1)[0]
        above = sum(s > tie for s, _ in every)
        k = above + 2  # hits cut inside the tie, and the owner's max(3k, 20) candidates too
        assert size >= 30 and max(3 * k, 20) < above + size  # the premise
        assert [m for _, m in hits(k)] == [m for _, m in every[:k]]  # (recency moves every score alike)


@pytest.mark.parametrize("num_owners", [1, 2])
def test_a_forgotten_copy_in_a_cold_scope_is_not_served_before_lance_deletes_it(tmp_path, num_owners):
    """A forget erases a memory's promoted copy in a scope no owner holds hot: its row leaves
    Lance at the next flush (here not due for a minute). A recall right after the forget reads
    that scope once the deletion is in: never the erased text, by the direct path or the loop's."""
    cfg = {"runtime": {"num_owners": num_owners, "l2_flush_interval_s": 60, "key_dir": str(tmp_path / "keys")}}
    bob = "/org/paths/user/bob/"
    rt = memactors.connect(str(tmp_path / "d"), host="process", config=cfg)
    rt.grant("ag", ORG, write=True)
    rt.grant("bobbot", bob)
    a = rt.write(A, "Alice's allergy is provtokPeanut", actor="ag")
    copy = rt.promote(a.memory_id, ORG, actor="ag", reason="share")["memory_id"]
    rt.close()
    with memactors.connect(str(tmp_path / "d"), host="process", config=cfg) as rt:  # every scope cold
        assert copy in rt.forget(a.memory_id, actor="ag", reason="user asked")["forgotten"]
        for _ in range(2):  # the direct path, then again (the loop's path flushed meanwhile)
            hits = rt.recall("allergy", actor="bobbot", task_id="t", allowed_scopes=[bob], purpose="p",
                             threshold=0.0).hits
            assert [h.memory_id for h in hits if "provtok" in (h.content or "")] == []
        res = rt.recall_many([{"query": "allergy", "actor": "bobbot", "task_id": "t", "allowed_scopes": [bob],
                               "purpose": "p", "threshold": 0.0}])
        assert all("provtok" not in (h.content or "") for r in res for h in r.hits)
