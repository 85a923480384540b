"""The Ray host's hot recall path (``memactors.actors.hot_socket``): a driver on an owner's node
asks it over a local socket. It answers as the plain actor call does, leaves an idle owner idle
(Ray's compiled graphs, the path before, kept a core busy-waiting per owner for good), refuses
a peer without the key and survives one that sends garbage."""

from __future__ import annotations

import glob
import os
import stat
import time
from multiprocessing.connection import AuthenticationError, Client

import pytest

from memactors.testing import owner_for, unique_org

pytestmark = pytest.mark.ray


def _cpu_s(pid: int) -> float:
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _recall(rt, actor, scope, q="tea and travel"):
    return rt.recall(q, actor=actor, task_id="t", allowed_scopes=[scope], purpose="answer", top_k=10)


@pytest.fixture(scope="module")
def seeded(ray_runtime):
    rt = ray_runtime
    org = unique_org()
    scope, actor = f"/org/{org}/user/hs/", f"agent-{org}"
    rt.grant(actor, scope, write=True)
    rt.write_many([{"scope": scope, "text": f"note {i} about tea and travel, day {i % 7}", "actor": actor}
                   for i in range(40)])
    return rt, scope, actor


def test_the_socket_path_answers_as_the_plain_call_does(seeded):
    rt, scope, actor = seeded
    rt.config.recall.compiled_path = True
    direct = _recall(rt, actor, scope)
    client = next(c for c in rt._direct if c.conn is not None)  # noqa: SLF001 - it did take the socket
    assert client.conn is not None
    rt.config.recall.compiled_path = False
    try:
        plain = _recall(rt, actor, scope)
    finally:
        rt.config.recall.compiled_path = True
    # the same memories, the same cosines (a score's recency share moves with the clock between calls)
    assert [(h.memory_id, h.similarity) for h in direct.hits] == [(h.memory_id, h.similarity) for h in plain.hits]
    assert direct.hits and direct.path == plain.path == "hot"


def test_an_idle_owner_stays_idle_after_direct_recalls(seeded):
    rt, scope, actor = seeded
    for _ in range(20):
        _recall(rt, actor, scope)
    pid = rt._calls.get(owner_for(rt, scope).pid.remote())  # noqa: SLF001
    before, t0 = _cpu_s(pid), time.monotonic()
    time.sleep(2.0)
    used = (_cpu_s(pid) - before) / (time.monotonic() - t0)
    assert used < 0.5, f"an idle owner used {used:.2f} of a core"  # a compiled graph's reader: ~1.0


def test_the_socket_refuses_a_peer_without_the_key_and_survives_garbage(seeded):
    rt, scope, actor = seeded
    ep = rt._calls.get(owner_for(rt, scope).hot_endpoint.remote())  # noqa: SLF001
    if ep["path"].startswith("\0"):  # Linux: abstract, nothing on disk to leave behind
        assert not os.path.exists(ep["path"][1:]) and not glob.glob("/tmp/memactors-hot-*")
    else:  # elsewhere a file: other users cannot even reach its folder
        assert stat.S_IMODE(os.stat(os.path.dirname(ep["path"])).st_mode) == 0o700
    with pytest.raises(AuthenticationError):
        Client(ep["path"], family="AF_UNIX", authkey=os.urandom(32))
    with Client(ep["path"], family="AF_UNIX", authkey=bytes.fromhex(ep["key"])) as c:
        c.send_bytes(b"\x80\x04 not json, and never unpickled")
        with pytest.raises((EOFError, OSError)):
            c.recv_bytes()  # the server hangs up on it
    assert _recall(rt, actor, scope).hits  # and still serves


def test_a_refused_recall_on_the_socket_is_the_typed_error(seeded):
    rt, scope, actor = seeded
    from memactors.core.errors import AccessDenied

    other = f"/org/{unique_org()}/user/x/"
    with pytest.raises(AccessDenied):
        rt.recall("tea", actor=actor, task_id="t", allowed_scopes=[other], purpose="answer")


def test_a_single_write_takes_the_socket_and_a_retry_by_the_plain_call_writes_once(seeded, monkeypatch):
    rt, scope, actor = seeded
    from memactors.runtime import facade

    client = rt._direct[rt._owners.index(owner_for(rt, scope))]  # noqa: SLF001
    sent = []
    real = client.write
    monkeypatch.setattr(client, "write", lambda cols, now: sent.append(len(cols["text"])) or real(cols, now))
    first = rt.write(scope, "the direct path acknowledges this one", actor=actor, idempotency_key="direct-once")
    assert sent == [1] and first.decision == "accepted"
    assert client.conn is not None and client.retry_at == 0.0  # answered there, not fallen back
    monkeypatch.setattr(facade, "DIRECT_WRITES_MAX", 0)  # the plain call now, the same key
    again = rt.write(scope, "the direct path acknowledges this one", actor=actor, idempotency_key="direct-once")
    assert sent == [1] and (again.memory_id, again.version) == (first.memory_id, first.version)
    hits = rt.recall("direct path acknowledges", actor=actor, task_id="t", allowed_scopes=[scope], purpose="answer")
    assert [h.memory_id for h in hits.hits].count(first.memory_id) == 1


def test_a_write_the_owner_refuses_on_the_socket_is_the_typed_error(seeded):
    rt, scope, actor = seeded
    from memactors.core.errors import IdempotencyConflict

    rt.write(scope, "one text for this key", actor=actor, idempotency_key="direct-conflict")
    with pytest.raises(IdempotencyConflict):  # decided in the owner, carried back as data
        rt.write(scope, "another text, the same key", actor=actor, idempotency_key="direct-conflict")
