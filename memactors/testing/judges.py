"""Judges for tests of code that configures one (``[lifecycle].judge``): a judge that fails, as
a model behind a network does at times. A close call it cannot decide is left to a reviewer."""

from __future__ import annotations

from ..core.contradictions import Judge


class FailingJudge(Judge):
    """Raises on every call (``[lifecycle].judge = "memactors.testing.judges:FailingJudge"``)."""

    name = "failing"

    def decide(self, live: dict, incoming: dict) -> str | None:
        raise RuntimeError("the judge's backend is down")
