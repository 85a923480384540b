"""Security properties, attacked: scope isolation, injection payloads, leaks of blocked values."""

import glob
import os
import re
import time

import pytest

import memactors
from memactors import AccessDenied, ValidationError
from memactors.testing import drop_hot

A42, A420, A4_ = "/org/a/user/42/", "/org/a/user/420/", "/org/a/user/4_/"
SECRET = "sk-proj-Zq9XwV7uT5sR3pN1mL8kJ6hG4fD2sA0b"
PHONE = "13987654321"
# More kinds the gate blocks or redacts; none may survive anywhere (values made up, checksums valid).
OTHER_VALUES = [
    "AKIAZ7Q2LXW3V4N5P6R8",  # AWS access key id
    "ghp_" + "Qm4Tz8Lp2Vx6Nc0Rb5Hs9Jd3Kf7Gw1Ye4Ua8",  # GitHub token
    "11010519491231002X",  # resident ID (valid check character and birth date)
    "alice.w.secret@example.org",  # e-mail
    "4111 1111 1111 1111",  # bank card (Luhn, card context below)
]


def recall(rt, q, actor, scopes, k=20):
    return rt.recall(q, actor=actor, task_id="t", allowed_scopes=scopes, purpose="test", top_k=k)


@pytest.fixture(scope="module")
def populated(ray_session, tmp_path_factory):
    """One populated runtime for the module's isolation and attack tests (they only read it,
    or add grants of their own): written once, not once per test."""
    rt = memactors.connect(str(tmp_path_factory.mktemp("populated") / "data"), host="ray",
                           config={"runtime": {"num_owners": 2, "l2_flush_interval_s": 0.2}})
    writes = {
        A42: "user 42 likes oolong tea",
        A420: "user 420 likes oolong tea",
        A4_: "user 4_ likes oolong tea",
        "/org/ab/user/42/": "tenant ab user 42 likes oolong tea",
        "/org/b/user/42/": "tenant b user 42 likes oolong tea",
        "/org/a/user/42/task/secret-task/": "task note: oolong tea order",
        "/org/a/": "org a default: oolong tea in the kitchen",
        "/org/a/project/p1/": "project p1 oolong tea budget",
    }
    rt.grant("admin", "/global/", write=True)
    ids = {}
    for scope, text in writes.items():
        ids[scope] = rt.write(scope, text, actor="admin").memory_id
    rt.grant("ag42", A42)
    yield rt, ids
    rt.close()


def test_siblings_lookalikes_and_tenants_are_isolated(populated):
    rt, ids = populated
    for flush in (False, True):
        if flush:
            drop_hot(rt)  # now every scope is served by the Lance pre-filter
        got = {h.scope for h in recall(rt, "oolong tea", "ag42", [A42]).hits}
        assert got == {A42, "/org/a/"}, got


def test_task_scope_needs_listing(populated):
    rt, _ = populated
    rt.grant("ag42", A42)
    got = {h.scope for h in recall(rt, "oolong tea order", "ag42", [A42]).hits}
    assert "/org/a/user/42/task/secret-task/" not in got
    got = {h.scope for h in recall(rt, "oolong tea order", "ag42", [A42, "/org/a/user/42/task/secret-task/"]).hits}
    assert "/org/a/user/42/task/secret-task/" in got


@pytest.mark.parametrize("beyond", [A420, A4_, "/org/ab/user/42/", "/org/a/", "/global/", "/org/b/user/42/"])
def test_agent_asking_beyond_grants_is_refused(populated, beyond):
    rt, _ = populated
    with pytest.raises(AccessDenied):
        recall(rt, "oolong", "ag42", [A42, beyond])


def _owners(rt):
    """The owner actors as an attacker with the Ray address finds them: by name."""
    import ray

    from memactors.engine.naming import owner_name

    return [ray.get_actor(owner_name(i), namespace=rt.namespace) for i in range(rt.config.runtime.num_owners)]


def _get(ref):
    import ray

    try:
        return ray.get(ref, timeout=60)
    except ray.exceptions.RayTaskError as exc:
        raise exc.cause from None


def _owner_req(rt, actor, allowed, scopes, query="oolong tea"):
    return {"scopes": scopes, "qvec": rt.embedder.embed([query])[0], "qtokens": query.split(), "now": rt.clock.now_us(),
            "m": 50, "actor": actor, "allowed": allowed, "weights": (0.4, 0.3, 0.2, 0.1)}


@pytest.mark.ray
def test_owner_entry_points_called_directly_serve_only_what_they_checked(populated):
    """Every owner entry point, called without the facade and with arguments that disagree
    (a granted scope in ``allowed``, another in ``scopes``), serves only what its own grant
    check allows."""
    import ray

    rt, ids = populated
    owners = _owners(rt)
    for o in owners:
        out = _get(o.recall.remote(_owner_req(rt, "ag42", [A42], [A420, A4_, "/org/a/user/42/task/secret-task/"])))
        assert {h["scope"] for h in out["hits"]} <= {A42, "/org/a/"}, out["hits"]
        with pytest.raises(AccessDenied):
            _get(o.recall.remote(_owner_req(rt, "ag42", [A420], [A420])))
    # The direct path's entry point is the same method body.
    for o in owners:
        out = _get(o.recall_direct.remote(_owner_req(rt, "ag42", [A42], [A420, "/org/b/user/42/"])))
        assert {h["scope"] for h in out.get("hits", [])} <= {A42, "/org/a/"}
        assert _get(o.recall_direct.remote(_owner_req(rt, "ag42", [A420], [A420])))["error"] == "AccessDenied"
    # Writes: a scope beyond the actor's grants, or one this owner does not serve, is refused.
    from memactors.core.ops import ForgetOp, ReviewOp, StatusOp

    def cols(scope, key):
        return {"scope": [scope], "text": ["x"], "actor": ["ag42"], "idempotency_key": [key]}

    for o in owners:
        assert _get(o.write_batch.remote(cols(A420, "k1"), 0))[0]["error"] == "AccessDenied"
        with pytest.raises(ValidationError):
            _get(o.write_batch.remote([{"scope": A420, "text": "x", "actor": "ag42"}], 0))  # not columns
    rt.grant("ag42", A42, write=True)
    served = memactors.engine.naming.owner_index(memactors.parse_scope(A42), len(owners))
    for i, o in enumerate(owners):
        if i != served:
            assert _get(o.write_batch.remote(cols(A42, "k2"), 0))[0]["error"] == "AccessDenied"
    # Changes by memory id on another user's memories: refused, or "not here" on other owners.
    for o in owners:
        for op in (ForgetOp(ids[A420], "ag42", "r", "k3"), ReviewOp(ids[A420], "ag42", "r", False, "k4"),
                   StatusOp(ids[A420], "evicted", "ag42", "r", "k5"), ForgetOp(ids[A420], "ag42", "r", "k6", True)):
            out = _get(o.submit.remote([op], 0))[0]
            assert out.get("error") == "AccessDenied" or out.get("not_here"), out
        with pytest.raises(AccessDenied):
            _get(o.review_list.remote([A420], "ag42"))
    assert recall(rt, "user 420 likes oolong tea", "admin", [A420]).hits  # still there
    # Grants come from the ledger only: an owner takes no grant table from a caller.
    assert not hasattr(owners[0], "set_grants")
    for o in owners:
        _get(o.reload_grants.remote())


PAYLOADS = ["a' OR '1'='1", "zz\\' OR 1=1) --", "%", "４２", "..", "42' OR scope LIKE '%", "4_%"]


@pytest.mark.parametrize("p", PAYLOADS)
def test_payloads_as_ids_are_validation_errors(populated, p):
    rt, _ = populated
    with pytest.raises(ValidationError):
        recall(rt, "tea", "ag42", [f"/org/a/user/{p}/"])
    with pytest.raises(ValidationError):
        rt.write(f"/org/a/user/{p}/", "x", actor="admin")
    with pytest.raises(ValidationError):
        recall(rt, "tea", p, [A42])


@pytest.mark.parametrize("p", PAYLOADS)
def test_payloads_as_query_text_change_nothing(populated, p):
    rt, _ = populated
    got = {h.scope for h in recall(rt, f"oolong tea {p}", "ag42", [A42]).hits}
    assert got <= {A42, "/org/a/"}


def test_cross_tenant_recall_is_empty(populated):
    rt, _ = populated
    rt.grant("agb", "/org/b/user/42/")
    got = {h.scope for h in recall(rt, "user 42 likes oolong tea", "agb", ["/org/b/user/42/"]).hits}
    assert got == {"/org/b/user/42/"}


def test_write_up_or_sideways_is_refused(runtime):
    runtime.grant("ag", A42, write=True)
    for bad in ["/org/a/", "/global/", A420, "/org/a/project/p1/"]:
        with pytest.raises(AccessDenied):
            runtime.write(bad, "x", actor="ag")


def _ray_session_logs():
    import ray

    node = ray._private.worker.global_worker.node
    return glob.glob(os.path.join(node.get_session_dir_path(), "logs", "*"))


@pytest.mark.ray  # Ray's own session logs are searched too
def test_blocked_values_leave_nothing_anywhere(runtime):
    rt = runtime
    rt.grant("ag", A42, write=True)
    errors = []
    for i in range(20):
        r = rt.write(A42, f"note {i}: my key is {SECRET}, call me on {PHONE}", actor="ag")
        assert r.decision == "blocked" and r.memory_id is None
        r = rt.write(A42, f"phone only, note {i}: {PHONE}", actor="ag")
        assert r.decision == "redacted"
        for v in OTHER_VALUES:
            r = rt.write(A42, f"my card number / id / key is {v} ok {i}", actor="ag")
            # (redacted, or redacted and then queued as a contradiction of the previous round's write)
            assert r.decision in ("blocked", "redacted") or r.gate["decision"] == "redacted", (v, r.decision)
        try:  # a bad write carrying the secret: its error message must not echo it
            rt.write(f"/org/a/user/{SECRET}x!/", f"{SECRET}", actor="ag")
        except ValidationError as e:
            errors.append(str(e))
    hits = recall(rt, f"key {SECRET} phone {PHONE}", "ag", [A42]).hits
    assert hits and all(PHONE not in h.content and SECRET not in h.content for h in hits)
    rt.flush()
    time.sleep(0.5)
    for e in errors:
        assert SECRET not in e
    values = [SECRET, PHONE, *OTHER_VALUES]
    needles = [v.encode(enc) for v in values for enc in ("utf-8", "utf-16-le")]
    files = [p for p in glob.glob(os.path.join(rt.data_dir, "**", "*"), recursive=True) if os.path.isfile(p)]
    files += [p for p in _ray_session_logs() if os.path.isfile(p)]
    assert len(files) > 5
    for path in files:
        with open(path, "rb") as f:
            data = f.read()
        for n in needles:
            assert n not in data, f"{path} holds a blocked value"
    rt.close()  # now the ledger file can be opened here: every table, keys included
    import duckdb

    con = duckdb.connect(os.path.join(rt.data_dir, "ledger.duckdb"), read_only=True)
    for (table,) in con.execute("SELECT table_name FROM information_schema.tables").fetchall():
        dump = repr(con.execute(f"SELECT * FROM {table}").fetchall())  # every column of every table
        for v in values:
            assert v not in dump, f"{table} holds a blocked value"
    con.close()


SAMPLES = __import__("json").loads(
    (__import__("pathlib").Path(__file__).parent / "fixtures" / "gate_rule_samples.json").read_text("utf-8"))


def _matched_values():
    """(rule id, a must-match sample, the values the gate matched in it) for every PII and secret rule
    the default policy takes out (the special categories are kept as said: test_gate_special.py)."""
    from memactors.gate import RULES, Gate

    g, out = Gate(), []
    for rid, rule in sorted(RULES.items()):
        if rule.category not in ("pii", "secret"):
            continue
        for text in SAMPLES[rid]["match"]:
            hits = [h for h in g.scan(text).hits if h.category in ("pii", "secret") and h.action != "allow"]
            if hits and len(text) <= 512:
                out.append((rid, text, sorted({text[h.start:h.end] for h in hits}, key=len)))
                break
    return out


def test_every_field_is_scanned_and_nothing_of_it_reaches_storage(runtime):
    """A secret or PII value in subject, predicate, object or source_id is blocked or redacted
    like one in the text; none of it comes back in a hit or lies anywhere on disk."""
    rt = runtime
    rt.grant("ag", A42, write=True)
    cases = _matched_values()
    assert len(cases) >= 30
    items = []
    for n, (rid, sample, _) in enumerate(cases):
        for field in ("subject", "predicate", "object", "source_id"):
            it = {"scope": A42, "text": f"field note {n} {field}", "actor": "ag"}
            if field in ("subject", "predicate"):
                it.update(subject="s", predicate=f"p{n}")
            it[field] = sample
            items.append((rid, field, it))
    results = rt.write_many([it for _, _, it in items])  # a batch: the gate pool's path
    results.append(rt.write(A42, "alice github credential noted", actor="ag", subject="alice",
                            predicate="gh_token", object=cases[[c[0] for c in cases].index("secret.github")][1]))
    for (rid, field, _), res in zip(items, results):
        assert res.decision in ("blocked", "redacted"), (rid, field, res.decision)
        assert any(h["field"] == field for h in res.gate["hits"]), (rid, field)
    assert results[-1].decision == "blocked"
    values = {v for _, _, vs in cases for v in vs}
    hits = recall(rt, "field note", "ag", [A42], k=200).hits
    assert hits
    for h in hits:
        shown = " ".join(str(getattr(h, k)) for k in ("content", "subject", "predicate", "object"))
        assert not any(v in shown for v in values)
    rt.flush()
    # Three bytes ("123", a card's security code) turn up by chance in any binary file, and a short
    # run of hex digits ("7731", a door code) in the ledger's hex ids and digests (~5,000 hex
    # characters here: "7731" in about one run of 14): the values searched for on disk are those of
    # four bytes or more, and of six or more when hex digits alone (shorter ones: the hits above).
    on_disk = [v for v in values if len(v.encode()) >= 4 and (len(v) >= 6 or not re.fullmatch(r"[0-9a-f]+", v))]
    for path in glob.glob(os.path.join(rt.data_dir, "**", "*"), recursive=True):
        if os.path.isfile(path):
            with open(path, "rb") as f:
                data = f.read()
            for v in on_disk:
                assert v.encode() not in data, f"{path} holds a value from a scanned field"


@pytest.mark.ray
def test_recall_evidence_belongs_to_whoever_may_read_its_scopes(populated):
    """explain, audit.recall and mark_cited need an actor whose read grants cover the recall's
    scopes; anyone else gets NotFound (an unknown id and a refused one read alike), directly
    at the ledger writer too."""
    import ray

    from memactors import NotFound
    from memactors.engine.naming import LEDGER

    rt, ids = populated
    rt.grant("ag420", A420)
    res = recall(rt, "oolong tea", "ag42", [A42])
    assert res.hits
    hit = res.hits[0].memory_id
    assert rt.explain(res.recall_id, actor="ag42")["recall_id"] == res.recall_id
    assert rt.explain(res.recall_id, actor="admin")["recall_id"] == res.recall_id  # /global/ covers all
    for stranger in ("ag420", "nobody"):
        with pytest.raises(NotFound):
            rt.explain(res.recall_id, actor=stranger)
        with pytest.raises(NotFound):
            rt.audit.recall(res.recall_id, actor=stranger)
        with pytest.raises(NotFound):
            rt.mark_cited(res.recall_id, [hit], actor=stranger)
    with pytest.raises(TypeError):
        rt.explain(res.recall_id)  # the actor is required
    ledger = ray.get_actor(LEDGER, namespace=rt.namespace)
    with pytest.raises(NotFound):
        _get(ledger.recall_log.remote(res.recall_id, "ag420"))
    with pytest.raises(NotFound):
        _get(ledger.mark_cited.remote(res.recall_id, [hit], 0, "ag420"))
    assert rt.explain(res.recall_id, actor="ag42")["cited"] == []  # nothing was added by the strangers
    assert rt.mark_cited(res.recall_id, [hit], actor="ag42") == 1


ATTACKS = [
    "select 1; create table pwned (a int)",
    "with x as (select 1) delete from keys",
    "with x as (select 1) delete from recalls",
    "select 1; update events set actor = 'mallory'",
    "select * from read_text('/etc/passwd')",
    "select * from keys",
    "select * from idempotency",
    "select * from meta",
    "attach '/tmp/pwned.duckdb' as p",
    "copy (select * from events) to '/tmp/pwned.csv'",
    "install httpfs",
    "set enable_external_access = true",
    "insert into events select * from events",
    "drop table events",
    "pragma database_list",
]


@pytest.mark.parametrize("attack", ATTACKS)
def test_audit_sql_cannot_write_read_files_or_see_keys(populated, attack):
    from memactors import MemactorsError

    rt, ids = populated
    before = rt.audit.sql("select count(*) from events", actor="admin")[0][0]
    keys_before = rt.audit.erased(ids[A42], actor="admin")
    with pytest.raises(MemactorsError):
        rt.audit.sql(attack, actor="admin")
    assert rt.audit.sql("select count(*) from events", actor="admin")[0][0] == before
    assert rt.audit.erased(ids[A42], actor="admin") == keys_before and not keys_before["key_destroyed"]
    assert rt.audit.verify()["ok"]
    assert not os.path.exists("/tmp/pwned.duckdb") and not os.path.exists("/tmp/pwned.csv")


def test_audit_sql_shows_only_what_the_actor_may_read(populated):
    rt, ids = populated
    tables = {t for (t,) in rt.audit.sql("select table_name from information_schema.tables", actor="ag42")}
    assert tables == {"events", "recalls", "citations"}
    scopes = {s for (s,) in rt.audit.sql("select distinct scope from events", actor="ag42")}
    # A grant covers its scope and descendants: not 420, not 4_, not the org, not other tenants.
    assert scopes == {A42, "/org/a/user/42/task/secret-task/"}
    everything = {s for (s,) in rt.audit.sql("select distinct scope from events", actor="admin")}
    assert {A420, A4_, "/org/b/user/42/"} <= everything
    recall(rt, "oolong", "ag42", [A42])
    rt.grant("ag420", A420)
    recall(rt, "oolong", "ag420", [A420])
    seen = rt.audit.sql("select list_distinct(flatten(list(allowed_scopes))) from recalls", actor="ag42")[0][0]
    assert A42 in seen and set(seen) <= {A42, "/org/a/user/42/task/secret-task/"}  # never 420's recalls
    with pytest.raises(memactors.NoGrants):
        rt.audit.sql("select 1", actor="nobody")


# --- the ledger against someone holding the data folder ---------------------------------------

BOB = "/org/a/user/bob/"
ALICE = "/org/a/user/alice/"


def _ledger_with_two_users(data_dir):
    rt = memactors.connect(data_dir, config={"runtime": {"num_owners": 1}})
    try:
        rt.grant("assistant-alice", ALICE, write=True)
        rt.grant("assistant-bob", BOB, write=True)
        rt.write(ALICE, "alice likes oolong tea", actor="assistant-alice")
        for i in range(3):
            rt.write(BOB, f"bob's private note {i}: oolong tea", actor="assistant-bob")
    finally:
        rt.close()
    return os.path.join(data_dir, "ledger.duckdb")


def _forge_grant(path, actor, scope):
    """What an attacker with the file does: append a grant event and recompute the sha256 chain."""
    import duckdb
    import orjson

    from memactors.core import events as E

    con = duckdb.connect(path)
    seq, prev, ts = con.execute("SELECT seq, hash, ts FROM events ORDER BY seq DESC LIMIT 1").fetchone()
    ev = E.Event(ts=ts + 1, scope=scope, action=E.GRANT, actor="admin", reason="grant changed",
                 snapshot=orjson.dumps({"actor": actor, "scope": scope, "read": True, "write": False}),
                 idem_key="forged-1")
    h = E.chain_hash(bytes(prev), seq + 1, ev)
    con.execute("INSERT INTO events VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [seq + 1, ev.ts, ev.scope, ev.action, None, None, ev.actor, ev.reason, False, ev.snapshot,
                 ev.idem_key, E.FORMAT_VERSION, bytes(prev), h, None]).fetchall()
    con.execute("INSERT INTO idempotency VALUES ('forged-1', ?, ?, NULL)", [ev.ts, b"{}"]).fetchall()
    con.close()
    return seq + 1


def _refused_and_named(data_dir, needle):
    from memactors import LedgerTampered
    from memactors.store.ledger import verify_folder

    with pytest.raises(LedgerTampered) as e:
        memactors.connect(data_dir, config={"runtime": {"num_owners": 1}})
    assert needle in str(e.value), str(e.value)
    return verify_folder(data_dir)  # what `memactors audit verify` reports without opening


@pytest.mark.ray
def test_a_forged_grant_with_a_recomputed_chain_is_refused(ray_session, data_dir):
    path = _ledger_with_two_users(data_dir)
    seq = _forge_grant(path, "assistant-alice", BOB)
    v = _refused_and_named(data_dir, f"seq {seq}")
    assert not v["ok"] and v["first_bad_seq"] == seq
    import ray

    assert not [a for a in ray.util.list_named_actors(all_namespaces=True)
                if a["namespace"] == memactors.engine.naming.namespace_for(data_dir)]  # nothing left running


def test_a_forged_grant_in_place_of_another_event_is_refused(ray_session, data_dir):
    import duckdb
    import orjson

    from memactors.core import events as E

    path = _ledger_with_two_users(data_dir)
    con = duckdb.connect(path)
    # Turn bob's own grant (seq 2) into one for alice's assistant, and re-chain everything after it.
    rows = con.execute(f"SELECT {', '.join(E.COLUMNS)} FROM events ORDER BY seq").fetchall()
    prev = E.GENESIS
    for r in rows:
        d = dict(zip(E.COLUMNS, r))
        if d["seq"] == 2:
            d["snapshot"] = orjson.dumps({"actor": "assistant-alice", "scope": BOB, "read": True, "write": True})
        e = E.Event(d["ts"], d["scope"], d["action"], d["actor"], d["memory_id"], d["version"], d["reason"],
                    d["encrypted"], bytes(d["snapshot"]), d["idem_key"])
        h = E.chain_hash(prev, d["seq"], e)
        con.execute("UPDATE events SET snapshot = ?, prev_hash = ?, hash = ? WHERE seq = ?",
                    [e.snapshot, prev, h, d["seq"]]).fetchall()
        prev = h
    con.close()
    v = _refused_and_named(data_dir, "seq")
    assert not v["ok"] and v["first_bad_seq"] is not None


def test_deleted_tail_events_are_found(ray_session, data_dir):
    import duckdb

    path = _ledger_with_two_users(data_dir)
    con = duckdb.connect(path)
    last = con.execute("SELECT max(seq) FROM events").fetchone()[0]
    con.execute("DELETE FROM events WHERE seq >= ?", [last - 1]).fetchall()
    con.close()
    v = _refused_and_named(data_dir, f"seq {last - 1}")
    assert not v["ok"] and v["first_bad_seq"] == last - 1 and "deleted" in v["reason"]


@pytest.mark.parametrize("table", ["keys", "idempotency"])
def test_deleted_keys_or_idempotency_rows_are_found(ray_session, data_dir, table):
    import duckdb

    path = _ledger_with_two_users(data_dir)
    con = duckdb.connect(path)
    con.execute(f"DELETE FROM {table}").fetchall()
    con.close()
    v = _refused_and_named(data_dir, f"table {table}")
    assert not v["ok"] and v["table"] == table


def test_a_missing_ledger_key_is_a_clear_error_not_a_new_key(ray_session, data_dir):
    from memactors import LedgerKeyMissing

    _ledger_with_two_users(data_dir)
    keys = os.environ["MEMACTORS_KEY_DIR"]
    other = os.path.join(os.path.dirname(data_dir), "elsewhere")
    with pytest.raises(LedgerKeyMissing):
        memactors.connect(data_dir, config={"runtime": {"num_owners": 1, "key_dir": other}})
    assert not os.path.exists(other) or not os.listdir(other)
    rt = memactors.connect(data_dir, config={"runtime": {"num_owners": 1, "key_dir": keys}})
    try:
        assert rt.audit.verify()["ok"]
    finally:
        rt.close()


def test_l2_rows_deleted_or_added_behind_the_runtime_are_found(ray_session, data_dir):
    import lancedb

    from memactors import LedgerTampered

    _ledger_with_two_users(data_dir)
    tbl = lancedb.connect(os.path.join(data_dir, "l2")).open_table("memories")
    victim = tbl.search().where(f"scope = '{BOB}'").limit(1).to_arrow().column("memory_id")[0].as_py()
    tbl.delete(f"memory_id = '{victim}'")
    with pytest.raises(LedgerTampered) as e:
        memactors.connect(data_dir, config={"runtime": {"num_owners": 1}})
    assert "table l2" in str(e.value) and "1 rows missing" in str(e.value)


def test_a_second_l2_row_of_a_memory_added_behind_the_runtime_is_found(tmp_path):
    """A copy of an existing row appended to L2 (a cold recall would return the memory twice) is
    a row the ledger does not know: the folder is refused, as for a row deleted or a new one."""
    import lancedb

    from memactors import LedgerTampered

    data = str(tmp_path / "d")
    with memactors.connect(data, host="process") as rt:
        rt.grant("ag", ALICE, write=True)
        for t in ("alice's train leaves at 9", "alice keeps her passport in the blue folder"):
            rt.write(ALICE, t, actor="ag")
        rt.flush()
    with memactors.connect(data, host="process") as rt:  # untouched: it opens
        assert rt.audit.verify()["ok"]
    tbl = lancedb.connect(os.path.join(data, "l2")).open_table("memories")
    tbl.add(tbl.search().limit(1).to_arrow().select(tbl.schema.names))
    with pytest.raises(LedgerTampered) as e:
        memactors.connect(data, host="process")
    assert "table l2" in str(e.value) and "1 rows the ledger does not know" in str(e.value)


def test_a_reused_idempotency_key_with_another_write_is_a_conflict(ray_session, data_dir):
    from memactors import IdempotencyConflict

    cfg = {"runtime": {"num_owners": 1}}
    rt = memactors.connect(data_dir, config=cfg)
    try:
        rt.grant("ag", ALICE, write=True)
        first = rt.write(ALICE, "alice's train leaves at 9", actor="ag", idempotency_key="k-1")
        assert rt.write(ALICE, "alice's train leaves at 9", actor="ag", idempotency_key="k-1") == first  # a retry
        with pytest.raises(IdempotencyConflict):
            rt.write(ALICE, "alice's train leaves at 11", actor="ag", idempotency_key="k-1")
        with pytest.raises(IdempotencyConflict):  # same text, another field: still another write
            rt.write(ALICE, "alice's train leaves at 9", actor="ag", idempotency_key="k-1", importance=0.9)
        with pytest.raises(IdempotencyConflict) as e:
            rt.write_many([{"scope": ALICE, "text": "a new note", "actor": "ag", "idempotency_key": "k-2"},
                           {"scope": ALICE, "text": "something else", "actor": "ag", "idempotency_key": "k-1"}])
        assert e.value.failed == [1] and e.value.results[0].decision == "accepted" and e.value.results[1] is None
        # Two drivers racing the same key with different texts: one wins, the other hears it.
        import concurrent.futures as cf

        with cf.ThreadPoolExecutor(2) as pool:
            futs = [pool.submit(rt.write, ALICE, f"racer {i}", actor="ag", idempotency_key="k-race") for i in (1, 2)]
            outcomes = [f.exception() or f.result() for f in futs]
        assert sum(isinstance(o, IdempotencyConflict) for o in outcomes) == 1
    finally:
        rt.close()
    rt = memactors.connect(data_dir, config=cfg)  # fingerprints survive a restart
    try:
        with pytest.raises(IdempotencyConflict):
            rt.write(ALICE, "alice's train leaves at 11", actor="ag", idempotency_key="k-1")
        texts = [h.content for h in recall(rt, "train leaves", "ag", [ALICE], k=20).hits]
        assert texts.count("alice's train leaves at 9") == 1 and "alice's train leaves at 11" not in texts
    finally:
        rt.close()


def test_a_ledger_from_before_keys_is_upgraded_in_place(ray_session, data_dir):
    """Format 1 (no MAC column, no folder id, no fingerprints) opens, is keyed on first use and
    verifies; everything written before is still there."""
    import glob as g

    import duckdb

    path = _ledger_with_two_users(data_dir)
    con = duckdb.connect(path)
    folder_id = bytes(con.execute("SELECT value FROM meta WHERE key = 'folder_id'").fetchone()[0]).decode()
    con.execute("ALTER TABLE events DROP COLUMN mac").fetchall()
    con.execute("ALTER TABLE idempotency DROP COLUMN fingerprint").fetchall()
    con.execute("DELETE FROM meta WHERE key IN ('folder_id', 'ledger_format')").fetchall()
    con.close()
    for f in g.glob(os.path.join(os.environ["MEMACTORS_KEY_DIR"], folder_id + ".*")):
        os.remove(f)
    rt = memactors.connect(data_dir, config={"runtime": {"num_owners": 1}})
    try:
        assert rt.audit.verify()["ok"]
        assert len(recall(rt, "bob's private note", "assistant-bob", [BOB]).hits) == 3
        rt.write(BOB, "a note after the upgrade", actor="assistant-bob")
        assert rt.audit.verify()["ok"]
    finally:
        rt.close()
