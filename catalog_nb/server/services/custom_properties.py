"""Writing custom property definitions (Administrator), audited.

A body may be a definition as read (``services.read_back``): ``key`` and the times are ignored
on create and when unchanged, and refused by name when changed. A required property sent as
null is refused by name (absent means unchanged).
"""

from __future__ import annotations

from typing import Any

from catalog_nb.contract import AuditAction, AuditObjectType, ErrorCode
from catalog_nb.server.auditing import audited
from catalog_nb.server.errors import BadRequest
from catalog_nb.server.schemas.custom_properties import (
    CustomPropertyCreate,
    CustomPropertyUpdate,
    custom_property_out,
)
from catalog_nb.server.security import Caller, require_admin
from catalog_nb.server.services.read_back import refuse_changed
from catalog_nb.server.store import Store
from catalog_nb.server.store import custom_properties as property_store

_WRITE = "Defining custom properties"


def create(store: Store, caller: Caller, body: CustomPropertyCreate) -> dict[str, Any]:
    """Define a custom property (Administrator); 409 when the name is taken."""
    with audited(store, caller, AuditAction.CREATE, AuditObjectType.CUSTOM_PROPERTY,
                 name=body.name) as w:
        require_admin(caller, _WRITE)
        row = property_store.create(w.conn, body.values())
        w.target(row["key"], row["name"])
    return row


def update(store: Store, caller: Caller, key: str, body: CustomPropertyUpdate) -> dict[str, Any]:
    """Change a definition (Administrator); a type change must fit the stored values (409)."""
    with audited(store, caller, AuditAction.UPDATE, AuditObjectType.CUSTOM_PROPERTY,
                 key=key) as w:
        require_admin(caller, _WRITE)
        nulls = body.null_required()
        if nulls:
            raise BadRequest(f"These properties cannot be null: {', '.join(nulls)}.",
                             ErrorCode.INVALID_PAYLOAD)
        if body.read_back:
            refuse_changed(body, custom_property_out(property_store.get(w.conn, key)))
        row = property_store.update_definition(w.conn, key, body.values())
        w.target(row["key"], row["name"])
    return row
