"""SQL statistics computed by the database and samples drawn by it (``profiling.sql_stats``), on
SQLite and, when ``CATALOG_TEST_PG_URL`` names a server, on a fresh PostgreSQL database."""

from __future__ import annotations

import datetime as dt
import os
import sqlite3
import warnings
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from sqlalchemy import (
    Boolean,
    Column,
    Date,
    DateTime,
    Float,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    create_engine,
    text,
)
from sqlalchemy.engine import Engine
from sqlalchemy.exc import SAWarning

from catalog_nb.server.profiling.model import ResourceProfile
from catalog_nb.server.profiling.sql import estimate_rows, profile_table
from catalog_nb.server.profiling.sql_stats import draw_ids, duj1
from tests.conftest import new_pg_database

PG_URL = os.environ.get("CATALOG_TEST_PG_URL")
ROWS = 1000
SAMPLE = 50
EARLY = 100  # the first rows differ from the rest: a first-n "sample" would see only them
LONG_TEXT = "z" * 300


def _row(i: int) -> dict[str, Any]:
    return {
        "id": i,
        "phase": "early" if i <= EARLY else "late",
        "amount": None if i % 7 == 0 else i * 1.5,
        "label": LONG_TEXT if i == 500 else f"L{i % 50:02d}",
        "happened": None if i % 5 == 0 else dt.date(2020, 1, 1) + dt.timedelta(days=i),
        "at": dt.datetime(2024, 1, 1, 8) + dt.timedelta(minutes=i),
        "flag": None if i % 4 == 0 else i % 3 == 0,
    }


ROWS_DATA = [_row(i) for i in range(1, ROWS + 1)]


def _events(meta: MetaData, schema: str | None) -> Table:
    return Table(
        "events", meta,
        Column("id", Integer, primary_key=True),
        Column("phase", String(10), nullable=False),
        Column("amount", Float),
        Column("label", Text),
        Column("happened", Date),
        Column("at", DateTime),
        Column("flag", Boolean),
        schema=schema,
    )  # fmt: skip


@pytest.fixture(
    params=[pytest.param("sqlite", marks=pytest.mark.store_neutral),
            *([pytest.param("postgresql", marks=pytest.mark.postgres)] if PG_URL else [])]
)
def engine(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Engine]:
    """A database holding ``events`` (ROWS rows) in its default schema."""
    if request.param == "sqlite":
        made = create_engine(f"sqlite:///{tmp_path / 'main.db'}")
        drop = None
    else:
        url, drop = new_pg_database(request.node.nodeid, prefix="pushdown")
        made = create_engine(url)
    meta = MetaData()
    events = _events(meta, None)
    meta.create_all(made)
    with made.begin() as conn:
        conn.execute(events.insert(), ROWS_DATA)
    yield made
    made.dispose()
    if drop is not None:
        drop()


def _schema(engine: Engine) -> str:
    return "main" if engine.dialect.name == "sqlite" else "public"


def _profile(engine: Engine, name: str = "events", **options: Any) -> ResourceProfile:
    profile = profile_table(engine, _schema(engine), name, **{"sample_rows": SAMPLE, **options})
    assert profile.state == "OK", profile.error_msg
    return profile


def test_exact_statistics_of_a_table_larger_than_the_sample(engine: Engine) -> None:
    profile = _profile(engine)
    assert profile.row_count == ROWS
    props = {f.name: f.properties for f in profile.fields}
    for name, values in props.items():
        assert values["sampled"] is True and values["sampleSize"] == SAMPLE, name
        present = [r[name] for r in ROWS_DATA if r[name] is not None]
        assert values["valueCount"] == len(present), name
        assert values["nullCount"] == ROWS - len(present), name
        assert values["density"] == pytest.approx(len(present) / ROWS), name
        assert values["distinctCount"] == len(set(present)), name
        assert values["distinctCountApproximate"] is False, name
    amounts = [r["amount"] for r in ROWS_DATA if r["amount"] is not None]
    assert (props["amount"]["min"], props["amount"]["max"]) == (1.5, 1500.0)
    assert props["amount"]["mean"] == pytest.approx(sum(amounts) / len(amounts))
    assert (props["id"]["min"], props["id"]["max"], props["id"]["mean"]) == (1, ROWS, 500.5)
    assert (props["phase"]["min"], props["phase"]["max"]) == ("early", "late")
    label = props["label"]
    assert (label["min"], label["max"]) == ("L00", "z" * 100)  # cut, as for files
    assert (label["minLength"], label["maxLength"]) == (3, 300)
    days = [r["happened"] for r in ROWS_DATA if r["happened"] is not None]
    assert (props["happened"]["min"], props["happened"]["max"]) == (min(days).isoformat(),
                                                                    max(days).isoformat())
    times = [r["at"] for r in ROWS_DATA]
    assert (props["at"]["min"], props["at"]["max"]) == (min(times).isoformat(),
                                                        max(times).isoformat())
    assert profile.extra["sampleMethod"] == (
        "rowid" if engine.dialect.name == "sqlite" else "bernoulli")


def test_the_sample_is_random_not_the_first_rows(engine: Engine) -> None:
    profile = _profile(engine)
    frequent = {v["value"]: v["count"] for v in profile.field("phase").properties["mostFrequent"]}
    # one row in ten is early: a first-50-rows sample would hold nothing else
    assert frequent.get("late", 0) >= SAMPLE * 0.7, frequent
    sketch = profile.field("id").sketch
    assert sketch is not None
    assert max(int(v) for v in sketch.sample) > 3 * SAMPLE


def test_the_same_table_gives_the_same_sample(engine: Engine) -> None:
    first, second = _profile(engine), _profile(engine)
    assert [f.to_dict() for f in first.fields] == [f.to_dict() for f in second.fields]
    assert first.field("label").properties["mostFrequent"] == \
        second.field("label").properties["mostFrequent"]


def test_distinct_counts_above_the_exact_limit_are_estimated(engine: Engine) -> None:
    profile = _profile(engine, exact_distinct_rows=ROWS - 1)
    unique = profile.field("id").properties
    assert unique["distinctCountApproximate"] is True
    assert unique["distinctCount"] == ROWS  # every sampled value once: as many as values
    phase = profile.field("phase").properties
    assert (phase["distinctCount"], phase["distinctCountApproximate"]) == (2, True)
    labels = profile.field("label").properties["distinctCount"]
    assert SAMPLE * 0.5 <= labels <= ROWS  # 51 in truth; an estimate from 50 rows
    # exact statistics stay exact
    assert (unique["valueCount"], unique["min"], unique["max"]) == (ROWS, 1, ROWS)


def test_progress_counts_rows_up_to_the_row_count(engine: Engine) -> None:
    seen: list[int] = []
    _profile(engine, on_read=seen.append)
    assert seen and seen == sorted(set(seen)) and seen[-1] == ROWS
    small: list[int] = []
    _profile(engine, sample_rows=ROWS * 2, chunk_rows=300, on_read=small.append)
    assert small == [300, 600, 900, ROWS]


def test_a_table_within_the_sample_is_read_whole(engine: Engine) -> None:
    profile = _profile(engine, sample_rows=ROWS)
    props = profile.field("phase").properties
    assert props["sampled"] is False and props["sampleSize"] == ROWS
    assert {v["value"]: v["count"] for v in props["mostFrequent"]} == {
        "late": ROWS - EARLY, "early": EARLY}
    assert "sampleMethod" not in profile.extra


def test_views_take_their_first_rows_with_exact_counts(engine: Engine) -> None:
    with engine.begin() as conn:
        conn.execute(text("CREATE VIEW late_events AS SELECT id, phase, amount FROM events "
                          "WHERE phase = 'late'"))
    profile = _profile(engine, "late_events")
    assert profile.row_count == ROWS - EARLY and profile.extra["sampleMethod"] == "first rows"
    amount = profile.field("amount").properties
    late = [r["amount"] for r in ROWS_DATA if r["phase"] == "late" and r["amount"] is not None]
    assert (amount["valueCount"], amount["max"]) == (len(late), max(late))
    assert amount["sampleSize"] == SAMPLE


def test_estimate_rows(engine: Engine) -> None:
    schema = _schema(engine)
    with engine.begin() as conn:
        conn.execute(text("CREATE VIEW few AS SELECT id FROM events WHERE id < 3"))
    assert estimate_rows(engine, schema, "few") is None
    assert estimate_rows(engine, schema, "no_such_table") is None
    if engine.dialect.name == "postgresql":
        with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
            conn.execute(text("ANALYZE events"))
    assert estimate_rows(engine, schema, "events") == ROWS


# -- SQLite specifics ----------------------------------------------------------------------------


def _sqlite(tmp_path: Path, statements: list[str]) -> Engine:
    path = tmp_path / "odd.db"
    with sqlite3.connect(path) as raw:
        raw.create_collation("backwards", lambda a, b: (a < b) - (a > b))
        for statement in statements:
            raw.execute(statement)
    return create_engine(f"sqlite:///{path}")


def test_sqlite_values_and_collations_the_database_cannot_aggregate(tmp_path: Path) -> None:
    engine = _sqlite(tmp_path, [
        "CREATE TABLE odd (id INTEGER PRIMARY KEY, n INTEGER, blob BLOB, "
        "name TEXT COLLATE backwards, doc JSON)",
        "INSERT INTO odd (n, blob, name, doc) WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL "
        "SELECT i + 1 FROM k WHERE i < 400) SELECT CASE WHEN i = 7 THEN 'many' ELSE i END, "
        "CASE WHEN i % 2 THEN randomblob(8) END, 'name' || (i % 30), "
        "json_object('i', i) FROM k",
    ])  # fmt: skip
    try:
        # the reading connection has no "backwards" collation: COUNT(DISTINCT name) fails
        profile = profile_table(engine, "main", "odd", sample_rows=40)
    finally:
        engine.dispose()
    assert profile.state == "OK", profile.error_msg
    assert profile.row_count == 400
    name = profile.field("name").properties
    assert (name["valueCount"], name["min"], name["max"]) == (400, "name0", "name9")
    assert name["distinctCountApproximate"] is True  # estimated from the sample instead
    blob = profile.field("blob").properties
    assert (blob["valueCount"], blob["nullCount"]) == (200, 200)
    n = profile.field("n").properties
    assert n["valueCount"] == 400 and n["distinctCount"] == 400
    # 'many' in an INTEGER column: its range is not the database's text-over-numbers maximum
    assert n["max"] != "many"
    assert profile.field("doc").properties["valueCount"] == 400
    others = profile.field("id").properties
    assert (others["min"], others["max"], others["distinctCount"]) == (1, 400, 400)


def test_sqlite_without_rowid_and_sparse_rowids(tmp_path: Path) -> None:
    engine = _sqlite(tmp_path, [
        "CREATE TABLE keyed (code TEXT PRIMARY KEY, n INTEGER) WITHOUT ROWID",
        "INSERT INTO keyed WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k "
        "WHERE i < 300) SELECT printf('c%04d', i), i FROM k",
        "CREATE TABLE sparse (id INTEGER PRIMARY KEY, n INTEGER)",
        "INSERT INTO sparse WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k "
        "WHERE i < 5000) SELECT i * 10, i FROM k WHERE i % 10 = 0",
    ])  # fmt: skip
    try:
        keyed = profile_table(engine, "main", "keyed", sample_rows=40)
        sparse = profile_table(engine, "main", "sparse", sample_rows=40)
        assert estimate_rows(engine, "main", "keyed") is None
        assert estimate_rows(engine, "main", "sparse") == 50_000
    finally:
        engine.dispose()
    assert keyed.extra["sampleMethod"] == "first rows"
    assert keyed.field("n").properties["max"] == 300
    assert keyed.field("n").properties["sampleSize"] == 40
    assert sparse.extra["sampleMethod"] == "rowid" and sparse.row_count == 500
    props = sparse.field("n").properties
    assert props["sampled"] is True and 0 < props["sampleSize"] <= 40
    assert (props["min"], props["max"], props["valueCount"]) == (10, 5000, 500)


def test_drawn_rowids_are_distinct_in_range_and_deterministic() -> None:
    dense = draw_ids(1, 10_000_000, 10_000_000, 1000)
    assert len(dense) == len(set(dense.tolist())) >= 1100
    assert dense.min() >= 1 and dense.max() <= 10_000_000
    assert np.array_equal(dense, draw_ids(1, 10_000_000, 10_000_000, 1000))
    small = draw_ids(5, 20, 16, 100)
    assert sorted(small.tolist()) == list(range(5, 21))
    capped = draw_ids(0, 2**62, 1000, 10)
    assert len(capped) <= 200


def test_duj1_estimates() -> None:
    assert duj1(100, 100, 100, 10_000) == 10_000  # all distinct: a key
    assert duj1(100, 5, 0, 10_000) == 5  # every value seen often: all of them seen
    assert duj1(100, 60, 30, 10_000) == 85  # 100*60 / (100 - 30 + 30*100/10000)
    assert duj1(100, 60, 30, 100) == 60  # the sample is the table
    assert duj1(0, 0, 0, 10) == 0


# -- PostgreSQL specifics ------------------------------------------------------------------------


@pytest.mark.postgres
@pytest.mark.skipif(not PG_URL, reason="needs CATALOG_TEST_PG_URL")
def test_postgresql_types_it_cannot_aggregate(request: pytest.FixtureRequest) -> None:
    url, drop = new_pg_database(request.node.nodeid, prefix="pushdown")
    engine = create_engine(url)
    try:
        with engine.begin() as conn:
            conn.execute(text(
                "CREATE TABLE shapes AS SELECT i AS id, point(i, i % 7) AS spot, "
                "xmlelement(name v, i % 11) AS doc, json_build_object('i', i) AS payload, "
                "ARRAY[i, i + 1] AS pair, i % 13 AS bucket "
                "FROM generate_series(1, 600) AS g(i)"))
            conn.execute(text("UPDATE shapes SET spot = NULL WHERE id % 3 = 0"))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SAWarning)  # "did not recognize type point"
            profile = profile_table(engine, "public", "shapes", sample_rows=60)
    finally:
        engine.dispose()
        drop()
    assert profile.state == "OK", profile.error_msg
    props = {f.name: f.properties for f in profile.fields}
    assert (props["spot"]["valueCount"], props["spot"]["nullCount"]) == (400, 200)
    assert props["doc"]["valueCount"] == 600 and props["payload"]["valueCount"] == 600
    assert props["pair"]["valueCount"] == 600
    # no equality for point and xml: their distinct counts come from the sample
    assert props["spot"]["distinctCountApproximate"] is True
    assert props["doc"]["distinctCountApproximate"] is True
    bucket = props["bucket"]
    assert (bucket["min"], bucket["max"], bucket["distinctCount"]) == (0, 12, 13)
    assert bucket["distinctCountApproximate"] is False
    assert Counter(v["count"] for v in bucket["mostFrequent"]).total() <= 10
