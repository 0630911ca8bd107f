"""Schema creation and upgrade, with the version recorded in ``schema_version``.

A new store is created from the current table definitions and stamped with the latest version.
An existing store gets each later migration, in order, in the caller's transaction. To change the
schema: edit ``schema.py`` and append a step that brings a store of the previous version to the
new shape (``ALTER TABLE ... ADD COLUMN``, ``metadata.create_all(tables=[...])``).
"""

from __future__ import annotations

import time
from collections.abc import Callable

from sqlalchemy import Connection, func, inspect, select

from catalog_nb.server.store.schema import (
    config_values,
    favorites,
    join_conditions,
    lineage_edges,
    lineage_status,
    login_throttle,
    metadata,
    reviews,
    schema_version,
    staged_fields,
)

Step = Callable[[Connection], None]


def _relations_and_objects(conn: Connection) -> None:
    metadata.create_all(conn, tables=[lineage_edges, lineage_status, join_conditions, favorites,
                                      reviews, config_values])

def _login_throttle(conn: Connection) -> None:
    # Counts per user name alone let anyone lock any account; the old counts are dropped with
    # their table (at worst a throttled name gets its few tries back once).
    conn.exec_driver_sql("DROP TABLE IF EXISTS login_failures")
    metadata.create_all(conn, tables=[login_throttle])


def _job_work(conn: Connection) -> None:
    for column in ("work_unit VARCHAR(16)", "work_total BIGINT", "work_done BIGINT"):
        conn.exec_driver_sql(f"ALTER TABLE jobs ADD COLUMN {column}")


def _staged_fields(conn: Connection) -> None:
    metadata.create_all(conn, tables=[staged_fields])


#: (version, description, step) in order; version 1 is the initial schema.
MIGRATIONS: list[tuple[int, str, Step | None]] = [
    (1, "initial schema: users, roles, sessions, audit, sources, resources, jobs, tags", None),
    (2, "lineage, join conditions, favorites, reviews, configuration values",
     _relations_and_objects),
    (3, "login throttling per client and per user name from a client", _login_throttle),
    (4, "job progress in bytes read of the total", _job_work),
    (5, "staging of wide profiles' fields, written in bounded batches", _staged_fields),
]

LATEST = MIGRATIONS[-1][0]


def current_version(conn: Connection) -> int | None:
    """The recorded schema version, or None for a store that has no schema yet."""
    if not inspect(conn).has_table(schema_version.name):
        return None
    return conn.execute(select(func.max(schema_version.c.version))).scalar_one_or_none()


def create_search_index(conn: Connection) -> None:
    """The engine-specific half of the keyword index over ``search_documents``: an FTS5 table
    on SQLite (rowid = doc_id; Porter stemming), a weighted ``tsvector`` column with a GIN index
    on PostgreSQL."""
    if conn.dialect.name == "sqlite":
        conn.exec_driver_sql(
            "CREATE VIRTUAL TABLE IF NOT EXISTS search_fts USING fts5("
            "name, path, tags, fields, descriptions, custom, "
            "tokenize = 'porter unicode61 remove_diacritics 2')"
        )
    elif conn.dialect.name == "postgresql":
        conn.exec_driver_sql("ALTER TABLE search_documents ADD COLUMN IF NOT EXISTS tsv tsvector")
        conn.exec_driver_sql(
            "CREATE INDEX IF NOT EXISTS ix_search_documents_tsv ON search_documents USING GIN (tsv)"
        )


def migrate(conn: Connection) -> int:
    """Bring the store to the latest version and return it.

    Raises RuntimeError for a store written by a newer catalog_nb, which this one must not touch.
    """
    found = current_version(conn)
    now = int(time.time() * 1000)
    if found is None:
        metadata.create_all(conn)
        create_search_index(conn)
        conn.execute(
            schema_version.insert(),
            [{"version": v, "description": d, "applied_ms": now} for v, d, _ in MIGRATIONS],
        )
        return LATEST
    if found > LATEST:
        raise RuntimeError(
            f"The store has schema version {found}, newer than this catalog_nb knows "
            f"({LATEST}); upgrade catalog_nb before serving this store."
        )
    for version, description, step in MIGRATIONS:
        if version > found:
            if step is not None:
                step(conn)
            conn.execute(
                schema_version.insert(),
                {"version": version, "description": description, "applied_ms": now},
            )
    return LATEST
