"""``GET /dataresource/metadata``: filters, views, paging, order and validation.

Every query is narrowed to this module's sources with ``data_source:`` (the shared server holds
other modules' sources too), which also exercises the AND of several filters.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from catalog_nb.contract import ErrorCode
from tests.conftest import Http, Server
from tests.server.helpers import assert_error, counted_statements
from tests.server.lake import demo_files, profile_folder, profile_many, write_files

Query = Callable[..., dict[str, Any]]


@pytest.fixture(scope="module")
def sources(live_server: Server, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Two sources: the demo lake's files ("lake") and a small hand-made one ("small")."""
    suffix = uuid.uuid4().hex[:8]
    small = write_files(tmp_path_factory.mktemp("small"), {
        "a.csv": "id\n1\n", "b/c.csv": "id\n2\n", "b/d.jsonl": '{"id": 3}\n',
        "bc/e.csv": "id\n4\n", "junk.csv": "\x00\x01\x02",
    })
    return {
        "lake": profile_folder(live_server.store, f"lake-{suffix}", demo_files()),
        "small": profile_folder(live_server.store, f"Small-{suffix}", small),
        "lake_name": f"lake-{suffix}",
        "small_name": f"Small-{suffix}",
    }


@pytest.fixture
def query(admin: Http, sources: dict[str, str]) -> Query:
    """Query both module sources (plus any extra filters); asserts 200."""
    def run(*filters: str, **params: Any) -> dict[str, Any]:
        mine = f"data_source:{sources['lake_name']};{sources['small_name']}"
        response = admin.get("/dataresource/metadata",
                             params={"propertyFilter": [mine, *filters], **params})
        assert response.status_code == 200, response.text
        body: dict[str, Any] = response.json()
        return body
    return run


def paths(body: dict[str, Any]) -> list[str]:
    return [r["resourcePath"] for r in body["list"]]


def test_the_answer_is_a_page_ordered_by_source_then_path(query: Query) -> None:
    body = query()
    assert set(body) == {"list", "totalCount", "start", "pageSize", "nextCursor"}
    assert body["nextCursor"] is None  # one page holds it all
    assert body["start"] == 0 and body["pageSize"] == 100
    assert body["totalCount"] == len(body["list"]) > 10
    keys = [(r["dataSourceName"].casefold(), r["resourcePath"]) for r in body["list"]]
    assert keys == sorted(keys)
    assert "fields" not in body["list"][0] and "tagAssociationViewList" not in body["list"][0]


def test_pages_partition_the_result_without_overlap(query: Query) -> None:
    whole = paths(query())
    total = len(whole)
    seen: list[str] = []
    for start in range(0, total + 3, 3):
        page = query(start=start, pageSize=3)
        assert page["totalCount"] == total and page["start"] == start and page["pageSize"] == 3
        seen += paths(page)
    assert seen == whole
    assert query(start=total + 50)["list"] == []


def test_several_values_of_one_filter_are_ored(query: Query, sources: dict[str, str]) -> None:
    body = query("path:b;a.csv")
    assert paths(body) == ["a.csv", "b/c.csv", "b/d.jsonl"]  # not bc/e.csv: whole segments


def test_filters_by_type_format_state_status_and_name(query: Query) -> None:
    assert {r["resourceType"] for r in query("resource_type:resource_type_collection")["list"]} \
        == {"resource_type_collection"}
    files = query("resource_type:resource_type_hdfs_file")
    assert files["totalCount"] > 0
    assert {r["resourceType"] for r in files["list"]} == {"resource_type_file"}
    assert set(paths(query("file_format:JSONL"))) == {"b/d.jsonl", "web/access_log.jsonl"}
    assert paths(query("resource_state:ERROR")) == ["junk.csv"]
    assert paths(query("status:ERROR")) == ["junk.csv"]
    assert paths(query("name:e.csv;c.csv")) == ["b/c.csv", "bc/e.csv"]
    assert query("status:MISSING")["totalCount"] == 0


def test_filters_by_id_and_by_source(query: Query, sources: dict[str, str]) -> None:
    some = query(pageSize=2)["list"]
    by_id = query("id:" + ";".join(r["key"] for r in some))
    assert [r["key"] for r in by_id["list"]] == [r["key"] for r in some]
    small = query(f"data_source:{sources['small_name'].upper()}")
    assert {r["dataSourceKey"] for r in small["list"]} == {sources["small"]}
    assert query("data_source:no-such-source")["totalCount"] == 0


def test_filter_by_owner(admin: Http, query: Query) -> None:
    target = query("path:a.csv")["list"][0]
    assert admin.put(f"/dataresource/{target['key']}", json={"owner": "Ana.Lyst"}).status_code \
        == 200
    assert paths(query("owner:ana.lyst")) == ["a.csv"]


def test_modification_time_bounds(query: Query) -> None:
    every = query()["list"]
    times = sorted({r["timeOfResourceChange"] for r in every if r["timeOfResourceChange"]})
    middle = times[len(times) // 2]
    after = query(resourceModifiedDateFromL=middle)["list"]
    before = query(resourceModifiedDateToL=middle - 1)["list"]
    assert after and before
    assert all(r["timeOfResourceChange"] >= middle for r in after)
    assert all(r["timeOfResourceChange"] < middle for r in before)
    exact = query(resourceModifiedDateFromL=middle, resourceModifiedDateToL=middle)["list"]
    assert exact and {r["timeOfResourceChange"] for r in exact} == {middle}


def test_views(query: Query) -> None:
    minimal = query(views="resource_path")["list"][0]
    assert set(minimal) == {"key", "resourcePath", "name", "resourceType", "dataSourceName"}
    with_fields = query("path:crm/customers.csv", views="viewFields")["list"][0]
    assert with_fields["fields"] and "tagAssociationViewList" not in with_fields
    both = query("path:crm/customers.csv", views="viewFields,viewTags")["list"][0]
    assert both["fields"] == with_fields["fields"] and both["tagAssociationViewList"] == []
    repeated = query("path:crm/customers.csv", views=["viewTags", "resource_path"])["list"][0]
    assert set(repeated) == {"key", "resourcePath", "name", "resourceType", "dataSourceName",
                             "tagAssociationViewList"}


@pytest.mark.parametrize("bad", [
    "resource_type", "resource_type:", ":x", "colour:red", "id:a;;b", "path:a;",
    "resource_type:resource_type_banana", "status:DONE", "resource_state:fine",
])
def test_malformed_or_unknown_filters_are_400(admin: Http, bad: str) -> None:
    response = admin.get("/dataresource/metadata", params={"propertyFilter": bad})
    assert_error(response, 400, ErrorCode.INVALID_FILTER.value)


@pytest.mark.parametrize("params", [
    {"pageSize": 0}, {"pageSize": -1}, {"pageSize": 1001}, {"pageSize": 10**9},
    {"pageSize": "ten"}, {"start": -1}, {"start": "x"}, {"views": "viewEverything"},
    {"resourceModifiedDateFromL": "yesterday"},
    {"resourceModifiedDateFromL": 2000, "resourceModifiedDateToL": 1000},
])
def test_bad_paging_views_and_dates_are_400(admin: Http, params: dict[str, Any]) -> None:
    response = admin.get("/dataresource/metadata", params=params)
    body = assert_error(response, 400, ErrorCode.INVALID_PARAMETER.value)
    assert any(str(k) in body["message"] or str(v) in body["message"]
               for k, v in params.items())


def test_the_largest_page_is_accepted(query: Query) -> None:
    assert query(pageSize=1000)["pageSize"] == 1000


def test_virtual_folder_keys_filter(admin: Http, query: Query, sources: dict[str, str]) -> None:
    def folder(specs: list[dict[str, Any]], source: str) -> str:
        response = admin.post("/virtualfolder", json={
            "name": f"vf-{uuid.uuid4().hex[:8]}", "dataSourceKey": source, "pathSpecs": specs})
        assert response.status_code == 201, response.text
        return str(response.json()["key"])

    crm = folder([{"sourcePath": "crm"}], sources["lake"])
    csvs = folder([{"sourcePath": "/b", "includePattern": "*.csv"}], sources["small"])
    assert paths(query(virtualFolderKeys=crm)) == ["crm/customers.csv", "crm/customers_clean.csv"]
    assert paths(query(virtualFolderKeys=csvs)) == ["b/c.csv"]
    both = query(virtualFolderKeys=f"{crm},{csvs}")
    assert both["totalCount"] == 3
    assert query(virtualFolderKeys=[crm, csvs])["totalCount"] == 3
    narrowed = query("name:customers.csv", virtualFolderKeys=crm)
    assert paths(narrowed) == ["crm/customers.csv"]
    listed = narrowed["list"][0]["dataSetVirtualFolders"]
    assert len(listed) == 1 and listed[0].startswith("vf-")
    unknown = admin.get("/dataresource/metadata", params={"virtualFolderKeys": "nope"})
    assert_error(unknown, 404, ErrorCode.VIRTUAL_FOLDER_NOT_FOUND.value, "nope")


CATALOG_TABLES = ("data_resources", "resource_fields", "resource_custom_values",
                  "virtual_folders", "datasets")



def test_a_page_costs_the_same_queries_whatever_its_size(
    live_server: Server, admin: Http, tmp_path: Path
) -> None:
    name = f"many-{uuid.uuid4().hex[:8]}"
    profile_many(live_server.store, name, 1200)
    params: dict[str, Any] = {"propertyFilter": f"data_source:{name}", "views": "viewFields"}
    admin.get("/dataresource/metadata", params={**params, "pageSize": 1})  # warm the session
    with counted_statements(live_server, CATALOG_TABLES) as small:
        one = admin.get("/dataresource/metadata", params={**params, "pageSize": 5})
    with counted_statements(live_server, CATALOG_TABLES) as large:
        page = admin.get("/dataresource/metadata", params={**params, "pageSize": 1000})
    assert one.status_code == page.status_code == 200
    body = page.json()
    assert body["totalCount"] == 1200 and len(body["list"]) == 1000
    assert all(len(r["fields"]) == 4 for r in body["list"])
    assert len(large) == len(small) <= 8, large
    last = admin.get("/dataresource/metadata", params={**params, "pageSize": 1000, "start": 1000})
    assert len(last.json()["list"]) == 200
