"""Scopes are paths of segments; identifiers are a closed ASCII alphabet (pure, no Ray)."""

import pytest

from memactors.core.errors import InvalidIdentifier, InvalidScope, ValidationError
from memactors.core.scopes import GLOBAL, check_identifier, parse_scope, visible_set

VALID = [
    "/global/",
    "/org/acme/",
    "/org/acme/user/alice/",
    "/org/acme/user/alice/task/t-1/",
    "/org/acme/project/p.2/",
    "/org/a_b/user/4_/",
]


@pytest.mark.parametrize("text", VALID)
def test_valid_scopes_round_trip(text):
    assert str(parse_scope(text)) == text
    assert str(parse_scope(text.rstrip("/"))) == text


PAYLOADS = [
    "a' OR '1'='1",
    "zz\\' OR 1=1) --",
    "%",
    "４２",  # full-width digits
    "ａcme",  # full-width letter
    "..",
    ".",
    "",
    "a b",
    "a/b",
    "alice\x00",
    "ali\u0441e",  # Cyrillic es
    "*",
    "a" * 129,
]


@pytest.mark.parametrize("bad", PAYLOADS)
def test_payloads_are_not_identifiers(bad):
    with pytest.raises(InvalidIdentifier):
        check_identifier(bad)


@pytest.mark.parametrize("bad", [p for p in PAYLOADS if "/" not in p and p])
def test_payloads_in_scopes_are_refused(bad):
    with pytest.raises(ValidationError):
        parse_scope(f"/org/acme/user/{bad}/")


@pytest.mark.parametrize(
    "bad",
    ["org/acme/", "/org/", "/org/acme/team/x/", "/org/acme/task/t/", "/org/acme/project/p/task/t/",
     "/global/x/", "/org/acme//user/a/", "/user/a/", "/org/acme/user/a/task/t/x/y/", 42, None],
)
def test_malformed_scopes(bad):
    with pytest.raises((InvalidScope, InvalidIdentifier)):
        parse_scope(bad)


def test_error_message_does_not_echo_non_ascii():
    with pytest.raises(InvalidIdentifier) as e:
        check_identifier("ali\u0441e")
    assert "\u0441" not in str(e.value)


def test_ancestry_is_by_segment_not_prefix():
    u42, u420 = parse_scope("/org/a/user/42/"), parse_scope("/org/a/user/420/")
    assert not u42.is_ancestor_or_self(u420)
    assert not parse_scope("/org/a/").is_ancestor_or_self(parse_scope("/org/ab/"))
    assert not parse_scope("/org/a/user/4_/").is_ancestor_or_self(parse_scope("/org/a/user/42/"))
    assert parse_scope("/org/a/").is_ancestor_or_self(u420)
    assert GLOBAL.is_ancestor_or_self(u42)


def test_visible_set_is_allowed_plus_ancestors_never_descendants():
    vis = [str(s) for s in visible_set([parse_scope("/org/a/user/u/")])]
    assert vis == ["/org/a/user/u/", "/org/a/", "/global/"]
    vis = [str(s) for s in visible_set([parse_scope("/org/a/")])]
    assert "/org/a/user/u/" not in vis
    task = parse_scope("/org/a/user/u/task/t/")
    assert task not in visible_set([parse_scope("/org/a/user/u/")])
