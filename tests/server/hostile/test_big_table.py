"""Hostile input to SQL profiling: a table of 10 million rows, built inside the database.

Its statistics must be exact without reading it into Python: every row Python fetches is counted
by the database driver's cursor (a cursor class of our own that counts what its fetch methods
return), and must not exceed the sample's rows plus the few rows of reflection and aggregate
statements.
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from sqlalchemy import create_engine, event, text
from sqlalchemy.engine import Engine

from catalog_nb.server.profiling.model import ResourceProfile
from catalog_nb.server.profiling.sql import estimate_rows, profile_table
from catalog_nb.server.profiling.stats import DEFAULT_SAMPLE_ROWS
from tests.conftest import new_pg_database

PG_URL = os.environ.get("CATALOG_TEST_PG_URL")
ROWS = 10_000_000
#: Rows of the statements around the sample: reflection of the table (the system catalogs),
#: COUNT(*), the aggregate groups, the rowid range.
FEW = 500

pytestmark = pytest.mark.slow


class Fetched:
    """Rows handed to Python by the driver's cursors, all cursors together."""

    rows = 0

    @classmethod
    def add(cls, rows: Any) -> Any:
        cls.rows += len(rows)
        return rows


def _one(row: Any) -> Any:
    if row is not None:
        Fetched.rows += 1
    return row


class CountingSqliteCursor(sqlite3.Cursor):
    def fetchone(self) -> Any:
        return _one(super().fetchone())

    def fetchmany(self, size: int | None = None) -> list[Any]:
        return Fetched.add(super().fetchmany(self.arraysize if size is None else size))

    def fetchall(self) -> list[Any]:
        return Fetched.add(super().fetchall())

    def __next__(self) -> Any:
        return _one(super().__next__())


class CountingSqliteConnection(sqlite3.Connection):
    def cursor(self, factory: Any = CountingSqliteCursor) -> Any:
        return super().cursor(factory)


class _CountingPg:
    """What psycopg's client-side and server-side cursors return, counted (a mixin)."""

    def fetchone(self) -> Any:
        return _one(super().fetchone())  # type: ignore[misc]

    def fetchmany(self, size: int = 0) -> list[Any]:
        return Fetched.add(super().fetchmany(size))  # type: ignore[misc]

    def fetchall(self) -> list[Any]:
        return Fetched.add(super().fetchall())  # type: ignore[misc]

    def __next__(self) -> Any:
        return _one(super().__next__())  # type: ignore[misc]


class CountingPgCursor(_CountingPg, psycopg.Cursor[Any]):
    pass


class CountingPgServerCursor(_CountingPg, psycopg.ServerCursor[Any]):
    pass


def _build_sqlite(path: Path) -> None:
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA journal_mode = OFF")
        conn.execute("PRAGMA synchronous = OFF")
        conn.execute("CREATE TABLE big (id INTEGER PRIMARY KEY, grp INTEGER, amount REAL, "
                     "label TEXT, maybe INTEGER)")
        conn.execute(
            "INSERT INTO big WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n "
            f"WHERE i < {ROWS}) SELECT i, i % 1000, i * 0.5, 'L' || (i % 97), "
            "CASE WHEN i % 10 = 0 THEN NULL ELSE i END FROM n"
        )


@pytest.fixture(
    params=[pytest.param("sqlite", marks=pytest.mark.store_neutral),
            *([pytest.param("postgresql", marks=pytest.mark.postgres)] if PG_URL else [])]
)
def big(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Engine, str]]:
    """An engine whose cursors count the rows they fetch, on a database holding ``big``, and
    the schema of the table."""
    started = time.monotonic()
    if request.param == "sqlite":
        path = tmp_path / "big.db"
        _build_sqlite(path)
        engine = create_engine("sqlite://", creator=lambda: sqlite3.connect(
            path, factory=CountingSqliteConnection, check_same_thread=False))
        schema, drop = "main", None
    else:
        url, drop = new_pg_database(request.node.nodeid, prefix="bigtable")
        builder = create_engine(url)
        with builder.begin() as conn:
            conn.execute(text(
                "CREATE UNLOGGED TABLE big AS SELECT i AS id, i % 1000 AS grp, "
                "i * 0.5::float8 AS amount, 'L' || (i % 97) AS label, "
                "CASE WHEN i % 10 = 0 THEN NULL ELSE i END AS maybe "
                f"FROM generate_series(1, {ROWS}) AS g(i)"))
        builder.dispose()
        engine = create_engine(url, connect_args={"cursor_factory": CountingPgCursor})

        @event.listens_for(engine, "connect")
        def _count(dbapi_connection: Any, _record: Any) -> None:
            dbapi_connection.server_cursor_factory = CountingPgServerCursor

        schema = "public"
    print(f"\n{request.param}: built {ROWS:,} rows in {time.monotonic() - started:.1f} s")
    yield engine, schema
    engine.dispose()
    if drop is not None:
        drop()


def test_a_table_of_ten_million_rows_is_profiled_in_the_database(
    big: tuple[Engine, str],
) -> None:
    engine, schema = big
    estimate = estimate_rows(engine, schema, "big")
    assert estimate in (ROWS, None)  # PostgreSQL: not analyzed yet
    seen: list[int] = []
    Fetched.rows = 0
    started = time.monotonic()
    profile: ResourceProfile = profile_table(engine, schema, "big", on_read=seen.append)
    took = time.monotonic() - started
    print(f"{engine.dialect.name}: profiled in {took:.1f} s, {Fetched.rows:,} rows fetched, "
          f"sample {profile.extra.get('sampleMethod')}")
    assert profile.state == "OK", profile.error_msg
    assert profile.row_count == ROWS
    assert 0 < Fetched.rows <= DEFAULT_SAMPLE_ROWS + FEW
    props = {f.name: f.properties for f in profile.fields}
    for values in props.values():
        assert values["sampled"] is True and values["sampleSize"] == DEFAULT_SAMPLE_ROWS
    assert (props["id"]["min"], props["id"]["max"], props["id"]["nullCount"]) == (1, ROWS, 0)
    assert props["id"]["mean"] == pytest.approx((ROWS + 1) / 2)
    maybe = props["maybe"]
    assert (maybe["nullCount"], maybe["valueCount"]) == (ROWS // 10, ROWS - ROWS // 10)
    assert maybe["density"] == pytest.approx(0.9)
    assert (maybe["min"], maybe["max"]) == (1, ROWS - 1)
    assert (props["amount"]["min"], props["amount"]["max"]) == (0.5, ROWS * 0.5)
    assert (props["grp"]["min"], props["grp"]["max"]) == (0, 999)
    label = props["label"]
    assert (label["min"], label["max"], label["minLength"], label["maxLength"]) == (
        "L0", "L96", 2, 3)
    # beyond the exact limit: estimated from the sample, and right for these shapes
    assert props["grp"]["distinctCount"] == 1000 and props["label"]["distinctCount"] == 97
    assert props["id"]["distinctCount"] == ROWS
    assert props["id"]["distinctCountApproximate"] is True
    assert seen == sorted(seen) and seen[-1] == ROWS
