"""Write decisions against a scope's current state: versions and dedup (DESIGN section 7).

Pure: the owner holds a ``ScopeState`` per hot scope and asks ``decide_write`` what a write
does. The state changes only through ``memactors.core.project.apply``, for a decided change
as for one replayed from the ledger.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from . import records as R

US_PER_DAY = 86_400_000_000


@dataclass(slots=True)
class ScopeState:
    """The live and pending memories of one scope, indexed the ways decisions need, with
    their vectors (for the hot index). Superseded, evicted and erased records are not kept:
    they live on in L2 and the ledger."""

    records: dict[str, dict] = field(default_factory=dict)  # memory_id -> record (live or pending)
    by_entity: dict[str, str] = field(default_factory=dict)  # entity_key -> live id
    by_hash: dict[str, str] = field(default_factory=dict)  # content_hash -> live text-only id
    entity_version: dict[str, int] = field(default_factory=dict)  # entity_key -> highest version seen
    vectors: dict[str, np.ndarray] = field(default_factory=dict)  # memory_id -> unit vector
    # (ids, stacked vectors) of text-only live memories as some earlier state held them, for
    # semantic dedup (actors.hot.NearCopies checks it against by_hash before trusting it).
    near_cache: tuple | None = field(default=None, compare=False, repr=False)

    def copy(self) -> ScopeState:
        """A copy to change and swap in whole: indexes copied, records and vectors shared
        (records are replaced, never edited in place)."""
        return ScopeState(dict(self.records), dict(self.by_entity), dict(self.by_hash), dict(self.entity_version),
                          dict(self.vectors), self.near_cache)

    def get(self, memory_id: str) -> dict | None:
        return self.records.get(memory_id)

    def put(self, rec: dict, vector: np.ndarray | None = None) -> None:
        if rec.get("pool") == "working":  # L1 items live in the working pool, not in the vault's state
            return
        mid = rec["memory_id"]
        key = rec.get("entity_key")
        old = self.records.get(mid)
        if old is not None:
            self._unindex(old)
        if key is not None:
            self.entity_version[key] = max(self.entity_version.get(key, 0), int(rec["version"]))
        if vector is not None:
            self.vectors[mid] = vector
        status = rec["status"]
        if status in R.LIVE:
            self.records[mid] = rec
            if key is not None:
                self.by_entity[key] = mid
            else:
                self.by_hash[rec["content_hash"]] = mid
        elif status == "pending":
            self.records[mid] = rec
        else:  # superseded, evicted, erased: out of the hot state
            self.records.pop(mid, None)
            self.vectors.pop(mid, None)

    def _unindex(self, rec: dict) -> None:
        mid = rec["memory_id"]
        key = rec.get("entity_key")
        if key is not None and self.by_entity.get(key) == mid:
            del self.by_entity[key]
        if self.by_hash.get(rec["content_hash"]) == mid:
            del self.by_hash[rec["content_hash"]]

    def remove(self, memory_id: str) -> dict | None:
        rec = self.records.pop(memory_id, None)
        self.vectors.pop(memory_id, None)
        if rec is not None:
            self._unindex(rec)
        return rec

    def live(self) -> list[dict]:
        return [r for r in self.records.values() if r["status"] in R.LIVE]

    def has_live(self) -> bool:
        return bool(self.by_entity or self.by_hash)


@dataclass(slots=True)
class Decision:
    """What a write does: the decision, the new or refreshed record, and the records it changes."""

    decision: str
    record: dict | None  # the new or refreshed record, as it will be stored
    changed: list[dict] = field(default_factory=list)  # other records whose status changes
    judged: str | None = None  # the judge that decided a close call, if one did

    @property
    def records(self) -> list[dict]:
        return ([self.record] if self.record is not None else []) + self.changed


@dataclass(frozen=True, slots=True)
class Rules:
    """The lifecycle settings a write decision needs ([lifecycle] in the config)."""

    refresh_bump: float = 0.05  # a refresh raises confidence by this (capped at 1)
    contradiction_gap: float = 0.2  # a different source: a confidence gap above this decides alone
    explicit_ttl: bool = False  # the write set its own TTL (a new version then keeps it)


def decide_write(state: ScopeState, rec: dict, now_us: int, rules: Rules = Rules(), near=None,
                 judge=None) -> Decision:
    """Decide a new record (status 'active' or 'pending', version unset) against ``state``.

    Entity writes (subject + predicate), against the live version of the fact:
    - same object and content: refreshed (TTL restarts, confidence rises);
    - the same source kind (the same voice updating itself): confidence >= the live one's ->
      version n+1, the old one superseded, its TTL policy inherited (unless the write set its
      own); lower -> kept as superseded (recorded, never recalled);
    - another source (a contradiction): a confidence gap above ``contradiction_gap`` decides
      (the stronger is live, the other superseded); a closer call keeps both live, each
      flagged ``review = "contradiction"`` for a reviewer (``rt.contradictions``).
    Text-only writes: the same normalised content as a live one -> refreshed; a vector within
    ``near`` (cosine at or above [lifecycle].dedup_cosine, found by the caller) -> merged.
    """
    key = rec.get("entity_key")
    if rec["status"] == "pending":
        rec["version"] = (state.entity_version.get(key, 0) + 1) if key else 1
        return Decision(R.PENDING, rec)
    if key is None:
        existing_id = state.by_hash.get(rec["content_hash"])
        if existing_id is not None:
            return Decision(R.REFRESHED, refreshed(state.records[existing_id], now_us, rules.refresh_bump))
        similar = near(rec) if near is not None else None
        if similar is not None and similar in state.records:
            return Decision(R.MERGED, refreshed(state.records[similar], now_us, rules.refresh_bump))
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
        return Decision(R.REFRESHED, refreshed(old, now_us, rules.refresh_bump))
    gap = float(rec["confidence"]) - float(old["confidence"])
    if rec["source_kind"] != old["source_kind"] and abs(gap) <= rules.contradiction_gap:
        verdict = judge.decide(old, rec) if judge is not None else None
        if verdict == "incoming":
            rec["supersedes"] = old["memory_id"]
            return Decision(R.SUPERSEDED_PREVIOUS, rec, [dict(old, status="superseded", updated_at=now_us)],
                            judged=judge.name)
        if verdict == "live":
            rec["status"] = "superseded"
            return Decision(R.KEPT_AS_SUPERSEDED, rec, judged=judge.name)
        rec["review"] = CONTRADICTION_FLAG
        flagged = dict(old, review=CONTRADICTION_FLAG)
        return Decision(R.CONTRADICTION, rec, [flagged])
    if gap >= 0 if rec["source_kind"] == old["source_kind"] else gap > rules.contradiction_gap:
        rec["supersedes"] = old["memory_id"]
        if not rules.explicit_ttl:
            _inherit_ttl(rec, old, now_us)
        replaced = dict(old, status="superseded", updated_at=now_us)
        return Decision(R.SUPERSEDED_PREVIOUS, rec, [replaced])
    rec["status"] = "superseded"
    return Decision(R.KEPT_AS_SUPERSEDED, rec)


CONTRADICTION_FLAG = "contradiction"


def _inherit_ttl(rec: dict, old: dict, now_us: int) -> None:
    """A new version keeps the TTL policy of the one it supersedes (measured from now)."""
    for days, at in (("soft_ttl_days", "soft_expires_at"), ("hard_ttl_days", "hard_expires_at")):
        rec[days] = old.get(days)
        rec[at] = None if old.get(days) is None else now_us + int(old[days] * US_PER_DAY)


def refreshed(old: dict, now_us: int, bump: float = 0.0) -> dict:
    """The record written again: the TTL clock restarts from now (expiry is measured from
    ``updated_at``) and confidence rises by ``bump`` (capped at 1)."""
    rec = dict(old, updated_at=now_us)
    for days, at in (("soft_ttl_days", "soft_expires_at"), ("hard_ttl_days", "hard_expires_at")):
        if rec.get(days):
            rec[at] = now_us + int(rec[days] * US_PER_DAY)
    if bump:
        rec["confidence"] = min(1.0, float(rec["confidence"]) + bump)
    return rec


def refresh_patch(old: dict, new: dict) -> dict:
    """The fields a refresh changes (what its ledger event carries)."""
    return {k: new[k] for k in ("updated_at", "soft_expires_at", "hard_expires_at", "confidence")
            if new.get(k) != old.get(k) or k == "updated_at"}
