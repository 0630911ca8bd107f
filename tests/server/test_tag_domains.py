"""``/tagdomain``: CRUD, the list form (all or nothing), the 409 rules and the audit trail."""

from __future__ import annotations

import pytest

from catalog_nb.contract import ErrorCode
from catalog_nb.server.store.schema import tag_domains
from tests.conftest import Http, Server
from tests.server.helpers import assert_error, audit_search, create_role, row_count
from tests.server.tag_helpers import immutable_domain, make_domain, make_tag, name

DOMAIN_KEYS = {"key", "name", "description", "immutable", "tagCount", "timeOfCreation",
               "timeOfLastChange",
               # the product's fields (issue 17; test_tag_domain_fields.py)
               "color", "semantic", "createTags", "deleteTags", "readTags"}


def test_create_read_list_update_delete(admin: Http) -> None:
    made = make_domain(admin, description="people data")
    assert set(made) == DOMAIN_KEYS
    assert made["immutable"] is False and made["tagCount"] == 0
    assert made["description"] == "people data"
    assert admin.get(f"/tagdomain/{made['key']}").json() == made
    assert made in admin.get("/tagdomain").json()
    renamed = admin.put(f"/tagdomain/{made['key']}", json={"name": made["name"] + "x"})
    assert renamed.status_code == 200, renamed.text
    assert renamed.json()["name"] == made["name"] + "x"
    assert renamed.json()["description"] == "people data"  # absent: unchanged
    assert admin.delete(f"/tagdomain/{made['key']}").status_code == 204
    assert_error(admin.get(f"/tagdomain/{made['key']}"), 404,
                 ErrorCode.TAG_DOMAIN_NOT_FOUND.value, made["key"])
    events = audit_search(admin, objectKey=made["key"], objectType="TAG_DOMAIN")
    assert [e["action"] for e in events] == ["DELETE", "UPDATE", "CREATE"]
    assert all(e["outcome"] == "SUCCESS" for e in events)


def test_the_list_is_sorted_by_name_and_counts_tags(admin: Http) -> None:
    one = make_domain(admin, "aaa")
    make_tag(admin, one["key"], "t1")
    make_tag(admin, one["key"], "t2")
    listed = admin.get("/tagdomain").json()
    names = [d["name"].casefold() for d in listed]
    assert names == sorted(names)
    assert next(d for d in listed if d["key"] == one["key"])["tagCount"] == 2


def test_duplicate_names_are_409_case_insensitively(admin: Http) -> None:
    made = make_domain(admin)
    again = admin.post("/tagdomain", json={"name": made["name"].upper()})
    assert_error(again, 409, ErrorCode.DUPLICATE_NAME.value, made["name"].upper())
    other = make_domain(admin)
    assert_error(admin.put(f"/tagdomain/{other['key']}", json={"name": made["name"]}), 409,
                 ErrorCode.DUPLICATE_NAME.value)


def test_the_list_form_is_all_or_nothing(live_server: Server, admin: Http) -> None:
    first, second = name("bulk"), name("bulk")
    response = admin.post("/tagdomain/list", json=[{"name": first}, {"name": second,
                                                                     "description": "d"}])
    assert response.status_code == 201, response.text
    assert [d["name"] for d in response.json()] == [first, second]
    before = row_count(live_server, tag_domains)
    third = name("bulk")
    refused = admin.post("/tagdomain/list", json=[{"name": third}, {"name": first}])
    body = assert_error(refused, 409, ErrorCode.DUPLICATE_NAME.value, "Item 1")
    assert body["index"] == 1
    assert row_count(live_server, tag_domains) == before
    assert third not in {d["name"] for d in admin.get("/tagdomain").json()}
    failure = audit_search(admin, objectType="TAG_DOMAIN", outcome="FAILURE")[0]
    assert "item 1" in failure["message"]
    assert admin.post("/tagdomain/list", json=[]).json() == []


@pytest.mark.parametrize(("body", "named"), [
    ({"name": "a.b"}, "name"),
    ({"name": ""}, "name"),
    ({}, "name"),
    ({"name": "x", "colour": "red"}, "colour"),
    # a read-back tagCount is ignored on create (test_read_back.py); immutable cannot be asked
    ({"name": "x", "tagCount": 3, "immutable": True}, "immutable"),
])
def test_bad_domains_are_400(admin: Http, body: dict[str, object], named: str) -> None:
    assert_error(admin.post("/tagdomain", json=body), 400, ErrorCode.INVALID_PAYLOAD.value,
                 named)


def test_unknown_keys_are_404(admin: Http) -> None:
    for response in (admin.get("/tagdomain/nope"), admin.put("/tagdomain/nope", json={}),
                     admin.delete("/tagdomain/nope")):
        assert_error(response, 404, ErrorCode.TAG_DOMAIN_NOT_FOUND.value, "nope")


def test_a_domain_holding_tags_cannot_be_deleted(admin: Http) -> None:
    made = make_domain(admin)
    tag = make_tag(admin, made["key"], "keep")
    body = assert_error(admin.delete(f"/tagdomain/{made['key']}"), 409,
                        ErrorCode.DOMAIN_NOT_EMPTY.value, made["name"])
    assert body["tagCount"] == 1
    assert admin.delete(f"/tag/{tag['key']}").status_code == 204
    assert admin.delete(f"/tagdomain/{made['key']}").status_code == 204


def test_a_domain_granted_to_a_role_cannot_be_deleted(admin: Http) -> None:
    made = make_domain(admin)
    role = create_role(admin, name("holder"), "Steward", domainKeys=[made["key"]])
    assert_error(admin.delete(f"/tagdomain/{made['key']}"), 409,
                 ErrorCode.GRANTED_TO_ROLE.value, role["name"])


def test_renaming_a_domain_renames_its_tags_full_names(admin: Http) -> None:
    made = make_domain(admin)
    parent = make_tag(admin, made["key"], "Person")
    child = make_tag(admin, None, "Email", parentKey=parent["key"])
    assert child["fullName"] == f"{made['name']}.Person.Email"
    new = name("renamed")
    assert admin.put(f"/tagdomain/{made['key']}", json={"name": new}).status_code == 200
    assert admin.get(f"/tag/{child['key']}").json()["fullName"] == f"{new}.Person.Email"
    assert admin.get(f"/tag/{parent['key']}").json()["domainName"] == new


def test_built_in_domains_cannot_be_changed_or_deleted(live_server: Server, admin: Http) -> None:
    builtin = immutable_domain(live_server)
    shown = admin.get(f"/tagdomain/{builtin['key']}").json()
    assert shown["immutable"] is True
    assert_error(admin.put(f"/tagdomain/{builtin['key']}", json={"name": name("x")}), 409,
                 ErrorCode.IMMUTABLE.value, "name")
    assert_error(admin.put(f"/tagdomain/{builtin['key']}", json={"description": "new"}), 409,
                 ErrorCode.IMMUTABLE.value)
    same = admin.put(f"/tagdomain/{builtin['key']}", json={"name": builtin["name"]})
    assert same.status_code == 200  # sending what it already is changes nothing
    assert_error(admin.delete(f"/tagdomain/{builtin['key']}"), 409, ErrorCode.IMMUTABLE.value)
    # Tags of one's own may still be added to a built-in domain.
    assert make_tag(admin, builtin["key"], "Custom")["immutable"] is False
