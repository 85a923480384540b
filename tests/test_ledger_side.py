"""The ledger writer's side transactions (recall evidence, access counts): a flush returns once
every row handed in before it is committed, with its counts; a tick's evidence with no write
waiting goes in few transactions (``SIDE_RECALLS_IDLE`` rows each)."""

from __future__ import annotations

import asyncio

from memactors.core.config import Config
from memactors.engine import ledger as EL

SCOPE = "/org/acme/user/u1/"


def _row(i: int) -> dict:
    hits = [{"memory_id": f"m{i % 7}", "scope": SCOPE, "version": 1, "score": 0.5},
            {"memory_id": f"l3-{i}", "scope": "l3:web", "version": 1, "score": 0.1}]
    return {"recall_id": f"r{i:05d}", "ts": 1_000 + i, "actor": "a", "task_id": "none", "purpose": "answer",
            "allowed_scopes": [SCOPE], "visible_scopes": [SCOPE, "/global/"], "query_digest": "d" * 64,
            "top_k": 5, "hits": hits, "filters": {"scopes": [SCOPE]}, "removed": {"threshold": 0}}


def _core(tmp_path) -> EL.LedgerCore:
    cfg = Config.from_dict({"runtime": {"key_dir": str(tmp_path / "keys")}}).to_dict()
    core = EL.LedgerCore(str(tmp_path / "data"), cfg)
    assert core.ready()
    return core


def test_evidence_of_a_tick_commits_whole_in_few_transactions(tmp_path):
    core = _core(tmp_path)
    sides = []
    log_side = core.ledger.log_side
    core.ledger.log_side = lambda recalls, applied: (sides.append(len(recalls)), log_side(recalls, applied))

    async def run():
        core.log_recalls([_row(i) for i in range(EL.SIDE_RECALLS_IDLE + 300)])
        await core.flush()

    asyncio.run(run())
    assert sides == [EL.SIDE_RECALLS_IDLE, 300]
    q = core.ledger.con.execute
    assert q("SELECT count(*) FROM recalls").fetchone()[0] == EL.SIDE_RECALLS_IDLE + 300
    n = EL.SIDE_RECALLS_IDLE + 300
    # each memory counted once a recall; the L3 hits logged, never counted
    expect = {f"m{k}": sum(1 for i in range(n) if i % 7 == k) for k in range(7)}
    got = dict(q("SELECT memory_id, retrieved_count FROM access").fetchall())
    assert got == expect
    streaks = dict(q("SELECT memory_id, uncited_streak FROM access").fetchall())
    assert streaks == expect
    newest = dict(q("SELECT memory_id, last_accessed_at FROM access").fetchall())
    assert newest == {f"m{k}": 1_000 + max(i for i in range(n) if i % 7 == k) for k in range(7)}
    core.ledger.close()

