"""The MCP server (``memactors mcp``) through the SDK's own client, over streamable HTTP (in this
process, on loopback) and stdio (the CLI as a subprocess): the tool list, each tool and alias,
refused tokens, calls outside the actor's grants, a blocked secret, hostile arguments (typed
errors that echo nothing of them), identity never from the URL or an argument."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import subprocess
import sys
import uuid

import pytest

pytest.importorskip("mcp.server.mcpserver")

import httpx2  # noqa: E402  (the SDK's HTTP client)
from mcp.client.session import ClientSession  # noqa: E402
from mcp.client.stdio import StdioServerParameters, stdio_client  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402
from mcp.shared._httpx_utils import create_mcp_http_client  # noqa: E402

import memactors  # noqa: E402
from memactors.integrations.mcp import HTTPServer, build, free_port, mint  # noqa: E402

ALICE, BOB = "/org/acme/user/alice/", "/org/acme/user/bob/"
TOOLS = {"remember", "add", "recall", "search", "forget", "delete", "get", "list"}
CANARY = "CANARY-" + uuid.uuid4().hex


@pytest.fixture(scope="module")
def http(tmp_path_factory):
    rt = memactors.connect("memory://")
    rt.grant("alice-agent", ALICE, write=True)
    rt.grant("bob-agent", BOB, write=True)
    tf = str(tmp_path_factory.mktemp("mcp") / "tokens.json")
    toks = {"alice": mint(tf, "alice-agent"), "bob": mint(tf, "bob-agent")}
    port = free_port()
    srv = HTTPServer(build(rt, tokens=tf, port=port), port=port).start()
    yield srv, toks, tf, rt
    srv.stop()
    rt.close()


@contextlib.asynccontextmanager
async def session(url: str, token: str | None):
    headers = {"Authorization": f"Bearer {token}"} if token else None
    async with create_mcp_http_client(headers=headers) as hc:
        async with streamable_http_client(url, http_client=hc) as (r, w, *_):
            async with ClientSession(r, w) as s:
                await s.initialize()
                yield s


def run(coro):
    return asyncio.run(coro)


def body(res) -> dict:
    assert not res.is_error, res.content[0].text
    return json.loads(res.content[0].text)


def error_text(res) -> str:
    assert res.is_error
    return res.content[0].text


def test_the_token_file_holds_only_digests(http):
    srv, toks, tf, _ = http
    text = open(tf).read()
    assert all(t not in text for t in toks.values())
    assert oct(os.stat(tf).st_mode & 0o777) == "0o600"


def test_tool_listing_and_each_tool_over_http(http):
    srv, toks, _, _ = http

    async def go():
        async with session(srv.url, toks["alice"]) as s:
            names = {t.name for t in (await s.list_tools()).tools}
            assert names == TOOLS
            w = body(await s.call_tool("remember", {"text": "Alice prefers green tea in the morning",
                                                    "subject": "alice", "predicate": "drink", "object": "green tea"}))
            assert w["decision"] == "accepted" and w["scope"] == ALICE
            a = body(await s.call_tool("add", {"text": "Alice's flight to Lisbon leaves on Friday"}))
            hits = body(await s.call_tool("recall", {"query": "green tea in the morning", "top_k": 3}))["hits"]
            assert hits and hits[0]["memory_id"] == w["memory_id"]
            found = body(await s.call_tool("search", {"query": "flight to Lisbon"}))["hits"]
            assert a["memory_id"] in {h["memory_id"] for h in found}
            only = body(await s.call_tool("recall", {"query": "Alice", "where": {"subject": "alice"}}))["hits"]
            assert [h["memory_id"] for h in only] == [w["memory_id"]]  # the Lisbon note has no subject
            got = body(await s.call_tool("get", {"memory_id": w["memory_id"]}))["memory"]
            assert got["content"].startswith("Alice prefers green tea")
            listed = {m["memory_id"] for m in body(await s.call_tool("list", {}))["memories"]}
            assert {w["memory_id"], a["memory_id"]} <= listed
            paged = [m["memory_id"] for off in range(len(listed))
                     for m in body(await s.call_tool("list", {"limit": 1, "offset": off}))["memories"]]
            assert set(paged) == listed and len(paged) == len(listed)
            f = body(await s.call_tool("forget", {"memory_id": w["memory_id"], "reason": "user asked"}))
            assert f["forgotten"] == [w["memory_id"]]
            assert body(await s.call_tool("get", {"memory_id": w["memory_id"]}))["memory"] is None
            d = body(await s.call_tool("delete", {"memory_id": a["memory_id"], "reason": "done"}))
            assert d["decision"] == "forgotten"

    run(go())


def test_missing_or_unknown_tokens_are_refused(http):
    srv, toks, _, _ = http
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}
    hdr = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    for auth in (None, "Bearer nope", f"Bearer {toks['alice']}x", "Basic abc"):
        h = dict(hdr, **({"Authorization": auth} if auth else {}))
        r = httpx2.post(srv.url, json=init, headers=h, timeout=10)
        assert r.status_code == 401, (auth, r.status_code)
        assert "nope" not in r.text and toks["alice"] not in r.text
    with pytest.raises(BaseException):
        run(_list(srv.url, "not-a-token"))


def test_a_token_file_broken_mid_serve_refuses_with_401_not_500(http):
    srv, toks, tf, _ = http
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}
    hdr = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json",
           "Authorization": f"Bearer {toks['alice']}"}
    good = open(tf).read()
    try:
        for broken in ("{not json", "", json.dumps({"tokens": [{"sha256": "0" * 64, "actor": "a b"}]})):
            with open(tf, "w") as f:
                f.write(broken)
            r = httpx2.post(srv.url, json=init, headers=hdr, timeout=10)
            assert r.status_code == 401, (broken, r.status_code)
    finally:
        with open(tf, "w") as f:
            f.write(good)
    assert httpx2.post(srv.url, json=init, headers=hdr, timeout=10).status_code == 200


def test_a_revoked_token_is_refused_even_within_one_mtime_tick(tmp_path):
    from memactors.integrations.mcp import TokenFile

    tf = str(tmp_path / "tokens.json")
    tok = mint(tf, "alice-agent")
    verifier = TokenFile(tf)
    assert run(verifier.verify_token(tok)).client_id == "alice-agent"
    before = os.stat(tf).st_mtime_ns
    with open(tf + ".new", "w") as f:  # the token's line removed, the file replaced as editors and mint do
        json.dump({"tokens": []}, f)
    os.replace(tf + ".new", tf)
    os.utime(tf, ns=(before, before))  # the same coarse mtime tick as the file it replaced
    assert run(verifier.verify_token(tok)) is None


def test_a_token_file_missing_or_writable_by_others_is_a_config_error(tmp_path):
    from memactors.core.errors import ConfigError
    from memactors.integrations.mcp import TokenFile

    with pytest.raises(ConfigError):  # not a FileNotFoundError traceback from the CLI
        TokenFile(str(tmp_path / "missing.json"))
    tf = str(tmp_path / "tokens.json")
    tok = mint(tf, "alice-agent")
    verifier = TokenFile(tf)
    os.chmod(tf, 0o666)  # anyone could add a digest of their own token for any actor
    with pytest.raises(ConfigError) as e:
        TokenFile(tf)
    assert "chmod 600" in str(e.value)
    assert run(verifier.verify_token(tok)) is None  # mid-serve: refused, until it is fixed
    os.chmod(tf, 0o600)
    assert run(verifier.verify_token(tok)).client_id == "alice-agent"


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="giving a file to another user needs root")
def test_a_token_file_another_user_owns_is_a_config_error_also_through_a_link(tmp_path):
    """A file owned by someone else (0600, theirs) holds the tokens they chose: refused, and so is
    the token file replaced by a link to such a file while the server runs."""
    from memactors.core.errors import ConfigError
    from memactors.integrations.mcp import TokenFile

    tf, theirs = str(tmp_path / "tokens.json"), str(tmp_path / "theirs.json")
    tok = mint(tf, "alice-agent")
    verifier = TokenFile(tf)
    mint(theirs, "bob-agent")
    os.chown(theirs, 65534, 65534)
    with pytest.raises(ConfigError) as e:
        TokenFile(theirs)
    assert "another user" in str(e.value)
    os.replace(tf, str(tmp_path / "old.json"))
    os.symlink(theirs, tf)
    assert run(verifier.verify_token(tok)) is None


def test_mint_never_writes_through_a_file_planted_beside_the_token_file(tmp_path):
    tf, victim = str(tmp_path / "tokens.json"), tmp_path / "victim"
    victim.write_text("keep me")
    os.symlink(victim, tf + ".tmp")  # what another user could leave in a shared folder
    mint(tf, "alice-agent")
    assert victim.read_text() == "keep me" and not os.path.islink(tf)
    assert oct(os.stat(tf).st_mode & 0o777) == "0o600"


def test_grants_moved_after_the_first_call_are_looked_up_again():
    from memactors.integrations.mcp.tools import MemoryTools

    project = "/org/acme/project/p1/"
    with memactors.connect("memory://") as rt:
        rt.grant("carol-agent", ALICE, write=True)
        tools = MemoryTools(rt)

        async def go():
            await tools.remember("carol-agent", "Carol's first note")
            rt.grant("carol-agent", ALICE, read=False, write=False)  # moved: from alice's scope to a project
            rt.grant("carol-agent", project, write=True)
            w = await tools.remember("carol-agent", "Carol's project note")
            assert w["scope"] == project
            assert [m["memory_id"] for m in (await tools.list("carol-agent"))["memories"]] == [w["memory_id"]]
            rt.grant("carol-agent", project, read=False, write=False)
            with pytest.raises(memactors.AccessDenied):  # revoked: refused, never served from the old handle
                await tools.list("carol-agent")
        run(go())


async def _list(url, token):
    async with session(url, token) as s:
        return await s.list_tools()


def test_identity_never_comes_from_the_url_or_an_argument(http):
    srv, toks, _, rt = http
    r = httpx2.post(srv.url.rstrip("/") + "/bob-agent", json={}, headers={"Authorization": f"Bearer {toks['alice']}"},
                    timeout=10)
    assert r.status_code in (404, 405)

    async def go():
        async with session(srv.url, toks["alice"]) as s:
            res = await s.call_tool("remember", {"text": "a note", "actor": "bob-agent", "scope": BOB})
            assert "BadArguments" in error_text(res)  # no tool takes an actor
            res = await s.call_tool("remember", {"text": "a note", "scope": BOB})
            assert "AccessDenied" in error_text(res)  # alice's token: alice's grants, whatever the arguments say
    run(go())


def test_calls_outside_the_grants_are_refused(http):
    srv, toks, _, rt = http
    rt.write(BOB, "Bob's locker code is in the blue folder", actor="bob-agent")

    async def go():
        async with session(srv.url, toks["alice"]) as s:
            assert "AccessDenied" in error_text(await s.call_tool("recall", {"query": "locker", "scopes": [BOB]}))
            assert "AccessDenied" in error_text(await s.call_tool("list", {"scope": BOB}))
            bobs = rt.agent("bob-agent", scopes=[BOB]).list()
            res = await s.call_tool("get", {"memory_id": bobs[0].memory_id})
            assert body(res) == {"memory": None}  # as for an id never written: the id's existence is not told
            res = await s.call_tool("forget", {"memory_id": bobs[0].memory_id, "reason": "x"})
            assert res.is_error
        assert rt.agent("bob-agent", scopes=[BOB]).get(bobs[0].memory_id) is not None
    run(go())


def test_a_blocked_secret_is_an_error_that_names_rules_not_the_secret(http):
    srv, toks, _, _ = http
    secret = "sk-" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6"

    async def go():
        async with session(srv.url, toks["alice"]) as s:
            err = error_text(await s.call_tool("remember", {"text": f"the key is {secret}"}))
            assert "Blocked" in err and "secret." in err and secret not in err
            hits = body(await s.call_tool("recall", {"query": "the key is"}))["hits"]
            assert all(secret not in h["content"] for h in hits)
    run(go())


@pytest.mark.parametrize("tool, args", [
    ("remember", {"text": {"nested": CANARY}}),
    ("remember", {"text": CANARY * 2000}),
    ("remember", {"text": "ok", "scope": f"/org/{CANARY}/../x/"}),
    ("recall", {"query": [CANARY]}),
    ("recall", {"query": "x", "top_k": CANARY}),
    ("recall", {"query": "x", "top_k": 10 ** 9}),
    ("recall", {"query": "x", "scopes": CANARY}),
    ("recall", {"query": "x", "scopes": [f"/org/{CANARY}'; DROP TABLE l2; --/"]}),
    ("get", {"memory_id": f"{CANARY}' OR 1=1"}),
    ("forget", {"memory_id": CANARY, "reason": CANARY, "erase": CANARY}),
    ("list", {"scope": "/etc/passwd", "limit": -1}),
    ("list", {"offset": CANARY}),
    ("list", {"offset": -5}),
    ("recall", {"query": "x", "where": CANARY}),
    ("recall", {"query": "x", "where": {CANARY: "x"}}),
    ("recall", {"query": "x", "where": {"subject": CANARY + "\\' OR 1=1"}}),
    ("recall", {"query": "x", "where": {"since": CANARY}}),
    ("remember", {}),
    ("remember", {"txt": CANARY}),  # a mistyped name: the SDK's own message quoted every argument
    ("recall", {"qry": CANARY, "top_k": 3}),
    ("get", {"id": CANARY}),
])
def test_hostile_arguments_get_typed_errors_that_echo_nothing(http, tool, args):
    srv, toks, _, _ = http

    async def go():
        async with session(srv.url, toks["alice"]) as s:
            return await s.call_tool(tool, args)
    res = run(go())
    err = error_text(res)
    assert CANARY not in err and "passwd" not in err and "DROP" not in err
    assert any(k in err for k in ("InvalidRecord", "InvalidScope", "InvalidIdentifier", "AccessDenied", "NotFound",
                                  "ValidationError", "BadArguments")), err


def test_a_missing_argument_is_named_and_the_others_are_not_quoted(http):
    srv, toks, _, _ = http

    async def go():
        async with session(srv.url, toks["alice"]) as s:
            return error_text(await s.call_tool("remember", {"txt": CANARY, "subject": "alice"}))
    err = run(go())
    assert "BadArguments" in err and "missing: text" in err and CANARY not in err and "alice" not in err


def test_text_that_looks_like_json_is_kept_as_sent(http):
    # The SDK parses a string holding JSON for an argument not declared a str: a note '{"a": 1}'
    # reached memactors as a dict (refused), a subject "null" as no subject at all.
    srv, toks, _, rt = http
    note = '{"drink": "green tea", "when": "mornings"}'

    async def go():
        async with session(srv.url, toks["alice"]) as s:
            w = body(await s.call_tool("remember", {"text": note, "subject": "null", "predicate": "[]",
                                                    "object": "{}"}))
            got = body(await s.call_tool("get", {"memory_id": w["memory_id"]}))["memory"]
            assert (got["content"], got["subject"], got["predicate"]) == (note, "null", "[]")
            found = body(await s.call_tool("recall", {"query": '["green tea"]', "top_k": 3}))["hits"]
            assert w["memory_id"] in {h["memory_id"] for h in found}
            tools = {t.name: t.input_schema for t in (await s.list_tools()).tools}
            assert tools["remember"]["properties"]["text"]["type"] == "string"
            assert "text" in tools["remember"]["required"] and "subject" not in tools["remember"]["required"]
            # and a value that is not a string is still ours to refuse, quoting nothing
            err = error_text(await s.call_tool("remember", {"text": {"nested": CANARY}}))
            assert "InvalidRecord" in err and CANARY not in err
    run(go())


def test_stdio_transport_through_the_cli(tmp_path):
    data = str(tmp_path / "data")
    rt = memactors.connect(data, host="process")
    rt.grant("alice-agent", ALICE, write=True)
    rt.close()
    env = dict(os.environ, MEMACTORS_HOST="process")
    params = StdioServerParameters(command=sys.executable, args=["-m", "memactors.cli", "mcp", "--actor", "alice-agent",
                                                                 "--data", data], env=env)

    async def go():
        async with stdio_client(params) as (r, w):
            async with ClientSession(r, w) as s:
                await s.initialize()
                assert {t.name for t in (await s.list_tools()).tools} == TOOLS
                w_ = body(await s.call_tool("remember", {"text": "Alice takes oat milk with her coffee"}))
                hits = body(await s.call_tool("recall", {"query": "oat milk coffee"}))["hits"]
                assert hits[0]["memory_id"] == w_["memory_id"]
                assert "AccessDenied" in error_text(await s.call_tool("recall", {"query": "x", "scopes": [BOB]}))
                assert body(await s.call_tool("forget", {"memory_id": w_["memory_id"], "reason": "r"}))["forgotten"]
    run(go())
    with memactors.connect(data, host="process") as rt2:  # the server closed the folder on the way out
        assert rt2.audit.verify()["ok"]


def test_the_cli_refuses_a_half_configuration():
    res = subprocess.run([sys.executable, "-m", "memactors.cli", "mcp", "--http"], capture_output=True, text=True,
                         timeout=120)
    assert res.returncode == 2 and "--tokens" in res.stderr


def test_an_argument_a_tool_does_not_take_is_refused_not_dropped(http):
    """A model asking for sensitivity="restricted" or a misspelt top_k got a call on defaults it
    did not ask for; now BadArguments naming what the tool takes (never the client's names)."""
    srv, toks, _, rt = http

    async def go():
        async with session(srv.url, toks["alice"]) as s:
            return (error_text(await s.call_tool("remember", {"text": "Alice's locker is 12", "sensitivity": "restricted",
                                                                 CANARY: 1})),
                    error_text(await s.call_tool("recall", {"query": "locker", "topk": 1})))
    remember, recall = run(go())
    assert "BadArguments" in remember and "it takes" in remember and "sensitivity" not in remember
    assert CANARY not in remember and "locker" not in remember
    assert "BadArguments" in recall and "topk" not in recall and "top_k" in recall


def test_one_actor_cannot_hold_every_session_of_the_server(tmp_path):
    # The SDK's session limit is the server's: one token opening sessions in a loop kept other
    # agents' new sessions out until its own idled out. An actor's own cap refuses it alone.
    rt = memactors.connect("memory://")
    tf = str(tmp_path / "tokens.json")
    toks = {"alice": mint(tf, "alice-agent"), "bob": mint(tf, "bob-agent")}
    port = free_port()
    srv = HTTPServer(build(rt, tokens=tf, port=port), port=port, sessions_per_actor=3).start()
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}
    hdr = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}

    def open_one(who: str):
        return httpx2.post(srv.url, json=init, headers=dict(hdr, Authorization=f"Bearer {toks[who]}"), timeout=10)

    try:
        opened = [open_one("alice") for _ in range(3)]
        assert all(r.status_code == 200 and r.headers.get("mcp-session-id") for r in opened)
        assert open_one("alice").status_code == 503  # its fourth
        assert open_one("bob").status_code == 200  # another actor is not affected
        sid = opened[0].headers["mcp-session-id"]
        end = httpx2.delete(srv.url, headers=dict(hdr, Authorization=f"Bearer {toks['alice']}", **{"mcp-session-id": sid}),
                            timeout=10)
        assert end.status_code == 200
        assert open_one("alice").status_code == 200  # room again once one of its own ended
    finally:
        srv.stop()
        rt.close()
