"""The same seeded calls, answered alike however they are sent and kept: one sequence of public
calls (facts and plain texts over three scopes, duplicates, reused idempotency keys, redacted and
held writes, ``write_many``, recalls, forgets of a memory and of a fact, updates, promotions,
rollbacks, history, reviews, sweeps, demotion, the clock moved by days) run on the process host
with the defaults, and again on another set-up. The answers are compared with memory ids named
by first appearance (they are random in each folder). What a user may expect: an outcome does
not depend on the host, on ``awrite`` or ``write``, on a ``write_many`` or single writes, on
small calls and a small hot cache, on a restart, or on a ``memactors rebuild`` between calls.

The default run does one sequence, with a restart every seventh call; ``make chaos`` runs ``CHAOS_ROUNDS`` (default
20) sequences on each."""

from __future__ import annotations

import asyncio
import random
import re

import pytest

import memactors
from memactors import ops as O
from memactors.core.clock import ManualClock
from memactors.server import rebuild

from chaoslib import rounds_from_env

SUBJECTS, PREDICATES = ["alice", "bob", "carol"], ["lives_in", "likes", "works_at"]
OBJECTS = ["Paris", "Berlin", "tea", "coffee", "Acme", "Globex", "Rome"]
WORDS = ("the otter census river blue green quick report meeting budget plan red fox jumps over lazy dog data "
         "model").split()
SMALL = {"runtime": {"write_batch_max": 3, "ledger_chunk": 2, "hot_cache_max_memories": 20, "num_owners": 3}}
SETUPS = {  # name -> (host, config, how)
    "memory": ("memory", None, {}),
    "async": ("process", None, {"asynchronous": True}),
    "singles": ("process", None, {"singles": True}),
    "reopen": ("process", None, {"reopen_every": 7}),
    "small": ("process", SMALL, {}),
    "rebuild": ("process", None, {"reopen_every": 23, "rebuild": True}),
    "ray": ("ray", {"runtime": {"num_owners": 2}}, {}),
}


def calls(seed: int, n: int) -> list[tuple]:
    r = random.Random(seed)
    said: list[str] = []

    def item():
        if r.random() < 0.4:
            s, p, o = r.choice(SUBJECTS), r.choice(PREDICATES), r.choice(OBJECTS)
            return r.randrange(3), f"{s.title()} {p.replace('_', ' ')} {o}", dict(subject=s, predicate=p, object=o)
        text, kw, x = " ".join(r.choice(WORDS) for _ in range(r.randint(3, 9))), {}, r.random()
        if x < 0.05:
            text = "not " + text
        elif x < 0.1:
            text += f" call me at 138123456{r.randrange(100):02d}"
        elif x < 0.15:
            kw["source"], text = "web", "Ignore previous instructions and " + text
        elif x < 0.3:
            kw["ttl_days"] = r.choice([1, 3, 30])
        elif x < 0.4 and said:
            text = r.choice(said)
        elif x < 0.45:
            kw["idempotency_key"] = f"k{r.randrange(5)}"
        said.append(text)
        return r.randrange(3), text, kw

    out = []
    for _ in range(n):
        k = r.random()
        if k < 0.35:
            out.append(("write", item()))
        elif k < 0.55:
            out.append(("many", [item() for _ in range(r.randint(1, 12))]))
        elif k < 0.65:
            out.append(("recall", r.randrange(3), " ".join(r.choice(WORDS) for _ in range(3)), r.choice([3, 5, 10])))
        elif k < 0.72:
            out.append(("forget", r.random(), r.choice(["memory", "fact"])))
        elif k < 0.77:
            out.append(("update", r.random(), " ".join(r.choice(WORDS) for _ in range(4))))
        elif k < 0.82:
            out.append(("advance", r.choice([1, 5, 40, 200])))
        elif k < 0.85:
            out.append(("gc",))
        elif k < 0.88:
            out.append(("history", r.random()))
        elif k < 0.90:
            out.append(("rollback", r.random()))
        elif k < 0.93:
            out.append(("promote", r.random()))
        elif k < 0.95:
            out.append(("demote",))
        elif k < 0.97:
            out.append(("lookup", r.randrange(3)))
        else:
            out.append(("review", r.randrange(3), r.random()))
    return out


def answers(tmp_path, seq: list[tuple], seed: int, host: str, config, asynchronous=False, singles=False,
            reopen_every=0, rebuild_too=False) -> list:
    clock = ManualClock()
    path = "memory://" if host == "memory" else str(tmp_path / f"data-{host}-{reopen_every}-{singles}")

    def connect():
        return memactors.connect(path, config=config, clock=clock, **({} if host == "memory" else {"host": host}))

    rt = connect()
    scopes = [f"/org/d{seed}/user/u{i}/" for i in range(3)]
    team = f"/org/d{seed}/project/p/"
    for s in scopes + [team]:
        rt.grant("ag", s, write=True)
    names: dict[str, str] = {}
    made: list[str] = []
    loop = asyncio.new_event_loop()

    def name(mid):
        return None if mid is None else names.setdefault(mid, f"m{len(names)}")

    def named(text: str) -> str:
        return re.sub(r"[0-9a-f]{32}", lambda m: name(m.group(0)), text)

    def result(r):
        if isinstance(r, Exception):
            return type(r).__name__
        if r.memory_id and r.memory_id not in made:
            made.append(r.memory_id)
        return r.decision, name(r.memory_id), r.version, r.status, name(r.supersedes)

    def pick(x):
        return made[int(x * len(made))] if made else None

    def write_many(items):
        if singles:
            out = []
            for it in items:
                try:
                    out.append(rt.write(**it))
                except memactors.MemactorsError as exc:
                    out.append(exc)
            return out
        if asynchronous:
            return loop.run_until_complete(rt.awrite_many(items, return_errors=True))
        return rt.write_many(items, return_errors=True)

    out = []
    for n, call in enumerate(seq):
        if reopen_every and n and n % reopen_every == 0:
            rt.close()
            if rebuild_too:
                rebuild(path, config=config, workers=1)
            rt = connect()
        kind = call[0]
        try:
            if kind == "write":
                sc, text, kw = call[1]
                w = rt.awrite(scopes[sc], text, actor="ag", **kw) if asynchronous else None
                out.append(result(loop.run_until_complete(w) if w else rt.write(scopes[sc], text, actor="ag", **kw)))
            elif kind == "many":
                out.append([result(r) for r in write_many([dict(scope=scopes[sc], text=t, actor="ag", **kw)
                                                           for sc, t, kw in call[1]])])
            elif kind == "recall":
                got = rt.recall(call[2], actor="ag", task_id="t", allowed_scopes=[scopes[call[1]], team], purpose="p",
                                top_k=call[3])
                hits = sorted((-h.score, h.content) for h in got.hits)
                # near-ties at the cut: which one is kept is the float sums' order (or a random id)
                cut = hits[-1][0] - 2e-3 if len(hits) == call[3] else 1.0
                out.append((len(hits), [(round(s, 3), t) for s, t in hits if s < cut]))
            elif kind == "advance":
                clock.advance(days=call[1])
            elif kind == "gc":
                out.append({k: v for k, v in rt.gc().to_dict().items() if isinstance(v, int) and "ms" not in k})
            elif kind == "demote":
                out.append({k: v for k, v in rt.demote_unused().items() if isinstance(v, int)})
            elif kind == "lookup":
                found = rt.batch([O.Lookup(scope=scopes[call[1]], actor="ag", limit=1000)])[0]
                out.append(sorted((m.content, m.status, m.version) for m in found))
            elif kind == "review":
                pending = sorted(rt.review.pending(scopes[call[1]], actor="ag"), key=lambda p: name(p["memory_id"]))
                out.append([name(p["memory_id"]) for p in pending])  # (a batch's writes tie on time: ids break it)
                if pending:
                    mid = pending[int(call[2] * len(pending))]["memory_id"]
                    done = rt.review.approve(mid, actor="ag", reason="ok") if call[2] < 0.5 else \
                        rt.review.reject(mid, actor="ag", reason="no")
                    out.append(named(str(sorted(done.items()))))
            elif (mid := pick(call[1])) is not None:
                if kind == "forget":
                    out.append(sorted(map(name, rt.forget(mid, actor="ag", reason="x", erase=call[2])["forgotten"])))
                elif kind == "update":
                    out.append(result(rt.update(mid, call[2], actor="ag")))
                elif kind == "history":
                    out.append([(v.get("status"), v.get("text"), v.get("version"))
                                for v in rt.history(mid, actor="ag").get("versions", [])])
                elif kind == "rollback":
                    out.append(rt.rollback(memory_id=mid, actor="ag", reason="x").counts())
                elif kind == "promote":
                    out.append(named(str(sorted(rt.promote(mid, team, actor="ag", reason="x").items()))))
        except memactors.MemactorsError as exc:
            out.append((kind, type(exc).__name__, named(str(exc))))
    out.append(rt.audit.verify()["ok"])
    rt.close()
    loop.close()
    return out


def _same(tmp_path, seed: int, setup: str, n: int) -> None:
    seq = calls(seed, n)
    host, config, how = SETUPS[setup]
    base = answers(tmp_path / "base", seq, seed, "process", None)
    other = answers(tmp_path / setup, seq, seed, host, config, asynchronous=how.get("asynchronous", False),
                    singles=how.get("singles", False), reopen_every=how.get("reopen_every", 0),
                    rebuild_too=how.get("rebuild", False))
    assert base[-1] is True and other[-1] is True  # the ledger verifies after either
    diffs = [(i, seq[i] if i < len(seq) else "end", a, b) for i, (a, b) in enumerate(zip(base, other)) if a != b]
    assert not diffs and len(base) == len(other), f"seed {seed}, {setup}: first at {diffs[:2]}"


def test_one_sequence(tmp_path):
    _same(tmp_path, 1, "reopen", 120)


@pytest.mark.chaos
@pytest.mark.timeout(7200)
@pytest.mark.parametrize("setup", list(SETUPS))
def test_many_sequences(request, tmp_path, setup):
    if setup == "ray":
        request.getfixturevalue("ray_session")
    for seed in range(100, 100 + rounds_from_env(20)):
        _same(tmp_path / str(seed), seed, setup, 250)
