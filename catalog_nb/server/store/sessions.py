"""Login sessions (the throttling of failed logins is in ``store.throttle``).

Sessions live in the store so several service processes can share them. Only a SHA-256 of each
token is kept; the token itself exists only in the client's cookie.
"""

from __future__ import annotations

import asyncio
import hashlib
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection, String, any_, bindparam, delete, insert, select, update
from sqlalchemy.dialects.postgresql import ARRAY

from catalog_nb.contract import ErrorCode
from catalog_nb.server.errors import Unauthorized
from catalog_nb.server.store import libpq
from catalog_nb.server.store.schema import sessions, store_generations

if TYPE_CHECKING:
    from catalog_nb.server.store.engine import Store

#: How stale ``last_seen_ms`` may get before a request refreshes it; saves a write per read.
TOUCH_INTERVAL_MS = 30_000


@dataclass(frozen=True)
class SessionPolicy:
    """Idle and absolute lifetimes of a session, in milliseconds."""

    idle_ms: int
    max_ms: int


def _hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def open_session(conn: Connection, user_key: str, client: str | None, now: int) -> str:
    """Start a session for a user and return its token (for the cookie)."""
    token = secrets.token_urlsafe(32)
    conn.execute(
        insert(sessions).values(
            token_hash=_hash(token),
            user_key=user_key,
            created_ms=now,
            last_seen_ms=now,
            client_address=client,
        )
    )
    return token


def _generation(name: str) -> Any:
    G = store_generations
    return select(G.c.generation).where(G.c.name == name).scalar_subquery().label(name)


#: Every request runs it: built once (building a statement costs more than running it).
_RESOLVE = select(
    sessions.c.user_key, sessions.c.created_ms, sessions.c.last_seen_ms,
    _generation("auth"), _generation("catalog"),
).where(sessions.c.token_hash == bindparam("token_hash"))


#: The sessions of several requests, with the same generations (``SessionReads``).
_RESOLVE_MANY = select(
    sessions.c.token_hash, sessions.c.user_key, sessions.c.created_ms, sessions.c.last_seen_ms,
    _generation("auth"), _generation("catalog"),
).where(sessions.c.token_hash == any_(bindparam("token_hashes", type_=ARRAY(String))))


@dataclass(frozen=True)
class LiveSession:
    """A live session as one request sees it, with the store's generations read in the same
    statement (``schema.store_generations``; None in a store without them: nothing read from it
    may then be cached)."""

    user_key: str
    #: Whether ``last_seen_ms`` is old enough that the request should refresh it.
    stale: bool
    #: Changes to users, roles and grants so far.
    generation: int | None
    #: Changes to the rest of the catalog so far.
    catalog_generation: int | None = None


def resolve(conn: Connection, token: str | None, policy: SessionPolicy, now: int) -> LiveSession:
    """The live session of ``token``, with the store's generations, in one statement.

    401 for a missing, unknown, ended or expired session. Reads only, so the common case costs
    no write; expired rows are purged at the next login.
    """
    token_hash = _token_hash(token)
    return _live(conn.execute(_RESOLVE, {"token_hash": token_hash}).first(), policy, now)


def resolve_held(store: Store, token: str | None, policy: SessionPolicy, now: int
                 ) -> LiveSession:
    """:func:`resolve` on the calling thread's held connection (``Store.held_first``), for
    the event loop of a store whose single reads may run there (``Store.quick_single_reads``):
    every request runs it, and that way it costs a fraction of a full SQLAlchemy execution."""
    token_hash = _token_hash(token)
    return _live(store.held_first(_RESOLVE, {"token_hash": token_hash}), policy, now)


def _token_hash(token: str | None) -> str:
    if not token:
        raise Unauthorized(
            "You are not logged in; log in with POST /api/v2/login and send the session cookie.",
            ErrorCode.AUTHENTICATION_REQUIRED,
        )
    return _hash(token)


def _live(row: Sequence[Any] | None, policy: SessionPolicy, now: int) -> LiveSession:
    if row is None:
        raise Unauthorized(
            "Your session is not valid (it ended or was never issued); log in again.",
            ErrorCode.AUTHENTICATION_REQUIRED,
        )
    user_key, created_ms, last_seen_ms, auth, catalog = row
    if now - last_seen_ms > policy.idle_ms or now - created_ms > policy.max_ms:
        raise Unauthorized("Your session has expired; log in again.", ErrorCode.SESSION_EXPIRED)
    # Refresh well within the idle timeout, even when that timeout is shorter than the interval.
    refresh_after = min(TOUCH_INTERVAL_MS, policy.idle_ms // 4)
    return LiveSession(str(user_key), now - last_seen_ms > refresh_after,
                       None if auth is None else int(auth),
                       None if catalog is None else int(catalog))


def touch(conn: Connection, token: str, now: int) -> None:
    """Record activity on a session (it pushes the idle expiry back)."""
    conn.execute(
        update(sessions).where(sessions.c.token_hash == _hash(token)).values(last_seen_ms=now)
    )


def close_session(conn: Connection, token: str) -> None:
    """End a session: its cookie no longer works, even if replayed."""
    conn.execute(delete(sessions).where(sessions.c.token_hash == _hash(token)))


def purge_expired(conn: Connection, policy: SessionPolicy, now: int) -> int:
    """Delete sessions past either lifetime; returns how many."""
    result = conn.execute(
        delete(sessions).where(
            (sessions.c.last_seen_ms < now - policy.idle_ms)
            | (sessions.c.created_ms < now - policy.max_ms)
        )
    )
    return int(result.rowcount or 0)


def close_user_sessions(conn: Connection, user_key: str, keep: str | None = None) -> None:
    """End every session of a user, except the one whose token is ``keep``."""
    query = delete(sessions).where(sessions.c.user_key == user_key)
    if keep:
        query = query.where(sessions.c.token_hash != _hash(keep))
    conn.execute(query)


#: The name :class:`SessionReads` prepares its statement under, on its own connection.
_PREPARED_NAME = b"catalog_sessions"
#: libpq's ExecStatus values (psycopg.pq.ExecStatus) and field code of the SQLSTATE.
_PQ_COMMAND_OK = 1
_PQ_TUPLES_OK = 2
_PQ_DIAG_SQLSTATE = ord("C")
#: SQLSTATEs of a name already prepared, and of one gone from the session (a pooler's DISCARD).
_PG_DUPLICATE_PREPARED = b"42P05"
_PG_UNKNOWN_PREPARED = b"26000"

Rows = dict[str, tuple[Any, ...]]


class _NotRead(Exception):
    """The libpq way did not answer; the statement is made again the ordinary way."""


class SessionReads:
    """The session reads of the requests one event loop serves on PostgreSQL (psycopg), made
    together and without blocking the loop: one statement for the sessions of all the requests
    that arrived while the previous one was on its way.

    A request waiting on the loop for its own round trip held up every other one: under 32
    connections the loop spent about 70% of its time waiting in libpq (py-spy; 450 µs a
    request, against 275 µs on SQLite, where the read takes 10 µs), and PostgreSQL parsed a
    statement per request. Nothing is cached here: each request's session row and the store's
    generations are read by a statement that starts after the request arrived, because a
    request joins only a read not sent yet. So a logout, a new password, a deleted user or an
    expiry committed before the request was sent refuses it, whichever process committed it.

    Any failure of the libpq way (a broken connection, a prepared statement gone) falls back
    to the ordinary execution in a worker thread, which raises the store's errors as every
    other read does (503 for a busy store).
    """

    def __init__(self, store: Store) -> None:
        self.store = store
        #: The read not sent yet, and the token hashes it will read.
        self._next: asyncio.Future[Rows] | None = None
        self._hashes: set[str] = set()
        self._runner: asyncio.Task[None] | None = None
        #: The connection the statement is prepared on, and the SQL and order of its
        #: parameters ($1, $2... as libpq takes them).
        self._prepared_on: Any = None
        compiled = _RESOLVE_MANY.compile(
            dialect=type(store.engine.dialect)(paramstyle="numeric_dollar"))  # type: ignore[call-arg]
        self._sql = compiled.string
        self._order = tuple(compiled.positiontup or ())
        self._bound = compiled.construct_params({"token_hashes": []})

    @staticmethod
    def applies(store: Store) -> bool:
        """Whether ``store`` reads its sessions this way: PostgreSQL through psycopg, where
        a session was read on the event loop before (``Store.quick_single_reads``)."""
        return (store.dialect == "postgresql" and store.quick_single_reads
                and store.engine.dialect.driver == "psycopg")

    async def resolve(self, token: str | None, policy: SessionPolicy, now: int) -> LiveSession:
        """:func:`resolve`, read with the sessions of the requests arriving meanwhile."""
        token_hash = _token_hash(token)
        batch = self._next
        if batch is None:
            batch = self._next = asyncio.get_running_loop().create_future()
            self._hashes = set()
        self._hashes.add(token_hash)
        if self._runner is None:
            self._runner = asyncio.get_running_loop().create_task(self._run())
        # Shielded: a request that goes away cancels its wait, not the others' read.
        rows = await asyncio.shield(batch)
        return _live(rows.get(token_hash), policy, now)

    async def _run(self) -> None:
        batch: asyncio.Future[Rows] | None = None
        try:
            while self._next is not None:
                batch, hashes = self._next, sorted(self._hashes)
                self._next, self._hashes = None, set()
                try:
                    rows = await self._read(hashes)
                except Exception as exc:  # noqa: BLE001 - each waiter raises it
                    batch.set_exception(exc)
                    batch.exception()  # retrieved: no warning when every waiter went away
                else:
                    batch.set_result(rows)
        finally:
            self._runner = None
            for left in (batch, self._next):  # only when the loop itself stops
                if left is not None and not left.done():
                    left.cancel()

    async def _read(self, hashes: list[str]) -> Rows:
        try:
            return await self._libpq_read(hashes)
        except _NotRead:
            pass
        except BaseException as exc:
            # Whatever state the connection was left in (an answer half read), it is not used
            # again.
            self._prepared_on = None
            self.store.drop_loop_connection()
            if not isinstance(exc, Exception):
                raise
        return await asyncio.to_thread(self._read_in_thread, hashes)

    def _read_in_thread(self, hashes: list[str]) -> Rows:
        with self.store.single() as conn:
            result = conn.execute(_RESOLVE_MANY, {"token_hashes": hashes})
            return {str(row[0]): tuple(row[1:]) for row in result}

    async def _libpq_read(self, hashes: list[str]) -> Rows:
        conn = self.store.loop_connection()
        driver = conn.connection.dbapi_connection
        pgconn = driver.pgconn  # type: ignore[union-attr]
        bound = dict(self._bound, token_hashes=hashes)
        # Hex digests: an array literal needs no quoting of them.
        encoded = [("{" + ",".join(value) + "}" if name == "token_hashes" else str(value)).encode()
                   for name, value in ((name, bound[name]) for name in self._order)]
        sql: str = self._sql
        args: Any = tuple(bound[name] for name in self._order)
        cursor = driver.cursor()  # type: ignore[union-attr]
        try:
            # The engine's statement listeners see this statement as they see any other.
            for before in conn.dispatch.before_cursor_execute:
                sql, args = before(conn, cursor, sql, args, None, False)
            if self._prepared_on is not pgconn:
                made = pgconn.prepare(_PREPARED_NAME, self._sql.encode())
                if (made.status != _PQ_COMMAND_OK
                        and made.error_field(_PQ_DIAG_SQLSTATE) != _PG_DUPLICATE_PREPARED):
                    raise _NotRead
                self._prepared_on = pgconn
            pgconn.send_query_prepared(_PREPARED_NAME, encoded)
            await _result_ready(pgconn)
            result = None
            while (last := pgconn.get_result()) is not None:
                result = last
            if result is None or result.status != _PQ_TUPLES_OK:
                if result is not None and (result.error_field(_PQ_DIAG_SQLSTATE)
                                           == _PG_UNKNOWN_PREPARED):
                    self._prepared_on = None
                raise _NotRead
            rows = _rows(result, driver.info.encoding)  # type: ignore[union-attr]
            for after in conn.dispatch.after_cursor_execute:
                after(conn, cursor, sql, args, None, False)
        finally:
            cursor.close()
        return rows


async def _result_ready(pgconn: Any) -> None:
    """Until libpq holds the whole answer of the query sent on ``pgconn``, the event loop
    serving other requests meanwhile."""
    loop = asyncio.get_running_loop()
    fd = pgconn.socket
    while True:
        pgconn.consume_input()
        if not pgconn.is_busy():
            return
        readable: asyncio.Future[None] = loop.create_future()
        loop.add_reader(fd, _set_once, readable)
        try:
            await readable
        finally:
            loop.remove_reader(fd)


def _set_once(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


def _rows(result: Any, encoding: str) -> Rows:
    """Rows of ``_RESOLVE_MANY`` by token hash, converted as psycopg would."""
    rows: Rows = {}
    for n in range(result.ntuples):
        row = libpq.row(result, n, encoding)
        if row is None:
            raise _NotRead
        rows[row[0]] = row[1:]
    return rows
