"""Vendors LangGraph's store tests into this folder: run from a checkout of langchain-ai/langgraph (any commit holding COMMIT)."""
import re, subprocess, sys
COMMIT = "f09cfe8ffc1eeffd68f4b628ed69c30f7cad229f"
OUT = __import__("os").path.dirname(__import__("os").path.abspath(__file__)) + "/"
def show(p): return subprocess.run(["git", "show", f"{COMMIT}:{p}"], capture_output=True, text=True, check=True).stdout
def header(src, changes):
    return (f'# Vendored from langchain-ai/langgraph, {src}, at commit {COMMIT}.\n'
            '# Copyright (c) 2024 LangChain, Inc. MIT License (see LICENSE-langgraph in this folder).\n'
            '# Changes for memactors (the tests themselves are upstream\'s):\n'
            + "".join(f"#   - {c}\n" for c in changes) + "\n")

ANYIO = "\n\n# memactors: upstream runs its async tests with pytest-asyncio's auto mode; here anyio's plugin.\npytestmark = pytest.mark.anyio\n"


def sub(text, old, new, count=1):
    if old not in text:
        sys.exit(f"not found: {old[:80]!r}")
    return text.replace(old, new) if count == 0 else text.replace(old, new, count)

# 1. libs/checkpoint/tests/embed_test_utils.py: as is.
src = "libs/checkpoint/tests/embed_test_utils.py"
open(OUT + "lg_embed_test_utils.py", "w").write(header(src, ["none"]) + show(src))

# 2. libs/checkpoint/tests/test_store.py: InMemoryStore -> MemactorsStore on a shared runtime.
src = "libs/checkpoint/tests/test_store.py"
t = show(src)
t = sub(t, "from langgraph.store.memory import InMemoryStore\nfrom tests.embed_test_utils import CharacterEmbeddings\n",
        "from lg_embed_test_utils import CharacterEmbeddings\n\nfrom memactors.integrations.langgraph import MemactorsStore\nfrom memactors_lg import make_store\n")
t = sub(t, 'mocker.spy(InMemoryStore, "batch")', 'mocker.spy(MemactorsStore, "batch")')
t = t.replace("InMemoryStore(", "make_store(")
assert "InMemoryStore" not in t
open(OUT + "test_lg_store.py", "w").write(header(src, [
    "InMemoryStore(...) is make_store(...): a MemactorsStore (a fresh actor and root scope) on a runtime shared by the module's tests",
    "the spy on InMemoryStore.batch is on MemactorsStore.batch",
    "imports: CharacterEmbeddings from lg_embed_test_utils", "async tests marked anyio (pytestmark at the end)"]) + t + ANYIO)

# 3. libs/checkpoint-sqlite/tests/test_store.py
src = "libs/checkpoint-sqlite/tests/test_store.py"
t = show(src)
t = sub(t, "from langgraph.store.sqlite import SqliteStore\n", "from memactors.integrations.langgraph import MemactorsStore as SqliteStore\nfrom memactors_lg import make_store, store_cm\n")
t = re.sub(r"from langgraph\.store\.sqlite\.base import \(\n(.*?)\)\n", "from memactors_lg import (\n\\1)\n", t, flags=re.S)
fx_start = t.index('@pytest.fixture(scope="function", params=["memory", "file"])\ndef store(')
fx_end = t.index("@pytest.fixture(scope=\"function\")\ndef fake_embeddings")
t = t[:fx_start] + '''@pytest.fixture(scope="function", params=["memory", "file"])
def store(request: Any) -> Generator[SqliteStore, None, None]:
    """A MemactorsStore for testing (memory: a memory:// runtime; file: one on a data folder)."""
    with store_cm(kind=request.param) as store:
        yield store


''' + t[fx_end:]
cv_start = t.index("@contextmanager\ndef create_vector_store(")
cv_end = t.index("def test_batch_order(")
t = t[:cv_start] + '''@contextmanager
def create_vector_store(
    fake_embeddings: CharacterEmbeddings,
    text_fields: list[str] | None = None,
    distance_type: str = "cosine",
    conn_type: Literal["memory", "file"] = "memory",
) -> Generator[SqliteStore, None, None]:
    """A MemactorsStore whose runtime embeds with ``fake_embeddings``."""
    index_config: SqliteIndexConfig = {
        "dims": fake_embeddings.dims,
        "embed": fake_embeddings,
        "text_fields": text_fields,
        "distance_type": distance_type,
    }
    with store_cm(kind=conn_type, index=index_config) as store:
        yield store


''' + t[cv_end:]
t = t.replace('with SqliteStore.from_conn_string(":memory:") as store:', 'with store_cm() as store:')
open(OUT + "test_lg_sqlite_store.py", "w").write(header(src, [
    "SqliteStore is MemactorsStore; the store fixture and create_vector_store make one on a shared runtime (memory:// or a data folder) with a fresh actor and root scope",
    "SqliteStore.from_conn_string(...) in TestSqliteStore is store_cm()",
    "the SqliteStore internals the tests import (_namespace_match_pattern, BaseSqliteStore, ...) come from memactors_lg, where each raises a skip naming the reason", "async tests marked anyio (pytestmark at the end)"]) + t + ANYIO)

# 4. libs/checkpoint-sqlite/tests/test_async_store.py
src = "libs/checkpoint-sqlite/tests/test_async_store.py"
t = show(src)
t = sub(t, "from langgraph.store.sqlite import AsyncSqliteStore\nfrom langgraph.store.sqlite.base import SqliteIndexConfig\nfrom tests.test_store import CharacterEmbeddings\n",
        "from memactors.integrations.langgraph import MemactorsStore as AsyncSqliteStore\nfrom memactors_lg import SqliteIndexConfig, astore_cm\nfrom test_lg_sqlite_store import CharacterEmbeddings\n")
fx_start = t.index('@pytest.fixture(scope="function", params=["memory", "file"])\nasync def store(')
fx_end = t.index('@pytest.fixture(scope="function")\ndef fake_embeddings')
t = t[:fx_start] + '''@pytest.fixture(scope="function", params=["memory", "file"])
def store(request: pytest.FixtureRequest) -> Generator[AsyncSqliteStore, None, None]:
    """A MemactorsStore for testing (memory: a memory:// runtime; file: one on a data folder)."""
    from memactors_lg import store_cm

    with store_cm(kind=request.param) as store:
        yield store


''' + t[fx_end:]
cv_start = t.index("@asynccontextmanager\nasync def create_vector_store(")
cv_end = t.index('@pytest.fixture(scope="function", params=["memory", "file"])\ndef conn_string(')
t = t[:cv_start] + '''@asynccontextmanager
async def create_vector_store(
    fake_embeddings: CharacterEmbeddings,
    conn_string: str = ":memory:",
    text_fields: list[str] | None = None,
) -> AsyncIterator[AsyncSqliteStore]:
    """A MemactorsStore whose runtime embeds with ``fake_embeddings``."""
    index_config: SqliteIndexConfig = {
        "dims": fake_embeddings.dims,
        "embed": fake_embeddings,
        "text_fields": text_fields,
    }
    async with astore_cm(kind="memory" if conn_string == ":memory:" else "file", index=index_config) as store:
        yield store


''' + t[cv_end:]
t = re.sub(r"async with AsyncSqliteStore\.from_conn_string\(\s*conn_string\s*\) as store:", "async with astore_cm(kind=\"memory\" if conn_string == \":memory:\" else \"file\") as store:", t)
assert "from_conn_string" not in t, [l for l in t.splitlines() if "from_conn_string" in l]
open(OUT + "test_lg_sqlite_async_store.py", "w").write(header(src, [
    "AsyncSqliteStore is MemactorsStore; the store fixture (sync here), create_vector_store and from_conn_string(conn_string) make one on a shared runtime with a fresh actor and root scope",
    "imports: CharacterEmbeddings from test_lg_sqlite_store", "async tests marked anyio (pytestmark at the end)"]) + t + ANYIO)

# 5. libs/checkpoint-postgres/tests/test_store.py: the TTL tests only.
src = "libs/checkpoint-postgres/tests/test_store.py"
t = show(src)
keep = ["test_store_ttl", "test_omit_expired_filters_read_paths", "test_omit_expired_disabled_preserves_expired_rows",
        "test_omit_expired_refresh_ttl_only_refreshes_live_rows", "test_omit_expired_search_pagination"]
blocks = t.split("\n\n\n")
out = []
for b in blocks:
    m = re.match(r"(?:@pytest\.mark\.parametrize\([^\n]*\)\n)*(?:async )?def (\w+)", b)
    if m and m.group(1) in keep:
        out.append(b)
body = "\n\n\n".join(x.rstrip() for x in out)
pre = '''import time  # noqa: F401 - upstream's; the tests' sleeps move our clock (advance below)
from typing import Any  # noqa: F401

import pytest

from memactors.integrations.langgraph import MemactorsStore as PostgresStore
from memactors_lg import TTL_MINUTES, TTL_SECONDS, advance, expire_now as _expire_now, pg_ttl_store as store  # noqa: F401
from memactors_lg import row_exists as _row_exists, stored_expires_at as _stored_expires_at  # noqa: F401


'''
body = body.replace("time.sleep(", "advance(")
open(OUT + "test_lg_postgres_ttl.py", "w").write(header(src, [
    "only the TTL tests: " + ", ".join(keep),
    "the store fixture (pg_ttl_store) is a MemactorsStore with upstream's TTLConfig on a shared runtime whose clock the tests move: time.sleep(s) is advance(s)",
    "_expire_now / _row_exists / _stored_expires_at (SQL on upstream's table) are memactors_lg's: expire_now puts the item again with a TTL that has run out once the clock moves a second (what backdating expires_at does), row_exists and stored_expires_at read the owner's record"]) + "\n" + pre + body + "\n")
print("ok")
