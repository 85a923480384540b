"""A fact's history (``Ledger.fact_history``) as a reader is shown it, by its clearance in the
fact's scope (docs/governance.md: every read that shows a memory's record is bounded by it).
Pure: no I/O.
"""

from __future__ import annotations

import re

from . import events as E

# What stands in a shown event's reason for the id of a version the reader is not shown ("superseded
# by <id>: updated", "an update of <id>", "contradicted by <id>", ...): the change is kept, the pointer not.
WITHHELD = "a version not shown"
_ID = re.compile(r"\b[0-9a-f]{32}\b")
_LINKS = ("supersedes",)  # fields of a record (or a patch) naming one other memory
_LINK_LISTS = ("derived_from", "copy_of", "context_of")  # and naming several


def cleared(out: dict, sees: frozenset[str], memory_id: str | None) -> dict | None:
    """``out`` without the versions above the reader's clearance in its scope (``sees``): for
    that reader they are not there (a recall would not show them either), nor are the pointers
    to them that the versions it is shown carry (their events' reasons, their records' and
    patches' links). None when the version asked for is one of them or nothing is left. An
    erased version (its record gone with its key) is judged by the sensitivity its tombstone kept."""
    level = {m: r.get("sensitivity") for m, r in out["records"].items() if r is not None}
    for e in out["events"]:  # an erased version: the sensitivity its tombstone kept (older ones kept none)
        kept = (e["patch"] or {}).get("sensitivity") if e["action"] == E.FORGET else None
        if kept and out["records"].get(e["memory_id"]) is None:
            level[e["memory_id"]] = kept
    hidden = {m for m, v in level.items() if v not in sees}
    if not hidden:
        return out
    ids = [m for m in out["ids"] if m not in hidden]
    if memory_id in hidden or not ids:
        return None
    return {**out, "ids": ids, "records": {m: _unlinked(out["records"][m], hidden) for m in ids},
            "events": [dict(e, reason=_elided(e["reason"], hidden), patch=_unlinked(e["patch"], hidden))
                       for e in out["events"] if e["memory_id"] not in hidden]}


def _elided(reason: str | None, hidden: set[str]) -> str | None:
    if not reason:
        return reason
    return _ID.sub(lambda m: WITHHELD if m.group(0) in hidden else m.group(0), reason)


def _unlinked(rec: dict | None, hidden: set[str]) -> dict | None:
    if not rec:
        return rec
    out = dict(rec)
    for k in _LINKS:
        if out.get(k) in hidden:
            out[k] = None
    for k in _LINK_LISTS:
        if out.get(k):
            out[k] = [m for m in out[k] if m not in hidden]
    return out
