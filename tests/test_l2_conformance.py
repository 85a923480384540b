"""One conformance suite for L2: the real LanceDB store and the in-memory fake must both pass
it (no Ray: L2 is plain storage). What owners rely on: rows appended, upserted, patched in
place and deleted in batches; reads filtered by scope, status and hard expiry exactly."""

from __future__ import annotations

import os

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memactors.engine.outbox import L2Outbox
from memactors.core import records as R
from memactors.testing.memstore import MemoryL2Store

DIM = 16
DAY = 86_400_000_000
A, B = "/org/c/user/a/", "/org/c/user/b/"


@pytest.fixture(params=["lance", "memory"])
def store(request, tmp_path):
    if request.param == "memory":
        return MemoryL2Store(DIM)
    from memactors.store.lance_store import L2Store

    return L2Store(str(tmp_path / "l2"), "hash-ngram-v1", DIM)


def rec(scope, text, now=DAY, **kw):
    req = R.WriteRequest(scope, text, "ag", **kw).validate()
    return R.build_record(req, text, R.new_memory_id(), now)


def vec(seed):
    v = np.random.default_rng(seed).normal(size=DIM).astype(np.float32)
    return v / np.linalg.norm(v)


def push(store, *, new=(), rows=(), patches=(), deletes=()):
    box = L2Outbox()
    for r, v in new:
        box.row(r, v, new=True)
    for r, v in rows:
        box.row(r, v, new=False)
    for mid, scope, p in patches:
        box.patch(mid, scope, p)
    for mid in deletes:
        box.delete(mid)
    store.apply(box.take())


def test_rows_round_trip_with_their_vectors(store):
    a, b = rec(A, "alice likes tea"), rec(B, "bob likes coffee", subject="bob", predicate="drink", object="coffee")
    push(store, new=[(a, vec(1)), (b, vec(2))])
    assert store.count() == 2 and store.scopes() == {A, B}
    rows, vecs = store.get([a["memory_id"]])
    assert len(rows) == 1 and rows[0]["content"] == "alice likes tea" and rows[0]["scope"] == A
    assert np.allclose(vecs[0], vec(1))
    assert {k: rows[0][k] for k in R.PUBLIC_FIELDS} == {k: R.complete(a)[k] for k in R.PUBLIC_FIELDS}
    ids = store.ids_and_scopes()
    assert sorted(ids.column("memory_id").to_pylist()) == sorted([a["memory_id"], b["memory_id"]])


def test_patches_change_only_their_columns_and_deletes_remove(store):
    a, b = rec(A, "one"), rec(A, "two")
    push(store, new=[(a, vec(1)), (b, vec(2))])
    push(store, patches=[(a["memory_id"], A, {"status": "stale", "retrieved_count": 3})], deletes=[b["memory_id"]])
    rows, vecs = store.get([a["memory_id"], b["memory_id"]])
    assert len(rows) == 1 and rows[0]["status"] == "stale" and rows[0]["retrieved_count"] == 3
    assert rows[0]["content"] == "one" and np.allclose(vecs[0], vec(1))
    push(store, patches=[("f" * 32, A, {"status": "stale"})])  # a patch never creates a row
    assert store.count() == 1


def test_patches_of_several_column_sets_land_whole_and_never_touch_other_columns(store):
    # A sweep's batch: stale marks, a stale mark that also ends a review, review flags alone,
    # access counts beside one that also changed a status. Each row ends with exactly its
    # patch's columns set, whatever merges carried them.
    recs = [dict(rec(A, f"memory {i}"), review="contradiction") for i in range(6)]
    push(store, new=[(r, vec(i)) for i, r in enumerate(recs)])
    patches = [{"status": "stale"}, {"status": "stale", "review": None}, {"review": "periodic"},
               {"retrieved_count": 4, "cited_count": 1}, {"retrieved_count": 2, "cited_count": 2, "status": "stale"},
               {"review": None, "retrieved_count": 7}]
    push(store, patches=[(r["memory_id"], A, p) for r, p in zip(recs, patches)])
    rows = {r["memory_id"]: r for r in store.get([r["memory_id"] for r in recs])[0]}
    for r, p in zip(recs, patches):
        want = {**{k: R.complete(r)[k] for k in ("status", "review", "retrieved_count", "cited_count")}, **p}
        assert {k: rows[r["memory_id"]][k] for k in want} == want, p
        assert rows[r["memory_id"]]["content"] == r["content"]


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.text("0123456789abcdef", min_size=1, max_size=3),
                       st.sets(st.sampled_from(["status", "review", "retrieved_count", "cited_count", "scope"])),
                       max_size=30))
def test_column_groups_write_each_row_exactly_its_columns_once_a_merge(columns_of):
    # the merges L2Store.apply makes of a batch's patches: each row's columns set exactly (no
    # column of another's), no row twice in one merge (Lance refuses duplicate keys), never more
    # merges than distinct column sets
    from memactors.store.lance_store import column_groups

    patches = {m: {c: 1 for c in cols} for m, cols in columns_of.items()}
    groups = column_groups(patches)
    written: dict = {}
    for cols, ids in groups:
        assert len(ids) == len(set(ids)) and cols and "scope" not in cols
        for m in ids:
            written.setdefault(m, set()).update(cols)
    assert written == {m: set(c) - {"scope"} for m, c in columns_of.items() if set(c) - {"scope"}}
    assert len(groups) <= len({frozenset(c) - {"scope"} for c in columns_of.values()} - {frozenset()})


def test_whole_row_upserts_replace_or_insert(store):
    a = rec(A, "first")
    push(store, new=[(a, vec(1))])
    push(store, rows=[(dict(a, content="changed", status="superseded"), vec(3)), (rec(A, "fresh"), vec(4))])
    assert store.count() == 2
    row = store.get([a["memory_id"]])[0][0]
    assert row["content"] == "changed" and row["status"] == "superseded"


def test_merges_larger_than_one_slice_apply_whole(store, monkeypatch):
    # Lance merges run in slices of MERGE_ROWS (its join pool cannot spill): a batch of many
    # slices must patch, upsert and delete every row it names, and nothing else.
    from memactors.store import lance_store

    monkeypatch.setattr(lance_store, "MERGE_ROWS", 3)
    monkeypatch.setattr(lance_store, "ROW_MERGE_ROWS", 2)
    monkeypatch.setattr(lance_store, "SCAN_DELETE_FROM", 4)
    recs = [rec(A, f"memory {i}") for i in range(11)]
    push(store, new=[(r, vec(i)) for i, r in enumerate(recs)])
    gone, patched, upserted = recs[:6], recs[6:10], [dict(recs[10], content="again")]
    push(store, patches=[(r["memory_id"], A, {"status": "stale"}) for r in patched],
         rows=[(r, vec(99)) for r in upserted], deletes=[r["memory_id"] for r in gone])
    rows = {r["memory_id"]: r for r in store.get([r["memory_id"] for r in recs])[0]}
    assert set(rows) == {r["memory_id"] for r in recs[6:]} and store.count() == 5
    assert all(rows[r["memory_id"]]["status"] == "stale" for r in patched)
    assert rows[recs[10]["memory_id"]]["content"] == "again"


def test_ids_reach_deletes_and_status_marks_as_values_never_as_filter_text(tmp_path):
    # Deletes and status marks name their rows by an Arrow expression (Substrait, not SQL): an
    # id shaped like an injection matches no row, and an unknown status writes nothing.
    from memactors.core.errors import ValidationError
    from memactors.store.lance_store import L2Store

    store = L2Store(str(tmp_path / "l2"), "hash-ngram-v1", DIM)
    a, b = rec(A, "one"), rec(A, "two")
    push(store, new=[(a, vec(1)), (b, vec(2))])
    hostile = ["x' OR '1'='1", "zz\\' OR 1=1) --", f"{a['memory_id']}' OR memory_id <> '", "%"]
    store._delete(hostile)
    store._set_status(hostile, "evicted")
    assert store.count() == 2 and {r["status"] for r in store.get([a["memory_id"], b["memory_id"]])[0]} == {"active"}
    with pytest.raises(ValidationError):
        store._set_status([a["memory_id"]], "stale' OR '1'='1")
    store._set_status([a["memory_id"]], "stale")
    store._delete([b["memory_id"]])
    rows = store.get([a["memory_id"], b["memory_id"]])[0]
    assert [(r["memory_id"], r["status"]) for r in rows] == [(a["memory_id"], "stale")]
    assert store._version_count() == len(store.table.to_lance().versions())  # counted by manifests


def test_a_small_scope_is_searched_whole_by_one_scan_a_larger_one_by_the_two_queries(tmp_path, monkeypatch):
    # Up to SCAN_ROWS rows in the asked scopes, a search returns every row the filter passes (a
    # superset of what the vector and full-text queries find), best cosine first; past it, the
    # queries' candidates: at most k of each, all among the scan's, with the same cosines.
    from memactors.store import lance_store

    store = lance_store.L2Store(str(tmp_path / "l2"), "hash-ngram-v1", DIM)
    rows = [rec(A, f"note{i} about topic{i % 3}") for i in range(30)]
    gone = dict(rec(A, "note99 superseded"), status="superseded")
    push(store, new=[(r, vec(i)) for i, r in enumerate(rows)] + [(gone, vec(99)), (rec(B, "note3 in b"), vec(3))])
    q = vec(3)
    scanned = store.hybrid_search(q, ["note7"], [A], DAY, 5)
    assert sorted(r["memory_id"] for r in scanned) == sorted(r["memory_id"] for r in rows)  # A's live rows only
    cos = [r["cosine"] for r in scanned]
    assert cos == sorted(cos, reverse=True) and scanned[0]["memory_id"] == rows[3]["memory_id"]
    assert all("search_text" in r and "vector" not in r for r in scanned)
    monkeypatch.setattr(lance_store, "SCAN_ROWS", 10)
    queried = store.hybrid_search(q, ["note7"], [A], DAY, 5)
    by_id = {r["memory_id"]: r["cosine"] for r in scanned}
    assert 5 < len(queried) <= 10 and queried[0]["memory_id"] == rows[3]["memory_id"]
    assert rows[7]["memory_id"] in {r["memory_id"] for r in queried}  # the full-text side's find
    assert all(r["cosine"] == pytest.approx(by_id[r["memory_id"]], abs=1e-6) for r in queried)
    late = rec(A, "zebra crossing today")  # appended after the full-text index was built: searched flat
    push(store, new=[(late, vec(77))])
    assert late["memory_id"] in {r["memory_id"] for r in store.hybrid_search(q, ["zebra"], [A], DAY, 5)}
    # a scope the store never counted (another handle wrote it) is queried, never scanned whole
    monkeypatch.setattr(lance_store, "SCAN_ROWS", 1_000)
    other = lance_store.L2Store(str(tmp_path / "l2"), "hash-ngram-v1", DIM)
    assert len(other.hybrid_search(q, ["note7"], [A], DAY, 5)) <= 10 < \
        len(store.hybrid_search(q, ["note7"], [A], DAY, 5))


def test_a_long_delete_by_scan_removes_exactly_its_rows_whole_fragments_too(tmp_path, monkeypatch):
    # Past SCAN_DELETE_FROM ids a delete finds its rows by a scan of the id column and deletes
    # them by address: every named row goes (a fragment emptied whole included), no other row,
    # and ids Lance never held (or shaped like filter text) match nothing.
    from memactors.store import lance_store

    monkeypatch.setattr(lance_store, "SCAN_DELETE_FROM", 2)
    store = lance_store.L2Store(str(tmp_path / "l2"), "hash-ngram-v1", DIM)
    first = [rec(A, f"first {i}") for i in range(5)]
    second = [rec(B, f"second {i}") for i in range(5)]
    push(store, new=[(r, vec(i)) for i, r in enumerate(first)])  # a fragment of its own
    push(store, new=[(r, vec(i)) for i, r in enumerate(second)])
    hostile = ["x' OR '1'='1", "zz\\' OR 1=1) --", "%", "f" * 32]
    gone = [r["memory_id"] for r in first] + [second[1]["memory_id"], second[3]["memory_id"]]
    push(store, deletes=gone + hostile)
    left = {r["memory_id"] for r in store.get([r["memory_id"] for r in first + second])[0]}
    assert left == {second[i]["memory_id"] for i in (0, 2, 4)} and store.count() == 3
    assert [r["memory_id"] for r in store.load_scopes([B])[0]].count(second[1]["memory_id"]) == 0
    push(store, deletes=hostile * 3)  # nothing of ours named: nothing deleted
    assert store.count() == 3


def test_a_long_delete_beside_a_writer_that_rewrote_its_rows_is_scanned_again(tmp_path, monkeypatch):
    # The rows a scanned delete found may be moved before it commits (a compaction by another
    # process, another owner's delete in the same fragment): Lance refuses that commit, and the
    # delete scans again. A real compaction runs between this delete's scan and its commit.
    import lance

    from memactors.store import lance_store

    monkeypatch.setattr(lance_store, "SCAN_DELETE_FROM", 2)
    store = lance_store.L2Store(str(tmp_path / "l2"), "hash-ngram-v1", DIM)
    recs = [rec(A, f"memory {i}") for i in range(12)]
    for k in range(0, 12, 3):  # four fragments: a compaction rewrites them into one
        push(store, new=[(r, vec(i)) for i, r in enumerate(recs[k:k + 3])])
    real, calls = lance.LanceDataset.commit, []

    def commit_after_a_compaction(*args, **kw):
        if not calls:
            lance.dataset(store.table.to_lance().uri).optimize.compact_files(target_rows_per_fragment=1000)
        calls.append(kw.get("read_version"))
        return real(*args, **kw)

    monkeypatch.setattr(lance.LanceDataset, "commit", staticmethod(commit_after_a_compaction))
    gone = [r["memory_id"] for r in recs[1:11:2]]
    push(store, deletes=gone)
    assert len(calls) == 2 and calls[1] > calls[0]  # refused once, then read again at the newer version
    left = {r["memory_id"] for r in store.get([r["memory_id"] for r in recs])[0]}
    assert left == {r["memory_id"] for r in recs} - set(gone) and store.count() == 7


def test_loads_and_searches_filter_by_scope_status_and_expiry(store):
    now = 10 * DAY
    live = rec(A, "alice likes green tea", now=now)
    stale = dict(rec(A, "alice likes black tea", now=now), status="stale")
    pending = dict(rec(A, "alice likes tea from a web page", now=now), status="pending")
    old = dict(rec(A, "alice liked tea once", now=now), status="superseded")
    expired = rec(A, "alice tea expired", now=now, ttl_days=1)
    other = rec(B, "bob likes green tea", now=now)
    push(store, new=[(r, vec(i)) for i, r in enumerate([live, stale, pending, old, expired, other])])
    rows, _ = store.load_scopes([A])
    assert {r["memory_id"] for r in rows} == {live["memory_id"], stale["memory_id"], pending["memory_id"],
                                              expired["memory_id"]}
    later = now + 2 * DAY  # expired's hard expiry has passed
    hits = store.hybrid_search(vec(0), ["green", "tea"], [A], later, 10)
    assert {h["memory_id"] for h in hits} == {live["memory_id"], stale["memory_id"]}
    assert all("cosine" in h and "search_text" in h for h in hits)  # the caller computes the keyword share
    assert store.hybrid_search(vec(0), ["green"], [B], later, 10)[0]["memory_id"] == other["memory_id"]


def test_versions_and_rivals_by_entity_key(store):
    kw = dict(subject="alice", predicate="drink")
    v1 = dict(rec(A, "tea", object="tea", **kw), status="superseded", version=1)
    v2 = dict(rec(A, "coffee", object="coffee", **kw), version=2)
    org = rec("/org/c/", "team drinks water", object="water", **kw)
    push(store, new=[(v1, vec(1)), (v2, vec(2)), (org, vec(3))])
    key = v2["entity_key"]
    assert {r["memory_id"] for r in store.versions_of_many([(A, key)])} == {v1["memory_id"], v2["memory_id"]}
    many = store.versions_of_many([(A, key), ("/org/c/", key), (B, key)])
    assert sorted((r["scope"], r["memory_id"]) for r in many) == sorted(
        [(A, v1["memory_id"]), (A, v2["memory_id"]), ("/org/c/", org["memory_id"])])
    assert store.versions_of_many([]) == []
    assert store.entity_versions([A]) == [(A, key, 1, v1["memory_id"], v1["sensitivity"])]
    rivals = store.rivals([A, "/org/c/"], [key], DAY)
    assert {r["memory_id"] for r in rivals} == {v2["memory_id"], org["memory_id"]}
    # with the query's vector, each rival's raw cosine: a cold rival is scored as a hot one
    cos = {r["memory_id"]: r["cosine"] for r in store.rivals([A, "/org/c/"], [key], DAY, vector=vec(0))}
    assert cos == {v2["memory_id"]: float(np.vecdot(vec(2), vec(0))),
                   org["memory_id"]: float(np.vecdot(vec(3), vec(0)))}


def test_reindex_adds_delta_segments_and_merges_them(tmp_path, monkeypatch):
    # New rows go into a delta segment of each index; every INDEX_DELTAS-th reindex merges
    # them. Whatever the segments, every row stays findable by scope and by its words.
    from memactors.store import lance_store
    from memactors.store.lance_store import L2Store

    monkeypatch.setattr(lance_store, "INDEX_DELTAS", 3)
    store = L2Store(str(tmp_path / "l2"), "hash-ngram-v1", DIM)
    ids, seen = [], []
    for k in range(7):
        recs = [rec(A, f"batch{k} note {i}") for i in range(3)]
        push(store, new=[(r, vec(10 * k + i)) for i, r in enumerate(recs)])
        ids += [r["memory_id"] for r in recs]
        store.reindex()
        seen.append(max(i.num_segments for i in store.table.list_indices()))
        assert all(i.num_unindexed_rows == 0 for i in store.table.list_indices())
    assert max(seen) <= 3 and 1 in seen[1:]  # deltas grew, then were merged
    assert sorted(r["memory_id"] for r in store.load_scopes([A])[0]) == sorted(ids)
    hits = store.table.search("batch6", query_type="fts", fts_columns="search_text").limit(10).to_arrow()
    assert hits.num_rows == 3


def test_compaction_keeps_every_index_exact_and_drops_deleted_words(tmp_path):
    # Compaction defers the scalar indexes' remap (Lance's fragment-reuse map) and rebuilds the
    # full-text one: scope, id and word lookups stay exact through two compactions, and a
    # deleted memory's words are gone from the index.
    from memactors.store.lance_store import L2Store

    store = L2Store(str(tmp_path / "l2"), "hash-ngram-v1", DIM)
    recs = [rec(A if i % 2 else B, f"note{i} about topic{i % 5}") for i in range(40)]
    for k in range(0, 40, 10):  # several fragments
        push(store, new=[(r, vec(i)) for i, r in enumerate(recs[k:k + 10], k)])
    store.reindex()
    kept = recs[25:]
    for rnd in range(2):
        push(store, deletes=[r["memory_id"] for r in recs[:25]])
        done = store.maintain(0.1, 2, 1_000, 0.0)
        assert done["compacted"]
        words = {w: store.table.search(w, query_type="fts", fts_columns="search_text").limit(50).to_arrow().num_rows
                 for w in ("note3", "note31", "topic1")}
        assert words == {"note3": 0, "note31": 1, "topic1": 3}
        for scope in (A, B):
            got = sorted(r["memory_id"] for r in store.load_scopes([scope])[0])
            assert got == sorted(r["memory_id"] for r in kept if r["scope"] == scope)
        assert sorted(r["memory_id"] for r in store.get(list({r["memory_id"] for r in recs + kept}))[0]) == \
            sorted(r["memory_id"] for r in kept)
        extra = [rec(A, f"later{rnd} note") for _ in range(3)]
        push(store, new=[(r, vec(100 + j)) for j, r in enumerate(extra)])
        store.reindex()
        kept = kept + extra


def test_small_fragments_are_compacted_once_due_and_every_row_stays_found(tmp_path):
    # Each flush appends a fragment; compact_small merges them once enough are small (those the
    # same index segments cover: Lance keeps the rest apart), leaves fragments of the target
    # size alone, and every index (scope, id, words, vectors) still answers exactly over the
    # rewritten rows and the rows written after.
    from memactors.store.lance_store import L2Store

    store = L2Store(str(tmp_path / "l2"), "hash-ngram-v1", DIM)
    recs = [rec(A if i % 2 else B, f"note{i} about topic{i % 5}") for i in range(60)]
    frags = lambda: [f.physical_rows for f in store.table.to_lance().get_fragments()]  # noqa: E731
    for k in range(0, 30, 10):
        push(store, new=[(r, vec(i)) for i, r in enumerate(recs[k:k + 10], k)])
    assert frags() == [10, 10, 10]
    assert store.compact_small(4, 1_000) is None and frags() == [10, 10, 10]  # not due: untouched
    push(store, new=[(r, vec(i)) for i, r in enumerate(recs[30:40], 30)])
    done = store.compact_small(4, 1_000)
    assert done["fragments_removed"] > done["fragments_added"] >= 1 and sum(frags()) == 40 and len(frags()) < 4
    assert store.compact_small(1, 10) is None  # none under 10 rows: nothing is small
    store.reindex()
    for k in range(40, 60, 5):
        push(store, new=[(r, vec(i)) for i, r in enumerate(recs[k:k + 5], k)])
    before = len(frags())
    assert store.compact_small(4, 1_000) is not None and len(frags()) < before
    for scope in (A, B):
        got = sorted(r["memory_id"] for r in store.load_scopes([scope])[0])
        assert got == sorted(r["memory_id"] for r in recs if r["scope"] == scope)
    assert len(store.get([r["memory_id"] for r in recs])[0]) == 60
    words = {w: store.table.search(w, query_type="fts", fts_columns="search_text").limit(50).to_arrow().num_rows
             for w in ("note3", "note37", "note55", "topic1")}
    assert words == {"note3": 1, "note37": 1, "note55": 1, "topic1": 12}
    hits = store.hybrid_search(vec(37), ["note37"], [A], DAY, 5)
    assert hits[0]["memory_id"] == recs[37]["memory_id"] and hits[0]["cosine"] == pytest.approx(1.0, abs=1e-5)


def test_fragments_past_a_read_batch_with_deleted_rows_compact_and_keep_their_rows(tmp_path):
    # Lance (pylance 14) could not rewrite a struct column read back from its files whenever a
    # compaction cut one of its 8,192-row read batches ("null_bit_buffer size too small"): the
    # record's session was such a column, and a table of large fragments that a sweep had
    # deleted from failed every compaction. Fragments past 8,192 rows, a fifth of each deleted,
    # compacted into smaller ones: every row left is read back whole, a session included.
    import pyarrow as pa

    from memactors.store.lance_store import L2Store

    store = L2Store(str(tmp_path / "l2"), "hash-ngram-v1", DIM)
    sizes, first = (9_000, 3_000, 700, 12_000), 0
    for n in sizes:
        ids = [f"{i:032x}" for i in range(first, first + n)]
        first += n
        store.table.add(R.fill_columns({
            "memory_id": pa.array(ids), "scope": pa.array([A] * n), "content": pa.array([f"n{i}" for i in range(n)]),
            "source_kind": pa.array(["user_stated"] * n), "content_hash": pa.array(ids),
            "created_at": pa.array([DAY] * n, R.TS), "updated_at": pa.array([DAY] * n, R.TS)}, n, DIM))
    kept = rec(A, "a memory of a session")
    kept["session"] = {"id": "s1", "task": "t1", "actor": "ag", "turn": 2, "slot": "goal", "n": 0, "critical": True}
    push(store, new=[(kept, vec(1))])
    gone = [f"{i:032x}" for i in range(first) if i % 5 == 0]
    push(store, deletes=gone)
    done = store.compact_small(1, 5_000)
    assert done is not None and done["fragments_removed"] >= len(sizes)
    assert store.count() == first + 1 - len(gone)
    assert store.get([kept["memory_id"]])[0][0]["session"] == kept["session"]
    left = store.get([f"{i:032x}" for i in range(0, first, 7)])[0]
    assert sorted(r["memory_id"] for r in left) == [f"{i:032x}" for i in range(0, first, 7) if i % 5]


def test_owners_of_one_table_never_compact_it_at_once(tmp_path):
    # Two owners (two handles, here of one process: the process host) flush into one table. While
    # one compacts, the other's due compaction is not attempted (two overlapping ones conflict at
    # commit and the loser's files are left behind, with a warning from Lance on stderr); it
    # happens at a later flush. A purge's compaction waits for the lock instead of skipping.
    import threading

    from memactors.store.lance_store import L2Store

    path = str(tmp_path / "l2")
    one, two = L2Store(path, "hash-ngram-v1", DIM), L2Store(path, "hash-ngram-v1", DIM)
    recs = [rec(A, f"note{i} about topic{i % 5}") for i in range(40)]
    for k in range(0, 40, 10):
        push((one, two)[k // 10 % 2], new=[(r, vec(i)) for i, r in enumerate(recs[k:k + 10], k)])
    files = lambda: sorted(os.listdir(os.path.join(path, "memories.lance", "data")))  # noqa: E731
    before = files()
    with one._compacting(wait=False) as held:  # noqa: SLF001 - one owner's compaction in progress
        assert held
        assert two.compact_small(2, 1_000) is None and files() == before  # not attempted
        waited = threading.Event()
        purge = threading.Thread(target=lambda: (two.purge(), waited.set()))
        purge.start()
        assert not waited.wait(0.5)  # the purge waits for the lock
    purge.join(30)
    assert waited.is_set()
    assert len(two.get([r["memory_id"] for r in recs])[0]) == 40
    with two._compacting(wait=False) as held:  # noqa: SLF001 - released again
        assert held


def test_a_purge_leaves_no_erased_row_in_the_files_a_lost_compaction_left(tmp_path):
    # Two owners compact the shared table at once: the one whose commit loses leaves its
    # rewritten fragments unreferenced, "for GC" (Lance keeps such files 7 days). A row erased
    # afterwards must not survive the purge in one of them. (And a row not erased stays.)
    import lance
    from lance.optimize import Compaction

    from memactors.eval.residue import Needle, scan_residue
    from memactors.store.lance_store import L2Store

    store = L2Store(str(tmp_path / "l2"), "hash-ngram-v1", DIM)
    recs = [rec(A, f"note{i} about topic{i % 5}") for i in range(30)]
    secret, kept = rec(A, "the zebrafinch hint is marmalade"), rec(A, "the heron hint is quince")
    for k in range(0, 30, 10):
        push(store, new=[(r, vec(i)) for i, r in enumerate(recs[k:k + 10], k)] + [((secret, kept)[k // 20], vec(99))])
    ds = store.table.to_lance()
    plan = Compaction.plan(ds, {"target_rows_per_fragment": 1_000, "defer_index_remap": True})
    lost = [t.execute(ds) for t in plan.tasks]  # the other owner's compaction, written but not committed
    assert store.compact_small(2, 1_000)  # this one commits first
    with pytest.raises(OSError, match="(?i)conflict"):
        Compaction.commit(lance.dataset(ds.uri, version=ds.version), lost)
    needles = [Needle("secret", "forgotten", ("zebrafinch", "marmalade"), secret["memory_id"]),
               Needle("kept", "forgotten", ("heron", "quince"), kept["memory_id"])]
    assert "secret" in scan_residue(str(tmp_path), needles).found  # still in the left-behind files
    push(store, deletes=[secret["memory_id"]])
    store.purge()
    found = scan_residue(str(tmp_path), needles).found
    assert "secret" not in found and "kept" in found
    assert [r["memory_id"] for r in store.get([kept["memory_id"], secret["memory_id"]])[0]] == [kept["memory_id"]]


def test_the_outbox_says_whether_it_holds_something_of_a_fact():
    """What a fact's erasure asks before it reads the fact's versions from L2 without a flush:
    a pending row of the fact, or a pending patch or deletion of a row L2 returned."""
    kw = dict(subject="alice", predicate="drink")
    v1 = rec(A, "tea", object="tea", **kw)
    fact = {(A, v1["entity_key"])}
    box = L2Outbox()
    assert not box.touches(fact, {v1["memory_id"]})
    box.row(v1, vec(1), new=True)
    assert box.touches(fact, set())  # a new row of the fact
    assert not box.touches({("/org/c/", v1["entity_key"])}, set())  # the same key in another scope
    box.take()
    box.patch(v1["memory_id"], A, {"status": "superseded"})
    assert box.touches(set(), {v1["memory_id"]}) and not box.touches(set(), {"other"})
    box.take()
    box.delete(v1["memory_id"])
    assert box.touches(set(), {v1["memory_id"]})
