"""Turning write decisions into ledger items: encrypted snapshots, data keys, status events.

Content enters the ledger only as AES-GCM ciphertext under the memory's own key; blocked
writes enter only as the gate's summary (rule ids, spans), never the text.
"""

from __future__ import annotations

import orjson

from ..core import events as E
from ..core import records as R
from ..core.versions import Decision
from ..store import cipher
from ..store.ledger import Item


def snapshot_of(rec: dict) -> bytes:
    return orjson.dumps({k: rec.get(k) for k in R.PUBLIC_FIELDS})


def sealed_write(rec: dict, actor: str, action: str, idem_key: str) -> tuple[E.Event, bytes]:
    key = cipher.new_key()
    blob = cipher.seal(key, snapshot_of(rec), rec["memory_id"].encode())
    ev = E.Event(
        ts=rec["updated_at"], scope=rec["scope"], action=action, actor=actor, memory_id=rec["memory_id"],
        version=rec["version"], encrypted=True, snapshot=blob, idem_key=idem_key,
    )
    return ev, key


def decision_item(d: Decision, actor: str, idem_key: str, result: dict, now_us: int) -> Item:
    events, keys = [], {}
    if d.decision == R.REFRESHED:
        r = d.record
        events.append(E.Event(ts=now_us, scope=r["scope"], action=E.REFRESH, actor=actor, memory_id=r["memory_id"],
                              version=r["version"], snapshot=orjson.dumps({"updated_at": now_us}), idem_key=idem_key))
    else:
        ev, key = sealed_write(d.record, actor, E.WRITE, idem_key)
        events.append(ev)
        keys[d.record["memory_id"]] = key
    for old in d.changed:
        events.append(E.Event(ts=now_us, scope=old["scope"], action=E.STATUS, actor=actor, memory_id=old["memory_id"],
                              version=old["version"], reason=f"superseded by {d.record['memory_id']}",
                              snapshot=orjson.dumps({"status": old["status"], "updated_at": now_us}), idem_key=idem_key))
    return Item(idem_key, orjson.dumps(result), events, keys, [])


def review_item(d: Decision, memory_id: str, actor: str, reason: str, idem_key: str, result: dict,
                now_us: int) -> Item:
    """An approval: status events only (the content is already in the ledger, under its key)."""
    events = []
    for r in d.records:
        why = f"approved in review: {reason}" if r["memory_id"] == memory_id else f"review of {memory_id}"
        events.append(E.Event(ts=now_us, scope=r["scope"], action=E.STATUS, actor=actor, memory_id=r["memory_id"],
                              version=r["version"], reason=why,
                              snapshot=orjson.dumps({"status": r["status"], "updated_at": now_us,
                                                     "version": r["version"], "supersedes": r.get("supersedes")}),
                              idem_key=idem_key))
    return Item(idem_key, orjson.dumps(result), events, {}, [])


def working_item(rec: dict, actor: str, idem_key: str, result: dict) -> Item:
    ev, key = sealed_write(rec, actor, E.WRITE_WORKING, idem_key)
    return Item(idem_key, orjson.dumps(result), [ev], {rec["memory_id"]: key}, [], applied=True)


def blocked_item(scope: str, actor: str, gate_summary: dict, idem_key: str, result: dict, now_us: int) -> Item:
    ev = E.Event(ts=now_us, scope=scope, action=E.BLOCK, actor=actor, reason="blocked by the write gate",
                 snapshot=orjson.dumps(gate_summary), idem_key=idem_key)
    return Item(idem_key, orjson.dumps(result), [ev], {}, [], applied=True)


def forget_item(scope: str, memory_id: str, actor: str, reason: str, idem_key: str, result: dict, now_us: int) -> Item:
    ev = E.Event(ts=now_us, scope=scope, action=E.FORGET, actor=actor, memory_id=memory_id, reason=reason,
                 snapshot=orjson.dumps({"status": "tombstoned"}), idem_key=idem_key)
    return Item(idem_key, orjson.dumps(result), [ev], {}, [memory_id])


def grant_item(grant: dict, by: str, idem_key: str, now_us: int) -> Item:
    ev = E.Event(ts=now_us, scope=grant["scope"], action=E.GRANT, actor=by, reason="grant changed",
                 snapshot=orjson.dumps(grant), idem_key=idem_key)
    return Item(idem_key, orjson.dumps(grant), [ev], {}, [], applied=True)
