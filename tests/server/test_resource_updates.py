"""``PUT /dataresource/{key}`` and ``PUT /dataresource/source/{name}``: people's annotations.

Only description, richDescription, owner, custom property values and the fields' display name,
description and comment may change; system-owned properties are refused by name; the write is
one audited transaction and answers the updated resource.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from catalog_nb.contract import ErrorCode
from catalog_nb.server import profiling
from catalog_nb.server.store import ingest
from tests.conftest import Http, Server
from tests.server.helpers import Member, assert_error, audit_search, create_role, create_user
from tests.server.lake import profile_folder, write_files

FILES = {"people.csv": "id,email,score\n1,a@x.org,2.5\n2,b@y.org,3.0\n",
         "other.csv": "k\n1\n"}


@pytest.fixture(scope="module")
def source(live_server: Server, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    folder = write_files(tmp_path_factory.mktemp("upd"), FILES)
    name = f"upd-{uuid.uuid4().hex[:8]}"
    key = profile_folder(live_server.store, name, folder)
    return {"name": name, "key": key, "folder": folder}


@pytest.fixture(scope="module")
def props(admin: Http) -> dict[str, str]:
    """One custom property of every type, by type (unique names)."""
    made = {}
    for kind in ("STRING", "INTEGER", "NUMBER", "BOOLEAN", "DATE", "STRING_LIST"):
        name = f"p{kind.lower()}_{uuid.uuid4().hex[:6]}"
        response = admin.post("/customproperty", json={"name": name, "type": kind})
        assert response.status_code == 201, response.text
        made[kind] = name
    return made


@pytest.fixture
def resource(admin: Http, source: dict[str, Any]) -> dict[str, Any]:
    response = admin.get(f"/dataresource/source/{source['name']}",
                         params={"resourcePath": "people.csv"})
    assert response.status_code == 200
    body: dict[str, Any] = response.json()
    return body


def put(http: Http, key: str, body: Any) -> Any:
    return http.put(f"/dataresource/{key}", json=body)


def custom(resource: dict[str, Any]) -> dict[str, Any]:
    return {c["name"]: c["value"] for c in resource["customProperties"]}


def test_people_owned_properties_change_and_the_answer_is_the_resource(
    admin: Http, resource: dict[str, Any]
) -> None:
    response = put(admin, resource["key"], {
        "description": "People we mail", "richDescription": "<b>People</b>", "owner": " ana ",
        "fields": [{"name": "email", "description": "Where we write", "displayName": "E-mail"}],
    })
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["key"] == resource["key"] and body["type"] == "dataresource"
    assert (body["description"], body["richDescription"], body["owner"]) == (
        "People we mail", "<b>People</b>", "ana")
    email = next(f for f in body["fields"] if f["name"] == "email")
    assert (email["description"], email["displayName"], email["comment"]) == (
        "Where we write", "E-mail", None)
    assert body["timeOfLastChange"] >= resource["timeOfLastChange"]
    assert body["rowCount"] == resource["rowCount"] and body["fields"][0]["properties"]
    again = admin.get(f"/dataresource/{resource['key']}").json()
    assert again == body
    cleared = put(admin, resource["key"], {"description": None, "fields": [
        {"name": "email", "displayName": None}]}).json()
    assert cleared["description"] is None and cleared["owner"] == "ana"
    email = next(f for f in cleared["fields"] if f["name"] == "email")
    assert email["displayName"] is None and email["description"] == "Where we write"


def test_the_path_form_updates_the_same_resource(
    admin: Http, source: dict[str, Any], resource: dict[str, Any]
) -> None:
    response = admin.put(f"/dataresource/source/{source['name']}",
                         params={"resourcePath": "people.csv"}, json={"owner": "bob"})
    assert response.status_code == 200, response.text
    assert response.json()["key"] == resource["key"] and response.json()["owner"] == "bob"
    missing = admin.put(f"/dataresource/source/{source['name']}",
                        params={"resourcePath": "nope.csv"}, json={"owner": "bob"})
    assert_error(missing, 404, ErrorCode.RESOURCE_NOT_FOUND.value)
    no_source = admin.put("/dataresource/source/nope", params={"resourcePath": "people.csv"},
                          json={"owner": "bob"})
    assert_error(no_source, 404, ErrorCode.DATA_SOURCE_NOT_FOUND.value)
    assert_error(admin.put("/dataresource/nope", json={}), 404, ErrorCode.RESOURCE_NOT_FOUND.value)


def test_custom_values_in_both_forms_and_null_removes(
    admin: Http, resource: dict[str, Any], props: dict[str, str]
) -> None:
    values = {props["STRING"]: "gold", props["INTEGER"]: 3.0, props["NUMBER"]: 2.5,
              props["BOOLEAN"]: False, props["DATE"]: "2024-02-29",
              props["STRING_LIST"]: ["a", "b"]}
    body = put(admin, resource["key"], {"customProperties": values}).json()
    assert custom(body) == {**values, props["INTEGER"]: 3}
    entry = next(c for c in body["customProperties"] if c["name"] == props["INTEGER"])
    assert entry["type"] == "INTEGER" and entry["facetAble"] is False
    listed = put(admin, resource["key"], {"customProperties": [
        {"name": props["STRING"].upper(), "value": "silver"},
        {"name": props["BOOLEAN"], "value": None}]}).json()
    assert custom(listed)[props["STRING"]] == "silver"
    assert props["BOOLEAN"] not in custom(listed) and props["NUMBER"] in custom(listed)


@pytest.mark.parametrize(("kind", "value"), [
    ("STRING", 5), ("STRING", ["x"]), ("INTEGER", "3"), ("INTEGER", 2.5), ("INTEGER", True),
    ("NUMBER", "2.5"), ("NUMBER", False), ("BOOLEAN", "true"), ("BOOLEAN", 1),
    ("DATE", "2024-02-30"), ("DATE", "31/01/2024"), ("DATE", 1706659200000),
    ("STRING_LIST", "a"), ("STRING_LIST", ["a", 1]), ("INTEGER", 2**70),
])
def test_a_value_of_the_wrong_type_is_400_and_changes_nothing(
    admin: Http, resource: dict[str, Any], props: dict[str, str], kind: str, value: Any
) -> None:
    response = put(admin, resource["key"], {"description": "must not stick",
                                           "customProperties": {props[kind]: value}})
    body = assert_error(response, 400, ErrorCode.INVALID_PROPERTY_VALUE.value, props[kind], kind)
    assert body["property"] == props[kind]
    after = admin.get(f"/dataresource/{resource['key']}").json()
    assert after["description"] != "must not stick"


@pytest.mark.parametrize(("body", "named"), [
    ({"rowCount": 5}, "rowCount"),
    ({"fileFormat": "csv", "description": "x"}, "fileFormat"),
    ({"key": "k"}, "key"),
    ({"resourcePath": "elsewhere.csv"}, "resourcePath"),
    ({"status": "PROFILED"}, "status"),
    ({"timeOfLastChange": 1}, "timeOfLastChange"),
    ({"tagAssociationViewList": []}, "tagAssociationViewList"),
    ({"memberPaths": []}, "memberPaths"),
    ({"fields": [{"name": "email", "dataType": "LONG"}]}, "fields[].dataType"),
    ({"fields": [{"name": "email", "properties": []}]}, "fields[].properties"),
    ({"customProperties": [{"name": "x", "value": 1, "type": "STRING"}]},
     "customProperties[].type"),
])
def test_a_system_owned_property_is_400_naming_it(
    admin: Http, resource: dict[str, Any], body: dict[str, Any], named: str
) -> None:
    response = put(admin, resource["key"], body)
    error = assert_error(response, 400, ErrorCode.READ_ONLY_PROPERTY.value, named)
    assert named in error["properties"]


@pytest.mark.parametrize(("body", "code"), [
    ({"colour": "red"}, ErrorCode.INVALID_PAYLOAD),
    ([], ErrorCode.INVALID_PAYLOAD),
    ({"description": 5}, ErrorCode.INVALID_PAYLOAD),
    ({"owner": ["a"]}, ErrorCode.INVALID_PAYLOAD),
    ({"owner": "x" * 300}, ErrorCode.INVALID_PAYLOAD),
    ({"customProperties": "gold"}, ErrorCode.INVALID_PAYLOAD),
    ({"customProperties": {"no_such_property_anywhere": 1}}, ErrorCode.UNKNOWN_REFERENCE),
    ({"customProperties": [{"value": 1}]}, ErrorCode.INVALID_PAYLOAD),
    ({"fields": {"email": "x"}}, ErrorCode.INVALID_PAYLOAD),
    ({"fields": [{"name": "no_such_field", "description": "x"}]}, ErrorCode.UNKNOWN_REFERENCE),
    ({"fields": [{"name": "email", "colour": "x"}]}, ErrorCode.INVALID_PAYLOAD),
    ({"fields": [{"name": "email"}, {"name": "email"}]}, ErrorCode.INVALID_PAYLOAD),
])
def test_bad_bodies_are_400(
    admin: Http, resource: dict[str, Any], body: Any, code: ErrorCode
) -> None:
    assert_error(put(admin, resource["key"], body), 400, code.value)


def test_malformed_json_is_400(admin: Http, resource: dict[str, Any]) -> None:
    response = admin.put(f"/dataresource/{resource['key']}", data=b"{nope",
                         headers={"Content-Type": "application/json"})
    assert_error(response, 400, ErrorCode.MALFORMED_JSON.value)


@pytest.mark.parametrize("level", ["Analyst", "Guest"])
def test_only_stewards_and_administrators_write(
    members: dict[str, Member], resource: dict[str, Any], level: str
) -> None:
    response = put(members[level].http, resource["key"], {"description": "mine"})
    assert_error(response, 403, ErrorCode.PERMISSION_DENIED.value, "Steward")


def test_a_steward_writes_what_they_see_and_nothing_else(
    live_server: Server, admin: Http, source: dict[str, Any], resource: dict[str, Any],
    unique: Callable[[str], str],
) -> None:
    role = create_role(admin, unique("Curators"), "Steward")
    name = unique("steward")
    create_user(admin, name, roles=[role["name"]])
    steward = live_server.session(name, "member-password-1")
    assert_error(put(steward, resource["key"], {"description": "x"}), 404,
                 ErrorCode.RESOURCE_NOT_FOUND.value)
    admin.put(f"/user/role/{role['key']}", json={"dataSourceKeys": [source["key"]]})
    response = put(steward, resource["key"], {"description": "curated"})
    assert response.status_code == 200 and response.json()["description"] == "curated"


def test_writes_are_audited_with_outcome(admin: Http, resource: dict[str, Any]) -> None:
    put(admin, resource["key"], {"description": "audited"})
    put(admin, resource["key"], {"rowCount": 1})
    events = audit_search(admin, objectKey=resource["key"])
    kinds = {(e["action"], e["objectType"], e["outcome"]) for e in events}
    assert ("UPDATE", "DATA_RESOURCE", "SUCCESS") in kinds
    assert ("UPDATE", "DATA_RESOURCE", "FAILURE") in kinds
    success = next(e for e in events if e["outcome"] == "SUCCESS")
    assert "description" in success["message"] and "people.csv" in success["objectName"]


def test_annotations_survive_profiling_again(
    live_server: Server, admin: Http, source: dict[str, Any], resource: dict[str, Any],
    props: dict[str, str],
) -> None:
    put(admin, resource["key"], {"description": "kept", "customProperties": {props["STRING"]: "k"},
                                 "fields": [{"name": "score", "comment": "0-5"}]})
    (source["folder"] / "people.csv").write_text(FILES["people.csv"] + "3,c@z.org,4.5\n")
    profile = profiling.profile_file("people.csv", root=source["folder"])
    with live_server.store.write() as conn:
        ingest.record_profile(conn, source["key"], profile)
    after = admin.get(f"/dataresource/{resource['key']}").json()
    assert after["rowCount"] == 3 and after["description"] == "kept"
    assert custom(after)[props["STRING"]] == "k"
    assert next(f for f in after["fields"] if f["name"] == "score")["comment"] == "0-5"


def test_concurrent_writes_of_one_resource_all_succeed(
    live_server: Server, resource: dict[str, Any], props: dict[str, str]
) -> None:
    sessions = [live_server.session() for _ in range(6)]

    def write(i: int) -> int:
        body = {"description": f"writer {i}", "customProperties": {props["INTEGER"]: i}}
        return int(put(sessions[i], resource["key"], body).status_code)

    with ThreadPoolExecutor(len(sessions)) as pool:
        statuses = list(pool.map(write, range(len(sessions))))
    assert statuses == [200] * len(sessions)
    final = sessions[0].get(f"/dataresource/{resource['key']}").json()
    winner = int(final["description"].split()[1])
    assert custom(final)[props["INTEGER"]] == winner
