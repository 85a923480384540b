"""A write's ``embed_text``: the text its vector is made from when it is not the content (the
LangGraph store's indexed field). Gated as the text is, kept in the record, so a rebuild, a
revival or a folder of the previous schema gives the same vector; and a hit's ``similarity``,
the query's raw cosine to that vector. Process host: real LanceDB and DuckDB files, no Ray."""

from __future__ import annotations

import os

import lancedb
import numpy as np
import orjson
import pytest

import memactors
from memactors.core import records as R
from memactors.embed import HashEmbedder

SCOPE = "/org/emb/user/u/"
QUERY = "which tea does alice like"


def _cos(a: str, b: str) -> float:
    e = HashEmbedder()
    va, vb = e.embed([a, b])
    return float(va @ vb)


@pytest.fixture
def rt(tmp_path):
    with memactors.connect(str(tmp_path / "data"), host="process") as r:
        r.grant("ag", SCOPE, write=True)
        r.data = str(tmp_path / "data")
        yield r


def _hit(rt, memory_id: str, query: str = QUERY):
    hits = rt.recall(query, actor="ag", allowed_scopes=[SCOPE], top_k=20, threshold=0.0).hits
    return next(h for h in hits if h.memory_id == memory_id)


def test_the_vector_is_of_the_embed_text_not_the_content(rt):
    content = '{"namespace": ["m"], "key": "k1", "value": {"text": "Alice likes sencha"}}'
    w = rt.write(SCOPE, content, actor="ag", embed_text="Alice likes sencha", subject="m", predicate="k1")
    plain = rt.write(SCOPE, "Alice likes sencha, and so does Bob", actor="ag")
    h = _hit(rt, w.memory_id)
    assert h.similarity == pytest.approx(_cos(QUERY, "Alice likes sencha"), abs=1e-5)
    assert h.similarity != pytest.approx(_cos(QUERY, content), abs=1e-3)
    assert h.content == content  # what is shown is the content; the embed text never is
    assert "embed_text" not in h.to_dict()
    # without one, the content is embedded
    assert _hit(rt, plain.memory_id).similarity == pytest.approx(_cos(QUERY, "Alice likes sencha, and so does Bob"),
                                                                 abs=1e-5)


def test_similarity_is_the_raw_cosine_negative_included(rt):
    w = rt.write(SCOPE, "zzzz qqqq xxxx", actor="ag")
    h = _hit(rt, w.memory_id, "alpha beta gamma")
    assert h.similarity == pytest.approx(_cos("alpha beta gamma", "zzzz qqqq xxxx"), abs=1e-5)
    assert h.components["vector"] == pytest.approx(max(0.0, h.similarity), abs=1e-6)


def test_the_embed_text_passes_the_gate(rt):
    secret = "sk-" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6"
    blocked = rt.write(SCOPE, "a harmless note", actor="ag", embed_text=f"the key is {secret}")
    assert blocked.decision == R.BLOCKED and blocked.memory_id is None
    red = rt.write(SCOPE, "a note about a phone", actor="ag", embed_text="call +1 415 555 2671 about tea",
                   subject="note", predicate="phone")
    assert red.decision in (R.ACCEPTED, R.REDACTED)
    rt.flush()
    rows = lancedb.connect(os.path.join(rt.data, "l2")).open_table("memories").to_arrow().to_pylist()
    kept = [r["embed_text"] for r in rows if r["memory_id"] == red.memory_id]
    assert kept and "415" not in kept[0] and "2671" not in kept[0]
    assert not any(secret in (r["embed_text"] or "") for r in rows)
    # the vector is of the redacted text (and a query is gated too)
    h = _hit(rt, red.memory_id, "tea call")
    assert h.similarity == pytest.approx(_cos("tea call", kept[0]), abs=1e-5)
    assert h.similarity != pytest.approx(_cos("tea call", "call +1 415 555 2671 about tea"), abs=1e-3)


def test_bad_embed_text_is_a_typed_error(rt):
    for bad in (3, "", "x" * (R.MAX_CONTENT_CHARS + 1), "\ud800"):
        with pytest.raises(memactors.InvalidRecord):
            rt.write(SCOPE, "a note", actor="ag", embed_text=bad)


def test_a_retry_without_embed_text_keeps_the_digest_it_had():
    req = R.write_request({"scope": SCOPE, "text": "hello", "actor": "ag", "idempotency_key": "k1"})
    fields = [f for f in R.WriteRequest.__dataclass_fields__ if f not in ("idempotency_key", "embed_text")]
    import hmac

    assert R.fingerprint(req, b"k") == hmac.digest(b"k", orjson.dumps([getattr(req, f) for f in fields]), "sha256")
    other = R.write_request({"scope": SCOPE, "text": "hello", "actor": "ag", "idempotency_key": "k1",
                             "embed_text": "hi"})
    assert R.fingerprint(other, b"k") != R.fingerprint(req, b"k")


def test_rebuild_and_the_previous_schema_keep_the_vector(tmp_path):
    data = str(tmp_path / "data")
    with memactors.connect(data, host="process") as rt:
        rt.grant("ag", SCOPE, write=True)
        w = rt.write(SCOPE, '{"value": "Alice likes gyokuro"}', actor="ag", embed_text="Alice likes gyokuro",
                     subject="m", predicate="k2")
        rt.flush()
        before = _hit(rt, w.memory_id).similarity
    db = lancedb.connect(os.path.join(data, "l2"))
    old = db.open_table("memories").to_arrow().drop_columns(["embed_text"])
    meta = {**(old.schema.metadata or {}), b"memactors.schema_version": b"4"}
    db.create_table("memories", data=old.replace_schema_metadata(meta), mode="overwrite")
    with memactors.connect(data, host="process") as rt:  # rebuilt from the ledger at connect
        tbl = lancedb.connect(os.path.join(data, "l2")).open_table("memories").to_arrow()
        assert "embed_text" in tbl.column_names
        assert _hit(rt, w.memory_id).similarity == pytest.approx(before, abs=1e-6)
        assert before == pytest.approx(_cos(QUERY, "Alice likes gyokuro"), abs=1e-5)
        assert rt.audit.verify()["ok"]


def test_an_old_record_without_embed_text_embeds_its_content():
    rec = {"content": "plain text", "embed_text": None}
    assert R.embedded_text(rec) == "plain text"
    assert R.embedded_text({"content": "c"}) == "c"  # a record from a ledger before the field
    assert R.embedded_text({"content": "c", "embed_text": "e"}) == "e"
    assert np.isfinite(_cos("a", "b"))


def test_erasure_leaves_nothing_of_the_embed_text(tmp_path):
    """The embed text and its vector go with the memory: after forget and purge neither is on disk."""
    from test_erasure import _everything

    data = str(tmp_path / "data")
    secret_text = "Quokkabridge 42 is where the spare key hides"
    with memactors.connect(data, host="process") as rt:
        rt.grant("ag", SCOPE, write=True)
        w = rt.write(SCOPE, '{"value": "a note"}', actor="ag", embed_text=secret_text, subject="m", predicate="k3")
        keep = rt.write(SCOPE, "u likes tea", actor="ag")
        rt.flush()
        vector = HashEmbedder(384).embed([secret_text])[0].astype(np.float32).tobytes()
        rt.forget(w.memory_id, actor="ag", reason="asked", erase="fact")
        rt.purge()
        assert [h.memory_id for h in rt.recall("tea", actor="ag", allowed_scopes=[SCOPE]).hits] == [keep.memory_id]
    for where, blob in _everything(data):
        for name, needle in {"text": secret_text.encode(), "token": b"Quokkabridge", "vector": vector}.items():
            assert needle not in blob, f"{name} found in {where}"
