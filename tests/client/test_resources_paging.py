"""``resources()`` against a mocked service: paging, progress, loud truncation, typed columns."""

from __future__ import annotations

import warnings
from urllib.parse import parse_qs

import pandas as pd
import pytest
import responses

from catalog_nb.client import Catalog, TruncatedResultWarning
from catalog_nb.client.resources.frames import RESOURCE_COLUMNS
from tests.client.mocks import API
from tests.client.resource_mocks import (
    DEFINITIONS,
    add_lists,
    add_metadata,
    calls_to,
    query_of,
    resource_json,
)

RECORDS = [resource_json(i) for i in range(250)]
BASE_COLUMNS = [column.name for column in RESOURCE_COLUMNS]
CP_COLUMNS = [
    "cp_labels",
    "cp_pii",
    "cp_quality",
    "cp_retention_days",
    "cp_reviewed",
    "cp_sensitivity",
]


def _starts(mock: responses.RequestsMock) -> list[str]:
    calls = calls_to(mock, "GET", "/dataresource/metadata")
    return [parse_qs(query_of(call))["start"][0] for call in calls]


def test_pages_through_everything(mock: responses.RequestsMock, cat: Catalog) -> None:
    add_lists(mock)
    add_metadata(mock, RECORDS)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        frame = cat.resources(page_size=100)
    assert frame["key"].tolist() == [record["key"] for record in RECORDS]
    assert _starts(mock) == ["0", "100", "200"]
    assert list(frame.columns) == BASE_COLUMNS  # no definitions, no cp_ columns


def test_columns_are_typed(mock: responses.RequestsMock, cat: Catalog) -> None:
    add_lists(mock)
    add_metadata(mock, RECORDS[:3])
    frame = cat.resources()
    dtypes = {name: str(dtype) for name, dtype in frame.dtypes.items()}
    assert dtypes["key"] == "string" and dtypes["type"] == "string"
    assert dtypes["rows"] == dtypes["size"] == dtypes["field_count"] == "Int64"
    for column in ("modified", "profiled", "refreshed", "created", "changed"):
        assert dtypes[column] == "datetime64[ns, UTC]"
    assert frame.loc[0, "type"] == "file"
    assert str(frame.loc[0, "modified"]) == "2024-01-01 00:00:00+00:00"


def test_counts_of_never_profiled_resources_are_missing_not_zero(
    mock: responses.RequestsMock, cat: Catalog
) -> None:
    browsed = resource_json(0, status="BROWSED", rowCount=0, fieldCount=0, timeOfLastProfile=None)
    empty_file = resource_json(1, rowCount=0, fieldCount=3)  # profiled: 0 rows is a fact
    add_lists(mock)
    add_metadata(mock, [browsed, empty_file])
    frame = cat.resources()
    assert frame["rows"].isna().tolist() == [True, False]
    assert frame["field_count"].isna().tolist() == [True, False]
    assert frame.loc[1, "rows"] == 0


def test_limit_truncates_loudly(mock: responses.RequestsMock, cat: Catalog) -> None:
    add_lists(mock)
    add_metadata(mock, RECORDS)
    with pytest.warns(TruncatedResultWarning, match="first 120 of 250 matching resources"):
        frame = cat.resources(limit=120, page_size=100)
    assert frame["key"].tolist() == [record["key"] for record in RECORDS[:120]]
    assert _starts(mock) == ["0", "100"]


def test_limit_not_reached_is_silent(mock: responses.RequestsMock, cat: Catalog) -> None:
    add_lists(mock)
    add_metadata(mock, RECORDS)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert len(cat.resources(limit=250)) == 250
        assert len(cat.resources(limit=1000)) == 250


def test_small_limit_asks_for_a_small_page(mock: responses.RequestsMock, cat: Catalog) -> None:
    add_lists(mock)
    add_metadata(mock, RECORDS)
    with pytest.warns(TruncatedResultWarning):
        assert len(cat.resources(limit=5)) == 5
    (call,) = calls_to(mock, "GET", "/dataresource/metadata")
    assert parse_qs(query_of(call))["pageSize"] == ["5"]


def test_empty_result_keeps_columns_and_dtypes(mock: responses.RequestsMock, cat: Catalog) -> None:
    add_lists(mock, DEFINITIONS)
    add_metadata(mock, [])
    frame = cat.resources("demo_sql", fields=True, tags=True)
    assert frame.empty
    assert list(frame.columns) == [*BASE_COLUMNS, "fields", "tags", *CP_COLUMNS]
    dtypes = {name: str(dtype) for name, dtype in frame.dtypes.items()}
    assert dtypes["rows"] == "Int64" and dtypes["profiled"] == "datetime64[ns, UTC]"
    assert dtypes["cp_sensitivity"] == "string"
    assert dtypes["cp_retention_days"] == "Int64"
    assert dtypes["cp_quality"] == "Float64"
    assert dtypes["cp_pii"] == "boolean"
    assert dtypes["cp_reviewed"] == "datetime64[ns, UTC]"
    assert dtypes["cp_labels"] == "object"


def test_custom_property_values_become_typed_columns(
    mock: responses.RequestsMock, cat: Catalog
) -> None:
    values = [
        {"name": "sensitivity", "type": "STRING", "value": "high"},
        {"name": "retention_days", "type": "INTEGER", "value": 30},
        {"name": "reviewed", "type": "DATE", "value": "2024-03-05"},
        {"name": "pii", "type": "BOOLEAN", "value": True},
        {"name": "labels", "type": "STRING_LIST", "value": ["gold", "crm"]},
        {"name": "defined_meanwhile", "type": "NUMBER", "value": 0.5},
    ]
    add_lists(mock, DEFINITIONS)
    add_metadata(mock, [resource_json(0, customProperties=values), resource_json(1)])
    frame = cat.resources()
    first, second = frame.iloc[0], frame.iloc[1]
    assert first["cp_sensitivity"] == "high" and first["cp_retention_days"] == 30
    assert str(first["cp_reviewed"]) == "2024-03-05 00:00:00+00:00"
    assert bool(first["cp_pii"]) is True and first["cp_labels"] == ["gold", "crm"]
    assert first["cp_defined_meanwhile"] == 0.5
    assert str(frame.dtypes["cp_defined_meanwhile"]) == "Float64"
    assert second["cp_sensitivity"] is pd.NA and second["cp_labels"] == []


def test_custom_false_saves_the_definitions_call(
    mock: responses.RequestsMock, cat: Catalog
) -> None:
    add_lists(mock, DEFINITIONS)
    add_metadata(mock, RECORDS[:2])
    frame = cat.resources(custom=False)
    assert list(frame.columns) == BASE_COLUMNS
    assert calls_to(mock, "GET", "/customproperty") == []


def test_fields_and_tags_columns(mock: responses.RequestsMock, cat: Catalog) -> None:
    tags = [
        {"tagName": "PII", "field": None, "state": "ACCEPTED"},
        {"tagName": "Email", "field": "contact", "state": "ACCEPTED"},
        {"tagName": "Gone", "field": None, "state": "REJECTED"},
    ]
    record = resource_json(0, fields=[{"name": "a"}, {"name": "b"}], tagAssociationViewList=tags)
    add_lists(mock)
    add_metadata(mock, [record])
    frame = cat.resources(fields=True, tags=True)
    assert frame.loc[0, "fields"] == ["a", "b"]
    assert frame.loc[0, "tags"] == ["PII"]


def test_raw_form_is_the_json(mock: responses.RequestsMock, cat: Catalog) -> None:
    add_lists(mock)
    add_metadata(mock, RECORDS[:130])
    records = cat.resources(as_frame=False, page_size=100)
    assert records == RECORDS[:130]
    assert calls_to(mock, "GET", "/customproperty") == []


def test_progress_bar_for_long_reads(
    mock: responses.RequestsMock, cat: Catalog, capsys: pytest.CaptureFixture[str]
) -> None:
    add_lists(mock)
    add_metadata(mock, RECORDS)
    cat.resources(page_size=100, progress=True)
    assert "resources" in capsys.readouterr().err
    cat.resources(page_size=100)  # the catalog was made with progress=False
    cat.resources(page_size=100, progress=False)
    assert capsys.readouterr().err == ""


def test_one_page_shows_no_bar(
    mock: responses.RequestsMock, cat: Catalog, capsys: pytest.CaptureFixture[str]
) -> None:
    add_lists(mock)
    add_metadata(mock, RECORDS[:10])
    cat.resources(progress=True)
    assert capsys.readouterr().err == ""


def test_rows_added_while_paging_are_not_duplicated(
    mock: responses.RequestsMock, cat: Catalog
) -> None:
    first = {"list": RECORDS[0:2], "totalCount": 3}
    # a resource sorting before r00001 appeared: r00001 moved into the second page
    shifted = {"list": [RECORDS[1], RECORDS[2]], "totalCount": 4}
    add_lists(mock)
    for page in (first, shifted, {"list": [], "totalCount": 4}):
        mock.add(responses.GET, API + "/dataresource/metadata", json=page)
    frame = cat.resources(page_size=2)
    assert frame["key"].tolist() == ["r00000", "r00001", "r00002"]


def test_limit_must_be_positive(cat: Catalog) -> None:
    with pytest.raises(ValueError, match="limit"):
        cat.resources(limit=0)
