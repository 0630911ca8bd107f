"""Role scoping of search: an Analyst granted one source never learns of the other's resources,
not from entities, counts, facet categories, matchedEntityCount, nor a stored key."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Server
from tests.server.helpers import assert_error
from tests.server.search_helpers import Lake, build_lake, facet, paths, post, search

HIDDEN_PATHS = ("payroll.csv", "secret_orders.csv")


@pytest.fixture(scope="module")
def srv(make_server: Any) -> Server:
    server: Server = make_server()
    return server


@pytest.fixture(scope="module")
def lake(srv: Server, tmp_path_factory: pytest.TempPathFactory) -> Lake:
    return build_lake(srv, Path(tmp_path_factory.mktemp("search-leaks")))


def _clean(lake: Lake, result: dict[str, Any]) -> None:
    """Nothing of the hidden source in a SearchResult."""
    text = json.dumps(result)
    assert lake.two not in text and lake.two_key not in text
    for path in HIDDEN_PATHS:
        assert path not in text
    for key in (lake.keys[p] for p in HIDDEN_PATHS):
        assert key not in text
    assert "hr" not in facet(result, f"cp.{lake.team}")["categoryCounts"]
    assert "erin" not in facet(result, "owner")["categoryCounts"]


@pytest.mark.parametrize("phrase", [None, "orders", "payroll", "salary", "personal", "csv"])
def test_analyst_sees_only_the_granted_source(lake: Lake, phrase: str | None) -> None:
    result = search(lake.analyst, phrase, pagingCriteria={"start": 0, "size": 100})
    _clean(lake, result)
    assert result["matchedEntityCount"] == len(result["entities"])
    assert {e["dataSourceName"] for e in result["entities"]} <= {lake.one}
    assert set(facet(result, "dataSource")["categoryCounts"]) <= {lake.one}
    for f in result["facetResults"]:
        assert f["totalCount"] == result["matchedEntityCount"]
        assert all(n <= result["matchedEntityCount"] for n in f["categoryCounts"].values())


def test_counts_match_what_the_analyst_may_see(lake: Lake) -> None:
    result = search(lake.analyst, "personal")
    assert paths(result) == ["customers.csv"]  # payroll.csv carries the tag too, unseen
    assert facet(result, "tag")["categoryCounts"] == {lake.pii["fullName"]: 1}
    assert facet(result, "sensitivity")["categoryCounts"] == {"CONFIDENTIAL": 1}
    everything = search(lake.analyst, None)
    assert everything["matchedEntityCount"] == 4
    assert facet(everything, "fileFormat")["categoryCounts"] == {"csv": 2, "jsonl": 1,
                                                                 "tsv": 1}
    advanced = search(lake.analyst, f"source:{lake.two} OR name:payroll",
                      searchType="ADVANCED")
    assert advanced["matchedEntityCount"] == 0 and advanced["entities"] == []


def test_facet_catalogue_and_selections_hide_the_other_source(lake: Lake) -> None:
    listed = lake.analyst.get("/search/facets").json()["DATA_RESOURCE"]
    text = json.dumps(listed)
    assert lake.two not in text and "erin" not in text and '"hr"' not in text
    # a hidden category answers exactly like one that does not exist
    hidden = lake.analyst.post("/search/new", json={"facetSelections": [
        {"facetName": "dataSource", "facetCategories": [lake.two]}]})
    unknown = lake.analyst.post("/search/new", json={"facetSelections": [
        {"facetName": "dataSource", "facetCategories": ["no-such-source"]}]})
    body = assert_error(hidden, 400, "INVALID_FACET")
    other = assert_error(unknown, 400, "INVALID_FACET")
    assert body["message"].replace(lake.two, "X") == other["message"].replace(
        "no-such-source", "X")
    assert_error(lake.analyst.post("/search/runFacet", json={"facetSelections": [
        {"facetName": "owner", "facetCategories": ["erin"]}]}), 400, "INVALID_FACET")


def test_stored_keys_do_not_cross_sessions(srv: Server, lake: Lake) -> None:
    admin = srv.session()
    theirs = search(admin, "payroll")
    assert paths(theirs) == ["payroll.csv"]
    assert_error(lake.analyst.post("/search/page", json={"key": theirs["key"]}), 404,
                 "SEARCH_NOT_FOUND")
    mine = search(lake.analyst, None, pagingCriteria={"start": 0, "size": 1})
    page = post(lake.analyst, "/search/page", {"key": mine["key"],
                                               "pagingCriteria": {"start": 0, "size": 100}})
    _clean(lake, page)
    assert page["matchedEntityCount"] == 4


def test_a_revoked_grant_empties_stored_pages(srv: Server, lake: Lake) -> None:
    steward = lake.steward
    result = search(steward, None, pagingCriteria={"start": 0, "size": 100})
    assert result["matchedEntityCount"] == 6
    admin = srv.session()
    roles = admin.get("/user/role").json()
    role = next(r for r in roles if r["name"].startswith("search-steward"))
    response = admin.put(f"/user/role/{role['key']}", json={"dataSourceKeys": [lake.one_key]})
    assert response.status_code == 200, response.text
    page = post(steward, "/search/page", {"pagingCriteria": {"start": 0, "size": 100}})
    assert {e["dataSourceName"] for e in page["entities"]} == {lake.one}
    assert page["removedSinceSearch"] == 2
