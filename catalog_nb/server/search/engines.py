"""Which full-text engine a connection's database has (``search.index`` is the interface).

The implementations are imported when first asked for: a process uses one database, and
PostgreSQL's module need not load under SQLite.
"""

from __future__ import annotations

from sqlalchemy import Connection

from catalog_nb.server.search.index import SearchIndex


def index_for(conn: Connection) -> SearchIndex:
    """The index implementation of the connection's database."""
    if conn.dialect.name == "postgresql":
        from catalog_nb.server.search.postgres_fts import PostgresIndex

        return PostgresIndex()
    from catalog_nb.server.search.sqlite_fts import SqliteIndex

    return SqliteIndex()
