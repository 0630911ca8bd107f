"""User profiles, role assignment, user search and the permit endpoints.

Names are stored NFKC-normalised and a name that looks like another user's is refused (409
CONFUSABLE_NAME, see :mod:`catalog_nb.server.confusables`); looking a user up by name finds it
by its NFKC form too (``admin`` in fullwidth letters finds ``admin``). The writes and their rules
are ``services.users``; who may see a source or resource is ``services.permits``.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body, Query, Response

from catalog_nb.contract import USER_SEARCH_DEFAULT_LIMIT, USER_SEARCH_MAX_LIMIT
from catalog_nb.server.deps import CallerDep, StoreDep
from catalog_nb.server.openapi import RoleRemovals, json_body
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
from catalog_nb.server.services import permits, users
from catalog_nb.server.store import users as user_store

router = APIRouter(tags=["users"])


@router.get("/user", response_model=list[UserOut], response_model_by_alias=True)
def list_users(caller: CallerDep, store: StoreDep, name: str | None = None) -> list[UserOut]:
    """Every user, or the one named ``name``."""
    with store.read() as conn:
        return [user_out(u) for u in user_store.list_all(conn, name)]


@router.post("/user", status_code=201, response_model=UserOut, response_model_by_alias=True)
def create_user(body: UserCreate, caller: CallerDep, store: StoreDep) -> UserOut:
    """Create a user (Administrator); without ``roles`` the default roles are given."""
    return user_out(users.create(store, caller, body))


@router.get("/user/_me", response_model=UserOut, response_model_by_alias=True)
def get_me(caller: CallerDep, store: StoreDep) -> UserOut:
    """The caller's own profile."""
    with store.read() as conn:
        return user_out(user_store.get(conn, caller.key))


@router.put("/user/_me", status_code=204)
def update_me(body: MeUpdate, caller: CallerDep, store: StoreDep) -> Response:
    """Change the caller's own preferences (only ``prefiltersEnabled``)."""
    users.update_own(store, caller, body)
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
    return permits.who_sees_source(store, caller, data_source_name)


@router.get("/user/permit/resource")
def permit_resource(
    caller: CallerDep,
    store: StoreDep,
    data_source_name: Annotated[str, Query(alias="dataSourceName")],
    resource_path: Annotated[str, Query(alias="resourcePath")],
) -> dict[str, bool]:
    """Which users may see a data resource (Steward or Administrator)."""
    return permits.who_sees_resource(store, caller, data_source_name, resource_path)


@router.post("/user/assign/role", status_code=201, response_model=UserOut,
             response_model_by_alias=True)
def assign_role(body: AssignRole, caller: CallerDep, store: StoreDep) -> UserOut:
    """Give a user one more role (Administrator)."""
    return user_out(users.assign_role(store, caller, body))


@router.post("/user/remove/role", status_code=201, response_model=list[UserOut],
             response_model_by_alias=True, openapi_extra=json_body(RoleRemovals))
def remove_role(
    caller: CallerDep, store: StoreDep, body: Annotated[Any, Body()] = None
) -> list[UserOut]:
    """Take roles from users (Administrator): ``{"<userKey>": ["roleName", ...]}``.

    All or nothing: a user left without a role, or a catalog left without an administrator,
    refuses the whole request.
    """
    return [user_out(u) for u in users.remove_roles(store, caller, body)]


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
    users.update(store, caller, key, body)
    return Response(status_code=204)


@router.delete("/user/{key}", status_code=204)
def delete_user(key: str, caller: CallerDep, store: StoreDep) -> Response:
    """Delete a user and their sessions (Administrator); not oneself, not the last admin."""
    users.delete(store, caller, key)
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
