"""Reliability edges of the process host: close() while calls are in flight, batches of writes
that are confirmed only in part (sync and async alike), and a ManualClock given a time it cannot
hold. Each must end in a typed error that tells the truth, and the folder must reopen."""

from __future__ import annotations

import asyncio
import concurrent.futures as cf
import threading
import time

import pytest

import memactors
from memactors import ops
from memactors.core.clock import MAX_US, ManualClock
from memactors.core.errors import InvalidRecord, InvalidScope, PartialWrite, RuntimeClosed, StoreError

S = [f"/org/t{i}/user/u/" for i in range(4)]


def _open(path, **config):
    rt = memactors.connect(str(path), host="process", config={"runtime": config} if config else None)
    for s in S:
        rt.grant("a", s, write=True)
    return rt


def _stored(rt) -> set:
    return {m.memory_id for s in S for m in rt.batch([ops.Lookup(scope=s, actor="a", limit=10**6)])[0]}


def test_close_while_a_ledger_statement_runs_still_releases_the_folder(tmp_path):
    # A write committed after close()'s last flush (another thread's) was on the ledger
    # connection when the host stopped: DuckDB refused to close a busy connection, the folder's
    # lock stayed held and connect() in this process said DataFolderLocked.
    rt = _open(tmp_path)
    core = rt._ledger._obj
    started = threading.Event()

    def busy():
        started.set()
        core.ledger.con.execute("SELECT sum(i) FROM range(300000000) t(i)").fetchall()

    async def statement():
        async with core._con_lock:
            await asyncio.to_thread(busy)

    def after_the_last_flush():  # close()'s last step before it stops the host
        asyncio.run_coroutine_threadsafe(statement(), rt._actors.loop)
        assert started.wait(10)

    rt._alerts.drain = after_the_last_flush
    rt.close()
    again = memactors.connect(str(tmp_path), host="process")
    assert again.audit.verify()["ok"]
    again.close()


def test_awrite_many_cut_by_close_is_a_partial_write_that_resubmits_once(tmp_path):
    # It was asyncio.CancelledError, with nothing said of the half already written.
    rt = _open(tmp_path, owner_queue_max=1000, write_batch_max=250)  # 3 calls in flight per owner
    items = [dict(scope=S[j % 4], text=f"Fact {j} of the walrus census, count {j * 7 + 3}", actor="a")
             for j in range(8000)]

    async def main():
        task = asyncio.ensure_future(rt.awrite_many(items))
        while rt.stats()["counters"].get("writes", 0) == 0 and not task.done():
            await asyncio.sleep(0.02)
        t0 = time.monotonic()
        await rt.aclose()
        # A part whose cancel was lost went on to commit against the closing ledger: close()
        # waited 10 s for it, then left its tasks pending ("Task was destroyed").
        assert time.monotonic() - t0 < 8
        with pytest.raises(PartialWrite) as err:
            await task
        return err.value

    err = asyncio.run(main())
    assert len(err.results) == len(items) and err.failed and len(err.items) == len(err.failed)
    assert all(err.results[i] is None for i in err.failed)
    assert [it["text"] for it in err.items] == [items[i]["text"] for i in err.failed]
    done = {r.memory_id for r in err.results if r is not None}
    assert done
    rt = memactors.connect(str(tmp_path), host="process")
    assert done <= _stored(rt)
    again = rt.write_many(err.items)
    assert {r.memory_id for r in again}.isdisjoint(done)
    n = len(_stored(rt))
    rt.write_many(err.items)  # the same keys once more: nothing new
    assert len(_stored(rt)) == n
    assert rt.audit.verify()["ok"]
    rt.close()


def _failing_owner_call(rt, bad_text: str):
    """The host's write call fails (as a ledger commit that could not be made) for the call
    that carries ``bad_text``; the others go through."""
    real = rt._host.send_writes

    def send(owner, reqs, now, order=None):
        if any(r.text == bad_text for r in reqs):
            f = cf.Future()
            f.set_exception(StoreError("the ledger could not commit; nothing of this batch was written"))
            return f
        return real(owner, reqs, now, order)

    rt._host.send_writes = send


def test_write_many_partial_write_names_the_callers_positions(tmp_path):
    # With return_errors and an item refused at the door, err.failed and err.results counted
    # the items sent, not the caller's list: err.failed[k] did not name err.items[k].
    rt = _open(tmp_path, write_batch_max=2)
    items = [dict(scope="/nowhere/", text="refused at the door", actor="a")] + [
        dict(scope=S[0], text=f"Fact {j} of the seal census, count {j * 11}", actor="a") for j in range(6)]
    _failing_owner_call(rt, items[5]["text"])
    with pytest.raises(PartialWrite) as err:
        rt.write_many(items, return_errors=True)
    e = err.value
    assert len(e.results) == len(items) and e.results[0] is None
    assert e.failed == [5, 6] or 5 in e.failed
    assert [it["text"] for it in e.items] == [items[i]["text"] for i in e.failed]
    assert all(e.results[i] is not None for i in range(1, 7) if i not in e.failed)
    rt.close()


def test_awrite_many_keeps_what_other_calls_wrote_when_one_call_fails(tmp_path):
    # One failed owner call made every item of the batch that error (StoreError "nothing was
    # written", err.results all None) although the other calls' writes were committed.
    # The failed call never reached its owner: the later part waited the call timeout for it
    # (60 s) before the caller released it (``engine.turns``).
    rt = _open(tmp_path, write_batch_max=2)
    items = [dict(scope=S[0], text=f"Fact {j} of the otter census, count {j * 13}", actor="a") for j in range(6)]
    _failing_owner_call(rt, items[3]["text"])
    t0 = time.monotonic()
    with pytest.raises(PartialWrite) as err:
        asyncio.run(rt.awrite_many(items))
    assert time.monotonic() - t0 < 20
    e = err.value
    assert e.failed == [2, 3]
    assert [it["text"] for it in e.items] == [items[2]["text"], items[3]["text"]]
    assert all(it["idempotency_key"] for it in e.items)  # a made key each: resubmitting writes once
    written = [e.results[i] for i in (0, 1, 4, 5)]
    assert all(r is not None and r.decision == "accepted" for r in written)
    assert {r.memory_id for r in written} <= _stored(rt)
    # return_errors: each unconfirmed write is a PartialWrite in its place, carrying itself
    out = asyncio.run(rt.awrite_many(items, return_errors=True))
    assert [type(x).__name__ for x in out] == ["WriteResult"] * 2 + ["PartialWrite"] * 2 + ["WriteResult"] * 2
    t0 = time.monotonic()  # and the sync face
    with pytest.raises(PartialWrite) as err:
        rt.write_many(items)
    assert err.value.failed == [2, 3] and time.monotonic() - t0 < 20
    rt.close()


def test_a_door_refusal_still_refuses_the_async_batch(tmp_path):
    rt = _open(tmp_path)
    with pytest.raises(InvalidScope):
        asyncio.run(rt.awrite_many([dict(scope="/nowhere/", text="x", actor="a")]))
    rt.close()


@pytest.mark.parametrize("move", [
    lambda c: c.advance(days=-1), lambda c: c.advance(days=float("inf")), lambda c: c.advance(days=1e300),
    lambda c: c.advance(seconds=float("nan")), lambda c: c.set("2026-01-01"), lambda c: c.set(None),
    lambda c: c.set(-1), lambda c: c.set(2**64), lambda c: c.set(1.5e18), lambda c: ManualClock(MAX_US + 1),
])
def test_a_manual_clock_refuses_a_time_it_cannot_hold_typed(move):
    # These were a raw ValueError, OverflowError or TypeError; 2**64 was taken and the next
    # write failed untyped on it.
    c = ManualClock()
    before = c.now_us()
    with pytest.raises(InvalidRecord):
        move(c)
    assert c.now_us() == before


def test_a_manual_clock_may_be_set_back_and_to_its_bounds():
    c = ManualClock()
    t = c.now_us()
    c.set(t - 10**12)
    c.set(0)
    c.set(MAX_US)
    with memactors.connect("memory://", clock=c) as rt:
        rt.grant("a", S[0], write=True)
        assert rt.write(S[0], "Alice likes tea", actor="a", ttl_days=36500).decision == "accepted"
        c.set(t)
        assert rt.write(S[0], "Alice likes green tea a lot", actor="a").decision in ("accepted", "merged")
        assert rt.audit.verify()["ok"]


def test_a_call_that_fails_because_close_came_under_it_is_runtime_closed(tmp_path):
    # A read of the ledger (stats) running while another thread's close() shut the ledger
    # failed with DuckDB's "Connection already closed!", raw.
    import duckdb

    rt = _open(tmp_path)
    core = rt._ledger._obj

    def counters():  # the read, as it fails when close() lands under it
        rt._calls.closed = True
        raise duckdb.ConnectionException("Connection Error: Connection already closed!")

    core.counters = counters
    with pytest.raises(RuntimeClosed):
        rt.stats()

    async def acall():
        return await rt._calls.aget(rt._ledger.counters.remote())

    rt._calls.closed = False
    with pytest.raises(RuntimeClosed):
        asyncio.run(acall())
    rt._calls.closed = False
    del core.counters
    rt.close()
