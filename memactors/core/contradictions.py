"""The judge of close calls (DESIGN section 7): one small abstract class an LLM may sit behind.

A write that contradicts the live version of a fact (same subject and predicate, another
object, from another source kind) with a confidence gap of at most ``[lifecycle].
contradiction_gap`` is a close call. Without a judge (the default: deterministic, no model)
both stay live, flagged for a reviewer. With one configured (``[lifecycle].judge =
"package.module:Factory"``, a callable returning a ``Judge``), the owner asks it; its verdict
is recorded in the ledger with its name, so a replay never asks again.
"""

from __future__ import annotations

import importlib
from abc import ABC, abstractmethod

from .errors import ConfigError


class Judge(ABC):
    """Decides close calls between two versions of one fact."""

    name = "judge"

    @abstractmethod
    def decide(self, live: dict, incoming: dict) -> str | None:
        """"live" keeps the live version, "incoming" makes the new one live, None leaves the
        call to a reviewer. Both are records (content as stored, after the write gate)."""


def load_judge(path: str) -> Judge | None:
    """The judge named by ``path`` ("package.module:Factory"), or None for "" (no judge)."""
    if not path:
        return None
    module, _, attr = path.partition(":")
    try:
        judge = getattr(importlib.import_module(module), attr)()
    except (ImportError, AttributeError, TypeError, ValueError) as exc:
        raise ConfigError(f"[lifecycle].judge cannot be loaded ({type(exc).__name__}); "
                          "give 'package.module:Factory' returning a memactors.core.contradictions.Judge") from None
    if not isinstance(judge, Judge):
        raise ConfigError("[lifecycle].judge must build a memactors.core.contradictions.Judge")
    return judge


class NewestWins(Judge):
    """A deterministic judge (an example, and a policy some deployments want): the incoming
    version wins every close call."""

    name = "newest-wins"

    def decide(self, live: dict, incoming: dict) -> str | None:
        return "incoming"
