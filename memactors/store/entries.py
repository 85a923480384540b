"""What the ledger stores for one operation, and how it travels there (DESIGN section 8).

An ``Entry`` is the changes one operation made (``memactors.core.project.Change``), with its
idempotency key, its request fingerprint and the result a retry gets back: committed together
or not at all. Entries cross from an owner to the ledger writer as one columnar batch
(``encode``: plain lists and bytes, cheap to pickle), never as per-event objects. The ledger
writer seals record payloads (``seal``: a fresh AES-256-GCM data key per memory) before they
are chained; ``decode`` turns a stored event back into the change it meant (``unseal`` with
its key; None content once the key is destroyed).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import orjson
from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from ..core import events as E
from ..core import records as R
from ..core.erasure import edges_of
from ..core.errors import LedgerTampered
from ..core.project import RECORD_ACTIONS, Change

NONCE = 12
KEY = 32
_TOMBSTONE = orjson.dumps({"status": "tombstoned"})


@dataclass(slots=True)
class Entry:
    """The ledger events of one operation."""

    idem_key: str
    actor: str
    ts: int
    changes: list[Change]
    result: bytes  # what a retry with the same key gets back (orjson)
    fingerprint: bytes | None = None  # keyed digest of the request: a reused key with another request conflicts
    destroy_keys: list[str] = field(default_factory=list)  # data keys that die with this entry (erasure)
    l2: list[bool] | None = None  # per change: does L2 still have to apply it? (None: none of them)
    # What the decision read outside its scopes' locks, checked again at commit (``ledger_races``):
    live_read: list[str] | None = None  # memories it read as live (a promotion's source)
    edges_read: list | None = None  # the provenance edges its erasure follows, as it read them
    # A sweep's erasures: their keys named in ``erasing`` with the tombstones, deleted at the
    # sweep's end (``Ledger.finish_erasures``), not by a delete in every commit.
    keys_later: bool = False


def _payload(ch: Change, patches: dict[int, bytes]) -> bytes:
    """A change's payload. ``patches``: those dumped so far in this batch, by the patch's id (a
    sweep's thousands of changes share a few patch dicts, alive all along: an id is never reused)."""
    if ch.record is not None:
        return orjson.dumps(ch.record)
    if ch.action == E.FORGET:  # the erased memory's sensitivity with it, if known (older ones: none)
        return _TOMBSTONE if not ch.patch or set(ch.patch) == {"status"} else orjson.dumps(ch.patch)
    if ch.patch is None:
        return orjson.dumps(ch.data or {})
    p = patches.get(id(ch.patch))
    if p is None:
        p = patches[id(ch.patch)] = orjson.dumps(ch.patch)
    return p


def prov_record(ch: Change) -> dict | None:
    """What of a change the provenance index holds: a record's links, or the copy a patch names
    (a working item folded into the vault memory a promotion refreshed); None: no link."""
    if ch.record is not None:
        rec = ch.record
        return rec if rec.get("derived_from") or rec.get("copy_of") or rec.get("context_of") else None
    if ch.patch and ch.patch.get("copy_of") and ch.memory_id is not None:
        return {"memory_id": ch.memory_id, "copy_of": ch.patch["copy_of"]}
    return None


def encode(entries: list[Entry]) -> dict:
    """Entries as columns: item columns, and event columns with the index of their item."""
    out = {"idem_key": [], "fingerprint": [], "result": [], "destroy": [], "keys_later": [], "n_events": [],
           "ts": [], "scope": [], "action": [], "memory_id": [], "version": [], "actor": [], "reason": [],
           "payload": [], "l2": [], "prov": [], "live_read": [], "edges_read": []}
    patches: dict[int, bytes] = {}  # dumped once each (``_payload``)
    for e in entries:
        out["idem_key"].append(e.idem_key)
        out["fingerprint"].append(e.fingerprint)
        out["result"].append(e.result)
        out["destroy"].append(list(e.destroy_keys))
        out["keys_later"].append(e.keys_later)
        out["n_events"].append(len(e.changes))
        out["live_read"].append(e.live_read)
        out["edges_read"].append(e.edges_read)
        for i, ch in enumerate(e.changes):
            out["ts"].append(e.ts)
            out["scope"].append(ch.scope)
            out["action"].append(ch.action)
            out["memory_id"].append(ch.memory_id)
            out["version"].append(ch.version)
            out["actor"].append(e.actor)
            out["reason"].append(ch.reason)
            out["payload"].append(_payload(ch, patches))
            out["l2"].append(bool(e.l2[i]) if e.l2 is not None else False)
            linked = prov_record(ch)
            if linked is not None:
                # The ledger's provenance index (ids only, in clear), by the index of its event.
                out["prov"].extend((len(out["ts"]) - 1, *edge) for edge in edges_of(linked))
    return out


_ITEM_COLUMNS = ("idem_key", "fingerprint", "result", "destroy", "keys_later", "n_events", "live_read", "edges_read")
_EVENT_COLUMNS = ("ts", "scope", "action", "memory_id", "version", "actor", "reason", "payload", "l2")
EMPTY: dict = {k: [] for k in (*_ITEM_COLUMNS, *_EVENT_COLUMNS, "prov")}


def merge(batches: list[dict]) -> dict:
    """Several callers' batches as one (the ledger writer's group commit)."""
    if len(batches) == 1:
        return batches[0]
    out = {k: [v for b in batches for v in b.get(k) or [None] * len(b["idem_key"])] for k in _ITEM_COLUMNS}
    out.update({k: [v for b in batches for v in b[k]] for k in _EVENT_COLUMNS})
    out["prov"], base = [], 0
    for b in batches:  # provenance rows name their event by its index in the merged batch
        out["prov"].extend((i + base, *rest) for i, *rest in b.get("prov", ()))
        base += len(b["ts"])
    return out


def seal_all(actions: list[str], memory_ids: list[str | None], payloads: list[bytes]
             ) -> tuple[list[bytes], list[bool], list[str], list[bytes]]:
    """Seal the record payloads of a batch: each record event gets a fresh data key. Returns
    (snapshots, encrypted flags, key memory ids, keys)."""
    todo = [i for i, a in enumerate(actions) if a in RECORD_ACTIONS]
    snapshots, encrypted = list(payloads), [False] * len(payloads)
    if not todo:
        return snapshots, encrypted, [], []
    rnd = os.urandom(len(todo) * (KEY + NONCE))  # one syscall for every key and nonce
    key_ids, keys = [], []
    for j, i in enumerate(todo):
        base = j * (KEY + NONCE)
        key, nonce = rnd[base:base + KEY], rnd[base + KEY:base + KEY + NONCE]
        mid = memory_ids[i]
        snapshots[i] = nonce + AESGCM(key).encrypt(nonce, payloads[i], mid.encode())
        encrypted[i] = True
        key_ids.append(mid)
        keys.append(key)
    return snapshots, encrypted, key_ids, keys


def unseal(key: bytes, blob: bytes, memory_id: str) -> bytes:
    try:
        return AESGCM(key).decrypt(blob[:NONCE], blob[NONCE:], memory_id.encode())
    except (InvalidTag, ValueError, TypeError):  # a key or ciphertext changed by hand, not a crash
        raise LedgerTampered(f"memory {memory_id}'s record does not open under its data key: the keys table or "
                             "the event was changed outside memactors") from None


def decode(action: str, scope: str, memory_id: str | None, reason: str | None, encrypted: bool, snapshot: bytes,
           key: bytes | None, version: int | None = None) -> Change | None:
    """The change a stored event meant. A record whose data key was destroyed decodes to
    None (its erasure follows in the ledger)."""
    if action in RECORD_ACTIONS:
        if not encrypted or key is None:
            return None
        return Change(action, scope, memory_id, record=R.complete(orjson.loads(unseal(key, snapshot, memory_id))),
                      reason=reason)
    body = orjson.loads(snapshot) if snapshot else {}
    if action in (E.BLOCK, E.GRANT, E.MARK):
        return Change(action, scope, memory_id, data=body, reason=reason)
    return Change(action, scope, memory_id, patch=body, reason=reason, of_version=version)


def fold_rows(events) -> list[dict]:
    """The L2 rows whole memories' events (an Arrow table of ``action, scope, memory_id, reason,
    encrypted, snapshot, key``, in seq order) fold into through the one projection: what a
    rebuild writes, and what ``audit.verify`` compares L2 with."""
    from ..core.project import Rows, apply

    rows = Rows()
    cols = {c: events.column(c).to_pylist() for c in events.column_names}
    for i in range(events.num_rows):
        ch = decode(cols["action"][i], cols["scope"][i], cols["memory_id"][i], cols["reason"][i],
                    cols["encrypted"][i], cols["snapshot"][i] or b"", cols["key"][i])
        if ch is not None:
            apply(rows, ch)
    return rows.l2_rows()
