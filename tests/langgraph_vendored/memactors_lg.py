"""What the vendored LangGraph store tests get in place of their backends: ``MemactorsStore``s on
runtimes shared by the session (one per embedder and kind: ``memory://`` or a data folder on
disk, both on the process host), each store with a fresh actor and root scope of its own, so a
"fresh store" costs one grant (the isolation is the scopes', as in production). The runtimes'
clock follows the wall clock plus an offset the TTL tests move (``advance``).

The names upstream imports from SqliteStore's and PostgresStore's private modules (their SQL,
their migrations) are stand-ins here that skip the test asking for them, with the reason.
"""

from __future__ import annotations

import contextlib
import shutil
import tempfile
import time
import uuid

import pytest

pytest.importorskip("langgraph.store.base")

import memactors  # noqa: E402
from memactors.core.clock import ManualClock  # noqa: E402
from memactors.integrations.langgraph import MemactorsStore  # noqa: E402
from memactors.integrations.langgraph.embed import embedder_config  # noqa: E402


class WallClock(ManualClock):
    """Wall time plus an offset that only grows (``advance``): writes keep real order, TTL tests jump."""

    def __init__(self) -> None:
        super().__init__(0)
        self.offset_us = 0

    def now_us(self) -> int:
        return time.time_ns() // 1000 + self.offset_us

    def advance(self, *, days: float = 0, seconds: float = 0) -> int:
        self.offset_us += int(days * 86_400_000_000 + seconds * 1_000_000)
        self._now = self.now_us()
        self._tell()
        return self._now


CLOCK = WallClock()
_RUNTIMES: dict = {}
_FOLDERS: list = []


def runtime(kind: str = "memory", index=None):
    embed = (index or {}).get("embed")
    key = (kind, None if embed is None else (type(embed).__module__, type(embed).__qualname__, index["dims"]))
    rt = _RUNTIMES.get(key)
    if rt is None:
        cfg = {"embedder": embedder_config(embed, index["dims"])} if embed is not None else {}
        if kind == "memory":
            path = "memory://"
        else:
            folder = tempfile.mkdtemp(prefix="memactors-lg-")
            _FOLDERS.append(folder)
            path = folder + "/data"
        rt = _RUNTIMES[key] = memactors.connect(path, config=cfg or None, clock=CLOCK, host="process")
    return rt


def make_store(index=None, ttl=None, kind: str = "memory", cls=MemactorsStore, **kw) -> MemactorsStore:
    rt = runtime(kind, index)
    tag = uuid.uuid4().hex[:12]
    actor, root = f"lg-{tag}", f"/org/lgtest/user/u{tag}/"
    rt.grant(actor, root, read=True, write=True, by="tests")
    return cls(rt, actor=actor, root=root, index=index, ttl=ttl, **kw)


@contextlib.contextmanager
def store_cm(kind: str = "memory", index=None, ttl=None, cls=MemactorsStore):
    store = make_store(index=index, ttl=ttl, kind=kind, cls=cls)
    try:
        yield store
    finally:
        store.close()


@contextlib.asynccontextmanager
async def astore_cm(kind: str = "memory", index=None, ttl=None, cls=MemactorsStore):
    store = make_store(index=index, ttl=ttl, kind=kind, cls=cls)
    try:
        yield store
    finally:
        store.close()


def close_all() -> None:
    for rt in _RUNTIMES.values():
        rt.close()
    _RUNTIMES.clear()
    for f in _FOLDERS:
        shutil.rmtree(f, ignore_errors=True)


# --- PostgresStore's TTL tests -------------------------------------------------------------------

TTL_SECONDS = 6
TTL_MINUTES = TTL_SECONDS / 60


def advance(seconds: float) -> None:
    """Upstream sleeps; here the runtimes' clock moves (no wall time spent)."""
    CLOCK.advance(seconds=seconds)


@pytest.fixture
def pg_ttl_store():
    ttl_config = {"default_ttl": TTL_MINUTES, "refresh_on_read": True, "sweep_interval_minutes": TTL_MINUTES / 2}
    store = make_store(ttl=ttl_config)
    store.start_ttl_sweeper()
    yield store
    store.stop_ttl_sweeper()
    store.close()


def _record(store: MemactorsStore, ns: tuple, key: str):
    return store._stored(ns, key)


def expire_now(store: MemactorsStore, ns: tuple, key: str) -> None:
    """Upstream backdates the row's expires_at; here the item is put again with a TTL that has
    run out once the clock moves a second (nothing else of the store expires that soon)."""
    item = store._stored(ns, key)
    d = MemactorsStore._item(item)
    store.put(ns, key, d["value"], ttl=0.5 / 60)
    advance(1.0)


def row_exists(store: MemactorsStore, ns: tuple, key: str) -> bool:
    return store._stored(ns, key) is not None


def stored_expires_at(store: MemactorsStore, ns: tuple, key: str):
    rec = store._stored(ns, key)
    return None if rec is None else rec.hard_expires_at


# --- SqliteStore internals: not behaviour of a store ----------------------------------------------

SqliteIndexConfig = dict


def _internal(*_a, **_k):
    pytest.skip("SqliteStore's SQL internals (GLOB/LIKE escaping, its match function, its query builder): "
                "not behaviour a store shares")


_escape_glob_literal = _namespace_match_pattern = _internal
NS_MATCH_FUNCTION = "n/a"


class BaseSqliteStore:
    def __init__(self, *a, **k) -> None:
        _internal()
