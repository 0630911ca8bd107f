"""Browsing and profiling SQL databases: SQLite with an attached schema, PostgreSQL when
``CATALOG_TEST_PG_URL`` names a server (a fresh database is created and dropped)."""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Iterator
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import (
    Boolean,
    Column,
    Date,
    DateTime,
    ForeignKey,
    Integer,
    MetaData,
    Numeric,
    String,
    Table,
    Text,
    create_engine,
    event,
    text,
)
from sqlalchemy.engine import Engine

from catalog_nb.server.profiling.model import DataType, ProfilingError
from catalog_nb.server.profiling.sql import browse_sql, profile_table
from tests.conftest import new_pg_database

PG_URL = os.environ.get("CATALOG_TEST_PG_URL")


@dataclass
class Database:
    engine: Engine
    people: str  # schema of customers, orders and the view
    other: str  # second schema: events and a table with an awkward name


def _populate(db: Database) -> None:
    meta = MetaData()
    customers = Table(
        "customers",
        meta,
        Column("id", Integer, primary_key=True),
        Column("email", String(200), nullable=False),
        Column("born", Date),
        Column("balance", Numeric(10, 2)),
        Column("vip", Boolean),
        schema=db.people,
    )
    orders = Table(
        "orders",
        meta,
        Column("id", Integer, primary_key=True),
        Column("customer_id", Integer, ForeignKey(customers.c.id), nullable=False),
        Column("total", Numeric(12, 2)),
        Column("placed_at", DateTime),
        schema=db.people,
    )
    events = Table("events", meta, Column("id", Integer), Column("kind", Text), schema=db.other)
    odd = Table(
        "Order Lines", meta, Column("select", Integer), Column("from", Text), schema=db.other
    )
    meta.create_all(db.engine)
    with db.engine.begin() as conn:
        conn.execute(
            customers.insert(),
            [
                {"id": 1, "email": "ann@example.com", "born": dt.date(1990, 1, 2),
                 "balance": Decimal("10.50"), "vip": True},
                {"id": 2, "email": "bob@example.org", "born": None,
                 "balance": Decimal("20.00"), "vip": False},
                {"id": 3, "email": "cid@example.com", "born": dt.date(1985, 5, 5),
                 "balance": None, "vip": None},
                {"id": 4, "email": "dee@example.com", "born": dt.date(2001, 12, 31),
                 "balance": Decimal("-5.25"), "vip": False},
            ],
        )  # fmt: skip
        conn.execute(
            orders.insert(),
            [
                {"id": i, "customer_id": 1 + i % 3, "total": Decimal(i * 10),
                 "placed_at": dt.datetime(2024, 1, i, 9, 30)}
                for i in range(1, 8)
            ],
        )  # fmt: skip
        conn.execute(events.insert(), [{"id": i, "kind": "click"} for i in range(3)])
        conn.execute(odd.insert(), [{"select": 1, "from": "x"}])
        view = f"{db.people}.big_orders" if db.engine.dialect.name != "sqlite" else "big_orders"
        conn.execute(
            text(f"CREATE VIEW {view} AS SELECT id, total FROM {db.people}.orders WHERE total > 30")
        )
        if db.engine.dialect.name == "postgresql":
            conn.execute(text(f"CREATE MATERIALIZED VIEW {db.people}.totals AS SELECT 1 AS n"))


@pytest.fixture(
    params=[pytest.param("sqlite", marks=pytest.mark.store_neutral),
            *([pytest.param("postgresql", marks=pytest.mark.postgres)] if PG_URL else [])]
)
def database(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Database]:
    if request.param == "sqlite":
        engine = create_engine(f"sqlite:///{tmp_path / 'main.db'}")
        archive = tmp_path / "archive.db"

        @event.listens_for(engine, "connect")
        def attach(dbapi_connection: Any, _record: Any) -> None:
            dbapi_connection.execute(f"ATTACH DATABASE '{archive}' AS archive")

        db = Database(engine, "main", "archive")
        _populate(db)
        yield db
        engine.dispose()
        return
    url, drop = new_pg_database(request.node.nodeid, prefix="profiling")
    engine = create_engine(url)
    with engine.begin() as conn:
        conn.execute(text("CREATE SCHEMA crm"))
        conn.execute(text("CREATE SCHEMA archive"))
    db = Database(engine, "crm", "archive")
    _populate(db)
    yield db
    engine.dispose()
    drop()


def test_browse_lists_tables_and_views_of_every_schema(database: Database) -> None:
    found = {r.path: r for r in browse_sql(database.engine)}
    people, other = database.people, database.other
    materialized = {f"{people}.totals"} if database.engine.dialect.name == "postgresql" else set()
    assert set(found) == {
        f"{people}.customers",
        f"{people}.orders",
        f"{people}.big_orders",
        f"{other}.events",
        f"{other}.Order Lines",
        *materialized,
    }
    for path in materialized:
        assert found[path].resource_type == "resource_type_view"
        assert profile_table(database.engine, people, "totals").row_count == 1
    customers = found[f"{people}.customers"]
    assert customers.resource_type == "resource_type_table" and customers.row_count is None
    assert [(f.name, f.data_type, f.nullable) for f in customers.fields] == [
        ("id", DataType.LONG, False),
        ("email", DataType.STRING, False),
        ("born", DataType.DATE, True),
        ("balance", DataType.DOUBLE, True),
        ("vip", DataType.BOOLEAN, True),
    ]
    assert customers.extra["primaryKey"] == ["id"]
    assert customers.extra["dataSchemaName"] == people and customers.extra["tableType"] == "TABLE"
    orders = found[f"{people}.orders"]
    assert orders.extra["foreignKeys"] == [
        {
            "columns": ["customer_id"],
            "referredSchema": people,
            "referredTable": "customers",
            "referredColumns": ["id"],
        }
    ]
    assert orders.field("placed_at").data_type is DataType.TIMESTAMP
    view = found[f"{people}.big_orders"]
    assert view.resource_type == "resource_type_view" and view.extra["tableType"] == "VIEW"
    assert "total > 30" in view.extra["viewDefinition"].replace("(", "").replace(")", "")


def test_profile_table_counts_exactly_and_profiles_values(database: Database) -> None:
    profile = profile_table(database.engine, database.people, "customers")
    assert profile.state == "OK", profile.error_msg
    assert profile.row_count == 4 and profile.field_count == 5
    balance = profile.field("balance").properties
    assert (balance["min"], balance["max"], balance["nullCount"]) == (-5.25, 20.0, 1)
    assert balance["mean"] == pytest.approx(25.25 / 3)
    email = profile.field("email")
    assert email.properties["distinctCount"] == 4
    assert email.properties["patterns"][0]["pattern"] == "aaa@aaaaaaa.aaa"
    assert email.sketch is not None and "ann@example.com" in email.sketch.sample
    born = profile.field("born").properties
    assert (born["min"], born["max"]) == ("1985-05-05", "2001-12-31")
    assert profile.field("vip").properties["mostFrequent"][0] == {"value": False, "count": 2}


def test_profile_table_samples_large_tables(database: Database) -> None:
    seen: list[int] = []
    profile = profile_table(database.engine, database.people, "orders", sample_rows=3,
                            on_read=seen.append)
    assert profile.row_count == 7
    props = profile.field("id").properties
    assert props["sampled"] is True and props["sampleSize"] == 3
    # counted by the database over every row, not over the sample
    assert (props["valueCount"], props["nullCount"], props["density"]) == (7, 0, 1.0)
    assert (props["min"], props["max"], props["mean"], props["distinctCount"]) == (1, 7, 4.0, 7)
    assert props["distinctCountApproximate"] is False
    placed = profile.field("placed_at")
    assert placed.data_type is DataType.TIMESTAMP
    assert (placed.properties["min"], placed.properties["max"]) == (
        "2024-01-01T09:30:00", "2024-01-07T09:30:00")
    total = profile.field("total").properties
    assert (total["min"], total["max"], total["mean"]) == (10.0, 70.0, 40.0)
    assert profile.extra["sampleMethod"] in {"rowid", "bernoulli"}
    assert seen == sorted(seen) and seen[-1] == 7


def test_views_and_awkward_identifiers(database: Database) -> None:
    view = profile_table(database.engine, database.people, "big_orders")
    assert view.state == "OK" and view.row_count == 4
    assert view.resource_type == "resource_type_view"
    odd = profile_table(database.engine, database.other, "Order Lines")
    assert odd.state == "OK", odd.error_msg
    assert odd.row_count == 1 and [f.name for f in odd.fields] == ["select", "from"]


def test_a_missing_table_is_an_error(database: Database) -> None:
    profile = profile_table(database.engine, database.people, "no_such_table")
    assert profile.state == "ERROR" and "no longer exists" in (profile.error_msg or "")


def test_connection_failure_names_the_url_without_the_password() -> None:
    with pytest.raises(ProfilingError) as caught:
        browse_sql("postgresql+psycopg://reader:s3cret-pw@127.0.0.1:1/catalog")
    message = str(caught.value)
    assert "s3cret-pw" not in message and "reader:***@127.0.0.1:1/catalog" in message
    with pytest.raises(ProfilingError, match="Not a usable database URL"):
        browse_sql("not a url")
    with pytest.raises(ProfilingError):
        profile_table("postgresql+psycopg://reader:s3cret-pw@127.0.0.1:1/x", "public", "t")
