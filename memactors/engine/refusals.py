"""What an owner answers for an operation the ledger did not append: its key used before for
another request, the commit failed, or it lost a race with a copy or an erasure of the same
memory once too often (``store.ledger_races``). Nothing of it was written."""

from __future__ import annotations

from ..core import errors
from ..core.errors import IdempotencyConflict, MemactorsError, Unavailable


def conflict(op) -> IdempotencyConflict:
    if "prepared" in op.GATHER:
        return IdempotencyConflict("this idempotency key was first used for a different write; nothing was written "
                                   "for it")
    return IdempotencyConflict("this idempotency key was first used for another request; nothing was done for it")


def typed(exc: BaseException) -> MemactorsError:
    """A failed ledger commit as the caller sees it (ports raise typed errors already). The
    ledger writer down or restarting is ``OwnerUnavailable``: callers retry it (same keys)."""
    if isinstance(exc, errors.OwnerUnavailable):
        return errors.OwnerUnavailable("the ledger writer is restarting; nothing of this batch is acknowledged: "
                                       "retry with the same idempotency keys")
    if isinstance(exc, MemactorsError):
        return exc
    return errors.StoreError(f"the ledger could not take this batch ({type(exc).__name__}); "
                             "retry with the same idempotency keys")


def raced() -> Unavailable:
    """An operation the ledger found stale ``STALE_TRIES`` times in a row (each time behind another commit)."""
    return Unavailable("a copy and an erasure of the same memory kept racing; nothing was done for this operation, "
                       "retry it")
