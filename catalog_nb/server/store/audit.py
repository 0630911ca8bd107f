"""The audit trail: one event per login and per write, with its outcome."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import ColumnElement, Connection, delete, func, insert, or_, select

from catalog_nb.contract import ErrorCode
from catalog_nb.server.errors import NotFound
from catalog_nb.server.store.common import new_key
from catalog_nb.server.store.schema import audit_events


@dataclass
class AuditFilter:
    """Criteria of an audit search; None means any."""

    user_name: str | None = None
    action: str | None = None
    object_type: str | None = None
    object_key: str | None = None
    outcome: str | None = None
    from_ms: int | None = None
    to_ms: int | None = None

    def clauses(self) -> list[ColumnElement[bool]]:
        c = audit_events.c
        found: list[ColumnElement[bool]] = []
        if self.user_name is not None:
            name = self.user_name
            found.append(or_(c.user_name == name, func.lower(c.user_name) == name.lower()))
        for column, value in (
            (c.action, self.action),
            (c.object_type, self.object_type),
            (c.object_key, self.object_key),
            (c.outcome, self.outcome),
        ):
            if value is not None:
                found.append(column == value)
        if self.from_ms is not None:
            found.append(c.time_ms >= self.from_ms)
        if self.to_ms is not None:
            found.append(c.time_ms <= self.to_ms)
        return found


def record(conn: Connection, **event: Any) -> str:
    """Append an event (time_ms, user_key, user_name, action, object_type, object_key,
    object_name, outcome, message, client_address); returns its key."""
    key = new_key()
    conn.execute(insert(audit_events).values(key=key, **event))
    return key


def page(
    conn: Connection, criteria: AuditFilter, start: int, size: int
) -> tuple[list[dict[str, Any]], int]:
    """One page of matching events, newest first, and how many match in all."""
    where = criteria.clauses()
    total = conn.execute(select(func.count()).select_from(audit_events).where(*where)).scalar_one()
    rows = conn.execute(
        select(audit_events)
        .where(*where)
        .order_by(audit_events.c.time_ms.desc(), audit_events.c.key)
        .offset(start)
        .limit(size)
    ).mappings()
    return [dict(r) for r in rows], int(total)


def get(conn: Connection, key: str) -> dict[str, Any]:
    """One event; 404 when there is none."""
    row = conn.execute(select(audit_events).where(audit_events.c.key == key)).mappings().first()
    if row is None:
        raise NotFound(
            f"There is no audit event with key '{key}'.", ErrorCode.AUDIT_EVENT_NOT_FOUND
        )
    return dict(row)


def remove(conn: Connection, key: str) -> dict[str, Any]:
    """Delete one event; 404 when there is none."""
    event = get(conn, key)
    conn.execute(delete(audit_events).where(audit_events.c.key == key))
    return event
