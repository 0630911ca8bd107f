"""The metadata reader of the client (``client/paging.py``): cursors, the Link header that lets
the next page travel while this one is decoded, the offset fallback, ``limit``, the paused
collector; and ``cat.resources()`` against a real service, paging by cursor."""

from __future__ import annotations

import gc
import threading
import uuid
import warnings
from typing import Any

import pandas as pd
import pytest

from catalog_nb.client import Catalog, TruncatedResultWarning, connect
from catalog_nb.client.paging import gc_paused, link_cursor, read_pages
from catalog_nb.client.resources.frames import (
    RESOURCE_COLUMNS,
    frame_records,
    resources_frame,
)
from catalog_nb.client.resources.paged_frame import PagedFrame
from tests.conftest import Server
from tests.server.lake import profile_many

ROWS = [{"key": f"k{i:03d}", "name": f"n{i}"} for i in range(10)]


def cursor_pages(size: int) -> dict[str | None, dict[str, Any]]:
    """A service's cursor pages of ROWS: cursor -> page."""
    pages: dict[str | None, dict[str, Any]] = {}
    for at in range(0, len(ROWS), size):
        after = f"c{at + size}" if at + size < len(ROWS) else None
        pages[f"c{at}" if at else None] = {"list": ROWS[at:at + size], "totalCount": 99,
                                           "nextCursor": after}
    return pages


def test_cursors_are_followed_until_null() -> None:
    pages = cursor_pages(3)
    asked: list[tuple[int, int, str | None]] = []

    def fetch(start: int, size: int, cursor: str | None) -> dict[str, Any]:
        asked.append((start, size, cursor))
        return pages[cursor]

    records, total = read_pages(fetch, page_size=3, limit=None, progress=False,
                                   description="t")
    assert records == ROWS and total == 99  # a stale totalCount does not cut the read short
    assert [c for _, _, c in asked] == [None, "c3", "c6", "c9"]


class FakeResponse:
    """What ``requests`` gives: ``links`` parsed from the Link header, and a body."""

    def __init__(self, page: dict[str, Any]) -> None:
        self.page = page
        after = page["nextCursor"]
        self.links = {"next": {"url": f"http://h/m?pageSize=3&cursor={after}"}} if after else {}


def test_the_next_page_is_requested_from_the_link_before_this_one_is_decoded() -> None:
    pages = cursor_pages(3)
    started = {cursor: threading.Event() for cursor in pages}
    fetched: list[str | None] = []

    def fetch(start: int, size: int, cursor: str | None) -> FakeResponse:
        fetched.append(cursor)
        started[cursor].set()
        return FakeResponse(pages[cursor])

    def decode(response: FakeResponse) -> dict[str, Any]:
        after = response.page["nextCursor"]
        # A reader that fetched only after decoding would wait here in vain.
        assert after is None or started[after].wait(10), f"{after} was not requested yet"
        return response.page

    records, _ = read_pages(fetch, page_size=3, limit=None, progress=False, description="t",
                               decode=decode)
    assert records == ROWS and fetched == [None, "c3", "c6", "c9"]
    assert link_cursor(FakeResponse(pages["c3"])) == "c6"
    assert link_cursor(FakeResponse(pages["c9"])) is None


def test_a_service_without_cursors_is_paged_by_start_without_repeats() -> None:
    def fetch(start: int, size: int, cursor: str | None) -> dict[str, Any]:
        assert cursor is None
        # A row inserted before the second page shifts it by one: k002 comes again.
        shifted = start - 1 if start else 0
        return {"list": ROWS[shifted:shifted + size], "totalCount": len(ROWS)}

    records, total = read_pages(fetch, page_size=3, limit=None, progress=False,
                                   description="t")
    assert [r["key"] for r in records] == [r["key"] for r in ROWS]
    assert total == 10


def test_a_service_repeating_its_first_page_cannot_keep_the_reader_forever() -> None:
    # Pages by start advance by the rows sent, repeats included: a careless service that
    # answers every start with the same rows ends the read at its total.
    asked: list[int] = []

    def fetch(start: int, size: int, cursor: str | None) -> dict[str, Any]:
        asked.append(start)
        return {"list": ROWS[:size], "totalCount": len(ROWS)}

    records, total = read_pages(fetch, page_size=3, limit=None, progress=False,
                                description="t")
    assert records == ROWS[:3] and total == 10 and asked == [0, 3, 6, 9]


def test_limit_stops_early() -> None:
    pages = cursor_pages(3)
    asked: list[str | None] = []

    def fetch(start: int, size: int, cursor: str | None) -> dict[str, Any]:
        asked.append(cursor)
        return pages[cursor]

    records, _ = read_pages(fetch, page_size=3, limit=4, progress=False, description="t")
    assert records == ROWS[:4] and asked == [None, "c3"]


def test_the_collector_is_paused_inside_and_restored_after() -> None:
    assert gc.isenabled()
    with gc_paused():
        assert not gc.isenabled()
        with gc_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()
    try:
        with gc_paused():
            pass
        assert not gc.isenabled()  # it was off: it stays off
    finally:
        gc.enable()


@pytest.fixture(scope="module")
def many(live_server: Server) -> str:
    """A source of 250 resources on the shared server; its name."""
    name = f"paged-{uuid.uuid4().hex[:8]}"
    profile_many(live_server.store, name, 250, fields=1)
    return name


def test_resources_pages_by_cursor_into_the_same_frame(
    live_server: Server, many: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    cat: Catalog = connect(live_server.url, live_server.admin_user, live_server.admin_password,
                           progress=False)
    sent: list[dict[str, list[str]]] = []
    original = cat.api.http.session.request

    def spy(method: str, url: str, *args: Any, **kwargs: Any) -> Any:
        if "/dataresource/metadata" in url:
            sent.append({k: [str(x) for x in (v if isinstance(v, list) else [v])]
                         for k, v in (kwargs.get("params") or {}).items()})
        return original(method, url, *args, **kwargs)

    monkeypatch.setattr(cat.api.http.session, "request", spy)
    try:
        frame = cat.resources(many, page_size=40)
        assert len(frame) == 250 and frame["key"].is_unique
        assert list(frame.columns[:len(RESOURCE_COLUMNS)]) == [c.name for c in RESOURCE_COLUMNS]
        assert frame["path"].tolist() == sorted(frame["path"])
        assert len(sent) == 7 and "cursor" not in sent[0]
        assert all("cursor" in params for params in sent[1:])
        by_offset = pd.concat([
            pd.DataFrame(cat.api.resource_metadata([f"data_source:{many}"], page_size=100,
                                                   start=start)["list"])
            for start in (0, 100, 200)
        ])
        assert frame["key"].tolist() == by_offset["key"].tolist()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            cut = cat.resources(many, page_size=40, limit=50)
        assert len(cut) == 50
        assert any(issubclass(w.category, TruncatedResultWarning) for w in caught)
    finally:
        cat.close()


def test_records_cut_down_for_the_frame_give_the_same_frame() -> None:
    record = {
        "key": "k1", "dataSourceName": "s", "resourcePath": "a/b.csv", "name": "b.csv",
        "resourceType": "resource_type_file", "fileFormat": "csv", "rowCount": 0,
        "timeOfLastProfile": None, "fieldCount": 3, "resourceSize": 10, "partitionCount": 0,
        "resourceState": "OK", "status": "BROWSED", "errorMsg": None, "owner": "ana",
        "description": "d", "dataSetVirtualFolders": ["vf"], "favorite": True,
        "averageRating": 4.5, "ratingCount": 2, "timeOfResourceChange": 1_700_000_000_000,
        "timeOfLastRefresh": None, "timeOfCreation": 1, "timeOfLastChange": 2,
        "customProperties": [{"name": "team", "type": "STRING", "value": "x"}],
        "fields": [{"name": "id"}], "tagAssociationViewList": [
            {"field": None, "state": "ACCEPTED", "tagFullName": "D.T"}],
        "canRunJob": True, "detailedStatus": [{"stageName": "browse"}], "sourceDetails": {},
    }
    definitions = [{"name": "team", "type": "STRING"}]
    full = resources_frame([record], definitions=definitions, fields=True, tags=True)
    cut = resources_frame(frame_records([record]), definitions=definitions, fields=True,
                          tags=True)
    pd.testing.assert_frame_equal(full, cut)
    assert "canRunJob" not in frame_records([record])[0]


def _record(i: int, **changes: Any) -> dict[str, Any]:
    record = {
        "key": f"k{i}", "dataSourceName": "s", "resourcePath": f"p/{i}.csv", "name": f"{i}.csv",
        "resourceType": "resource_type_table", "fileFormat": None, "rowCount": i,
        "timeOfLastProfile": 5 if i % 2 else None, "fieldCount": 0, "resourceSize": i * 10,
        "partitionCount": 0, "resourceState": "OK", "status": "PROFILED", "errorMsg": None,
        "owner": None, "description": "d", "dataSetVirtualFolders": [], "favorite": i == 3,
        "averageRating": 0.0, "ratingCount": 0, "timeOfResourceChange": 1_700_000_000_000 + i,
        "timeOfLastRefresh": None, "timeOfCreation": 1, "timeOfLastChange": 2,
        "inferredKeys": {"primaryKey": ["id"] if i == 2 else [], "uniqueColumns": [],
                         "compositeKeys": []},
        "customProperties": [{"name": "team", "type": "STRING", "value": f"t{i}"}]
        if i % 3 else [{"name": "since", "type": "DATE", "value": 1_700_000_000_000}],
        "fields": [{"name": "id"}, {"name": f"c{i}"}],
        "tagAssociationViewList": [{"field": None, "state": "ACCEPTED", "tagFullName": "D.T"}],
    }
    return {**record, **changes}


@pytest.mark.parametrize(("fields", "tags", "definitions", "cut"), [
    (False, False, [{"name": "team", "type": "STRING"}], None),
    (True, True, None, None),
    (True, False, [{"name": "since", "type": "DATE"}], 5),
    (False, True, [], 0),
])
def test_a_frame_gathered_page_by_page_is_the_frame_of_all_records(
    fields: bool, tags: bool, definitions: list[dict[str, Any]] | None, cut: int | None
) -> None:
    pages = [[_record(i) for i in range(at, at + 3)] for at in range(0, 9, 3)]
    pages[1][0]["resourceSize"] = 12.0  # a value of another type converts as in the whole
    pages[2][1]["owner"] = 7
    pages[0][2]["dataSourceName"] = None
    paged = PagedFrame(fields=fields, tags=tags)
    kept = [record for page in pages for record in paged(page)]
    if cut is not None:
        kept = kept[:cut]  # what read_pages keeps of the pages under limit=
    everything = [record for page in pages for record in page][:len(kept)]
    expected = resources_frame(everything, definitions=definitions, fields=fields, tags=tags)
    pd.testing.assert_frame_equal(paged.frame(kept, definitions), expected)


def test_a_page_missing_a_property_reads_it_as_missing_like_the_whole_frame() -> None:
    # Pages normally carry every property the frame reads (one pass takes them all out); one
    # record without some of them sends that page the slower way, with the same frame.
    pages = [[_record(i) for i in range(at, at + 3)] for at in range(0, 6, 3)]
    del pages[1][1]["owner"], pages[1][2]["favorite"], pages[1][2]["resourceType"]
    paged = PagedFrame()
    kept = [record for page in pages for record in paged(page)]
    expected = resources_frame([r for page in pages for r in page])
    pd.testing.assert_frame_equal(paged.frame(kept), expected)
    assert expected["owner"].isna()[4] and expected["favorite"].isna()[5]


def test_number_columns_gathered_as_arrow_arrays_are_typed_as_the_whole_frame() -> None:
    # Pages of plain numbers are gathered as Arrow arrays; a NaN (from the stdlib decoder) is
    # missing, and a page with a value of another type (text, a float in an int column) turns
    # the column back into Python values for every page.
    pages = [[_record(i) for i in range(at, at + 3)] for at in range(0, 12, 3)]
    pages[0][1]["averageRating"] = float("nan")
    pages[1][0].update(averageRating=3, favorite=None, timeOfLastRefresh=1_700_000_000_123)
    pages[2][2].update(rowCount=41.0, resourceSize=2**62, timeOfCreation=3.0)
    pages[3][0].update(ratingCount=True, partitionCount=None)
    paged = PagedFrame()
    kept = [record for page in pages for record in paged(page)]
    expected = resources_frame([r for page in pages for r in page])
    got = paged.frame(kept)
    pd.testing.assert_frame_equal(got, expected)
    assert paged.numbers >= {"favorite", "average_rating", "refreshed", "field_count"}
    assert not paged.numbers & {"rows", "created", "rating_count"}
    assert got["average_rating"].isna()[1] and got["average_rating"][3] == 3.0
    assert got["rows"][8] == 41 and got["size"][8] == 2**62
    limited = paged.frame(kept[:5])  # cut by limit=
    pd.testing.assert_frame_equal(limited, resources_frame([r for p in pages for r in p][:5]))
    # An int too wide for 64 bits is refused by both ways alike.
    wide = [_record(1, resourceSize=2**64)]
    with pytest.raises(OverflowError):
        resources_frame(wide)
    paged = PagedFrame()
    paged(wide)
    assert "size" not in paged.numbers
    with pytest.raises(OverflowError):
        paged.frame(wide)


@pytest.mark.parametrize("name", ["type", "rows", "field_count", "primary_key"])
def test_a_columns_page_form_gives_its_per_record_values(name: str) -> None:
    column = next(c for c in RESOURCE_COLUMNS if c.name == name)
    records = [_record(i) for i in range(4)] + [
        _record(5, rowCount=0, fieldCount=0, timeOfLastProfile=None),
        _record(6, rowCount=0, fieldCount=None, timeOfLastProfile=7),
        _record(7, resourceType="resource_type_hdfs_file", inferredKeys=None),
        _record(8, resourceType="resource_type_odd", inferredKeys={"primaryKey": ("a", "b")}),
        _record(9, resourceType=None),
    ]
    del records[0]["rowCount"], records[1]["resourceType"], records[2]["inferredKeys"]
    one_by_one = [column.extract(r) for r in records]
    assert column.extract_all(records, dicts=True) == one_by_one
    if name == "type":
        assert one_by_one[:2] == ["table", None] and one_by_one[6:] == ["file", "odd", None]
        # A value no set can hold (not from this service) is read one by one all the same.
        odd = [_record(1, resourceType=["x"]), _record(2)]
        assert column.extract_all(odd, dicts=True) == ["['x']", "table"]


def test_resources_is_the_frame_of_its_raw_records(live_server: Server, many: str) -> None:
    cat: Catalog = connect(live_server.url, live_server.admin_user, live_server.admin_password,
                           progress=False)
    try:
        records = cat.resources(many, as_frame=False, page_size=70, fields=True, tags=True)
        definitions = cat.api.list_custom_properties()
        for fields, tags in ((False, False), (True, True)):
            frame = cat.resources(many, page_size=70, fields=fields, tags=tags)
            expected = resources_frame(records, definitions=definitions, fields=fields,
                                       tags=tags)
            pd.testing.assert_frame_equal(frame, expected)
    finally:
        cat.close()
