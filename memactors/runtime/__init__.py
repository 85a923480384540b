"""The runtime facade, split by job:

- ``facade``: the public ``Runtime`` and ``connect`` (writes, recalls, forgets, grants);
- ``startup``: starting or finding a data folder's actors;
- ``calls``: calling actors, Ray's errors turned into the project's;
- ``hot_path``: the compiled-graph recall to one owner;
- ``evidence``: the recall evidence log;
- ``audit``, ``review``: ``rt.audit``, ``rt.review``;
- ``session``: agent sessions (``rt.session``: L0, the loop's hooks, promotion), push sessions, ``Tick``;
- ``l3``: ``rt.retrieve``, L3 retrievers under the recall contract;
- ``results``: ``Hit`` and ``RecallResult``;
- ``versions_api``: ``rt.history`` and ``rt.update``; ``actions``: what a tool call depended on;
- ``alerts``: ``[alerts]``; ``backup``: ``rt.backup``, ``restore`` and ``[backup]``'s schedule.
"""

from .backup import restore
from .facade import Runtime, connect, load_config
from .results import Hit, RecallResult
from .session import AsyncSession, Prompt, Session, TurnResult

__all__ = ["AsyncSession", "Hit", "Prompt", "RecallResult", "Runtime", "Session", "TurnResult", "connect",
           "load_config", "restore"]
