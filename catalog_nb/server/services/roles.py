"""Writing roles (Administrator), audited.

A body may be a role as read (``services.read_back``): its read-only properties are ignored
when unchanged and refused by name when changed; on create only ``type`` is checked. A property
that cannot be null is refused by name when sent as null (absent means unchanged).
"""

from __future__ import annotations

from pydantic.alias_generators import to_camel

from catalog_nb.contract import AuditAction, AuditObjectType
from catalog_nb.server.auditing import audited
from catalog_nb.server.errors import BadRequest
from catalog_nb.server.schemas.roles import RoleCreate, RoleUpdate, role_out
from catalog_nb.server.security import Caller, require_admin
from catalog_nb.server.services.read_back import refuse_changed, refuse_on_create
from catalog_nb.server.store import Store
from catalog_nb.server.store import roles as role_store
from catalog_nb.server.store.roles import RoleRecord

_WRITE = "Changing roles"

_NOT_NULL = {
    "name", "access_level", "default_role", "metadata_access_option", "data_access_option",
    "job_template_creation_allowed", "job_execution_allowed",
}


def create(store: Store, caller: Caller, body: RoleCreate) -> RoleRecord:
    """Create a role (Administrator); access options default to RESTRICTED."""
    values, grants = body.split()
    for column in ("metadata_access_option", "data_access_option"):
        if values.get(column) is None:
            values[column] = "RESTRICTED"
    with audited(store, caller, AuditAction.CREATE, AuditObjectType.ROLE, name=body.name) as w:
        require_admin(caller, _WRITE)
        refuse_on_create(body, {"type": "role"})
        record = role_store.create(w.conn, values, grants)
        w.target(record.key, record.name)
    return record


def update(store: Store, caller: Caller, key: str, body: RoleUpdate) -> RoleRecord:
    """Change a role (Administrator); absent properties stay unchanged."""
    values, grants = body.split()
    nulls = sorted(k for k, v in values.items() if v is None and k in _NOT_NULL)
    with audited(store, caller, AuditAction.UPDATE, AuditObjectType.ROLE, key=key) as w:
        require_admin(caller, _WRITE)
        if nulls:
            raise BadRequest(
                f"These properties cannot be null: {', '.join(to_camel(n) for n in nulls)}."
            )
        refuse_changed(body, role_out(role_store.get(w.conn, key)))
        record = role_store.update_role(w.conn, key, values, grants)
        w.target(record.key, record.name)
    return record
