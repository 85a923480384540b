"""A caller's idempotency key used again past its window is another request: the runtime says
so at once (not only after a later write moved the window, or after a reopen), and erasing
what the key's old use wrote leaves the new use's request as it was: a different write under
the key is still a conflict, never answered with the new use's result as if it were a retry
(the caller would have believed a write that never happened). Alike before and after a
reopen. On the process host."""

from __future__ import annotations

import pytest

import memactors
from memactors.core.errors import IdempotencyConflict

SCOPE = "/org/idem/user/u1/"


@pytest.mark.parametrize("reopen", [False, True])
def test_a_key_reused_past_its_window_is_new_and_its_old_uses_erasure_leaves_it_pinned(tmp_path, reopen):
    clock = memactors.ManualClock()
    path = str(tmp_path / "data")
    cfg = {"runtime": {"idempotency_window_s": 3600.0}}
    rt = memactors.connect(path, host="process", clock=clock, config=cfg)
    try:
        rt.grant("ag", SCOPE, write=True)
        old = rt.write(SCOPE, "Alice's gym is on Elm Street", actor="ag", idempotency_key="k")
        clock.advance(days=400)
        new = rt.write(SCOPE, "Alice walks the dog at seven", actor="ag", idempotency_key="k")
        assert new.decision == "accepted" and new.memory_id != old.memory_id  # the window had passed
        assert rt.forget(old.memory_id, actor="ag", reason="the user asked")["forgotten"] == [old.memory_id]
        if reopen:
            rt.close()
            rt = memactors.connect(path, host="process", clock=clock, config=cfg)
        with pytest.raises(IdempotencyConflict):
            rt.write(SCOPE, "Alice reads science fiction", actor="ag", idempotency_key="k")
        again = rt.write(SCOPE, "Alice walks the dog at seven", actor="ag", idempotency_key="k")
        assert again.memory_id == new.memory_id  # a retry of the new use: its result
        rt.forget(new.memory_id, actor="ag", reason="the user asked")  # now its own write is erased
        guess = rt.write(SCOPE, "Alice reads science fiction", actor="ag", idempotency_key="k")
        assert guess.memory_id == new.memory_id  # no test of a guess of the erased text: the stored result
    finally:
        rt.close()
