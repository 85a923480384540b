"""The runtime facade, split by job:

- ``facade``: the public ``Runtime`` and ``connect`` (writes, recalls, forgets, grants);
- ``startup``: starting or finding a data folder's actors;
- ``calls``: calling actors, Ray's errors turned into the project's;
- ``hot_path``: the compiled-graph recall to one owner;
- ``evidence``: the recall evidence log;
- ``audit``, ``review``, ``session``: ``rt.audit``, ``rt.review``, push sessions;
- ``results``: ``Hit`` and ``RecallResult``.
"""

from .facade import Runtime, connect, load_config
from .results import Hit, RecallResult

__all__ = ["Hit", "RecallResult", "Runtime", "connect", "load_config"]
