"""The MCP server over streamable HTTP on loopback, measured (issue 24).

    .venv/bin/python benchmarks/bench_mcp.py --memories 2000 --round-trips 300 --clients 50 --seconds 60

One runtime (process host, in memory) with ``--memories`` memories in one user's scope, served by
``memactors.integrations.mcp`` on 127.0.0.1 with a bearer token. First one client's ``recall``
round trips, one after another (p50/p95, ms); then ``--clients`` clients in one event loop, each
with its own session, alternating ``remember`` and ``recall`` for ``--seconds``: calls made, calls
refused (any error is counted as refused wrongly: every call is within the actor's grants), and
every remembered id checked afterwards (``get``), so nothing acknowledged is lost.

``--client-process`` runs the round-trip client in a process of its own (``--client URL``, this
script again), so client and server no longer share one interpreter's GIL; the same recall made
directly on the runtime (``rt.recall``, no MCP) is timed beside it.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

import memactors
from memactors.integrations.mcp import HTTPServer, build, free_port, mint

SCOPE = "/org/bench/user/alice/"


@contextlib.asynccontextmanager
async def session(url: str, token: str):
    async with create_mcp_http_client(headers={"Authorization": f"Bearer {token}"}) as hc:
        async with streamable_http_client(url, http_client=hc) as (r, w, *_):
            async with ClientSession(r, w) as s:
                await s.initialize()
                yield s


def body(res) -> dict:
    if res.is_error:
        raise RuntimeError(res.content[0].text[:200])
    return json.loads(res.content[0].text)


async def round_trips(url: str, token: str, n: int) -> list[float]:
    lat = []
    async with session(url, token) as s:
        for i in range(n):
            t0 = time.perf_counter()
            body(await s.call_tool("recall", {"query": f"what does alice like about topic {i % 50}?", "top_k": 5}))
            lat.append(time.perf_counter() - t0)
    return lat


async def crowd(url: str, token: str, clients: int, seconds: float) -> dict:
    made, refused, ids = [0], [0], []
    stop = time.monotonic() + seconds

    async def one(c: int) -> None:
        async with session(url, token) as s:
            i = 0
            while time.monotonic() < stop:
                try:
                    if i % 2 == 0:
                        ids.append(body(await s.call_tool("remember", {"text": f"client {c} note {i}: alice likes topic {i % 50}"}))["memory_id"])
                    else:
                        body(await s.call_tool("recall", {"query": f"topic {i % 50}", "top_k": 5}))
                    made[0] += 1
                except Exception:  # noqa: BLE001 - counted: every call here is allowed
                    refused[0] += 1
                i += 1

    await asyncio.gather(*[one(c) for c in range(clients)])
    lost = 0
    async with session(url, token) as s:
        for mid in ids:
            if body(await s.call_tool("get", {"memory_id": mid}))["memory"] is None:
                lost += 1
    return {"clients": clients, "seconds": seconds, "calls": made[0], "calls_per_s": round(made[0] / seconds, 1),
            "refused": refused[0], "remembered": len(ids), "lost": lost}


def _stats(lat_s) -> dict:
    lat = np.asarray(lat_s) * 1000
    return {"p50": round(float(np.percentile(lat, 50)), 2), "p95": round(float(np.percentile(lat, 95)), 2),
            "n": len(lat)}


def direct(rt, n: int) -> list[float]:
    lat = []
    for i in range(n):
        t0 = time.perf_counter()
        rt.recall(f"what does alice like about topic {i % 50}?", actor="mcp-bench", allowed_scopes=[SCOPE],
                  task_id="mcp", purpose="mcp_tool", top_k=5)
        lat.append(time.perf_counter() - t0)
    return lat


def main() -> None:
    if len(sys.argv) == 5 and sys.argv[1] == "--client":  # the client process: latencies as JSON
        print(json.dumps(asyncio.run(round_trips(sys.argv[2], sys.argv[3], int(sys.argv[4])))))
        return
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--memories", type=int, default=2000)
    ap.add_argument("--round-trips", type=int, default=300)
    ap.add_argument("--clients", type=int, default=50)
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--json", default=None)
    ap.add_argument("--client-process", action="store_true", help="the round-trip client in its own process")
    a = ap.parse_args()
    report = {"load_average_1m_start": os.getloadavg()[0]}
    with memactors.connect("memory://") as rt, tempfile.TemporaryDirectory() as tmp:
        rt.grant("mcp-bench", SCOPE, write=True)
        rt.write_many([{"scope": SCOPE, "text": f"alice note {i} about topic {i % 50}", "actor": "mcp-bench"}
                       for i in range(a.memories)])
        token = mint(os.path.join(tmp, "tokens.json"), "mcp-bench")
        port = free_port()
        srv = HTTPServer(build(rt, tokens=os.path.join(tmp, "tokens.json"), port=port), port=port).start()
        try:
            report["direct_recall_ms"] = _stats(direct(rt, a.round_trips))
            if a.client_process:
                out = subprocess.run([sys.executable, os.path.abspath(__file__), "--client", srv.url, token,
                                      str(a.round_trips)], check=True, capture_output=True, text=True).stdout
                lat = json.loads(out.strip().splitlines()[-1])
            else:
                lat = asyncio.run(round_trips(srv.url, token, a.round_trips))
            report["client"] = "own process" if a.client_process else "the server's process"
            report["recall_round_trip_ms"] = _stats(lat)
            print("direct", report["direct_recall_ms"], "round trips", report["recall_round_trip_ms"], flush=True)
            report["crowd"] = asyncio.run(crowd(srv.url, token, a.clients, a.seconds))
            print("crowd", report["crowd"], flush=True)
        finally:
            srv.stop()
    report["load_average_1m_end"] = os.getloadavg()[0]
    if a.json:
        with open(a.json, "w") as f:
            json.dump(report, f, indent=2)
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
