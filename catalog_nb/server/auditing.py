"""Audited writes: one transaction per write, and an audit event whatever the outcome.

A successful write records its SUCCESS event inside its own transaction, so the change and its
record commit together. A refused write rolls back and records a FAILURE event (with the reason)
in a transaction of its own. A ``/list`` write (:func:`audited_all`) is all or nothing: one
SUCCESS event per item written, or one FAILURE event naming the item that was refused.

Example (in a route)::

    with audited(store, caller, AuditAction.CREATE, AuditObjectType.USER, name=body.name) as w:
        user = users.create(w.conn, ...)
        w.target(user.key, user.name)
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from sqlalchemy import Connection

from catalog_nb.contract import AuditAction, AuditObjectType, AuditOutcome
from catalog_nb.server.errors import ServiceError
from catalog_nb.server.security import Caller
from catalog_nb.server.store import Store
from catalog_nb.server.store import audit as audit_store
from catalog_nb.server.store.common import now_ms


@dataclass
class Write:
    """The open transaction of an audited write, and what it acted on."""

    conn: Connection
    object_key: str | None
    object_name: str | None
    message: str | None = None

    def target(self, key: str | None, name: str | None = None) -> None:
        """Name the object the write acted on (known only once it is created)."""
        self.object_key = key
        if name is not None:
            self.object_name = name


def record_event(
    store: Store,
    *,
    actor: Caller | None,
    actor_name: str | None,
    action: AuditAction,
    actor_key: str | None = None,
    object_type: AuditObjectType,
    object_key: str | None,
    object_name: str | None,
    outcome: AuditOutcome,
    message: str | None,
    client: str | None,
    conn: Connection | None = None,
) -> None:
    """Append one audit event, in ``conn`` when given, else in a transaction of its own."""
    event = {
        "time_ms": now_ms(),
        "user_key": actor.key if actor else actor_key,
        "user_name": actor.name if actor else actor_name,
        "action": action.value,
        "object_type": object_type.value,
        "object_key": object_key,
        "object_name": object_name,
        "outcome": outcome.value,
        "message": message,
        "client_address": client,
    }
    if conn is not None:
        audit_store.record(conn, **event)
        return
    with store.write() as own:
        audit_store.record(own, **event)


@contextmanager
def audited(
    store: Store,
    caller: Caller | None,
    action: AuditAction,
    object_type: AuditObjectType,
    *,
    key: str | None = None,
    name: str | None = None,
    actor_name: str | None = None,
) -> Iterator[Write]:
    """Run a write in one transaction and record it in the audit trail (see module doc)."""
    write: Write | None = None
    try:
        with store.write() as conn:
            write = Write(conn, key, name)
            yield write
            record_event(
                store, actor=caller, actor_name=actor_name, action=action,
                object_type=object_type, object_key=write.object_key,
                object_name=write.object_name, outcome=AuditOutcome.SUCCESS,
                message=write.message, client=caller.client if caller else None, conn=conn,
            )
    except ServiceError as exc:
        record_event(
            store, actor=caller, actor_name=actor_name, action=action, object_type=object_type,
            object_key=write.object_key if write else key,
            object_name=write.object_name if write else name,
            outcome=AuditOutcome.FAILURE, message=f"{exc.code}: {exc.message}",
            client=caller.client if caller else None,
        )
        raise


@dataclass
class Batch:
    """The open transaction of an all-or-nothing list write, and the items written so far."""

    conn: Connection
    done: list[tuple[str, str]] = field(default_factory=list)
    index: int | None = None
    name: str | None = None


@contextmanager
def audited_all(
    store: Store, caller: Caller, action: AuditAction, object_type: AuditObjectType, size: int
) -> Iterator[Batch]:
    """A list write in one transaction: one SUCCESS event per item committed with it, or one
    FAILURE event naming the item that was refused (and nothing written)."""
    batch: Batch | None = None
    try:
        with store.write() as conn:
            batch = Batch(conn)
            yield batch
            for key, name in batch.done:
                record_event(
                    store, actor=caller, actor_name=None, action=action,
                    object_type=object_type, object_key=key, object_name=name,
                    outcome=AuditOutcome.SUCCESS, message=f"one of a list of {size}",
                    client=caller.client, conn=conn,
                )
    except ServiceError as exc:
        index = batch.index if batch else None
        # Outside the rolled-back transaction, so the refusal is on record.
        record_event(
            store, actor=caller, actor_name=None, action=action, object_type=object_type,
            object_key=None, object_name=batch.name if batch else None,
            outcome=AuditOutcome.FAILURE,
            message=f"{exc.code}: item {index} of a list of {size}: {exc.message}",
            client=caller.client,
        )
        if index is None:  # refused before any item (e.g. the caller's level): no index to name
            raise
        raise type(exc)(f"Item {index}: {exc.message}", exc.code, headers=exc.headers,
                        **{**exc.extra, "index": index}) from exc
