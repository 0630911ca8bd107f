"""Roles: create, read, update, delete (writes need Administrator).

Every signed-in user reads every role (role names are shown with users anyway), but only an
Administrator reads every role's grant lists whole: anyone else sees in ``dataSourceKeys``,
``virtualFolderKeys``, ``datasetKeys`` and ``domainKeys`` only the keys their own roles grant
(see :func:`~catalog_nb.server.store.visible.readable_roles`), so the keys of hidden data sources do
not leak. Their own roles read whole.
"""

from __future__ import annotations

from fastapi import APIRouter, Response

from catalog_nb.contract import AuditAction, AuditObjectType
from catalog_nb.server.auditing import audited
from catalog_nb.server.deps import CallerDep, StoreDep
from catalog_nb.server.route_aliases import alias_prefix
from catalog_nb.server.schemas.roles import RoleCreate, RoleOut, RoleUpdate, role_out
from catalog_nb.server.security import require_admin
from catalog_nb.server.services import roles
from catalog_nb.server.store import roles as role_store
from catalog_nb.server.store.visible import readable_roles

router = APIRouter(tags=["roles"])

_WRITE = "Changing roles"


@router.post("/user/role", status_code=201, response_model=RoleOut, response_model_by_alias=True)
def create_role(body: RoleCreate, caller: CallerDep, store: StoreDep) -> RoleOut:
    """Create a role (Administrator)."""
    return role_out(roles.create(store, caller, body))


@router.get("/user/role", response_model=list[RoleOut], response_model_by_alias=True)
def list_roles(caller: CallerDep, store: StoreDep) -> list[RoleOut]:
    """Every role; a non-administrator sees in each grant list only what their roles grant."""
    with store.read() as conn:
        return [role_out(r) for r in readable_roles(conn, caller, role_store.list_all(conn))]


@router.get("/user/role/byname", response_model=RoleOut, response_model_by_alias=True)
def role_by_name(name: str, caller: CallerDep, store: StoreDep) -> RoleOut:
    """The role with this name (grant lists as in ``GET /user/role``)."""
    with store.read() as conn:
        return role_out(readable_roles(conn, caller, [role_store.get_by_name(conn, name)])[0])


@router.get("/user/role/{role_key}", response_model=RoleOut, response_model_by_alias=True)
def get_role(role_key: str, caller: CallerDep, store: StoreDep) -> RoleOut:
    """The role with this key (grant lists as in ``GET /user/role``)."""
    with store.read() as conn:
        return role_out(readable_roles(conn, caller, [role_store.get(conn, role_key)])[0])


@router.put("/user/role/{role_key}", response_model=RoleOut, response_model_by_alias=True)
def update_role(role_key: str, body: RoleUpdate, caller: CallerDep, store: StoreDep) -> RoleOut:
    """Change a role (Administrator); absent properties stay unchanged; the role as read may be
    sent back (read-only properties refused only when changed)."""
    return role_out(roles.update(store, caller, role_key, body))


@router.delete("/user/role/{role_key}", status_code=204)
def delete_role(role_key: str, caller: CallerDep, store: StoreDep) -> Response:
    """Delete a role (Administrator); refused while it is some user's only role."""
    with audited(store, caller, AuditAction.DELETE, AuditObjectType.ROLE, key=role_key) as w:
        require_admin(caller, _WRITE)
        record = role_store.delete_role(w.conn, role_key)
        w.target(record.key, record.name)
    return Response(status_code=204)


# The product's /role paths (docs/compatibility.md): the same endpoints, out of the document.
alias_prefix(router, "/user/role", "/role")
