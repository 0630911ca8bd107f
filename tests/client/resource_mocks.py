"""Mocked answers of the resource families (sources, resources, jobs, folders) for client tests."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any
from urllib.parse import parse_qs, urlsplit

import responses

from tests.client.mocks import API

SOURCES = [
    {
        "key": "src-files",
        "type": "datasource",
        "name": "demo_files",
        "sourceType": "FILE",
        "uri": "/data/lake/files",
        "includePatterns": [],
        "excludePatterns": ["tmp/**"],
        "engine": "local",
        "resourceCount": 12,
        "description": None,
        "lastJob": {
            "key": "j1",
            "jobType": "PROFILE",
            "dataSourceKey": "src-files",
            "dataSourceName": "demo_files",
            "resourcePath": None,
            "state": "SUCCEEDED",
            "progress": 1.0,
            "total": 12,
            "done": 12,
            "counts": {"created": 12, "updated": 0, "unchanged": 0, "skipped": 0, "errors": 0},
            "errors": [],
            "message": None,
            "requestedBy": "admin",
            "timeOfCreation": 1704067200000,
            "startTime": 1704067201000,
            "endTime": 1704067260000,
            "workUnit": None,
            "workTotal": None,
            "workDone": None,
            "engine": "local",
            "worker": None,
        },
        "timeOfCreation": 1704067200000,
        "timeOfLastChange": 1704067200000,
    },
    {
        "key": "src-sql",
        "type": "datasource",
        "name": "demo_sql",
        "sourceType": "SQL",
        "uri": "sqlite:///lake/sql/company.sqlite3",
        "includePatterns": [],
        "excludePatterns": [],
        "engine": "local",
        "resourceCount": 5,
        "description": None,
        "lastJob": None,
        "timeOfCreation": 1704067200000,
        "timeOfLastChange": 1704067200000,
    },
]

FOLDERS = [
    {
        "key": "vf-1",
        "name": "Customer data",
        "description": None,
        "dataSourceKey": "src-files",
        "dataSourceName": "demo_files",
        "parentKey": None,
        "pathSpecs": [{"sourcePath": "crm", "includePattern": "*.csv", "excludePattern": None}],
        "resourceCount": 2,
        "timeOfCreation": 1704067200000,
        "timeOfLastChange": 1704067200000,
    }
]

DEFINITIONS = [
    {"key": "cp1", "name": "sensitivity", "type": "STRING", "facetAble": True},
    {"key": "cp2", "name": "retention_days", "type": "INTEGER", "facetAble": False},
    {"key": "cp3", "name": "reviewed", "type": "DATE", "facetAble": False},
    {"key": "cp4", "name": "pii", "type": "BOOLEAN", "facetAble": True},
    {"key": "cp5", "name": "labels", "type": "STRING_LIST", "facetAble": False},
    {"key": "cp6", "name": "quality", "type": "NUMBER", "facetAble": False},
]


def field_json(name: str, position: int, data_type: str = "STRING", **props: Any) -> dict[str, Any]:
    """An AbstractField with profiling properties."""
    properties = [{"name": k, "value": v, "type": "STRING"} for k, v in props.items()]
    return {
        "name": name,
        "displayName": None,
        "description": None,
        "comment": None,
        "dataType": data_type,
        "nullable": True,
        "position": position,
        "properties": properties,
    }


CUSTOMER_FIELDS = [
    field_json(
        "customer_id",
        0,
        "LONG",
        density=1.0,
        valueCount=3000,
        nullCount=0,
        distinctCount=3000,
        distinctCountApproximate=False,
        min=1,
        max=3000,
        mean=1500.5,
        mostFrequent=[{"value": 1, "count": 1}],
        patterns=[{"pattern": "9999", "count": 2100}],
        sampled=False,
        sampleSize=3000,
    ),
    field_json(
        "contact",
        1,
        "STRING",
        density=0.97,
        valueCount=2910,
        nullCount=90,
        distinctCount=2905,
        distinctCountApproximate=True,
        min="a@x.org",
        max="z@y.com",
        minLength=9,
        maxLength=31,
        sampled=True,
        sampleSize=1000,
    ),
]


def resource_json(index: int = 0, **overrides: Any) -> dict[str, Any]:
    """A DataResource as the metadata endpoint answers it."""
    record: dict[str, Any] = {
        "key": f"r{index:05d}",
        "type": "dataresource",
        "name": f"file{index:05d}.csv",
        "resourcePath": f"data/file{index:05d}.csv",
        "resourceType": "resource_type_file",
        "dataSourceKey": "src-files",
        "dataSourceName": "demo_files",
        "fileFormat": "csv",
        "rowCount": 100 + index,
        "resourceSize": 2048,
        "fieldCount": 2,
        "partitionCount": 0,
        "resourceState": "OK",
        "status": "PROFILED",
        "errorMsg": None,
        "owner": None,
        "description": None,
        "dataSetVirtualFolders": [],
        "timeOfResourceChange": 1704067200000,
        "timeOfLastProfile": 1704067260000,
        "timeOfLastRefresh": 1704067260000,
        "timeOfCreation": 1704067200000,
        "timeOfLastChange": 1704067260000,
        "customProperties": [],
    }
    record.update(overrides)
    return record


def metadata_pager(records: Sequence[dict[str, Any]]) -> Callable[[Any], tuple[int, dict, str]]:
    """A ``responses`` callback serving ``records`` page by page (``start``/``pageSize``)."""

    def answer(request: Any) -> tuple[int, dict[str, str], str]:
        query = parse_qs(urlsplit(str(request.url)).query)
        start, size = int(query["start"][0]), int(query["pageSize"][0])
        page = {
            "list": list(records[start : start + size]),
            "totalCount": len(records),
            "start": start,
            "pageSize": size,
        }
        return 200, {}, json.dumps(page)

    return answer


def add_metadata(mock: responses.RequestsMock, records: Sequence[dict[str, Any]]) -> None:
    """Serve ``records`` on ``GET /dataresource/metadata``."""
    mock.add_callback(
        responses.GET,
        API + "/dataresource/metadata",
        callback=metadata_pager(records),
        content_type="application/json",
    )


def add_lists(
    mock: responses.RequestsMock, definitions: list[dict[str, Any]] | None = None
) -> None:
    """Serve the source, folder and custom property lists."""
    mock.add(responses.GET, API + "/datasource", json=SOURCES)
    mock.add(responses.GET, API + "/virtualfolder", json=FOLDERS)
    mock.add(responses.GET, API + "/customproperty", json=definitions or [])


def calls_to(mock: responses.RequestsMock, method: str, path: str) -> list[Any]:
    """Recorded calls of ``method`` to ``API + path`` (query ignored)."""
    return [
        call
        for call in mock.calls
        if call.request.method == method and str(call.request.url).split("?")[0] == API + path
    ]


def query_of(call: Any) -> str:
    """The raw query string a recorded call sent."""
    return urlsplit(str(call.request.url)).query
