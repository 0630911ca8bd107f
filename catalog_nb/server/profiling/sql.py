"""Browsing and profiling SQL databases through SQLAlchemy.

Everything goes through ``sqlalchemy.inspect`` and reflected ``Table`` objects, so identifiers
are always quoted by the dialect and values always bound; no SQL text is ever assembled here.

* :func:`browse_sql`: every schema except the system ones, its tables and views, with columns
  (types mapped to :class:`DataType`), nullability, primary key, foreign keys and view
  definitions. Paths are ``schema.table``.
* :func:`profile_table`: an exact ``COUNT(*)``, and column statistics over the first
  ``sample_rows`` rows the database returns (``SELECT ... LIMIT n``, no ORDER BY: a random
  sample would need a full sort). ``sampled`` says when the statistics saw only part of a table.

A database that cannot be reached raises :class:`ProfilingError` with a message that names the
URL without its password; a table that disappeared or cannot be read comes back as ERROR.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sqlalchemy import MetaData, Table, create_engine, func, inspect, select, types
from sqlalchemy.engine import Connection, Engine, Inspector
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
    ResourceProfile,
)
from catalog_nb.server.profiling.stats import DEFAULT_SAMPLE_ROWS, TableProfiler

log = logging.getLogger(__name__)

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


def profile_table(
    engine: Engine | str,
    schema: str,
    name: str,
    sample_rows: int = DEFAULT_SAMPLE_ROWS,
    chunk_rows: int = DEFAULT_CHUNK_ROWS,
) -> ResourceProfile:
    """Profile one table or view: exact row count, statistics over the first ``sample_rows``.

    Raises ProfilingError when the database cannot be reached; a missing or unreadable table
    comes back with ``state`` ERROR.
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
            _profile_rows(conn, profile, schema, name, sample_rows, chunk_rows)
        except NoSuchTableError:
            profile.fail(f"The table {schema}.{name} no longer exists.")
        except SQLAlchemyError as exc:
            conn.rollback()
            profile.fail(_safe_message(target, exc))
    return profile


def _profile_rows(
    conn: Connection,
    profile: ResourceProfile,
    schema: str,
    name: str,
    sample_rows: int,
    chunk_rows: int,
) -> None:
    # resolve_fks=False: a foreign key's target may live in a schema we cannot read
    table = Table(name, MetaData(), schema=schema, autoload_with=conn, resolve_fks=False)
    declared = {f.name: (f.data_type, f.nullable) for f in profile.fields}
    kinds = {c.name: sql_data_type(c.type) for c in table.columns}
    profiler = TableProfiler(sample_rows)
    for column in table.columns:
        known = kinds[column.name]
        profiler.declare(column.name, known, declared.get(column.name, (None, None))[1])
    row_count = conn.execute(select(func.count()).select_from(table)).scalar_one()
    result = conn.execution_options(stream_results=True, yield_per=chunk_rows).execute(
        select(table).limit(sample_rows)
    )
    names = [c.name for c in table.columns]
    for rows in result.partitions():
        columns = {
            n: python_column(_numbers([row[i] for row in rows], kinds[n]))
            for i, n in enumerate(names)
        }
        profiler.add_chunk(columns, len(rows))
    profile.row_count = int(row_count)
    profile.fields = profiler.fields(sampled=row_count > profiler.row_count)
    profile.field_count = len(profile.fields)


def _numbers(values: list[Any], kind: DataType | None) -> list[Any]:
    """Decimals as floats (or ints) so one chunk's numbers share one Arrow type."""
    if kind not in (DataType.LONG, DataType.DOUBLE):
        return values
    convert = int if kind is DataType.LONG else float
    try:
        return [None if v is None else convert(v) for v in values]
    except (TypeError, ValueError):
        return values  # SQLite lets any value into any column: profile them as they are
