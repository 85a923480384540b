# Vendored from langchain-ai/langgraph, libs/checkpoint-postgres/tests/test_store.py, at commit f09cfe8ffc1eeffd68f4b628ed69c30f7cad229f.
# Copyright (c) 2024 LangChain, Inc. MIT License (see LICENSE-langgraph in this folder).
# Changes for memactors (the tests themselves are upstream's):
#   - only the TTL tests: test_store_ttl, test_omit_expired_filters_read_paths, test_omit_expired_disabled_preserves_expired_rows, test_omit_expired_refresh_ttl_only_refreshes_live_rows, test_omit_expired_search_pagination
#   - the store fixture (pg_ttl_store) is a MemactorsStore with upstream's TTLConfig on a shared runtime whose clock the tests move: time.sleep(s) is advance(s)
#   - _expire_now / _row_exists / _stored_expires_at (SQL on upstream's table) are memactors_lg's: expire_now puts the item again with a TTL that has run out once the clock moves a second (what backdating expires_at does), row_exists and stored_expires_at read the owner's record


import time  # noqa: F401 - upstream's; the tests' sleeps move our clock (advance below)
from typing import Any  # noqa: F401

import pytest

from memactors.integrations.langgraph import MemactorsStore as PostgresStore
from memactors_lg import TTL_MINUTES, TTL_SECONDS, advance, expire_now as _expire_now, pg_ttl_store as store  # noqa: F401
from memactors_lg import row_exists as _row_exists, stored_expires_at as _stored_expires_at  # noqa: F401


def test_store_ttl(store):
    # Assumes a TTL of 1 minute = 60 seconds
    ns = ("foo",)
    store.put(
        ns,
        key="item1",
        value={"foo": "bar"},
        ttl=TTL_MINUTES,  # type: ignore
    )
    advance(TTL_SECONDS - 2)
    res = store.get(ns, key="item1", refresh_ttl=True)
    assert res is not None
    advance(TTL_SECONDS - 2)
    results = store.search(ns, query="foo", refresh_ttl=True)
    assert len(results) == 1
    advance(TTL_SECONDS - 2)
    res = store.get(ns, key="item1", refresh_ttl=False)
    assert res is not None
    advance(TTL_SECONDS - 1)
    # Now has been (TTL_SECONDS-2)*2 > TTL_SECONDS + TTL_SECONDS/2
    res = store.search(ns, query="bar", refresh_ttl=False)
    assert len(res) == 0


def test_omit_expired_filters_read_paths(store: PostgresStore) -> None:
    store.stop_ttl_sweeper()  # deterministic: no background deletion
    store.ttl_config["omit_expired"] = True

    expired_ns = ("omit", "expired")
    control_ns = ("omit", "control")
    store.put(expired_ns, "e", {"data": "gone"}, ttl=TTL_MINUTES)
    store.put(control_ns, "c", {"data": "keep"}, ttl=None)
    _expire_now(store, expired_ns, "e")

    # The row is expired but physically still present (unswept).
    assert _row_exists(store, expired_ns, "e")

    # get omits it; the never-expiring control is still returned.
    assert store.get(expired_ns, "e") is None
    assert store.get(control_ns, "c") is not None

    # search omits it but returns the control.
    assert store.search(expired_ns) == []
    assert [i.key for i in store.search(control_ns)] == ["c"]

    # list_namespaces drops the expired-only namespace, keeps the control.
    namespaces = store.list_namespaces(prefix=("omit",))
    assert expired_ns not in namespaces
    assert control_ns in namespaces


@pytest.mark.parametrize("omit", [None, False], ids=["default", "explicit-false"])
def test_omit_expired_disabled_preserves_expired_rows(
    store: PostgresStore, omit
) -> None:
    store.stop_ttl_sweeper()
    if omit is not None:
        store.ttl_config["omit_expired"] = omit

    ns = ("keep",)
    store.put(ns, "k", {"data": "still-here"}, ttl=TTL_MINUTES)
    _expire_now(store, ns, "k")

    assert store.get(ns, "k", refresh_ttl=False) is not None
    assert [i.key for i in store.search(ns, refresh_ttl=False)] == ["k"]
    assert ns in store.list_namespaces(prefix=("keep",))


def test_omit_expired_refresh_ttl_only_refreshes_live_rows(
    store: PostgresStore,
) -> None:
    store.stop_ttl_sweeper()
    store.ttl_config["omit_expired"] = True

    ns = ("refresh",)
    store.put(ns, "expired", {"n": 0}, ttl=TTL_MINUTES)
    store.put(ns, "live_get", {"n": 1}, ttl=TTL_MINUTES)
    store.put(ns, "live_search", {"n": 2}, ttl=TTL_MINUTES)
    _expire_now(store, ns, "expired")

    expired_before = _stored_expires_at(store, ns, "expired")
    get_before = _stored_expires_at(store, ns, "live_get")
    search_before = _stored_expires_at(store, ns, "live_search")

    # refresh_ttl=True must NOT resurrect the expired row (via get or search)...
    assert store.get(ns, "expired", refresh_ttl=True) is None
    assert "expired" not in [i.key for i in store.search(ns, refresh_ttl=True)]
    assert _stored_expires_at(store, ns, "expired") == expired_before

    # ...but must still extend the live rows that were read.
    assert store.get(ns, "live_get", refresh_ttl=True) is not None
    assert _stored_expires_at(store, ns, "live_get") > get_before
    assert _stored_expires_at(store, ns, "live_search") > search_before


def test_omit_expired_search_pagination(store: PostgresStore) -> None:
    store.stop_ttl_sweeper()
    store.ttl_config["omit_expired"] = True

    ns = ("page",)
    for k in ("a", "b", "c"):
        store.put(ns, k, {"k": k}, ttl=TTL_MINUTES)
    store.put(ns, "expired", {"k": "x"}, ttl=TTL_MINUTES)
    _expire_now(store, ns, "expired")

    seconds_ago = {"a": 1, "expired": 2, "b": 3, "c": 4}
    # updated_at DESC orders these a, expired, b, c, so the expired row sits inside
    # the first limit=2 window. Correct (pre-LIMIT) filtering yields live pages
    # [a, b] then [c]; post-LIMIT filtering would underfill page 1 to just [a].
    with store._cursor() as cur:
        for key, secs in seconds_ago.items():
            cur.execute(
                "UPDATE store SET updated_at = NOW() - (%s * INTERVAL '1 second') "
                "WHERE prefix = %s AND key = %s",
                (secs, ".".join(ns), key),
            )

    page1 = store.search(ns, limit=2, offset=0)
    page2 = store.search(ns, limit=2, offset=2)
    assert [i.key for i in page1] == ["a", "b"]
    assert [i.key for i in page2] == ["c"]
