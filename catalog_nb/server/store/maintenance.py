"""The planner's statistics, kept current so plans follow the data.

A query planner without statistics guesses: on SQLite (which never gathers them by itself) the
search's facet counts walked the 400,000-row facet table from its category index instead of
starting from the few hundred matches. :func:`refresh_statistics` runs ``ANALYZE`` on the
tables whose size has moved by :data:`GROWTH` times since they were last analysed (or that never
were); the service calls it at every start (``bootstrap``). When a job that wrote at least
:data:`LARGE_JOB` resources ends (``jobs.run_job``), :func:`after_bulk_write` does the same and,
on PostgreSQL, vacuums those tables too: until a vacuum sets their visibility map and merges the
keyword index's pending list, the planner prices the covering index and the keyword index so
high that it reads whole tables. Between those, on PostgreSQL, autovacuum keeps vacuuming and
analysing as usual.

SQLite's ``ANALYZE`` reads every index of the tables (a fifth of a second for 100,000
resources; ``analysis_limit`` would make it cheaper, but its samples got the rows per data
source wrong by a factor of 50, which misleads the planner exactly where it matters);
PostgreSQL's samples a bounded number of rows by itself.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from sqlalchemy import Connection, text

if TYPE_CHECKING:
    from catalog_nb.server.store.engine import Store

#: The tables the search and metadata queries plan over.
TABLES = ("data_sources", "data_resources", "resource_fields", "search_documents",
          "search_facet_values", "search_document_facets", "tag_associations",
          "resource_custom_values")
#: A table is analysed again once its row count is this many times (or this fraction of) the
#: count its statistics describe.
GROWTH = 2.0
#: Tables smaller than this are left alone: any plan is fast over them, and a freshly made store
#: is not analysed row by row while tests and demos fill it.
SMALL = 200
#: A job that recorded at least this many resources refreshes the statistics when it ends.
LARGE_JOB = 1000


def _sqlite_counts(conn: Connection, tables: Sequence[str]) -> dict[str, int | None]:
    """The row count each table's statistics describe (None: never analysed)."""
    has_stats = conn.exec_driver_sql(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'sqlite_stat1'").first()
    if has_stats is None:
        return {t: None for t in tables}
    found: dict[str, int | None] = {t: None for t in tables}
    for table, stat in conn.exec_driver_sql("SELECT tbl, stat FROM sqlite_stat1"):
        if table in found and stat:
            found[table] = max(found[table] or 0, int(str(stat).split()[0]))
    return found


def _postgres_counts(conn: Connection, tables: Sequence[str]) -> dict[str, int | None]:
    # reltuples is what ANALYZE and VACUUM last found (-1 before either ever ran); it is
    # written with them, unlike the cumulative statistics' last_analyze, which lag.
    query = text(
        "SELECT c.relname, c.reltuples FROM pg_class c "
        "WHERE c.relkind = 'r' AND c.relnamespace = 'public'::regnamespace "
        "AND c.relname = ANY(:tables)")
    found: dict[str, int | None] = {t: None for t in tables}
    for table, tuples in conn.execute(query, {"tables": list(tables)}):
        found[str(table)] = int(tuples) if tuples >= 0 else None
    return found


def stale_tables(conn: Connection, tables: Sequence[str] = TABLES) -> list[str]:
    """The tables of ``tables`` whose statistics are missing or describe a row count
    :data:`GROWTH` times off the one they hold now (tables under :data:`SMALL` rows aside)."""
    if conn.dialect.name == "sqlite":
        described = _sqlite_counts(conn, tables)
    elif conn.dialect.name == "postgresql":
        described = _postgres_counts(conn, tables)
    else:
        return []
    stale = []
    for table in tables:
        # Counting is cheap next to planning every search on a wrong guess; the name comes from
        # TABLES (or a caller's literal), never from a request.
        rows = int(conn.exec_driver_sql(f"SELECT count(*) FROM {table}").scalar_one())
        known = described[table]
        if rows < SMALL and (known is None or known < SMALL):
            continue
        if known is None or rows > known * GROWTH or rows * GROWTH < known:
            stale.append(table)
    return stale


def analyze(conn: Connection, tables: Sequence[str] = TABLES) -> None:
    """``ANALYZE`` these tables now."""
    if conn.dialect.name == "sqlite":
        for table in tables:
            conn.exec_driver_sql(f"ANALYZE {table}")
    elif conn.dialect.name == "postgresql":
        if "search_documents" in tables:
            # New documents wait in the GIN index's pending list until a vacuum merges them;
            # the planner prices a long list so high that keyword searches scan every document.
            conn.exec_driver_sql("SELECT gin_clean_pending_list('ix_search_documents_tsv')")
        conn.exec_driver_sql(f"ANALYZE {', '.join(tables)}")


def refresh_statistics(conn: Connection, *, force: bool = False) -> list[str]:
    """Analyse the stale tables (every table of :data:`TABLES` with ``force``); returns the
    tables analysed. Runs in the caller's write transaction."""
    tables = _chosen(conn, force)
    if tables:
        analyze(conn, tables)
    return tables


def _chosen(conn: Connection, force: bool) -> list[str]:
    return list(TABLES) if force else stale_tables(conn)


def after_bulk_write(store: Store, *, force: bool = False) -> list[str]:
    """After a large write (a job, the bulk fixture): the stale tables (every table of
    :data:`TABLES` with ``force``) analysed, on PostgreSQL with ``VACUUM (ANALYZE)``; returns
    them."""
    if store.dialect != "postgresql":
        with store.write() as conn:
            return refresh_statistics(conn, force=force)
    with store.read() as conn:
        tables = _chosen(conn, force)
    if tables:
        # VACUUM runs outside any transaction; it blocks neither readers nor writers.
        with store.engine.connect() as conn:
            conn = conn.execution_options(isolation_level="AUTOCOMMIT")
            conn.exec_driver_sql(f"VACUUM (ANALYZE) {', '.join(tables)}")
    return tables

