"""The Arrow layout of ``GET /dataresource/metadata`` through real HTTP: the same resources, the
same values and the same paging as the JSON page, column by column, and ``Accept`` read as
RFC 9110 says.
"""

from __future__ import annotations

import json
from typing import Any

import pyarrow as pa
import pytest
import requests

from catalog_nb.client.resources.frames import FRAME_WIRE_PROPERTIES
from catalog_nb.contract import ARROW_PAGE_MAX, ARROW_PAGE_METADATA, ARROW_STREAM, METADATA_PAGE_MAX
from catalog_nb.server.schemas.resource_arrow import OWN_KINDS
from catalog_nb.server.schemas.resources import OWN
from tests.conftest import Http
from tests.server.test_metadata_projection import lake  # noqa: F401 - the shared fixture

ARROW = {"Accept": ARROW_STREAM}


def _arrow(admin: Http, params: dict[str, Any], headers: dict[str, str] | None = None
           ) -> tuple[pa.Table, dict[str, Any], requests.Response]:
    response = admin.get("/dataresource/metadata", params=params, headers=headers or ARROW)
    assert response.status_code == 200, response.text
    assert response.headers["Content-Type"] == ARROW_STREAM
    table = pa.ipc.open_stream(response.content).read_all()
    return table, json.loads(table.schema.metadata[ARROW_PAGE_METADATA.encode()]), response


def _records(table: pa.Table) -> list[dict[str, Any]]:
    """The rows of an Arrow page as the JSON page writes them (JSON columns decoded)."""
    json_columns = {f.name for f in table.schema if isinstance(f.type, pa.BaseExtensionType)
                    and f.type.extension_name == "arrow.json"}
    rows = []
    for row in table.to_pylist():
        rows.append({k: json.loads(v) if k in json_columns and v is not None else v
                     for k, v in row.items()})
    return rows


@pytest.mark.parametrize("properties", ["", ",".join(FRAME_WIRE_PROPERTIES)])
def test_an_arrow_page_holds_the_json_pages_resources_value_for_value(
    admin: Http, lake: dict[str, Any], properties: str  # noqa: F811 - the fixture
) -> None:
    params = {**lake["params"], "properties": properties}
    page = admin.get("/dataresource/metadata", params=params).json()
    table, paging, _ = _arrow(admin, params)
    rows = _records(table)
    assert len(rows) == len(page["list"]) == 6
    # Same properties in the same order, and the same values (types included: 0 is no False).
    for row, resource in zip(rows, page["list"], strict=True):
        assert list(row) == list(resource)
        assert [(k, type(v), v) for k, v in row.items()] == \
            [(k, type(v), v) for k, v in resource.items()]
    assert paging == {k: v for k, v in page.items() if k != "list"}
    # What the lake set shows in its column.
    by_path = {r["resourcePath"]: r for r in rows}
    assert by_path["plain.csv"]["favorite"] is True
    assert by_path["keys.csv"]["ratingCount"] == 1
    assert by_path["keys.csv"]["inferredKeys"]["primaryKey"] == ["id"]
    assert by_path["sub/deep.csv"]["dataSetVirtualFolders"]
    assert [c["value"] for c in by_path["keys.csv"]["customProperties"]] == ["sales"]


def test_the_columns_are_typed_the_same_on_every_page_even_an_empty_one(
    admin: Http, lake: dict[str, Any]  # noqa: F811 - the fixture
) -> None:
    params = {**lake["params"], "properties": ",".join(FRAME_WIRE_PROPERTIES)}
    full, _, _ = _arrow(admin, params)
    empty, paging, _ = _arrow(admin, {**params, "propertyFilter": [
        f"data_source:{lake['name']}", "name:no-such-resource"]})
    assert empty.num_rows == 0 and paging["totalCount"] == 0
    assert empty.schema.remove_metadata() == full.schema.remove_metadata()
    types = {f.name: str(f.type) for f in full.schema}
    assert types["rowCount"] == "int64" and types["name"] == "string"
    assert types["favorite"] == "bool" and types["averageRating"] == "double"
    assert types["dataSetVirtualFolders"] == "list<item: string>"
    assert types["customProperties"] == types["inferredKeys"] == "extension<arrow.json>"


def test_arrow_pages_follow_the_same_cursor_as_json_pages(
    admin: Http, lake: dict[str, Any]  # noqa: F811 - the fixture
) -> None:
    params = {**lake["params"], "pageSize": 4, "properties": "name"}
    expected = [r["key"] for r in admin.get(
        "/dataresource/metadata", params={**params, "pageSize": 100}).json()["list"]]
    keys: list[str] = []
    table, paging, response = _arrow(admin, params)
    keys += table.column("key").to_pylist()
    assert paging["nextCursor"] and paging["totalCount"] == 6
    # The Link header leads to the next page, as on a JSON page.
    nxt = response.links["next"]["url"]
    follow = admin.get(nxt, headers=ARROW)
    assert follow.status_code == 200
    rest = pa.ipc.open_stream(follow.content).read_all()
    keys += rest.column("key").to_pylist()
    last = json.loads(rest.schema.metadata[ARROW_PAGE_METADATA.encode()])
    assert last["nextCursor"] is None and last["start"] == 4
    assert keys == expected


def test_an_arrow_page_may_be_ten_times_larger_than_a_json_page(
    admin: Http, lake: dict[str, Any]  # noqa: F811 - the fixture
) -> None:
    size = {**lake["params"], "pageSize": ARROW_PAGE_MAX}
    _, paging, _ = _arrow(admin, size)
    assert paging["pageSize"] == ARROW_PAGE_MAX
    refused = admin.get("/dataresource/metadata", params=size)
    assert refused.status_code == 400 and refused.json()["errorCode"] == "INVALID_PARAMETER"
    assert str(METADATA_PAGE_MAX) in refused.json()["message"]
    beyond = admin.get("/dataresource/metadata", headers=ARROW,
                       params={**size, "pageSize": ARROW_PAGE_MAX + 1})
    assert beyond.status_code == 400 and str(ARROW_PAGE_MAX) in beyond.json()["message"]


@pytest.mark.parametrize(("accept", "arrow"), [
    (ARROW_STREAM, True),
    (f"{ARROW_STREAM}, application/json;q=0.5", True),
    (f"application/json, {ARROW_STREAM};q=0.9", False),
    (f"{ARROW_STREAM};q=0, */*", False),
    (f"*/*;q=0.8, {ARROW_STREAM}", True),
    (f"{ARROW_STREAM};q=oops, application/json", False),
    ("application/json", False),
    ("*/*", False),
])
def test_accept_chooses_the_layout(
    admin: Http, lake: dict[str, Any], accept: str, arrow: bool  # noqa: F811 - the fixture
) -> None:
    response = admin.get("/dataresource/metadata", params=lake["params"],
                         headers={"Accept": accept})
    assert response.status_code == 200, response.text
    kind = response.headers["Content-Type"].split(";")[0]
    assert kind == (ARROW_STREAM if arrow else "application/json")


def test_views_are_json_only(admin: Http, lake: dict[str, Any]) -> None:  # noqa: F811
    params = {**lake["params"], "views": "viewFields"}
    refused = admin.get("/dataresource/metadata", params=params, headers=ARROW)
    assert refused.status_code == 406
    assert refused.json()["errorCode"] == "NOT_ACCEPTABLE"
    assert "JSON only" in refused.json()["message"]
    both = admin.get("/dataresource/metadata", params=params,
                     headers={"Accept": f"{ARROW_STREAM}, application/json;q=0.1"})
    assert both.status_code == 200 and both.json()["list"][0]["fields"]


def test_arrow_pages_compress_their_own_buffers_not_through_gzip(
    admin: Http, lake: dict[str, Any]  # noqa: F811 - the fixture
) -> None:
    response = admin.get("/dataresource/metadata", params=lake["params"],
                         headers={**ARROW, "Accept-Encoding": "gzip"})
    assert response.status_code == 200
    assert "Content-Encoding" not in response.headers
    table = pa.ipc.open_stream(response.content).read_all()

    def written(compression: str | None) -> bytes:
        sink = pa.BufferOutputStream()
        options = pa.ipc.IpcWriteOptions(compression=compression)
        with pa.ipc.new_stream(sink, table.schema, options=options) as writer:
            writer.write_table(table)
        return bytes(sink.getvalue().to_pybytes())

    assert response.content == written("lz4") != written(None)


def test_every_property_built_in_python_has_an_arrow_type() -> None:
    assert set(OWN_KINDS) == {name for name, _ in OWN}
