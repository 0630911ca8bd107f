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

from catalog_nb.contract import MAX_NAME_LENGTH
from catalog_nb.server.search.facets import FIELD_TYPE_BITS
from catalog_nb.server.store import facet_cells
from catalog_nb.server.store.maintenance import analyze
from catalog_nb.server.store.schema import (
    config_values,
    favorites,
    install_generations,
    join_conditions,
    lineage_edges,
    lineage_status,
    login_throttle,
    metadata,
    resource_facets,
    resource_names,
    resource_names_in_code_points,
    resource_paths_in_code_points,
    reviews,
    schema_version,
    search_cell_members,
    search_cells,
    search_document_facets,
    search_documents,
    staged_fields,
    store_generations,
    stored_searches_by_state,
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


def _paths_in_code_points(conn: Connection) -> None:
    if conn.dialect.name == "postgresql":
        resource_paths_in_code_points.create(conn, checkfirst=True)


def _search_facet_columns(conn: Connection) -> None:
    # The dense derived facets move from search_facet_values rows (four or five per resource)
    # to two columns of the resource, read with the others from ix_resources_facets.
    present = {c["name"] for c in inspect(conn).get_columns("data_resources")}
    for column in ("facet_field_types INTEGER DEFAULT 0 NOT NULL", "facet_sensitivity VARCHAR(32)"):
        if column.split()[0] not in present:
            conn.exec_driver_sql(f"ALTER TABLE data_resources ADD COLUMN {column}")
    bits = " ".join(f"WHEN '{name}' THEN {bit}" for name, bit in FIELD_TYPE_BITS.items())
    conn.exec_driver_sql(
        "UPDATE data_resources SET "
        f"facet_field_types = coalesce((SELECT sum(CASE v.category {bits} ELSE 0 END) "
        "FROM search_facet_values v WHERE v.resource_key = data_resources.key "
        "AND v.facet = 'fieldDataType'), 0), "
        "facet_sensitivity = (SELECT v.category FROM search_facet_values v "
        "WHERE v.resource_key = data_resources.key AND v.facet = 'sensitivity')"
    )
    conn.exec_driver_sql(
        "DELETE FROM search_facet_values WHERE facet IN ('fieldDataType', 'sensitivity')")
    resource_facets.create(conn, checkfirst=True)
    analyze(conn, ["data_resources", "search_facet_values"])


def _generations(conn: Connection) -> None:
    store_generations.create(conn, checkfirst=True)
    install_generations(conn)


def _facet_cells(conn: Connection) -> None:
    # Facet-only searches count cells instead of every resource.
    metadata.create_all(conn, tables=[search_cells, search_cell_members])
    facet_cells.rebuild(conn)
    # Their first page is read by index in name order; the rest is ordered after the answer.
    index = resource_names_in_code_points if conn.dialect.name == "postgresql" else (
        resource_names)
    index.create(conn, checkfirst=True)
    present = {c["name"] for c in inspect(conn).get_columns("stored_searches")}
    for column in ("state VARCHAR(16) DEFAULT 'ready' NOT NULL", "matched BIGINT"):
        if column.split()[0] not in present:
            conn.exec_driver_sql(f"ALTER TABLE stored_searches ADD COLUMN {column}")
    analyze(conn, ["data_resources", "search_cells"])


def _document_tails(conn: Connection) -> None:
    # Rebuilt whole: the table holds nothing but what the members and names give. A store
    # that came through version 10's step here got the table from the current definition at
    # that step.
    if "tail" not in {c["name"] for c in inspect(conn).get_columns("search_document_facets")}:
        _rebuild_document_facets(conn)


def _rebuild_document_facets(conn: Connection) -> None:
    search_document_facets.drop(conn, checkfirst=True)
    search_document_facets.create(conn)
    facet_cells.rebuild_documents(conn)
    analyze(conn, ["search_document_facets"])


def _documents_never_reuse_ids(conn: Connection) -> None:
    # SQLite gives a deleted highest rowid again unless the table is AUTOINCREMENT, which only
    # a new table can be: the documents are copied, ids and all (the FTS rows are keyed by
    # them), into the table as now defined, and their facet rows written again (dropping the
    # documents would delete them by the foreign key's cascade anyway).
    if conn.dialect.name != "sqlite":
        return
    if "AUTOINCREMENT" in str(conn.exec_driver_sql(
            "SELECT sql FROM sqlite_master WHERE name = 'search_documents'").scalar_one()):
        return
    columns = ", ".join(c.name for c in search_documents.columns)
    conn.exec_driver_sql(f"CREATE TEMP TABLE documents_kept AS SELECT {columns} "
                         "FROM search_documents")
    search_document_facets.drop(conn, checkfirst=True)
    search_documents.drop(conn)
    search_documents.create(conn)
    conn.exec_driver_sql(f"INSERT INTO search_documents ({columns}) SELECT {columns} "
                         "FROM documents_kept")
    conn.exec_driver_sql("DROP TABLE documents_kept")
    _rebuild_document_facets(conn)
    analyze(conn, ["search_documents"])


def _results_by_state(conn: Connection) -> None:
    stored_searches_by_state.create(conn, checkfirst=True)


def uncompressed_results(conn: Connection) -> None:
    """PostgreSQL: a stored search's matches are kept as written, not compressed: pglz took
    10 ms to compress the 260 kB of 5,000 matches on every search, the plain write 3 ms (they
    live as long as their session's next few searches)."""
    if conn.dialect.name == "postgresql":
        conn.exec_driver_sql(
            "ALTER TABLE stored_searches ALTER COLUMN ordered SET STORAGE EXTERNAL")


def _job_engine_and_worker(conn: Connection) -> None:
    present = {c["name"] for c in inspect(conn).get_columns("jobs")}
    for column in ("engine VARCHAR(16) DEFAULT 'local' NOT NULL",
                   f"worker VARCHAR({MAX_NAME_LENGTH})"):
        if column.split()[0] not in present:
            conn.exec_driver_sql(f"ALTER TABLE jobs ADD COLUMN {column}")


def _tag_domain_color(conn: Connection) -> None:
    # Skipped when present: a store rolled back to an older version (tests) keeps its columns.
    if "color" not in {c["name"] for c in inspect(conn).get_columns("tag_domains")}:
        conn.exec_driver_sql("ALTER TABLE tag_domains ADD COLUMN color VARCHAR(32)")


def _source_engine(conn: Connection) -> None:
    if "engine" not in {c["name"] for c in inspect(conn).get_columns("data_sources")}:
        conn.exec_driver_sql(
            "ALTER TABLE data_sources ADD COLUMN engine VARCHAR(16) DEFAULT 'local' NOT NULL")


#: (version, description, step) in order; version 1 is the initial schema.
MIGRATIONS: list[tuple[int, str, Step | None]] = [
    (1, "initial schema: users, roles, sessions, audit, sources, resources, jobs, tags", None),
    (2, "lineage, join conditions, favorites, reviews, configuration values",
     _relations_and_objects),
    (3, "login throttling per client and per user name from a client", _login_throttle),
    (4, "job progress in bytes read of the total", _job_work),
    (5, "staging of wide profiles' fields, written in bounded batches", _staged_fields),
    (6, "PostgreSQL: resource paths per source in code-point order, for keyset paging",
     _paths_in_code_points),
    (7, "search: field data types and sensitivity as resource columns, a covering facet index",
     _search_facet_columns),
    (8, "generation counters of users, roles and grants and of the catalog, for caches",
     _generations),
    (9, "search: facet counts kept per cell of the facet columns, for facet-only searches",
     _facet_cells),
    (10, "search: each document's facet coordinates keyed by the document, for keyword searches",
     _rebuild_document_facets),
    (11, "search: each document's facet coordinates as one text, as keyword searches read them",
     _document_tails),
    (12, "PostgreSQL: stored search results kept uncompressed", uncompressed_results),
    (13, "SQLite: search document ids never given twice, as processes keep documents by id",
     _documents_never_reuse_ids),
    (14, "stored search results found by session and state without reading them",
     _results_by_state),
    (15, "jobs: the engine of a PROFILE job (local or spark) and the worker that ran it",
     _job_engine_and_worker),
    (16, "tag domains: the product's display colour", _tag_domain_color),
    (17, "data sources: the engine of their PROFILE jobs (local or spark)", _source_engine),
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
        uncompressed_results(conn)
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
