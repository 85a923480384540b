"""Write decisions against a scope's current state: versions and dedup (DESIGN section 7).

Pure: the owner holds a ``ScopeState`` per hot scope and asks ``decide_write`` what a write
does. The state changes only through ``memactors.core.project.apply``, for a decided change
as for one replayed from the ledger.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from . import records as R
from .contradictions import cue_keys, may_oppose, say_other_things, text_contradiction, verdict_of

US_PER_DAY = 86_400_000_000


_GONE = object()  # a key a Layer removed
_MISS = object()


class Layer:
    """A dict's changes kept beside it, the dict untouched until ``commit``: a batch stages a
    scope (``ScopeState.stage``) in time and memory proportional to what it changes, never
    to the scope (a whole copy per batch made decide grow with the memories of a scope).

    Reads see ``base`` through ``top``; a key removed then set again moves to the end, as in
    a dict, so iteration order (ties in a ranking) is what the same edits of a copy would give."""

    __slots__ = ("base", "top", "moved")

    def __init__(self, base) -> None:
        self.base, self.top, self.moved = base, {}, None

    def get(self, k, default=None):
        v = self.top.get(k, _MISS)
        if v is _MISS:
            return self.base.get(k, default)
        return default if v is _GONE else v

    def __getitem__(self, k):
        v = self.top.get(k, _MISS)
        if v is _MISS:
            return self.base[k]
        if v is _GONE:
            raise KeyError(k)
        return v

    def __contains__(self, k) -> bool:
        v = self.top.get(k, _MISS)
        return k in self.base if v is _MISS else v is not _GONE

    def __setitem__(self, k, v) -> None:
        top = self.top
        if top.get(k) is _GONE:  # removed, now back: at the end, as a dict would have it
            del top[k]
            if self.moved is None:
                self.moved = set()
            self.moved.add(k)
        top[k] = v

    def __delitem__(self, k) -> None:
        if k not in self:
            raise KeyError(k)
        self.top[k] = _GONE

    def pop(self, k, *default):
        v = self.get(k, _MISS)
        if v is _MISS:
            if default:
                return default[0]
            raise KeyError(k)
        self.top[k] = _GONE
        return v

    def _order(self):
        top, moved = self.top, self.moved or ()
        for k in self.base:
            v = top.get(k, _MISS)
            if v is _MISS:
                yield k
            elif v is not _GONE and k not in moved:
                yield k
        base = self.base
        for k, v in top.items():
            if v is not _GONE and (k in moved or k not in base):
                yield k

    def __iter__(self):
        return iter(self.keys())

    def keys(self) -> list:
        return list(self.base) if not self.top else list(self._order())

    def values(self) -> list:
        if not self.top:
            return list(self.base.values())
        return [self[k] for k in self._order()]

    def items(self) -> list:
        return [(k, self[k]) for k in self.keys()]

    def __len__(self) -> int:
        base, n = self.base, len(self.base)
        for k, v in self.top.items():
            if k in base:
                n -= v is _GONE
            else:
                n += v is not _GONE
        return n

    def __bool__(self) -> bool:
        return len(self) > 0

    def added(self) -> list:
        """The values this layer set (removals left out)."""
        return [v for v in self.top.values() if v is not _GONE]

    def commit(self) -> None:
        """Write the changes into the base (O(changes))."""
        base, moved = self.base, self.moved or ()
        for k, v in self.top.items():
            if v is _GONE:
                base.pop(k, None)
            else:
                if k in moved:
                    base.pop(k, None)
                base[k] = v


@dataclass(slots=True)
class ScopeState:
    """The live and pending memories of one scope, indexed the ways decisions need, with
    their vectors (for the hot index). Superseded, evicted and erased records are not kept:
    they live on in L2 and the ledger.

    A batch decides against a staged state (``stage``: layers over this one's dicts) and, once
    its ledger group is durable, ``commit``s it into this one in place, under the hot cache's
    lock (readers on other threads build their hot index under it); ``gen`` counts commits."""

    records: dict[str, dict] = field(default_factory=dict)  # memory_id -> record (live or pending)
    by_entity: dict[str, str] = field(default_factory=dict)  # entity_key -> live id
    by_hash: dict[str, str] = field(default_factory=dict)  # content_hash -> live text-only id
    # entity_key -> ((version, memory_id), ...) sorted: the fact's versions on record (live, pending
    # or superseded). The next version is one above the highest; an erased or evicted version leaves
    # no trace, its number included, so a reload from L2 numbers exactly as the hot state did.
    versions: dict[str, tuple] = field(default_factory=dict)
    # entity_key -> the other live versions of a fact (by_entity holds the newest): while a
    # contradiction awaits review, or written by writers not cleared to see each other's
    # (``decide_write``); tuples, so a copy shares them. Usually empty.
    disputed: dict[str, tuple] = field(default_factory=dict)
    vectors: dict[str, np.ndarray] = field(default_factory=dict)  # memory_id -> unit vector
    # (ids, stacked vectors) of text-only live memories, for semantic dedup: a committed state's
    # covers every live text-only id (``commit`` drops one that does not; it may hold dead ones).
    near_cache: tuple | None = field(default=None, compare=False, repr=False)
    gen: int = field(default=0, compare=False, repr=False)  # commits so far (a hot index is of one gen)
    base: ScopeState | None = field(default=None, compare=False, repr=False)  # a staged state's
    # The live text-only memories' ``contradictions.cue_keys``, counted (key -> how many) and per
    # id: built when a text-only write is first decided here (``build_cues``), kept from then on.
    cues: dict | None = field(default=None, compare=False, repr=False)
    cue_of: dict | None = field(default=None, compare=False, repr=False)
    # memory_id -> entity_key of each version ``versions`` counts: a version no record here holds
    # (superseded, in L2 only) that a sweep evicts gives its number back as a reload would.
    key_of: dict = field(default_factory=dict, compare=False, repr=False)
    # memory_id -> sensitivity of each version ``versions`` counts: a writer numbers its fact's
    # versions among those it may see (``next_version``).
    level_of: dict = field(default_factory=dict, compare=False, repr=False)

    def stage(self) -> ScopeState:
        """A staged state: reads see this one, changes stay aside until ``commit`` (records
        are replaced, never edited in place, so they are shared)."""
        cues = None if self.cues is None else Layer(self.cues)
        cue_of = None if self.cue_of is None else Layer(self.cue_of)
        return ScopeState(Layer(self.records), Layer(self.by_entity), Layer(self.by_hash), Layer(self.versions),
                          Layer(self.disputed), Layer(self.vectors), self.near_cache, self.gen, self, cues, cue_of,
                          Layer(self.key_of), Layer(self.level_of))

    def commit(self) -> list[str]:
        """Write a staged state's changes into the state it was staged from. Returns the ids
        of the records it set or removed."""
        base, cache = self.base, self.near_cache
        if cache is not None and any(m not in cache.idset for m in self.by_hash.added()):
            cache = None  # a live text-only memory it does not hold (revived): stacked again when next needed
        for f in (self.records, self.by_entity, self.by_hash, self.versions, self.disputed, self.vectors, self.key_of,
                  self.level_of):
            f.commit()
        if isinstance(self.cues, Layer):
            self.cues.commit()
            self.cue_of.commit()
        elif self.cues is not None:  # built during this batch, over its staged records: now the state's
            base.cues, base.cue_of = self.cues, self.cue_of
        base.near_cache = cache
        base.gen += 1
        return list(self.records.top)

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
        status = rec["status"]
        if self.cues is not None:  # counted while live and text-only (a memory's content never changes)
            counted, counts = mid in self.cue_of, key is None and status in R.LIVE
            if counted and not counts:
                self._uncount(mid)
            elif counts and not counted:
                self._count(mid, rec)
        if key is not None:
            if status in R.GONE:
                self._release(key, {mid})
            else:
                self.hold_version(key, int(rec["version"]), mid, rec.get("sensitivity"))
        if vector is not None:
            self.vectors[mid] = vector
        if status in R.LIVE:
            self.records[mid] = rec
            if key is not None:
                newest = self.by_entity.get(key)
                if key not in self.disputed and (newest is None or newest == mid):  # the usual case
                    self.by_entity[key] = mid
                else:
                    self._index_live(key, self.live_ids(key) | {mid})
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
        if key is not None:
            if key not in self.disputed:  # the usual case: one live version, or none
                if self.by_entity.get(key) == mid:
                    del self.by_entity[key]
            else:
                self._index_live(key, self.live_ids(key) - {mid})
        if self.by_hash.get(rec["content_hash"]) == mid:
            del self.by_hash[rec["content_hash"]]

    def remove(self, memory_id: str) -> dict | None:
        rec = self.records.get(memory_id)
        self.remove_many([memory_id])
        return rec

    def remove_many(self, memory_ids: list[str]) -> None:
        """``remove`` of each id in turn (a sweep's evictions of one scope), with each fact's
        versions rebuilt once for all its ids, not once an id."""
        records, vectors, cue_of = self.records, self.vectors, self.cue_of
        released: dict[str, set] = {}
        for mid in memory_ids:
            rec = records.pop(mid, None)
            vectors.pop(mid, None)
            if cue_of is not None and mid in cue_of:
                self._uncount(mid)
            if rec is not None:
                self._unindex(rec)
                key = rec.get("entity_key")
            else:  # a superseded version, counted only
                key = self.key_of.get(mid)
            if key is not None:
                released.setdefault(key, set()).add(mid)
        for key, mids in released.items():
            self._release(key, mids)

    def next_version(self, key: str, sees: frozenset | None = None) -> int:
        """The version a new write of this fact gets: one above the highest on record (that
        ``sees``, the writer's view, holds: a version it may not see takes no number from it)."""
        held = self.versions.get(key)
        if not held:
            return 1
        if sees is None:
            return held[-1][0] + 1
        level_of = self.level_of
        return max((v for v, m in held if level_of.get(m) in sees), default=0) + 1

    def hold_version(self, key: str, version: int, memory_id: str, level: str | None = None) -> None:
        """Count ``version`` of the fact as on record (a superseded row L2 holds, or a record put),
        of sensitivity ``level``."""
        # Tuples, replaced never edited: a copy of the state shares them.
        if self.key_of.get(memory_id) != key:
            self.key_of[memory_id] = key
        if level is not None and self.level_of.get(memory_id) != level:
            self.level_of[memory_id] = level
        held = self.versions.get(key)
        if held is None:
            self.versions[key] = ((version, memory_id),)
        elif held[-1][0] < version:  # the usual case: a new highest version (no older pair of its id can be the top)
            self.versions[key] = (*held, (version, memory_id))
        elif held[-1] != (version, memory_id) and (version, memory_id) not in held:  # else: a patch, counted already
            self.versions[key] = tuple(sorted([*(p for p in held if p[1] != memory_id), (version, memory_id)]))

    def _release(self, key: str, memory_ids: set[str]) -> None:
        """These versions of the fact ``key`` are no longer on record: their numbers are free."""
        for m in memory_ids:
            self.key_of.pop(m, None)
            self.level_of.pop(m, None)
        held = self.versions.get(key)
        if held is None:
            return
        rest = tuple(p for p in held if p[1] not in memory_ids)
        if rest:
            self.versions[key] = rest
        else:
            del self.versions[key]

    def live_ids(self, key: str) -> set[str]:
        """The live versions of one fact: one, or several while a contradiction awaits review."""
        newest = self.by_entity.get(key)
        return ({newest} if newest is not None else set()) | set(self.disputed.get(key, ()))

    def live_versions(self, key: str) -> list[dict]:
        """The live records of one fact, newest first."""
        if key not in self.disputed:
            newest = self.by_entity.get(key)
            return [] if newest is None else [self.records[newest]]
        return sorted((self.records[m] for m in self.live_ids(key)), key=_newest_first)

    def _index_live(self, key: str, ids: set[str]) -> None:
        """Index the live versions of ``key``: the newest in ``by_entity`` (what a write decides
        against first), the rest in ``disputed``."""
        if not ids:
            self.by_entity.pop(key, None)
            self.disputed.pop(key, None)
            return
        newest = min(ids, key=lambda m: _newest_first(self.records[m]))
        self.by_entity[key] = newest
        rest = tuple(sorted(ids - {newest}))
        if rest:
            self.disputed[key] = rest
        else:
            self.disputed.pop(key, None)

    def build_cues(self) -> None:
        """Count the cue keys of every live text-only memory (once; ``put`` keeps them)."""
        self.cues, self.cue_of = {}, {}
        for rec in self.records.values():
            if rec.get("entity_key") is None and rec["status"] in R.LIVE:
                self._count(rec["memory_id"], rec)

    def _count(self, mid: str, rec: dict) -> None:
        keys = self.cue_of[mid] = cue_keys(rec["content"]) if rec.get("content") else ()
        for k in keys:
            self.cues[k] = self.cues.get(k, 0) + 1

    def _uncount(self, mid: str) -> None:
        for k in self.cue_of.pop(mid):
            n = self.cues[k] - 1
            if n:
                self.cues[k] = n
            else:
                del self.cues[k]

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

    refresh_bump: float = 0.05  # another source kind's refresh raises confidence by this (capped at 1)
    contradiction_gap: float = 0.2  # a different source: a confidence gap above this decides alone
    own_soft: bool = False  # the write states its soft TTL (soft_ttl_days)
    own_hard: bool = False  # the write states its hard TTL (ttl_days)
    copy: bool = False  # the runtime's copy of another memory (a promotion): its TTL is a cap, not a statement


def decide_write(state: ScopeState, rec: dict, now_us: int, rules: Rules = Rules(), near=None,
                 judge=None, similar=None, sees: frozenset | None = None) -> Decision:
    """Decide a new record (status 'active' or 'pending', version unset) against ``state``.

    Entity writes (subject + predicate), against the live version of the fact:
    - same object and content: refreshed (TTL restarts, confidence rises when another source kind confirms it);
    - the same source kind (the same voice updating itself): version n+1, the old one
      superseded, its TTL policy inherited (unless the write set its own); unless less
      confident by more than ``contradiction_gap`` -> kept as superseded (recorded, never recalled);
    - another source (a contradiction): a confidence gap above ``contradiction_gap`` decides
      (the stronger is live, the other superseded); a closer call keeps both live, each
      flagged ``review = "contradiction"`` for a reviewer (``rt.contradictions``).
    Text-only writes: the same normalised content as a live one -> refreshed; a live text-only
    memory close by (``similar``: ids at cosine >= [lifecycle].text_contradiction_cosine, found by
    the caller) that says the opposite (``core.contradictions.text_contradiction``: negation,
    antonym, changed value) -> the judge decides, or both stay live, flagged for review; else
    merged into the first of ``near``'s memories (cosine at or above [lifecycle].dedup_cosine,
    closest first) that says what it says.

    All of this against the memories the writer may see (``sees``: the sensitivities its
    clearance covers in the scope; None: all): one above it is as if absent (its fact's
    versions are numbered without it), so a write's outcome tells its writer nothing of it and
    never ends, refreshes or flags it. The two then stay live side by side, each seen by the
    readers cleared for it (a reader cleared for both sees both; its next write decides
    against both).
    """
    key = rec.get("entity_key")
    if rec["status"] == "pending":
        rec["version"] = state.next_version(key, sees) if key else 1
        return Decision(R.PENDING, rec)
    if key is None:
        existing_id = state.by_hash.get(rec["content_hash"])
        if existing_id is not None and (sees is None or state.records[existing_id]["sensitivity"] in sees):
            old = state.records[existing_id]
            return Decision(R.REFRESHED, written_again(old, rec, now_us, rules))
        rec["version"] = 1
        opposed = _text_contradictions(state, rec, similar, now_us)
        if sees is not None:
            opposed = [old for old in opposed if old["sensitivity"] in sees]
        if opposed:  # before the near-copy merge: "X is vegetarian" / "X is not vegetarian" are 0.97 apart
            return _text_close_calls(rec, opposed, now_us, judge)
        close = near(rec) if near is not None else None
        for close_by in [close] if isinstance(close, str) else close or ():  # closest first
            if close_by in state.records and not expired(state.records[close_by], now_us) \
                    and (sees is None or state.records[close_by]["sensitivity"] in sees) \
                    and not say_other_things(state.records[close_by].get("content") or "", rec.get("content") or ""):
                old = state.records[close_by]
                return Decision(R.MERGED, written_again(old, rec, now_us, rules))
        return Decision(R.ACCEPTED, rec)
    rec["version"] = state.next_version(key, sees)
    live = state.live_versions(key)
    if sees is not None:
        live = [old for old in live if old["sensitivity"] in sees]
    if not live:
        return Decision(R.ACCEPTED, rec)
    for old in live:
        if R.normalise(old.get("object") or "") == R.normalise(rec.get("object") or "") and (
            old["content_hash"] == rec["content_hash"]
        ):
            return _refreshed_side(written_again(old, rec, now_us, rules), live, now_us, rules)
    # Versions past their hard TTL take no part: the write supersedes them whatever its confidence
    # (else a weaker source's new value was kept as superseded behind a value no recall shows).
    gone = [dict(old, status="superseded", updated_at=now_us) for old in live if expired(old, now_us)]
    live = [old for old in live if not expired(old, now_us)]
    if not live:
        rec["supersedes"] = gone[0]["memory_id"]
        inherit_policy(rec, gone[0], now_us, rules)
        return Decision(R.SUPERSEDED_PREVIOUS, rec, gone)
    # Against every live version (several only while a close call awaits review): the write
    # loses to any -> kept as superseded; else it supersedes those it beats and stays flagged
    # beside those it ties with.
    beaten, close, judged, lost = [], [], None, False
    for old in live:
        outcome, by = _versus(old, rec, rules, judge)
        judged = by or judged
        if outcome == "lose":
            lost = True
        elif outcome == "beat":
            beaten.append((old, by))
        else:
            close.append(old)
    if lost:
        rec["status"] = "superseded"
        return Decision(R.KEPT_AS_SUPERSEDED, rec, judged=judged)
    changed = [dict(old, status="superseded", updated_at=now_us) for old, _ in beaten] + gone
    if beaten:
        newest, by = beaten[0]
        rec["supersedes"] = newest["memory_id"]
        if by is None:  # a judge's pick keeps its own TTL
            inherit_policy(rec, newest, now_us, rules)
    if close:
        rec["review"] = CONTRADICTION_FLAG
        changed += [dict(old, review=CONTRADICTION_FLAG) for old in close]
        return Decision(R.CONTRADICTION, rec, changed, judged=judged)
    return Decision(R.SUPERSEDED_PREVIOUS, rec, changed, judged=judged)


def _refreshed_side(new: dict, live: list[dict], now_us: int, rules: Rules) -> Decision:
    """A refresh of one side of a close call that lifts it more than ``contradiction_gap`` above
    a rival settles the call with that rival as a new value that sure would (the rival
    superseded; the flag cleared once no rival is left), else the call stays open."""
    if new.get("review") != CONTRADICTION_FLAG:
        return Decision(R.REFRESHED, new)
    rivals = [o for o in live if o["memory_id"] != new["memory_id"] and o.get("review") == CONTRADICTION_FLAG
              and not expired(o, now_us)]
    cut = rules.contradiction_gap + GAP_EPS
    beaten = [o for o in rivals if float(new["confidence"]) - float(o["confidence"]) > cut]
    if not beaten:
        return Decision(R.REFRESHED, new)
    if len(beaten) == len(rivals):
        new["review"] = None
    return Decision(R.REFRESHED, new, [dict(o, status="superseded", review=None, updated_at=now_us) for o in beaten])


def _versus(old: dict, rec: dict, rules: Rules, judge) -> tuple[str, str | None]:
    """How a write fares against one live version: "beat", "lose" or "close" (a contradiction
    for review), and the judge's name if a judge decided it."""
    gap = float(rec["confidence"]) - float(old["confidence"])
    if rec["source_kind"] == old["source_kind"]:
        # The same voice updating itself: its newest word stands unless markedly less sure (a
        # confirmation by another source raised the live one: that alone never locks a fact).
        return ("lose" if gap < -rules.contradiction_gap - GAP_EPS else "beat"), None
    if same_value(old, rec):
        # The same value in other words ("Paris" / "Paris, France" with object "paris") is no
        # contradiction, whatever the sources: the stronger one is the live version.
        return ("beat" if gap >= -GAP_EPS else "lose"), None
    if abs(gap) > rules.contradiction_gap + GAP_EPS:
        return ("beat" if gap > 0 else "lose"), None
    verdict = verdict_of(judge, "decide", old, rec)
    if verdict == "incoming":
        return "beat", judge.name
    if verdict == "live":
        return "lose", judge.name
    return "close", None


CONTRADICTION_FLAG = "contradiction"
# Confidences are float32 in L2 and sums of bumps in memory (0.65 + 0.05 = 0.7000000000000001):
# a gap within this of the cut is the cut, so a decision is the same hot, reopened or rebuilt.
GAP_EPS = 1e-6


def confirmation(rules: Rules, old: dict, rec: dict) -> float:
    """What a refresh adds to confidence: another source kind confirming the memory; the same
    voice repeating itself is no new evidence (a tool answering the same price ten times would
    otherwise outrank its own next price)."""
    return rules.refresh_bump if rec.get("source_kind") != old.get("source_kind") else 0.0


def written_again(old: dict, rec: dict, now_us: int, rules: Rules) -> dict:
    """``old`` refreshed by ``rec``, the same text or value written again: under the TTLs the
    write states (``own_policy``); confirmed by another source kind, at least as sure as that
    source plus ``refresh_bump`` (never more by echoes: a tool repeating a user's fact ten times
    lifts it once, so the user's own next value still stands)."""
    policy = own_policy(rules, rec, old)
    new = refreshed(old, now_us, confirmation(rules, old, rec), policy, float(rec["confidence"]))
    if policy is not None and renamed(old, rec):  # the same voice naming another category moves it
        new["category"] = rec["category"]
    return new


def renamed(old: dict, rec: dict) -> bool:
    """Whether a rewrite of ``old`` names another category. ``default`` is what a write that
    names none gets, so it never moves a memory out of its category."""
    cat = rec.get("category")
    return cat not in (None, "default") and cat != (old.get("category") or "default")


def own_policy(rules: Rules, rec: dict, old: dict | None = None) -> dict | None:
    """The TTLs a rewrite renews a memory under, only those it sets (None: the memory's own
    restart; always so for a promotion's copy or another source kind's rewrite): each TTL the
    write states; both of its new category's (as ``rec`` resolved them, the stated ones over the
    category's) when it names another category. A TTL it does not state keeps the memory's own
    (a soft TTL that would outlast the hard one is cut to it)."""
    if old is not None and (rules.copy or rec.get("source_kind") != old.get("source_kind")):
        # A promotion seen again, or another voice repeating the text: the memory renews under its
        # own policy. Neither may shorten it or move its category (a session's item with a 2-day
        # TTL, or a weaker source naming "observation", had a never-expiring fact erased).
        return None
    if old is not None and renamed(old, rec):
        return {"soft_ttl_days": rec.get("soft_ttl_days"), "hard_ttl_days": rec.get("hard_ttl_days")}
    out = {}
    if rules.own_soft:
        out["soft_ttl_days"] = rec.get("soft_ttl_days")
    if rules.own_hard:
        out["hard_ttl_days"] = rec.get("hard_ttl_days")
    return out or None


def same_value(old: dict, rec: dict) -> bool:
    """Whether two versions of a fact state one value (their objects, normalised; a version
    without an object states its value in its text only, so never)."""
    a, b = R.normalise(old.get("object") or ""), R.normalise(rec.get("object") or "")
    return bool(a) and a == b


SCREEN_FROM = 64  # live text-only memories in a scope from which its cue keys are counted


def _newest_first(rec: dict) -> tuple:
    """A fact's live versions in order, newest first: the highest version, then (two writers
    not cleared to see each other number theirs alike) the one written last, then by id."""
    return -int(rec["version"]), -(rec.get("created_at") or 0), rec["memory_id"]


def expired(rec: dict, now_us: int) -> bool:
    """Past its hard TTL: out of every recall until a sweep evicts it. A write never merges
    into, loses to or is flagged against such a memory (its text would come back through it)."""
    at = rec.get("hard_expires_at")
    return at is not None and at <= now_us


def _text_contradictions(state: ScopeState, rec: dict, similar, now_us: int) -> list[dict]:
    """Live text-only memories close to ``rec`` that say the opposite of it (none past its hard TTL)."""
    if similar is None or rec.get("content") is None:
        return []
    # In a scope of many memories, the counted cues first (they decide most writes without a
    # candidate); in a small one the candidate search is cheaper than reading the text's cues,
    # and usually finds none (measured: 10 memories a scope, 42 against 60 us a write).
    if state.cues is not None or len(state.by_hash) > SCREEN_FROM:
        if state.cues is None:
            state.build_cues()
        if not may_oppose(state.cues, rec["content"]):  # no live memory here it could contradict
            return []
    out = []
    for mid in similar(rec):
        old = state.records.get(mid)
        if old is not None and old["status"] in R.LIVE and old.get("entity_key") is None and old.get("content") \
                and not expired(old, now_us) and text_contradiction(old["content"], rec["content"]):
            out.append(old)
    return out


def _text_close_calls(rec: dict, opposed: list[dict], now_us: int, judge) -> Decision:
    """A text-only contradiction: the judge's verdict per pair (``decide_text``, else
    ``decide``), or with none both stay live, flagged for review."""
    beaten, close, judged = [], [], None
    for old in opposed:
        verdict = verdict_of(judge, "decide_text" if hasattr(judge, "decide_text") else "decide", old, rec)
        if verdict == "live":
            rec["status"] = "superseded"
            return Decision(R.KEPT_AS_SUPERSEDED, rec, judged=judge.name)
        if verdict == "incoming":
            beaten.append(dict(old, status="superseded", updated_at=now_us))
            judged = judge.name
        else:
            close.append(old)
    if close:
        rec["review"] = CONTRADICTION_FLAG
    changed = beaten + [dict(old, review=CONTRADICTION_FLAG) for old in close]
    return Decision(R.CONTRADICTION if close else R.SUPERSEDED_PREVIOUS, rec, changed, judged=judged)


def inherit_policy(rec: dict, old: dict, now_us: int, rules: Rules) -> None:
    """A new version keeps the policy of the one it supersedes, measured from now: its category
    and each TTL the write does not state (``own_policy``: stated ones, or another named
    category's, are the write's own, resolved in ``rec`` already)."""
    if renamed(old, rec):
        return
    rec["category"] = old.get("category") or rec.get("category")
    stated = own_policy(rules, rec) or {}
    for days, at in (("soft_ttl_days", "soft_expires_at"), ("hard_ttl_days", "hard_expires_at")):
        if days not in stated:
            rec[days] = old.get(days)
            rec[at] = None if old.get(days) is None else now_us + int(old[days] * US_PER_DAY)
    _cut_soft(rec)


def _cut_soft(rec: dict) -> None:
    """A soft expiry past the hard one is the hard one (a memory is never fresh once gone)."""
    soft, hard = rec.get("soft_expires_at"), rec.get("hard_expires_at")
    if soft is not None and hard is not None and soft > hard:
        rec["soft_expires_at"], rec["soft_ttl_days"] = hard, rec.get("hard_ttl_days")


def refreshed(old: dict, now_us: int, bump: float = 0.0, policy: dict | None = None,
              by: float | None = None) -> dict:
    """The record written again: the TTL clock restarts from now (expiry is measured from
    ``updated_at``), under ``policy``'s TTLs when the write set its own, and confidence rises
    by ``bump`` (capped at 1); with ``by``, the confirming write's confidence, to at least
    ``by + bump`` only."""
    rec = dict(old, updated_at=now_us)
    if rec.get("status") == "stale":  # written or confirmed again: fresh, no longer ranked at half
        rec["status"] = "active"
    for days, at in (("soft_ttl_days", "soft_expires_at"), ("hard_ttl_days", "hard_expires_at")):
        own = policy is not None and days in policy
        if own:
            rec[days] = policy[days]
        if rec.get(days):
            rec[at] = now_us + int(rec[days] * US_PER_DAY)
        elif own:  # the write's own policy has no such expiry
            rec[at] = None
    if policy is not None:
        _cut_soft(rec)
    if bump:
        c = float(rec["confidence"])
        rec["confidence"] = round(min(1.0, c + bump) if by is None else max(c, min(1.0, by + bump)), 6)
    return rec


def refresh_patch(old: dict, new: dict) -> dict:
    """The fields a refresh changes (what its ledger event carries)."""
    return {k: new[k] for k in ("updated_at", "soft_expires_at", "hard_expires_at", "soft_ttl_days", "hard_ttl_days",
                                "confidence", "status", "category", "review")
            if k in new and (new[k] != old.get(k) or k == "updated_at")}
