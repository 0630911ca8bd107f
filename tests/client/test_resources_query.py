"""Keyword filters of ``resources()``/``fields()`` -> the exact query of /dataresource/metadata."""

from __future__ import annotations

import datetime as dt
from typing import Any
from urllib.parse import parse_qs

import pandas as pd
import pytest
import responses

from catalog_nb.client import Catalog, NotFoundError
from catalog_nb.client.resources.frames import FRAME_WIRE_PROPERTIES
from catalog_nb.client.resources.query import annotation_body, build_query, resource_type
from tests.client.resource_mocks import add_lists, add_metadata, calls_to, query_of, resource_json


def _names(refs: list[Any]) -> list[str]:
    return [f"name-of-{ref}" for ref in refs]


def _keys(refs: list[Any]) -> list[str]:
    return [f"key-of-{ref}" for ref in refs]


def _build(**filters: Any) -> Any:
    return build_query(filters, source_names=_names, folder_keys=_keys)


def _metadata_query(mock: responses.RequestsMock) -> str:
    """The query string of the one metadata read, without ``properties`` (the frame's own
    narrowing: see test_the_frame_asks_only_for_its_properties)."""
    (call,) = calls_to(mock, "GET", "/dataresource/metadata")
    return "&".join(p for p in query_of(call).split("&") if not p.startswith("properties="))


def test_the_frame_asks_only_for_its_properties(
    mock: responses.RequestsMock, cat: Catalog
) -> None:
    add_lists(mock)
    add_metadata(mock, [])
    cat.resources()
    (call,) = calls_to(mock, "GET", "/dataresource/metadata")
    sent = parse_qs(query_of(call))["properties"][0].split(",")
    assert set(sent) == set(FRAME_WIRE_PROPERTIES) and "rowCount" in sent
    mock.calls.reset()
    cat.resources(as_frame=False)
    (call,) = calls_to(mock, "GET", "/dataresource/metadata")
    assert "properties" not in parse_qs(query_of(call))  # the raw form is the whole resource


# -- pure mapping ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("given", "wire"),
    [
        ("file", "resource_type_file"),
        ("Collection", "resource_type_collection"),
        ("table", "resource_type_table"),
        ("VIEW", "resource_type_view"),
        ("hdfs_file", "resource_type_hdfs_file"),
        ("resource_type_hdfs_file", "resource_type_hdfs_file"),
    ],
)
def test_resource_types_are_spelled_for_the_wire(given: str, wire: str) -> None:
    assert resource_type(given) == wire


def test_unknown_resource_type_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown resource type 'folder'"):
        resource_type("folder")


def test_lists_or_and_keywords_and() -> None:
    query = _build(type=["file", "table"], format=("CSV", "parquet"), status="profiled")
    assert query.property_filters == [
        "resource_type:resource_type_file;resource_type_table",
        "file_format:csv;parquet",
        "status:PROFILED",
    ]
    assert query.views == [] and query.virtual_folder_keys == []


def test_sources_and_folders_are_resolved_through_the_callbacks() -> None:
    query = _build(source=["a", "b"], virtual_folder="f")
    assert query.property_filters == ["data_source:name-of-a;name-of-b"]
    assert query.virtual_folder_keys == ["key-of-f"]


def test_dates_become_epoch_milliseconds() -> None:
    query = _build(
        modified_after=dt.date(2024, 1, 1),
        modified_before=pd.Timestamp("2024-02-01T01:00:00+01:00"),
    )
    assert (query.modified_from, query.modified_to) == (1704067200000, 1706745600000)


def test_views_follow_the_flags() -> None:
    query = build_query({}, source_names=_names, folder_keys=_keys, fields=True, tags=True)
    assert query.views == ["viewFields", "viewTags"]


def test_semicolon_in_a_value_is_refused_loudly() -> None:
    with pytest.raises(ValueError, match="';' cannot be sent"):
        _build(name="odd;name.csv")


def test_empty_value_is_refused() -> None:
    with pytest.raises(ValueError, match="must not be empty"):
        _build(owner="")


def test_unknown_filter_is_a_type_error() -> None:
    with pytest.raises(TypeError, match=r"unknown filter.*colour"):
        _build(colour="red")


def test_annotation_body_only_sends_what_was_given() -> None:
    body = annotation_body(
        description="",
        custom={"reviewed": dt.datetime(2024, 3, 5, 10, 0), "pii": True, "gone": None},
        field_descriptions={"a": "first", "b": {"display_name": "Bee", "comment": "c"}},
    )
    assert body == {
        "description": "",
        "customProperties": {"reviewed": "2024-03-05", "pii": True, "gone": None},
        "fields": [
            {"name": "a", "description": "first"},
            {"name": "b", "displayName": "Bee", "comment": "c"},
        ],
    }
    with pytest.raises(TypeError, match="unknown field annotation 'colour'"):
        annotation_body(field_descriptions={"a": {"colour": "red"}})


# -- through the facade: exact query strings -----------------------------------------------------


def test_every_filter_reaches_the_query_string(mock: responses.RequestsMock, cat: Catalog) -> None:
    add_lists(mock)
    add_metadata(mock, [resource_json(0)])
    cat.resources(
        "demo_files",
        type=["file", "table"],
        format="CSV",
        owner="ada",
        state="ok",
        status="profiled",
        name="customers.csv",
        path="crm/",
        keys=["k1", "k2"],
        virtual_folder="Customer data",
        modified_after="2024-01-01",
        modified_before=dt.datetime(2024, 2, 1, tzinfo=dt.UTC),
        fields=True,
        tags=True,
        page_size=50,
    )
    assert _metadata_query(mock) == (
        "propertyFilter=data_source%3Ademo_files"
        "&propertyFilter=resource_type%3Aresource_type_file%3Bresource_type_table"
        "&propertyFilter=file_format%3Acsv"
        "&propertyFilter=owner%3Aada"
        "&propertyFilter=resource_state%3AOK"
        "&propertyFilter=status%3APROFILED"
        "&propertyFilter=name%3Acustomers.csv"
        "&propertyFilter=path%3Acrm%2F"
        "&propertyFilter=id%3Ak1%3Bk2"
        "&virtualFolderKeys=vf-1"
        "&views=viewFields%2CviewTags"
        "&pageSize=50&start=0"
        "&resourceModifiedDateFromL=1704067200000"
        "&resourceModifiedDateToL=1706745600000"
    )


def test_no_filters_sends_only_paging(mock: responses.RequestsMock, cat: Catalog) -> None:
    add_lists(mock)
    add_metadata(mock, [])
    cat.resources()
    assert _metadata_query(mock) == "pageSize=1000&start=0"
    assert calls_to(mock, "GET", "/datasource") == []  # nothing to resolve


def test_source_keys_and_records_become_names(mock: responses.RequestsMock, cat: Catalog) -> None:
    add_lists(mock)
    add_metadata(mock, [])
    row = cat.sources().iloc[1]  # demo_sql as a frame row
    cat.resources(["src-files", row], custom=False)
    assert _metadata_query(mock) == (
        "propertyFilter=data_source%3Ademo_files%3Bdemo_sql&pageSize=1000&start=0"
    )


def test_unknown_source_fails_before_reading(mock: responses.RequestsMock, cat: Catalog) -> None:
    add_lists(mock)
    add_metadata(mock, [])
    with pytest.raises(
        NotFoundError, match=r"No data source .* 'nope'.*demo_files, demo_sql"
    ) as exc:
        cat.resources("nope")
    assert exc.value.error_code == "DATA_SOURCE_NOT_FOUND"
    assert calls_to(mock, "GET", "/dataresource/metadata") == []


def test_fields_long_form_asks_for_fields_view(mock: responses.RequestsMock, cat: Catalog) -> None:
    add_lists(mock)
    add_metadata(mock, [])
    cat.fields(source="demo_sql", type="table", page_size=20)
    assert _metadata_query(mock) == (
        "propertyFilter=data_source%3Ademo_sql&propertyFilter=resource_type%3Aresource_type_table"
        "&views=viewFields&pageSize=20&start=0"
    )


def test_page_size_is_checked(cat: Catalog) -> None:
    # A frame without fields or tags reads Arrow pages where pyarrow is installed (here).
    for bad in (0, -1, 10001):
        with pytest.raises(ValueError, match=r"page_size must be between 1 and 10000$"):
            cat.resources(page_size=bad)
    for bad in (0, 1001):
        with pytest.raises(ValueError, match="page_size must be between 1 and 1000 "):
            cat.resources(page_size=bad, tags=True)
    cat.arrow_pages = False
    with pytest.raises(ValueError, match="page_size must be between 1 and 1000 "):
        cat.resources(page_size=1001)
