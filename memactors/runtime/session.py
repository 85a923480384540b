"""Sessions bound to one task: push recall at the task's start and every K turns."""

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
