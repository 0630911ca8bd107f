"""Many rows into one table at once: the INSERT of an executemany on SQLite, ``COPY`` on
PostgreSQL.

psycopg runs an executemany as one INSERT per row (pipelined): for the hundreds of thousands of
rows of a large profiling job (or the benchmarks' bulk fixture) that is a statement executed per
row and Python work per parameter, most of the time the job spends writing. ``COPY ... FROM
STDIN`` takes the same rows as one stream, in the caller's transaction (the SQLAlchemy
connection's own psycopg connection).

**The same rows either way.** Each value goes through the bind processor of its column's type,
as SQLAlchemy's INSERT would send it (a JSON column's value through the dialect's serializer,
Python ``None`` becoming JSON ``null`` unless the column says ``none_as_null``), and psycopg
writes it in COPY's text form with the dumper it would bind it with; a column a row leaves out
gets its scalar default, as the INSERT does, or the server's. Rows an INSERT would treat
differently (keys differing between rows, a default that is a function or SQL) are left to the
INSERT. Values are Python values, never SQL expressions (psycopg refuses those).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from operator import itemgetter
from typing import Any

from sqlalchemy import Column, Connection, Table, insert
from sqlalchemy.exc import DBAPIError

from catalog_nb.server.store.changes import note_change

#: From this many rows on, PostgreSQL gets them by COPY: below, one INSERT is one round trip
#: where COPY takes two (the statement, then the data).
COPY_FROM = 32


def insert_rows(conn: Connection, table: Table, rows: Sequence[Mapping[str, Any]]) -> None:
    """``conn.execute(insert(table), rows)``, by COPY on PostgreSQL when ``rows`` are many."""
    if not rows:
        return
    if conn.dialect.name != "postgresql" or len(rows) < COPY_FROM or not _copy(conn, table, rows):
        conn.execute(insert(table), list(rows))


def _copy(conn: Connection, table: Table, rows: Sequence[Mapping[str, Any]]) -> bool:
    """COPY ``rows`` into ``table``; False (nothing written) when the INSERT must take them."""
    given = list(rows[0])
    names = set(given)
    if any(name not in table.c for name in given):
        return False  # the INSERT's error is the one to raise
    defaults: dict[str, Any] = {}
    for column in table.c:
        if column.name in names or column.default is None:
            continue
        if not column.default.is_scalar:
            return False
        defaults[column.name] = column.default.arg  # type: ignore[attr-defined]
    if any(row.keys() != names for row in rows):
        return False
    processed = [(at, process) for at, name in enumerate(given)
                 if (process := _processor(conn, table.c[name])) is not None]
    fixed = [_processor(conn, table.c[name]) for name in defaults]
    tail = [value if process is None else process(value)
            for value, process in zip(defaults.values(), fixed, strict=True)]
    columns = [*given, *defaults]
    picked = itemgetter(*given)
    preparer = conn.dialect.identifier_preparer
    listed = ", ".join(preparer.quote(name) for name in columns)
    statement = f"COPY {preparer.format_table(table)} ({listed}) FROM STDIN"
    # The store counts the catalog's changes from the statements SQLAlchemy runs (a COPY
    # through the driver is not one of them).
    note_change(conn, table.name)
    driver = conn.connection.driver_connection
    assert driver is not None
    failure = conn.dialect.loaded_dbapi.Error
    try:
        with driver.cursor() as cursor, cursor.copy(statement) as copy:
            for row in rows:
                values = list(picked(row)) if len(given) > 1 else [picked(row)]
                for at, process in processed:
                    values[at] = process(values[at])
                copy.write_row(values + tail if tail else values)
    except failure as exc:
        # Wrapped as SQLAlchemy wraps a statement's error: the store tells a busy database
        # (a lock timeout: 503, try again) and callers a unique violation by these classes.
        raise DBAPIError.instance(statement, None, exc, failure, hide_parameters=True,
                                  dialect=conn.dialect) from exc
    return True


def _processor(conn: Connection, column: Column[Any]) -> Callable[[Any], Any] | None:
    return column.type._cached_bind_processor(conn.dialect)
