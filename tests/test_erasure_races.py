"""A promotion up the scope tree and a forget of the same memory, decided at the same time on
two owners (each under its own scopes' locks): whichever commits second is decided again
(``memactors.store.ledger_races``), so an erased memory's text never survives in a copy.

Each race is staged deterministically on the process host: the first operation is paused
right after it read the ledger (the forget its provenance, the promotion its source), the
other one runs to its commit meanwhile, then the first goes on with what it read."""

from __future__ import annotations


import duckdb
import pytest

import memactors
from memactors.core import events as E
from memactors.core.errors import NotFound
from memactors.core.ops import ForgetOp, ScopePromoteOp
from memactors.core.scopes import GLOBAL, parse_scope
from memactors.engine.naming import owner_index
from memactors.store import ledger_races
from memactors.store.entries import EMPTY, Entry, merge
from memactors.testing import unique_org

from on_disk import files_holding  # tests/on_disk.py

CFG = {"runtime": {"num_owners": 2, "l2_flush_interval_s": 60.0}}


@pytest.fixture(scope="module")
def rt(tmp_path_factory):
    r = memactors.connect(str(tmp_path_factory.mktemp("races") / "data"), host="process", config=CFG)
    r.grant("admin-r", "/global/", write=True)
    yield r
    r.close()


def _setup(rt, prefix: str):
    """A memory in a user scope whose owner is not /global/'s; (memory id, its owner, /global/'s, word)."""
    while True:
        org = unique_org(prefix)
        if owner_index(parse_scope(f"/org/{org}/"), 2) != owner_index(GLOBAL, 2):
            break
    scope = f"/org/{org}/user/u/"
    rt.grant("ag-r", scope, write=True)
    rt.grant("admin-r", scope)
    word = f"Quokkanym{org.replace('-', '')}"
    mid = rt.write(scope, f"the vault phrase is {word}", actor="ag-r").memory_id
    cores = [h._obj for h in rt._owners]  # noqa: SLF001 - the process host's cores, to stage the race
    return mid, cores[owner_index(parse_scope(scope), 2)], cores[owner_index(GLOBAL, 2)], word


def _global_hits(rt, word: str) -> list:
    return rt.recall(word, actor="admin-r", task_id="t", allowed_scopes=["/global/"], purpose="p", top_k=20,
                     threshold=0.0).hits


class _Paused:
    """``obj``'s ``name`` (a coroutine method) that runs ``meanwhile()`` once, after its first call
    read what it reads and before the caller goes on with it."""

    def __init__(self, obj, name: str, meanwhile) -> None:
        self.obj, self.name, self.meanwhile, self.fired = obj, name, meanwhile, False
        self.orig = getattr(obj, name)

    async def __call__(self, *args, **kw):
        out = await self.orig(*args, **kw)
        if not self.fired:
            self.fired = True
            self.result = await self.meanwhile()
        return out


class _LedgerPort:
    """A core's ledger port with ``provenance`` paused (the port is shared by name lookups)."""

    def __init__(self, port, provenance) -> None:
        self._port, self.provenance = port, provenance

    def __getattr__(self, name: str):
        return getattr(self._port, name)


def test_a_copy_committed_after_the_forget_read_the_provenance_is_erased_with_it(rt):
    mid, src_core, glob_core, word = _setup(rt, "race-a")

    async def promote():  # on /global/'s owner, between the forget's read and its commit
        op = ScopePromoteOp(mid, "/global/", "admin-r", "shared", "race-a-promote").validate()
        return (await glob_core.submit([op], glob_core.now_us))[0]

    port = src_core.ledger
    paused = _Paused(port, "provenance", promote)
    src_core.ledger = _LedgerPort(port, paused)
    try:
        out = rt.forget(mid, actor="ag-r", reason="user asked")
    finally:
        src_core.ledger = port
    copy = paused.result["memory_id"]
    assert paused.fired and copy is not None and copy != mid
    assert out["decision"] == "forgotten"
    assert _global_hits(rt, word) == []  # the copy went with it, on its own owner
    assert rt.audit.erased(copy, actor="admin-r")["key_destroyed"]
    assert rt.audit.verify()["ok"]
    rt.purge()
    assert files_holding(rt.data_dir, word.encode()) == []


def test_a_copy_of_a_memory_erased_after_the_promotion_read_it_is_refused(rt):
    mid, src_core, glob_core, word = _setup(rt, "race-b")

    async def forget():  # on the source's owner, between the promotion's read and its commit
        op = ForgetOp(mid, "ag-r", "user asked", "race-b-forget").validate()
        return (await src_core.submit([op], src_core.now_us))[0]

    paused = _Paused(glob_core, "_record", forget)
    glob_core._record = paused  # noqa: SLF001 - the promotion's read of its source (another owner's scope)
    try:
        with pytest.raises(NotFound):  # decided again: its source is gone
            rt.promote(mid, "/global/", actor="admin-r", reason="shared")
    finally:
        del glob_core._record
    assert paused.fired and paused.result["decision"] == "forgotten"
    assert _global_hits(rt, word) == []
    assert rt.audit.verify()["ok"]
    rt.purge()
    assert files_holding(rt.data_dir, word.encode()) == []


def test_a_promotion_and_a_forget_without_a_race_are_not_decided_again(rt):
    """The checks refuse only what raced: a copy of a live memory, then its erasure (which takes
    the copy), each commit once."""
    mid, src_core, glob_core, word = _setup(rt, "race-c")
    commits = []
    for core in (src_core, glob_core):
        orig = core._apply  # noqa: SLF001

        async def counted(ops, now_us, tries=1, ticket=None, _orig=orig):
            commits.append(tries)
            return await _orig(ops, now_us, tries, ticket)
        core._apply = counted  # noqa: SLF001
    try:
        copy = rt.promote(mid, "/global/", actor="admin-r", reason="shared")["memory_id"]
        assert [h.memory_id for h in _global_hits(rt, word)] == [copy]
        rt.forget(mid, actor="ag-r", reason="user asked")
    finally:
        del src_core._apply, glob_core._apply
    assert commits and set(commits) == {1}
    assert _global_hits(rt, word) == []


def _db(keys: list[str], edges: list[tuple]):
    """The two tables the checks read, in a real DuckDB: ``keys`` (memories not erased) and ``provenance``."""
    con = duckdb.connect()
    con.execute("CREATE TABLE keys (memory_id VARCHAR, key BLOB)")
    con.execute("CREATE TABLE provenance (memory_id VARCHAR, source VARCHAR, kind VARCHAR)")
    for m in keys:
        con.execute("INSERT INTO keys VALUES (?, ?)", [m, b"k"])
    for e in edges:
        con.execute("INSERT INTO provenance VALUES (?, ?, ?)", list(e))
    return lambda sql, params: con.execute(sql, params).fetchall()


def _batch(items: list[dict]) -> tuple[dict, list]:
    """A commit's columns from items {"writes": [ids], "destroy": [ids], "prov": [edges], "live_read",
    "edges_read"} (one event per write or erasure), and its ``take``."""
    b = {"idem_key": [], "destroy": [], "n_events": [], "live_read": [], "edges_read": [], "action": [],
         "memory_id": [], "prov": []}
    take = []
    for n, it in enumerate(items):
        first = len(b["action"])
        for m in it.get("writes", ()):
            b["action"].append(E.WRITE)
            b["memory_id"].append(m)
        for m in it.get("destroy", ()):
            b["action"].append(E.FORGET)
            b["memory_id"].append(m)
        b["prov"] += [(first, *e) for e in it.get("prov", ())]
        b["idem_key"].append(f"k{n}")
        b["destroy"].append(list(it.get("destroy", ())))
        b["n_events"].append(len(b["action"]) - first)
        b["live_read"].append(it.get("live_read"))
        b["edges_read"].append(it.get("edges_read"))
        take.append((n, first, len(b["action"]) - first))
    return b, take


def test_a_copy_is_stale_when_its_source_was_erased_before_or_earlier_in_the_commit():
    run = _db(["x", "y"], [])
    copy_x = {"writes": ["c"], "prov": [("c", "x", "copy")], "live_read": ["x"]}
    b, take = _batch([copy_x])
    assert ledger_races.stale(b, take, run) == set()  # x is live
    b, take = _batch([{"writes": ["c"], "prov": [("c", "z", "copy")], "live_read": ["z"]}])
    assert ledger_races.stale(b, take, run) == {0}  # z has no key: erased before
    b, take = _batch([{"destroy": ["x"], "edges_read": []}, copy_x])
    assert ledger_races.stale(b, take, run) == {1}  # erased earlier in this commit
    b, take = _batch([{"writes": ["x2"]}, {"writes": ["c"], "prov": [("c", "x2", "copy")], "live_read": ["x2"]}])
    assert ledger_races.stale(b, take, run) == set()  # written in this commit: live


def test_an_erasure_is_stale_when_an_edge_it_follows_was_committed_since_it_read():
    run = _db(["x", "c", "w"], [("c", "x", "copy"), ("w", "x", "claim")])
    b, take = _batch([{"destroy": ["x"], "edges_read": []}])
    assert ledger_races.stale(b, take, run) == {0}  # the copy came after its read
    b, take = _batch([{"destroy": ["x", "c"], "edges_read": [["c", "x", "copy"]]}])
    assert ledger_races.stale(b, take, run) == set()  # read it (and erases it): a claim is not followed
    b, take = _batch([{"destroy": ["c"], "edges_read": []}])
    assert ledger_races.stale(b, take, run) == {0}  # up a copy edge, from an erased copy
    run = _db(["x", "p"], [])
    b, take = _batch([{"writes": ["p"], "prov": [("p", "x", "context")]}, {"destroy": ["x"], "edges_read": []}])
    assert ledger_races.stale(b, take, run) == {1}  # carried words committed earlier in this commit
    b, take = _batch([{"destroy": ["x"], "edges_read": []}, {"writes": ["p"], "prov": [("p", "x", "context")]}])
    assert ledger_races.stale(b, take, run) == set()  # after it: not its to follow (that write is not checked)


def test_the_ledger_checks_only_entries_that_read_outside_their_locks():
    """A batch naming nothing read elsewhere is not queried, and the new item columns travel
    through ``merge`` from batches that lack them."""
    def run(sql, params):
        raise AssertionError("no query for a batch that read nothing elsewhere")

    b, take = _batch([{"writes": ["a"]}, {"destroy": ["b"]}])  # a sweep's erasure reads no provenance
    assert ledger_races.stale(b, take, run) == set()
    batch = {**{k: list(v) for k, v in EMPTY.items()}, "idem_key": ["k"], "destroy": [[]], "n_events": [0],
             "fingerprint": [None], "result": [b"{}"], "live_read": [["m"]], "edges_read": [None]}
    old = {k: v for k, v in batch.items() if k not in ("live_read", "edges_read")}
    merged = merge([old, batch])
    assert merged["live_read"] == [None, ["m"]] and merged["edges_read"] == [None, None]


def test_an_erasure_follows_copies_and_carried_words_down_and_copies_up_never_claims():
    from memactors.core.erasure import follows

    gone = {"x"}
    assert follows(("c", "x", "copy"), gone) and follows(("p", "x", "context"), gone)  # down
    assert follows(("x", "s", "copy"), gone)  # up from an erased copy
    assert not follows(("x", "s", "context"), gone)  # the words it carried stay with their source
    assert not follows(("w", "x", "claim"), gone) and not follows(("x", "s", "claim"), gone)
    assert not follows(("c", "y", "copy"), gone)


def test_many_forgets_in_one_batch_each_commit_once_and_carry_only_their_own_edges(rt):
    """A batch's erasures share one provenance read; each entry carries only the edges its own
    erasure follows (not the batch's), so the check stays in proportion to the erasure."""
    mids, cores = [], []
    for n in range(4):
        mid, src_core, glob_core, _ = _setup(rt, f"race-d{n}")
        rt.promote(mid, "/global/", actor="admin-r", reason="shared")
        mids.append(mid)
        cores.append(src_core)
    carried = []
    orig = Entry.__init__

    def spy(self, *a, **kw):
        orig(self, *a, **kw)
        if self.edges_read is not None:
            carried.append(len(self.edges_read))
    Entry.__init__ = spy
    try:
        out = rt.batch([memactors.ops.Forget(m, actor="ag-r", reason="user asked") for m in mids])
    finally:
        Entry.__init__ = orig
    assert [r.decision for r in out] == ["forgotten"] * 4
    assert carried == [1] * 4  # its copy's edge alone, though the batch read four
