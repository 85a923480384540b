"""Waiting on several calls at once: every one awaited before the first error is raised, so
none is left for Ray to report as an "Unhandled error" and no call is abandoned mid-flight.
A call is a Ray object ref or, on the process host, a future."""

from __future__ import annotations

import concurrent.futures as cf
import time


def get_one(ref, timeout: float | None = None):
    if isinstance(ref, cf.Future):
        return ref.result(timeout=timeout)
    import ray  # only a Ray ref comes here, so Ray is loaded already

    return ray.get(ref, timeout=timeout)


def timed_out(exc: BaseException) -> bool:
    """Whether ``exc`` is a wait that timed out (Ray's or a future's), not the call failing."""
    if isinstance(exc, cf.TimeoutError):
        return True
    import sys

    ray = sys.modules.get("ray")
    return ray is not None and isinstance(exc, ray.exceptions.GetTimeoutError)


def get_all(refs: list, timeout: float | None = None, get=get_one) -> list:
    """``get`` of each call in turn (within ``timeout`` seconds overall); the first error is
    raised once every call has finished or failed (a timeout is raised at once)."""
    deadline = None if timeout is None else time.monotonic() + timeout
    out, first = [], None
    for ref in refs:
        left = None if deadline is None else max(0.0, deadline - time.monotonic())
        try:
            out.append(get(ref, left))
        except Exception as exc:  # noqa: BLE001 - raised below, after the others are awaited
            if timed_out(exc):
                raise
            first = first or exc
            out.append(None)
    if first is not None:
        raise first
    return out
