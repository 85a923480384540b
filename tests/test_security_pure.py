"""Security properties that need no runtime: rejected values are described, never echoed."""

from __future__ import annotations

import pytest

from memactors.core import records as R
from memactors.core.errors import ValidationError
from memactors.core.scopes import check_identifier, parse_scope

TOKEN = "ghp_" + "Qm4Tz8Lp2Vx6Nc0Rb5Hs9Jd3Kf7Gw1Ye4Ua8"
PHONE = "13987654321"


@pytest.mark.parametrize("bad", [
    f"/org/acme/user/{TOKEN}!/",  # an identifier with a bad character
    f"/org/acme/team/{TOKEN}/",  # a form outside the tree
    f"org/{TOKEN}/",  # no leading slash
    f"/org/acme/user/{TOKEN}/task/{TOKEN}/x/y/",
    f"/org/{PHONE} {TOKEN}/",
])
def test_invalid_scope_describes_never_echoes(bad):
    with pytest.raises(ValidationError) as e:
        parse_scope(bad)
    msg = str(e.value)
    assert TOKEN not in msg and TOKEN[:12] not in msg and PHONE not in msg
    assert "characters" in msg  # it still says what is wrong


@pytest.mark.parametrize("what, value", [
    ("actor", f"{TOKEN} x"), ("actor", f"user-{PHONE}\u0441"), ("task_id", TOKEN + "/"), ("actor", TOKEN * 4),
])
def test_invalid_identifier_describes_never_echoes(what, value):
    with pytest.raises(ValidationError) as e:
        check_identifier(value, what)
    msg = str(e.value)
    assert TOKEN[:8] not in msg and PHONE not in msg
    assert what in msg and str(len(value)) in msg


def test_the_failing_character_is_named_by_class_and_position():
    with pytest.raises(ValidationError) as e:
        check_identifier("abc def", "actor")
    assert "position 4 is a space" in str(e.value)
    with pytest.raises(ValidationError) as e:
        check_identifier("abc\x00", "actor")
    assert "position 4 is a control character" in str(e.value)


def test_write_and_recall_requests_do_not_echo_their_ids():
    with pytest.raises(ValidationError) as e:
        R.write_request({"scope": "/org/a/user/u/", "text": "x", "actor": f"{TOKEN}!"})
    assert TOKEN not in str(e.value)
    with pytest.raises(ValidationError) as e:
        R.RecallRequest("q", "ag", f"t {PHONE}", ["/org/a/user/u/"], "p").validate()
    assert PHONE not in str(e.value)


SECRET = "sk_live_4eC39HqLyjWDarjtT1zdp7dc"


@pytest.mark.parametrize("query", [
    SECRET,  # does not parse: DuckDB quotes the token near the error
    f"SELECT * FROM {SECRET}",  # an unknown table: DuckDB names it
    f"SELECT {SECRET} FROM t",  # an unknown column
    f"SELECT '{SECRET}'::INTEGER",  # a failed cast quotes the value
])
def test_audit_sql_errors_never_echo_the_query(query):
    import pyarrow as pa

    from memactors.store import sandbox

    with pytest.raises(ValidationError) as err:
        sandbox.check_select(query)
        sandbox.run_select(query, None, {"t": pa.table({"a": [1]})})
    assert SECRET not in str(err.value) and "audit.sql" in str(err.value)
