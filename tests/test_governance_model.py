"""Seeded public calls by actors whose grants change as they go, every answer checked against
the rules as ``docs/scopes.md`` and ``docs/governance.md`` state them, kept here in a model of
their own (``Rules``: grants by actor and scope, a revoke removes one, the most specific read
grant's clearance applies, an ancestor seen only through allowed scopes takes their highest).

After each call, what must hold:
- a write is refused (``NoGrants``, ``AccessDenied``) exactly when no write grant covers its scope;
- a recall or a lookup is refused exactly when a scope it names is beyond the actor's read grants;
- every memory it shows is in the visible set (allowed scopes and their ancestors), at or below
  the actor's clearance there, active, not past its hard TTL, not erased, and its text is the
  one the ledger holds (read by an ``oracle`` actor cleared for everything, through ``history``);
- a lookup by memory ids returns each live vault memory the actor may read at its clearance,
  and no other, and LangGraph's store's ``get`` a value whenever one is the actor's to see; ``history`` shows no version of a scope it cannot read or above its clearance;
- an erased memory's text is never shown again, to anyone, nor by a recall ``at`` a time before
  its erasure; the ledger verifies at the end.

Writers mix sensitivities, TTLs, texts the gate redacts or blocks and texts written again;
forgets, updates, promotions to a team scope, rollbacks, days passing and sweeps come between.
The default run does a sequence on ``memory://`` and one on the process host with restarts;
``make chaos`` runs ``CHAOS_ROUNDS`` seeds on each host, the Ray host too.
"""

from __future__ import annotations

import os
from datetime import datetime, timezone

import orjson
import pytest

import memactors
from memactors import ops as O
from model_sequence import ModelSequence, run_seed

RANK = {"public": 0, "internal": 1, "confidential": 2, "restricted": 3}
WORDS = ("otter census river blue green report meeting budget plan fox dog data model garden lamp tea coffee "
         "paris berlin train violin").split()
ACTORS = ["w0", "w1", "r0", "r1"]
REFUSED = (memactors.AccessDenied, memactors.NoGrants)


def _segments(scope: str) -> list[str]:
    return scope.strip("/").split("/")


def covers(a: str, b: str) -> bool:
    """Whether scope ``a`` is ``b`` or an ancestor of it (segments, never string prefixes)."""
    sa, sb = _segments(a), _segments(b)
    return sb[: len(sa)] == sa


def with_ancestors(scope: str) -> list[str]:
    s = _segments(scope)
    return ["/" + "/".join(s[:k]) + "/" for k in range(2, len(s) + 1, 2)]


class Rules:
    """The grants in force, and what they allow, as the docs say it."""

    def __init__(self) -> None:
        self.grants: dict[tuple[str, str], tuple[bool, bool, str]] = {}

    def put(self, actor: str, scope: str, read: bool, write: bool, clearance: str) -> None:
        if read or write:
            self.grants[(actor, scope)] = (read, write, clearance)
        else:
            self.grants.pop((actor, scope), None)

    def _mine(self, actor: str):
        return [(s, g) for (a, s), g in self.grants.items() if a == actor]

    def refusal(self, actor: str, scopes: list[str], mode: str) -> type | None:
        """The error a call naming ``scopes`` must get (None: it must be served)."""
        mine = self._mine(actor)
        if not mine:
            return memactors.NoGrants
        i = 0 if mode == "read" else 1
        if all(any(g[i] and covers(s, x) for s, g in mine) for x in scopes):
            return None
        return memactors.AccessDenied

    def own(self, actor: str, scope: str) -> str | None:
        """The clearance of the most specific read grant covering ``scope``."""
        best = max(((len(_segments(s)), g[2]) for s, g in self._mine(actor) if g[0] and covers(s, scope)), default=None)
        return best[1] if best else None

    def clearance(self, actor: str, scope: str, allowed: list[str]) -> str | None:
        mine = self.own(actor, scope)
        if mine is not None:
            return mine
        through = [c for x in allowed if covers(scope, x) and (c := self.own(actor, x)) is not None]
        return max(through, key=RANK.__getitem__) if through else None


class Sequence(ModelSequence):
    def __init__(self, seed: int, path: str, host: str, reopen_every: int) -> None:
        super().__init__(seed, path, host, reopen_every)
        org = f"/org/gov{seed}/"
        self.team = f"{org}project/p/"
        self.scopes = [org, *(f"{org}user/u{i}/" for i in range(3)), f"{org}user/u0/task/t1/", self.team]
        self.rules, self.erased, self.ids, self.said = Rules(), set(), [], []
        self.known: dict[str, dict | None] = {}  # truth()'s, until a call may change records
        self.moments: list[datetime] = []  # the clock after each call once something was written (for at=)
        self.sessions: list = []  # (session, actor, wrote its goal) of those started and not completed
        self.puts: dict[str, dict[str, str]] = {}  # store key -> {a put's first word: its gate floor}
        self.deleted: set[tuple[str, str]] = set()  # (store key, first word) of the values deleted since
        self.rt = self.connect()
        self.rt.grant("oracle", org, clearance="restricted")
        for actor in ACTORS:
            for _ in range(2):
                self.grant(actor, self.r.choice(self.scopes), True, self.r.random() < 0.7)

    def grant(self, actor: str, scope: str, read: bool, write: bool) -> None:
        clearance = self.r.choice(list(RANK))
        self.rt.grant(actor, scope, read=read, write=write, clearance=clearance)
        self.rules.put(actor, scope, read, write, clearance)

    def truth(self, memory_id: str) -> dict | None:
        """The memory's record as the ledger holds it (None: no such live record to show); read
        once between two calls that may change records."""
        if memory_id not in self.known:
            try:
                h = self.rt.history(memory_id, actor="oracle")
            except memactors.NotFound:
                h = {}
            v = next((v for v in h.get("versions", []) if v["memory_id"] == memory_id), None)
            self.known[memory_id] = None if v is None else {"scope": h["scope"], **v}
        return self.known[memory_id]

    def check_shown(self, actor: str, memory_id: str, scope: str, content: str, allowed: list[str], what: str,
                    now: bool = True):
        self.count(what)
        if memory_id in self.erased:
            self.bad(f"{what}: erased {memory_id} shown to {actor}")
        visible = {s for a in allowed for s in with_ancestors(a)}
        if scope not in visible:
            self.bad(f"{what}: {actor} shown {scope}, outside {sorted(visible)}")
            return
        v = self.truth(memory_id)
        if v is None:
            self.bad(f"{what}: {memory_id} shown to {actor}, the ledger has no such record")
            return
        cleared = self.rules.clearance(actor, scope, allowed)
        if cleared is None or RANK[v["sensitivity"]] > RANK[cleared]:
            self.bad(f"{what}: {actor} cleared {cleared} in {scope} shown a {v['sensitivity']} memory")
        if now and v["status"] != "active":
            self.bad(f"{what}: {actor} shown a memory {v['status']}")
        if now and v.get("hard_expires_at") is not None and v["hard_expires_at"] <= self.clock.now_us():
            self.bad(f"{what}: {actor} shown a memory past its hard TTL")
        if v.get("content") != content:
            self.bad(f"{what}: {actor} shown {content!r} where the ledger holds {v.get('content')!r}")

    def text(self) -> str:
        r = self.r
        if self.said and r.random() < 0.15:
            return r.choice(self.said)  # written again: refreshed, if still live
        t = f"g{self.seed}n{self.n} " + " ".join(r.choice(WORDS) for _ in range(r.randint(3, 7)))
        x = r.random()
        if x < 0.08:
            t += f" call me at 138123456{r.randrange(100):02d}"  # redacted, confidential at least
        elif x < 0.12:
            t += " id 11010519491231002X"  # a resident id number: restricted
        elif x < 0.14:
            t += f" my key is sk-proj-Zq9XwV7uT5sR3pN1mL8kJ6hG4fD2s{self.n:04d}"  # blocked
        elif x < 0.17:
            t = "not " + t
        self.said.append(t)
        return t

    def write(self, actor: str) -> None:
        mine = [s for s in self.scopes if self.rules.refusal(actor, [s], "write") is None]
        scope = self.r.choice(mine if mine and self.r.random() < 0.7 else self.scopes)  # refusals too
        kw = {"ttl_days": self.r.choice([1, 3])} if self.r.random() < 0.2 else {}
        must = self.rules.refusal(actor, [scope], "write")
        try:
            res = self.rt.write(scope, self.text(), actor=actor, sensitivity=self.r.choice(list(RANK)), **kw)
        except REFUSED as exc:
            if type(exc) is not must:
                self.bad(f"a write by {actor} to {scope}: {type(exc).__name__}, not {must and must.__name__}")
            return
        self.count("write " + res.decision)
        if must is not None:
            self.bad(f"a write by {actor} to {scope} was {res.decision}, not {must.__name__}")
        self.made(res.memory_id)

    def made(self, memory_id: str | None) -> None:
        if memory_id is not None:
            self.ids.append(memory_id)
            if memory_id in self.erased:
                self.bad(f"a write answered with the erased {memory_id}")

    def recall(self, actor: str, at: datetime | None = None) -> None:
        """A recall now, or ``at`` a past moment: what it would have returned then under today's
        grants and erasures (so the same checks, bar status and expiry, which were then's)."""
        self.recalled(actor, *self.ask(actor, at))

    def recall_many(self) -> None:
        """Several actors' recalls in one ``recall_many`` (the simulation's path): each answered
        or refused as it would be alone."""
        asked = [(actor, *self.ask(actor, None, send=False)) for actor in self.r.choices(ACTORS, k=4)]
        got = self.rt.recall_many([rq for _, rq, _ in asked], return_errors=True)
        for (actor, rq, _), res in zip(asked, got):
            self.recalled(actor, rq, res)

    def ask(self, actor: str, at: datetime | None, send: bool = True) -> tuple[dict, object]:
        mine = [s for s in self.scopes if self.rules.refusal(actor, [s], "read") is None]
        pool = mine if len(mine) >= 3 and self.r.random() < 0.6 else self.scopes  # refusals too
        rq = {"query": " ".join(self.r.choice(WORDS) for _ in range(3)), "actor": actor, "task_id": "t",
              "purpose": "p", "allowed_scopes": self.r.sample(pool, self.r.randint(1, 3)), "top_k": 10,
              "threshold": 0.0, **({"at": at} if at is not None else {})}
        if not send:
            return rq, None
        try:
            return rq, self.rt.recall(**rq)
        except REFUSED as exc:
            return rq, exc

    def recalled(self, actor: str, rq: dict, res) -> None:
        allowed, must = rq["allowed_scopes"], self.rules.refusal(actor, rq["allowed_scopes"], "read")
        if isinstance(res, Exception):
            if type(res) is not must:
                self.bad(f"a recall by {actor} over {allowed}: {type(res).__name__}, not {must and must.__name__}")
            return
        if must is not None:
            self.bad(f"a recall by {actor} over {allowed} was served, not {must.__name__}")
        now = "at" not in rq
        for h in res.hits:
            self.check_shown(actor, h.memory_id, h.scope, h.content, allowed, "recall" if now else "recall at", now)

    def lookup(self, actor: str) -> None:
        scope = self.r.choice(self.scopes)
        must = self.rules.refusal(actor, [scope], "read")
        found = self.rt.batch([O.Lookup(scope=scope, actor=actor, limit=1000)], return_errors=True)[0]
        if isinstance(found, REFUSED):
            if type(found) is not must:
                self.bad(f"a lookup by {actor} of {scope}: {type(found).__name__}, not {must and must.__name__}")
            return
        if isinstance(found, Exception):
            raise found
        if must is not None:
            self.bad(f"a lookup by {actor} of {scope} was served, not {must.__name__}")
        for m in found:
            self.check_shown(actor, m.memory_id, m.scope, m.content, [scope], "lookup")

    def by_id(self, actor: str) -> None:
        """A lookup by memory ids across scopes (``Agent.get``'s): each memory the actor may read
        at its clearance, live and not expired, comes back (vault ones; L1 items aside), and
        nothing else does."""
        asked = sorted(set(self.r.sample(self.ids, min(len(self.ids), 6))))
        found = self.rt.batch([O.Lookup(actor, None, memory_ids=asked)], return_errors=True)[0]
        if isinstance(found, REFUSED):
            if self.rules.refusal(actor, self.scopes, "read") is not memactors.NoGrants \
                    and type(found) is not memactors.NoGrants:
                self.bad(f"a lookup by id by {actor}: {type(found).__name__}")
            return
        if isinstance(found, Exception):
            raise found
        shown = set()
        for m in found:
            shown.add(m.memory_id)
            self.check_shown(actor, m.memory_id, m.scope, m.content, [m.scope], "by id")
        for mid in set(asked) - shown:
            v = self.truth(mid)
            if v is None or v["status"] != "active" or v.get("pool") == "working" or mid in self.erased:
                continue
            if v.get("hard_expires_at") is not None and v["hard_expires_at"] <= self.clock.now_us():
                continue
            cleared = self.rules.own(actor, v["scope"])
            if cleared is not None and RANK[v["sensitivity"]] <= RANK[cleared]:
                self.bad(f"a lookup by id by {actor} cleared {cleared} left out a live {v['sensitivity']} memory")

    def history(self, actor: str, memory_id: str) -> None:
        try:
            h = self.rt.history(memory_id, actor=actor)
        except (*REFUSED, memactors.NotFound):
            return
        for v in h.get("versions", []):
            scope = v.get("scope") or h["scope"]
            self.count("history")
            if self.rules.refusal(actor, [scope], "read") is not None:
                self.bad(f"history shows {actor} a version in {scope}, which it cannot read")
            cleared = self.rules.clearance(actor, scope, [scope])
            if v.get("content") is not None and (cleared is None or RANK[v["sensitivity"]] > RANK[cleared]):
                self.bad(f"history shows {actor} cleared {cleared} a {v['sensitivity']} version")
            if v["memory_id"] in self.erased and v.get("content") is not None:
                self.bad(f"history shows {actor} an erased memory's text")

    def session(self, actor: str) -> None:
        """Start a session, or use one: observe (the gate's cases too), end a turn, render the
        prompt, complete. A start is refused exactly as the actor's read grants say (its push);
        one that may only read writes nothing and has nothing to complete; a completion without
        a write grant leaves the session open; a prompt never shows a blocked text."""
        r = self.r
        if not self.sessions or r.random() < 0.25:
            scope = r.choice(self.scopes[1:4])
            must = self.rules.refusal(actor, [scope], "read")
            try:
                s = self.rt.session(scope, actor=actor, task_id=f"t{self.n}", goal=f"task {self.n} {r.choice(WORDS)}",
                                    plan=["look", "act"])
                s.start()
            except REFUSED as exc:
                if type(exc) is not must:
                    self.bad(f"a session start by {actor} in {scope}: {type(exc).__name__}, "
                             f"not {must and must.__name__}")
                return
            if must is not None:
                self.bad(f"a session start by {actor} in {scope} was served, not {must.__name__}")
            wrote = self.rules.refusal(actor, [scope], "write") is None
            if wrote == bool(s.errors and s.errors[0].startswith(("AccessDenied", "NoGrants"))):
                self.bad(f"a session start by {actor} in {scope}: errors {s.errors[:1]}, write grant {wrote}")
            self.count("session")
            self.sessions.append((s, actor, wrote))
            return
        held = r.choice(self.sessions)
        s, actor, wrote = held
        write_refused = self.rules.refusal(actor, [s.scope], "write")
        x = r.random()
        try:
            if x < 0.5:
                s.observe(r.choice(["user", "web", "tool:search"]), self.text())
                s.end_turn() if r.random() < 0.5 else None
            elif x < 0.8:
                prompt = s.before_llm()
                self.count("prompt")
                if "sk-proj-" in prompt.text:
                    self.bad("a prompt shows a text the gate blocks")
            else:
                s.complete("done", "success")
                if write_refused is not None or not wrote:
                    self.bad(f"a session of {actor} completed without a write grant on {s.scope}")
                self.sessions.remove(held)
                self.count("completed")
        except memactors.SessionClosed:
            self.sessions.remove(held)
        except memactors.InvalidRecord:
            if wrote or x < 0.8:
                raise
            self.sessions.remove(held)  # a reader's: it wrote no goal, there is nothing to end
        except REFUSED as exc:
            if x >= 0.8 and (type(exc) is not write_refused or s.closed):
                self.bad(f"completing {actor}'s session: {type(exc).__name__}, closed {s.closed}; "
                         f"expected {write_refused and write_refused.__name__}, open")

    def store(self, actor: str) -> None:
        """LangGraph's store over the first user's scope (``MemactorsStore``), one per actor:
        a put refused exactly as the write grants say; a get or a search shows only what was put
        under that key, at or below the actor's clearance there (a value is internal; a phone number
        makes it confidential, an id number restricted), and never one a delete could see; a get
        shows something whenever a live value under the key is the actor's to see."""
        from memactors.integrations.langgraph import MemactorsStore

        root, r = self.scopes[1], self.r
        store = MemactorsStore(self.rt, actor=actor, root=root)
        key, x = r.choice("abc"), r.random()
        try:
            if x < 0.5:
                must = self.rules.refusal(actor, [root], "write")
                text = self.text()
                try:
                    store.put(("n",), key, {"text": text})
                except memactors.Blocked:
                    return
                if must is not None:
                    self.bad(f"a store put by {actor} was served, not {must.__name__}")
                floor = "restricted" if " id " in text else "confidential" if "call me" in text else "internal"
                self.puts.setdefault(key, {})[text.split()[0]] = floor
                self.deleted.discard((key, text.split()[0]))  # (a text written again)
                self.count("store put")
            elif x < 0.9:
                items = [store.get(("n",), key)] if x < 0.7 else store.search(("n",), query=r.choice(WORDS))
                for item in filter(None, items):
                    self.count("store read")
                    token = str(item.value.get("text", "")).split()[0]
                    floor = self.puts.get(item.key, {}).get(token)
                    cleared = self.rules.own(actor, root)
                    if floor is None or (item.key, token) in self.deleted:
                        self.bad(f"the store shows {actor} {token} under {item.key}, never put or deleted")
                    elif cleared is None or RANK[floor] > RANK[cleared]:
                        self.bad(f"the store shows {actor} cleared {cleared} a {floor} value")
                if x < 0.7 and items[0] is None and self.visible_under(actor, root, key):
                    self.bad(f"the store's get shows {actor} nothing under {key}, where a live value is its to see")
            else:
                store.delete(("n",), key)
                # what the actor may see goes (every version); a version above it stays, for those cleared
                cleared = self.rules.own(actor, root)
                self.deleted.update((key, t) for t, floor in self.puts.get(key, {}).items()
                                    if cleared is not None and RANK[floor] <= RANK[cleared])
        except REFUSED as exc:
            modes = ["write"] if x < 0.5 else ["read"] if x < 0.9 else ["read", "write"]  # a delete reads first
            if all(self.rules.refusal(actor, [root], m) is None for m in modes):
                self.bad(f"a store call by {actor} refused: {type(exc).__name__}")

    def visible_under(self, actor: str, root: str, key: str) -> bool:
        """Whether a live, unexpired value of the store's ``key`` is at or below ``actor``'s
        clearance in ``root`` (read through the oracle): a ``get`` must then show one."""
        cleared = self.rules.own(actor, root)
        if cleared is None:
            return False
        for m in self.rt.batch([O.Lookup(scope=root, actor="oracle", limit=1000)])[0]:
            if f'"key":{orjson.dumps(key).decode()},' in m.content:
                v = self.truth(m.memory_id)
                if v is not None and RANK[v["sensitivity"]] <= RANK[cleared]:
                    return True
        return False

    def resumed(self, held: tuple) -> tuple:
        """An open session, resumed on the reopened runtime (None: its actor may not read it now)."""
        s, actor, wrote = held
        try:
            return self.rt.resume_session(s.scope, actor=actor, task_id=s.task_id), actor, wrote
        except (*REFUSED, memactors.NotFound):
            return None, actor, wrote

    def step(self) -> None:
        r, actor = self.r, self.r.choice(ACTORS)
        k = r.random()
        pick = r.choice(self.ids) if self.ids else None
        if not 0.45 <= k < 0.84:  # (recalls, lookups and history change no record)
            self.known.clear()
        if k < 0.12:
            revoke = r.random() < 0.25
            self.grant(actor, r.choice(self.scopes), not revoke and r.random() < 0.8, not revoke and r.random() < 0.5)
        elif k < 0.40:
            self.write(actor)
        elif k < 0.43:
            self.session(actor)
        elif k < 0.45:
            self.store(actor)
        elif k < 0.62:
            self.recall(actor)
        elif k < 0.66:
            self.recall_many()
        elif k < 0.70:
            if self.moments:
                self.recall(actor, at=r.choice(self.moments))
        elif k < 0.78:
            self.lookup(actor)
        elif pick is None:
            return
        elif k < 0.81:
            self.history(actor, pick)
        elif k < 0.84:
            self.by_id(actor)
        elif k < 0.90:
            try:
                self.erased.update(self.rt.forget(pick, actor=actor, reason="x", erase="memory")["forgotten"])
                self.count("erased")
            except memactors.MemactorsError:
                pass  # not this actor's to forget, or gone already: either way nothing to check here
        elif k < 0.93:
            try:
                self.rt.promote(pick, self.team, actor=actor, reason="x")
            except memactors.MemactorsError:
                pass
        elif k < 0.945:
            try:
                self.made(self.rt.update(pick, self.text(), actor=actor).memory_id)
            except memactors.MemactorsError:
                pass
        elif k < 0.955:
            try:
                self.rt.rollback(memory_id=pick, actor=actor, reason="x")
            except memactors.MemactorsError:
                pass
        elif k < 0.965:
            self.clock.advance(days=r.choice([1, 2, 5]))
        else:
            self.rt.gc()

    def run(self, calls: int) -> list[str]:
        for self.n in range(calls):
            if self.reopen_every and self.n and self.n % self.reopen_every == 0:
                self.rt.close()
                self.rt = self.connect()
                self.sessions = [held for held in map(self.resumed, self.sessions) if held[0] is not None]
            self.step()
            if self.ids:
                self.moments.append(datetime.fromtimestamp(self.clock.now_us() / 1e6, timezone.utc))
        self.known.clear()
        for memory_id in self.erased:
            v = self.truth(memory_id)
            if v is not None and v.get("content") is not None:
                self.bad(f"at the end, the ledger still shows the erased {memory_id}'s text")
        if not self.rt.audit.verify()["ok"]:
            self.bad("the ledger does not verify")
        self.rt.close()
        return self.problems


def _run(tmp_path, seed: int, host: str, calls: int, reopen_every: int = 0) -> Sequence:
    return run_seed(Sequence, tmp_path, seed, host, calls, reopen_every)


def test_a_sequence_in_memory(tmp_path):
    seq = _run(tmp_path, 6, "memory", 250)
    # the sequence reaches what it checks: served and refused calls, hits, erasures, the gate's outcomes
    assert seq.counts["recall"] > 100 and seq.counts["lookup"] > 5 and seq.counts.get("erased", 0) >= 1, seq.counts
    assert {"write accepted", "write redacted", "write blocked"} <= set(seq.counts), seq.counts


def test_a_sequence_on_the_process_host_with_restarts(tmp_path):
    _run(tmp_path, 4, "process", 120, reopen_every=40)


@pytest.mark.chaos
@pytest.mark.timeout(7200)
@pytest.mark.parametrize("host", ["memory", "process", "ray"])
def test_many_sequences(request, tmp_path, host):
    if host == "ray":
        request.getfixturevalue("ray_session")
    for seed in range(100, 100 + int(os.environ.get("CHAOS_ROUNDS", 20))):
        _run(tmp_path, seed, host, 400, reopen_every=0 if host == "memory" else 60)


def test_the_model_tells_a_clearance_leak():
    """The checks themselves: the rules model refuses and clears as the docs say."""
    rules = Rules()
    org, alice, bob = "/org/x/", "/org/x/user/alice/", "/org/x/user/bob/"
    assert rules.refusal("a", [alice], "read") is memactors.NoGrants
    rules.put("a", org, True, False, "internal")
    rules.put("a", alice, True, False, "restricted")
    rules.put("a", bob, True, False, "public")
    assert rules.refusal("a", [alice, bob], "read") is None
    assert rules.refusal("a", [alice], "write") is memactors.AccessDenied
    assert rules.refusal("a", ["/org/y/user/alice/"], "read") is memactors.AccessDenied
    assert rules.clearance("a", alice, [alice]) == "restricted"
    assert rules.clearance("a", bob, [bob]) == "public"
    assert rules.clearance("a", org, [alice]) == "internal"  # its own grant, not alice's
    assert not covers("/org/x/user/al/", alice) and covers(org, alice)
    rules.put("a", org, False, False, "public")  # revoked: the ancestor only through alice, at hers
    assert rules.clearance("a", org, [alice]) == "restricted"
    assert rules.clearance("a", org, [alice, bob]) == "restricted"
    assert rules.refusal("a", [org], "read") is memactors.AccessDenied
