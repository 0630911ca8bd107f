"""All-or-nothing list writes: the ``/list`` forms that write several items in one transaction,
with one audit event per item written, or one FAILURE event naming the item that was refused.

Kept apart from the use cases that use it (today the tag and tag domain lists of
``services.tag_writes``) because the audit trail of a list write is the same whatever the items.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from sqlalchemy import Connection

from catalog_nb.contract import AuditAction, AuditObjectType, AuditOutcome
from catalog_nb.server.auditing import record_event
from catalog_nb.server.errors import ServiceError
from catalog_nb.server.security import Caller
from catalog_nb.server.store import Store


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
