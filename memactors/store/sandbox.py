"""Ad-hoc SQL over the ledger, safely: one SELECT, on a throwaway in-memory DuckDB that can
touch no file, load no extension and change no setting, over copies of the tables the caller
may read (never ``keys``, ``idempotency`` or ``meta``).

The ledger file itself is never queried by user SQL: a statement that writes, reads host files
(``read_text``), attaches another database or runs a second statement is refused before it
runs, and would find nothing to harm if it ran. What one query may take is bounded too: one
thread, ``MEMORY_LIMIT`` of DuckDB's memory, ``MAX_ROWS`` rows, ``MAX_BYTES`` of result and
``TIMEOUT_S`` of time.
"""

from __future__ import annotations

import threading

import duckdb
import pyarrow as pa

from ..core import validate as V
from ..core.errors import InvalidRecord

MAX_ROWS = 100_000
MAX_QUERY_CHARS = 1_000_000  # of the SQL text itself
MAX_BYTES = 256 * 2**20  # of strings and blobs in a result: repeat('x', 10^7) over many rows is not one
TIMEOUT_S = 30.0
MEMORY_LIMIT = "1GB"
_CHUNK = 1024  # rows fetched at a time, so a result too large is refused before it is all in memory
_CONFIG = {
    "enable_external_access": False,  # no files, no ATTACH, no COPY, no extension install
    # DuckDB always lets a query read its temp directory (default: .tmp in the working directory,
    # readable with read_csv/glob even with external access off): none, so nothing spills either.
    "temp_directory": "",
    "memory_limit": MEMORY_LIMIT,
    "threads": 1,  # a 30 s cross join takes one core, not every core the writes need
    "autoload_known_extensions": False,
    "autoinstall_known_extensions": False,
    "lock_configuration": True,  # and no SET can turn any of that back on
}


def check_select(query: object) -> str:
    """The query if it is exactly one SELECT statement, else InvalidRecord."""
    if not isinstance(query, str) or not query.strip():
        raise InvalidRecord("audit.sql takes one SELECT statement as a string")
    V.text(query, "audit.sql's query", MAX_QUERY_CHARS)  # a lone surrogate: DuckDB's parser raises TypeError
    try:
        stmts = duckdb.extract_statements(query)
    except duckdb.Error as exc:
        raise InvalidRecord(f"audit.sql: {_why(exc)}") from None
    if len(stmts) != 1:
        raise InvalidRecord(f"audit.sql takes exactly one statement, got {len(stmts)}")
    if stmts[0].type != duckdb.StatementType.SELECT:
        raise InvalidRecord(f"audit.sql runs SELECT statements only, not {stmts[0].type.name}")
    return query


def run_select(query: str, params: list | None, tables: dict[str, pa.Table], *, timeout_s: float = TIMEOUT_S,
               max_rows: int = MAX_ROWS, max_bytes: int = MAX_BYTES) -> list[tuple]:
    """Run one checked SELECT over ``tables`` in a fresh sandbox; at most ``max_rows`` rows,
    interrupted after ``timeout_s``; a result whose strings and blobs pass ``max_bytes`` is
    refused (InvalidRecord), not truncated."""
    check_select(query)
    if params is not None and not isinstance(params, (list, tuple)):
        raise InvalidRecord("audit.sql params must be a list")
    con = duckdb.connect(":memory:", config=_CONFIG)
    timer = threading.Timer(timeout_s, con.interrupt)
    try:
        for name, tbl in tables.items():
            con.register(name, tbl)
        timer.start()
        try:
            res = con.execute(query, list(params or []))
            rows: list[tuple] = []
            size = 0
            while len(rows) < max_rows:
                chunk = res.fetchmany(min(_CHUNK, max_rows - len(rows)))
                if not chunk:
                    break
                size += sum(map(_nbytes, chunk))
                if size > max_bytes:
                    raise InvalidRecord(f"audit.sql: the result holds more than {max_bytes // 2**20} MiB; select "
                                        "fewer rows or columns, or aggregate")
                rows.extend(chunk)
            return rows
        except duckdb.Error as exc:
            raise InvalidRecord(f"audit.sql: {_why(exc)}") from None
    finally:
        timer.cancel()
        con.close()


def _nbytes(value: object) -> int:
    """About what a fetched value holds: its length for text and bytes, nested values summed."""
    if isinstance(value, (str, bytes)):
        return len(value)
    if isinstance(value, (tuple, list)):
        return 8 + sum(map(_nbytes, value))
    if isinstance(value, dict):
        return 8 + sum(_nbytes(k) + _nbytes(v) for k, v in value.items())
    return 8


# What each DuckDB refusal means here. Its own text is withheld: it quotes the query back (a
# token near a syntax error, an unknown name), and a query may hold a secret.
_MEANING = {
    "ParserException": "the query does not parse",
    "CatalogException": "it names a table or function that is not here (tables: events, recalls, citations)",
    "BinderException": "it names a column that is not in its table, or uses one wrongly",
    "InterruptException": f"it ran longer than {TIMEOUT_S:.0f} s",
    "OutOfMemoryException": f"it needs more than the {MEMORY_LIMIT} of memory a query may use",
}


def _why(exc: BaseException) -> str:
    kind = type(exc).__name__
    return f"{kind}: {_MEANING.get(kind, 'DuckDB refused it')}"
