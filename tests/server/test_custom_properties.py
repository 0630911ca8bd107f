"""``/customproperty``: typed definitions; Administrators write, everyone reads, no delete."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

import pytest

from catalog_nb.contract import ErrorCode
from tests.conftest import Http, Server
from tests.server.helpers import Member, assert_error, audit_search
from tests.server.lake import profile_folder, write_files

Unique = Callable[[str], str]


def create(http: Http, **body: Any) -> dict[str, Any]:
    response = http.post("/customproperty", json=body)
    assert response.status_code == 201, response.text
    made: dict[str, Any] = response.json()
    return made


@pytest.fixture(scope="module")
def resource_key(live_server: Server, admin: Http,
                 tmp_path_factory: pytest.TempPathFactory) -> str:
    folder = write_files(tmp_path_factory.mktemp("cp"), {"t.csv": "a\n1\n"})
    name = f"cp-{uuid.uuid4().hex[:8]}"
    profile_folder(live_server.store, name, folder)
    response = admin.get(f"/dataresource/source/{name}", params={"resourcePath": "t.csv"})
    return str(response.json()["key"])


def set_value(http: Http, key: str, name: str, value: Any) -> Any:
    return http.put(f"/dataresource/{key}", json={"customProperties": {name: value}})


def test_create_read_and_list(admin: Http, members: dict[str, Member], unique: Unique) -> None:
    name = unique("team")
    made = create(admin, name=name, displayName="Team", description="Who owns it",
                  type="STRING_LIST", facetAble=True)
    assert set(made) == {"key", "name", "displayName", "description", "type", "facetAble",
                         "timeOfCreation", "timeOfLastChange"}
    assert (made["name"], made["type"], made["facetAble"]) == (name, "STRING_LIST", True)
    guest = members["Guest"].http
    assert guest.get(f"/customproperty/{made['key']}").json() == made
    listed = guest.get("/customproperty").json()
    assert made in listed
    assert [p["name"].casefold() for p in listed] == sorted(p["name"].casefold() for p in listed)


def test_defaults_are_string_and_not_facetable(admin: Http, unique: Unique) -> None:
    made = create(admin, name=unique("plain"))
    assert made["type"] == "STRING" and made["facetAble"] is False
    assert made["displayName"] is None and made["description"] is None


def test_duplicate_names_are_409_whatever_the_case(admin: Http, unique: Unique) -> None:
    name = unique("Dup")
    create(admin, name=name)
    response = admin.post("/customproperty", json={"name": name.upper()})
    assert_error(response, 409, ErrorCode.DUPLICATE_NAME.value)
    other = create(admin, name=unique("other"))
    renamed = admin.put(f"/customproperty/{other['key']}", json={"name": name.lower()})
    assert_error(renamed, 409, ErrorCode.DUPLICATE_NAME.value)


@pytest.mark.parametrize("body", [
    {}, {"name": ""}, {"name": "   "}, {"name": "x", "type": "COLOUR"}, {"name": "x", "type": 5},
    {"name": "x", "facetAble": "maybe"}, {"name": "x", "colour": "red"},
    {"name": "x" * 300},  # (a read-back "key" is now ignored on create: test_read_back.py)
])
def test_bad_definitions_are_400(admin: Http, body: dict[str, Any]) -> None:
    assert_error(admin.post("/customproperty", json=body), 400)


@pytest.mark.parametrize("level", ["Steward", "Analyst", "Guest"])
def test_only_administrators_define(members: dict[str, Member], admin: Http, level: str,
                                    unique: Unique) -> None:
    http = members[level].http
    assert_error(http.post("/customproperty", json={"name": unique("no")}), 403,
                 ErrorCode.PERMISSION_DENIED.value)
    made = create(admin, name=unique("yes"))
    assert_error(http.put(f"/customproperty/{made['key']}", json={"description": "x"}), 403,
                 ErrorCode.PERMISSION_DENIED.value)


def test_unknown_keys_are_404_and_there_is_no_delete(admin: Http, unique: Unique) -> None:
    assert_error(admin.get("/customproperty/nope"), 404,
                 ErrorCode.CUSTOM_PROPERTY_NOT_FOUND.value)
    assert_error(admin.put("/customproperty/nope", json={"description": "x"}), 404,
                 ErrorCode.CUSTOM_PROPERTY_NOT_FOUND.value)
    made = create(admin, name=unique("stay"))
    assert admin.delete(f"/customproperty/{made['key']}").status_code == 405


def test_update_changes_only_what_is_sent(admin: Http, unique: Unique) -> None:
    made = create(admin, name=unique("u"), description="d", facetAble=True)
    response = admin.put(f"/customproperty/{made['key']}", json={"displayName": "U"})
    assert response.status_code == 200, response.text
    body = response.json()
    assert (body["displayName"], body["description"], body["facetAble"]) == ("U", "d", True)
    assert body["timeOfLastChange"] >= made["timeOfLastChange"]
    for nulled in ("name", "type", "facetAble"):
        assert_error(admin.put(f"/customproperty/{made['key']}", json={nulled: None}), 400,
                     None, nulled)
    assert_error(admin.put(f"/customproperty/{made['key']}", json={"timeOfCreation": 1}), 400,
                 None, "timeOfCreation")


def test_a_type_change_must_fit_the_stored_values(
    admin: Http, resource_key: str, unique: Unique
) -> None:
    made = create(admin, name=unique("size"), type="NUMBER")
    assert set_value(admin, resource_key, made["name"], 2.5).status_code == 200
    refused = admin.put(f"/customproperty/{made['key']}", json={"type": "INTEGER"})
    assert_error(refused, 409, ErrorCode.INCOMPATIBLE_PROPERTY_TYPE.value, "2.5")
    assert admin.get(f"/customproperty/{made['key']}").json()["type"] == "NUMBER"
    assert set_value(admin, resource_key, made["name"], 4.0).status_code == 200
    changed = admin.put(f"/customproperty/{made['key']}", json={"type": "INTEGER"})
    assert changed.status_code == 200 and changed.json()["type"] == "INTEGER"
    resource = admin.get(f"/dataresource/{resource_key}").json()
    value = next(c["value"] for c in resource["customProperties"] if c["name"] == made["name"])
    assert value == 4 and isinstance(value, int)
    assert admin.put(f"/customproperty/{made['key']}", json={"type": "NUMBER"}).status_code == 200
    assert_error(admin.put(f"/customproperty/{made['key']}", json={"type": "DATE"}), 409,
                 ErrorCode.INCOMPATIBLE_PROPERTY_TYPE.value)


def test_an_unused_property_changes_type_freely(admin: Http, unique: Unique) -> None:
    made = create(admin, name=unique("free"), type="BOOLEAN")
    response = admin.put(f"/customproperty/{made['key']}", json={"type": "DATE"})
    assert response.status_code == 200 and response.json()["type"] == "DATE"


def test_a_renamed_property_keeps_its_values(
    admin: Http, resource_key: str, unique: Unique
) -> None:
    made = create(admin, name=unique("before"))
    set_value(admin, resource_key, made["name"], "v")
    after = unique("after")
    assert admin.put(f"/customproperty/{made['key']}", json={"name": after}).status_code == 200
    resource = admin.get(f"/dataresource/{resource_key}").json()
    assert {c["name"]: c["value"] for c in resource["customProperties"]}[after] == "v"


def test_definitions_are_audited(admin: Http, unique: Unique) -> None:
    made = create(admin, name=unique("aud"))
    admin.put(f"/customproperty/{made['key']}", json={"description": "x"})
    events = audit_search(admin, objectKey=made["key"])
    assert {(e["action"], e["objectType"], e["outcome"]) for e in events} >= {
        ("CREATE", "CUSTOM_PROPERTY", "SUCCESS"), ("UPDATE", "CUSTOM_PROPERTY", "SUCCESS")}
