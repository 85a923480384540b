"""Seeded writes, rewrites, values of facts from two sources, updates, forgets, rollbacks, recalls
now and at past moments, lookups, days passing and sweeps, every answer and every memory's record
checked against how memories age as ``docs/lifecycle.md`` (and ``docs/history.md`` for updates
and rollbacks) states it, kept here in a model of its own (``Mem``):

- a new memory's soft and hard expiry are its category's TTLs from its write, each replaced by
  the one the write states (a stated soft TTL past the hard one is refused, the category's is
  cut to it);
- the same text written again in its scope refreshes the live memory (the same id): each expiry
  keeps its distance from ``updated_at``, one the rewrite states is renewed from now;
- a value of a fact (``Sequence.fact``): the same value refreshes its version, confirmed by the
  other source; a new one beats, loses to or ties with each live version by source and
  confidence (a gap of exactly 0.2 is a close call), a tie flags both ``contradiction``, a
  confirmation more than 0.2 above a rival settles it;
- a recall shows only live memories not past their hard TTL, flagged stale exactly when past
  their soft TTL or marked stale, and the memory asked for in its own words when it is live;
  what it returns counts as a use; a recall ``at`` a past moment shows what was live then
  (bar what is erased since) and counts as no use;
- a lookup of a scope shows exactly its live memories not past their hard TTL;
- ``rt.update`` supersedes the memory whatever the confidence rules say, its TTLs carried over
  (``ttl_days`` replacing the hard one), and settles a close call with a rival holding the new
  value; ``rt.forget`` erases it and unflags a rival left alone; ``rt.rollback(memory_id=)`` of a
  live version evicts it and brings back what it superseded;
- a sweep applies the rules in order: past its hard TTL, erased (its text gone from history;
  an evicted one too); a superseded one 90 days after, evicted; soft-expired and neither written
  nor recalled for 30 days, evicted; staleness (``0.4*age + 0.3*disuse + 0.3*contradiction``,
  half-lives 90 and 30 days from the last use) above 0.8 evicted, above 0.5 an active memory
  marked stale; a side of a contradiction left with no live rival is no longer flagged.

After each call, the memories it may have changed are read back through ``history`` (status,
``updated_at``, both expiries, confidence, the review flag) and compared with the model. The
default run does a sequence on ``memory://`` and one on the process host with restarts;
``make chaos`` runs many seeds on both.
"""

from __future__ import annotations

import os
import random
from dataclasses import dataclass
from datetime import datetime, timezone

import pytest

import memactors
from memactors import ops as O
from model_sequence import ModelSequence, run_seed

DAY = 86_400_000_000
TTL = {"default": (30, 365), "preference": (90, 365), "task_learning": (30, 365), "observation": (7, 90)}
LIVE = ("active", "stale")
SYLLABLES = "ka lo mi ne pu ra si to vu ze bo da fe gi hu jo ly wa xe qu".split()
OBJECTS = ("red", "blue", "green")
SOURCES = ("user_stated", "agent_inferred")
CONFIDENCES = (0.5, 0.7, 0.9, 1.0)  # 0.9 - 0.7 is 0.2 and a float's hair: exactly the gap, a close call
EPS = 1e-6


def word(r: random.Random) -> str:
    return "".join(r.choice(SYLLABLES) for _ in range(3))


@dataclass
class Mem:
    """A memory as the model holds it (times in microseconds of the runtime's clock)."""

    memory_id: str
    scope: str
    text: str
    category: str
    updated: int = 0
    soft: int | None = None  # the expiries, from ``updated`` under ``policy`` (``renew``)
    hard: int | None = None
    status: str = "active"
    fact: tuple | None = None  # (subject, predicate, object)
    used: int | None = None  # the last recall that returned it
    source: str = "user_stated"
    confidence: float = 1.0
    review: str | None = None
    superseded: tuple = ()  # the versions it superseded (what a rollback of it reinstates)
    evicted_by: str | None = None  # the rule (or "rollback") that evicted it
    policy: tuple = (None, None)  # (soft, hard) TTLs in microseconds, None for never

    @classmethod
    def made(cls, memory_id: str, scope: str, text: str, category: str, now: int, policy: tuple, **fields) -> Mem:
        """A memory written ``now`` under the TTLs ``policy``."""
        m = cls(memory_id, scope, text, category, **fields)
        m.renew(now, *policy)
        return m

    def renew(self, now: int, soft: int | None, hard: int | None) -> None:
        """Under the TTLs (``policy``) ``soft`` and ``hard`` from ``now``, a soft one past the
        hard one cut to it."""
        if hard is not None and soft is not None and soft > hard:
            soft = hard
        self.policy, self.updated = (soft, hard), now
        self.soft, self.hard = (None if d is None else now + d for d in (soft, hard))

    def out(self, now: int) -> bool:
        """Past its hard TTL: out of every recall and lookup."""
        return self.hard is not None and self.hard <= now

    def shown(self, now: int) -> bool:
        return self.status in LIVE and not self.out(now)

    def staleness(self, now: int) -> float:
        age = 1 - 0.5 ** ((now - self.updated) / DAY / 90)
        since = max(self.updated, self.used or 0)  # the last use: a write or a recall
        return 0.4 * age + 0.3 * (1 - 0.5 ** ((now - since) / DAY / 30)) + 0.3 * (self.review == "contradiction")


def days_us(days) -> int | None:
    return None if days == "never" else int(days * DAY)


def ttls(category: str, ttl_days, soft_ttl_days) -> tuple[int | None, int | None]:
    """A new memory's (soft, hard) TTLs: its category's, each replaced by the one the write
    states (``Mem.renew`` cuts the category's soft one to a shorter hard one the write states)."""
    soft, hard = TTL[category]
    return (days_us(soft if soft_ttl_days is None else soft_ttl_days),
            days_us(hard if ttl_days is None else ttl_days))


class Sequence(ModelSequence):
    def __init__(self, seed: int, path: str, host: str, reopen_every: int) -> None:
        super().__init__(seed, path, host, reopen_every)
        org = f"/org/life{seed}/"
        self.scopes = [f"{org}user/u{i}/" for i in range(3)]
        self.mems: dict[str, Mem] = {}
        # (a moment, each memory's (status, soft, hard) then): the last state at a time, taken
        # before the clock moves on, for recalls ``at`` it
        self.moments: list[tuple[int, dict]] = []
        self.rt = self.connect()
        self.rt.grant("a", org, write=True, clearance="restricted")

    def now(self) -> int:
        return self.clock.now_us()

    def live_of(self, scope: str, text: str) -> Mem | None:
        """The live text-only memory of ``scope`` holding ``text`` (None: none)."""
        return next((m for m in self.mems.values()
                     if m.scope == scope and m.status in LIVE and m.fact is None and m.text == text), None)

    # --- the calls -------------------------------------------------------------------------

    def write(self) -> None:
        r, now = self.r, self.now()
        texts = [m for m in self.mems.values() if m.fact is None and m.status in LIVE]
        again = texts and r.random() < 0.3
        if again:
            m = r.choice(texts)
            scope, text, category = m.scope, m.text, m.category
        else:
            scope, text = r.choice(self.scopes), " ".join(word(r) for _ in range(r.randint(4, 7)))
            category = r.choice(list(TTL))
        ttl = r.choice([None, None, None, 2, 5, 20, 60, "never"])
        soft = r.choice([None, None, None, 1, 3, 10, "never"])
        hard = TTL[category][1] if ttl is None else ttl
        too_long = soft not in (None, "never") and hard != "never" and soft > hard
        try:
            res = self.rt.write(scope, text, actor="a", category=category, ttl_days=ttl, soft_ttl_days=soft)
        except memactors.InvalidRecord:
            if not too_long:
                raise
            self.count("write refused")
            return
        if too_long:
            self.bad(f"a soft TTL {soft} past the hard one {hard} was {res.decision}, not refused")
        self.count("write " + res.decision)
        prior = self.live_of(scope, text)
        if prior is not None:
            if res.memory_id != prior.memory_id or res.decision != "refreshed":
                self.bad(f"the same text again in its scope: {res.decision} {res.memory_id}, not a refresh of "
                         f"{prior.memory_id}")
                return
            self.refresh(prior, now, ttl, soft)
        else:
            if res.decision != "accepted":
                self.bad(f"a new text: {res.decision}")
                return
            self.mems[res.memory_id] = Mem.made(res.memory_id, scope, text, category, now, ttls(category, ttl, soft))
        self.check(res.memory_id)

    def refresh(self, m: Mem, now: int, ttl, soft) -> None:
        """As the docs say: each expiry keeps its distance from ``updated_at`` (the memory's
        TTLs), one the rewrite states is renewed under it, a soft one past the hard one cut to it."""
        s, h = m.policy
        m.renew(now, s if soft is None else days_us(soft), h if ttl is None else days_us(ttl))
        m.status = "active"

    def fact(self) -> None:
        """A value of a fact from one of two sources, each with its confidence: the same value
        refreshes its version (confirmed by the other source: at least as sure as it plus 0.05);
        a new one, against each live version not past its hard TTL, beats it (the same source
        unless less sure by more than 0.2; the other by more than 0.2), loses (then it is kept
        as superseded and nothing else changes) or ties (both flagged ``contradiction``); the
        versions past their hard TTL are superseded by any new value that is not kept as
        superseded itself."""
        r, now = self.r, self.now()
        scope, subject = r.choice(self.scopes), r.choice(["alice", "bob"])
        obj, source, conf = r.choice(OBJECTS), r.choice(SOURCES), r.choice(CONFIDENCES)
        fact = (subject, "favourite_colour", obj)
        text = f"{subject} likes the colour {obj}"
        res = self.rt.write(scope, text, actor="a", subject=subject, predicate="favourite_colour", object=obj,
                            category="preference", source=source, confidence=conf)
        self.count("fact " + res.decision)
        live = [m for m in self.mems.values() if m.scope == scope and m.fact is not None
                and m.fact[:2] == fact[:2] and m.status in LIVE]
        same = next((m for m in live if m.fact[2] == obj), None)
        if same is not None:
            if res.memory_id != same.memory_id or res.decision != "refreshed":
                self.bad(f"a fact's same value again: {res.decision} {res.memory_id}, not a refresh of "
                         f"{same.memory_id}")
                return
            self.refresh(same, now, None, None)
            if source != same.source:
                same.confidence = round(max(same.confidence, min(1.0, conf + 0.05)), 6)
            if same.review == "contradiction":
                rivals = [m for m in live if m is not same and m.review == "contradiction" and not m.out(now)]
                beaten = [m for m in rivals if same.confidence - m.confidence > 0.2 + EPS]
                for m in beaten:
                    m.status, m.review, m.updated = "superseded", None, now
                if beaten and len(beaten) == len(rivals):
                    same.review = None
            for m in live:
                self.check(m.memory_id)
            return
        gone = [m for m in live if m.out(now)]
        outcomes = {m.memory_id: self.versus(m, source, conf) for m in live if not m.out(now)}
        # a new version keeps the TTLs of the one it supersedes
        policy = self.mems[res.supersedes].policy if res.supersedes in self.mems else ttls("preference", None, None)
        new = Mem.made(res.memory_id, scope, text, "preference", now, policy, fact=fact, source=source, confidence=conf)
        if "lose" in outcomes.values():
            want = "kept_as_superseded"
            new.status = "superseded"
        else:
            beaten = [m for m in live if outcomes.get(m.memory_id) == "beat"]
            close = [m for m in live if outcomes.get(m.memory_id) == "close"]
            want = "contradiction_queued" if close else "superseded_previous" if beaten or gone else "accepted"
            for m in beaten + gone:
                m.status, m.updated = "superseded", now
            for m in close:
                m.review = "contradiction"
            new.review = "contradiction" if close else None
            if (beaten or gone) and res.supersedes not in {m.memory_id for m in beaten + gone}:
                self.bad(f"a fact's new value supersedes {res.supersedes}, not one of those it beat")
            new.superseded = tuple(m.memory_id for m in beaten + gone)
        if res.decision != want:
            self.bad(f"a fact's value {obj} from {source} at {conf} against "
                     f"{[(m.fact[2], m.source, m.confidence, m.review, m.out(now)) for m in live]}: "
                     f"{res.decision}, not {want}")
            return
        self.mems[res.memory_id] = new
        for m in [*live, new]:
            self.check(m.memory_id)

    @staticmethod
    def versus(old: Mem, source: str, conf: float) -> str:
        gap = conf - old.confidence
        if source == old.source:
            return "lose" if gap < -0.2 - EPS else "beat"
        if abs(gap) > 0.2 + EPS:
            return "beat" if gap > 0 else "lose"
        return "close"

    def update(self) -> None:
        """``rt.update`` of a live memory: the next version supersedes it whatever the confidence
        rules say, with its TTLs carried over and measured from now (``ttl_days``
        replacing the hard one, the soft one cut to it) and, for a fact, its source and
        confidence; a rival of a close call holding the new value is superseded by it, one
        holding another stays in dispute with it."""
        r, now = self.r, self.now()
        pool = [m for m in self.mems.values() if m.shown(now) and not self.expired_rival(m, now)]
        if not pool:
            return
        old = r.choice(pool)
        ttl = r.choice([None, None, 5, 40])
        if old.fact is None:
            text, obj = " ".join(word(r) for _ in range(r.randint(4, 7))), None
        else:
            obj = r.choice([o for o in OBJECTS if o != old.fact[2]])
            text = f"{old.fact[0]} likes the colour {obj}"
        res = self.rt.update(old.memory_id, text, actor="a", ttl_days=ttl, **({"object": obj} if obj else {}))
        self.count("update " + res.decision)
        if res.decision != "superseded_previous" or res.supersedes != old.memory_id:
            self.bad(f"an update of {old.memory_id}: {res.decision}, supersedes {res.supersedes}")
            return
        new = Mem.made(res.memory_id, old.scope, text, old.category, now,
                       (old.policy[0], old.policy[1] if ttl is None else days_us(ttl)), source=old.source,
                       confidence=old.confidence, superseded=(old.memory_id,),
                       fact=None if obj is None else (*old.fact[:2], obj))
        old.status, old.updated = "superseded", now
        touched = [old, new]
        if obj is not None and old.review == "contradiction":
            rivals = [m for m in self.versions_of(old) if m is not old and m.review == "contradiction"]
            for m in rivals:
                if m.fact[2] == obj:
                    m.status, m.updated = "superseded", now
                    new.superseded += (m.memory_id,)
            new.review = "contradiction" if any(m.fact[2] != obj for m in rivals) else None
            touched += rivals
        self.mems[new.memory_id] = new
        self.end_contradictions()
        for m in touched:
            self.check(m.memory_id)

    def versions_of(self, m: Mem) -> list[Mem]:
        """The live versions of ``m``'s fact in its scope (``m`` included)."""
        return [o for o in self.mems.values() if o.fact is not None and o.scope == m.scope
                and o.fact[:2] == m.fact[:2] and o.status in LIVE]

    def expired_rival(self, m: Mem, now: int) -> bool:
        """Whether a version of ``m``'s fact lies past its hard TTL, not yet swept (the model
        leaves out updates and rollbacks that meet one: the docs say little of them)."""
        return m.fact is not None and any(o.out(now) for o in self.versions_of(m))

    def forget(self) -> None:
        """``rt.forget`` of a memory: erased; a side of a contradiction left alone is unflagged."""
        pool = [m for m in self.mems.values() if m.status in LIVE]
        if not pool:
            return
        m = self.r.choice(pool)
        got = self.rt.forget(m.memory_id, actor="a", reason="model")
        self.count("forget")
        if got["forgotten"] != [m.memory_id]:
            self.bad(f"a forget of {m.memory_id} erased {got['forgotten']}")
        m.status = "erased"
        flagged = [o.memory_id for o in self.mems.values() if o.review == "contradiction"]
        self.end_contradictions()
        for mid in [m.memory_id, *flagged]:
            self.check(mid)

    def rollback(self) -> None:
        """``rt.rollback(memory_id=)`` of a live version: out of recall (evicted), and the
        versions it superseded (superseded still, or evicted by a sweep for being superseded
        long enough) back as they were, flagged only beside a rival back or live too."""
        now = self.now()
        pool = [m for m in self.mems.values() if m.shown(now) and not self.expired_rival(m, now)
                and not (m.fact is not None and any(o.review for o in self.versions_of(m)))]
        if not pool:
            return
        m = self.r.choice(pool)
        self.rt.rollback(memory_id=m.memory_id, actor="a", reason="model")
        self.count("rollback")
        m.status, m.evicted_by = "evicted", "rollback"
        back = [o for o in map(self.mems.get, m.superseded)
                if o.status == "superseded" or (o.status == "evicted" and o.evicted_by == "superseded_old")]
        for o in back:
            o.status, o.evicted_by = "active", None
            self.count("reinstated")
        self.end_contradictions()
        for o in (m, *back):
            self.check(o.memory_id)

    def end_contradictions(self) -> None:
        """A side of a contradiction left with no live rival is no longer flagged."""
        flagged = [m for m in self.mems.values() if m.review == "contradiction" and m.status in LIVE]
        for m in flagged:
            if not any(o is not m and o.scope == m.scope and o.fact[:2] == m.fact[:2] for o in flagged):
                m.review = None
                self.count("contradiction ended")

    def recall(self, past: bool = False) -> None:
        """A recall now, or ``at`` a past moment (what was live then, bar what is erased since;
        never counted as a use)."""
        texts = [m for m in self.mems.values() if m.fact is None]
        if not texts or (past and not self.moments):
            return
        target = self.r.choice(texts)
        if past:
            at, then = self.r.choice(self.moments)
        else:
            at, then = self.now(), {mid: (m.status, m.soft, m.hard) for mid, m in self.mems.items()}
        res = self.rt.recall(target.text, actor="a", task_id="t", purpose="p", allowed_scopes=[target.scope],
                             top_k=10, threshold=0.0,
                             **({"at": datetime.fromtimestamp(at / 1e6, timezone.utc)} if past else {}))
        what = "recall at" if past else "recall"
        self.count(what)
        got = set()
        for h in res.hits:
            got.add(h.memory_id)
            if h.memory_id not in then:
                self.bad(f"a {what} shows {h.memory_id}, not written by then")
                continue
            status, soft, hard = then[h.memory_id]
            if status not in LIVE or (hard is not None and hard <= at) or self.mems[h.memory_id].status == "erased":
                self.bad(f"a {what} shows a memory {status} (now {self.mems[h.memory_id].status}), "
                         f"hard expiry {hard} at {at}")
            stale = status == "stale" or (soft is not None and soft <= at)
            if h.stale != stale:
                self.bad(f"a {what} flags stale={h.stale} a memory {status}, soft expiry {soft} at {at}")
            if not past:
                self.mems[h.memory_id].used = at
            self.count("hit")
        if target.memory_id in then and then[target.memory_id][0] in LIVE and target.status != "erased" \
                and (then[target.memory_id][2] is None or then[target.memory_id][2] > at) \
                and target.memory_id not in got:
            self.bad(f"a {what} in its own words leaves out {target.memory_id}, live then")

    def lookup(self) -> None:
        now, scope = self.now(), self.r.choice(self.scopes)
        found = self.rt.batch([O.Lookup(scope=scope, actor="a", limit=1000)])[0]
        self.count("lookup")
        shown = {m.memory_id: m for m in found}
        want = {m.memory_id for m in self.mems.values() if m.scope == scope and m.shown(now)}
        for mid in shown.keys() - want:
            m = self.mems.get(mid)
            self.bad(f"a lookup shows {mid}: {m and (m.status, m.hard, now)}")
        for mid in want - shown.keys():
            self.bad(f"a lookup leaves out the live {mid}")
        for mid, got in shown.items():
            if mid in self.mems and (got.status, got.hard_expires_at) != (self.mems[mid].status, self.mems[mid].hard):
                self.bad(f"a lookup shows {mid} {got.status} expiring {got.hard_expires_at}, the model "
                         f"{self.mems[mid].status} {self.mems[mid].hard}")

    def sweep(self) -> None:
        now = self.now()
        self.rt.gc()
        self.count("sweep")
        before = {mid: (m.status, m.review) for mid, m in self.mems.items()}
        for m in self.mems.values():
            if m.status == "erased":
                continue
            if m.out(now):  # a memory set aside with its key kept (evicted) is erased then too
                m.status = "erased"
            elif m.status == "evicted":
                continue
            elif m.status == "superseded":  # out of recall: only its age since it was superseded counts
                if now - m.updated >= 90 * DAY:
                    m.status, m.evicted_by = "evicted", "superseded_old"
            elif m.soft is not None and m.soft <= now and now - max(m.updated, m.used or 0) >= 30 * DAY:
                m.status, m.evicted_by = "evicted", "soft_expired_unused"
            elif m.staleness(now) > 0.8:
                m.status, m.evicted_by = "evicted", "staleness_evict"
            elif m.status == "active" and m.staleness(now) > 0.5:
                m.status = "stale"
            self.count(f"model {m.status}")
        self.end_contradictions()
        # what the model changed, and some it left as they were (a history read each: ~10 ms)
        changed = [mid for mid, m in self.mems.items() if before[mid] != (m.status, m.review)]
        kept = sorted(set(self.mems) - set(changed))
        for mid in changed + self.r.sample(kept, min(len(kept), 8)):
            self.check(mid)

    def check(self, memory_id: str) -> None:
        """The memory's record as the ledger holds it, against the model's."""
        m = self.mems[memory_id]
        try:
            h = self.rt.history(memory_id, actor="a")
        except memactors.NotFound:
            h = {}
        v = next((v for v in h.get("versions", []) if v["memory_id"] == memory_id), None)
        if m.status == "erased":
            if v is not None and v.get("content") is not None:
                self.bad(f"{memory_id} past its hard TTL at a sweep still shows its text, {v['status']}")
            return
        if v is None or v.get("content") is None:
            self.bad(f"{memory_id} ({m.status}) has no record in history, or an erased one")
            return
        got = (v["status"], v["updated_at"], v["soft_expires_at"], v["hard_expires_at"], round(v["confidence"], 5),
               v["review"] if m.status in LIVE else None)
        want = (m.status, m.updated, m.soft, m.hard, round(m.confidence, 5), m.review if m.status in LIVE else None)
        if got != want:
            self.bad(f"{memory_id} {m.category} holds (status, updated, soft, hard, confidence, review) {got}, "
                     f"the model {want}")

    def step(self) -> None:
        k = self.r.random()
        if k < 0.27:
            self.write()
        elif k < 0.37:
            self.fact()
        elif k < 0.39:
            self.update()
        elif k < 0.40:
            self.forget()
        elif k < 0.42:
            self.rollback()
        elif k < 0.57:
            self.recall()
        elif k < 0.62:
            self.recall(past=True)
        elif k < 0.72:
            self.lookup()
        elif k < 0.90:
            self.moments.append((self.now(), {mid: (m.status, m.soft, m.hard) for mid, m in self.mems.items()}))
            self.clock.advance(days=self.r.choice([1, 2, 3, 7, 10, 30, 31, 60]))
        else:
            self.sweep()

    def run(self, calls: int) -> list[str]:
        for self.n in range(calls):
            if self.reopen_every and self.n and self.n % self.reopen_every == 0:
                self.rt.close()
                self.rt = self.connect()
            self.step()
            if len(self.problems) > 5:
                break
        self.rt.close()
        return self.problems


def _run(tmp_path, seed: int, host: str, calls: int, reopen_every: int = 0) -> Sequence:
    return run_seed(Sequence, tmp_path, seed, host, calls, reopen_every)


def test_a_sequence_in_memory(tmp_path):
    seq = _run(tmp_path, 2, "memory", 180)
    # the sequence reaches each outcome it checks
    for what in ("write refreshed", "fact refreshed", "fact superseded_previous", "fact kept_as_superseded",
                 "fact contradiction_queued", "contradiction ended", "model stale", "model evicted", "model erased",
                 "update superseded_previous", "forget", "rollback", "reinstated", "recall at"):
        assert seq.counts.get(what, 0) >= 1, (what, seq.counts)
    assert seq.counts["hit"] > 50, seq.counts


def test_a_sequence_on_the_process_host_with_restarts(tmp_path):
    _run(tmp_path, 5, "process", 80, reopen_every=40)


@pytest.mark.chaos
@pytest.mark.timeout(7200)
@pytest.mark.parametrize("host", ["memory", "process"])
def test_many_sequences(tmp_path, host):
    for seed in range(100, 100 + int(os.environ.get("CHAOS_ROUNDS", 20))):
        _run(tmp_path, seed, host, 300, reopen_every=0 if host == "memory" else 60)
