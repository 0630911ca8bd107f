"""Tag associations sent back as read (issue 17, docs/compatibility.md).

A client reads a TagAssociationView, changes a field and sends it back: to
``PUT /tagassociation/tagassociation/{key}`` its read-only properties are ignored when they are
the association's own and refused by name (400 INVALID_PAYLOAD, ``fields``) when changed; to
``POST /tagassociation`` (and each item of ``/tagassociation/list``) its key, weight, rules,
people and times are ignored, but the names of its tag, domain and resource must be those its
``tagKey`` and ``resourceKey`` name.
"""

from __future__ import annotations

from typing import Any

import pytest

from catalog_nb.contract import ErrorCode
from catalog_nb.server.store import associations as association_store
from tests.conftest import Http, Server
from tests.server.helpers import assert_error
from tests.server.tag_helpers import associate, make_domain, make_tag, member, name, small_source

INVALID = ErrorCode.INVALID_PAYLOAD.value


@pytest.fixture(scope="module")
def lake(live_server: Server, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    return small_source(live_server, tmp_path_factory.mktemp("rb-assoc"))


@pytest.fixture
def tag(admin: Http) -> dict[str, Any]:
    domain = make_domain(admin, "rbpii")
    return make_tag(admin, domain["key"], name("Email"), sensitivity="CONFIDENTIAL")


def read(http: Http, lake: dict[str, str], path: str, key: str) -> dict[str, Any]:
    """The association ``key`` as ``GET /tagassociation/byresource`` answers it."""
    response = http.get("/tagassociation/byresource",
                        params={"sourceName": lake["name"], "resourcePath": path})
    assert response.status_code == 200, response.text
    (view,) = [a for a in response.json() if a["key"] == key]
    return dict(view)


def put(http: Http, body: dict[str, Any], key: str | None = None) -> Any:
    """``PUT`` the body to the association ``key`` (the body's own key by default)."""
    return http.put(f"/tagassociation/tagassociation/{key or body['key']}", json=body)


def test_an_association_read_back_unchanged_and_with_a_change(
    admin: Http, lake: dict[str, str], tag: dict[str, Any]
) -> None:
    made = associate(admin, lake["people"], tag["key"], field="email")
    view = read(admin, lake, "people.csv", made["key"])
    response = put(admin, view)
    assert response.status_code == 200, response.text
    assert response.json() == view  # nothing to change: nothing written

    response = put(admin, {**view, "state": "REJECTED", "description": "not an email"})
    assert response.status_code == 200, response.text
    after = read(admin, lake, "people.csv", made["key"])
    assert (after["state"], after["description"]) == ("REJECTED", "not an email")
    # the same read sent again: its timeOfLastChange and changedBy are older, not changes
    response = put(admin, {**view, "state": "ACCEPTED"})
    assert response.status_code == 200, response.text
    assert read(admin, lake, "people.csv", made["key"])["state"] == "ACCEPTED"


def test_a_resource_level_association_read_back(
    admin: Http, lake: dict[str, str], tag: dict[str, Any]
) -> None:
    made = associate(admin, lake["orders"], tag["key"])
    view = read(admin, lake, "orders.csv", made["key"])
    assert view["field"] == ""  # as the spec's examples answer it
    response = put(admin, {**view, "semantic": "IDENTIFIER"})
    assert response.status_code == 200, response.text
    assert response.json()["semantic"] == "IDENTIFIER" and response.json()["field"] == ""


@pytest.mark.parametrize(("change", "named"), [
    ({"key": "another"}, "key"),
    ({"tagName": "Phone"}, "tagName"),
    ({"tagFullName": "x.Phone"}, "tagFullName"),
    ({"domainName": "other"}, "domainName"),
    ({"resourcePath": "orders.csv"}, "resourcePath"),
    ({"dataSourceName": "elsewhere"}, "dataSourceName"),
    ({"weight": 0.5}, "weight"),
    ({"rules": ["by hand"]}, "rules"),
    ({"sensitivity": "PUBLIC"}, "sensitivity"),
    ({"createdBy": "someone"}, "createdBy"),
    ({"timeOfCreation": 1}, "timeOfCreation"),
])
def test_a_changed_read_only_property_is_refused_by_name(
    admin: Http, lake: dict[str, str], tag: dict[str, Any], change: dict[str, Any], named: str
) -> None:
    made = associate(admin, lake["people"], tag["key"], field="phone")
    view = read(admin, lake, "people.csv", made["key"])
    body = assert_error(put(admin, {**view, **change, "description": "x"}, made["key"]), 400,
                        INVALID, named)
    assert body["fields"] == [named]
    assert read(admin, lake, "people.csv", made["key"]) == view  # nothing written


def test_a_discovery_suggestion_accepted_by_sending_it_back(
    live_server: Server, admin: Http, lake: dict[str, str], tag: dict[str, Any]
) -> None:
    """A Steward reads discovery's suggestion (its weight and rules are discovery's) and sends
    it back ACCEPTED: the weight and rules are kept, the state is stored."""
    steward = member(live_server, admin, "Steward", domains=[tag["domainKey"]],
                     sources=[lake["key"]])
    with live_server.store.write() as conn:
        association_store.record_suggestion(conn, lake["people"], "city", tag["key"], 0.75,
                                            ["name matches"])
    (view,) = [a for a in steward.http.get(
        "/tagassociation/byfield", params={"sourceName": lake["name"],
                                           "resourcePath": "people.csv",
                                           "fieldName": "city"}).json()
               if a["tagKey"] == tag["key"]]
    assert (view["state"], view["weight"], view["rules"]) == ("SUGGESTED", 0.75, ["name matches"])
    response = put(steward.http, {**view, "state": "ACCEPTED"})
    assert response.status_code == 200, response.text
    after = response.json()
    assert (after["state"], after["weight"], after["rules"]) == (
        "ACCEPTED", 0.75, ["name matches"])
    assert after["changedBy"] == steward.name


def test_a_view_posted_tags_what_its_keys_name(
    admin: Http, lake: dict[str, str], tag: dict[str, Any]
) -> None:
    made = associate(admin, lake["people"], tag["key"], field="email", description="d")
    view = read(admin, lake, "people.csv", made["key"])
    # sent back unchanged: the association exists, nothing to do
    response = admin.post("/tagassociation", json=view)
    assert response.status_code == 201, response.text
    assert response.json()["key"] == made["key"]

    # a copy for another field of the same resource: its key, people and times are ignored
    copy = {**view, "field": "phone", "createdBy": "nobody", "state": "SUGGESTED",
            "description": "copied"}
    response = admin.post("/tagassociation", json=copy)
    assert response.status_code == 201, response.text
    created = response.json()
    assert created["key"] != made["key"] and created["field"] == "phone"
    assert (created["state"], created["description"]) == ("SUGGESTED", "copied")
    assert created["weight"] == 1.0 and created["createdBy"] == "admin"

    # names that are not those of the keys ask for another resource or tag, and a person's
    # association has full weight: refused by name, nothing written
    other = {**view, "resourcePath": "orders.csv", "field": "", "weight": 0.3}
    body = assert_error(admin.post("/tagassociation", json=other), 400, INVALID, "resourcePath",
                        "weight")
    assert body["fields"] == ["resourcePath", "weight"]
    assert [a for a in admin.get("/tagassociation/byresource", params={
        "sourceName": lake["name"], "resourcePath": "people.csv"}).json() if a["field"] == ""
            and a["tagKey"] == tag["key"]] == []
    answers = admin.post("/tagassociation/list", json=[
        {**view, "field": "city"}, {**view, "field": "city", "tagName": "Phone"},
    ])
    assert answers.status_code == 201, answers.text
    first, second = answers.json()
    assert first["ok"] and first["association"]["field"] == "city"
    assert not second["ok"] and second["error"]["status"] == 400
    assert "tagName" in second["error"]["message"]
