"""``apply_associations`` dry runs against a mocked service: the plan of every action and error."""

from __future__ import annotations

from urllib.parse import parse_qs

import pandas as pd
import pytest
import responses

from catalog_nb.client import Catalog
from catalog_nb.client.tags.bulk_plan import PLAN_COLUMNS, input_rows
from tests.client.tag_mocks import TagWorld, calls, query_of

NA = pd.NA
PLAN_NAMES = [column.name for column in PLAN_COLUMNS]

#: (resource_key, source, path, field, tag, tag_key, state) -> expected (action, reason part)
ROWS = [
    ("", "demo_files", "crm/customers.csv", "contact", "Sensitive.EmailAddress", NA, "ACCEPTED"),
    (NA, "DEMO_FILES", "crm/customers.csv", NA, "finance.revenue", NA, NA),
    ("r00002", NA, NA, "amount", NA, "t-net", "accepted"),
    ("r00002", NA, NA, "amount", "Finance.Revenue.Gross", NA, "REJECTED"),
    (NA, "demo_files", "sales/orders.parquet", "order_id", "PhoneNumber", NA, "SUGGESTED"),
    (NA, "nope", "crm/customers.csv", NA, "Finance.Revenue", NA, NA),
    (NA, "demo_files", "missing.csv", NA, "Finance.Revenue", NA, NA),
    (NA, "demo_files", "crm/customers.csv", "nope", "Finance.Revenue", NA, NA),
    (NA, "demo_files", "crm/customers.csv", NA, "Nope.Tag", NA, NA),
    (NA, "demo_files", "crm/customers.csv", NA, "Name", NA, NA),
    (NA, "demo_files", "crm/customers.csv", NA, "Finance.Revenue", NA, "MAYBE"),
    (NA, "demo_files", "sales/orders.parquet", "order_id", NA, "t-phone", "SUGGESTED"),
    (NA, "demo_files", "tmp/raw.csv", "x", "Finance.Revenue", NA, NA),
    (NA, "src-sql", "sales.orders", "amount", "Finance.Revenue", NA, NA),
    (NA, "demo_files", "crm/customers.csv", NA, NA, NA, NA),
    ("r-zzz", NA, NA, NA, "Finance.Revenue", NA, NA),
    (NA, NA, NA, NA, "Finance.Revenue", NA, NA),
    (NA, "demo_files", "crm/customers.csv", NA, NA, "t-x", NA),
]
EXPECTED = [
    ("change state", None),
    ("unchanged", None),
    ("change state", None),
    ("change state", None),
    ("create", None),
    ("error", "unknown data source 'nope'"),
    ("error", "unknown resource 'missing.csv' in data source 'demo_files'"),
    ("error", "unknown field 'nope' of 'crm/customers.csv'"),
    ("error", "unknown tag 'Nope.Tag'"),
    ("error", "ambiguous tag 'Name': give its full name (Finance.Name, HR.Name)"),
    ("error", "invalid state 'MAYBE'; expected one of ACCEPTED, REJECTED, SUGGESTED"),
    ("error", "duplicate row in input (same resource, field and tag as row 'row-4')"),
    ("error", "unknown field 'x' of 'tmp/raw.csv' (it has no profiled fields)"),
    ("create", None),
    ("error", "no tag: give tag (full name) or tag_key"),
    ("error", "unknown resource key 'r-zzz'"),
    ("error", "no resource: give resource_key, or source and path"),
    ("error", "unknown tag key 't-x'"),
]


def _frame() -> pd.DataFrame:
    columns = ["resource_key", "source", "path", "field", "tag", "tag_key", "state"]
    index = [f"row-{i}" for i in range(len(ROWS))]
    return pd.DataFrame(ROWS, columns=columns, index=index)


def test_plan_of_every_action_and_error(mock: responses.RequestsMock, cat: Catalog) -> None:
    TagWorld(mock)
    plan = cat.apply_associations(_frame())
    assert list(plan.columns) == PLAN_NAMES
    assert plan.index.tolist() == [f"row-{i}" for i in range(len(ROWS))]
    got = [
        (row.action, None if pd.isna(row.reason) else row.reason) for row in plan.itertuples()
    ]
    assert got == EXPECTED
    # nothing was written
    assert calls(mock, "POST", "/tagassociation/list") == []
    assert [c for c in mock.calls if c.request.method in ("PUT", "DELETE")] == []


def test_plan_resolves_keys_and_states(mock: responses.RequestsMock, cat: Catalog) -> None:
    TagWorld(mock)
    plan = cat.apply_associations(_frame())
    first = plan.loc["row-0"]
    assert (first["resource_key"], first["tag_key"], first["tag"]) == (
        "r00001",
        "t-email",
        "Sensitive.EmailAddress",
    )
    assert (first["current_state"], first["new_state"], first["weight"]) == (
        "SUGGESTED",
        "ACCEPTED",
        0.97,
    )
    assert first["association_key"] == "a-1"
    second = plan.loc["row-1"]  # source name in another case, state missing -> ACCEPTED
    assert (second["source"], second["tag"], second["new_state"]) == (
        "demo_files",
        "Finance.Revenue",
        "ACCEPTED",
    )
    assert pd.isna(second["field"]) and second["association_key"] == "a-2"
    by_key = plan.loc["row-2"]  # resource by key: source and path filled in
    assert (by_key["source"], by_key["path"], by_key["tag"]) == (
        "demo_files",
        "sales/orders.parquet",
        "Finance.Revenue.Net",
    )
    assert (by_key["current_state"], by_key["new_state"]) == ("REJECTED", "ACCEPTED")
    created = plan.loc["row-4"]
    assert pd.isna(created["current_state"]) and pd.isna(created["association_key"])
    assert (created["tag"], created["new_state"]) == ("Sensitive.PhoneNumber", "SUGGESTED")
    sql = plan.loc["row-13"]  # data source given by key
    assert (sql["source"], sql["resource_key"]) == ("demo_sql", "r00004")
    unknown = plan.loc["row-8"]  # errors keep what the row said
    assert (unknown["source"], unknown["path"], unknown["tag"]) == (
        "demo_files",
        "crm/customers.csv",
        "Nope.Tag",
    )


def test_resources_are_read_in_batched_metadata_queries(
    mock: responses.RequestsMock, cat: Catalog
) -> None:
    TagWorld(mock)
    cat.apply_associations(_frame())
    queries = [parse_qs(query_of(c)) for c in calls(mock, "GET", "/dataresource/metadata")]
    assert [q["propertyFilter"] for q in queries] == [
        ["id:r-zzz;r00002"],
        [
            "data_source:demo_files",
            "path:crm/customers.csv;missing.csv;sales/orders.parquet;tmp/raw.csv",
        ],
        ["data_source:demo_sql", "path:sales.orders"],
    ]
    assert {q["views"][0] for q in queries} == {"viewFields,viewTags"}
    assert {q["pageSize"][0] for q in queries} == {"1000"}
    assert len(calls(mock, "GET", "/tag")) == 1 and len(calls(mock, "GET", "/datasource")) == 1


def test_a_semicolon_in_a_path_is_read_alone(mock: responses.RequestsMock, cat: Catalog) -> None:
    TagWorld(mock)
    mock.add(
        responses.GET,
        "http://catalog.test:8765/api/v2/dataresource/source/demo_files",
        status=404,
        json={"message": "no", "errorCode": "RESOURCE_NOT_FOUND", "status": 404},
    )
    frame = pd.DataFrame(
        {"source": ["demo_files"], "path": ["odd;name.csv"], "tag": ["Finance.Revenue"]}
    )
    plan = cat.apply_associations(frame)
    assert plan.loc[0, "reason"] == "unknown resource 'odd;name.csv' in data source 'demo_files'"
    (call,) = calls(mock, "GET", "/dataresource/source/demo_files")
    assert query_of(call) == "resourcePath=odd%3Bname.csv"


def test_frame_of_associations_can_be_fed_back(
    mock: responses.RequestsMock, cat: Catalog
) -> None:
    TagWorld(mock)
    current = cat.associations()
    current["state"] = "ACCEPTED"
    plan = cat.apply_associations(current)
    assert plan["action"].tolist() == ["change state", "unchanged", "change state", "unchanged"]


def test_list_of_dicts_and_empty_inputs(mock: responses.RequestsMock, cat: Catalog) -> None:
    TagWorld(mock)
    plan = cat.apply_associations(
        [{"resource_key": "r00001", "tag": "Finance.Revenue", "field": None}]
    )
    assert plan["action"].tolist() == ["unchanged"]
    empty = cat.apply_associations(pd.DataFrame(columns=["resource_key", "tag"]))
    assert empty.empty and list(empty.columns) == PLAN_NAMES
    assert str(empty["weight"].dtype) == "Float64"


def test_frames_naming_no_resource_or_tag_are_refused() -> None:
    with pytest.raises(ValueError, match="names no resource"):
        input_rows(pd.DataFrame({"path": ["a"], "tag": ["T.a"]}))
    with pytest.raises(ValueError, match="names no tag"):
        input_rows(pd.DataFrame({"resource_key": ["r1"]}))
    rows = input_rows(pd.DataFrame({"resource_key": ["r1"], "tag": ["T.a"], "field": [""]}))
    assert rows == [
        {
            "index": 0,
            "resource_key": "r1",
            "source": None,
            "path": None,
            "field": None,
            "tag": "T.a",
            "tag_key": None,
            "state": None,
        }
    ]
