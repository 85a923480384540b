"""The runtime facade, split by job:

- ``facade``: the public ``Runtime`` and ``connect`` (writes, recalls, forgets, grants);
- ``startup``: starting or finding a data folder's actors;
- ``calls``: calling actors, Ray's errors turned into the project's;
- ``ray_host``, ``process_host``: the hosts (the Ray host's hot recall path: ``memactors.actors.hot_socket``);
- ``evidence``: the recall evidence log;
- ``audit``, ``review``: ``rt.audit``, ``rt.review``;
- ``session``: agent sessions (``rt.session``: L0, the loop's hooks, promotion), push sessions, ``Tick``;
- ``l3``: ``rt.retrieve``, L3 retrievers under the recall contract;
- ``results``: ``Hit``, ``RecallResult``, ``Memory``, ``ForgetResult``, ``GrantResult``;
- ``batch``: ``rt.batch`` / ``rt.abatch`` over ``memactors.ops``, concurrent calls coalesced per owner;
- ``agent``: ``rt.agent(...)``, a handle bound to one identity, each verb one op;
- ``renamed``: old parameter names kept for one release with a DeprecationWarning;
- ``versions_api``: ``rt.history`` and ``rt.update``; ``actions``: what a tool call depended on;
- ``alerts``: ``[alerts]``; ``backup``: ``rt.backup``, ``restore`` and ``[backup]``'s schedule.
"""

from .agent import Agent
from .backup import restore
from .facade import Runtime, connect, load_config
from .results import ForgetResult, GrantResult, Hit, Memory, RecallResult
from .async_api import AsyncSession
from .session import Prompt, Session, TurnResult

__all__ = ["Agent", "AsyncSession", "ForgetResult", "GrantResult", "Hit", "Memory", "Prompt", "RecallResult", "Runtime",
           "Session", "TurnResult", "connect", "load_config", "restore"]
