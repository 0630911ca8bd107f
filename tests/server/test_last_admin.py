"""The last administrator is protected against every path that could remove them.

Each test runs on a fresh server, whose only administrator is the bootstrapped ``admin``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from catalog_nb.contract import ErrorCode
from catalog_nb.server.store import schema
from tests.conftest import Http, Server
from tests.server.helpers import (
    PASSWORD,
    assert_error,
    create_role,
    create_user,
    row_count,
    snapshot,
)

LAST_ADMIN = ErrorCode.LAST_ADMINISTRATOR.value


def me(http: Http) -> dict[str, Any]:
    body: dict[str, Any] = http.get("/user/_me").json()
    return body


def role(http: Http, name: str) -> dict[str, Any]:
    response = http.get("/user/role/byname", params={"name": name})
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def refused(http: Http, response: Any, code: str) -> None:
    """``response`` is a 409 of ``code`` and the caller is still an administrator."""
    assert_error(response, 409, code)
    assert me(http)["admin"] is True


def test_the_last_administrator_cannot_delete_themselves(
    server: Server, fresh_admin: Http
) -> None:
    before, sessions = snapshot(fresh_admin), row_count(server, schema.sessions)
    response = fresh_admin.delete(f"/user/{me(fresh_admin)['key']}")
    assert_error(response, 409)
    assert response.json()["errorCode"] in (LAST_ADMIN, ErrorCode.CANNOT_DELETE_SELF.value)
    assert snapshot(fresh_admin) == before
    assert row_count(server, schema.sessions) == sessions


def test_the_last_administrator_cannot_be_demoted(server: Server, fresh_admin: Http) -> None:
    key = me(fresh_admin)["key"]
    before = snapshot(fresh_admin)
    refused(fresh_admin, fresh_admin.put(f"/user/{key}", json={"roles": ["Analyst"]}),
            LAST_ADMIN)
    assert snapshot(fresh_admin) == before


def test_the_last_administrators_role_cannot_be_removed(
    server: Server, fresh_admin: Http
) -> None:
    key = me(fresh_admin)["key"]
    assign = fresh_admin.post("/user/assign/role", json={"userName": "admin", "roleName": "Guest"})
    assert assign.status_code == 201
    before = snapshot(fresh_admin)
    response = fresh_admin.post("/user/remove/role", json={key: ["Administrator"]})
    refused(fresh_admin, response, LAST_ADMIN)
    assert snapshot(fresh_admin) == before


def test_the_administrator_role_cannot_be_deleted_from_under_the_last_administrator(
    server: Server, fresh_admin: Http
) -> None:
    admin_role = role(fresh_admin, "Administrator")
    before = snapshot(fresh_admin)
    # While it is the administrator's only role, the role-in-use rule answers first ...
    refused(fresh_admin, fresh_admin.delete(f"/user/role/{admin_role['key']}"),
            ErrorCode.ROLE_IN_USE.value)
    assert snapshot(fresh_admin) == before
    # ... and once the administrator holds another role, the last-administrator rule does.
    assert fresh_admin.post(
        "/user/assign/role", json={"userName": "admin", "roleName": "Guest"}
    ).status_code == 201
    before = snapshot(fresh_admin)
    refused(fresh_admin, fresh_admin.delete(f"/user/role/{admin_role['key']}"),
            LAST_ADMIN)
    assert snapshot(fresh_admin) == before


def test_the_administrator_roles_access_level_cannot_be_lowered(
    server: Server, fresh_admin: Http
) -> None:
    admin_role = role(fresh_admin, "Administrator")
    before = snapshot(fresh_admin)
    for level in ("Steward", "Analyst", "Guest"):
        response = fresh_admin.put(f"/user/role/{admin_role['key']}", json={"accessLevel": level})
        refused(fresh_admin, response, LAST_ADMIN)
    assert snapshot(fresh_admin) == before
    # Changing anything else of the role is fine.
    response = fresh_admin.put(f"/user/role/{admin_role['key']}", json={"description": "root"})
    assert response.status_code == 200 and response.json()["accessLevel"] == "Administrator"


def test_with_a_second_administrator_each_of_those_changes_is_allowed(
    server: Server, fresh_admin: Http, unique: Callable[[str], str]
) -> None:
    """The rule is about the *last* administrator: with two, the same changes go through."""
    deputy = create_user(fresh_admin, unique("deputy"), roles=["Administrator"])
    spare = create_role(fresh_admin, unique("Root"), "Administrator")
    assert fresh_admin.post("/user/assign/role", json={
        "userName": deputy["name"], "roleName": spare["name"]}).status_code == 201
    # Demote the bootstrapped admin: the deputy is still an administrator.
    key = me(fresh_admin)["key"]
    deputy_http = server.session(deputy["name"], PASSWORD)
    assert deputy_http.put(f"/user/{key}", json={"roles": ["Analyst"]}).status_code == 204
    assert me(fresh_admin)["admin"] is False
    # The deputy keeps the spare Administrator-level role, so the built-in one may go.
    assert deputy_http.post(
        "/user/remove/role", json={deputy["key"]: ["Administrator"]}).status_code == 201
    builtin = role(deputy_http, "Administrator")
    assert deputy_http.delete(f"/user/role/{builtin['key']}").status_code == 204
    # Now the deputy is the last administrator, through the spare role.
    before = snapshot(deputy_http)
    assert_error(deputy_http.put(f"/user/role/{spare['key']}", json={"accessLevel": "Guest"}),
                 409, LAST_ADMIN)
    assert_error(deputy_http.put(f"/user/{deputy['key']}", json={"roles": ["Guest"]}),
                 409, LAST_ADMIN)
    assert snapshot(deputy_http) == before
