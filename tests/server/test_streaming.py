"""Rows read as the server sends them (``store.streaming.streamed``), on the real backend: the
same rows as an ordinary read, in the caller's transaction, seen by the engine's statement
events, and a failure part-way is SQLAlchemy's error, after which the store goes on."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import String, case, cast, column, event, func, literal, select, table
from sqlalchemy.exc import DBAPIError

from catalog_nb.server.store import Store
from catalog_nb.server.store.streaming import streamed


def _series(n: int) -> Any:
    """The numbers 0 to n - 1, made by the database in order."""
    start = select(literal(0).label("x")).cte("series", recursive=True)
    return start.union_all(select(start.c.x + 1).where(start.c.x < n - 1))


def test_streamed_rows_are_the_ordinary_rows_in_the_same_transaction(store: Store) -> None:
    seen: list[str] = []

    def record(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        seen.append(statement)

    held = table("held", column("x"))
    event.listen(store.engine, "before_cursor_execute", record)
    try:
        with store.write() as conn:
            conn.exec_driver_sql("CREATE TEMPORARY TABLE held (x INTEGER)")
            conn.exec_driver_sql("INSERT INTO held (x) VALUES (1), (2)")  # not committed
            seen.clear()
            rows = _series(2500)
            counted = select(func.count()).select_from(held).scalar_subquery()
            statement = (select(rows.c.x, literal("n") + cast(rows.c.x, String), rows.c.x / 2.0,
                                counted).order_by(rows.c.x))
            got = list(streamed(conn, statement, chunk=300))
            assert got == [tuple(r) for r in conn.execute(statement)]
            conn.exec_driver_sql("DROP TABLE held")
    finally:
        event.remove(store.engine, "before_cursor_execute", record)
    assert len(got) == 2500 and got[7] == (7, "n7", 3.5, 2)
    assert len([s for s in seen if "series" in s]) == 2, seen


def test_a_failure_part_way_is_sqlalchemys_error_and_the_store_goes_on(store: Store) -> None:
    rows = _series(3000)
    postgres = store.dialect == "postgresql"
    # Row 2000 fails: a division by zero on PostgreSQL, malformed JSON on SQLite (which
    # divides by zero into NULL).
    failing = (1 / (rows.c.x - 2000) if postgres else
               func.json_extract(case((rows.c.x == 2000, "not json"), else_="{}"), "$"))
    read: list[tuple[Any, ...]] = []
    with pytest.raises(DBAPIError), store.read() as conn:
        for row in streamed(conn, select(rows.c.x, failing), chunk=100):
            read.append(row)
    assert 0 < len(read) <= 2000  # the rows before the failing one came first
    with store.read() as conn:
        small = _series(3)
        assert list(streamed(conn, select(small.c.x))) == [(0,), (1,), (2,)]
