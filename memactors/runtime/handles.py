"""Two small handles the runtime hands out: ``Tick`` (a simulation tick's writes, sent as one
``write_many`` at its end: ``rt.tick()``) and ``PushSession`` (push recall at a task's start and
every K turns: ``rt.push_session()``)."""

from __future__ import annotations


class PushSession:
    """Push recall at task start and every K turns (``[recall].push_refresh_turns``)."""

    def __init__(self, rt, goal: str, kw: dict) -> None:
        self._rt, self.goal, self._kw, self.turns = rt, goal, kw, 0

    def start(self):
        self.turns = 0
        return self._rt.push(self.goal, **self._kw)

    def turn(self, goal: str | None = None):
        """Count a turn; push again (for ``goal``, if the task's focus moved) when one is due."""
        self.turns += 1
        if goal is not None:
            self.goal = goal
        if self.turns % max(1, self._rt.config.recall.push_refresh_turns):
            return None
        return self._rt.push(self.goal, **self._kw)


class Tick:
    """A simulation tick's writes, committed together at its end (``with rt.tick() as t``):
    ``t.write(...)`` and ``t.write_many([...])`` only collect; leaving the block sends them as
    one ``write_many`` (each owner decides its share in one batch and makes it visible at once),
    and ``t.results`` holds the results in the order written. Recalls made during the tick see
    the state before it. An exception inside the block writes nothing."""

    def __init__(self, rt) -> None:
        self._rt, self._items, self.results = rt, [], None

    def write(self, scope: str, text: str, **kw) -> int:
        """Collect one write (``rt.write``'s arguments); returns its position in ``results``."""
        self._items.append(dict(scope=scope, text=text, **kw))
        return len(self._items) - 1

    def write_many(self, items: list[dict]) -> range:
        start = len(self._items)
        self._items.extend(items)
        return range(start, len(self._items))

    def __enter__(self) -> Tick:
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self.results = self._rt.write_many(self._items) if self._items else []
