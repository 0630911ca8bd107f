"""Bad input to the search endpoints: each answered with a JSON error (or taken as text)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Http, Server
from tests.server.helpers import assert_error
from tests.server.search_helpers import Lake, build_lake, paths, search


@pytest.fixture(scope="module")
def srv(make_server: Any) -> Server:
    server: Server = make_server()
    return server


@pytest.fixture(scope="module")
def lake(srv: Server, tmp_path_factory: pytest.TempPathFactory) -> Lake:
    return build_lake(srv, Path(tmp_path_factory.mktemp("search-input")))


@pytest.fixture
def admin(srv: Server, lake: Lake) -> Http:
    return srv.session()  # a session of its own: no previous search


@pytest.mark.parametrize("phrase", [
    '"', '""', "*", "orders*", '"orders', "NEAR(orders", "NEAR(orders, 2)", "-orders",
    "orders:", ":orders", "'orders'", "orders'; DROP TABLE data_resources; --",
    "name:orders", "AND OR NOT", "(", ")", "{name}: orders", "^orders", "orders + payroll",
])
@pytest.mark.parametrize("partial", [False, True])
def test_fts_syntax_in_basic_phrases_is_text(admin: Http, phrase: str, partial: bool,
                                              lake: Lake) -> None:
    response = admin.post("/search/new", json={"searchPhrase": phrase, "partialSearch": partial})
    assert response.status_code == 201, response.text
    found = set(paths(response.json()))
    words = re.findall(r"[^\W_]+", phrase.casefold())
    if words == ["orders"]:
        assert found == {"orders.csv", "secret_orders.csv", "customers.csv"}
    elif not words:
        assert len(found) == 6
    elif "drop" in words:
        assert found == set()


@pytest.mark.parametrize(("query", "where"), [
    ('"unclosed', "position 1"),
    ("name:(orders)", "position"),
    ("(orders", "position 1"),
    ("orders)", "position 7"),
    ("color:red", "color"),
    ("orders AND", "end"),
    ("NOT", "end"),
    ("OR orders", "position 1"),
    ("name:", "position 1"),
    ("* -", "position 1"),
])
def test_malformed_advanced_queries(admin: Http, query: str, where: str) -> None:
    response = admin.post("/search/new", json={"searchPhrase": query, "searchType": "ADVANCED"})
    assert_error(response, 400, "INVALID_QUERY", where)


def test_advanced_quotes_and_operators_are_safe(admin: Http, lake: Lake) -> None:
    result = search(admin, "\"orders'*\" OR name:'payroll'", searchType="ADVANCED")
    assert set(paths(result)) == {"orders.csv", "secret_orders.csv", "customers.csv",
                                  "payroll.csv"}
    # a quoted phrase keeps its words in order: "orders near" is in no resource
    assert search(admin, '"orders NEAR("', searchType="ADVANCED")["matchedEntityCount"] == 0


def test_long_phrases_are_refused(admin: Http) -> None:
    assert_error(admin.post("/search/new", json={"searchPhrase": "orders " * 1430}),
                 400, "INVALID_QUERY", "1000")
    assert_error(admin.post("/search/new", json={"searchPhrase": "x" * 10_000}),
                 400, "INVALID_QUERY")


def test_unknown_facets_and_categories(admin: Http, lake: Lake) -> None:
    def with_selection(name: str, *cats: str) -> Any:
        return admin.post("/search/new", json={"facetSelections": [
            {"facetName": name, "facetCategories": list(cats)}]})

    assert_error(with_selection("colour", "red"), 400, "INVALID_FACET", "colour")
    assert_error(with_selection("fileFormat", "xlsx"), 400, "INVALID_FACET", "xlsx")
    assert_error(with_selection("dataSource", "no-such-source"), 400, "INVALID_FACET")
    assert_error(with_selection("tag", "Nope.Nothing"), 400, "INVALID_FACET")
    assert_error(with_selection("cp.nothing", "x"), 400, "INVALID_FACET")
    assert_error(with_selection(f"cp.{lake.team}", "unknown"), 400, "INVALID_FACET")
    assert_error(admin.post("/search/runFacet", json={"facetSelections": [
        {"facetName": "colour", "facetCategories": ["red"]}]}), 400, "INVALID_FACET")


def test_paging_bounds(admin: Http, lake: Lake) -> None:
    past = search(admin, None, pagingCriteria={"start": 500, "size": 10})
    assert past["entities"] == [] and past["matchedEntityCount"] == 6
    assert past["responseEntityCount"] == 0 and past["matchedKeys"] == []
    assert_error(admin.post("/search/new", json={"pagingCriteria": {"start": -1, "size": 5}}),
                 400, "INVALID_PAYLOAD", "start")
    assert_error(admin.post("/search/new", json={"pagingCriteria": {"start": 0, "size": 0}}),
                 400, "INVALID_PAYLOAD")
    assert_error(admin.post("/search/new", json={"pagingCriteria": {"start": 0, "size": 101}}),
                 400, "INVALID_PARAMETER", "100")
    assert_error(admin.post("/search/page", json={"pagingCriteria": {"start": -3, "size": 5}}),
                 400, "INVALID_PAYLOAD")
    page = admin.post("/search/page", json={"pagingCriteria": {"start": 99, "size": 5}})
    assert page.status_code == 201 and page.json()["entities"] == []


def test_page_without_search_and_foreign_keys(srv: Server, admin: Http, lake: Lake) -> None:
    assert_error(admin.post("/search/page", json={"pagingCriteria": {"start": 0, "size": 5}}),
                 400, "NO_SEARCH", "/search/new")
    mine = search(admin, "orders")
    other = srv.session()
    assert_error(other.post("/search/page", json={"key": mine["key"]}), 404,
                 "SEARCH_NOT_FOUND")
    assert_error(other.post("/search/page", json={"key": "nope"}), 404, "SEARCH_NOT_FOUND")
    # a stored search ends with its session
    assert admin.post("/logout").status_code in (200, 204)
    again = srv.session()
    assert_error(again.post("/search/page", json={"key": mine["key"]}), 404,
                 "SEARCH_NOT_FOUND")


def test_other_bad_criteria(admin: Http) -> None:
    assert_error(admin.post("/search/new", json={"sortBySpecs": [{"propertyName": "colour"}]}),
                 400, "INVALID_PAYLOAD", "colour")
    assert_error(admin.post("/search/new", json={"entityScope": ["TAG"]}), 400,
                 "INVALID_PAYLOAD", "DATA_RESOURCE")
    assert_error(admin.post("/search/new", json={"searchType": "FUZZY"}), 400,
                 "INVALID_PAYLOAD")
    assert_error(admin.post("/search/new", json={"searchPhrase": 5}), 400, "INVALID_PAYLOAD")
    assert_error(admin.post("/search/runFacet", json={"searchPhrase": "orders"}), 400,
                 "INVALID_PAYLOAD", "/search/new")
    assert_error(admin.post("/search/new", data="nope",
                            headers={"Content-Type": "application/json"}), 400)


def test_searching_needs_a_session(srv: Server) -> None:
    for path in ("/search/new", "/search/page", "/search/runFacet"):
        assert_error(srv.anonymous().post(path, json={}), 401)
    assert_error(srv.anonymous().get("/search/facets"), 401)
