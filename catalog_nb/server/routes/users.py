"""User profiles, role assignment, user search and the permit endpoints.

Names are stored NFKC-normalised and a name that looks like another user's is refused (409
CONFUSABLE_NAME, see :mod:`catalog_nb.server.confusables`); looking a user up by name finds it
by its NFKC form too (``admin`` in fullwidth letters finds ``admin``).
"""

from __future__ import annotations

import unicodedata
from typing import Annotated, Any

from fastapi import APIRouter, Body, Query, Response
from pydantic.alias_generators import to_camel

from catalog_nb.contract import (
    USER_SEARCH_DEFAULT_LIMIT,
    USER_SEARCH_MAX_LIMIT,
    AccessLevel,
    AuditAction,
    AuditObjectType,
    ErrorCode,
)
from catalog_nb.server.auditing import audited
from catalog_nb.server.deps import CallerDep, StoreDep
from catalog_nb.server.errors import BadRequest, NotFound
from catalog_nb.server.passwords import hash_password
from catalog_nb.server.schemas.roles import RoleOut, role_out
from catalog_nb.server.schemas.users import (
    AssignRole,
    MeUpdate,
    UserCreate,
    UserOut,
    UserTO,
    UserUpdate,
    user_out,
    user_to,
)
from catalog_nb.server.security import require_admin, require_level
from catalog_nb.server.store import sessions as session_store
from catalog_nb.server.store import sources as source_store
from catalog_nb.server.store import users as user_store
from catalog_nb.server.store.visible import visibilities
from catalog_nb.server.visibility import sees_source

router = APIRouter(tags=["users"])

_WRITE = "Changing user profiles"


@router.get("/user", response_model=list[UserOut], response_model_by_alias=True)
def list_users(caller: CallerDep, store: StoreDep, name: str | None = None) -> list[UserOut]:
    """Every user, or the one named ``name``."""
    with store.read() as conn:
        return [user_out(u) for u in user_store.list_all(conn, name)]


@router.post("/user", status_code=201, response_model=UserOut, response_model_by_alias=True)
def create_user(body: UserCreate, caller: CallerDep, store: StoreDep) -> UserOut:
    """Create a user (Administrator); without ``roles`` the default roles are given."""
    with audited(store, caller, AuditAction.CREATE, AuditObjectType.USER, name=body.name) as w:
        require_admin(caller, _WRITE)
        hashed = hash_password(body.password) if body.password else None
        record = user_store.create(w.conn, body.changes(), body.roles, caller.name, hashed)
        w.target(record.key, record.name)
    return user_out(record)


@router.get("/user/_me", response_model=UserOut, response_model_by_alias=True)
def get_me(caller: CallerDep, store: StoreDep) -> UserOut:
    """The caller's own profile."""
    with store.read() as conn:
        return user_out(user_store.get(conn, caller.key))


@router.put("/user/_me", status_code=204)
def update_me(body: MeUpdate, caller: CallerDep, store: StoreDep) -> Response:
    """Change the caller's own preferences (only ``prefiltersEnabled``)."""
    with audited(store, caller, AuditAction.UPDATE, AuditObjectType.USER,
                 key=caller.key, name=caller.name) as w:
        user_store.update_user(w.conn, caller.key, body.changes(), None, caller.name)
    return Response(status_code=204)


@router.get("/user/list/roles", response_model=list[RoleOut], response_model_by_alias=True)
def my_roles(caller: CallerDep) -> list[RoleOut]:
    """The roles of the caller."""
    return [role_out(r) for r in caller.roles]


@router.get("/user/permit/source")
def permit_source(
    caller: CallerDep,
    store: StoreDep,
    data_source_name: Annotated[str, Query(alias="dataSourceName")],
) -> dict[str, bool]:
    """Which users may see a data source (Steward or Administrator)."""
    require_level(caller, AccessLevel.STEWARD, "Asking who may see a data source")
    with store.read() as conn:
        source = source_store.get_source_by_name(conn, data_source_name)
        if not sees_source(caller.roles, source["key"]):
            raise NotFound(
                f"There is no data source named '{data_source_name}'.",
                ErrorCode.DATA_SOURCE_NOT_FOUND,
            )
        return {u.name: sees_source(u.roles, source["key"]) for u in user_store.list_all(conn)}


@router.get("/user/permit/resource")
def permit_resource(
    caller: CallerDep,
    store: StoreDep,
    data_source_name: Annotated[str, Query(alias="dataSourceName")],
    resource_path: Annotated[str, Query(alias="resourcePath")],
) -> dict[str, bool]:
    """Which users may see a data resource (Steward or Administrator)."""
    require_level(caller, AccessLevel.STEWARD, "Asking who may see a data resource")
    with store.read() as conn:
        source = source_store.get_source_by_name(conn, data_source_name)
        everyone = user_store.list_all(conn)
        mine, *theirs = visibilities(conn, [caller.roles, *(u.roles for u in everyone)])
        if not mine.sees(source["key"], resource_path):
            raise NotFound(
                f"There is no data source named '{data_source_name}'.",
                ErrorCode.DATA_SOURCE_NOT_FOUND,
            )
        source_store.get_resource_by_path(conn, source["key"], resource_path)
        return {u.name: seen.sees(source["key"], resource_path)
                for u, seen in zip(everyone, theirs, strict=True)}


@router.post("/user/assign/role", status_code=201, response_model=UserOut,
             response_model_by_alias=True)
def assign_role(body: AssignRole, caller: CallerDep, store: StoreDep) -> UserOut:
    """Give a user one more role (Administrator)."""
    with audited(store, caller, AuditAction.ASSIGN_ROLE, AuditObjectType.USER,
                 name=body.user_name) as w:
        require_admin(caller, _WRITE)
        user = user_store.find_by_name(w.conn, body.user_name, normalise=True)
        if user is None:
            raise BadRequest(f"There is no user named '{body.user_name}'.", ErrorCode.UNKNOWN_USER)
        w.target(user.key, user.name)
        w.message = f"role {body.role_name}"
        record = user_store.assign_role(w.conn, user.key, body.role_name, caller.name)
    return user_out(record)


def _printable(text: str) -> bool:
    """No control, format or lone surrogate characters (they cannot be keys or role names)."""
    return not any(unicodedata.category(ch) in ("Cc", "Cf", "Cs") for ch in text)


def _removals(body: Any) -> dict[str, list[str]]:
    if not isinstance(body, dict) or not body:
        raise BadRequest(
            'The body must be an object mapping user keys to role names, e.g. {"<userKey>": '
            '["Analyst"]}.',
            ErrorCode.INVALID_PAYLOAD,
        )
    removals: dict[str, list[str]] = {}
    for user_key, names in body.items():
        listed = [names] if isinstance(names, str) else names
        if not _printable(user_key) or not isinstance(listed, list) or not listed or not all(
            isinstance(n, str) and n.strip() and _printable(n) for n in listed
        ):
            raise BadRequest(
                f"The roles to remove from user {user_key!r} must be a role name or a non-empty "
                "list of role names.",
                ErrorCode.INVALID_PAYLOAD,
            )
        removals[user_key] = [n.strip() for n in listed]
    return removals


@router.post("/user/remove/role", status_code=201, response_model=list[UserOut],
             response_model_by_alias=True)
def remove_role(
    caller: CallerDep, store: StoreDep, body: Annotated[Any, Body()] = None
) -> list[UserOut]:
    """Take roles from users (Administrator): ``{"<userKey>": ["roleName", ...]}``.

    All or nothing: a user left without a role, or a catalog left without an administrator,
    refuses the whole request.
    """
    updated = []
    with audited(store, caller, AuditAction.REMOVE_ROLE, AuditObjectType.USER) as w:
        require_admin(caller, _WRITE)
        removals = _removals(body)
        single = len(removals) == 1
        for user_key, names in removals.items():
            if single:  # named before the change, so a refusal is recorded against the user
                w.target(user_key)
            user = user_store.find(w.conn, user_key)
            if user is None:
                raise BadRequest(f"There is no user with key '{user_key}'.", ErrorCode.UNKNOWN_USER)
            if single:
                w.target(user.key, user.name)
            updated.append(user_store.remove_roles(w.conn, user_key, names))
        if not single:
            w.target(None, ", ".join(u.name for u in updated))
        w.message = "; ".join(f"{k}: {', '.join(v)}" for k, v in removals.items())
    return [user_out(u) for u in updated]


# ":path": a user name may contain "/", which arrives decoded.
@router.get("/user/name/{username:path}", response_model=UserOut,
            response_model_by_alias=True)
def get_user_by_name(username: str, caller: CallerDep, store: StoreDep) -> UserOut:
    """The user with this name."""
    with store.read() as conn:
        return user_out(user_store.get_by_name(conn, username))


@router.get("/user/{key}", response_model=UserOut, response_model_by_alias=True)
def get_user(key: str, caller: CallerDep, store: StoreDep) -> UserOut:
    """The user with this key."""
    with store.read() as conn:
        return user_out(user_store.get(conn, key))


@router.put("/user/{key}", status_code=204)
def update_user(key: str, body: UserUpdate, caller: CallerDep, store: StoreDep) -> Response:
    """Change a user (Administrator); properties absent from the body stay unchanged."""
    changes = body.changes()
    action = AuditAction.SET_PASSWORD if set(changes) == {"password"} else AuditAction.UPDATE
    with audited(store, caller, action, AuditObjectType.USER, key=key) as w:
        require_admin(caller, _WRITE)
        for field in ("name", "prefilters_enabled", "attributes", "password", "roles"):
            if field in changes and changes[field] is None:
                raise BadRequest(f"{to_camel(field)} cannot be set to null.",
                                 ErrorCode.INVALID_PAYLOAD)
        hashed = hash_password(body.password) if body.password else None
        record = user_store.update_user(w.conn, key, changes, body.roles, caller.name, hashed)
        w.target(record.key, record.name)
        if hashed:
            # A new password ends the user's other sessions: whoever knew the old one is out.
            session_store.close_user_sessions(w.conn, key, keep=caller.token)
    return Response(status_code=204)


@router.delete("/user/{key}", status_code=204)
def delete_user(key: str, caller: CallerDep, store: StoreDep) -> Response:
    """Delete a user and their sessions (Administrator); not oneself, not the last admin."""
    with audited(store, caller, AuditAction.DELETE, AuditObjectType.USER, key=key) as w:
        require_admin(caller, _WRITE)
        record = user_store.delete_user(w.conn, key, caller.key)
        w.target(record.key, record.name)
    return Response(status_code=204)


@router.get("/search/user", response_model=list[UserTO], response_model_by_alias=True)
def search_users(
    caller: CallerDep,
    store: StoreDep,
    search_users_by: Annotated[str, Query(alias="searchUsersBy", max_length=1024)] = "",
    limit: Annotated[int, Query(ge=1, le=USER_SEARCH_MAX_LIMIT)] = USER_SEARCH_DEFAULT_LIMIT,
) -> list[UserTO]:
    """Users whose name, first name, last name or email contain the characters."""
    with store.read() as conn:
        return [user_to(u) for u in user_store.search(conn, search_users_by.strip(), limit)]
