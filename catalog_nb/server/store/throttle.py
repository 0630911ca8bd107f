"""Throttling of failed logins: progressive delays per client, counted atomically in the store.

Two scopes count failures, each in one row of ``login_throttle``:

- **a user name tried from one client address**: after ``account_failures`` failures that client
  waits ``lockout_ms`` before it may try the name again, and each further failure doubles the
  wait (up to 64 times). The same user logging in from another address is not affected, so a
  stranger cannot lock someone out of their own account by guessing at it;
- **one client address, whatever the names**: after ``client_failures`` failures the client
  waits likewise for every name (password spraying: one guess at each of many names).

A count is forgotten once its scope has been quiet for ``lockout_ms`` after its last failure or
lock. An attempt is counted *before* its password is checked (:func:`reserve`), in the same
transaction that reads the counts, with the rows locked: so parallel attempts cannot all pass a
check that only one of them should have passed. A successful login gives its reservation back
(:func:`release`).

Example::

    with store.write() as conn:
        wait = throttle.reserve(conn, "ana", "10.0.0.7", policy, now_ms())
    if wait is None and password_ok:
        with store.write() as conn:
            throttle.release(conn, "ana", "10.0.0.7", policy, now_ms())
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, delete, select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from catalog_nb.server.store.schema import login_throttle

#: The longest wait, as a multiple of ``lockout_ms``.
MAX_DOUBLINGS = 6


@dataclass(frozen=True)
class ThrottlePolicy:
    """How many failures each scope allows before it waits, and the first wait."""

    account_failures: int
    client_failures: int
    lockout_ms: int

    def lock_after(self, failures: int, limit: int, now: int) -> int | None:
        """When a scope with ``failures`` (this one included) may try again, or None."""
        if failures < limit:
            return None
        return now + self.lockout_ms * 2 ** min(failures - limit, MAX_DOUBLINGS)


def _scopes(name_fold: str, client: str | None) -> tuple[str, str]:
    where = client or "unknown"
    return f"account:{where} {name_fold}", f"client:{where}"


#: How many times a row is made again when a successful login deleted it meanwhile.
_ATTEMPTS = 10


def _lock_rows(conn: Connection, scopes: tuple[str, ...], now: int) -> dict[str, Any]:
    """The rows of ``scopes``, created when missing, locked until the transaction ends.

    SQLite writers already run one at a time (BEGIN IMMEDIATE); PostgreSQL takes the row locks.
    There, a successful login of the same name (:func:`release`) can delete an account's row
    between this insert, which found it, and the lock, which then finds nothing: the insert is
    made again (the deletion is committed by then, so it creates the row).
    """
    insert = pg_insert if conn.dialect.name == "postgresql" else sqlite_insert
    for _ in range(_ATTEMPTS):
        conn.execute(
            insert(login_throttle)
            .values([{"scope": s, "failures": 0, "last_ms": now} for s in scopes])
            .on_conflict_do_nothing(index_elements=["scope"])
        )
        rows = conn.execute(
            select(login_throttle).where(login_throttle.c.scope.in_(scopes))
            .order_by(login_throttle.c.scope).with_for_update()
        ).mappings().all()
        if len(rows) == len(scopes):
            return {str(r["scope"]): r for r in rows}
    raise RuntimeError(f"login throttle rows {scopes} deleted {_ATTEMPTS} times while locked")


def _current(row: Any, policy: ThrottlePolicy, now: int) -> int:
    """The failures still remembered for a row: none once it has been quiet long enough."""
    quiet_since = max(row["last_ms"], row["locked_until_ms"] or 0)
    return 0 if now - quiet_since > policy.lockout_ms else int(row["failures"])


def reserve(
    conn: Connection, name_fold: str, client: str | None, policy: ThrottlePolicy, now: int
) -> float | None:
    """Count a login attempt against its scopes before its password is checked.

    Returns the seconds to wait when a scope is locked (the attempt is then not counted and its
    password must not be checked), else None.
    """
    account, whole_client = _scopes(name_fold, client)
    rows = _lock_rows(conn, (account, whole_client), now)
    waits = [r["locked_until_ms"] - now for r in rows.values()
             if r["locked_until_ms"] is not None and r["locked_until_ms"] > now]
    if waits:
        return max(waits) / 1000
    for scope, limit in ((account, policy.account_failures),
                         (whole_client, policy.client_failures)):
        failures = _current(rows[scope], policy, now) + 1
        conn.execute(
            update(login_throttle).where(login_throttle.c.scope == scope).values(
                failures=failures, last_ms=now,
                locked_until_ms=policy.lock_after(failures, limit, now),
            )
        )
    return None


def release(
    conn: Connection, name_fold: str, client: str | None, policy: ThrottlePolicy, now: int
) -> None:
    """Give back a successful attempt's reservation: the name's count from this client is
    forgotten, and the client's own count loses the attempt (and any lock it caused)."""
    account, whole_client = _scopes(name_fold, client)
    conn.execute(delete(login_throttle).where(login_throttle.c.scope == account))
    row = _lock_rows(conn, (whole_client,), now)[whole_client]
    failures = max(0, _current(row, policy, now) - 1)
    locked = row["locked_until_ms"]
    if failures < policy.client_failures:
        locked = None
    conn.execute(
        update(login_throttle).where(login_throttle.c.scope == whole_client)
        .values(failures=failures, locked_until_ms=locked)
    )


def purge(conn: Connection, policy: ThrottlePolicy, now: int) -> int:
    """Delete the rows that remember nothing any more (quiet for ``lockout_ms``); how many."""
    quiet = now - policy.lockout_ms
    result = conn.execute(
        delete(login_throttle).where(
            (login_throttle.c.last_ms < quiet)
            & ((login_throttle.c.locked_until_ms.is_(None))
               | (login_throttle.c.locked_until_ms < quiet))
        )
    )
    return int(result.rowcount or 0)
