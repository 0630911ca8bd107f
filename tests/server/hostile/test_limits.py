"""Inputs built to make one statement or one parse too big: each is a 400 naming its limit, never
a 500, and a fault's log never carries a whole statement or its values."""

from __future__ import annotations

import logging

import pytest
from sqlalchemy import text

from catalog_nb.contract import (
    API_PREFIX,
    MAX_FILTER_VALUES,
    MAX_PROPERTY_FILTERS,
    MAX_QUERY_DEPTH,
    MAX_QUERY_TERMS,
    ErrorCode,
)
from tests.conftest import Server
from tests.server.helpers import assert_error
from tests.server.hostile.common import StoreState, refused
from tests.server.hostile.conftest import Target

FILTER = ErrorCode.INVALID_FILTER.value
QUERY = ErrorCode.INVALID_QUERY.value


def filters(count: int) -> list[tuple[str, str]]:
    return [("propertyFilter", f"name:x{i}") for i in range(count)]


@pytest.mark.parametrize("count", [1000, MAX_PROPERTY_FILTERS + 1])
def test_too_many_property_filters_are_a_400_naming_the_limit(target: Target, count: int) -> None:
    before = StoreState.of(target.server)
    response = target.admin.get("/dataresource/metadata", params=filters(count))
    refused(target.server, response, 400, FILTER, str(MAX_PROPERTY_FILTERS), before=before,
            http=target.admin)


def test_too_many_filter_values_are_a_400_naming_the_limit(target: Target) -> None:
    values = ";".join(f"v{i}" for i in range(MAX_FILTER_VALUES + 1))
    response = target.admin.get("/dataresource/metadata",
                                params={"propertyFilter": f"name:{values}"})
    refused(target.server, response, 400, FILTER, str(MAX_FILTER_VALUES), http=target.admin)


def test_filters_up_to_the_limits_are_answered(target: Target) -> None:
    response = target.admin.get("/dataresource/metadata", params=filters(MAX_PROPERTY_FILTERS))
    assert response.status_code == 200, response.text
    assert response.json()["totalCount"] == 0
    values = ";".join(["people.csv", *(f"v{i}" for i in range(MAX_FILTER_VALUES - 1))])
    response = target.admin.get("/dataresource/metadata",
                                params={"propertyFilter": f"name:{values}"})
    assert response.status_code == 200, response.text
    assert [r["name"] for r in response.json()["list"]] == ["people.csv"]


@pytest.mark.parametrize(
    ("phrase", "mentions"),
    [("(" * 330 + "people" + ")" * 330, str(MAX_QUERY_DEPTH)),
     ("NOT " * 200 + "people", str(MAX_QUERY_DEPTH)),
     ("(NOT " * 40 + "people" + ")" * 40, str(MAX_QUERY_DEPTH)),
     (" OR ".join(f"w{i}" for i in range(MAX_QUERY_TERMS + 1)), str(MAX_QUERY_TERMS))],
    ids=["330 parentheses", "200 NOTs", "40 (NOT", "101 terms"],
)
def test_deep_or_wide_advanced_queries_are_a_400(
    target: Target, phrase: str, mentions: str
) -> None:
    before = StoreState.of(target.server)
    response = target.admin.post("/search/new",
                                 json={"searchType": "ADVANCED", "searchPhrase": phrase})
    refused(target.server, response, 400, QUERY, mentions, before=before, http=target.admin)


def test_a_basic_phrase_of_too_many_words_is_a_400(target: Target) -> None:
    phrase = " ".join("a" for _ in range(MAX_QUERY_TERMS + 1))
    response = target.admin.post("/search/new", json={"searchPhrase": phrase})
    refused(target.server, response, 400, QUERY, str(MAX_QUERY_TERMS), http=target.admin)


def test_queries_at_the_limits_are_answered(target: Target) -> None:
    nested = "(" * (MAX_QUERY_DEPTH - 1) + "NOT nothing_here" + ")" * (MAX_QUERY_DEPTH - 1)
    wide = " OR ".join(["people", *(f"w{i}" for i in range(MAX_QUERY_TERMS - 1))])
    for phrase in (nested, wide):
        response = target.admin.post("/search/new",
                                     json={"searchType": "ADVANCED", "searchPhrase": phrase})
        assert response.status_code == 201, response.text
        assert response.json()["totalResultCount"] >= 1


def test_a_fault_is_logged_once_without_the_statement_or_its_values(
    server: Server, caplog: pytest.LogCaptureFixture
) -> None:
    secret = "s3cret-value-" + "x" * 50
    # Flat, so that both stores get as far as finding the table missing.
    statement = ("SELECT 1 FROM no_such_table WHERE x IN ("
                 + ", ".join(f":p{i}" for i in range(5000)) + ")")

    def huge_failing_statement() -> None:
        with server.store.read() as conn:
            conn.execute(text(statement), {f"p{i}": secret for i in range(5000)})

    server.embedded.app.add_api_route(f"{API_PREFIX}/_test_huge", huge_failing_statement,
                                      methods=["GET"])
    with caplog.at_level(logging.INFO):
        response = server.anonymous().get("/_test_huge")
    assert_error(response, 500, ErrorCode.INTERNAL_ERROR.value)
    faults = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(faults) == 1, [r.getMessage()[:200] for r in faults]
    logged = faults[0].getMessage()
    assert "no_such_table" in logged  # the cause is there ...
    assert secret not in logged  # ... the values are not,
    assert len(statement) > 30_000 and len(logged) < 20_000  # nor the whole statement
    assert max(len(line) for line in logged.splitlines()) < 600
