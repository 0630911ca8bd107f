"""Login sessions (the throttling of failed logins is in ``store.throttle``).

Sessions live in the store so several service processes can share them. Only a SHA-256 of each
token is kept; the token itself exists only in the client's cookie.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection, bindparam, delete, insert, select, update

from catalog_nb.contract import ErrorCode
from catalog_nb.server.errors import Unauthorized
from catalog_nb.server.store.schema import sessions, store_generations

if TYPE_CHECKING:
    from catalog_nb.server.store import Store

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
