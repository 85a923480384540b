"""Red-team cases of erasure (DESIGN section 8): versions of a fact that L2 no longer holds,
retried erasures, and what a forgotten fact leaves behind. Process host, a tmp folder each."""

from __future__ import annotations

import os

import pytest

import memactors
import memactors.ops as O

S = "/org/redteam/user/zed/"


def _rt(tmp_path, name: str = "data"):
    return memactors.connect(str(tmp_path / name), host="process",
                             config={"runtime": {"num_owners": 1, "l2_flush_interval_s": 0.2,
                                                 "key_dir": str(tmp_path / "keys")}})


def _in_files(root: str, needle: bytes) -> list[str]:
    out = []
    for d, _, files in os.walk(root):
        for f in files:
            try:
                with open(os.path.join(d, f), "rb") as fh:
                    if needle in fh.read():
                        out.append(os.path.join(d, f))
            except FileNotFoundError:  # gone meanwhile (a log folded in, an old version removed)
                pass
    return out


def _fact(rt, tok: str):
    rt.grant("ag", S, write=True)
    v1 = rt.write(S, f"Zed's nickname is {tok}a", actor="ag", subject="zed", predicate="nickname", object=tok + "a")
    v2 = rt.write(S, f"Zed's nickname is {tok}b", actor="ag", subject="zed", predicate="nickname", object=tok + "b")
    assert v1.memory_id and v2.supersedes == v1.memory_id
    return v1, v2


@pytest.mark.parametrize("batched", [False, True])
def test_erasing_a_fact_erases_its_rolled_back_version(tmp_path, batched):
    """A version a rollback undid is evicted: its row leaves L2 but its key stays (a rollback
    can reinstate it). erase="fact" read the fact's versions from L2 only, so it left that one
    readable in history and brought back by a rollback to before the undo."""
    tok = "zq9rb7734"
    rt = _rt(tmp_path)
    try:
        v1, v2 = _fact(rt, tok)
        other = rt.write(S, "zed likes tea", actor="ag")
        before_undo = rt.audit.head()["seq"]
        rt.rollback(memory_id=v2.memory_id, actor="ag", reason="bad import")  # v2 evicted, v1 live again
        rt.flush()
        if batched:
            forgotten = rt.batch([O.Forget(v1.memory_id, "ag", "the user asked", erase="fact"),
                                  O.Forget(other.memory_id, "ag", "the user asked")])[0].forgotten
        else:
            forgotten = rt.forget(v1.memory_id, actor="ag", reason="the user asked", erase="fact")["forgotten"]
        assert set(forgotten) >= {v1.memory_id, v2.memory_id}
        assert rt.audit.erased(v2.memory_id, actor="ag")["key_destroyed"]
        h = rt.history(v1.memory_id, actor="ag")
        assert all(v["content"] is None for v in h["versions"])
        rt.rollback(at=before_undo, actor="ag", reason="undo the undo")
        hits = rt.recall(f"nickname {tok}b", actor="ag", task_id="t", allowed_scopes=[S], purpose="p",
                         threshold=0.0, top_k=20).hits
        assert not [h for h in hits if tok in (h.content or "")]
        rt.purge()
        assert rt.audit.verify()["ok"]
    finally:
        rt.close()
    assert _in_files(str(tmp_path / "data"), tok.encode()) == []


def test_erasing_a_fact_keeps_other_facts_evicted_versions(tmp_path):
    """Not over-broad: an evicted version of another fact of the same scope stays (its key too)."""
    rt = _rt(tmp_path)
    try:
        v1, v2 = _fact(rt, "zq9keep1")
        o1 = rt.write(S, "Zed's city is Porto", actor="ag", subject="zed", predicate="city", object="Porto")
        o2 = rt.write(S, "Zed's city is Braga", actor="ag", subject="zed", predicate="city", object="Braga")
        rt.rollback(memory_id=o2.memory_id, actor="ag", reason="wrong")  # o2 evicted, o1 live
        rt.rollback(memory_id=v2.memory_id, actor="ag", reason="wrong")
        sib = "/org/redteam/user/zed2/"  # the same subject and predicate in a sibling scope: another fact
        rt.grant("ag", sib, write=True)
        s1 = rt.write(sib, "Zed's nickname is sibling1", actor="ag", subject="zed", predicate="nickname", object="s1")
        s2 = rt.write(sib, "Zed's nickname is sibling2", actor="ag", subject="zed", predicate="nickname", object="s2")
        rt.rollback(memory_id=s2.memory_id, actor="ag", reason="wrong")
        out = rt.forget(v1.memory_id, actor="ag", reason="asked", erase="fact")
        assert set(out["forgotten"]) == {v1.memory_id, v2.memory_id}
        assert not rt.audit.erased(o2.memory_id, actor="ag")["key_destroyed"]
        assert not rt.audit.erased(s2.memory_id, actor="ag")["key_destroyed"]
        assert [v["content"] for v in rt.history(s1.memory_id, actor="ag")["versions"]] == \
            ["Zed's nickname is sibling1", "Zed's nickname is sibling2"]
        assert [v["content"] for v in rt.history(o1.memory_id, actor="ag")["versions"]] == \
            ["Zed's city is Porto", "Zed's city is Braga"]
    finally:
        rt.close()


def test_erasing_a_fact_erases_its_working_pool_version(tmp_path):
    """A session's observation of the fact (same subject and predicate, an L1 item: L2 never
    holds one) is a version of it in its history; erase="fact" left it in L1, in the history
    with its text and in the session's prompt."""
    tok = "zq9wk9956"
    rt = _rt(tmp_path)
    try:
        rt.grant("ag", S, write=True)
        a = rt.write(S, f"Zed's blood type is {tok}", actor="ag", subject="zed", predicate="blood_type", object=tok)
        keep = rt.write(S, "Zed lives in Porto", actor="ag", subject="zed", predicate="city", object="Porto")
        s = rt.session(S, actor="ag", task_id="t1", goal="help zed")
        s.start()
        s.observe("user", f"my blood type is {tok}", subject="zed", predicate="blood_type", object=tok)
        s.observe("user", "I live in Porto", subject="zed", predicate="city", object="Porto")
        assert tok in s.before_llm().text
        out = rt.forget(a.memory_id, actor="ag", reason="asked", erase="fact")
        assert len(out["forgotten"]) == 2
        assert tok not in s.before_llm().text
        assert "I live in Porto" in s.before_llm().text  # the other fact's L1 item stays
        assert all(v["content"] is None for v in rt.history(a.memory_id, actor="ag")["versions"])
        assert [v["content"] for v in rt.history(keep.memory_id, actor="ag")["versions"]][0] == "Zed lives in Porto"
        rt.purge()
    finally:
        rt.close()
    assert _in_files(str(tmp_path / "data"), tok.encode()) == []


def test_an_idempotency_key_reused_for_another_erasure_is_a_conflict_not_a_silent_no_op(tmp_path):
    """A forget's key reused for another memory returned the first forget's result and erased
    nothing. Now: the same forget again answers as the first did; another memory under that key
    is an IdempotencyConflict, and it stays; so does a reject under a forget's key."""
    rt = _rt(tmp_path)
    try:
        rt.grant("ag", S, write=True)
        a = rt.write(S, "zed's locker number is 4471", actor="ag").memory_id
        b = rt.write(S, "zed likes tea", actor="ag").memory_id
        first = rt.batch([O.Forget(a, "ag", "asked", idempotency_key="ticket-7")])[0]
        again = rt.batch([O.Forget(a, "ag", "asked", idempotency_key="ticket-7")])[0]
        assert first.forgotten == again.forgotten == [a]
        out = rt.batch([O.Forget(b, "ag", "asked", idempotency_key="ticket-7")], return_errors=True)[0]
        assert isinstance(out, memactors.IdempotencyConflict) and "another request" in str(out)
        assert rt.history(b, actor="ag")["versions"][0]["status"] == "active"
        assert rt.forget(b, actor="ag", reason="asked")["forgotten"] == [b]  # under a key of its own
    finally:
        rt.close()


def test_a_summary_goes_with_the_last_of_its_sources_erased_one_at_a_time():
    """closure: a memory claimed from sources of its scope only goes once the last of them is
    erased, whether they go at once or one after the other (those erased before come as
    tombstoned stubs); one with a live source left, or a source in another scope, is flagged."""
    from memactors.core.erasure import CLAIM, closure

    def rec(m, scope=S, status="active"):
        return {"memory_id": m, "scope": scope, "status": status}

    edges = [("sum", "a", CLAIM), ("sum", "b", CLAIM)]
    gone, flagged = closure([rec("a")], {"sum": rec("sum"), "b": rec("b")}, edges)  # b still live
    assert [r["memory_id"] for r in gone] == ["a"] and [r["memory_id"] for r in flagged] == ["sum"]
    gone, flagged = closure([rec("b")], {"sum": rec("sum"), "a": rec("a", status="tombstoned")}, edges)
    assert [r["memory_id"] for r in gone] == ["b", "sum"] and flagged == []
    gone, _ = closure([rec("a"), rec("b")], {"sum": rec("sum")}, edges)  # both at once, as before
    assert [r["memory_id"] for r in gone] == ["a", "b", "sum"]
    other = "/org/redteam/user/amy/"
    gone, flagged = closure([rec("b")], {"sum": rec("sum"), "a": rec("a", other, "tombstoned")}, edges)
    assert [r["memory_id"] for r in gone] == ["b"] and [r["memory_id"] for r in flagged] == ["sum"]
    # a stub is never erased again, down or up a copy edge
    gone, _ = closure([rec("c")], {"a": rec("a", status="tombstoned")}, [("c", "a", "copy"), ("a", "c", "copy")])
    assert [r["memory_id"] for r in gone] == ["c"]


@pytest.mark.parametrize("batched", [False, True])
def test_a_summary_is_erased_with_the_second_of_its_sources_forgotten_one_at_a_time(tmp_path, batched):
    """A summary claimed from A and B (its scope): forgetting A flags it (B is still there);
    forgetting B then erases it, as forgetting both at once does. It stayed, recallable."""
    rt = _rt(tmp_path)
    try:
        rt.grant("ag", S, write=True)
        a = rt.write(S, "zed visited Oslo in May", actor="ag").memory_id
        b = rt.write(S, "zed visited Rome in June", actor="ag").memory_id
        keep = rt.write(S, "zed likes tea", actor="ag").memory_id
        summ = rt.write(S, "summary: zed visited Oslo and Rome", actor="ag", derived_from=[a, b]).memory_id
        other = rt.write(S, "zed's trips: Oslo, and tea at home", actor="ag", derived_from=[a, keep]).memory_id
        first = rt.forget(a, actor="ag", reason="asked")
        assert first["forgotten"] == [a] and set(first["flagged"]) == {summ, other}
        if batched:
            second = rt.batch([O.Forget(keep, "ag", "asked"), O.Forget(b, "ag", "asked")])[1]
            assert set(second.forgotten) == {b, summ}
        else:
            assert set(rt.forget(b, actor="ag", reason="asked")["forgotten"]) == {b, summ}
        assert rt.audit.erased(summ, actor="ag")["key_destroyed"]
        assert (rt.audit.erased(other, actor="ag")["key_destroyed"]) == batched  # its other source: kept unless erased
        hits = rt.recall("zed visited Oslo Rome", actor="ag", task_id="t", allowed_scopes=[S], purpose="p",
                         threshold=0.0).hits
        assert summ not in {h.memory_id for h in hits}
    finally:
        rt.close()


def _key_of(data: str, memory_id: str) -> bytes:
    import duckdb

    con = duckdb.connect(os.path.join(data, "ledger.duckdb"), read_only=True)
    try:
        return bytes(con.execute("SELECT key FROM keys WHERE memory_id = ?", [memory_id]).fetchone()[0])
    finally:
        con.close()


def test_closing_purges_what_its_erasures_left_on_disk(tmp_path):
    """An erasure's bytes (the text in Lance's files and old versions, the data key in the
    ledger's freed blocks) leave with its purge, due [lifecycle].purge_delay_s later: a runtime
    closed before then (every `memactors forget`) left them there for good. close() purges."""
    tok = "zq9close4471"
    data = str(tmp_path / "data")
    rt = _rt(tmp_path)  # the default delay: 300 s
    rt.grant("ag", S, write=True)
    mid = rt.write(S, f"Zed's locker word is {tok}", actor="ag").memory_id
    rt.write(S, "zed likes tea", actor="ag")
    rt.close()
    key = _key_of(data, mid)
    rt = _rt(tmp_path)
    rt.forget(mid, actor="ag", reason="asked")
    rt.close()
    assert _in_files(data, tok.encode()) == [] and _in_files(data, key) == []
    rt = _rt(tmp_path)  # and what was kept is all there
    assert [h.content for h in rt.recall("zed tea", actor="ag", task_id="t", allowed_scopes=[S], purpose="p",
                                         threshold=0.0).hits] == ["zed likes tea"]
    rt.close()


def test_a_purge_a_process_did_not_live_to_do_is_done_when_the_folder_is_next_opened(tmp_path):
    import subprocess
    import sys
    import time

    tok = "zq9crash2290"
    data = str(tmp_path / "data")
    rt = _rt(tmp_path)
    rt.grant("ag", S, write=True)
    mid = rt.write(S, f"Zed's locker word is {tok}", actor="ag").memory_id
    rt.close()
    key = _key_of(data, mid)
    script = (f"import os, memactors\nrt = memactors.connect({data!r}, host='process', config={{'runtime': "
              f"{{'num_owners': 1, 'key_dir': {str(tmp_path / 'keys')!r}}}}})\n"
              f"rt.forget({mid!r}, actor='ag', reason='asked')\nrt.flush()\nos._exit(0)  # dies before its purge\n")
    subprocess.run([sys.executable, "-c", script], check=True, timeout=120)
    assert _in_files(data, tok.encode())  # still there: nobody purged
    rt = memactors.connect(data, host="process", config={"runtime": {"num_owners": 1, "key_dir": str(tmp_path / "keys")},
                                                         "lifecycle": {"purge_delay_s": 0.5}})
    try:
        deadline = time.monotonic() + 30
        while (_in_files(data, tok.encode()) or _in_files(data, key)) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert _in_files(data, tok.encode()) == [] and _in_files(data, key) == []
    finally:
        rt.close()


def test_a_retried_write_of_an_erased_memory_does_not_test_a_guess_of_its_text(tmp_path):
    """Within the idempotency window, the erased write's key with its very text answered
    "accepted" (its first result) and any other text IdempotencyConflict: whoever held the key
    could test guesses of what was erased. The request is forgotten with the memory: every text
    under that key gets the first result, the same answer; nothing is written. Other keys keep
    their conflicts, after a reopen too."""
    rt = _rt(tmp_path)
    try:
        rt.grant("ag", S, write=True)
        a = rt.write(S, "zed's diagnosis is zq9flu", actor="ag", idempotency_key="w-1")
        rt.write(S, "zed likes tea", actor="ag", idempotency_key="w-2")
        rt.forget(a.memory_id, actor="ag", reason="asked")
        for _ in range(2):
            answers = {(r.decision, r.memory_id) for r in (
                rt.write(S, guess, actor="ag", idempotency_key="w-1")
                for guess in ("zed's diagnosis is zq9flu", "zed's diagnosis is zq9cold"))}
            assert answers == {("accepted", a.memory_id)}
            with pytest.raises(memactors.IdempotencyConflict):
                rt.write(S, "zed likes coffee", actor="ag", idempotency_key="w-2")
            rt.close()
            rt = _rt(tmp_path)
        hits = rt.recall("zed diagnosis", actor="ag", task_id="t", allowed_scopes=[S], purpose="p", threshold=0.0).hits
        assert all("diagnosis" not in h.content for h in hits)
    finally:
        rt.close()


def test_a_purge_reports_the_ledger_before_and_after_on_one_footing(tmp_path):
    """The first purge of a young folder reported 12,288 -> 2,371,584 bytes, as if it had grown
    the ledger: "before" was the file with its rows still in the write-ahead log."""
    with _rt(tmp_path) as rt:
        rt.grant("ag", S, write=True)
        mid = rt.write(S, "Zed's locker number is 4471", actor="ag").memory_id
        rt.forget(mid, actor="ag", reason="asked")
        first = rt.purge()["ledger"]
        assert 0 < first["bytes_after"] <= first["bytes_before"], first
        for i in range(100):  # erasures whose destroyed keys the rewrite leaves behind
            mid = rt.write(S, f"Zed's note number {i} is private", actor="ag").memory_id
            rt.forget(mid, actor="ag", reason="asked")
        second = rt.purge()["ledger"]
        assert 0 < second["bytes_after"] < second["bytes_before"], second
