"""How a batch of writes is sent to the owners: items per owner call, the writes as columns,
and the items an owner refused one by one as a typed error."""

from __future__ import annotations

import secrets

from ..core import errors
from ..core import records as R


class PartOrders:
    """The order of one call's parts to each owner (``engine.turns``), tagged as each is sent:
    ``(token, position, count, low)``, every part below ``low`` seen to end here, so a part
    resent to an owner that restarted meanwhile does not wait for those. A part that failed
    without an answer is released at its owner: the later ones do not wait for it."""

    def __init__(self, counts: dict[int, int], calls, owners: list, now: int) -> None:
        self.token = secrets.token_hex(8)
        self._count = counts  # owner index -> its parts
        self._calls, self._owners, self._now = calls, owners, now
        self._low = dict.fromkeys(counts, 0)
        self._ended: dict[int, set[int]] = {oi: set() for oi in counts}

    def tag(self, oi: int, pos: int) -> tuple | None:
        n = self._count[oi]
        return (self.token, pos, n, self._low[oi]) if n > 1 else None

    def ended(self, oi: int, pos: int) -> None:
        done = self._ended[oi]
        done.add(pos)
        while self._low[oi] in done:
            done.discard(self._low[oi])
            self._low[oi] += 1

    def release(self, oi: int, pos: int) -> None:
        tag = self.tag(oi, pos)
        self.ended(oi, pos)
        calls = self._calls
        if tag is not None and not (calls.closed or calls.gone):  # (a closed runtime's owners are gone)
            try:  # not waited for: at worst the later parts wait their bounded time
                calls.host.send_writes(self._owners[oi], [], self._now, tag)
            except errors.MemactorsError:
                pass


def batch_max(rc) -> int:
    """Items per owner call: ``write_batch_max``, and at most half an owner's queue (room left
    for other callers)."""
    return max(1, min(rc.write_batch_max, rc.owner_queue_max // 2))


def columns(reqs: list[R.WriteRequest]) -> dict:
    """Writes as columns for the owner (only the fields some write sets; the rest default)."""
    names = [k for k in R.WriteRequest.__dataclass_fields__
             if k in ("scope", "text", "actor") or any(getattr(r, k) != _DEFAULT[k] for r in reqs)]
    return {k: [getattr(r, k) for r in reqs] for k in names}


_DEFAULT = {k: f.default for k, f in R.WriteRequest.__dataclass_fields__.items()}


def as_result(d: dict):
    """An owner's answer for one write: a ``WriteResult``, or its encoded error as it came."""
    return d if errors.is_encoded(d) else R.WriteResult(**d)


def direct_write(client, reqs: list[R.WriteRequest], now: int) -> list | None:
    """A few writes to one owner over the Ray host's direct path (``actors.hot_socket``): its
    answers, or None when the path is not there (the plain call follows, the same keys; the
    process host's cores take every call directly already). A refusal of the whole call raises
    as it would from the plain call; back pressure and a restarting owner are left to the plain
    call's waiting."""
    write = getattr(client, "write", None)
    if write is None:
        return None
    try:
        return write(columns(reqs), now)
    except (errors.BackPressure, errors.OwnerUnavailable):
        return None


def raise_item_errors(results: list, reqs: list | None = None) -> None:
    """Items an owner refused one by one (an idempotency key reused for another write, a
    grant beyond reach) raise their typed error; ``err.results`` holds what the other items
    did (None for the refused ones) and ``err.failed`` the refused positions."""
    failed = [i for i, r in enumerate(results) if errors.is_encoded(r)]
    if not failed:
        return
    first = results[failed[0]]
    err = errors.decode(first)
    if len(results) > 1:
        err = type(err)(f"{len(failed)} of {len(results)} items were refused (first at position {failed[0]}: "
                        f"{first['message']}); the others were written")
    err.results = [None if errors.is_encoded(r) else r for r in results]
    err.failed = failed
    if reqs is not None:
        err.items = [R.request_fields(reqs[i]) for i in failed]
    raise err
