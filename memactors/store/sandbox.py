"""Ad-hoc SQL over the ledger, safely: one SELECT, on a throwaway in-memory DuckDB that can
touch no file, load no extension and change no setting, over copies of the tables the caller
may read (never ``keys``, ``idempotency`` or ``meta``).

The ledger file itself is never queried by user SQL: a statement that writes, reads host files
(``read_text``), attaches another database or runs a second statement is refused before it
runs, and would find nothing to harm if it ran.
"""

from __future__ import annotations

import threading

import duckdb
import pyarrow as pa

from ..core.errors import InvalidRecord

MAX_ROWS = 100_000
TIMEOUT_S = 30.0
_CONFIG = {
    "enable_external_access": False,  # no files, no ATTACH, no COPY, no extension install
    "autoload_known_extensions": False,
    "autoinstall_known_extensions": False,
    "lock_configuration": True,  # and no SET can turn any of that back on
}


def check_select(query: object) -> str:
    """The query if it is exactly one SELECT statement, else InvalidRecord."""
    if not isinstance(query, str) or not query.strip():
        raise InvalidRecord("audit.sql takes one SELECT statement as a string")
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
               max_rows: int = MAX_ROWS) -> list[tuple]:
    """Run one checked SELECT over ``tables`` in a fresh sandbox; at most ``max_rows`` rows,
    interrupted after ``timeout_s``."""
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
            return con.execute(query, list(params or [])).fetchmany(max_rows)
        except duckdb.Error as exc:
            raise InvalidRecord(f"audit.sql: {_why(exc)}") from None
    finally:
        timer.cancel()
        con.close()


# What each DuckDB refusal means here. Its own text is withheld: it quotes the query back (a
# token near a syntax error, an unknown name), and a query may hold a secret.
_MEANING = {
    "ParserException": "the query does not parse",
    "CatalogException": "it names a table or function that is not here (tables: events, recalls, citations)",
    "BinderException": "it names a column that is not in its table, or uses one wrongly",
    "InterruptException": f"it ran longer than {TIMEOUT_S:.0f} s",
}


def _why(exc: BaseException) -> str:
    kind = type(exc).__name__
    return f"{kind}: {_MEANING.get(kind, 'DuckDB refused it')}"
