"""The store's engine: ``Store`` owns the engine, its pool, and the transactions it hands out
(``catalog_nb.server.store`` re-exports it and the helpers below).

Pooling: a request borrows a connection and gives it back, so the per-connection set-up (on
SQLite: opening the file and three PRAGMAs) is paid once per connection, not once per request.
A connection belongs to the process that opened it: a forked child starts with an empty pool
(the parent's connections forgotten there, never closed), a connection of another process
borrowed all the same is replaced by a new one, and job processes are spawned with their own
store. An in-memory SQLite store is one connection that
every thread of the process takes in turn (nothing else can see that database).

Example::

    with Store("sqlite:///catalog.sqlite3") as store:
        store.migrate()
        with store.write() as conn:
            users.create(conn, name="ana", roles=["Analyst"], assigned_by="cli")
"""

from __future__ import annotations

import os
import threading
import time
import weakref
from collections import Counter
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, Engine, Select, create_engine, event, inspect
from sqlalchemy.engine import make_url
from sqlalchemy.exc import DBAPIError, DisconnectionError
from sqlalchemy.exc import TimeoutError as PoolTimeout
from sqlalchemy.pool import QueuePool, StaticPool
from sqlalchemy.sql.compiler import SQLCompiler

from catalog_nb.contract import ErrorCode
from catalog_nb.server.errors import StoreBusy
from catalog_nb.server.store import libpq
from catalog_nb.server.store.changes import CHANGED_INFO_KEY, changed, count_changes, note_change
from catalog_nb.server.store.common import stored_json
from catalog_nb.server.store.migrations import migrate
from catalog_nb.server.store.schema import store_generations

__all__ = ["Store", "busy_error", "changed", "is_busy", "note_change", "share_write_turns"]

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
#: SQLite connections are files of this process, not server sessions: a SQLite store keeps
#: ``pool_size + max_overflow`` of them open and opens more without waiting when every one is
#: in use (each thread serving a request holds one at most, so the threads bound them).
SQLITE_UNBOUNDED_OVERFLOW = -1
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


#: held_first's answer when its libpq way did not run the statement.
_NOT_RUN = object()
#: libpq's ExecStatus values (psycopg.pq.ExecStatus) held_first's libpq way expects.
_PQ_COMMAND_OK = 1
_PQ_TUPLES_OK = 2
#: libpq's PG_DIAG_SQLSTATE field, and the SQLSTATE of a name already prepared on the session
#: (by this store before a failed read).
_PQ_DIAG_SQLSTATE = ord("C")
_PG_DUPLICATE_PREPARED = b"42P05"

#: Host names of a PostgreSQL server on this machine (``Store.quick_single_reads``).
_LOCAL_HOSTS = frozenset({"localhost", "127.0.0.1", "::1"})
#: The longest a held connection's read waits for a lock (only a schema change takes one a
#: SELECT waits for): it runs on the event loop, which must not stall behind a migration.
HELD_LOCK_TIMEOUT_MS = 1000

_BUMP_CATALOG = (store_generations.update()
                 .where(store_generations.c.name == "catalog")
                 .values(generation=store_generations.c.generation + 1))


def _owned_by_this_process(engine: Engine) -> None:
    """Make the pool of ``engine`` hand out only connections this process opened.

    A forked child inherits the parent's pool with its open sockets and file handles; using one
    from both processes corrupts the protocol stream (PostgreSQL) or the file locks (SQLite).
    Each connection remembers the process that opened it, and one borrowed in another process
    is dropped (without closing the parent's handle) and replaced by a fresh one.
    """

    @event.listens_for(engine, "connect")
    def _remember(_dbapi_connection: Any, record: Any) -> None:
        record.info["pid"] = os.getpid()

    @event.listens_for(engine, "checkout")
    def _check(_dbapi_connection: Any, record: Any, proxy: Any) -> None:
        pid = os.getpid()
        if record.info.get("pid") != pid:
            # Detached: the pool forgets it without closing the parent's handle.
            record.dbapi_connection = proxy.dbapi_connection = None
            raise DisconnectionError(
                f"connection opened by process {record.info.get('pid')}, borrowed in {pid}")


#: Every store of this process, so that a forked child starts with none of their connections.
_STORES: weakref.WeakSet[Store] = weakref.WeakSet()


def _after_fork_in_child() -> None:
    for store in list(_STORES):
        store._forget_parent()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


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
        #: Whether a read never waits for other work: SQLite in WAL mode (readers take no lock a
        #: writer holds) on a file of this machine, with a pool that never makes a thread wait
        #: for a connection. A short read may then run on the event loop (``deps.read_quickly``).
        self.quick_reads = self.dialect == "sqlite" and not self.in_memory
        host = make_url(url).host
        #: Whether a read of one statement may run on the event loop, on a connection the
        #: thread keeps (``single(held=True)``): where any short read may, and on a PostgreSQL
        #: server of this machine (a round trip costs less than handing the read to a thread,
        #: and a SELECT waits for no lock but a schema change's, which the held connection
        #: gives up on after HELD_LOCK_TIMEOUT_MS).
        self.quick_single_reads = self.quick_reads or (
            self.dialect == "postgresql"
            and (not host or host.startswith("/") or host in _LOCAL_HOSTS))
        # The one connection of an in-memory store, held by one thread's transactions at a time
        # (re-entrant: a nested transaction of that thread is a savepoint on it).
        self._memory_lock = threading.RLock()
        self._memory_conn = threading.local()
        #: Whether the store has its generation counters (looked up until it has).
        self._has_generations = False
        # Connections threads keep for their single reads (Store.single(held=True)).
        self._held = threading.local()
        self._held_all: list[Connection] = []
        self._held_lock = threading.Lock()
        # The event loop's connection (Store.loop_connection), and the process that opened it.
        self._loop_conn: Connection | None = None
        self._loop_pid = 0
        # Statements of held_first, compiled for this store's dialect, and the names they are
        # prepared under on psycopg's connections (Store._libpq_first).
        self._compiled: dict[Select[Any], SQLCompiler] = {}
        self._numeric: dict[Select[Any], tuple[bytes, bytes, tuple[str, ...]]] = {}
        self.engine = self._make_engine(url)
        #: Whether held_first runs prepared statements through psycopg's libpq connection.
        self._libpq = self.engine.dialect.driver == "psycopg"
        _STORES.add(self)

    def _make_engine(self, url: str) -> Engine:
        # hide_parameters: a failed statement's bound values (passwords, whole payloads) never
        # reach an exception message, and so never a log line.
        if self.dialect != "sqlite":
            # lock_timeout makes a writer stuck behind a lock give up like SQLite's busy
            # timeout does, so both stores answer a long wait with the same 503.
            lock_ms = int(self.busy_timeout * 1000)
            connect_args: dict[str, Any] = {}
            options: dict[str, Any] = {}
            if self.dialect == "postgresql":
                connect_args["options"] = f"-c lock_timeout={lock_ms}"
                options["json_serializer"] = stored_json
            if self.dialect == "postgresql" and "application_name" not in make_url(url).query:
                # Names who holds a connection in pg_stat_activity (requests, jobs, the CLI).
                connect_args["application_name"] = self.application_name
            engine = create_engine(
                url, pool_pre_ping=True, hide_parameters=True,
                pool_size=self.pool_size, max_overflow=self.max_overflow,
                connect_args=connect_args, **options,
            )
            _owned_by_this_process(engine)
            count_changes(engine)
            return engine
        database = make_url(url).database
        if self.in_memory:
            # One connection is the whole database: every thread uses it in turn (Store.read
            # and Store.write take _memory_lock), and it lives until the store is disposed.
            engine = create_engine(
                url, poolclass=StaticPool, hide_parameters=True,
                connect_args={"timeout": self.busy_timeout, "check_same_thread": False},
            )
        else:
            if database:
                Path(database).parent.mkdir(parents=True, exist_ok=True)
            engine = create_engine(
                url, poolclass=QueuePool, hide_parameters=True,
                pool_size=self.pool_size + self.max_overflow,
                max_overflow=SQLITE_UNBOUNDED_OVERFLOW,
                # Borrowed by one thread at a time, returned between requests.
                connect_args={"timeout": self.busy_timeout, "check_same_thread": False},
            )
            _owned_by_this_process(engine)
        count_changes(engine)
        busy_ms = int(self.busy_timeout * 1000)

        @event.listens_for(engine, "connect")
        def _on_connect(dbapi_connection: Any, _record: Any) -> None:
            # Once per connection, which the pool then keeps. Take over transaction control
            # from the driver so BEGIN IMMEDIATE can be used: a deferred transaction that later
            # writes can fail at once with "database is locked" instead of waiting its turn.
            dbapi_connection.isolation_level = None
            cursor = dbapi_connection.cursor()
            cursor.execute("PRAGMA foreign_keys=ON")
            if not self.in_memory:
                cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute(f"PRAGMA busy_timeout={busy_ms}")
            cursor.close()

        @event.listens_for(engine, "begin")
        def _on_begin(conn: Connection) -> None:
            options = conn.get_execution_options()
            if options.get("catalog_single", False):
                return  # one statement, its own implicit transaction (Store.single)
            conn.exec_driver_sql("BEGIN IMMEDIATE" if options.get("catalog_write") else "BEGIN")

        return engine

    def migrate(self) -> int:
        """Create or upgrade the schema; returns the schema version now in force."""
        with self.write() as conn:
            # Before migration 8 there is no counter to bump; a new schema is not a change
            # any process could have cached anyway.
            conn.execution_options(catalog_uncounted=True)
            return migrate(conn)

    @contextmanager
    def write(self) -> Iterator[Connection]:
        """One write transaction: committed when the block ends, rolled back on any error.

        A store too busy to take it raises :class:`StoreBusy` (503 with ``Retry-After``).
        """
        if self.in_memory:
            with self._memory_transaction(write=True) as conn:
                yield conn
            return
        fair = self.dialect == "sqlite"
        if fair:
            _TURNS.yield_if_batching(self.url)
            _TURNS.add(self.url, 1)
        waiting = fair
        try:
            with self.engine.connect() as conn:
                conn = conn.execution_options(catalog_write=True)
                conn.info[CHANGED_INFO_KEY] = False
                with conn.begin():
                    if waiting:  # BEGIN IMMEDIATE has taken the lock
                        _TURNS.add(self.url, -1)
                        waiting = False
                    yield conn
                    self._counted(conn)
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
    def read(self, *, snapshot: bool = False) -> Iterator[Connection]:
        """One read transaction (a consistent view for the whole block); StoreBusy as above.

        ``snapshot``: on PostgreSQL every statement of the block sees one snapshot (REPEATABLE
        READ, asked for with the BEGIN rather than by a statement of its own: one round trip
        fewer); READ COMMITTED takes one per statement. SQLite's read is one snapshot anyway.
        """
        if self.in_memory:
            with self._memory_transaction(write=False) as conn:
                yield conn
            return
        try:
            with self.engine.connect() as conn:
                if snapshot and self.dialect == "postgresql":
                    # Reset to the default when the connection goes back to the pool.
                    conn.execution_options(isolation_level="REPEATABLE READ")
                conn.info[CHANGED_INFO_KEY] = False
                with conn.begin():
                    yield conn
                    self._counted(conn)  # nothing, unless the block wrote after all
        except (DBAPIError, PoolTimeout) as exc:
            if is_busy(exc):
                raise busy_error() from exc
            raise

    @contextmanager
    def single(self, *, held: bool = False) -> Iterator[Connection]:
        """A connection for one read statement, outside any transaction: no BEGIN and no
        COMMIT around it (on PostgreSQL two round trips fewer). Only for a block that runs
        exactly one statement, which is its own consistent view; StoreBusy as above.

        ``held`` (where :attr:`quick_single_reads`): the calling thread keeps the connection
        for its next single read instead of returning it to the pool: borrowing and returning
        cost more than the read of a session. For the one thread that reads on every request
        (the event loop's); a connection outside a transaction holds nothing up.
        """
        if self.in_memory:
            with self._memory_transaction(write=False) as conn:
                yield conn
            return
        if held and self.quick_single_reads:
            conn = self._held_connection()
            conn.info[CHANGED_INFO_KEY] = False
            try:
                yield conn
                self._counted(conn)
            except (DBAPIError, PoolTimeout) as exc:
                self._held.conn = None  # in whatever state the failure left it: not again
                conn.close()
                if is_busy(exc):
                    raise busy_error() from exc
                raise
            return
        try:
            with self.engine.connect() as conn:
                conn.info[CHANGED_INFO_KEY] = False
                yield conn.execution_options(**self._single_options())
                self._counted(conn)
        except (DBAPIError, PoolTimeout) as exc:
            if is_busy(exc):
                raise busy_error() from exc
            raise

    def held_first(self, statement: Select[Any], params: dict[str, Any]) -> tuple[Any, ...] | None:
        """The first row of one read ``statement``, run like ``single(held=True)`` (only where
        :attr:`quick_single_reads`) but handed to the driver as compiled once for this store.

        For the statement every request runs (its session's): on that path SQLAlchemy's
        execution (cache key, context, result) cost several times the read itself (about 75 µs
        against 10 µs on SQLite). On psycopg the statement is prepared once per connection and
        run through libpq itself (:meth:`_libpq_first`): psycopg's cursor cost 40-90 µs of CPU
        per read, libpq 12. The engine's ``before_cursor_execute`` and ``after_cursor_execute``
        listeners still see the statement, as they would any other (without an execution
        context), so nothing counting or watching statements misses it.
        Only for columns of text and integers (values are not converted by SQLAlchemy types).
        """
        compiled = self._compiled.get(statement)
        if compiled is None:
            compiled = statement.compile(dialect=self.engine.dialect)
            self._compiled[statement] = compiled
        bound = compiled.construct_params(params)
        args: Any = (tuple(bound[name] for name in compiled.positiontup or ())
                     if compiled.positional else bound)
        sql = compiled.string
        conn = self._held_connection()
        dbapi = self.engine.dialect.loaded_dbapi
        try:
            driver = conn.connection.dbapi_connection
            cursor = driver.cursor()  # type: ignore[union-attr]
            try:
                for before in conn.dispatch.before_cursor_execute:
                    sql, args = before(conn, cursor, sql, args, None, False)
                row = self._libpq_first(driver, statement, bound) if self._libpq else _NOT_RUN
                if row is _NOT_RUN:
                    cursor.execute(sql, args)
                    found = cursor.fetchone()
                    row = None if found is None else tuple(found)
                for after in conn.dispatch.after_cursor_execute:
                    after(conn, cursor, sql, args, None, False)
            finally:
                cursor.close()
        except dbapi.Error as exc:
            self._held.conn = None  # in whatever state the failure left it: not again
            conn.close()
            wrapped = DBAPIError.instance(sql, args, exc, dbapi.Error, hide_parameters=True,
                                          dialect=self.engine.dialect)
            if is_busy(wrapped):
                raise busy_error() from exc
            raise wrapped from exc
        return row  # type: ignore[return-value]

    def _libpq_first(self, driver: Any, statement: Select[Any], bound: Mapping[str, Any]) -> Any:
        """The first row of ``statement`` through libpq on psycopg's connection, prepared on it
        the first time; ``_NOT_RUN`` when this way does not apply (a parameter or column type
        it does not convert, a failure: psycopg's cursor then runs the statement and raises
        its error as it always does)."""
        numeric = self._numeric.get(statement)
        if numeric is None:
            # $1, $2... as libpq's prepared statements take them.
            dialect = type(self.engine.dialect)(paramstyle="numeric_dollar")  # type: ignore[call-arg]
            compiled = statement.compile(dialect=dialect)
            numeric = (f"catalog_held_{len(self._numeric)}".encode(), compiled.string.encode(),
                       tuple(compiled.positiontup or ()))
            self._numeric[statement] = numeric
        name, sql, order = numeric
        encoded = []
        for arg in (bound[key] for key in order):
            if isinstance(arg, str):
                encoded.append(arg.encode())
            elif isinstance(arg, int) and not isinstance(arg, bool):
                encoded.append(str(arg).encode())
            else:
                return _NOT_RUN
        pgconn = driver.pgconn
        prepared: set[bytes] = self._held.prepared
        if name not in prepared:
            made = pgconn.prepare(name, sql)
            if (made.status != _PQ_COMMAND_OK
                    and made.error_field(_PQ_DIAG_SQLSTATE) != _PG_DUPLICATE_PREPARED):
                return _NOT_RUN
            prepared.add(name)
        result = pgconn.exec_prepared(name, encoded)
        if result.status != _PQ_TUPLES_OK:
            prepared.discard(name)  # a statement gone from the session is prepared again
            return _NOT_RUN
        if not result.ntuples:
            return None
        row = libpq.row(result, 0, driver.info.encoding)
        return _NOT_RUN if row is None else row

    def _single_options(self) -> dict[str, Any]:
        """Execution options of a connection for single statements: no BEGIN of ours, and on
        PostgreSQL the driver's autocommit (no transaction it opens either)."""
        if self.dialect == "sqlite":
            return {"catalog_single": True}
        return {"catalog_single": True, "isolation_level": "AUTOCOMMIT"}

    def _held_connection(self) -> Connection:
        """The calling thread's held connection (see :meth:`single`), opened on first use and
        again in a forked child (the parent's is left alone there, never used)."""
        conn: Connection | None = getattr(self._held, "conn", None)
        if conn is not None and self._held.pid == os.getpid() and not conn.closed:
            return conn
        conn = self.engine.connect().execution_options(**self._single_options())
        if self.dialect == "postgresql":
            conn.exec_driver_sql(f"SET lock_timeout = {HELD_LOCK_TIMEOUT_MS}")
        self._held.conn, self._held.pid = conn, os.getpid()
        self._held.prepared = set()  # statement names prepared on it (Store._libpq_first)
        with self._held_lock:
            self._held_all = [c for c in self._held_all if not c.closed] + [conn]
        return conn

    def loop_connection(self) -> Connection:
        """The event loop's own connection for reads it makes without waiting for them
        (``sessions.SessionReads``), outside any transaction; opened on first use and again in
        a forked child, closed by :meth:`dispose`. Apart from the held connections: a read in
        flight on it must not meet another on the same connection."""
        conn = self._loop_conn
        if conn is not None and self._loop_pid == os.getpid() and not conn.closed:
            return conn
        conn = self.engine.connect().execution_options(**self._single_options())
        if self.dialect == "postgresql":
            conn.exec_driver_sql(f"SET lock_timeout = {HELD_LOCK_TIMEOUT_MS}")
        self._loop_conn, self._loop_pid = conn, os.getpid()
        with self._held_lock:
            self._held_all = [c for c in self._held_all if not c.closed] + [conn]
        return conn

    def drop_loop_connection(self) -> None:
        """Close the loop's connection (after a failure on it); the next use opens another."""
        conn, self._loop_conn = self._loop_conn, None
        if conn is not None and self._loop_pid == os.getpid() and not conn.closed:
            conn.invalidate()
            conn.close()

    def _forget_parent(self) -> None:
        """In a forked child: drop the parent's connections without closing them (closing a
        PostgreSQL connection says goodbye on the parent's socket and ends its session)."""
        self.engine.dispose(close=False)
        self._held = threading.local()
        self._held_all = []
        self._held_lock = threading.Lock()
        self._loop_conn = None

    @contextmanager
    def _memory_transaction(self, *, write: bool) -> Iterator[Connection]:
        # The in-memory database is one connection: a thread takes it for its transaction;
        # a transaction nested in one of the same thread becomes a savepoint of it.
        with self._memory_lock:
            outer: Connection | None = getattr(self._memory_conn, "conn", None)
            if outer is not None:
                with outer.begin_nested():
                    yield outer
                return
            with self.engine.connect() as conn:
                conn = conn.execution_options(catalog_write=write)
                conn.info[CHANGED_INFO_KEY] = False
                self._memory_conn.conn = conn
                try:
                    with conn.begin():
                        yield conn
                        self._counted(conn)
                finally:
                    self._memory_conn.conn = None

    def _counted(self, conn: Connection) -> None:
        """Bump the catalog generation when the transaction about to commit changed what the
        catalog holds: the last statement before COMMIT, so on PostgreSQL the counter's row is
        locked only while the transaction commits, and the change and the new generation
        become visible together."""
        if not conn.info.pop(CHANGED_INFO_KEY, False):
            return
        if conn.get_execution_options().get("catalog_uncounted"):
            return
        if not self._has_generations:
            # A store not migrated yet (or a test's own schema) has no counter to bump.
            self._has_generations = inspect(conn).has_table(store_generations.name)
            if not self._has_generations:
                return
        conn.execute(_BUMP_CATALOG)

    def dispose(self) -> None:
        """Close every pooled connection."""
        with self._held_lock:
            held, self._held_all = self._held_all, []
        for conn in held:
            if not conn.closed:
                conn.close()
        self.engine.dispose()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.dispose()
