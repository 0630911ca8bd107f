"""Who may write tag domains, tags and associations: levels, the roles' ``domainKeys``, and the
visibility of the resources an association touches (404, nothing written)."""

from __future__ import annotations

from typing import Any

import pytest

from catalog_nb.contract import ErrorCode
from catalog_nb.server.store.schema import tag_associations, tags
from tests.conftest import Http, Server
from tests.server.helpers import (
    PASSWORD,
    Member,
    assert_error,
    audit_search,
    create_role,
    create_user,
    row_count,
)
from tests.server.tag_helpers import (
    associate,
    immutable_tag,
    make_domain,
    make_tag,
    member,
    name,
    small_source,
)

DENIED = ErrorCode.PERMISSION_DENIED.value


@pytest.fixture(scope="module")
def world(
    live_server: Server, admin: Http, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, Any]:
    """Two domains (one granted), two sources (one granted), and members of every level."""
    granted, other = make_domain(admin, "granted"), make_domain(admin, "other")
    seen = small_source(live_server, tmp_path_factory.mktemp("seen"))
    hidden = small_source(live_server, tmp_path_factory.mktemp("hidden"))
    grants = {"domains": [granted["key"]], "sources": [seen["key"]]}
    return {
        "granted": granted, "other": other, "seen": seen, "hidden": hidden,
        "tag": make_tag(admin, granted["key"], "Pii", sensitivity="RESTRICTED"),
        "other_tag": make_tag(admin, other["key"], "Misc"),
        "steward": member(live_server, admin, "Steward", **grants),
        "analyst": member(live_server, admin, "Analyst", **grants),
        "analyst2": member(live_server, admin, "Analyst", **grants),
        "guest": member(live_server, admin, "Guest", **grants),
        "no_domain": member(live_server, admin, "Steward", sources=[seen["key"]]),
    }


def who(world: dict[str, Any], level: str) -> Http:
    person: Member = world[level]
    return person.http


def test_domains_are_written_by_administrators_only(world: dict[str, Any]) -> None:
    key = world["granted"]["key"]
    for level in ("steward", "analyst", "guest"):
        http = who(world, level)
        assert_error(http.post("/tagdomain", json={"name": name("x")}), 403, DENIED)
        assert_error(http.post("/tagdomain/list", json=[{"name": name("x")}]), 403, DENIED)
        assert_error(http.put(f"/tagdomain/{key}", json={"description": "x"}), 403, DENIED)
        assert_error(http.delete(f"/tagdomain/{key}"), 403, DENIED)
        assert http.get("/tagdomain").status_code == 200
        assert http.get(f"/tagdomain/{key}").status_code == 200


def test_tags_are_written_by_stewards_of_their_domains(
    live_server: Server, admin: Http, world: dict[str, Any]
) -> None:
    steward = who(world, "steward")
    made = make_tag(steward, world["granted"]["key"], name("Mine"))
    moved = steward.put(f"/tag/{made['key']}", json={"description": "ok",
                                                     "parentKey": world["tag"]["key"]})
    assert moved.status_code == 200, moved.text
    before = row_count(live_server, tags)
    body = {"name": name("Nope"), "domainKey": world["other"]["key"]}
    error = assert_error(steward.post("/tag", json=body), 403, DENIED, world["other"]["name"])
    assert "domainKeys" in error["message"]
    assert_error(steward.put(f"/tag/{made['key']}", json={"domainKey": world["other"]["key"]}),
                 403, DENIED, world["other"]["name"])
    assert_error(steward.put(f"/tag/{world['other_tag']['key']}", json={"enable": False}),
                 403, DENIED)
    assert_error(steward.delete(f"/tag/{world['other_tag']['key']}"), 403, DENIED)
    assert_error(steward.post("/tag/list", json=[{"name": name("a"),
                                                  "domainKey": world["granted"]["key"]},
                                                 body]), 403, DENIED, "Item 1")
    granted = {"name": name("x"), "domainKey": world["granted"]["key"]}
    for level in ("no_domain", "analyst", "guest"):
        assert_error(who(world, level).post("/tag", json=granted), 403, DENIED)
        assert who(world, level).get(f"/tag/{made['key']}").status_code == 200
    assert row_count(live_server, tags) == before
    assert steward.delete(f"/tag/{made['key']}").status_code == 204
    failures = audit_search(admin, objectType="TAG", outcome="FAILURE",
                            userName=world["steward"].name)
    assert failures and all("PERMISSION_DENIED" in e["message"] for e in failures)


def test_stewards_tune_built_in_tags_of_their_domains_only(
    live_server: Server, world: dict[str, Any]
) -> None:
    mine = immutable_tag(live_server, world["granted"]["key"], name("Builtin"))
    theirs = immutable_tag(live_server, world["other"]["key"], name("Builtin"))
    steward = who(world, "steward")
    assert steward.put(f"/tag/{mine}", json={"enable": False}).status_code == 200
    assert_error(steward.put(f"/tag/{mine}", json={"name": "x"}), 409,
                 ErrorCode.IMMUTABLE.value)
    assert_error(steward.put(f"/tag/{theirs}", json={"enable": False}), 403, DENIED)


def test_stewards_accept_and_analysts_suggest(
    live_server: Server, world: dict[str, Any]
) -> None:
    people, tag = world["seen"]["people"], world["tag"]["key"]
    accepted = associate(who(world, "steward"), people, tag, field="email")
    assert accepted["state"] == "ACCEPTED" and accepted["createdBy"] == world["steward"].name
    suggested = associate(who(world, "analyst"), people, tag, field="phone")
    assert suggested["state"] == "SUGGESTED"  # the default of Analysts
    before = row_count(live_server, tag_associations)
    for state in ("ACCEPTED", "REJECTED"):
        body = {"resourceKey": people, "tagKey": tag, "field": "city", "state": state}
        assert_error(who(world, "analyst").post("/tagassociation", json=body), 403, DENIED,
                     "Steward")
    body = {"resourceKey": people, "tagKey": tag, "field": "city"}
    for level in ("guest", "no_domain"):
        assert_error(who(world, level).post("/tagassociation", json=body), 403, DENIED)
    other = {"resourceKey": people, "tagKey": world["other_tag"]["key"]}
    assert_error(who(world, "steward").post("/tagassociation", json=other), 403, DENIED)
    assert row_count(live_server, tag_associations) == before
    bulk = who(world, "analyst").post("/tagassociation/list", json=[
        {**body, "state": "SUGGESTED"}, {**body, "state": "ACCEPTED"}]).json()
    assert [r["ok"] for r in bulk] == [True, False]
    assert bulk[1]["error"]["status"] == 403


def test_analysts_delete_their_own_suggestions_only(world: dict[str, Any]) -> None:
    orders, tag = world["seen"]["orders"], world["tag"]["key"]
    analyst, analyst2 = who(world, "analyst"), who(world, "analyst2")
    own = associate(analyst, orders, tag, field="order_id")
    theirs = associate(analyst2, orders, tag, field="amount")
    accepted = associate(who(world, "steward"), orders, tag)
    path = "/tagassociation/tagassociation/{}"
    assert_error(analyst.delete(path.format(theirs["key"])), 403, DENIED)
    assert_error(analyst.delete(path.format(accepted["key"])), 403, DENIED)
    assert_error(analyst.put(path.format(own["key"]), json={"state": "ACCEPTED"}), 403, DENIED)
    assert_error(who(world, "guest").delete(path.format(own["key"])), 403, DENIED)
    assert analyst.delete(path.format(own["key"])).status_code == 204
    steward = who(world, "steward")
    changed = steward.put(path.format(theirs["key"]), json={"state": "ACCEPTED"})
    assert changed.status_code == 200 and changed.json()["changedBy"] == world["steward"].name
    assert steward.delete(path.format(theirs["key"])).status_code == 204


def test_invisible_resources_answer_404_and_nothing_is_written(
    live_server: Server, admin: Http, world: dict[str, Any]
) -> None:
    hidden, tag = world["hidden"], world["tag"]["key"]
    steward = who(world, "steward")
    before = row_count(live_server, tag_associations)
    body = {"resourceKey": hidden["people"], "tagKey": tag}
    assert_error(steward.post("/tagassociation", json=body), 404,
                 ErrorCode.RESOURCE_NOT_FOUND.value)
    assert_error(steward.post("/tagassociation", json={**body, "tagKey": "nope"}), 404,
                 ErrorCode.RESOURCE_NOT_FOUND.value)  # the resource is checked first
    assert row_count(live_server, tag_associations) == before
    made = associate(admin, hidden["people"], tag, field="email")
    path = f"/tagassociation/tagassociation/{made['key']}"
    for response in (steward.put(path, json={"state": "REJECTED"}), steward.delete(path)):
        assert_error(response, 404, ErrorCode.TAG_ASSOCIATION_NOT_FOUND.value)
    params = {"sourceName": hidden["name"], "resourcePath": "people.csv"}
    assert_error(steward.get("/tagassociation/byresource", params=params), 404,
                 ErrorCode.DATA_SOURCE_NOT_FOUND.value)
    assert_error(steward.get("/tagassociation", params={"dataSourceKey": hidden["key"]}), 404,
                 ErrorCode.DATA_SOURCE_NOT_FOUND.value)
    listed = steward.get("/tagassociation", params={"tagKey": tag}).json()
    assert made["key"] not in {a["key"] for a in listed["list"]}
    assert made["key"] in {a["key"] for a in admin.get(
        "/tagassociation", params={"tagKey": tag}).json()["list"]}
    counts = [http.get(f"/tag/{tag}").json()["associationCount"] for http in (admin, steward)]
    assert counts[0] == counts[1] + 1


def test_the_domain_level_comes_from_the_roles_that_grant_it(
    live_server: Server, admin: Http, world: dict[str, Any]
) -> None:
    """A Steward role without the domain and an Analyst role with it: only suggestions there."""
    steward_role = create_role(admin, name("r-st"), "Steward",
                               dataSourceKeys=[world["seen"]["key"]])
    analyst_role = create_role(admin, name("r-an"), "Analyst",
                               domainKeys=[world["granted"]["key"]])
    person = name("mixed")
    create_user(admin, person, roles=[steward_role["name"], analyst_role["name"]])
    http = live_server.session(person, PASSWORD)
    made = associate(http, world["seen"]["readme"], world["tag"]["key"])
    assert made["state"] == "SUGGESTED"
    body = {"resourceKey": world["seen"]["readme"], "tagKey": world["tag"]["key"],
            "state": "ACCEPTED"}
    assert_error(http.post("/tagassociation", json=body), 403, DENIED, "Analyst")
    assert_error(http.post("/tag", json={"name": name("t"), "domainKey": world["granted"]["key"]}),
                 403, DENIED)
