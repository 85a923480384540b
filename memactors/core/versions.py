"""Write decisions against a scope's current state: versions and dedup (DESIGN section 7).

Pure: the owner holds a ``ScopeState`` per scope and asks ``decide`` what a write does. The
state is changed only by ``apply``, after the ledger has committed the write's events.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from . import records as R


@dataclass(slots=True)
class ScopeState:
    """Active memories of one scope, indexed the ways decisions need."""

    records: dict[str, dict] = field(default_factory=dict)  # memory_id -> record (active, pending, kept)
    by_entity: dict[tuple[str, str], str] = field(default_factory=dict)  # (subject, predicate) -> active id
    by_hash: dict[str, str] = field(default_factory=dict)  # content_hash -> active text-only id
    entity_version: dict[tuple[str, str], int] = field(default_factory=dict)  # highest version seen

    def put(self, rec: dict) -> None:
        mid = rec["memory_id"]
        self.records[mid] = rec
        key = entity_key(rec)
        if key is not None:
            self.entity_version[key] = max(self.entity_version.get(key, 0), int(rec["version"]))
        if rec["status"] == "active":
            if key is not None:
                self.by_entity[key] = mid
            else:
                self.by_hash[rec["content_hash"]] = mid
        else:
            self._unindex(rec)
            if rec["status"] != "pending":
                # Superseded, tombstoned, evicted: out of the hot state (they live on in L2/the ledger).
                self.records.pop(mid, None)

    def _unindex(self, rec: dict) -> None:
        mid = rec["memory_id"]
        key = entity_key(rec)
        if key is not None and self.by_entity.get(key) == mid:
            del self.by_entity[key]
        if self.by_hash.get(rec["content_hash"]) == mid:
            del self.by_hash[rec["content_hash"]]

    def remove(self, memory_id: str) -> dict | None:
        rec = self.records.pop(memory_id, None)
        if rec is not None:
            self._unindex(rec)
        return rec

    def active(self) -> list[dict]:
        return [r for r in self.records.values() if r["status"] == "active"]


def entity_key(rec: dict) -> tuple[str, str] | None:
    if rec.get("subject") is None:
        return None
    return (R.normalise(rec["subject"]), R.normalise(rec["predicate"]))


@dataclass(slots=True)
class Decision:
    """What a write does: the decision, the new record (if any) and the records it changes."""

    decision: str
    record: dict | None  # the new or refreshed record, as it will be stored
    changed: list[dict] = field(default_factory=list)  # other records whose status changes

    @property
    def records(self) -> list[dict]:
        return ([self.record] if self.record is not None else []) + self.changed


def decide(state: ScopeState, rec: dict, now_us: int) -> Decision:
    """Decide a new record (status 'active' or 'pending', version unset) against ``state``.

    - entity writes (subject + predicate): same object as the active one -> refreshed; confidence
      >= the active one's -> version n+1, old one superseded; lower -> kept as superseded.
    - text-only writes: same normalised content as an active one -> refreshed.
    """
    key = entity_key(rec)
    if rec["status"] == "pending":
        rec["version"] = (state.entity_version.get(key, 0) + 1) if key else 1
        return Decision(R.PENDING, rec)
    if key is None:
        existing_id = state.by_hash.get(rec["content_hash"])
        if existing_id is not None:
            return Decision(R.REFRESHED, _refreshed(state.records[existing_id], now_us))
        rec["version"] = 1
        return Decision(R.ACCEPTED, rec)
    existing_id = state.by_entity.get(key)
    rec["version"] = state.entity_version.get(key, 0) + 1
    if existing_id is None:
        return Decision(R.ACCEPTED, rec)
    old = state.records[existing_id]
    if R.normalise(old.get("object") or "") == R.normalise(rec.get("object") or "") and (
        old["content_hash"] == rec["content_hash"]
    ):
        return Decision(R.REFRESHED, _refreshed(old, now_us))
    if rec["confidence"] >= old["confidence"]:
        rec["supersedes"] = old["memory_id"]
        replaced = dict(old, status="superseded", updated_at=now_us)
        return Decision(R.SUPERSEDED_PREVIOUS, rec, [replaced])
    rec["status"] = "superseded"
    return Decision(R.KEPT_AS_SUPERSEDED, rec)


def _refreshed(old: dict, now_us: int) -> dict:
    return dict(old, updated_at=now_us)
