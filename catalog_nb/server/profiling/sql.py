"""Browsing and profiling SQL databases through SQLAlchemy.

Everything goes through ``sqlalchemy.inspect`` and reflected ``Table`` objects, so identifiers
are always quoted by the dialect and values always bound; no SQL text is ever assembled here.

* :func:`browse_sql`: every schema except the system ones, its tables and views, with columns
  (types mapped to :class:`DataType`), nullability, primary key, foreign keys and view
  definitions. Paths are ``schema.table``.
* :func:`profile_table`: an exact ``COUNT(*)``, then

  - a table or view of at most ``sample_rows`` rows is read whole, streamed in chunks: every
    statistic is exact;
  - a larger table or view on SQLite or PostgreSQL has its exact statistics computed by the
    database in a few aggregate statements (value and null counts, min/max, mean, text
    lengths, distinct counts up to ``exact_distinct_rows`` rows) and the sample-based ones
    (most frequent values, patterns, sketches, distinct estimates above that size) read from a
    random sample the database draws (the first rows of a view): see :mod:`.sql_stats`.
    ``extra["sampleMethod"]`` says how the sample was drawn;
  - a larger table or view of another database gets statistics over the first
    ``sample_rows`` rows it returns (``SELECT ... LIMIT n``).

  ``sampled`` and ``sampleSize`` say when the sample-based statistics saw only part of a table.
* :func:`estimate_rows`: a cheap guess of a table's rows from the database's own bookkeeping.

A database that cannot be reached raises :class:`ProfilingError` with a message that names the
URL without its password; a table that disappeared or cannot be read comes back as ERROR.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from itertools import chain
from pathlib import Path
from typing import Any

import pyarrow as pa
from sqlalchemy import MetaData, Select, Table, column, create_engine, func, inspect, select, types
from sqlalchemy import table as table_clause
from sqlalchemy.engine import Connection, Engine, Inspector, Row
from sqlalchemy.exc import (
    ArgumentError,
    DBAPIError,
    NoSuchModuleError,
    NoSuchTableError,
    SQLAlchemyError,
)

from catalog_nb.contract import ResourceType
from catalog_nb.server.profiling.inference import python_column
from catalog_nb.server.profiling.model import (
    DataType,
    FieldProfile,
    ProfilingError,
    ReadProgress,
    ResourceProfile,
)
from catalog_nb.server.profiling.sql_stats import (
    EXACT_DISTINCT_ROWS,
    PUSHDOWN_DIALECTS,
    ColumnStats,
    aggregate,
    apply_stats,
    estimate_distinct,
    first_rows,
    sample_batches,
)
from catalog_nb.server.profiling.stats import DEFAULT_SAMPLE_ROWS, TableProfiler

log = logging.getLogger(__name__)

_COMPOSITE = {DataType.BINARY, DataType.ARRAY, DataType.STRUCT}

DEFAULT_CHUNK_ROWS = 10_000
SYSTEM_SCHEMAS = {
    "information_schema", "pg_catalog", "pg_toast", "temp", "sys", "mysql",
    "performance_schema", "crdb_internal", "pg_extension",
}  # fmt: skip
_SQL_TYPES: list[tuple[type[Any], DataType]] = [
    (types.Boolean, DataType.BOOLEAN),
    (types.Integer, DataType.LONG),
    (types.Float, DataType.DOUBLE),
    (types.Numeric, DataType.DOUBLE),
    (types.DateTime, DataType.TIMESTAMP),
    (types.Date, DataType.DATE),
    (types.LargeBinary, DataType.BINARY),
    (types._Binary, DataType.BINARY),
    (types.ARRAY, DataType.ARRAY),
    (types.JSON, DataType.STRUCT),
]


def sql_data_type(sql_type: Any) -> DataType | None:
    """The catalog type of an SQLAlchemy column type (None when the database declares none).

    Integers -> LONG; NUMERIC with scale 0 -> LONG, other numerics and floats -> DOUBLE;
    DATE, TIMESTAMP/DATETIME, BOOLEAN as such; BLOB/BYTEA -> BINARY; ARRAY; JSON -> STRUCT;
    text, enums, UUIDs, times of day, intervals and anything else -> STRING.
    """
    if isinstance(sql_type, types.NullType):
        return None
    if isinstance(sql_type, types.Numeric) and not isinstance(sql_type, types.Float):
        return DataType.LONG if sql_type.scale == 0 else DataType.DOUBLE
    for sql_class, data_type in _SQL_TYPES:
        if isinstance(sql_type, sql_class):
            return data_type
    return DataType.STRING


def _safe_message(engine: Engine, exc: BaseException) -> str:
    url = engine.url.render_as_string(hide_password=True)
    reason = str(getattr(exc, "orig", None) or exc).strip().splitlines()[0] if str(exc) else ""
    password = engine.url.password
    if password:
        reason = reason.replace(str(password), "***")
    return f"Cannot read the database {url}: {reason}"


@contextmanager
def _connect(engine: Engine | str) -> Iterator[tuple[Engine, Connection]]:
    """A connection, with connection failures turned into ProfilingError."""
    try:
        owned = create_engine(engine) if isinstance(engine, str) else None
    except (ArgumentError, NoSuchModuleError, ValueError) as exc:
        raise ProfilingError(f"Not a usable database URL: {type(exc).__name__}") from None
    target = owned or engine
    assert isinstance(target, Engine)
    try:
        try:
            conn = target.connect()
        except (DBAPIError, SQLAlchemyError, OSError) as exc:
            raise ProfilingError(_safe_message(target, exc)) from None
        with conn:
            yield target, conn
    finally:
        if owned is not None:
            owned.dispose()


def _schemas(inspector: Inspector) -> list[str]:
    names = inspector.get_schema_names()
    return [
        s for s in names if s.lower() not in SYSTEM_SCHEMAS and not s.lower().startswith("pg_")
    ]


def _database_name(engine: Engine) -> str | None:
    database = engine.url.database
    if engine.dialect.name == "sqlite" and database:
        return Path(database).name
    return database


def _describe(
    engine: Engine, inspector: Inspector, schema: str, name: str, is_view: bool
) -> ResourceProfile:
    """The skeleton of one table or view: fields (no statistics), keys, view definition."""
    columns = inspector.get_columns(name, schema=schema)
    fields = [
        FieldProfile(
            str(c["name"]),
            sql_data_type(c["type"]) or DataType.STRING,
            bool(c.get("nullable", True)),
        )
        for c in columns
    ]
    extra: dict[str, Any] = {
        "databaseName": _database_name(engine),
        "dataSchemaName": schema,
        "tableName": name,
        "tableType": "VIEW" if is_view else "TABLE",
        "primaryKey": [],
        "foreignKeys": [],
    }
    if is_view:
        extra["viewDefinition"] = _optional(inspector.get_view_definition, name, schema=schema)
    else:
        pk = inspector.get_pk_constraint(name, schema=schema) or {}
        extra["primaryKey"] = list(pk.get("constrained_columns") or [])
        for item in fields:  # SQLite reports INTEGER PRIMARY KEY columns as nullable
            item.nullable = item.nullable and item.name not in extra["primaryKey"]
        extra["foreignKeys"] = [
            {
                "columns": list(fk["constrained_columns"]),
                "referredSchema": fk.get("referred_schema") or schema,
                "referredTable": fk["referred_table"],
                "referredColumns": list(fk["referred_columns"]),
            }
            for fk in inspector.get_foreign_keys(name, schema=schema)
        ]
    comment = _optional(inspector.get_table_comment, name, schema=schema)
    if isinstance(comment, dict) and comment.get("text"):
        extra["comment"] = comment["text"]
    return ResourceProfile(
        path=f"{schema}.{name}",
        name=name,
        resource_type=(ResourceType.VIEW if is_view else ResourceType.TABLE).value,
        field_count=len(fields),
        fields=fields,
        extra=extra,
    )


def _optional(method: Any, *args: Any, **kwargs: Any) -> Any:
    """Inspector calls some dialects do not support (comments on SQLite) give None."""
    try:
        return method(*args, **kwargs)
    except (NotImplementedError, SQLAlchemyError):
        return None


def _views(inspector: Inspector, schema: str) -> list[str]:
    """Views and materialized views (PostgreSQL keeps the latter apart)."""
    plain = _optional(inspector.get_view_names, schema=schema) or []
    materialized = _optional(inspector.get_materialized_view_names, schema=schema) or []
    return [*plain, *materialized]


def browse_sql(engine: Engine | str) -> list[ResourceProfile]:
    """Every table and view of every non-system schema, sorted by ``schema.name``.

    Raises ProfilingError when the database cannot be reached or read.
    """
    with _connect(engine) as (target, conn):
        try:
            inspector = inspect(conn)
            found = []
            for schema in _schemas(inspector):
                for table in inspector.get_table_names(schema=schema):
                    found.append(_describe(target, inspector, schema, table, is_view=False))
                for view in _views(inspector, schema):
                    found.append(_describe(target, inspector, schema, view, is_view=True))
        except SQLAlchemyError as exc:
            raise ProfilingError(_safe_message(target, exc)) from None
    return sorted(found, key=lambda r: r.path)


class _Progress:
    """Rows of a table accounted for so far, told to ``on_read`` only when the total grows."""

    def __init__(self, on_read: ReadProgress | None, total: int = 0) -> None:
        self.on_read = on_read
        self.total = total
        self.told = -1

    def report(self, rows: int) -> None:
        rows = min(rows, self.total)
        if self.on_read is not None and rows > self.told:
            self.told = rows
            self.on_read(rows)


def profile_table(
    engine: Engine | str,
    schema: str,
    name: str,
    sample_rows: int = DEFAULT_SAMPLE_ROWS,
    chunk_rows: int = DEFAULT_CHUNK_ROWS,
    *,
    on_read: ReadProgress | None = None,
    exact_distinct_rows: int = EXACT_DISTINCT_ROWS,
) -> ResourceProfile:
    """Profile one table or view: exact row count, statistics over at most ``sample_rows`` rows,
    and on SQLite and PostgreSQL exact counts, ranges and means computed by the database (see
    the module docstring).

    ``on_read`` hears the rows accounted for so far (cumulative, ending at the row count).
    ``exact_distinct_rows``: up to this many rows, distinct counts are exact. Raises
    ProfilingError when the database cannot be reached; a missing or unreadable table comes back
    with ``state`` ERROR.
    """
    with _connect(engine) as (target, conn):
        inspector = inspect(conn)
        is_view = name in _views(inspector, schema)
        try:
            profile = _describe(target, inspector, schema, name, is_view)
        except NoSuchTableError:
            return ResourceProfile(path=f"{schema}.{name}", name=name).fail(
                f"The table {schema}.{name} no longer exists."
            )
        except SQLAlchemyError as exc:
            raise ProfilingError(_safe_message(target, exc)) from None
        try:
            _profile_rows(conn, profile, schema, name, is_view,
                          _Limits(sample_rows, chunk_rows, exact_distinct_rows),
                          _Progress(on_read))
        except NoSuchTableError:
            profile.fail(f"The table {schema}.{name} no longer exists.")
        except SQLAlchemyError as exc:
            conn.rollback()
            profile.fail(_safe_message(target, exc))
    return profile


@dataclass(frozen=True)
class _Limits:
    sample_rows: int
    chunk_rows: int
    exact_distinct_rows: int


def _profile_rows(
    conn: Connection,
    profile: ResourceProfile,
    schema: str,
    name: str,
    is_view: bool,
    limits: _Limits,
    progress: _Progress,
) -> None:
    # resolve_fks=False: a foreign key's target may live in a schema we cannot read
    table = Table(name, MetaData(), schema=schema, autoload_with=conn, resolve_fks=False)
    declared = {f.name: (f.data_type, f.nullable) for f in profile.fields}
    kinds = {c.name: sql_data_type(c.type) for c in table.columns}
    profiler = TableProfiler(limits.sample_rows)
    for col in table.columns:
        profiler.declare(col.name, kinds[col.name], declared.get(col.name, (None, None))[1])
    row_count = int(conn.execute(select(func.count()).select_from(table)).scalar_one())
    progress.total = row_count
    # A table within the sample is read whole: every statistic of its rows is already exact.
    pushdown = conn.dialect.name in PUSHDOWN_DIALECTS and row_count > limits.sample_rows
    stats: dict[str, ColumnStats] = {}
    aggregated = 0  # rows accounted for by the aggregates, the sample's rows aside
    method = "first rows"
    if pushdown:
        aggregated = row_count - limits.sample_rows
        stats = aggregate(conn, table, kinds, row_count <= limits.exact_distinct_rows,
                          lambda done, groups: progress.report(aggregated * done // groups))
        method, batches = _sample(conn, table, row_count, limits, is_view)
    else:
        batches = first_rows(conn, table, limits.sample_rows, limits.chunk_rows)
    # Columns whose distinct count the database does not give: estimated from the sample
    estimated = {n for n, s in stats.items()
                 if s.distinct is None and s.value_count is not None and kinds[n] not in _COMPOSITE}
    kept: dict[str, list[pa.Array]] = {n: [] for n in estimated}
    names = [c.name for c in table.columns]
    for rows in batches:
        columns = {
            n: python_column(_numbers([row[i] for row in rows], kinds[n]))
            for i, n in enumerate(names)
        }
        profiler.add_chunk(columns, len(rows))
        for n in estimated:
            kept[n].append(columns[n].values)
        progress.report(aggregated + profiler.row_count)
    profile.row_count = row_count
    profile.fields = profiler.fields(sampled=row_count > profiler.row_count)
    if profiler.keys:
        profile.extra["inferredKeys"] = profiler.keys.to_dict()
    profile.field_count = len(profile.fields)
    if pushdown:
        estimates = {
            n: estimate_distinct(kept[n], stats[n].value_count or 0)
            for n in estimated if stats[n].value_count is not None
        }
        apply_stats(profile.fields, row_count, stats, estimates)
        profile.extra["sampleMethod"] = method
    progress.report(row_count)


def _sample(
    conn: Connection, table: Table, row_count: int, limits: _Limits, is_view: bool
) -> tuple[str, Iterator[Sequence[Row[Any]]]]:
    """The database's own sample; the first rows when it refuses to draw one (a foreign
    table, say), which it says before the first row."""
    method, batches = sample_batches(conn, table, row_count, limits.sample_rows,
                                     limits.chunk_rows, is_view)
    try:
        first = next(batches, None)
    except DBAPIError:
        conn.rollback()
        method, batches = "first rows", first_rows(conn, table, limits.sample_rows,
                                                   limits.chunk_rows)
        first = next(batches, None)
    return method, chain([] if first is None else [first], batches)


def _numbers(values: list[Any], kind: DataType | None) -> list[Any]:
    """Decimals as floats (or ints) so one chunk's numbers share one Arrow type."""
    if kind not in (DataType.LONG, DataType.DOUBLE):
        return values
    convert = int if kind is DataType.LONG else float
    try:
        return [None if v is None else convert(v) for v in values]
    except (TypeError, ValueError):
        return values  # SQLite lets any value into any column: profile them as they are


def estimate_rows(engine: Engine | str, schema: str, name: str) -> int | None:
    """A cheap guess of a table's rows, read before profiling it (a job's progress total).

    PostgreSQL: the planner's ``pg_class.reltuples`` (None before the table was first vacuumed
    or analyzed); SQLite: the largest rowid of a rowid table. None for views, WITHOUT ROWID
    tables, other databases, and whatever cannot be read. Raises ProfilingError when the
    database cannot be reached.
    """
    with _connect(engine) as (_target, conn):
        try:
            if conn.dialect.name == "postgresql":
                value = conn.execute(_reltuples(schema, name)).scalar()
                return int(value) if value is not None and value >= 0 else None
            if conn.dialect.name == "sqlite":
                inspector = inspect(conn)
                if name in _views(inspector, schema):
                    return None
                taken = {str(c["name"]).lower() for c in inspector.get_columns(name, schema)}
                rowid = next((n for n in ("rowid", "_rowid_", "oid") if n not in taken), None)
                if rowid is None:
                    return None
                top = conn.execute(
                    select(func.max(column(rowid))).select_from(table_clause(name, schema=schema))
                ).scalar()
                return int(top) if isinstance(top, int) else 0
        except SQLAlchemyError:
            conn.rollback()
    return None


def _reltuples(schema: str, name: str) -> Select[tuple[Any]]:
    classes = table_clause("pg_class", column("oid"), column("relname"), column("relnamespace"),
                           column("relkind"), column("reltuples"), schema="pg_catalog")
    spaces = table_clause("pg_namespace", column("oid"), column("nspname"), schema="pg_catalog")
    return (
        select(classes.c.reltuples)
        .join_from(classes, spaces, classes.c.relnamespace == spaces.c.oid)
        .where(spaces.c.nspname == schema, classes.c.relname == name,
               classes.c.relkind.in_(["r", "m", "p"]))
    )
