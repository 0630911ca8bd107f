"""Small helpers every store module shares: keys, clocks, name folding, unique violations."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy import Connection, text
from sqlalchemy.exc import IntegrityError

from catalog_nb.contract import ErrorCode
from catalog_nb.server.errors import Conflict


def new_key() -> str:
    """A fresh opaque key."""
    return uuid.uuid4().hex


def now_ms() -> int:
    """The current time in epoch milliseconds."""
    return int(time.time() * 1000)


def fold(name: str) -> str:
    """The case-insensitive form of a name, as kept in ``name_fold`` columns."""
    return name.casefold()


#: Key of the PostgreSQL advisory lock that serialises changes to role memberships.
_MEMBERSHIP_LOCK = 7_242_001


def lock_memberships(conn: Connection) -> None:
    """Serialise transactions that take roles away, until the end of this transaction.

    The "at least one role" and "at least one administrator" rules count rows after a change.
    Under PostgreSQL's READ COMMITTED two concurrent removals could each see the other's row
    and both pass; this lock makes the second wait and then count what the first committed.
    SQLite already serialises writers (BEGIN IMMEDIATE), so it needs nothing here.
    """
    if conn.dialect.name == "postgresql":
        conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _MEMBERSHIP_LOCK})


@contextmanager
def unique_name(kind: str, name: str) -> Iterator[None]:
    """Turn a unique-constraint violation inside the block into a 409 naming the duplicate.

    The constraint, not a prior SELECT, decides: two requests racing to create the same name
    cannot both succeed.
    """
    try:
        yield
    except IntegrityError as exc:
        raise Conflict(
            f"A {kind} named '{name}' already exists (names are compared case-insensitively).",
            ErrorCode.DUPLICATE_NAME,
        ) from exc
