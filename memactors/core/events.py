"""Ledger events: their canonical bytes and the sha256 chain (DESIGN section 8).

``hash = sha256(prev_hash || canonical(event))``. The canonical form is an orjson array in a
fixed field order, prefixed by the format version, so that it never depends on dict order or
on the database that stores it. The snapshot enters as stored: for memory content that is
AES-GCM ciphertext, so destroying the data key later never changes a hash.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import orjson

FORMAT_VERSION = 1
GENESIS = bytes(32)

# Actions a ledger event can record.
WRITE = "write"  # a new memory (vault); snapshot = encrypted record
WRITE_WORKING = "write_working"  # a new L1 working-pool item; snapshot = encrypted record
STATUS = "status"  # a memory's status changes (superseded, stale, evicted, ...); snapshot = the patch
REFRESH = "refresh"  # same content written again: TTL restarts; snapshot = the patch
MERGE = "merge"  # a near-copy merged into an existing memory; snapshot = the patch of the kept one
ANNOTATE = "annotate"  # flags and counters change (review flags, access counts); snapshot = the patch
BLOCK = "block"  # the gate refused a write; snapshot = rule ids and spans only
FORGET = "forget"  # erasure: tombstone; the memory's key is destroyed with it
GRANT = "grant"  # a grant changed; snapshot = the grant
MARK = "mark"  # a lifecycle pass's watermark (how far demotion looked); snapshot = the mark; no memory state

RECORD_WRITES = (WRITE, WRITE_WORKING)  # the events that make a memory
ACTIONS = (WRITE, WRITE_WORKING, STATUS, REFRESH, MERGE, ANNOTATE, BLOCK, FORGET, GRANT, MARK)
COLUMNS = ("seq", "ts", "scope", "action", "memory_id", "version", "actor", "reason", "encrypted", "snapshot",
           "idem_key", "format", "prev_hash", "hash")


@dataclass(slots=True)
class Event:
    """An event before it is chained: the ledger assigns seq, prev_hash and hash at commit."""

    ts: int
    scope: str
    action: str
    actor: str
    memory_id: str | None = None
    version: int | None = None
    reason: str | None = None
    encrypted: bool = False
    snapshot: bytes = b""
    idem_key: str | None = None


def _layout(seq: int, ts, scope, action, actor, memory_id, version, reason, encrypted, snapshot: bytes,
            idem_key) -> list:
    """The canonical field order: the one place it is written down."""
    return [FORMAT_VERSION, seq, ts, scope, action, memory_id, version, actor, reason, encrypted, snapshot.hex(),
            idem_key]


def canonical(seq: int, e: Event) -> bytes:
    return orjson.dumps(_layout(seq, e.ts, e.scope, e.action, e.actor, e.memory_id, e.version, e.reason,
                                e.encrypted, e.snapshot, e.idem_key))


def chain_hash(prev_hash: bytes, seq: int, e: Event) -> bytes:
    return hashlib.sha256(prev_hash + canonical(seq, e)).digest()


def chain(prev_hash: bytes, seq0: int, ts, scope, action, actor, memory_id, version, reason, encrypted, snapshot,
          idem_key) -> list[bytes]:
    """The hashes of consecutive events seq0+1, seq0+2, ... given as columns: each exactly
    ``chain_hash``'s, without an ``Event`` apiece (a sweep commits ~1M events at once)."""
    out, dumps, sha256, fmt = [], orjson.dumps, hashlib.sha256, FORMAT_VERSION
    add = out.append
    for seq, t, s, a, who, m, v, why, enc, snap, key in zip(range(seq0 + 1, seq0 + 1 + len(ts)), ts, scope, action,
                                                           actor, memory_id, version, reason, encrypted, snapshot,
                                                           idem_key):
        # ``_layout``'s order, written out: its call per event was a third of a sweep's chain
        # (tests/test_events.py holds the two equal, bit for bit).
        prev_hash = sha256(prev_hash + dumps([fmt, seq, t, s, a, m, v, who, why, enc, snap.hex(), key])).digest()
        add(prev_hash)
    return out


def blob(value) -> bytes:
    """A stored hash or snapshot as bytes; a NULL one (set by hand: the runtime never stores
    it) as empty bytes, which then fails the check it is in rather than crashing it."""
    return b"" if value is None else bytes(value)


def verify_rows(rows, prev_hash: bytes = GENESIS, expect_seq: int = 1) -> tuple[int | None, str, bytes, int]:
    """Walk rows (dicts with COLUMNS) in seq order. Return (first bad seq or None, why, last hash, next seq)."""
    for r in rows:
        seq = r["seq"]
        if seq != expect_seq:
            return (expect_seq, f"seq {expect_seq} is missing or out of order (found {seq})", prev_hash, expect_seq)
        if r["format"] != FORMAT_VERSION:
            return (seq, f"unknown format version {r['format']}", prev_hash, expect_seq)
        e = Event(
            ts=r["ts"], scope=r["scope"], action=r["action"], actor=r["actor"], memory_id=r["memory_id"],
            version=r["version"], reason=r["reason"], encrypted=r["encrypted"], snapshot=blob(r["snapshot"]),
            idem_key=r["idem_key"],
        )
        if blob(r["prev_hash"]) != prev_hash:
            return (seq, "prev_hash does not match the previous event's hash", prev_hash, expect_seq)
        h = chain_hash(prev_hash, seq, e)
        if blob(r["hash"]) != h:
            return (seq, "hash does not match the event's content", prev_hash, expect_seq)
        prev_hash = h
        expect_seq += 1
    return (None, "ok", prev_hash, expect_seq)
