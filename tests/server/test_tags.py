"""``/tag``: hierarchy and full names, reads, moves, the 400/409 rules, lists and built-ins."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from sqlalchemy import func, select

from catalog_nb.contract import ErrorCode, Sensitivity
from catalog_nb.server.store.schema import tags
from tests.conftest import Http, Server
from tests.server.helpers import assert_error, audit_search, row_count
from tests.server.tag_helpers import immutable_tag, make_domain, make_tag, name

TAG_KEYS = {
    "key", "type", "name", "fullName", "domainKey", "domainName", "parentKey", "children",
    "tagState", "state", "enable", "learningEnabled", "immutable", "minScore", "regEx",
    "regexMinLen", "regexMaxLen", "regexFilterClass", "synonyms", "sensitivity",
    "allSensitivities", "externalId", "externalSourceName", "description", "richDescription",
    "timeOfCreation", "timeOfLastChange", "associationCount", "restricted", "viewAble",
    "updateable", "score", "customProperties",
}


@pytest.fixture
def domain(admin: Http) -> dict[str, Any]:
    return make_domain(admin)


def test_a_tag_has_every_property_and_sensible_defaults(
    admin: Http, domain: dict[str, Any]
) -> None:
    tag = make_tag(admin, domain["key"], "Customer", description="a customer")
    assert set(tag) == TAG_KEYS
    assert tag["type"] == "tag" and tag["fullName"] == f"{domain['name']}.Customer"
    assert tag["domainKey"] == domain["key"] and tag["domainName"] == domain["name"]
    assert tag["parentKey"] is None and tag["children"] == []
    assert tag["tagState"] == "VALUE" and tag["state"] == "ACCEPTED"
    assert tag["enable"] is True and tag["learningEnabled"] is False
    assert tag["immutable"] is False and tag["synonyms"] == []
    assert tag["allSensitivities"] == [s.value for s in Sensitivity]
    # unset values as the spec types them, not null (issue 17)
    assert tag["associationCount"] == 0 and tag["sensitivity"] == ""
    assert (tag["minScore"], tag["regexMinLen"], tag["regexMaxLen"]) == (0.8, 0, 0)
    assert tag["externalId"] == "" and tag["externalSourceName"] == ""
    assert admin.get(f"/tag/{tag['key']}").json() == tag
    events = audit_search(admin, objectKey=tag["key"])
    assert events[0]["action"] == "CREATE" and events[0]["objectType"] == "TAG"
    assert events[0]["objectName"] == tag["fullName"]


def test_hierarchy_full_names_and_children(admin: Http, domain: dict[str, Any]) -> None:
    top = make_tag(admin, domain["key"], "Person")
    mid = make_tag(admin, None, "Contact", parentKey=top["key"])
    low = make_tag(admin, domain["key"], "Email", parentKey=mid["key"])
    assert low["fullName"] == f"{domain['name']}.Person.Contact.Email"
    shown = admin.get(f"/tag/{top['key']}").json()
    assert [c["key"] for c in shown["children"]] == [mid["key"]]
    assert shown["children"][0]["children"] == []  # children come without their own
    kids = admin.get(f"/tag/children/{mid['key']}").json()
    assert [k["key"] for k in kids] == [low["key"]]
    assert admin.get(f"/tag/children/{low['key']}").json() == []
    with_body = admin.request("GET", f"/tag/children/{mid['key']}",
                              json={"name": "ignored", "domainKey": domain["key"]})
    assert with_body.status_code == 200 and with_body.json() == kids  # the body is ignored
    listed = admin.get("/tag", params={"domainKey": domain["key"]}).json()
    assert [t["fullName"] for t in listed] == sorted(t["fullName"] for t in listed)
    assert {t["key"] for t in listed} == {top["key"], mid["key"], low["key"]}
    by_key = {t["key"]: t for t in listed}
    assert [c["key"] for c in by_key[mid["key"]]["children"]] == [low["key"]]
    assert {top["key"], low["key"]} <= {t["key"] for t in admin.get("/tag").json()}
    assert admin.get(f"/tagdomain/{domain['key']}").json()["tagCount"] == 3


def test_by_name_takes_a_name_or_a_full_name(admin: Http) -> None:
    one, two = make_domain(admin), make_domain(admin)
    a = make_tag(admin, one["key"], "Shared")
    b = make_tag(admin, two["key"], "Shared")
    child = make_tag(admin, None, "Leaf", parentKey=a["key"])

    def get(**params: str) -> Any:
        return admin.get("/tag/byname", params=params)

    assert get(tagName="shared", domainName=one["name"]).json()["key"] == a["key"]
    assert get(tagName=f"{two['name']}.Shared").json()["key"] == b["key"]
    assert get(tagName="Shared.Leaf", domainName=one["name"]).json()["key"] == child["key"]
    assert get(tagName=child["fullName"].upper()).json()["key"] == child["key"]
    unique_leaf = name("Leafy")
    leaf = make_tag(admin, one["key"], unique_leaf)
    assert get(tagName=unique_leaf).json()["key"] == leaf["key"]
    assert_error(get(tagName="Shared"), 400, ErrorCode.INVALID_PARAMETER.value, "ambiguous")
    assert_error(get(tagName="nope", domainName=one["name"]), 404,
                 ErrorCode.TAG_NOT_FOUND.value, "nope")
    assert_error(get(tagName="Shared", domainName="no-such-domain"), 404,
                 ErrorCode.TAG_DOMAIN_NOT_FOUND.value, "no-such-domain")


def test_unknown_keys_are_404_in_paths_and_queries(admin: Http) -> None:
    for response in (admin.get("/tag/nope"), admin.get("/tag/children/nope"),
                     admin.put("/tag/nope", json={"enable": False}), admin.delete("/tag/nope")):
        assert_error(response, 404, ErrorCode.TAG_NOT_FOUND.value, "nope")
    assert_error(admin.get("/tag", params={"domainKey": "nope"}), 404,
                 ErrorCode.TAG_DOMAIN_NOT_FOUND.value)


@pytest.mark.parametrize(("body", "code", "named"), [
    ({"domainKey": "nope"}, ErrorCode.UNKNOWN_REFERENCE, "nope"),
    ({"parentKey": "nope"}, ErrorCode.UNKNOWN_REFERENCE, "nope"),
    ({"domainKey": None}, ErrorCode.INVALID_PAYLOAD, "domainKey"),
    ({"name": "a.b"}, ErrorCode.INVALID_PAYLOAD, "name"),
    ({"state": "MAYBE"}, ErrorCode.INVALID_PAYLOAD, "state"),
    ({"tagState": "FUZZY"}, ErrorCode.INVALID_PAYLOAD, "tagState"),
    ({"sensitivity": "SECRET"}, ErrorCode.INVALID_PAYLOAD, "sensitivity"),
    ({"minScore": 1.5}, ErrorCode.INVALID_PAYLOAD, "minScore"),
    # a read-back fullName is ignored on create; the type must be a tag's (test_read_back.py)
    ({"fullName": "x.y", "type": "user"}, ErrorCode.INVALID_PAYLOAD, "type"),
    ({"enable": None}, ErrorCode.INVALID_PAYLOAD, "enable"),
    ({"tagState": "REGEX"}, ErrorCode.INVALID_PAYLOAD, "regEx"),
    ({"regEx": "a", "regexMinLen": 5, "regexMaxLen": 2}, ErrorCode.INVALID_PAYLOAD,
     "regexMinLen"),
    ({"tagState": "REGEX", "regEx": "(unclosed"}, ErrorCode.INVALID_REGEX, "regEx"),
    ({"regEx": "[z-a]"}, ErrorCode.INVALID_REGEX, "regEx"),
])
def test_bad_tags_are_400(
    admin: Http, domain: dict[str, Any], body: dict[str, Any], code: ErrorCode, named: str
) -> None:
    payload = {"name": name("bad"), "domainKey": domain["key"], **body}
    error = assert_error(admin.post("/tag", json=payload), 400, code.value, named)
    if code == ErrorCode.INVALID_REGEX:
        assert error["error"] and error["error"] in error["message"]


def test_a_regex_tag_keeps_its_settings(admin: Http, domain: dict[str, Any]) -> None:
    tag = make_tag(admin, domain["key"], "Zip", tagState="REGEX", regEx=r"^\d{5}$",
                   regexMinLen=5, regexMaxLen=5, minScore=0.8, sensitivity="INTERNAL",
                   synonyms=["postcode", "zip code"], regexFilterClass="none",
                   externalId="X1", externalSourceName="legacy")
    assert tag["regEx"] == r"^\d{5}$" and tag["regexMinLen"] == tag["regexMaxLen"] == 5
    assert tag["minScore"] == 0.8 and tag["sensitivity"] == "INTERNAL"
    assert tag["synonyms"] == ["postcode", "zip code"] and tag["externalId"] == "X1"
    bad = admin.put(f"/tag/{tag['key']}", json={"regEx": "*oops"})
    assert_error(bad, 400, ErrorCode.INVALID_REGEX.value, "regEx")
    assert_error(admin.put(f"/tag/{tag['key']}", json={"regEx": None}), 400,
                 ErrorCode.INVALID_PAYLOAD.value, "REGEX")
    assert admin.get(f"/tag/{tag['key']}").json()["regEx"] == r"^\d{5}$"


def test_sibling_names_are_unique_case_insensitively(
    admin: Http, domain: dict[str, Any]
) -> None:
    top = make_tag(admin, domain["key"], "Top")
    make_tag(admin, None, "Leaf", parentKey=top["key"])
    again = admin.post("/tag", json={"name": "LEAF", "parentKey": top["key"]})
    assert_error(again, 409, ErrorCode.DUPLICATE_NAME.value, "LEAF")
    assert_error(admin.post("/tag", json={"name": "top", "domainKey": domain["key"]}), 409,
                 ErrorCode.DUPLICATE_NAME.value)
    # The same name elsewhere in the tree is fine.
    assert make_tag(admin, domain["key"], "Leaf")["fullName"] == f"{domain['name']}.Leaf"
    other = make_tag(admin, None, "Other", parentKey=top["key"])
    assert_error(admin.put(f"/tag/{other['key']}", json={"name": "leaf"}), 409,
                 ErrorCode.DUPLICATE_NAME.value)


def test_ten_racing_creates_of_one_name_leave_one_tag(
    live_server: Server, admin: Http, domain: dict[str, Any]
) -> None:
    sessions = [live_server.session() for _ in range(10)]
    racing = name("Race")

    def create(http: Http) -> int:
        return int(http.post("/tag", json={"name": racing, "domainKey": domain["key"]})
                   .status_code)

    with ThreadPoolExecutor(max_workers=10) as pool:
        statuses = sorted(pool.map(create, sessions))
    assert statuses == [201] + [409] * 9
    with live_server.store.read() as conn:
        count = conn.execute(select(func.count()).select_from(tags).where(
            tags.c.domain_key == domain["key"])).scalar_one()
    assert count == 1


def test_put_changes_only_what_is_sent(admin: Http, domain: dict[str, Any]) -> None:
    tag = make_tag(admin, domain["key"], "Plain", description="keep", synonyms=["p"])
    response = admin.put(f"/tag/{tag['key']}", json={"enable": False, "learningEnabled": True,
                                                     "sensitivity": "CONFIDENTIAL"})
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["enable"] is False and body["learningEnabled"] is True
    assert body["sensitivity"] == "CONFIDENTIAL"
    assert body["description"] == "keep" and body["synonyms"] == ["p"]
    renamed = admin.put(f"/tag/{tag['key']}", json={"name": "Renamed"}).json()
    assert renamed["fullName"] == f"{domain['name']}.Renamed"
    assert_error(admin.put(f"/tag/{tag['key']}", json={"key": "other"}), 400,
                 ErrorCode.INVALID_PAYLOAD.value, "key")
    assert_error(admin.put(f"/tag/{tag['key']}", json={"state": "NOPE"}), 400,
                 ErrorCode.INVALID_PAYLOAD.value, "state")


def test_a_read_tag_can_be_sent_back(admin: Http, domain: dict[str, Any]) -> None:
    tag = make_tag(admin, domain["key"], "RoundTrip")
    tag["description"] = "changed"
    response = admin.put(f"/tag/{tag['key']}", json=tag)
    assert response.status_code == 200, response.text
    assert response.json()["description"] == "changed"


def test_moving_a_tag_moves_its_subtree(admin: Http, domain: dict[str, Any]) -> None:
    a = make_tag(admin, domain["key"], "A")
    b = make_tag(admin, domain["key"], "B")
    c = make_tag(admin, None, "C", parentKey=a["key"])
    d = make_tag(admin, None, "D", parentKey=c["key"])
    moved = admin.put(f"/tag/{c['key']}", json={"parentKey": b["key"]})
    assert moved.status_code == 200, moved.text
    assert moved.json()["fullName"] == f"{domain['name']}.B.C"
    assert admin.get(f"/tag/{d['key']}").json()["fullName"] == f"{domain['name']}.B.C.D"
    assert admin.get(f"/tag/children/{a['key']}").json() == []
    root = admin.put(f"/tag/{c['key']}", json={"parentKey": None}).json()
    assert root["parentKey"] is None and root["fullName"] == f"{domain['name']}.C"
    # To another domain: the subtree follows, at its root unless a parent is named.
    other = make_domain(admin)
    across = admin.put(f"/tag/{c['key']}", json={"domainKey": other["key"]}).json()
    assert across["domainKey"] == other["key"] and across["fullName"] == f"{other['name']}.C"
    deep = admin.get(f"/tag/{d['key']}").json()
    assert deep["domainKey"] == other["key"] and deep["fullName"] == f"{other['name']}.C.D"
    back = admin.put(f"/tag/{c['key']}", json={"parentKey": a["key"]}).json()
    assert back["domainKey"] == domain["key"] and back["fullName"] == f"{domain['name']}.A.C"
    mismatch = admin.put(f"/tag/{c['key']}", json={"parentKey": b["key"],
                                                   "domainKey": other["key"]})
    assert_error(mismatch, 400, ErrorCode.INVALID_PAYLOAD.value, "parentKey")


def test_a_tag_cannot_move_under_itself(admin: Http, domain: dict[str, Any]) -> None:
    top = make_tag(admin, domain["key"], "Top")
    mid = make_tag(admin, None, "Mid", parentKey=top["key"])
    low = make_tag(admin, None, "Low", parentKey=mid["key"])
    for parent in (low["key"], mid["key"], top["key"]):
        assert_error(admin.put(f"/tag/{top['key']}", json={"parentKey": parent}), 400,
                     ErrorCode.TAG_CYCLE.value, "under itself")
    assert admin.get(f"/tag/{top['key']}").json()["parentKey"] is None
    assert_error(admin.put(f"/tag/{top['key']}", json={"parentKey": "nope"}), 400,
                 ErrorCode.UNKNOWN_REFERENCE.value, "nope")


def test_a_tag_with_children_cannot_be_deleted(admin: Http, domain: dict[str, Any]) -> None:
    top = make_tag(admin, domain["key"], "Parent")
    child = make_tag(admin, None, "Kid", parentKey=top["key"])
    assert_error(admin.delete(f"/tag/{top['key']}"), 409, ErrorCode.TAG_HAS_CHILDREN.value,
                 "Kid")
    assert admin.delete(f"/tag/{child['key']}").status_code == 204
    assert admin.delete(f"/tag/{top['key']}").status_code == 204
    assert_error(admin.get(f"/tag/{top['key']}"), 404, ErrorCode.TAG_NOT_FOUND.value)


def test_the_list_forms_are_all_or_nothing(
    live_server: Server, admin: Http, domain: dict[str, Any]
) -> None:
    made = admin.post("/tag/list", json=[
        {"name": "One", "domainKey": domain["key"], "tagState": "VALUE", "enable": True},
        {"name": "Two", "domainKey": domain["key"], "description": "second"},
    ])
    assert made.status_code == 201, made.text
    one, two = made.json()
    assert [one["name"], two["name"]] == ["One", "Two"]
    before = row_count(live_server, tags)
    refused = admin.post("/tag/list", json=[{"name": "Three", "domainKey": domain["key"]},
                                            {"name": "one", "domainKey": domain["key"]}])
    assert_error(refused, 409, ErrorCode.DUPLICATE_NAME.value, "Item 1")
    assert row_count(live_server, tags) == before
    one["description"], two["enable"] = "first", False
    updated = admin.put("/tag/list", json=[one, two])
    assert updated.status_code == 200, updated.text
    assert [t["description"] for t in updated.json()] == ["first", "second"]
    assert updated.json()[1]["enable"] is False
    bad = admin.put("/tag/list", json=[{"key": one["key"], "description": "x"},
                                       {"key": "nope", "description": "y"}])
    assert_error(bad, 404, ErrorCode.TAG_NOT_FOUND.value, "Item 1")
    assert admin.get(f"/tag/{one['key']}").json()["description"] == "first"
    assert_error(admin.put("/tag/list", json=[{"description": "no key"}]), 400,
                 ErrorCode.INVALID_PAYLOAD.value, "key")
    events = audit_search(admin, objectKey=two["key"])
    assert [e["action"] for e in events] == ["UPDATE", "CREATE"]


def test_built_in_tags_refuse_changes_but_can_be_tuned(
    live_server: Server, admin: Http, domain: dict[str, Any]
) -> None:
    key = immutable_tag(live_server, domain["key"], "Email", tag_state="REGEX",
                        reg_ex=r"[^@]+@[^@]+", min_score=0.9, sensitivity="CONFIDENTIAL")
    tag = admin.get(f"/tag/{key}").json()
    assert tag["immutable"] is True and tag["tagState"] == "REGEX"
    for change in ({"name": "Mail"}, {"regEx": "x"}, {"description": "mine"},
                   {"sensitivity": "PUBLIC"}, {"parentKey": None, "domainKey": make_domain(
                       admin)["key"]}):
        assert_error(admin.put(f"/tag/{key}", json=change), 409, ErrorCode.IMMUTABLE.value)
    assert_error(admin.delete(f"/tag/{key}"), 409, ErrorCode.IMMUTABLE.value)
    tuned = admin.put(f"/tag/{key}", json={"enable": False, "minScore": 0.5,
                                           "learningEnabled": True, "synonyms": ["mail"]})
    assert tuned.status_code == 200, tuned.text
    body = tuned.json()
    assert body["enable"] is False and body["minScore"] == 0.5 and body["synonyms"] == ["mail"]
    tag["minScore"] = 0.6  # a full Tag with unchanged built-in values is a tuning too
    assert admin.put(f"/tag/{key}", json=tag).status_code == 200
    child = make_tag(admin, None, "Work", parentKey=key)
    assert child["fullName"] == f"{domain['name']}.Email.Work"


def test_the_list_forms_take_at_most_a_thousand_items(admin: Http) -> None:
    for path in ("/tag/list", "/tagdomain/list"):
        response = admin.post(path, json=[{"name": "x"}] * 1001)
        assert_error(response, 400, ErrorCode.INVALID_PAYLOAD.value, "1000")
    assert_error(admin.put("/tag/list", json=[{"key": "x"}] * 1001), 400,
                 ErrorCode.INVALID_PAYLOAD.value, "1000")
    assert_error(admin.post("/tag/list", json={"name": "x"}), 400,
                 ErrorCode.INVALID_PAYLOAD.value)
