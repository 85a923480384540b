"""Residue: the bytes a forgotten memory or a blocked secret left on disk.

Run on a data folder whose runtime is closed. For each needle (a forgotten memory's text and
its marker word, or a blocked secret), in UTF-8 and UTF-16-LE, it looks in:

- every file under the folder, as raw bytes (a deleted row still sits in its data file until
  compaction; DuckDB's free blocks; write-ahead logs);
- every Lance file, decoded (data and index files: a compressed page hides nothing);
- every version of every Lance dataset (``lance.dataset(path, version=v)``), every string column;
- every table of every DuckDB file (opened read-only), every string, binary and list column;
- every full-text index of a Lance dataset: whether it still lists the row a forgotten memory
  had in any readable version (its term dictionary is compressed, so a byte scan misses it).

Places are named by file, version, table and column, never by what was found there.
"""

from __future__ import annotations

import os
import re
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

import pyarrow as pa

_CHUNK = 16 << 20


@dataclass(frozen=True, slots=True)
class Needle:
    """What to look for: ``values`` (a text, a word, a secret) on behalf of ``label`` (the case
    id and write key: names the write, never its content)."""

    label: str
    kind: str  # "forgotten" | "blocked"
    values: tuple[str, ...]
    memory_id: str | None = None  # a forgotten memory's id: its rows are looked up in the FTS indexes


@dataclass
class Residue:
    """What a scan found: ``found`` maps a needle's label to the places it was found; ``scanned``
    counts what was read (files, bytes, Lance files, versions, DuckDB tables, FTS indexes)."""

    found: dict[str, list[str]] = field(default_factory=dict)
    scanned: dict[str, int] = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {"found": self.found, "scanned": self.scanned}


class Matcher:
    """Every value of every needle, in the given encodings, as one regular expression over bytes
    shaped as a trie (an alternation of hundreds of literals tries each one at every position;
    a trie tries one byte), and which needle each found value belongs to."""

    def __init__(self, needles: Iterable[Needle], encodings: tuple[str, ...] = ("utf-8", "utf-16-le")) -> None:
        self.label: dict[bytes, tuple[str, str]] = {}
        for n in needles:
            for v in n.values:
                for enc in encodings:
                    if v:
                        self.label.setdefault(v.encode(enc), (n.label, enc))
        self.regex = re.compile(trie_pattern(list(self.label))) if self.label else None
        self.longest = max(map(len, self.label), default=1)

    def find(self, data: bytes | memoryview) -> set[tuple[str, str]]:
        """(label, encoding) of every needle value found in ``data``."""
        if self.regex is None:
            return set()
        return {self.label[m.group()] for m in self.regex.finditer(data)}


def trie_pattern(words: list[bytes]) -> bytes:
    """A regular expression matching exactly ``words`` (the longest where one is a prefix of
    another), built as a trie of their bytes."""
    trie: dict = {}
    for w in words:
        node = trie
        for b in w:
            node = node.setdefault(b, {})
        node[None] = {}  # a word ends here

    def build(node: dict) -> bytes:
        branches = [re.escape(bytes([b])) + build(child) for b, child in sorted(
            (k, v) for k, v in node.items() if k is not None)]
        if not branches:
            return b""
        body = branches[0] if len(branches) == 1 else b"(?:" + b"|".join(branches) + b")"
        if None not in node:
            return body
        return (b"(?:" + body + b")?") if len(branches) == 1 else body + b"?"

    return build(trie)


def scan_residue(data_dir: str | os.PathLike, needles: Iterable[Needle]) -> Residue:
    """Look for ``needles`` everywhere in ``data_dir`` (see the module's docstring)."""
    needles = list(needles)
    data_dir = os.fspath(data_dir)
    m = Matcher(needles)  # raw bytes: UTF-8 and UTF-16-LE
    cols = Matcher(needles, ("utf-8",))  # decoded Arrow columns hold UTF-8
    found: dict[str, set[str]] = defaultdict(set)
    scanned = dict.fromkeys(("files", "bytes", "lance_files", "lance_files_unreadable", "lance_versions",
                             "duckdb_tables", "fts_indexes"), 0)
    rel = lambda p: os.path.relpath(p, data_dir)  # noqa: E731
    files = sorted(_files(data_dir))
    for path in files:
        for label, enc in _scan_file(path, m, scanned):
            found[label].add(f"file {rel(path)} ({enc})")
    for path in (f for f in files if f.endswith(".lance")):
        for label, col in _scan_lance_file(path, cols, scanned):
            found[label].add(f"lance file {rel(path)}, column {col}")
    erased = {n.memory_id: n.label for n in needles if n.memory_id}
    for ds_path in _lance_datasets(data_dir):
        rows: dict[str, set[int]] = defaultdict(set)
        for label, where in _scan_lance_versions(ds_path, cols, scanned, erased, rows):
            found[label].add(f"{rel(ds_path)} {where}")
        for label, index in _scan_fts(ds_path, rows, erased, scanned):
            found[label].add(f"full-text index {rel(index)} lists its row")
    for path in (f for f in files if f.endswith(".duckdb")):
        for label, where in _scan_duckdb(path, cols, scanned):
            found[label].add(f"duckdb {rel(path)} {where}")
    return Residue({k: sorted(v) for k, v in sorted(found.items())}, scanned)


def _files(root: str) -> Iterator[str]:
    for d, _dirs, names in os.walk(root):
        for name in names:
            yield os.path.join(d, name)


def _scan_file(path: str, m: Matcher, scanned: dict) -> set[tuple[str, str]]:
    out: set[tuple[str, str]] = set()
    try:
        with open(path, "rb") as f:
            tail = b""
            while chunk := f.read(_CHUNK):
                buf = tail + chunk
                out |= m.find(buf)
                keep = m.longest - 1  # a needle across the boundary is found next time
                tail = buf[-keep:] if keep else b""
                scanned["bytes"] += len(chunk)
    except OSError:
        return out  # gone while we walked (a WAL checkpointed): nothing left to read
    scanned["files"] += 1
    return out


def _column_bytes(arr: pa.Array) -> Iterator[bytes]:
    """The bytes of every string or binary value in ``arr``, through lists, structs and
    dictionaries; numbers and vectors are skipped."""
    t = arr.type
    if pa.types.is_dictionary(t):
        yield from _column_bytes(arr.dictionary_decode())
    elif pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_binary(t) \
            or pa.types.is_large_binary(t) or pa.types.is_string_view(t) or pa.types.is_binary_view(t) \
            or pa.types.is_fixed_size_binary(t):
        # NUL between values: a needle never spans two of them.
        yield b"\x00".join(v for v in arr.cast(pa.large_binary()).to_pylist() if v)
    elif pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t) \
            or pa.types.is_list_view(t):
        yield from _column_bytes(arr.flatten())
    elif pa.types.is_struct(t):
        for i in range(t.num_fields):
            yield from _column_bytes(arr.field(i))
    elif pa.types.is_map(t):
        yield from _column_bytes(arr.keys)
        yield from _column_bytes(arr.items)


def _scan_table(table: pa.Table | pa.RecordBatch, m: Matcher) -> Iterator[tuple[str, str]]:
    for name, col in zip(table.schema.names, table.columns):
        chunks = col.chunks if isinstance(col, pa.ChunkedArray) else [col]
        for chunk in chunks:
            for data in _column_bytes(chunk):
                for label, _enc in m.find(data):
                    yield label, name


def _scan_lance_file(path: str, m: Matcher, scanned: dict) -> set[tuple[str, str]]:
    from lance.file import LanceFileReader

    try:
        table = LanceFileReader(path).read_all().to_table()
    except Exception:  # noqa: BLE001 - not every .lance file reads on its own; the raw scan covered it
        scanned["lance_files_unreadable"] += 1
        return set()
    scanned["lance_files"] += 1
    return set(_scan_table(table, m))


def _lance_datasets(root: str) -> list[str]:
    return sorted(d for d, dirs, _ in os.walk(root) if d.endswith(".lance") and "_versions" in dirs)


def _scan_lance_versions(path: str, m: Matcher, scanned: dict, erased: dict[str, str],
                         rows: dict[str, set[int]]) -> Iterator[tuple[str, str]]:
    """Every readable version's string columns; ``rows`` collects the row ids each erased
    memory had (for the FTS check)."""
    import lance

    for v in lance.dataset(path).versions():
        ds = lance.dataset(path, version=v["version"])
        cols = [f.name for f in ds.schema if not pa.types.is_fixed_size_list(f.type)]
        table = ds.to_table(columns=cols, with_row_id=True)
        scanned["lance_versions"] += 1
        for label, col in set(_scan_table(table.drop_columns(["_rowid"]), m)):
            yield label, f"version {v['version']}, column {col}"
        if erased and "memory_id" in table.schema.names:
            for mid, rid in zip(table.column("memory_id").to_pylist(), table.column("_rowid").to_pylist()):
                if mid in erased:
                    rows[mid].add(rid)


def _scan_fts(path: str, rows: dict[str, set[int]], erased: dict[str, str],
              scanned: dict) -> Iterator[tuple[str, str]]:
    """Full-text indexes on disk that still list a row an erased memory had."""
    from lance.file import LanceFileReader

    root = os.path.join(path, "_indices")
    if not os.path.isdir(root):
        return
    for uuid in sorted(os.listdir(root)):
        index = os.path.join(root, uuid)
        docs = [f for f in sorted(os.listdir(index)) if f.endswith("docs.lance")]
        if not docs:
            continue  # not a full-text index
        scanned["fts_indexes"] += 1
        listed: set[int] = set()
        for f in docs:
            try:
                t = LanceFileReader(os.path.join(index, f)).read_all().to_table()
            except Exception:  # noqa: BLE001 - counted; the raw scan covered the file
                scanned["lance_files_unreadable"] += 1
                continue
            if "_rowid" in t.schema.names:
                listed |= set(t.column("_rowid").to_pylist())
        for mid, rids in rows.items():
            if rids & listed:
                yield erased[mid], index


def _scan_duckdb(path: str, m: Matcher, scanned: dict) -> Iterator[tuple[str, str]]:
    import duckdb

    con = duckdb.connect(path, read_only=True)
    try:
        tables = con.execute("SELECT table_schema, table_name FROM information_schema.tables "
                             "WHERE table_type = 'BASE TABLE' ORDER BY 1, 2").fetchall()
        for schema, name in tables:
            q = lambda s: '"' + s.replace('"', '""') + '"'  # noqa: E731 - names from the catalog, quoted
            reader = con.sql(f"SELECT * FROM {q(schema)}.{q(name)}").to_arrow_reader()
            scanned["duckdb_tables"] += 1
            hits = set()
            for batch in reader:
                hits |= set(_scan_table(batch, m))
            for label, col in sorted(hits):
                yield label, f"table {name}, column {col}"
    finally:
        con.close()
