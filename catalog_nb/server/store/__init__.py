"""The catalog store: the only code that writes SQL (SQLAlchemy Core), one module per family.

``Store`` owns the engine and hands out transactions; the family modules (``users``, ``roles``,
``sessions``, ``audit``, ...) are functions that take a connection, so one request's work happens
in one transaction and a failure leaves nothing half-written. A store holds open connections
(a pool on PostgreSQL) until it is disposed: whoever makes one disposes of it (``with`` does).

Example::

    with Store("sqlite:///catalog.sqlite3") as store:
        store.migrate()
        with store.write() as conn:
            users.create(conn, name="ana", roles=["Analyst"], assigned_by="cli")
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, Engine, create_engine, event
from sqlalchemy.engine import make_url
from sqlalchemy.exc import DBAPIError
from sqlalchemy.exc import TimeoutError as PoolTimeout
from sqlalchemy.pool import NullPool

from catalog_nb.contract import ErrorCode
from catalog_nb.server.errors import StoreBusy
from catalog_nb.server.store.migrations import migrate

__all__ = ["Store", "busy_error", "is_busy"]

#: PostgreSQL SQLSTATEs meaning "try again": lock_not_available (lock_timeout), deadlock,
#: serialization failure, too many connections.
_BUSY_SQLSTATES = frozenset({"55P03", "40P01", "40001", "53300"})
#: How long a request waits for the write lock (SQLite) or a row lock (PostgreSQL) by default.
BUSY_TIMEOUT_SECONDS = 30.0
#: What a 503 for a busy store tells the client to wait before sending the request again.
RETRY_AFTER_SECONDS = 2
#: PostgreSQL connections a store keeps open between uses, and how many more it may open for a
#: burst (closed again when returned). Each ``serve`` process holds two stores (requests and job
#: workers), and replicas share one server's max_connections, so the pools stay small.
POOL_SIZE = 5
MAX_OVERFLOW = 10
#: How the service's connections are named in pg_stat_activity (a URL's own name wins).
APPLICATION_NAME = "catalog-nb"
#: A thread that committed a write this recently and starts another is writing in batches; the
#: most it then waits for other threads' writes to go first (SQLite only, see Store.write).
BACK_TO_BACK_SECONDS = 0.05
YIELD_AT_MOST_SECONDS = 0.5


class _Turns:
    """Threads of this process waiting to begin a write transaction, per database URL.

    SQLite's busy handler is not fair: a waiting connection sleeps (up to 100 ms at a time) and
    retries, so a thread that commits and at once begins its next batch wins the lock again and
    again; a login waiting behind a job's batches could wait for the whole job. A batch writer
    therefore lets the threads already waiting go first (up to ``YIELD_AT_MOST_SECONDS``). Jobs
    run in processes of their own, so the service and its job processes count their waiting
    writers in one shared counter (:func:`share_write_turns`).
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._waiting: Counter[str] = Counter()
        self._last = threading.local()
        # url -> a multiprocessing.Value("i") the service and its job processes all count in
        self._shared: dict[str, Any] = {}

    def share(self, url: str, counter: Any | None) -> None:
        """Count this process's waiting writers of ``url`` in ``counter`` too (None: stop), a
        counter the other processes writing to it share, so they take turns with each other."""
        with self._lock:
            if counter is None:
                self._shared.pop(url, None)
            else:
                self._shared[url] = counter

    def waiting(self, url: str) -> int:
        with self._lock:
            shared = self._shared.get(url)
            if shared is None:
                return self._waiting[url]
        return int(shared.value)

    def add(self, url: str, delta: int) -> None:
        with self._lock:
            self._waiting[url] += delta
            if self._waiting[url] <= 0:
                del self._waiting[url]
            shared = self._shared.get(url)
        if shared is not None:
            with shared.get_lock():
                shared.value = max(0, shared.value + delta)

    def yield_if_batching(self, url: str) -> None:
        last = getattr(self._last, "committed", None)
        if last is None or time.monotonic() - last > BACK_TO_BACK_SECONDS:
            return
        deadline = time.monotonic() + YIELD_AT_MOST_SECONDS
        while self.waiting(url) and time.monotonic() < deadline:
            time.sleep(0.005)

    def committed(self) -> None:
        self._last.committed = time.monotonic()


_TURNS = _Turns()


def share_write_turns(url: str, counter: Any | None) -> None:
    """Take turns at SQLite's write lock with the other processes counting in ``counter`` (a
    ``multiprocessing.Value("i")``: the service and its job processes); None stops."""
    _TURNS.share(url, counter)


def is_busy(exc: BaseException) -> bool:
    """Whether a database error means the store was busy (locked, out of connections) rather
    than that the request or the code is wrong: such a request may simply be sent again."""
    if isinstance(exc, PoolTimeout):
        return True
    if not isinstance(exc, DBAPIError):
        return False
    orig = exc.orig
    if getattr(orig, "sqlstate", None) in _BUSY_SQLSTATES:
        return True
    text = str(orig).lower()
    return "database is locked" in text or "database table is locked" in text


def busy_error() -> StoreBusy:
    """The 503 (with ``Retry-After``) that a busy store answers; see :func:`is_busy`."""
    return StoreBusy(
        "The catalog store is busy with other work and could not take this request in time; "
        f"nothing was changed. Try again in {RETRY_AFTER_SECONDS} seconds.",
        ErrorCode.STORE_BUSY,
        headers={"Retry-After": str(RETRY_AFTER_SECONDS)},
        retryAfter=RETRY_AFTER_SECONDS,
    )


class Store:
    """A catalog store on SQLite (the embedded default) or PostgreSQL."""

    def __init__(
        self,
        url: str,
        *,
        busy_timeout: float = BUSY_TIMEOUT_SECONDS,
        pool_size: int = POOL_SIZE,
        max_overflow: int = MAX_OVERFLOW,
        application_name: str = APPLICATION_NAME,
    ) -> None:
        self.url = url
        self.busy_timeout = busy_timeout
        self.pool_size = pool_size
        self.max_overflow = max_overflow
        self.application_name = application_name
        self.dialect = make_url(url).get_backend_name()
        database = make_url(url).database
        #: An in-memory SQLite database: no other process can open it.
        self.in_memory = self.dialect == "sqlite" and database in (None, "", ":memory:")
        self.engine = self._make_engine(url)

    def _make_engine(self, url: str) -> Engine:
        # hide_parameters: a failed statement's bound values (passwords, whole payloads) never
        # reach an exception message, and so never a log line.
        if self.dialect != "sqlite":
            # lock_timeout makes a writer stuck behind a lock give up like SQLite's busy
            # timeout does, so both stores answer a long wait with the same 503.
            lock_ms = int(self.busy_timeout * 1000)
            connect_args: dict[str, Any] = {}
            if self.dialect == "postgresql":
                connect_args["options"] = f"-c lock_timeout={lock_ms}"
            if self.dialect == "postgresql" and "application_name" not in make_url(url).query:
                # Names who holds a connection in pg_stat_activity (requests, jobs, the CLI).
                connect_args["application_name"] = self.application_name
            return create_engine(
                url, pool_pre_ping=True, future=True, hide_parameters=True,
                pool_size=self.pool_size, max_overflow=self.max_overflow,
                connect_args=connect_args,
            )
        database = make_url(url).database
        if database and not self.in_memory:
            Path(database).parent.mkdir(parents=True, exist_ok=True)
        # NullPool: SQLite connections are cheap, and per-request connections avoid sharing one
        # connection between the threads that run routes.
        engine = create_engine(
            url, poolclass=NullPool, hide_parameters=True,
            connect_args={"timeout": self.busy_timeout},
        )
        busy_ms = int(self.busy_timeout * 1000)

        @event.listens_for(engine, "connect")
        def _on_connect(dbapi_connection: Any, _record: Any) -> None:
            # Take over transaction control from the driver so BEGIN IMMEDIATE can be used:
            # a deferred transaction that later writes can fail at once with "database is
            # locked" instead of waiting its turn.
            dbapi_connection.isolation_level = None
            cursor = dbapi_connection.cursor()
            cursor.execute("PRAGMA foreign_keys=ON")
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute(f"PRAGMA busy_timeout={busy_ms}")
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
        """One write transaction: committed when the block ends, rolled back on any error.

        A store too busy to take it raises :class:`StoreBusy` (503 with ``Retry-After``).
        """
        fair = self.dialect == "sqlite"
        if fair:
            _TURNS.yield_if_batching(self.url)
            _TURNS.add(self.url, 1)
        waiting = fair
        try:
            with self.engine.connect() as conn:
                conn = conn.execution_options(catalog_write=True)
                with conn.begin():
                    if waiting:  # BEGIN IMMEDIATE has taken the lock
                        _TURNS.add(self.url, -1)
                        waiting = False
                    yield conn
            if fair:
                _TURNS.committed()
        except (DBAPIError, PoolTimeout) as exc:
            if is_busy(exc):
                raise busy_error() from exc
            raise
        finally:
            if waiting:
                _TURNS.add(self.url, -1)

    @contextmanager
    def read(self) -> Iterator[Connection]:
        """One read transaction (a consistent view for the whole block); StoreBusy as above."""
        try:
            with self.engine.connect() as conn, conn.begin():
                yield conn
        except (DBAPIError, PoolTimeout) as exc:
            if is_busy(exc):
                raise busy_error() from exc
            raise

    def dispose(self) -> None:
        """Close every pooled connection."""
        self.engine.dispose()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.dispose()
