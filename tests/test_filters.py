"""Lance filter strings are built from validated values only (pure, no Ray, no Lance)."""

import pytest

from memactors.core.errors import ValidationError
from memactors.store import filters as F

PAYLOADS = ["a' OR '1'='1", "zz\\' OR 1=1) --", "%", "４２", "..", "x'); DROP TABLE memories; --"]


@pytest.mark.parametrize("p", PAYLOADS)
def test_payload_scopes_never_reach_a_filter(p):
    with pytest.raises(ValidationError):
        F.scope_in([f"/org/a/user/{p}/"])


@pytest.mark.parametrize("p", PAYLOADS + ["0" * 31 + "'", "A" * 32])
def test_payload_ids_never_reach_a_filter(p):
    with pytest.raises(ValidationError):
        F.ids_in([p])


def test_quote_refuses_backslashes_and_doubles_quotes():
    with pytest.raises(ValidationError):
        F.quote("zz\\' OR 1=1")
    assert F.quote("it's") == "'it''s'"


def test_recall_filter_shape():
    f = F.recall_filter(["/org/a/user/u/", "/org/a/", "/global/"], 123)
    assert f.startswith("scope IN ('/global/', '/org/a/', '/org/a/user/u/')")
    assert "status IN ('active', 'stale')" in f and "arrow_cast(123," in f  # stale: recalled at half score
    with pytest.raises(ValidationError):
        F.status_in(["active' OR '1'='1"])


@pytest.mark.parametrize("p", PAYLOADS)
def test_ids_as_an_expression_are_values(p):
    # ``ids_expr`` goes to Lance as Substrait: a payload id matches itself, nothing else.
    import pyarrow as pa

    t = pa.table({"memory_id": ["a", "b", p]})
    assert t.filter(F.ids_expr([p])).column("memory_id").to_pylist() == [p]
    assert t.filter(F.ids_expr(["a' OR '1'='1"])).num_rows == (p == "a' OR '1'='1")
