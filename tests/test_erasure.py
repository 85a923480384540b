"""Forget is erasure (DESIGN section 8): every version of a fact if asked, what was derived only
from it, and after the purge nothing of it anywhere in the data folder: not the text, not its
vector's bytes, not its data key, in any file, any Lance version or any DuckDB table."""

from __future__ import annotations

import glob
import os

import duckdb
import lance
import numpy as np

import memactors
from memactors.embed import HashEmbedder

S = "/org/erase/user/u/"
TEXT = "my old address was 17 Quokkastrasse, Zanzibarville"


def _everything(data_dir: str) -> list[tuple[str, bytes]]:
    """(where, bytes) for every file, every Lance version's rows and every DuckDB table."""
    out = []
    for p in glob.glob(os.path.join(data_dir, "**", "*"), recursive=True):
        if os.path.isfile(p):
            with open(p, "rb") as f:
                out.append((p, f.read()))
    path = os.path.join(data_dir, "l2", "memories.lance")
    for v in lance.dataset(path).versions():
        tbl = lance.dataset(path, version=v["version"]).to_table()
        out.append((f"lance version {v['version']}", repr(tbl.to_pylist()).encode()))
        if tbl.num_rows:
            out.append((f"lance version {v['version']} vectors", tbl.column("vector").combine_chunks().flatten()
                        .to_numpy().astype(np.float32).tobytes()))
    con = duckdb.connect(os.path.join(data_dir, "ledger.duckdb"), read_only=True)
    for (table,) in con.execute("SELECT table_name FROM information_schema.tables").fetchall():
        out.append((f"duckdb {table}", repr(con.execute(f"SELECT * FROM {table}").fetchall()).encode()))
    con.close()
    return out


def test_after_forget_and_purge_nothing_of_it_is_anywhere(ray_session, tmp_path):
    data = str(tmp_path / "data")
    rt = memactors.connect(data, config={"runtime": {"num_owners": 1, "l2_flush_interval_s": 0.2}})
    try:
        rt.grant("ag", S, write=True)
        v1 = rt.write(S, TEXT, actor="ag", subject="u", predicate="address", object="17 Quokkastrasse")
        v2 = rt.write(S, "my address is 3 Elm Row, Leeds", actor="ag", subject="u", predicate="address",
                      object="3 Elm Row")
        summary = rt.write(S, "a summary of where u lived: Quokkastrasse then Elm Row", actor="ag",
                           derived_from=[v1.memory_id, v2.memory_id])
        mixed = rt.write(S, "u moves a lot between cities and keeps a diary of it", actor="ag",
                         derived_from=[v2.memory_id, rt.write(S, "u keeps a diary", actor="ag").memory_id])
        keep = rt.write(S, "u likes tea", actor="ag")
        rt.flush()
        # The ledger answers "what depends on it" before anything is erased.
        vector = HashEmbedder(384).embed([TEXT])[0].astype(np.float32).tobytes()
        rt.close()
        con = duckdb.connect(os.path.join(data, "ledger.duckdb"), read_only=True)
        keys_before = {m: bytes(k) for m, k in con.execute("SELECT memory_id, key FROM keys").fetchall()}
        con.close()
        rt = memactors.connect(data, config={"runtime": {"num_owners": 1, "l2_flush_interval_s": 0.2}})
        out = rt.forget(v2.memory_id, actor="ag", reason="user moved and asked", scope="fact")
        assert set(out["forgotten"]) == {v1.memory_id, v2.memory_id, summary.memory_id}
        assert out["flagged"] == [mixed.memory_id]
        hits = rt.recall("address Quokkastrasse Elm Row summary diary tea", actor="ag", task_id="t",
                         allowed_scopes=[S], purpose="p", top_k=20, threshold=0.0).hits
        assert {h.memory_id for h in hits} & {v1.memory_id, v2.memory_id, summary.memory_id} == set()
        assert next(h for h in hits if h.memory_id == mixed.memory_id).review == "source_forgotten"
        assert keep.memory_id in {h.memory_id for h in hits}
        res = rt.purge()
        assert res["l2"]["versions_removed"] >= 1
        for m in (v1.memory_id, v2.memory_id, summary.memory_id):
            assert rt.audit.erased(m, actor="ag")["key_destroyed"]
    finally:
        rt.close()
    needles = {"text": TEXT.encode(), "text utf-16": TEXT.encode("utf-16-le"), "token": b"Quokkastrasse",
               "vector": vector, **{f"key {m[:8]}": keys_before[m] for m in (v1.memory_id, v2.memory_id,
                                                                            summary.memory_id)}}
    for where, blob in _everything(data):
        for name, needle in needles.items():
            assert needle not in blob, f"{name} found in {where}"
    rt = memactors.connect(data, config={"runtime": {"num_owners": 1}})  # and the folder still verifies
    try:
        assert rt.audit.verify()["ok"]
    finally:
        rt.close()
