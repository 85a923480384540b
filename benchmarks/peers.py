"""Peer memory stores measured on the workload of ``benchmarks/workload.py``.

Every peer gets the same embedder, plugged into the store's own embedding hook, so each
store embeds on write and on query exactly as it normally would. Each ``run_<peer>``
returns one result dict; a peer whose package is missing returns ``{"store", "skipped"}``.

Run: ``python -m benchmarks.peers --n 100000 --mem0-n 10000`` (needs the ``[bench]`` extra).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import json
import os
import socket
import sys
import tempfile
import time

import numpy as np

K = 10      # top-k of every recall
CHUNK = 1000  # LangGraph's batched write path: one batch() of PutOps per chunk


def _missing(store: str, *modules: str) -> dict | None:
    for mod in modules:
        try:
            importlib.import_module(mod)
        except ImportError as e:
            return {"store": store, "skipped": f"{mod} not importable: {e}"}
    return None


def _result(store: str, n: int, write_s: float, recall: tuple, **extra) -> dict:
    latencies, returned, cross = recall
    ms = np.asarray(latencies) * 1e3
    return {"store": store, "n": n, "write_per_s": round(n / write_s, 1),
            "recall_p50_ms": round(float(np.percentile(ms, 50)), 3),
            "recall_p95_ms": round(float(np.percentile(ms, 95)), 3),
            "cross_user_hits": cross, "queries": len(latencies), "returned": returned, **extra}


def _recall(search, queries) -> tuple[list[float], int, int]:
    """Time ``search(user, query) -> user ids of the hits`` per query, after one untimed pass
    over the same queries (as ``bench_core`` warms memactors' own recall: caches and indexes
    built, for every store alike).

    Returns (latencies, hits returned, hits owned by another user than the query's)."""
    for user, query in queries:
        search(user, query)
    latencies, returned, cross = [], 0, 0
    for user, query in queries:
        t = time.perf_counter()
        owners = search(user, query)
        latencies.append(time.perf_counter() - t)
        returned += len(owners)
        cross += sum(owner != user for owner in owners)
    return latencies, returned, cross


# -- LangGraph stores ------------------------------------------------------------------------

def _langgraph_index(embedder) -> dict:
    # InMemoryStore reads "fields", SqliteStore reads "text_fields": name both so each embeds
    # only the memory text (their default "$" would embed the whole JSON value, user id included).
    return {"dims": embedder.dim, "embed": lambda texts: embedder.embed(list(texts)).tolist(),
            "fields": ["text"], "text_fields": ["text"]}


def _run_langgraph(name: str, store, memories, queries) -> dict:
    from langgraph.store.base import PutOp

    t = time.perf_counter()
    for start in range(0, len(memories), CHUNK):
        store.batch([PutOp(("users", user, "memories"), str(i), {"text": text, "user_id": user})
                     for i, (user, text) in enumerate(memories[start:start + CHUNK], start)])
    write_s = time.perf_counter() - t

    def search(user, query):
        hits = store.search(("users", user, "memories"), query=query, limit=K)
        return [h.value["user_id"] for h in hits]

    return _result(name, len(memories), write_s, _recall(search, queries))


def run_langgraph_inmemory(memories, queries, embedder, tmpdir) -> dict:
    name = "langgraph-InMemoryStore"
    if skip := _missing(name, "langgraph.store.memory"):
        return skip
    from langgraph.store.memory import InMemoryStore

    return _run_langgraph(name, InMemoryStore(index=_langgraph_index(embedder)), memories, queries)


def _sqlite_with_extensions():
    """A sqlite3 module that can load sqlite-vec: CPython builds without
    --enable-loadable-sqlite-extensions (pyenv's default) need pysqlite3-binary instead."""
    import sqlite3

    if hasattr(sqlite3.Connection, "enable_load_extension"):
        return sqlite3
    return importlib.import_module("pysqlite3.dbapi2")


def run_langgraph_sqlite(memories, queries, embedder, tmpdir) -> dict:
    name = "langgraph-SqliteStore"
    if skip := _missing(name, "langgraph.store.sqlite", "sqlite_vec"):
        return skip
    from langgraph.store.sqlite import SqliteStore

    try:
        sqlite = _sqlite_with_extensions()
    except ImportError:
        return {"store": name, "skipped": "this Python's sqlite3 cannot load extensions and pysqlite3-binary is missing"}
    # Same connection settings as SqliteStore.from_conn_string, on a file as in real use.
    conn = sqlite.connect(os.path.join(tmpdir, "langgraph.sqlite"), check_same_thread=False, isolation_level=None)
    try:
        store = SqliteStore(conn, index=_langgraph_index(embedder))
        store.setup()
        return _run_langgraph(name, store, memories, queries) | {"sqlite": sqlite.sqlite_version}
    finally:
        conn.close()


# -- mem0 ------------------------------------------------------------------------------------

def run_mem0(memories, queries, embedder, tmpdir) -> dict:
    name = "mem0"
    # mem0 reads these at import: no telemetry (PostHog, remote notice config), state under tmpdir.
    os.environ["MEM0_TELEMETRY"] = "False"
    os.environ.setdefault("MEM0_DIR", os.path.join(tmpdir, "mem0home"))
    if skip := _missing(name, "mem0", "qdrant_client"):
        return skip
    from mem0 import Memory
    from mem0.embeddings.base import EmbeddingBase

    class SharedEmbedder(EmbeddingBase):
        def embed(self, text, memory_action=None):
            return embedder.embed([text])[0].tolist()

        def embed_batch(self, texts, memory_action="add"):
            return embedder.embed(list(texts)).tolist()

    class NoLLM:
        def generate_response(self, *args, **kwargs):
            raise RuntimeError("the benchmark adds with infer=False: no LLM call is expected")

    # mem0 has no config slot for an embedder object (its "langchain" provider needs the full
    # langchain package), and builds an OpenAI client for the LLM and embedder at init. Point both
    # at a closed loopback port with a dummy key, then swap in ours: no call can leave the machine.
    offline = {"api_key": "unused", "openai_base_url": "http://127.0.0.1:9/v1"}
    mem = Memory.from_config({
        "vector_store": {"provider": "qdrant", "config": {
            "path": os.path.join(tmpdir, "qdrant"), "collection_name": "bench",
            "embedding_model_dims": embedder.dim}},
        "embedder": {"provider": "openai", "config": offline | {"embedding_dims": embedder.dim}},
        "llm": {"provider": "openai", "config": offline},
        "history_db_path": os.path.join(tmpdir, "mem0_history.db"),
    })
    mem.embedding_model, mem.llm = SharedEmbedder(), NoLLM()

    t = time.perf_counter()
    for user, text in memories:  # mem0 has no batch add: one add() per memory
        mem.add(text, user_id=user, infer=False)
    write_s = time.perf_counter() - t

    def search(user, query):
        # threshold=0 so mem0 returns a full top 10 like the others (its default drops scores < 0.1)
        hits = mem.search(query, top_k=K, filters={"user_id": user}, threshold=0.0)["results"]
        return [h.get("user_id") for h in hits]

    return _result(name, len(memories), write_s, _recall(search, queries))


def run_memactors_langgraph(memories, queries, embedder, tmpdir, host: str = "process") -> dict:
    """The same LangGraph workload through memactors' ``MemactorsStore`` (governed: the gate on
    every value, grants, the ledger), each user's namespace mapped to the user's scope."""
    name = f"memactors MemactorsStore ({host} host)"
    if skip := _missing(name, "langgraph.store.base"):
        return skip
    import memactors
    from memactors.integrations.langgraph import MemactorsStore

    with memactors.connect(os.path.join(tmpdir, "data"), host=host) as rt:
        rt.grant("lg-bench", "/org/bench/", write=True)
        store = MemactorsStore(rt, actor="lg-bench", root="/org/bench/",
                               scope_of=lambda ns: f"/org/bench/user/{ns[1]}/")
        return _run_langgraph(name, store, memories, queries)


PEERS = {"langgraph-inmemory": run_langgraph_inmemory, "langgraph-sqlite": run_langgraph_sqlite,
         "mem0": run_mem0, "memactors-langgraph": run_memactors_langgraph,
         "memactors-langgraph-ray": lambda m, q, e, t: run_memactors_langgraph(m, q, e, t, host="ray")}


@contextlib.contextmanager
def no_network(attempts: list):
    """Refuse and record any connection to a non-loopback address while a peer runs."""
    original = socket.socket.connect

    def connect(sock, address):
        host = address[0] if isinstance(address, tuple) else address
        if sock.family in (socket.AF_INET, socket.AF_INET6) and host not in ("127.0.0.1", "::1", "localhost"):
            attempts.append(str(address))
            raise OSError(f"benchmark: network blocked ({address})")
        return original(sock, address)

    socket.socket.connect = connect
    try:
        yield
    finally:
        socket.socket.connect = original


def main(argv=None) -> None:
    from benchmarks.workload import memories, queries
    from memactors.embed import HashEmbedder

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=100_000, help="memories for the LangGraph stores")
    p.add_argument("--mem0-n", type=int, default=10_000, help="memories for mem0 (one add() each: slow)")
    p.add_argument("--users", type=int, default=1_000)
    p.add_argument("--queries", type=int, default=500)
    p.add_argument("--peers", default=",".join(PEERS), help="comma-separated subset of " + ",".join(PEERS))
    args = p.parse_args(argv)

    mems = memories(max(args.n, args.mem0_n), args.users)
    qs = queries(args.queries, args.users)
    embedder = HashEmbedder(384)
    for peer in args.peers.split(","):
        n = args.mem0_n if peer == "mem0" else args.n
        attempts: list[str] = []
        with tempfile.TemporaryDirectory(prefix=f"bench-{peer}-") as tmpdir, no_network(attempts):
            result = PEERS[peer](mems[:n], qs, embedder, tmpdir)
        if attempts:
            result["blocked_network"] = attempts
        print(json.dumps(result, ensure_ascii=False), flush=True)


if __name__ == "__main__":
    sys.exit(main())
