"""One resource (``resource()``, ``Resource`` display), ``fields()`` frames, ``update_resource``."""

from __future__ import annotations

import datetime as dt

import pandas as pd
import pytest
import responses

from catalog_nb.client import Catalog, NotFoundError
from catalog_nb.client.frame_display import known_size
from catalog_nb.client.resources.frames import FIELD_COLUMNS, RESOURCE_FIELD_COLUMNS
from catalog_nb.client.resources.view import MAX_SHOWN_FIELDS, Resource
from tests.client.mocks import API, error_body, json_of
from tests.client.resource_mocks import (
    CUSTOMER_FIELDS,
    add_lists,
    add_metadata,
    calls_to,
    field_json,
    query_of,
    resource_json,
)

CUSTOMERS = resource_json(
    7,
    name="customers.csv",
    resourcePath="crm/customers.csv",
    rowCount=3000,
    resourceSize=245_100,
    fieldCount=2,
    owner="ada",
    description="CRM export <b>unescaped</b>",
    fields=CUSTOMER_FIELDS,
    customProperties=[{"name": "sensitivity", "type": "STRING", "value": "high"}],
)
BY_PATH = API + "/dataresource/source/demo_files"


def test_resource_by_source_and_path(mock: responses.RequestsMock, cat: Catalog) -> None:
    mock.add(responses.GET, BY_PATH, json=CUSTOMERS)
    res = cat.resource("demo_files", "crm/customers.csv")
    (call,) = calls_to(mock, "GET", "/dataresource/source/demo_files")
    assert query_of(call) == "resourcePath=crm%2Fcustomers.csv"
    assert isinstance(res, Resource)
    assert (res.key, res.name, res.source, res.path) == (
        "r00007",
        "customers.csv",
        "demo_files",
        "crm/customers.csv",
    )
    assert (res.type, res.format, res.rows) == ("file", "csv", 3000)
    assert res.custom == {"sensitivity": "high"}
    assert res["rowCount"] == 3000 and res.get("missing") is None and "fileFormat" in res
    assert res.raw == CUSTOMERS and dict(res) == CUSTOMERS
    assert res.to_series()["rows"] == 3000


def test_resource_by_key_and_by_record(mock: responses.RequestsMock, cat: Catalog) -> None:
    mock.add(responses.GET, API + "/dataresource/r00007", json=CUSTOMERS)
    assert cat.resource("r00007").key == "r00007"
    row = pd.Series({"key": "r00007", "path": "crm/customers.csv"})
    assert cat.resource(row).key == "r00007"
    assert cat.resource(cat.resource("r00007")).path == "crm/customers.csv"


def test_source_key_works_for_the_path_form(mock: responses.RequestsMock, cat: Catalog) -> None:
    gone = error_body(404, "DATA_SOURCE_NOT_FOUND", "There is no data source named 'src-files'.")
    mock.add(responses.GET, API + "/dataresource/source/src-files", status=404, json=gone)
    add_lists(mock)
    mock.add(responses.GET, BY_PATH, json=CUSTOMERS)
    assert cat.resource("src-files", "crm/customers.csv").key == "r00007"


def test_unknown_path_is_not_retried(mock: responses.RequestsMock, cat: Catalog) -> None:
    missing = error_body(404, "RESOURCE_NOT_FOUND", "There is no data resource at path 'x'.")
    mock.add(responses.GET, BY_PATH, status=404, json=missing)
    with pytest.raises(NotFoundError) as exc:
        cat.resource("demo_files", "x")
    assert exc.value.error_code == "RESOURCE_NOT_FOUND"
    assert calls_to(mock, "GET", "/datasource") == []


def test_repr_summarises_resource_and_fields() -> None:
    text = repr(Resource.from_json(CUSTOMERS))
    assert text.startswith("<Resource demo_files:crm/customers.csv key=r00007>")
    for expected in (
        "type: file",
        "format: csv",
        "rows: 3,000",
        "fields: 2",
        "size: 245.1 kB",
        "status: PROFILED",
        "owner: ada",
        "cp sensitivity: high",
    ):
        assert expected in text
    assert "field statistics:" in text
    assert "customer_id" in text and "contact" in text and "LONG" in text


def test_html_repr_escapes_and_shows_fields() -> None:
    page = Resource.from_json(CUSTOMERS)._repr_html_()
    assert "&lt;b&gt;unescaped&lt;/b&gt;" in page and "<b>unescaped" not in page
    assert "<table" in page and "customer_id" in page and "data_type" in page
    assert "crm/customers.csv" in page


def test_html_repr_reads_sizes_and_field_numbers_as_frames_do() -> None:
    page = Resource.from_json(CUSTOMERS)._repr_html_()
    assert "<th style='text-align:left'>size</th><td style='text-align:left'>245.1 kB</td>" in page
    # the fields' names head their rows; density as a share, counts with separators
    assert "<th>customer_id</th>" in page
    assert '<td class="num">100%</td>' in page and '<td class="num">3,000</td>' in page
    assert "rows, " not in page  # no frame shape line under the fields
    table = Resource.from_json(resource_json(
        3, resourceType="resource_type_table", fileFormat=None, resourceSize=0,
        resourcePath="sales.orders", fields=CUSTOMER_FIELDS))
    # the service answers 0 for a size it never measured: a table's is unknown, not 0 B
    assert "size</th><td style='text-align:left'>unknown</td>" in table._repr_html_()
    assert "size: unknown" in repr(table) and "0 B" not in repr(table)
    empty = Resource.from_json(resource_json(4, resourceSize=0, rowCount=0))
    assert "size: 0 B" in repr(empty)  # a file profiled as empty has 0 bytes
    # a frame's row count the catalog does not know (pd.NA) leaves a 0 size unknown
    assert known_size(0, "file", pd.NA) is None and known_size(0, "file", 0) == 0


def test_display_of_an_error_resource_without_fields() -> None:
    broken = resource_json(
        1,
        resourceState="ERROR",
        status="ERROR",
        errorMsg="not UTF-8",
        rowCount=None,
        fieldCount=0,
        fields=[],
    )
    res = Resource.from_json(broken)
    assert "error: not UTF-8" in repr(res) and "field statistics" not in repr(res)
    assert "not UTF-8" in res._repr_html_()
    assert res.rows is None and res.fields.empty
    assert list(res.fields.columns) == [column.name for column in FIELD_COLUMNS]


def test_display_of_many_fields_is_cut_with_a_note() -> None:
    wide = resource_json(2, fields=[field_json(f"c{i}", i) for i in range(MAX_SHOWN_FIELDS + 5)])
    res = Resource.from_json(wide)
    assert "5 more fields in .fields" in repr(res)
    assert "5 more fields in <code>.fields</code>" in res._repr_html_()
    assert len(res.fields) == MAX_SHOWN_FIELDS + 5


def test_fields_of_one_resource(mock: responses.RequestsMock, cat: Catalog) -> None:
    mock.add(responses.GET, BY_PATH, json=CUSTOMERS)
    frame = cat.fields("demo_files", "crm/customers.csv")
    assert list(frame.columns) == [column.name for column in FIELD_COLUMNS]
    assert frame["name"].tolist() == ["customer_id", "contact"]
    ident, contact = frame.iloc[0], frame.iloc[1]
    assert ident["density"] == 1.0 and ident["distinct_count"] == 3000 and ident["min"] == 1
    assert ident["mean"] == 1500.5 and ident["patterns"] == [{"pattern": "9999", "count": 2100}]
    assert bool(ident["sampled"]) is False and ident["sample_size"] == 3000
    assert contact["null_count"] == 90 and contact["max_length"] == 31
    assert contact["mean"] is pd.NA and contact["most_frequent"] == []
    dtypes = {name: str(dtype) for name, dtype in frame.dtypes.items()}
    assert dtypes["density"] == "Float64" and dtypes["distinct_count"] == "Int64"
    assert dtypes["nullable"] == "boolean" and dtypes["data_type"] == "string"


def test_fields_raw_form_and_by_record(mock: responses.RequestsMock, cat: Catalog) -> None:
    mock.add(responses.GET, BY_PATH, json=CUSTOMERS)
    mock.add(responses.GET, API + "/dataresource/r00007", json=CUSTOMERS)
    assert cat.fields("demo_files", "crm/customers.csv", as_frame=False) == CUSTOMER_FIELDS
    assert cat.fields({"key": "r00007"})["name"].tolist() == ["customer_id", "contact"]


def test_fields_long_form(mock: responses.RequestsMock, cat: Catalog) -> None:
    other = resource_json(8, fields=[field_json("x", 0, "DOUBLE", density=0.5)])
    empty = resource_json(9, fields=[])
    add_lists(mock)
    add_metadata(mock, [CUSTOMERS, other, empty])
    frame = cat.fields(source="demo_files")
    assert list(frame.columns) == [column.name for column in RESOURCE_FIELD_COLUMNS]
    assert frame[["resource_key", "resource_path", "name"]].values.tolist() == [
        ["r00007", "crm/customers.csv", "customer_id"],
        ["r00007", "crm/customers.csv", "contact"],
        ["r00008", "data/file00008.csv", "x"],
    ]
    assert frame["resource_type"].unique().tolist() == ["file"]


def test_fields_long_form_empty_keeps_columns(mock: responses.RequestsMock, cat: Catalog) -> None:
    add_lists(mock)
    add_metadata(mock, [])
    frame = cat.fields(type="view")
    assert frame.empty
    assert list(frame.columns) == [column.name for column in RESOURCE_FIELD_COLUMNS]
    assert str(frame["density"].dtype) == "Float64"


def test_path_with_other_filters_is_the_long_form(
    mock: responses.RequestsMock, cat: Catalog
) -> None:
    add_lists(mock)
    add_metadata(mock, [CUSTOMERS])
    frame = cat.fields("demo_files", "crm/", format="csv")
    assert "resource_key" in frame.columns
    (call,) = calls_to(mock, "GET", "/dataresource/metadata")
    assert "propertyFilter=path%3Acrm%2F" in query_of(call)


def test_update_resource_by_path(mock: responses.RequestsMock, cat: Catalog) -> None:
    updated = {**CUSTOMERS, "description": "CRM export", "owner": "bob"}
    mock.add(responses.PUT, BY_PATH, json=updated)
    res = cat.update_resource(
        "demo_files",
        "crm/customers.csv",
        description="CRM export",
        owner="bob",
        custom={"reviewed": dt.date(2024, 3, 5), "sensitivity": None},
        field_descriptions={"contact": "customer e-mail"},
    )
    (call,) = calls_to(mock, "PUT", "/dataresource/source/demo_files")
    assert query_of(call) == "resourcePath=crm%2Fcustomers.csv"
    assert json_of(call) == {
        "description": "CRM export",
        "owner": "bob",
        "customProperties": {"reviewed": "2024-03-05", "sensitivity": None},
        "fields": [{"name": "contact", "description": "customer e-mail"}],
    }
    assert isinstance(res, Resource) and res.raw["owner"] == "bob"


def test_update_resource_by_key_or_object(mock: responses.RequestsMock, cat: Catalog) -> None:
    mock.add(responses.PUT, API + "/dataresource/r00007", json=CUSTOMERS)
    cat.update_resource("r00007", rich_description="# Customers")
    cat.update_resource(Resource.from_json(CUSTOMERS), owner="ada")
    bodies = [json_of(call) for call in calls_to(mock, "PUT", "/dataresource/r00007")]
    assert bodies == [{"richDescription": "# Customers"}, {"owner": "ada"}]


def test_update_with_nothing_reads_the_resource(mock: responses.RequestsMock, cat: Catalog) -> None:
    mock.add(responses.GET, API + "/dataresource/r00007", json=CUSTOMERS)
    assert cat.update_resource("r00007").key == "r00007"
    assert [c.request.method for c in mock.calls[1:]] == ["GET"]
