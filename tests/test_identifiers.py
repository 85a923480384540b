"""Identifiers through the gate (pure, no Ray): what is refused, what passes, the message, and
the keyed pseudonym."""

import pytest

from memactors.core.errors import InvalidIdentifier, InvalidScope
from memactors.gate.identifiers import Identifiers, identifier_kind, screen_ids, screen_scope

SLACK = "xoxb-123456789012-1234567890123-abcdefghijklmnopqrstuvwx"
GITHUB = "ghp_" + "a1B2" * 9
AWS = "AKIAQYLPMN5HFTXW7Z3B"
# (id, a word the kind of data is named by)
MUST_MATCH = [
    (SLACK, "Slack"), (GITHUB, "GitHub"), ("github_pat_" + "A1b2" * 6, "GitHub"), (AWS, "AWS"),
    ("sk-proj-" + "Ab1" * 10, "OpenAI"), ("glpat-" + "x1Y2" * 5, "GitLab"),
    ("13812345678", "Chinese mobile"), ("user_15912345678", "Chinese mobile"), ("8613812345678", "Chinese mobile"),
    ("alice@example.com", "e-mail"), ("li.wei+test@corp.example.cn", "e-mail"),
    ("442079460958", "international"), ("4915123456789", "international"), ("0033612345678", "international"),
    ("14155550132", "mobile"),  # +1 415 ...; 141 is also a Chinese mobile prefix: refused either way
    ("1-415-555-0132", "phone"), ("415.555.0132", "phone"), ("020-7946-0958", "phone"),
    ("+14155550132", "phone"), ("+44-20-7946-0958", "phone"),
    ("11010519491231002X", "resident ID"),
    # card numbers: an id has no room for card words or the printed grouping, so a Luhn-valid run
    # of a brand's prefix and length is one (test numbers of Visa, Mastercard, Amex, Discover, JCB, Diners)
    ("4111111111111111", "card"), ("user-4012888888881881", "card"), ("order_5555555555554444", "card"),
    ("378282246310005", "card"), ("6011000990139424", "card"), ("3530111333300000", "card"),
    ("36227206271667", "card"), ("2223003122003222", "card"), ("4111.1111.1111.1111", "card"),
    ("4222222222222", "card"), ("acct-4111111111111111-x", "card"),
    # a token with a word joined on by "-" or "_" (a prefix, a suffix) is still the token
    ("k-" + GITHUB, "GitHub"), ("k_" + GITHUB, "GitHub"), (GITHUB + "-retry1", "GitHub"), ("id-" + SLACK, "Slack"),
    ("u-hf_abcdefghijklmnopqrstuvwxyzABCDEFGH", "HuggingFace"), ("pay-sk_live_4eC39HqLyjWDarjtT1zdp7dc", "Stripe"),
    ("g-AIzaSyA1234567890abcdefghijklmnopqrstuv", "Google"), ("agent-sk-proj-" + "Ab1" * 10 + "_v2", "OpenAI"),
]
MUST_PASS = [
    "42", "1001", "user-42", "u1001", "alice", "acme", "org_7", "t0-abc123", "task-2024-11-30", "default",
    "550e8400-e29b-41d4-a716-446655440000", "550e8400e29b41d4a716446655440000",
    "9fceb02d0ae598e95dc970b74767f19372d61af8", "4f2a9c1",  # commit hashes
    "2024-06-01", "20241130", "2024-06-01T12-30-00", "1.2.3", "v2.10.0-rc1", "10.0.22631.3000",
    "1733011200", "1733011200000", "12345678", "4000000001", "sk-learn", "xoxo", "ghp_short", "AKIA",
    "memactors-lifecycle", "task_start", "probe", "preference", "p-" + "0f" * 16, "gpt-4o-mini",
    "req_0123456789abcdef", "INV-2024-000123", "order-4155550132",
    # 13-19 digits that are not cards: Luhn fails, no brand's prefix, or a length that brand never
    # issues; timestamps in ms, us and ns; a snowflake id
    "4111111111111112", "9111111111111110", "1733361234567890", "1733361234567890123", "1234567890123456789",
    "3782822463100050", "5555555555554444000", "user-8000000000000003",
    # a card's digits run on from letters or other digits: a hex id, not a card
    "ab4111111111111111cd", "4111111111111111e0c2d1f9a8b7c6d5", "f2a94111111111111111", "12345678-4111-1111-1111-2233",
    "12345678-1234-4111-1111-111111111111",
]


@pytest.mark.parametrize("value,word", MUST_MATCH)
def test_ids_that_carry_secrets_or_personal_data_are_refused(value, word):
    kind = identifier_kind(value)
    assert kind is not None and word.lower() in kind.lower(), kind
    with pytest.raises(InvalidIdentifier) as e:
        Identifiers().id(value, "actor")
    msg = str(e.value)
    assert value not in msg and "opaque id" in msg and msg.startswith("actor looks like")
    for part in value.replace("@", "-").replace(".", "-").replace("_", "-").split("-"):
        if len(part) >= 8:
            assert part not in msg


@pytest.mark.parametrize("value", MUST_PASS)
def test_ordinary_ids_pass(value):
    assert identifier_kind(value) is None
    assert Identifiers().id(value, "actor") == value


def test_random_uuids_pass():
    # a caller's idempotency keys are often UUIDs (the runtime's own are made keys): none may be refused
    import random
    import uuid

    rng = random.Random(7)
    ids = [uuid.UUID(int=rng.getrandbits(128), version=4) for _ in range(20000)]
    assert [str(u) for u in ids if identifier_kind(u.hex) or identifier_kind(str(u))] == []


@pytest.mark.parametrize("segment", ["org", "user", "task", "project"])
def test_each_scope_segment_is_screened(segment):
    scope = {"org": f"/org/{SLACK}/", "user": f"/org/acme/user/{SLACK}/",
             "task": f"/org/acme/user/u1/task/{SLACK}/", "project": f"/org/acme/project/{SLACK}/"}[segment]
    with pytest.raises(InvalidIdentifier) as e:
        Identifiers().scope(scope)
    assert SLACK not in str(e.value) and f"the {segment} id of a scope" in str(e.value)
    with pytest.raises(InvalidIdentifier):
        screen_scope(scope)


def test_clean_scopes_pass_unchanged_and_bad_forms_stay_the_cores_errors():
    ids = Identifiers()
    for s in ("/global/", "/org/acme/", "/org/acme/user/42/task/t0-abc123/", "/org/acme/project/2024-06-01/"):
        assert ids.scope(s) == s
    with pytest.raises(InvalidIdentifier):
        ids.scope("/org/acme/user/13812345678")  # no trailing slash: still screened
    assert ids.scopes(["/org/a/", "/org/b/"]) == ["/org/a/", "/org/b/"]
    assert ids.scopes("/org/a/") == "/org/a/"  # not a list: RecallRequest says what is wrong
    with pytest.raises(InvalidIdentifier):
        ids.id(None, "actor")
    assert ids.id("has space", "actor") == "has space"  # its shape is the core's to refuse, when parsed


def test_pseudonyms_are_keyed_stable_and_valid_ids():
    a = Identifiers(b"k" * 32, pseudonymise=True)
    b = Identifiers(b"k" * 32, pseudonymise=True)
    c = Identifiers(b"x" * 32, pseudonymise=True)
    p = a.id("alice@example.com", "actor")
    assert p == b.id("alice@example.com", "actor") != c.id("alice@example.com", "actor")
    assert p.startswith("p-") and len(p) == 34 and identifier_kind(p) is None
    assert a.id(p, "actor") == p  # mapping twice is mapping once
    assert a.id("alice", "actor") == "alice"  # clean ids stay themselves
    scope = a.scope("/org/acme/user/13812345678/task/t1/")
    assert scope == f"/org/acme/user/{a.pseudonym('13812345678')}/task/t1/" and "13812345678" not in scope
    assert a.scope(scope) == scope
    with pytest.raises(ValueError):
        Identifiers(None, pseudonymise=True)


def test_owners_second_look_refuses_even_when_the_runtime_pseudonymises():
    with pytest.raises(InvalidIdentifier):
        screen_ids({"actor": "ok", "idempotency key": GITHUB})
    screen_ids({"actor": "ok", "idempotency key": None, "granting actor": "admin"})


def test_write_batches_keep_their_refusals_by_position():
    from memactors.core.records import WriteRequest

    items = [{"scope": "/org/a/user/u1/", "text": "x", "actor": "ag"},
             {"scope": f"/org/a/user/{AWS}/", "text": "x", "actor": "ag"},
             WriteRequest("/org/a/", "x", "ag", idempotency_key=SLACK)]
    out, refused = Identifiers().writes(items)
    assert sorted(refused) == [1, 2] and out[0] == items[0]
    out, refused = Identifiers(b"k" * 32, pseudonymise=True).writes(items)
    assert not refused and AWS not in out[1]["scope"] and out[2].idempotency_key.startswith("p-")
    assert items[2].idempotency_key == SLACK  # the caller's object is not changed


def test_the_screen_is_cached_and_cheap():
    import time

    ids = Identifiers()
    t0 = time.process_time()
    for _ in range(20000):
        ids.id("agent-7", "actor")
        ids.scope("/org/acme/user/42/")
    assert time.process_time() - t0 < 1.0


def test_a_scope_outside_the_tree_is_left_to_the_core_which_never_echoes():
    from memactors.core.scopes import parse_scope

    with pytest.raises(InvalidScope) as e:
        parse_scope(Identifiers().scope(f"/{SLACK}/acme/"))
    assert SLACK not in str(e.value)

