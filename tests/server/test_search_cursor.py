"""``/search/page`` by cursor: the ``nextCursor`` of a stored search result, through real HTTP.

A stored result is a snapshot of ordered keys; its cursor names the search and the position
after the last key sent, so a walk continues that search even after the session ran others, and
resources profiled meanwhile shift nothing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from catalog_nb.contract import ErrorCode
from catalog_nb.server.schemas.paging import Cursor, encode_cursor
from catalog_nb.server.store import ingest
from tests.conftest import Http, Server
from tests.server.helpers import assert_error
from tests.server.lake import one_field_profile
from tests.server.search_helpers import Lake, build_lake, post, search


@pytest.fixture(scope="module")
def srv(make_server: Any) -> Server:
    server: Server = make_server()
    return server


@pytest.fixture(scope="module")
def lake(srv: Server, tmp_path_factory: pytest.TempPathFactory) -> Lake:
    return build_lake(srv, Path(tmp_path_factory.mktemp("search-cursor-lake")))


@pytest.fixture(scope="module")
def admin(srv: Server, lake: Lake) -> Http:
    return srv.session()


def walk(admin: Http, first: dict[str, Any], size: int) -> list[dict[str, Any]]:
    pages = [first]
    while pages[-1]["nextCursor"]:
        pages.append(post(admin, "/search/page", {"cursor": pages[-1]["nextCursor"],
                                                  "pagingCriteria": {"size": size}}))
        assert len(pages) < 100
    return pages


def test_a_cursor_walk_reads_the_stored_result_once_in_order(
    srv: Server, admin: Http, lake: Lake
) -> None:
    everything = search(admin, None, pagingCriteria={"start": 0, "size": 100})
    order = everything["matchedKeys"]
    assert len(order) >= 5 and everything["nextCursor"] is None
    first = search(admin, None, pagingCriteria={"start": 0, "size": 2})
    # Another search in between: the cursor still continues the first one.
    search(admin, "orders", pagingCriteria={"start": 0, "size": 1})
    # Resources profiled meanwhile do not enter the stored result.
    with srv.store.write() as conn:
        ingest.record_profile(conn, lake.one_key, one_field_profile("zz/new.csv"))
    pages = walk(admin, first, 2)
    assert [k for p in pages for k in p["matchedKeys"]] == order
    assert [p["start"] for p in pages] == list(range(0, len(order), 2))
    assert all(p["key"] == first["key"] for p in pages)
    assert pages[-1]["nextCursor"] is None


def test_cursor_pages_match_start_pages(admin: Http, lake: Lake) -> None:
    first = search(admin, None, pagingCriteria={"start": 0, "size": 3})
    by_cursor = post(admin, "/search/page", {"cursor": first["nextCursor"],
                                             "pagingCriteria": {"start": 0, "size": 3}})
    by_start = post(admin, "/search/page", {"key": first["key"],
                                            "pagingCriteria": {"start": 3, "size": 3}})
    assert by_cursor["start"] == by_start["start"] == 3
    assert by_cursor["matchedKeys"] == by_start["matchedKeys"]
    assert by_cursor["nextCursor"] == by_start["nextCursor"]


def test_bad_search_cursors_are_400(admin: Http, lake: Lake) -> None:
    first = search(admin, None, pagingCriteria={"start": 0, "size": 2})
    other = search(admin, "orders", pagingCriteria={"start": 0, "size": 1})
    forged = encode_cursor(Cursor("search", first["key"], 1, 9, ("not-the-key",)))
    metadata = encode_cursor(Cursor("metadata", "x", 0, 0, ("a", "b", "c")))
    for body in (
        {"cursor": "garbage"},
        {"cursor": metadata},
        {"cursor": forged},
        {"cursor": first["nextCursor"], "key": other["key"]},
    ):
        response = admin.post("/search/page", json={**body, "pagingCriteria": {"size": 2}})
        assert_error(response, 400, ErrorCode.INVALID_CURSOR.value, "cursor")
    gone = encode_cursor(Cursor("search", "no-such-search", 2, 9, ("k",)))
    response = admin.post("/search/page", json={"cursor": gone})
    assert_error(response, 404, ErrorCode.SEARCH_NOT_FOUND.value)
