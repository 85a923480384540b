"""Identifiers through the public API, attacked: a token, a phone number or an e-mail address used
as a scope segment, an actor, a task id or an idempotency key is refused before anything is
written (nothing of it in any file of the data folder), or, opted in, stored as a keyed pseudonym
with which grants, writes and recalls keep working."""

import glob
import os

import pytest

import memactors
from memactors import InvalidIdentifier

SLACK = "xoxb-928374650192-8473625140938-Zk4Lq8Vw2Xy6Nc0Rb5Hs9Jd3"
GITHUB = "ghp_" + "Wq4Tz8Lp2Vx6Nc0Rb5Hs9Jd3Kf7Gw1Ye4Ua8"
AWS = "AKIAZ7Q2LXW3V4N5P6R9"
PHONE = "13987654322"
PHONE_INTL = "442079460959"
EMAIL = "carol.w.owner@example.org"
CARD = "4012888888881881"  # a Visa test number: no card words or grouping fit in an id
VALUES = [SLACK, GITHUB, AWS, PHONE, PHONE_INTL, EMAIL, CARD]
CFG = {"runtime": {"num_owners": 2, "l2_flush_interval_s": 0.2}}


def _bytes_found(data_dir: str, values: list[str]) -> list[tuple[str, str]]:
    needles = [(v, v.encode(enc)) for v in values for enc in ("utf-8", "utf-16-le")]
    found = []
    for path in glob.glob(os.path.join(data_dir, "**", "*"), recursive=True):
        if os.path.isfile(path):
            with open(path, "rb") as f:
                data = f.read()
            found += [(path, v) for v, n in needles if n in data]
    return found


def _ledger_dump(data_dir: str) -> str:
    import duckdb

    con = duckdb.connect(os.path.join(data_dir, "ledger.duckdb"), read_only=True)
    try:
        return "".join(repr(con.execute(f"SELECT * FROM {t}").fetchall())
                       for (t,) in con.execute("SELECT table_name FROM information_schema.tables").fetchall())
    finally:
        con.close()


def test_flagged_ids_are_refused_and_nothing_of_them_is_stored(ray_session, data_dir):
    rt = memactors.connect(data_dir, config=CFG)
    rt.grant("admin", "/global/", write=True)
    rt.grant("ag", "/org/a/", write=True)
    rt.write("/org/a/user/u1/", "user u1 likes green tea", actor="ag")  # the folder is in use
    attempts = [
        lambda v: rt.write(f"/org/a/user/{v}/", "likes green tea", actor="ag"),
        lambda v: rt.write(f"/org/{v}/", "likes green tea", actor="admin"),
        lambda v: rt.write(f"/org/a/user/u1/task/{v}/", "likes green tea", actor="ag"),
        lambda v: rt.write("/org/a/user/u1/", "likes green tea", actor=v),
        lambda v: rt.write("/org/a/user/u1/", "likes green tea", actor="ag", idempotency_key=v),
        lambda v: rt.write_many([{"scope": "/org/a/user/u1/", "text": "ok", "actor": "ag"},
                                 {"scope": f"/org/a/project/{v}/", "text": "x", "actor": "ag"}]),
        lambda v: rt.grant(v, "/org/a/", write=True),
        lambda v: rt.grant("ag2", f"/org/a/user/{v}/"),
        lambda v: rt.grant("ag2", "/org/a/", by=v),
        lambda v: rt.recall("green tea", actor="ag", task_id=v, allowed_scopes=["/org/a/"], purpose="t"),
        lambda v: rt.recall("green tea", actor=v, task_id="t", allowed_scopes=["/org/a/"], purpose="t"),
        lambda v: rt.recall("green tea", actor="ag", task_id="t", allowed_scopes=[f"/org/a/user/{v}/"], purpose="t"),
        lambda v: rt.recall_many([{"query": "tea", "actor": "ag", "task_id": v, "allowed_scopes": ["/org/a/"],
                                   "purpose": "t"}]),
        lambda v: rt.session(f"/org/a/user/{v}/", actor="ag", task_id="t1", goal="plan a trip"),
        lambda v: rt.session("/org/a/user/u1/", actor="ag", task_id=v, goal="plan a trip"),
        lambda v: rt.review.pending(f"/org/a/user/{v}/", actor="ag"),
        lambda v: rt.audit.sql("SELECT count(*) FROM events", actor=v),
    ]
    messages = []
    for value in VALUES:
        for attempt in attempts:
            with pytest.raises(InvalidIdentifier) as e:
                attempt(value)
            messages.append(str(e.value))
    assert all(v not in m for m in messages for v in VALUES)
    assert any("Slack token" in m for m in messages) and any("Chinese mobile" in m for m in messages)
    assert any("international form" in m for m in messages) and any("e-mail" in m for m in messages)
    assert any("card number" in m for m in messages)
    class Docs(memactors.Retriever):
        name = "xoxb-1234567890-abcdefghij"  # a retriever's name is logged with every recall it answers

        def retrieve(self, query, k):
            return [{"content": "green tea is popular"}]

    with pytest.raises(InvalidIdentifier) as e:
        rt.retrieve(Docs(), "tea", actor="ag", task_id="t", allowed_scopes=["/org/a/"], purpose="t")
    assert "Slack" in str(e.value) and Docs.name not in str(e.value)
    # write_many refused the whole batch: its good item was not written either
    hits = rt.recall("ok", actor="ag", task_id="t", allowed_scopes=["/org/a/user/u1/"], purpose="t").hits
    assert [h.content for h in hits if h.content == "ok"] == []
    rt.flush()
    rt.close()
    assert _bytes_found(data_dir, VALUES) == []
    dump = _ledger_dump(data_dir)
    assert not [v for v in VALUES if v in dump]


def test_pseudonymised_ids_keep_grants_and_recalls_working_and_stay_out_of_storage(ray_session, data_dir):
    cfg = dict(CFG, gate={"pseudonymise_identifiers": True})
    rt = memactors.connect(data_dir, config=cfg)
    scope = f"/org/a/user/{PHONE}/"
    g = rt.grant(EMAIL, scope, write=True)
    assert g["actor"].startswith("p-") and PHONE not in g["scope"]
    r = rt.write(scope, "prefers window seats", actor=EMAIL, idempotency_key=GITHUB)
    assert r.decision == "accepted" and PHONE not in r.scope
    again = rt.write(scope, "prefers window seats", actor=EMAIL, idempotency_key=GITHUB)
    assert again.memory_id == r.memory_id  # the same key, pseudonymised the same way: a retry
    hits = rt.recall("window seats", actor=EMAIL, task_id=SLACK, allowed_scopes=[scope], purpose="t").hits
    assert [h.memory_id for h in hits] == [r.memory_id] and PHONE not in hits[0].scope
    assert rt.grants(EMAIL) and rt.grants(EMAIL)[0]["actor"] == g["actor"]
    with pytest.raises(memactors.AccessDenied):  # another id never meets this one's grant
        rt.recall("window seats", actor="someone", task_id="t", allowed_scopes=[scope], purpose="t")
    rt.flush()
    rt.close()
    assert _bytes_found(data_dir, VALUES) == []
    assert not [v for v in VALUES if v in _ledger_dump(data_dir)]
    rt = memactors.connect(data_dir, config=cfg)  # the folder's key: the same pseudonyms after a restart
    try:
        hits = rt.recall("window seats", actor=EMAIL, task_id="t", allowed_scopes=[scope], purpose="t").hits
        assert [h.memory_id for h in hits] == [r.memory_id]
    finally:
        rt.close()


@pytest.mark.ray
def test_an_owner_called_directly_refuses_flagged_ids_even_with_pseudonyms_on(ray_session, data_dir):
    """Defence in depth: the owner checks ids again, so a caller that skips the runtime (or a
    runtime that pseudonymises) never gets a flagged id stored through it."""
    import ray

    from memactors.core import errors
    from memactors.core.ops import GrantOp

    rt = memactors.connect(data_dir, config=dict(CFG, gate={"pseudonymise_identifiers": True}))
    try:
        owner = rt._owners[0]  # noqa: SLF001
        now = rt.clock.now_us()
        for op in (GrantOp(SLACK, "/global/", True, True, "admin", "k1"),
                   GrantOp("ag", f"/org/{AWS}/", True, True, "admin", "k2"),
                   GrantOp("ag", "/global/", True, True, PHONE, "k3"),
                   GrantOp("ag", "/global/", True, True, "admin", GITHUB)):
            (out,) = ray.get(owner.submit.remote([op], now))
            assert errors.is_encoded(out) and out["error"] == "InvalidIdentifier", out
            assert not any(v in out["message"] for v in VALUES)
        cols = {"scope": [f"/org/a/user/{PHONE}/"], "text": ["x"], "actor": ["ag"], "idempotency_key": ["k4"]}
        for o in rt._owners:  # noqa: SLF001 - whichever owns the scope, or refuses it as not its own
            (out,) = ray.get(o.write_batch.remote(cols, now))
            assert errors.is_encoded(out) and out["error"] == "InvalidIdentifier", out
    finally:
        rt.close()


def test_config_grants_naming_flagged_ids_are_config_errors_or_pseudonymised_once(tmp_path):
    """A [[grants]] entry whose actor or scope segment looks like personal data: a ConfigError
    naming the entry (not the value) without pseudonyms; with them, applied once: a reconnect
    with the same config finds the grant as stored (its pseudonyms) and writes no new event."""
    from memactors import ConfigError

    data = str(tmp_path / "data")
    grants = [{"actor": PHONE, "scope": "/org/acme/user/alice/", "write": True},
              {"actor": "bot", "scope": f"/org/acme/user/{PHONE_INTL}/"}]
    with pytest.raises(ConfigError, match=r"grants\[0\]\.actor looks like personal data") as err:
        memactors.connect(data, host="process", config={"grants": grants})
    assert PHONE not in str(err.value)
    cfg = {"grants": grants, "gate": {"pseudonymise_identifiers": True}}
    with memactors.connect(data, host="process", config=cfg) as rt:
        events = rt.audit.verify()["events"]
        assert {g["actor"] for g in rt.grants()} == {rt._ids.id(PHONE), "bot"}  # noqa: SLF001
    with memactors.connect(data, host="process", config=cfg) as rt:
        assert rt.audit.verify()["events"] == events
        assert len(rt.grants()) == 2
