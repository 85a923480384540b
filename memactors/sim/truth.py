"""Ground truth: what each subject's predicates hold at every tick.

A timeline per (subject, predicate) is a sorted list of ``(tick, phase, value)``: phase SET (the
user states a value; applied before the tick's recalls) or FORGET (the user asks to forget;
applied after the tick's recalls, so a recall in the same tick may still see the value).
Values are never reused for one (subject, predicate), which makes "outdated" and "forgotten"
properties of a value: no memory id of any backend is needed to judge a hit.
"""

from __future__ import annotations

from bisect import bisect_left
from collections import defaultdict

import numpy as np

SET, RECALL, FORGET = 0, 1, 2


class Truth:
    """Timelines, and the questions the metrics ask of them at a tick's recall phase."""

    def __init__(self) -> None:
        self.timelines: dict[tuple[str, str], list[tuple[int, int, str | None]]] = {}
        self.scheduled: dict[int, list[tuple[str, str, str, str | None]]] = defaultdict(list)  # tick -> (kind, subject, predicate, value)

    def add(self, subject: str, predicate: str, entries: list[tuple[int, int, str | None]]) -> None:
        if not entries:
            return
        self.timelines[(subject, predicate)] = entries
        for tick, phase, value in entries:
            self.scheduled[tick].append(("set" if phase == SET else "forget", subject, predicate, value))

    def _before(self, subject: str, predicate: str, tick: int) -> list[tuple[int, int, str | None]]:
        tl = self.timelines.get((subject, predicate))
        if not tl:
            return []
        return tl[:bisect_left(tl, (tick, RECALL, ""))]

    def current(self, subject: str, predicate: str, tick: int) -> str | None:
        """The value a recall at ``tick`` should find, or None (never stated, or forgotten)."""
        past = self._before(subject, predicate, tick)
        return past[-1][2] if past else None

    def held(self, subject: str, predicate: str, tick: int) -> list[str]:
        """Every value stated up to a recall at ``tick``, oldest first."""
        return [v for _, phase, v in self._before(subject, predicate, tick) if phase == SET]

    def forgotten(self, subject: str, predicate: str, tick: int) -> set[str]:
        """Values the user asked to forget before a recall at ``tick`` (never to be recalled)."""
        out: set[str] = set()
        pending: list[str] = []
        for _, phase, v in self._before(subject, predicate, tick):
            if phase == SET:
                pending.append(v)
            else:
                out.update(pending)
                pending = []
        return out

    def staleness(self, subject: str, predicate: str, value: str, tick: int) -> str | None:
        """For a recalled ``value`` at ``tick``: "forgotten" (stated before a forget),
        "superseded" (held before, not current), or None (current, or never held)."""
        past = self._before(subject, predicate, tick)
        seen = False
        for i, (_, phase, v) in enumerate(past):
            if phase == SET and v == value:
                seen = True
            elif phase == FORGET and seen:
                return "forgotten"
        if not seen:
            return None
        return None if past[-1][2] == value else "superseded"

    def known(self, subject: str, predicate: str) -> bool:
        return (subject, predicate) in self.timelines


def build_timelines(rng: np.random.Generator, subjects: list[str], vocab: dict[str, tuple[str, tuple[str, ...]]],
                    *, ticks: int, first_ticks: tuple[int, int], change_rate: float, ticks_per_day: int,
                    forget_rate: float = 0.0) -> list[tuple[str, str, list[tuple[int, int, str | None]]]]:
    """Draw each subject's timeline for each predicate of ``vocab``.

    The first value is stated at a tick drawn from ``first_ticks`` (lo, hi); later changes come
    as a Poisson process of ``change_rate`` per day, forgets at ``forget_rate`` per subject per
    day (on a random predicate). Returns ``(subject, predicate, entries)`` triples."""
    n, preds = len(subjects), list(vocab)
    days = ticks / ticks_per_day
    lo, hi = first_ticks
    first = rng.integers(lo, max(hi, lo + 1), (n, len(preds)))
    n_changes = rng.poisson(change_rate * days, (n, len(preds)))
    change_ticks = rng.integers(min(hi, ticks - 1), ticks, int(n_changes.sum())) if ticks > 1 else np.zeros(0, int)
    orders = [rng.permuted(np.tile(np.arange(len(vocab[p][1])), (n, 1)), axis=1) for p in preds]
    n_forgets = rng.poisson(forget_rate * days, n) if forget_rate > 0 else np.zeros(n, int)
    forget_preds = rng.integers(0, len(preds), int(n_forgets.sum()))
    forget_ticks = rng.integers(min(hi, ticks - 1), ticks, int(n_forgets.sum())) if ticks > 1 else np.zeros(0, int)
    forgets: dict[tuple[int, int], list[int]] = defaultdict(list)
    k = 0
    for i, c in enumerate(n_forgets.tolist()):
        for _ in range(c):
            forgets[(i, int(forget_preds[k]))].append(int(forget_ticks[k]))
            k += 1
    out, c = [], 0
    for i, subject in enumerate(subjects):
        for j, p in enumerate(preds):
            m = int(n_changes[i, j])
            sets = sorted({int(first[i, j]), *change_ticks[c:c + m].tolist()})
            c += m
            sets = [t for t in sets if t >= first[i, j]]
            out.append((subject, p, _merge(sets, sorted(forgets.get((i, j), ())), vocab[p][1], orders[j][i])))
    return out


def _merge(sets: list[int], forgets: list[int], values: tuple[str, ...], order: np.ndarray
           ) -> list[tuple[int, int, str | None]]:
    """One timeline: at most one event per tick (a forget wins over a statement on its tick),
    no forget of a value not held, no value used twice."""
    forget_at = set(forgets)
    events = sorted([(t, SET) for t in sets if t not in forget_at] + [(t, FORGET) for t in forget_at])
    entries: list[tuple[int, int, str | None]] = []
    held, used = False, 0
    for tick, phase in events:
        if phase == SET:
            if used >= len(values):
                continue  # vocabulary exhausted for this subject: no more changes
            entries.append((tick, SET, values[int(order[used])]))
            used += 1
            held = True
        elif held:
            entries.append((tick, FORGET, None))
            held = False
    return entries
