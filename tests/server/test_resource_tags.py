"""Tags on data resources: ``tagAssociationViewList``, ``sensitivity``, each field's ``tags``,
and ``viewTags`` in ``/dataresource/metadata`` (loaded for the whole page in one query)."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from catalog_nb.server.store import associations as association_store
from tests.conftest import Http, Server
from tests.server.helpers import counted_statements
from tests.server.lake import profile_many
from tests.server.tag_helpers import associate, make_domain, make_tag, name, small_source


@pytest.fixture(scope="module")
def lake(live_server: Server, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    return small_source(live_server, tmp_path_factory.mktemp("restags"))


@pytest.fixture(scope="module")
def sens(admin: Http) -> dict[str, dict[str, Any]]:
    """One tag per sensitivity, in a domain of their own."""
    domain = make_domain(admin, "sens")
    return {level: make_tag(admin, domain["key"], level.title(), sensitivity=level)
            for level in ("PUBLIC", "INTERNAL", "CONFIDENTIAL", "RESTRICTED")}


def resource(http: Http, key: str) -> dict[str, Any]:
    response = http.get(f"/dataresource/{key}")
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def test_a_resource_lists_its_associations_with_names_weight_and_rules(
    live_server: Server, admin: Http, lake: dict[str, str], sens: dict[str, dict[str, Any]]
) -> None:
    key = lake["orders"]
    assert resource(admin, key)["tagAssociationViewList"] == []
    whole = associate(admin, key, sens["INTERNAL"]["key"])
    with live_server.store.write() as conn:
        association_store.record_suggestion(conn, key, "amount", sens["PUBLIC"]["key"], 0.8,
                                            ["learning:name", "regex:Public"])
    body = resource(admin, key)
    views = body["tagAssociationViewList"]
    assert [v["field"] for v in views] == ["", "amount"]  # resource level ("") first
    assert views[0] == whole
    suggestion = views[1]
    assert suggestion["tagFullName"] == sens["PUBLIC"]["fullName"]
    assert suggestion["domainName"] == sens["PUBLIC"]["domainName"]
    assert suggestion["weight"] == 0.8 and suggestion["rules"] == ["learning:name",
                                                                   "regex:Public"]
    assert suggestion["state"] == "SUGGESTED" and suggestion["resourcePath"] == "orders.csv"
    fields = {f["name"]: f for f in body["fields"]}
    assert fields["amount"]["tags"] == [suggestion]
    assert fields["order_id"]["tags"] == []
    by_path = admin.get(f"/dataresource/source/{lake['name']}",
                        params={"resourcePath": "orders.csv"}).json()
    assert by_path["tagAssociationViewList"] == views


def test_sensitivity_is_the_highest_of_the_accepted_tags(
    admin: Http, lake: dict[str, str], sens: dict[str, dict[str, Any]]
) -> None:
    key = lake["people"]
    assert resource(admin, key)["sensitivity"] is None
    associate(admin, key, sens["INTERNAL"]["key"])
    assert resource(admin, key)["sensitivity"] == "INTERNAL"
    restricted = associate(admin, key, sens["RESTRICTED"]["key"], field="email",
                           state="SUGGESTED")
    assert resource(admin, key)["sensitivity"] == "INTERNAL"  # suggestions do not count
    associate(admin, key, sens["CONFIDENTIAL"]["key"], field="phone")
    assert resource(admin, key)["sensitivity"] == "CONFIDENTIAL"  # field level counts
    associate(admin, key, sens["RESTRICTED"]["key"], field="email", state="ACCEPTED")
    assert resource(admin, key)["sensitivity"] == "RESTRICTED"
    path = f"/tagassociation/tagassociation/{restricted['key']}"
    assert admin.put(path, json={"state": "REJECTED"}).status_code == 200
    assert resource(admin, key)["sensitivity"] == "CONFIDENTIAL"
    untagged = make_tag(admin, sens["PUBLIC"]["domainKey"], name("Plain"))
    associate(admin, key, untagged["key"], field="city")  # no sensitivity: ignored
    assert resource(admin, key)["sensitivity"] == "CONFIDENTIAL"
    email = next(f for f in resource(admin, key)["fields"] if f["name"] == "email")
    assert [t["state"] for t in email["tags"]] == ["REJECTED"]


def test_view_tags_in_the_metadata_query(
    admin: Http, lake: dict[str, str], sens: dict[str, dict[str, Any]]
) -> None:
    key = lake["readme"]
    made = associate(admin, key, sens["PUBLIC"]["key"], field="text")
    params: dict[str, Any] = {"propertyFilter": [f"data_source:{lake['name']}",
                                                 "path:notes"]}

    def one(views: str | None) -> dict[str, Any]:
        query = {**params, **({"views": views} if views else {})}
        response = admin.get("/dataresource/metadata", params=query)
        assert response.status_code == 200, response.text
        listed: list[dict[str, Any]] = response.json()["list"]
        assert len(listed) == 1
        return listed[0]

    plain = one(None)
    assert "tagAssociationViewList" not in plain and plain["sensitivity"] == "PUBLIC"
    tagged = one("viewTags")
    assert tagged["tagAssociationViewList"] == [made] and "fields" not in tagged
    both = one("viewTags,viewFields")
    assert both["fields"][0]["tags"] == [made]
    assert one("viewFields")["fields"][0]["tags"] == [made]
    minimal = one("resource_path,viewTags")
    assert set(minimal) == {"key", "resourcePath", "name", "resourceType", "dataSourceName",
                            "tagAssociationViewList"}
    assert minimal["tagAssociationViewList"] == [made]


CATALOG_TABLES = ("data_resources", "resource_fields", "resource_custom_values",
                  "virtual_folders", "datasets", "tag_associations", "tags", "tag_domains")



def test_tags_of_a_page_cost_the_same_queries_whatever_its_size(
    live_server: Server, admin: Http, sens: dict[str, dict[str, Any]]
) -> None:
    source = f"tagmany-{uuid.uuid4().hex[:8]}"
    profile_many(live_server.store, source, 120, fields=3)
    page = admin.get("/dataresource/metadata", params={"propertyFilter": f"data_source:{source}",
                                                       "pageSize": 1000}).json()["list"]
    with live_server.store.write() as conn:
        for i, item in enumerate(page):
            association_store.record_suggestion(conn, item["key"], "col1",
                                                sens["PUBLIC"]["key"], 0.5, ["regex:x"])
            if i % 2:
                association_store.record_suggestion(conn, item["key"], None,
                                                    sens["INTERNAL"]["key"], 0.9, ["learning:name"])
    params: dict[str, Any] = {"propertyFilter": f"data_source:{source}",
                              "views": "viewTags,viewFields"}
    admin.get("/dataresource/metadata", params={**params, "pageSize": 1})  # warm the session
    with counted_statements(live_server, CATALOG_TABLES) as small:
        few = admin.get("/dataresource/metadata", params={**params, "pageSize": 3})
    with counted_statements(live_server, CATALOG_TABLES) as large:
        many = admin.get("/dataresource/metadata", params={**params, "pageSize": 1000})
    assert few.status_code == many.status_code == 200
    listed = many.json()["list"]
    assert len(listed) == 120
    assert sum(len(r["tagAssociationViewList"]) for r in listed) == 180
    assert all(len(next(f for f in r["fields"] if f["name"] == "col1")["tags"]) == 1
               for r in listed)
    assert any("tag_associations" in s for s in large)
    assert len(large) == len(small) <= 9, large


def test_tags_cannot_be_written_through_a_resource_put(admin: Http, lake: dict[str, str]) -> None:
    for body, named in (({"fields": [{"name": "amount", "tags": []}]}, "fields[].tags"),
                        ({"tagAssociationViewList": []}, "tagAssociationViewList"),
                        ({"sensitivity": "PUBLIC"}, "sensitivity")):
        response = admin.put(f"/dataresource/{lake['orders']}", json=body)
        assert response.status_code == 400, response.text
        assert named in response.json()["message"]
