"""Waiting on several Ray calls at once: every one awaited before the first error is raised, so
none is left for Ray to report as an "Unhandled error" and no call is abandoned mid-flight."""

from __future__ import annotations

import time

import ray


def get_all(refs: list, timeout: float | None = None) -> list:
    """``ray.get`` of each ref in turn (within ``timeout`` seconds overall); the first error
    is raised once every ref has finished or failed (a timeout is raised at once)."""
    deadline = None if timeout is None else time.monotonic() + timeout
    out, first = [], None
    for ref in refs:
        left = None if deadline is None else max(0.0, deadline - time.monotonic())
        try:
            out.append(ray.get(ref, timeout=left))
        except ray.exceptions.GetTimeoutError:
            raise
        except Exception as exc:  # noqa: BLE001 - raised below, after the others are awaited
            first = first or exc
            out.append(None)
    if first is not None:
        raise first
    return out
