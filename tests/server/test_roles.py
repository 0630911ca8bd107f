"""Roles: CRUD, look-ups, duplicate names, access levels, grants, roles still in use."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from typing import Any

import pytest
from sqlalchemy import insert

from catalog_nb.contract import ErrorCode
from catalog_nb.server.store import schema
from tests.conftest import Http, Server
from tests.server.helpers import assert_error, create_role, create_user, get_user, snapshot

ROLE_FIELDS = {
    "key", "type", "name", "description", "richDescription", "timeOfCreation",
    "timeOfLastChange", "accessLevel", "defaultRole", "metadataAccessOption",
    "dataAccessOption", "resourceReadAccessLevel", "jobTemplateCreationAllowed",
    "jobExecutionAllowed", "virtualFolderKeys", "domainKeys", "dataSourceKeys", "datasetKeys",
}


def insert_domain(server: Server, name: str) -> str:
    key = uuid.uuid4().hex
    now = int(time.time() * 1000)
    with server.store.write() as conn:
        conn.execute(insert(schema.tag_domains).values(
            key=key, name=name, name_fold=name.casefold(), created_ms=now, changed_ms=now))
    return key


def insert_source(server: Server, name: str) -> str:
    key = uuid.uuid4().hex
    now = int(time.time() * 1000)
    with server.store.write() as conn:
        conn.execute(insert(schema.data_sources).values(
            key=key, name=name, name_fold=name.casefold(), source_type="FILE", uri="/data",
            include_patterns=[], exclude_patterns=[], created_ms=now, changed_ms=now))
    return key


def test_create_role_answers_201_with_the_role(
    admin: Http, unique: Callable[[str], str]
) -> None:
    name = unique("Curators")
    response = admin.post("/user/role", json={
        "name": name, "accessLevel": "Steward", "description": "curate the lake"})
    assert response.status_code == 201, response.text
    role = response.json()
    assert set(role) >= ROLE_FIELDS
    assert role["key"] and role["type"] == "role"
    assert role["name"] == name and role["accessLevel"] == "Steward"
    assert role["description"] == "curate the lake"
    assert role["defaultRole"] is False
    assert role["metadataAccessOption"] == "RESTRICTED"
    assert role["dataAccessOption"] == "RESTRICTED"
    for grants in ("virtualFolderKeys", "domainKeys", "dataSourceKeys", "datasetKeys"):
        assert role[grants] == []
    assert admin.get(f"/user/role/{role['key']}").json() == role


def test_read_roles_by_key_by_name_and_in_the_list(
    admin: Http, unique: Callable[[str], str]
) -> None:
    role = create_role(admin, unique("Readers"), "Guest")
    listed = admin.get("/user/role")
    assert listed.status_code == 200
    names = [r["name"] for r in listed.json()]
    assert role in listed.json()
    assert {"Administrator", "Steward", "Analyst", "Guest"} <= set(names)
    assert names == sorted(names, key=str.casefold)
    assert admin.get(f"/user/role/{role['key']}").json() == role
    byname = admin.get("/user/role/byname", params={"name": role["name"].upper()})
    assert byname.status_code == 200 and byname.json() == role


def test_unknown_roles_are_404(admin: Http, unique: Callable[[str], str]) -> None:
    code = ErrorCode.ROLE_NOT_FOUND.value
    assert_error(admin.get("/user/role/no-such-key"), 404, code)
    assert_error(admin.get("/user/role/byname", params={"name": unique("none")}), 404, code)
    assert_error(admin.put("/user/role/no-such-key", json={"description": "x"}), 404, code)
    assert_error(admin.delete("/user/role/no-such-key"), 404, code)
    assert_error(admin.get("/user/role/byname"), 400, ErrorCode.INVALID_PARAMETER.value, "name")


def test_update_role_changes_only_what_the_body_names(
    live_server: Server, admin: Http, unique: Callable[[str], str]
) -> None:
    role = create_role(admin, unique("Editors"), "Analyst", description="before")
    domain = insert_domain(live_server, unique("Finance"))
    response = admin.put(f"/user/role/{role['key']}", json={
        "name": role["name"] + "-x", "accessLevel": "Steward", "domainKeys": [domain],
        "metadataAccessOption": "ALL", "jobExecutionAllowed": True,
    })
    assert response.status_code == 200, response.text
    after = response.json()
    assert after == admin.get(f"/user/role/{role['key']}").json()
    assert after["name"] == role["name"] + "-x"
    assert after["accessLevel"] == "Steward"
    assert after["domainKeys"] == [domain]
    assert after["metadataAccessOption"] == "ALL"
    assert after["jobExecutionAllowed"] is True
    assert after["description"] == "before"
    assert after["dataAccessOption"] == role["dataAccessOption"]
    # An empty list clears one kind of grant; absent kinds stay.
    cleared = admin.put(f"/user/role/{role['key']}", json={"domainKeys": []}).json()
    assert cleared["domainKeys"] == [] and cleared["metadataAccessOption"] == "ALL"


def test_delete_a_role(admin: Http, unique: Callable[[str], str]) -> None:
    role = create_role(admin, unique("Temp"), "Guest")
    response = admin.delete(f"/user/role/{role['key']}")
    assert response.status_code == 204 and response.content == b""
    assert_error(admin.get(f"/user/role/{role['key']}"), 404, ErrorCode.ROLE_NOT_FOUND.value)
    assert_error(admin.delete(f"/user/role/{role['key']}"), 404, ErrorCode.ROLE_NOT_FOUND.value)
    assert role["name"] not in [r["name"] for r in admin.get("/user/role").json()]


def test_duplicate_role_names_are_409_whatever_the_case(
    admin: Http, unique: Callable[[str], str]
) -> None:
    role = create_role(admin, unique("Dup"), "Guest")
    other = create_role(admin, unique("Other"), "Guest")
    before = snapshot(admin)
    for name in (role["name"], role["name"].upper(), f"  {role['name'].lower()}  ", "analyst"):
        response = admin.post("/user/role", json={"name": name, "accessLevel": "Guest"})
        assert_error(response, 409, ErrorCode.DUPLICATE_NAME.value)
    response = admin.put(f"/user/role/{other['key']}", json={"name": role["name"].swapcase()})
    assert_error(response, 409, ErrorCode.DUPLICATE_NAME.value)
    assert snapshot(admin) == before


@pytest.mark.parametrize(
    "body",
    [
        {"accessLevel": "Superuser"},
        {"accessLevel": "administrator"},
        {"accessLevel": ""},
        {"accessLevel": None},
        {"accessLevel": 1},
        {"metadataAccessOption": "SOME"},
        {"dataAccessOption": "EVERYTHING"},
    ],
)
def test_invalid_access_settings_are_400(
    admin: Http, unique: Callable[[str], str], body: dict[str, Any]
) -> None:
    role = create_role(admin, unique("Strict"), "Guest")
    before = snapshot(admin)
    create = {"name": unique("Bad"), "accessLevel": "Guest", **body}
    assert_error(admin.post("/user/role", json=create), 400, ErrorCode.INVALID_PAYLOAD.value)
    assert_error(admin.put(f"/user/role/{role['key']}", json=body), 400,
                 ErrorCode.INVALID_PAYLOAD.value)
    assert snapshot(admin) == before


@pytest.mark.parametrize(
    "field", ["dataSourceKeys", "virtualFolderKeys", "datasetKeys", "domainKeys"]
)
def test_unknown_grant_keys_are_400(
    admin: Http, unique: Callable[[str], str], field: str
) -> None:
    role = create_role(admin, unique("Granted"), "Steward")
    before = snapshot(admin)
    missing = unique("no-such-key")
    response = admin.post("/user/role", json={
        "name": unique("Bad"), "accessLevel": "Guest", field: [missing]})
    assert_error(response, 400, ErrorCode.UNKNOWN_REFERENCE.value, field, missing)
    response = admin.put(f"/user/role/{role['key']}", json={field: [missing]})
    assert_error(response, 400, ErrorCode.UNKNOWN_REFERENCE.value, field, missing)
    assert snapshot(admin) == before


def test_known_grant_keys_are_kept(
    live_server: Server, admin: Http, unique: Callable[[str], str]
) -> None:
    source = insert_source(live_server, unique("lake"))
    domain = insert_domain(live_server, unique("HR"))
    role = create_role(admin, unique("Granted"), "Steward",
                       dataSourceKeys=[source, source], domainKeys=[domain])
    assert role["dataSourceKeys"] == [source]
    assert role["domainKeys"] == [domain]
    # A mix of known and unknown keys writes nothing.
    before = snapshot(admin)
    response = admin.put(f"/user/role/{role['key']}",
                         json={"dataSourceKeys": [source, "missing-key"], "domainKeys": []})
    assert_error(response, 400, ErrorCode.UNKNOWN_REFERENCE.value, "missing-key")
    assert snapshot(admin) == before


def test_a_role_that_is_some_users_only_role_cannot_be_deleted(
    admin: Http, unique: Callable[[str], str]
) -> None:
    role = create_role(admin, unique("Sole"), "Guest")
    user = create_user(admin, unique("holder"), roles=[role["name"]])
    before = snapshot(admin)
    body = assert_error(admin.delete(f"/user/role/{role['key']}"), 409,
                        ErrorCode.ROLE_IN_USE.value, user["name"])
    assert body["users"] == [user["name"]]
    assert snapshot(admin) == before
    # Give the user another role and the role may go; it leaves the user's roles too.
    assert admin.post("/user/assign/role", json={
        "userName": user["name"], "roleName": "Guest"}).status_code == 201
    assert admin.delete(f"/user/role/{role['key']}").status_code == 204
    assert get_user(admin, user["key"])["roles"] == ["Guest"]


def test_renaming_a_role_renames_it_on_its_users(
    admin: Http, unique: Callable[[str], str]
) -> None:
    role = create_role(admin, unique("Before"), "Guest")
    user = create_user(admin, unique("holder"), roles=[role["name"]])
    new_name = unique("After")
    assert admin.put(f"/user/role/{role['key']}", json={"name": new_name}).status_code == 200
    assert get_user(admin, user["key"])["roles"] == [new_name]


@pytest.mark.parametrize(
    "body",
    [
        {"name": None},
        {"defaultRole": None},
        {"metadataAccessOption": None},
        {"key": "mine"},
        {"timeOfCreation": 1},
        {"type": "user"},
        {"colour": "red"},
        {"domainKeys": "not-a-list"},
        {"jobExecutionAllowed": "sometimes"},
        {"resourceReadAccessLevel": "x" * 65},
    ],
)
def test_bad_role_updates_are_400(
    admin: Http, unique: Callable[[str], str], body: dict[str, Any]
) -> None:
    role = create_role(admin, unique("Stable"), "Guest")
    before = snapshot(admin)
    assert_error(admin.put(f"/user/role/{role['key']}", json=body), 400,
                 ErrorCode.INVALID_PAYLOAD.value)
    assert snapshot(admin) == before
