"""``GET /dataresource/metadata`` by keyset: ``nextCursor`` / ``cursor``, through real HTTP.

The pages of a cursor walk follow the one order of the query (source name by code point, then
path), never repeat or skip a row, survive rows inserted and deleted while they are read, agree
with the ``start`` (OFFSET) pages, and cost the same few statements on page 1 and page 100.
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from catalog_nb.contract import ErrorCode
from catalog_nb.server.schemas.paging import Cursor, encode_cursor
from catalog_nb.server.store import ingest
from tests.conftest import Http, Server
from tests.server.helpers import assert_error, counted_statements
from tests.server.lake import add_source, one_field_profile, profile_many

PAGE_TABLES = ("data_resources", "resource_fields", "resource_custom_values",
               "tag_associations", "favorites", "reviews", "virtual_folders", "datasets")


def add_resources(server: Server, source_key: str, paths: list[str]) -> None:
    """Resources written as a profiling job writes them (the only way they come to exist)."""
    with server.store.write() as conn:
        for path in paths:
            ingest.record_profile(conn, source_key, one_field_profile(path))


@pytest.fixture(scope="module")
def catalog(live_server: Server) -> dict[str, Any]:
    """Three sources whose names order differently by code point and by locale: 'b-…' (60
    resources), 'B_…' (5, paths with punctuation and upper case) and 'a.…' (empty)."""
    tag = uuid.uuid4().hex[:8]
    names = {"many": f"b-{tag}", "few": f"B_{tag}", "empty": f"a.{tag}"}
    keys = {"many": profile_many(live_server.store, names["many"], 60, fields=1)}
    keys["few"] = add_source(live_server.store, names["few"], f"/generated/{names['few']}")
    keys["empty"] = add_source(live_server.store, names["empty"], f"/generated/{tag}")
    add_resources(live_server, keys["few"], ["Z.csv", "a-b.csv", "a/b.csv", "a_b.csv", "ä.csv"])
    return {"names": names, "keys": keys,
            "filter": "data_source:" + ";".join(names.values())}


def walk(admin: Http, params: dict[str, Any], size: int) -> list[dict[str, Any]]:
    """Every page of a cursor walk (the bodies), asserting each is a 200."""
    pages = []
    cursor = None
    while True:
        extra = {"cursor": cursor} if cursor else {}
        response = admin.get("/dataresource/metadata",
                             params={**params, "pageSize": size, **extra})
        assert response.status_code == 200, response.text
        body = response.json()
        pages.append(body)
        cursor = body["nextCursor"]
        if cursor is None:
            return pages
        assert len(pages) < 1000, "the walk does not end"


def keys_of(pages: list[dict[str, Any]]) -> list[str]:
    return [r["key"] for page in pages for r in page["list"]]


def test_a_cursor_walk_returns_every_row_once_in_order(
    admin: Http, catalog: dict[str, Any]
) -> None:
    params = {"propertyFilter": catalog["filter"]}
    whole = admin.get("/dataresource/metadata", params={**params, "pageSize": 1000}).json()
    assert whole["totalCount"] == 65 and whole["nextCursor"] is None
    order = [(r["dataSourceName"].casefold(), r["resourcePath"]) for r in whole["list"]]
    # Code points: '_' (0x5F) after '-' (0x2D) in the folded names; 'Z' before 'a', 'ä' last.
    assert order == sorted(order)
    few = [p for n, p in order if n == catalog["names"]["few"].casefold()]
    assert few == ["Z.csv", "a-b.csv", "a/b.csv", "a_b.csv", "ä.csv"]
    assert order[0][0] == catalog["names"]["many"].casefold()
    for size in (1, 7, 60, 64, 65):
        pages = walk(admin, params, size)
        assert keys_of(pages) == [r["key"] for r in whole["list"]], size
        assert [p["start"] for p in pages] == list(range(0, 65, size)), size
        assert all(p["totalCount"] == 65 and p["pageSize"] == size for p in pages)
        assert all(len(p["list"]) == size for p in pages[:-1]) and pages[-1]["list"]


def test_cursor_pages_agree_with_start_pages_and_views_may_change(
    admin: Http, catalog: dict[str, Any]
) -> None:
    params = {"propertyFilter": catalog["filter"]}
    first = admin.get("/dataresource/metadata", params={**params, "pageSize": 10}).json()
    by_cursor = admin.get("/dataresource/metadata", params={
        **params, "pageSize": 10, "cursor": first["nextCursor"], "views": "resource_path"}).json()
    by_start = admin.get("/dataresource/metadata",
                         params={**params, "pageSize": 10, "start": 10}).json()
    assert by_cursor["start"] == by_start["start"] == 10
    assert [r["key"] for r in by_cursor["list"]] == [r["key"] for r in by_start["list"]]
    assert set(by_cursor["list"][0]) == {"key", "resourcePath", "name", "resourceType",
                                         "dataSourceName"}
    # An OFFSET page hands out a cursor too, so a reader can switch to keyset mid-way.
    after_start = admin.get("/dataresource/metadata", params={
        **params, "pageSize": 10, "cursor": by_start["nextCursor"]}).json()
    assert after_start["start"] == 20
    whole = admin.get("/dataresource/metadata", params={**params, "pageSize": 30}).json()
    assert [r["key"] for r in after_start["list"]] == [r["key"] for r in whole["list"][20:30]]


def test_rows_inserted_and_deleted_during_a_walk_shift_nothing(
    live_server: Server, admin: Http
) -> None:
    name = f"moving-{uuid.uuid4().hex[:8]}"
    key = add_source(live_server.store, name, f"/generated/{name}")
    add_resources(live_server, key, [f"m/{i:03d}.csv" for i in range(0, 100, 2)])  # 50 rows
    params = {"propertyFilter": f"data_source:{name}", "pageSize": 10}
    seen: list[str] = []
    first = admin.get("/dataresource/metadata", params=params).json()
    seen += [r["resourcePath"] for r in first["list"]]
    assert seen[-1] == "m/018.csv"
    # Behind the cursor, ahead of it, and a deletion ahead of it.
    add_resources(live_server, key, ["a/first.csv", "m/001.csv", "m/019.csv", "m/099.csv"])
    with live_server.store.write() as conn:
        conn.exec_driver_sql(
            "DELETE FROM data_resources WHERE data_source_key = %s AND path = %s"
            if live_server.store.dialect == "postgresql" else
            "DELETE FROM data_resources WHERE data_source_key = ? AND path = ?",
            (key, "m/050.csv"),
        )
    cursor = first["nextCursor"]
    while cursor:
        page = admin.get("/dataresource/metadata", params={**params, "cursor": cursor}).json()
        seen += [r["resourcePath"] for r in page["list"]]
        cursor = page["nextCursor"]
    assert len(seen) == len(set(seen))
    expected = sorted({f"m/{i:03d}.csv" for i in range(0, 100, 2)} - {"m/050.csv"}
                      | {"m/019.csv", "m/099.csv"})
    assert seen == expected  # never a repeat, never a gap; rows behind the cursor stay behind


@pytest.mark.parametrize("cursor", [
    "garbage", "", "%%%", encode_cursor(Cursor("search", "x", 0, 0, ("k", 1)))[:-3],
    encode_cursor(Cursor("search", "x", 0, 0, ("k", 1))),
    encode_cursor(Cursor("metadata", "0" * 16, 5, 10, ("a", "b", "c"))),
    "W10",  # [] in base64
])
def test_a_bad_cursor_is_400_invalid_cursor(admin: Http, cursor: str) -> None:
    response = admin.get("/dataresource/metadata", params={"cursor": cursor})
    body = assert_error(response, 400, ErrorCode.INVALID_CURSOR.value, "cursor")
    assert body.get("field") == "cursor"


def test_a_cursor_is_bound_to_its_filters_and_excludes_start(
    admin: Http, catalog: dict[str, Any]
) -> None:
    params = {"propertyFilter": catalog["filter"], "pageSize": 5}
    cursor = admin.get("/dataresource/metadata", params=params).json()["nextCursor"]
    other = admin.get("/dataresource/metadata", params={
        "propertyFilter": [catalog["filter"], "name:a_b.csv"], "pageSize": 5, "cursor": cursor})
    assert_error(other, 400, ErrorCode.INVALID_CURSOR.value, "other filters")
    both = admin.get("/dataresource/metadata", params={**params, "cursor": cursor, "start": 5})
    assert_error(both, 400, ErrorCode.INVALID_PARAMETER.value, "start", "cursor")
    forged = encode_cursor(Cursor("metadata", "x", 0, 0, ("a\x00", "b", "c")))
    assert_error(admin.get("/dataresource/metadata", params={"cursor": forged}), 400,
                 ErrorCode.INVALID_CURSOR.value)


def test_a_cursor_page_costs_what_the_first_page_costs(
    live_server: Server, admin: Http, catalog: dict[str, Any]
) -> None:
    params = {"propertyFilter": catalog["filter"], "views": "viewFields,viewTags"}
    admin.get("/dataresource/metadata", params={**params, "pageSize": 1})  # warm the session
    with counted_statements(live_server, PAGE_TABLES) as first_small:
        small = admin.get("/dataresource/metadata", params={**params, "pageSize": 3}).json()
    with counted_statements(live_server, PAGE_TABLES) as first_large:
        admin.get("/dataresource/metadata", params={**params, "pageSize": 50})
    with counted_statements(live_server, PAGE_TABLES) as later:
        # From the middle of one source across into the next: still the same statements.
        page = admin.get("/dataresource/metadata", params={
            **params, "pageSize": 60, "cursor": small["nextCursor"]}).json()
    assert len(page["list"]) == 60
    assert len(first_small) == len(first_large) <= 10, first_large
    # No count on a cursor page; at most one more statement to cross into the next source.
    assert len(later) <= len(first_large), later
    assert not any(s.lower().startswith("select count(") for s in later), later


def test_properties_narrow_each_resource_to_what_is_asked(
    admin: Http, catalog: dict[str, Any]
) -> None:
    params = {"propertyFilter": catalog["filter"], "pageSize": 1000}
    whole = admin.get("/dataresource/metadata", params=params).json()["list"]
    asked = ["name", "rowCount", "customProperties", "favorite", "canRunJob", "detailedStatus",
             "dataSourceName", "header", "fileFormatDisplay"]
    narrow = admin.get("/dataresource/metadata",
                       params={**params, "properties": ",".join(asked)}).json()["list"]
    assert narrow == [{k: r[k] for k in ["key", *asked]} for r in whole]
    only = admin.get("/dataresource/metadata",
                     params={**params, "properties": ["name"], "views": "viewFields"}).json()
    assert set(only["list"][0]) == {"key", "name", "fields"}
    assert only["list"][0]["fields"] == admin.get(
        f"/dataresource/{only['list'][0]['key']}").json()["fields"]
    # A cursor walk may narrow its pages as it goes.
    first = admin.get("/dataresource/metadata", params={**params, "pageSize": 5}).json()
    second = admin.get("/dataresource/metadata", params={
        **params, "pageSize": 5, "cursor": first["nextCursor"], "properties": "key"}).json()
    assert [r["key"] for r in second["list"]] == [r["key"] for r in whole[5:10]]
    assert all(set(r) == {"key"} for r in second["list"])


def test_an_unknown_property_is_400(admin: Http) -> None:
    response = admin.get("/dataresource/metadata", params={"properties": "name,colour"})
    body = assert_error(response, 400, ErrorCode.INVALID_PARAMETER.value, "colour")
    assert body.get("field") == "properties"
