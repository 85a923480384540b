"""A new L2 table written by several processes at once (a rebuild's workers).

Each worker writes its rows as Lance fragments beside the table (files no version reads yet)
and hands back their metadata; one commit then makes them the table, in place of the old one
(an overwrite: a reader sees the old table or the new one, never a part of it). So the rows
never travel back to one process to be written by it alone. ``finish_table`` then builds its
indexes and removes the old table's versions. Only pylance is imported here: a worker starts in
0.2 s, and a rebuild never imports LanceDB (0.5-1.6 s of a core the workers fold on).

The indexes of an L2 table are defined here, once: ``store.lance_store`` builds the same ones
through LanceDB (the same parameters make the same index; a test compares them).
"""

from __future__ import annotations

import os

import lance
import orjson
import pyarrow as pa
from lance.fragment import FragmentMetadata, write_fragments

# Scalar indexes, by column. Sensitivity, category and source kind (issue 23: a recall's
# clearance, purpose and where=) are bitmaps too: measured on 20k rows, the pre-filter with
# their clauses took +3 ms over the scope's alone without them and -4 ms with them (the
# intersection narrows the vector search).
SCALAR_INDEXES = {"scope": "BTREE", "status": "BITMAP", "memory_id": "BTREE", "sensitivity": "BITMAP",
                  "category": "BITMAP", "source_kind": "BITMAP"}
FTS_COLUMN = "search_text"
# Native full-text index over the tokens we derive (words, CJK bigrams): split on white space
# only, so Chinese works the same as English, and hot and cold recall see the same terms.
FTS_PARAMS = {"base_tokenizer": "whitespace", "lower_case": False, "stem": False, "remove_stop_words": False,
              "ascii_folding": False, "with_position": False, "max_token_length": None}

META_EMBEDDER = b"memactors.embedder"
META_DIM = b"memactors.dim"


def with_embedder(schema: pa.Schema, name: str, dim: int) -> pa.Schema:
    """The L2 schema with the embedder it was built with in its metadata (checked at open)."""
    return schema.with_metadata({**(schema.metadata or {}), META_EMBEDDER: name.encode(),
                                 META_DIM: str(dim).encode()})


def write_part(rows: pa.Table, uri: str) -> list[str]:
    """Write ``rows`` as new fragment files of the table at ``uri``; their metadata, as JSON."""
    # Files of a table that replaces the one there (its schema may be older: not "append"), or
    # of a new one ("create": else lance logs a warning that it will create one).
    frags = write_fragments(rows, uri, schema=rows.schema, mode="overwrite" if _exists(uri) else "create")
    return [orjson.dumps(f.to_json()).decode() for f in frags]


def commit_parts(uri: str, schema: pa.Schema, parts: list[list[str]]) -> None:
    """Make the fragments of ``parts`` (``write_part``'s) the whole table at ``uri``."""
    frags = [FragmentMetadata.from_json(j) for part in parts for j in part]
    read_version = lance.dataset(uri).version if _exists(uri) else None
    lance.LanceDataset.commit(uri, lance.LanceOperation.Overwrite(schema, frags), read_version=read_version)


def finish_table(uri: str) -> None:
    """A table just committed made ready: every index built (if it has rows), then every other
    version and every file no version reads removed (nothing of a table it replaced stays)."""
    from concurrent.futures import ThreadPoolExecutor
    from datetime import timedelta

    if lance.dataset(uri).count_rows():
        specs = [(FTS_COLUMN, "INVERTED", FTS_PARAMS)] + [(c, kind, {}) for c, kind in SCALAR_INDEXES.items()]
        # Two at a time (Lance builds an index mostly on one core, and commits indexes of other
        # columns side by side): 0.15 against 0.20 s at 100k rows. One that lost a commit race
        # anyway is built after, alone.
        with ThreadPoolExecutor(2) as pool:
            list(pool.map(lambda spec: _try_index(uri, *spec), specs))
        ds = lance.dataset(uri)
        built = {i.name for i in ds.describe_indices()}
        for col, kind, params in specs:
            if f"{col}_idx" not in built:
                ds.create_scalar_index(col, kind, **params)
    lance.dataset(uri).cleanup_old_versions(older_than=timedelta(0), delete_unverified=True)


def _try_index(uri: str, col: str, kind: str, params: dict) -> None:
    try:
        lance.dataset(uri).create_scalar_index(col, kind, **params)
    except Exception:  # noqa: BLE001 - built again after the others, alone, where a failure is raised
        pass


def drop_parts(uri: str, parts: list[list[str]]) -> None:
    """Remove the files of fragments never committed (a rebuild that failed part way)."""
    for part in parts:
        for j in part:
            for f in orjson.loads(j).get("files", []):
                try:
                    os.remove(os.path.join(uri, "data", f["path"]))
                except FileNotFoundError:
                    pass


def _exists(uri: str) -> bool:
    return os.path.isdir(os.path.join(uri, "_versions"))
