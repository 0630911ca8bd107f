"""A caller without the Administrator level attempting each write: 403, and nothing changes.

The payloads are valid (an administrator's identical request succeeds, see the last test), so the
403 is the permission check and not a validation error in disguise.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from catalog_nb.contract import ErrorCode
from tests.conftest import Http
from tests.server.helpers import Member, assert_error, create_role, create_user, snapshot

LEVELS = ["Steward", "Analyst", "Guest"]


@dataclass
class Targets:
    user: dict[str, Any]
    role: dict[str, Any]
    event_key: str


@pytest.fixture(scope="module")
def targets(admin: Http) -> Targets:
    user = create_user(admin, f"target-{uuid.uuid4().hex[:8]}", roles=["Analyst", "Guest"])
    role = create_role(admin, f"TargetRole-{uuid.uuid4().hex[:8]}", "Guest")
    event = admin.get("/auditevent/list", params={"size": 1}).json()["list"][0]
    return Targets(user, role, event["key"])


Write = Callable[[Http, Targets, Member], Any]

WRITES: dict[str, Write] = {
    "create user": lambda h, t, m: h.post("/user", json={"name": f"new-{uuid.uuid4().hex[:8]}"}),
    "update user": lambda h, t, m: h.put(f"/user/{t.user['key']}", json={"description": "x"}),
    "set password": lambda h, t, m: h.put(
        f"/user/{t.user['key']}", json={"password": "hijacked-password"}),
    "delete user": lambda h, t, m: h.delete(f"/user/{t.user['key']}"),
    "assign role": lambda h, t, m: h.post(
        "/user/assign/role", json={"userName": t.user["name"], "roleName": "Steward"}),
    "remove role": lambda h, t, m: h.post("/user/remove/role", json={t.user["key"]: ["Guest"]}),
    "promote self by update": lambda h, t, m: h.put(
        f"/user/{m.key}", json={"roles": ["Administrator"]}),
    "promote self by assign": lambda h, t, m: h.post(
        "/user/assign/role", json={"userName": m.name, "roleName": "Administrator"}),
    "delete self": lambda h, t, m: h.delete(f"/user/{m.key}"),
    "create role": lambda h, t, m: h.post(
        "/user/role", json={"name": f"R-{uuid.uuid4().hex[:8]}", "accessLevel": "Guest"}),
    "update role": lambda h, t, m: h.put(
        f"/user/role/{t.role['key']}", json={"accessLevel": "Administrator"}),
    "delete role": lambda h, t, m: h.delete(f"/user/role/{t.role['key']}"),
    "delete audit event": lambda h, t, m: h.delete(f"/auditevent/{t.event_key}"),
}


@pytest.mark.parametrize("write", list(WRITES))
@pytest.mark.parametrize("level", LEVELS)
def test_a_non_administrator_cannot_write(
    admin: Http, members: dict[str, Member], targets: Targets, level: str, write: str
) -> None:
    member = members[level]
    before = snapshot(admin)
    response = WRITES[write](member.http, targets, member)
    body = assert_error(response, 403, ErrorCode.PERMISSION_DENIED.value)
    assert "Administrator" in body["message"]
    assert snapshot(admin) == before
    assert admin.get(f"/auditevent/{targets.event_key}").status_code == 200


@pytest.mark.parametrize("level", LEVELS)
def test_a_non_administrator_cannot_read_the_audit_trail(
    members: dict[str, Member], targets: Targets, level: str
) -> None:
    http = members[level].http
    for response in (
        http.get("/auditevent/list"),
        http.post("/auditevent/search", json={}),
        http.get(f"/auditevent/{targets.event_key}"),
    ):
        assert_error(response, 403, ErrorCode.PERMISSION_DENIED.value)


@pytest.mark.parametrize("level", LEVELS)
def test_a_non_administrator_may_read_users_and_roles(
    members: dict[str, Member], targets: Targets, level: str
) -> None:
    http = members[level].http
    assert http.get(f"/user/{targets.user['key']}").status_code == 200
    assert http.get(f"/user/role/{targets.role['key']}").status_code == 200
    assert http.get("/user/role/byname", params={"name": targets.role["name"]}).status_code == 200
    assert http.get("/user/list/roles").json()[0]["name"] == level


def test_the_same_writes_succeed_for_an_administrator(admin: Http, targets: Targets) -> None:
    """Positive control: every payload above is valid."""
    me = admin.get("/user/_me").json()
    adm = Member(me["name"], me["key"], admin)
    for write in ("create user", "update user", "set password", "assign role", "remove role",
                  "create role", "update role"):
        response = WRITES[write](admin, targets, adm)
        assert response.status_code in (200, 201, 204), (write, response.text)
    assert admin.put(f"/user/role/{targets.role['key']}",
                     json={"accessLevel": "Guest"}).status_code == 200
    for write in ("delete audit event", "delete role", "delete user"):
        response = WRITES[write](admin, targets, adm)
        assert response.status_code == 204, (write, response.text)
