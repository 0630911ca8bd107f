"""Read-back bodies and partial updates (issue 17, docs/compatibility.md).

A client reads an object, changes a field and sends the whole object back: read-only properties
are ignored when unchanged and refused by name (400 INVALID_PAYLOAD) when changed; on create they
are ignored but for the values every new object of the kind has (``type``, ``immutable``).
Maps merge on ``PUT``: an entry sent as null is removed, the map sent as null is cleared.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from catalog_nb.contract import ErrorCode
from tests.conftest import Http, Server
from tests.server.helpers import assert_error, create_role, create_user, get_user
from tests.server.lake import profile_folder, write_files
from tests.server.tag_helpers import make_domain, make_tag, name

INVALID = ErrorCode.INVALID_PAYLOAD.value


# ---------------------------------------------------------------------------------- users


def test_a_user_read_back_with_one_change_is_accepted(admin: Http) -> None:
    made = create_user(admin, name("rb"), attributes={"firstName": "Bob", "lastName": "Smith"})
    read = get_user(admin, made["key"])
    read["description"] = "changed"
    response = admin.put(f"/user/{made['key']}", json=read)
    assert response.status_code == 204, response.text
    after = get_user(admin, made["key"])
    assert after["description"] == "changed"
    assert after["attributes"] == {"firstName": "Bob", "lastName": "Smith"}
    # sent again with the stale timeOfLastChange: an older read, not a change
    read["description"] = "again"
    assert admin.put(f"/user/{made['key']}", json=read).status_code == 204
    assert get_user(admin, made["key"])["description"] == "again"


@pytest.mark.parametrize(("change", "named"), [
    ({"admin": True}, "admin"),
    ({"accessLevels": ["Administrator"]}, "accessLevels"),
    ({"key": "another"}, "key"),
    ({"type": "role"}, "type"),
    ({"timeOfCreation": 1}, "timeOfCreation"),
    ({"score": 5}, "score"),
    ({"passwordSet": False}, "passwordSet"),
    ({"assignedByMap": {}}, "assignedByMap"),
])
def test_a_changed_read_only_user_property_is_refused_by_name(
    admin: Http, change: dict[str, Any], named: str
) -> None:
    made = create_user(admin, name("rb"))
    read = get_user(admin, made["key"])
    body = assert_error(admin.put(f"/user/{made['key']}", json={**read, **change,
                                                                "description": "x"}),
                        400, INVALID, named)
    assert body["fields"] == [named]
    assert get_user(admin, made["key"]) == read  # nothing written


def test_a_copied_user_is_created_with_its_read_only_properties_ignored(admin: Http) -> None:
    source = create_user(admin, name("orig"), roles=["Analyst"])
    copy = {**get_user(admin, source["key"]), "name": name("copy"), "admin": True,
            "accessLevels": ["Administrator"]}
    response = admin.post("/user", json=copy)
    assert response.status_code == 201, response.text
    made = response.json()
    assert made["key"] != source["key"] and made["admin"] is False
    assert made["accessLevels"] == ["Analyst"]
    assert_error(admin.post("/user", json={**copy, "name": name("c"), "type": "tag"}), 400,
                 INVALID, "type")


def test_attributes_merge_and_null_clears(admin: Http) -> None:
    made = create_user(admin, name("merge"), attributes={
        "firstName": "Bob", "lastName": "Smith", "email": "bob@example.com"})
    key = made["key"]
    assert admin.put(f"/user/{key}", json={"attributes": {"firstName": "Robert"}}
                     ).status_code == 204
    assert get_user(admin, key)["attributes"] == {
        "firstName": "Robert", "lastName": "Smith", "email": "bob@example.com"}
    assert admin.put(f"/user/{key}", json={"attributes": {"email": None}}).status_code == 204
    assert get_user(admin, key)["attributes"] == {"firstName": "Robert", "lastName": "Smith"}
    assert admin.put(f"/user/{key}", json={"attributes": None}).status_code == 204
    assert get_user(admin, key)["attributes"] == {}


# ---------------------------------------------------------------------------------- roles


def test_a_role_read_back_is_accepted_and_changes_refused(admin: Http) -> None:
    role = create_role(admin, name("rbr"), "Analyst")
    read = admin.get(f"/user/role/{role['key']}").json()
    response = admin.put(f"/user/role/{role['key']}", json={**read, "description": "d"})
    assert response.status_code == 200, response.text
    assert response.json()["description"] == "d"
    assert_error(admin.put(f"/user/role/{role['key']}", json={**read, "key": "other"}), 400,
                 INVALID, "key")
    copied = admin.post("/user/role", json={**read, "name": name("copy")})
    assert copied.status_code == 201, copied.text
    assert copied.json()["key"] != role["key"]


# ----------------------------------------------------------------------------- tags, domains


def test_a_tag_read_back_can_be_posted_and_put(admin: Http) -> None:
    domain = make_domain(admin)
    tag = make_tag(admin, domain["key"], "orig", description="first")
    copy = {**tag, "name": "copy"}  # its fullName, key and times are the original's: ignored
    response = admin.post("/tag", json=copy)
    assert response.status_code == 201, response.text
    made = response.json()
    assert made["fullName"] == f"{domain['name']}.copy" and made["key"] != tag["key"]
    listed = admin.post("/tag/list", json=[{**tag, "name": "copy2"}])
    assert listed.status_code == 201, listed.text

    read = admin.get(f"/tag/{tag['key']}").json()
    response = admin.put(f"/tag/{tag['key']}", json={**read, "description": "second"})
    assert response.status_code == 200, response.text
    assert response.json()["description"] == "second"
    assert_error(admin.put(f"/tag/{tag['key']}", json={**read, "fullName": "x.y"}), 400, INVALID,
                 "fullName")
    assert_error(admin.put("/tag/list", json=[{**read, "domainName": "other"}]), 400, INVALID,
                 "domainName")
    # children and associationCount move with other writes: a stale value is not a change
    stale = {**read, "associationCount": 7, "children": [{"key": "gone"}]}
    assert admin.put(f"/tag/{tag['key']}", json=stale).status_code == 200


def test_a_domain_read_back_is_accepted_and_changes_refused(admin: Http) -> None:
    domain = make_domain(admin, description="one")
    response = admin.put(f"/tagdomain/{domain['key']}", json={**domain, "description": "two"})
    assert response.status_code == 200, response.text
    assert response.json()["description"] == "two"
    assert_error(admin.put(f"/tagdomain/{domain['key']}", json={**domain, "immutable": True}),
                 400, INVALID, "immutable")
    copied = admin.post("/tagdomain", json={**domain, "name": name("copy"), "tagCount": 4})
    assert copied.status_code == 201, copied.text
    assert copied.json()["tagCount"] == 0


def test_unset_tag_values_sent_back_stay_unset(admin: Http) -> None:
    """A Tag answers unset values as the spec types them ("" and 0, discovery's minScore);
    sent back they change nothing."""
    domain = make_domain(admin)
    tag = make_tag(admin, domain["key"], "plain")
    assert (tag["sensitivity"], tag["externalId"], tag["regexMaxLen"]) == ("", "", 0)
    response = admin.put(f"/tag/{tag['key']}", json={**tag, "description": "d"})
    assert response.status_code == 200, response.text
    after = response.json()
    assert {k: v for k, v in after.items() if k not in ("description", "timeOfLastChange")} == {
        k: v for k, v in tag.items() if k not in ("description", "timeOfLastChange")}
    # a REGEX tag keeps its bounds; 0 for a bound means none
    regex = make_tag(admin, domain["key"], "rx", tagState="REGEX", regEx="[0-9]+",
                     regexMinLen=2, regexMaxLen=0)
    assert (regex["regexMinLen"], regex["regexMaxLen"]) == (2, 0)
    assert admin.put(f"/tag/{regex['key']}", json={"regexMaxLen": 5}).json()["regexMaxLen"] == 5


# ------------------------------------------------------------------- virtual folders, data sets


def test_folders_and_datasets_read_back(
    live_server: Server, admin: Http, tmp_path: Path
) -> None:
    source = profile_folder(live_server.store, name("rbsrc"),
                            write_files(tmp_path, {"x/1.csv": "a\n1\n", "y/2.csv": "a\n2\n"}))
    made = admin.post("/virtualfolder", json={"name": name("vf"), "dataSourceKey": source,
                                              "pathSpecs": [{"sourcePath": "x"}]}).json()
    response = admin.put(f"/virtualfolder/{made['key']}",
                         json={**made, "description": "d", "resourceCount": 99})
    assert response.status_code == 200, response.text
    assert response.json()["description"] == "d" and response.json()["resourceCount"] == 1
    assert_error(admin.put(f"/virtualfolder/{made['key']}",
                           json={**made, "dataSourceName": "other"}), 400, INVALID,
                 "dataSourceName")
    copied = admin.post("/virtualfolder", json={**made, "name": name("vf2")})
    assert copied.status_code == 201, copied.text

    ds = admin.post("/dataset", json={"name": name("ds"),
                                      "dataSetPathSpecs": {source: [{"sourcePath": "y"}]}}).json()
    response = admin.put(f"/dataset/{ds['key']}", json={**ds, "description": "d"})
    assert response.status_code == 200, response.text
    assert_error(admin.put(f"/dataset/{ds['key']}", json={**ds, "key": "k"}), 400, INVALID,
                 "key")
    assert_error(admin.post("/dataset", json={**ds, "name": name("ds2"),
                                              "type": "virtualfolder"}), 400, INVALID, "type")


# ------------------------------------------------------------------------- custom properties


def test_a_custom_property_definition_read_back(admin: Http) -> None:
    made = admin.post("/customproperty", json={"name": name("cp"), "key": "mine",
                                               "timeOfCreation": 1})
    assert made.status_code == 201, made.text  # read-only properties ignored on create
    read = made.json()
    assert read["key"] != "mine" and read["timeOfCreation"] != 1
    response = admin.put(f"/customproperty/{read['key']}", json={**read, "description": "d"})
    assert response.status_code == 200, response.text
    assert response.json()["description"] == "d"
    assert_error(admin.put(f"/customproperty/{read['key']}", json={**read, "timeOfCreation": 1}),
                 400, INVALID, "timeOfCreation")
