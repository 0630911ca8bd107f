"""The catalog store: the only code that writes SQL (SQLAlchemy Core), one module per family.

``Store`` owns the engine and hands out transactions; the family modules (``users``, ``roles``,
``sessions``, ``audit``, ...) are functions that take a connection, so one request's work happens
in one transaction and a failure leaves nothing half-written.

Example::

    store = Store("sqlite:///catalog.sqlite3")
    store.migrate()
    with store.write() as conn:
        users.create(conn, name="ana", roles=["Analyst"], assigned_by="cli")
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, Engine, create_engine, event
from sqlalchemy.engine import make_url
from sqlalchemy.pool import NullPool

from catalog_nb.server.store.migrations import migrate

__all__ = ["Store"]


class Store:
    """A catalog store on SQLite (the embedded default) or PostgreSQL."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.dialect = make_url(url).get_backend_name()
        self.engine = self._make_engine(url)

    def _make_engine(self, url: str) -> Engine:
        if self.dialect != "sqlite":
            return create_engine(url, pool_pre_ping=True, future=True)
        database = make_url(url).database
        if database and database != ":memory:":
            Path(database).parent.mkdir(parents=True, exist_ok=True)
        # NullPool: SQLite connections are cheap, and per-request connections avoid sharing one
        # connection between the threads that run routes.
        engine = create_engine(url, poolclass=NullPool, connect_args={"timeout": 30})

        @event.listens_for(engine, "connect")
        def _on_connect(dbapi_connection: Any, _record: Any) -> None:
            # Take over transaction control from the driver so BEGIN IMMEDIATE can be used:
            # a deferred transaction that later writes can fail at once with "database is
            # locked" instead of waiting its turn.
            dbapi_connection.isolation_level = None
            cursor = dbapi_connection.cursor()
            cursor.execute("PRAGMA foreign_keys=ON")
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute("PRAGMA busy_timeout=30000")
            cursor.close()

        @event.listens_for(engine, "begin")
        def _on_begin(conn: Connection) -> None:
            writes = conn.get_execution_options().get("catalog_write", False)
            conn.exec_driver_sql("BEGIN IMMEDIATE" if writes else "BEGIN")

        return engine

    def migrate(self) -> int:
        """Create or upgrade the schema; returns the schema version now in force."""
        with self.write() as conn:
            return migrate(conn)

    @contextmanager
    def write(self) -> Iterator[Connection]:
        """One write transaction: committed when the block ends, rolled back on any error."""
        with self.engine.connect() as conn:
            conn = conn.execution_options(catalog_write=True)
            with conn.begin():
                yield conn

    @contextmanager
    def read(self) -> Iterator[Connection]:
        """One read transaction (a consistent view for the whole block)."""
        with self.engine.connect() as conn, conn.begin():
            yield conn

    def dispose(self) -> None:
        """Close every pooled connection."""
        self.engine.dispose()
