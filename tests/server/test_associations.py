"""``/tagassociation``: create and promote, change state, delete, the reads, the bulk form."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from sqlalchemy import func, select

from catalog_nb.contract import ErrorCode
from catalog_nb.server.store import associations as association_store
from catalog_nb.server.store.schema import tag_associations
from tests.conftest import Http, Server
from tests.server.helpers import assert_error, audit_search, row_count
from tests.server.tag_helpers import associate, make_domain, make_tag, name, small_source

VIEW_KEYS = {
    "key", "tagKey", "tagName", "tagFullName", "domainKey", "domainName", "resourceKey",
    "resourcePath", "dataSourceName", "field", "state", "semantic", "description", "weight",
    "rules", "sensitivity", "createdBy", "changedBy", "timeOfCreation", "timeOfLastChange",
}


@pytest.fixture(scope="module")
def lake(live_server: Server, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    return small_source(live_server, tmp_path_factory.mktemp("assoc"))


@pytest.fixture
def tag(admin: Http) -> dict[str, Any]:
    domain = make_domain(admin, "pii")
    return make_tag(admin, domain["key"], name("Email"), sensitivity="CONFIDENTIAL")


def count_of(server: Server, tag_key: str) -> int:
    with server.store.read() as conn:
        return int(conn.execute(select(func.count()).select_from(tag_associations).where(
            tag_associations.c.tag_key == tag_key)).scalar_one())


def test_a_field_association_is_a_full_view(
    admin: Http, lake: dict[str, str], tag: dict[str, Any]
) -> None:
    made = associate(admin, lake["people"], tag["key"], field="email", semantic="OTHER",
                     description="contact")
    assert set(made) == VIEW_KEYS
    assert made["tagFullName"] == tag["fullName"] and made["tagName"] == tag["name"]
    assert made["domainName"] == tag["domainName"] and made["domainKey"] == tag["domainKey"]
    assert made["resourcePath"] == "people.csv" and made["dataSourceName"] == lake["name"]
    assert made["field"] == "email" and made["state"] == "ACCEPTED"  # default for admins
    assert made["semantic"] == "OTHER" and made["description"] == "contact"
    # a person's association has full weight (a number in the spec; issue 17)
    assert made["weight"] == 1.0 and made["rules"] == []
    assert made["sensitivity"] == "CONFIDENTIAL" and made["createdBy"] == "admin"
    events = audit_search(admin, objectKey=made["key"])
    assert events[0]["objectType"] == "TAG_ASSOCIATION" and events[0]["message"] == "created"
    assert tag["fullName"] in events[0]["objectName"] and "people.csv" in events[0]["objectName"]
    assert admin.get(f"/tag/{tag['key']}").json()["associationCount"] == 1


def test_resource_and_field_level_are_different_associations(
    admin: Http, lake: dict[str, str], tag: dict[str, Any]
) -> None:
    whole = associate(admin, lake["people"], tag["key"])
    field = associate(admin, lake["people"], tag["key"], field="phone")
    # a resource-level association's field is "" (the spec types it as a string; issue 17)
    assert whole["field"] == "" and field["field"] == "phone"
    assert whole["key"] != field["key"]
    empty = associate(admin, lake["people"], tag["key"], field="")
    assert empty["key"] == whole["key"]  # an empty field name is the resource itself


@pytest.mark.parametrize(("body", "status", "code", "named"), [
    ({"tagKey": "nope"}, 400, ErrorCode.UNKNOWN_REFERENCE, "nope"),
    ({"resourceKey": "nope"}, 404, ErrorCode.RESOURCE_NOT_FOUND, "nope"),
    ({"field": "no_such_field"}, 400, ErrorCode.UNKNOWN_FIELD, "no_such_field"),
    ({"state": "MAYBE"}, 400, ErrorCode.INVALID_PAYLOAD, "state"),
    ({"state": "accepted"}, 400, ErrorCode.INVALID_PAYLOAD, "state"),
    ({"weight": 0.5}, 400, ErrorCode.INVALID_PAYLOAD, "weight"),
    ({"semantic": "x" * 40}, 400, ErrorCode.INVALID_PAYLOAD, "semantic"),
    ({"colour": "red"}, 400, ErrorCode.INVALID_PAYLOAD, "colour"),
])
def test_bad_associations_are_refused_and_write_nothing(
    live_server: Server, admin: Http, lake: dict[str, str], tag: dict[str, Any],
    body: dict[str, Any], status: int, code: ErrorCode, named: str,
) -> None:
    payload = {"resourceKey": lake["people"], "tagKey": tag["key"], **body}
    before = row_count(live_server, tag_associations)
    assert_error(admin.post("/tagassociation", json=payload), status, code.value, named)
    assert row_count(live_server, tag_associations) == before


def test_creating_promotes_suggestions_and_rejections(
    live_server: Server, admin: Http, lake: dict[str, str], tag: dict[str, Any]
) -> None:
    with live_server.store.write() as conn:
        association_store.record_suggestion(conn, lake["people"], "email", tag["key"], 0.75,
                                            ["regex:Email"])
    suggested = admin.get("/tagassociation/byfield", params={
        "sourceName": lake["name"], "resourcePath": "people.csv", "fieldName": "email"}).json()
    suggested = [a for a in suggested if a["tagKey"] == tag["key"]]
    assert [(a["state"], a["weight"], a["rules"]) for a in suggested] == [
        ("SUGGESTED", 0.75, ["regex:Email"])]
    promoted = associate(admin, lake["people"], tag["key"], field="email", state="ACCEPTED")
    assert promoted["key"] == suggested[0]["key"] and promoted["state"] == "ACCEPTED"
    assert promoted["weight"] == 0.75 and promoted["changedBy"] == "admin"
    assert promoted["createdBy"] == association_store.DISCOVERY
    # A suggestion never downgrades an accepted association.
    again = associate(admin, lake["people"], tag["key"], field="email", state="SUGGESTED")
    assert again["state"] == "ACCEPTED"
    rejected = associate(admin, lake["people"], tag["key"], field="email", state="REJECTED")
    assert rejected["state"] == "REJECTED"
    with live_server.store.write() as conn:  # remembered: discovery leaves it alone
        outcome = association_store.record_suggestion(conn, lake["people"], "email",
                                                      tag["key"], 0.99, ["regex:Email"])
    assert outcome == "rejected"
    same = associate(admin, lake["people"], tag["key"], field="email", state="REJECTED")
    assert same["timeOfLastChange"] == rejected["timeOfLastChange"]
    back = associate(admin, lake["people"], tag["key"], field="email", state="ACCEPTED")
    assert back["state"] == "ACCEPTED" and count_of(live_server, tag["key"]) == 1
    messages = [e["message"] for e in audit_search(admin, objectKey=back["key"])]
    assert messages == ["changed", "unchanged", "changed", "unchanged", "changed"]


def test_ten_racing_creates_of_one_association_leave_one_row(
    live_server: Server, lake: dict[str, str], tag: dict[str, Any]
) -> None:
    sessions = [live_server.session() for _ in range(10)]
    body = {"resourceKey": lake["orders"], "tagKey": tag["key"], "field": "amount"}
    with ThreadPoolExecutor(max_workers=10) as pool:
        answers = list(pool.map(lambda http: http.post("/tagassociation", json=body), sessions))
    assert [a.status_code for a in answers] == [201] * 10
    assert len({a.json()["key"] for a in answers}) == 1
    assert count_of(live_server, tag["key"]) == 1


def test_put_changes_state_semantic_and_description(
    admin: Http, lake: dict[str, str], tag: dict[str, Any]
) -> None:
    made = associate(admin, lake["people"], tag["key"], field="city", state="SUGGESTED")
    path = f"/tagassociation/tagassociation/{made['key']}"
    response = admin.put(path, json={"resourceKey": lake["people"], "tagKey": tag["key"],
                                     "state": "REJECTED", "semantic": "OTHER"})
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["state"] == "REJECTED" and body["semantic"] == "OTHER"
    assert body["field"] == "city" and body["timeOfLastChange"] >= made["timeOfLastChange"]
    for bad, named in (({"state": "GONE"}, "state"), ({"state": None}, "state"),
                       ({"tagKey": "other"}, "tagKey"), ({"resourceKey": "other"}, "resourceKey"),
                       ({"field": "email"}, "field"), ({"weight": 0.5}, "weight")):
        assert_error(admin.put(path, json=bad), 400, ErrorCode.INVALID_PAYLOAD.value, named)
    assert_error(admin.put("/tagassociation/tagassociation/nope", json={"state": "ACCEPTED"}),
                 404, ErrorCode.TAG_ASSOCIATION_NOT_FOUND.value)
    events = audit_search(admin, objectKey=made["key"], action="UPDATE")
    assert events[-1]["outcome"] == "SUCCESS" and "state" in events[-1]["message"]


def test_delete_removes_one_association(
    live_server: Server, admin: Http, lake: dict[str, str], tag: dict[str, Any]
) -> None:
    made = associate(admin, lake["readme"], tag["key"])
    path = f"/tagassociation/tagassociation/{made['key']}"
    assert admin.delete(path).status_code == 204
    assert count_of(live_server, tag["key"]) == 0
    assert_error(admin.delete(path), 404, ErrorCode.TAG_ASSOCIATION_NOT_FOUND.value)
    assert audit_search(admin, objectKey=made["key"])[1]["action"] == "DELETE"


def test_deleting_a_tag_removes_its_associations(
    live_server: Server, admin: Http, lake: dict[str, str], tag: dict[str, Any]
) -> None:
    associate(admin, lake["people"], tag["key"])
    associate(admin, lake["orders"], tag["key"], field="order_id")
    assert count_of(live_server, tag["key"]) == 2
    assert admin.delete(f"/tag/{tag['key']}").status_code == 204
    assert count_of(live_server, tag["key"]) == 0
    event = audit_search(admin, objectKey=tag["key"], action="DELETE")[0]
    assert event["message"] == "deleted with 2 association(s)"


def test_by_resource_and_by_field(admin: Http, lake: dict[str, str], tag: dict[str, Any]) -> None:
    other = make_tag(admin, tag["domainKey"], name("Phone"))
    whole = associate(admin, lake["people"], tag["key"])
    email = associate(admin, lake["people"], tag["key"], field="email")
    phone = associate(admin, lake["people"], other["key"], field="phone")
    params = {"sourceName": lake["name"], "resourcePath": "people.csv"}
    listed = admin.get("/tagassociation/byresource", params=params).json()
    mine = [a["key"] for a in listed if a["key"] in {whole["key"], email["key"], phone["key"]}]
    assert mine == [whole["key"], email["key"], phone["key"]]  # resource level, then by field
    assert all(set(a) == VIEW_KEYS for a in listed)
    field = admin.get("/tagassociation/byfield", params={**params, "fieldName": "email"}).json()
    assert email["key"] in [a["key"] for a in field] and all(a["field"] == "email" for a in field)
    assert_error(admin.get("/tagassociation/byfield", params={**params, "fieldName": "nope"}),
                 404, ErrorCode.FIELD_NOT_FOUND.value, "nope")
    assert_error(admin.get("/tagassociation/byresource",
                           params={"sourceName": lake["name"], "resourcePath": "nope.csv"}),
                 404, ErrorCode.RESOURCE_NOT_FOUND.value)
    assert_error(admin.get("/tagassociation/byresource",
                           params={"sourceName": "no-source", "resourcePath": "people.csv"}),
                 404, ErrorCode.DATA_SOURCE_NOT_FOUND.value)
    assert_error(admin.get("/tagassociation/byresource", params={"sourceName": lake["name"]}),
                 400, ErrorCode.INVALID_PARAMETER.value, "resourcePath")


def test_the_filtered_list_pages_through_visible_associations(
    live_server: Server, admin: Http, lake: dict[str, str], tag: dict[str, Any]
) -> None:
    with live_server.store.write() as conn:
        for field, weight in (("id", 0.2), ("email", 0.9), ("phone", 0.6)):
            association_store.record_suggestion(conn, lake["people"], field, tag["key"], weight,
                                                ["regex:x"])
    associate(admin, lake["people"], tag["key"], field="city")
    params: dict[str, Any] = {"tagKey": tag["key"]}
    everything = admin.get("/tagassociation", params=params).json()
    assert set(everything) == {"list", "totalCount", "start", "pageSize"}
    assert everything["totalCount"] == 4 and everything["pageSize"] == 100
    assert [a["field"] for a in everything["list"]] == ["city", "email", "id", "phone"]
    suggested = admin.get("/tagassociation", params={**params, "state": "SUGGESTED",
                                                     "minWeight": 0.5}).json()
    assert [a["field"] for a in suggested["list"]] == ["email", "phone"]
    page = admin.get("/tagassociation", params={**params, "start": 1, "pageSize": 2}).json()
    assert [a["field"] for a in page["list"]] == ["email", "id"] and page["totalCount"] == 4
    by_source = admin.get("/tagassociation", params={**params, "dataSourceKey": lake["key"]})
    assert by_source.json()["totalCount"] == 4
    for bad, status, code in (({"state": "NOPE"}, 400, ErrorCode.INVALID_PARAMETER),
                              ({"minWeight": 2}, 400, ErrorCode.INVALID_PARAMETER),
                              ({"pageSize": 0}, 400, ErrorCode.INVALID_PARAMETER),
                              ({"tagKey": "nope"}, 404, ErrorCode.TAG_NOT_FOUND),
                              ({"dataSourceKey": "nope"}, 404, ErrorCode.DATA_SOURCE_NOT_FOUND)):
        assert_error(admin.get("/tagassociation", params={**params, **bad}), status, code.value)


def test_the_bulk_form_applies_the_good_items_and_reports_the_bad(
    live_server: Server, admin: Http, lake: dict[str, str], tag: dict[str, Any]
) -> None:
    items: list[Any] = [
        {"resourceKey": lake["people"], "tagKey": tag["key"], "field": "email"},
        {"resourceKey": lake["people"], "tagKey": "nope"},
        {"resourceKey": lake["orders"], "tagKey": tag["key"], "state": "SUGGESTED"},
        {"resourceKey": "nope", "tagKey": tag["key"]},
        {"resourceKey": lake["people"], "tagKey": tag["key"], "field": "ghost"},
        {"resourceKey": lake["people"], "tagKey": tag["key"], "state": "LATER"},
        "not an object",
        {"resourceKey": lake["people"], "tagKey": tag["key"], "field": "email"},
    ]
    response = admin.post("/tagassociation/list", json=items)
    assert response.status_code == 201, response.text
    results = response.json()
    assert [r["index"] for r in results] == list(range(len(items)))
    assert [r["ok"] for r in results] == [True, False, True, False, False, False, False, True]
    assert [r.get("outcome") for r in results if r["ok"]] == ["created", "created", "unchanged"]
    errors = {r["index"]: r["error"] for r in results if not r["ok"]}
    assert errors[1]["status"] == 400 and errors[1]["errorCode"] == "UNKNOWN_REFERENCE"
    assert errors[3]["status"] == 404 and errors[3]["errorCode"] == "RESOURCE_NOT_FOUND"
    assert errors[4]["errorCode"] == "UNKNOWN_FIELD" and "ghost" in errors[4]["message"]
    assert errors[5]["errorCode"] == "INVALID_PAYLOAD" and "state" in errors[5]["message"]
    assert errors[6]["status"] == 400
    assert results[2]["association"]["state"] == "SUGGESTED"
    assert count_of(live_server, tag["key"]) == 2
    failures = audit_search(admin, objectType="TAG_ASSOCIATION", outcome="FAILURE")
    assert any("UNKNOWN_FIELD" in e["message"] for e in failures)


def test_the_bulk_form_checks_its_shape(admin: Http, lake: dict[str, str]) -> None:
    assert_error(admin.post("/tagassociation/list", json={"resourceKey": "x"}), 400,
                 ErrorCode.INVALID_PAYLOAD.value, "array")
    too_many = [{"resourceKey": "x", "tagKey": "y"}] * 1001
    assert_error(admin.post("/tagassociation/list", json=too_many), 400,
                 ErrorCode.INVALID_PAYLOAD.value, "1000")
    assert admin.post("/tagassociation/list", json=[]).json() == []


def test_association_counts_cover_every_state(admin: Http, lake: dict[str, str]) -> None:
    domain = make_domain(admin)
    fresh = make_tag(admin, domain["key"], "Counted")
    associate(admin, lake["people"], fresh["key"])
    associate(admin, lake["orders"], fresh["key"], field="amount", state="REJECTED")
    listed = admin.get("/tag", params={"domainKey": domain["key"]}).json()
    assert listed[0]["associationCount"] == 2


def test_a_create_that_loses_the_insert_race_promotes_the_winner(
    live_server: Server, admin: Http, lake: dict[str, str], tag: dict[str, Any],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The unique constraint decides a race; the loser's transaction carries on (savepoint)."""
    winner = associate(admin, lake["orders"], tag["key"], field="order_id", state="SUGGESTED")
    real = association_store.find
    calls: list[Any] = []

    def first_misses(conn: Any, *args: Any, **options: Any) -> Any:
        calls.append(args)
        return None if len(calls) == 1 else real(conn, *args, **options)

    monkeypatch.setattr(association_store, "find", first_misses)
    with live_server.store.write() as conn:
        key, outcome = association_store.create(
            conn, {"key": lake["orders"], "path": "orders.csv"}, {"key": tag["key"]},
            "order_id", {"state": "ACCEPTED"}, "tester")
    assert (key, outcome) == (winner["key"], "changed") and len(calls) == 2
    assert admin.get("/tagassociation", params={"tagKey": tag["key"]}).json()["list"][0][
        "state"] == "ACCEPTED"
