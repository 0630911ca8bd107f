"""Tag associations against a mocked service: long-form frames, paging, tag/untag."""

from __future__ import annotations

import warnings
from urllib.parse import parse_qs

import pandas as pd
import pytest
import responses

from catalog_nb.client import Catalog, NotFoundError, TruncatedResultWarning
from catalog_nb.client.tags.associations import association_state
from catalog_nb.client.tags.frames import ASSOCIATION_COLUMNS
from tests.client.mocks import API, error_body, json_of
from tests.client.tag_mocks import (
    ASSOCIATIONS,
    CUSTOMERS,
    ORDERS,
    TAGS,
    TagWorld,
    calls,
    query_of,
    view,
)

COLUMNS = [column.name for column in ASSOCIATION_COLUMNS]
MANY = [
    view(f"m-{i:04d}", ORDERS, "t-email", "amount", "SUGGESTED", weight=i / 1000)
    for i in range(1000)
]


def _starts(mock: responses.RequestsMock) -> list[str]:
    return [parse_qs(query_of(c))["start"][0] for c in calls(mock, "GET", "/tagassociation")]


def test_associations_long_form(mock: responses.RequestsMock, cat: Catalog) -> None:
    TagWorld(mock)
    frame = cat.associations()
    assert list(frame.columns) == COLUMNS
    assert frame["key"].tolist() == ["a-1", "a-2", "a-3", "a-4"]
    first = frame.iloc[0]
    assert (first["source"], first["path"], first["resource_key"]) == (
        "demo_files",
        "crm/customers.csv",
        "r00001",
    )
    assert (first["field"], first["tag"], first["tag_key"], first["domain"]) == (
        "contact",
        "Sensitive.EmailAddress",
        "t-email",
        "Sensitive",
    )
    assert first["state"] == "SUGGESTED" and first["weight"] == 0.97
    assert first["rules"] == ["regex:Email"] and first["sensitivity"] == "CONFIDENTIAL"
    # a person's association weighs 1.0 (the spec types weight as a number, never null)
    assert pd.isna(frame.loc[1, "field"]) and frame.loc[1, "weight"] == 1.0
    dtypes = {name: str(dtype) for name, dtype in frame.dtypes.items()}
    assert dtypes["weight"] == "Float64" and dtypes["created"] == "datetime64[ns, UTC]"
    assert dtypes["state"] == "string" and dtypes["rules"] == "object"
    assert query_of(calls(mock, "GET", "/tagassociation")[0]) == "start=0&pageSize=500"


def test_filters_go_on_the_query(mock: responses.RequestsMock, cat: Catalog) -> None:
    TagWorld(mock)
    mock.add(responses.GET, API + "/tag/byname", json=TAGS[0])
    frame = cat.associations(
        "demo_files", state="suggested", tag="Sensitive.EmailAddress", min_weight=0.5
    )
    assert frame["key"].tolist() == ["a-1"]
    assert query_of(calls(mock, "GET", "/tagassociation")[0]) == (
        "state=SUGGESTED&tagKey=t-email&dataSourceKey=src-files&minWeight=0.5&start=0&pageSize=500"
    )


def test_empty_result_keeps_columns(mock: responses.RequestsMock, cat: Catalog) -> None:
    TagWorld(mock, associations=[])
    frame = cat.associations(state="REJECTED")
    assert frame.empty and list(frame.columns) == COLUMNS
    assert str(frame["weight"].dtype) == "Float64"


def test_pages_through_everything(mock: responses.RequestsMock, cat: Catalog) -> None:
    TagWorld(mock, associations=MANY)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        frame = cat.associations(page_size=400)
    assert len(frame) == 1000 and frame["key"].is_unique
    assert _starts(mock) == ["0", "400", "800"]


def test_limit_truncates_loudly(mock: responses.RequestsMock, cat: Catalog) -> None:
    TagWorld(mock, associations=MANY)
    with pytest.warns(TruncatedResultWarning, match="first 150 of 1000"):
        frame = cat.associations(limit=150, page_size=100)
    assert len(frame) == 150 and _starts(mock) == ["0", "100"]


def test_progress_bar_only_when_asked(
    mock: responses.RequestsMock, cat: Catalog, capsys: pytest.CaptureFixture[str]
) -> None:
    TagWorld(mock, associations=MANY)
    cat.associations(page_size=300, progress=True)
    assert "associations" in capsys.readouterr().err
    cat.associations(page_size=300)  # the catalog was made with progress=False
    assert capsys.readouterr().err == ""


def test_one_resource_by_path(mock: responses.RequestsMock, cat: Catalog) -> None:
    mock.add(
        responses.GET,
        API + "/tagassociation/byresource",
        json=CUSTOMERS["tagAssociationViewList"],
    )
    mock.add(responses.GET, API + "/tagassociation/byfield", json=[ASSOCIATIONS[0]])
    frame = cat.associations("demo_files", "crm/customers.csv")
    assert frame["key"].tolist() == ["a-1", "a-2"]
    assert query_of(calls(mock, "GET", "/tagassociation/byresource")[0]) == (
        "sourceName=demo_files&resourcePath=crm%2Fcustomers.csv"
    )
    only = cat.associations("demo_files", "crm/customers.csv", "contact", as_frame=False)
    assert only == [ASSOCIATIONS[0]]
    assert query_of(calls(mock, "GET", "/tagassociation/byfield")[0]) == (
        "sourceName=demo_files&resourcePath=crm%2Fcustomers.csv&fieldName=contact"
    )
    accepted = cat.associations("demo_files", "crm/customers.csv", state="ACCEPTED")
    assert accepted["key"].tolist() == ["a-2"]
    with pytest.warns(TruncatedResultWarning, match="first 1 of 2"):
        assert len(cat.associations("demo_files", "crm/customers.csv", limit=1)) == 1
    assert calls(mock, "GET", "/tagassociation") == []


def test_path_needs_a_source(cat: Catalog) -> None:
    with pytest.raises(ValueError, match="give source="):
        cat.associations(path="crm/customers.csv")


def test_field_without_path_filters_every_association(
    mock: responses.RequestsMock, cat: Catalog
) -> None:
    TagWorld(mock)
    frame = cat.associations(field="amount")
    assert frame["key"].tolist() == ["a-3", "a-4"]


def test_invalid_state_is_refused_before_any_request(
    mock: responses.RequestsMock, cat: Catalog
) -> None:
    with pytest.raises(ValueError, match="expected one of ACCEPTED, REJECTED, SUGGESTED"):
        cat.associations(state="maybe")
    assert association_state(" rejected ") == "REJECTED"
    assert len(mock.calls) == 1  # the login


# -- tag / untag -------------------------------------------------------------------------------


def test_tag_a_field_by_source_and_path(mock: responses.RequestsMock, cat: Catalog) -> None:
    mock.add(responses.GET, API + "/dataresource/source/demo_files", json=CUSTOMERS)
    mock.add(responses.GET, API + "/tag/byname", json=TAGS[0])
    mock.add(responses.POST, API + "/tagassociation", status=201, json=ASSOCIATIONS[0])
    answer = cat.tag(
        ("demo_files", "crm/customers.csv"), "Sensitive.EmailAddress", "contact", "accepted"
    )
    assert answer["key"] == "a-1"
    assert json_of(calls(mock, "POST", "/tagassociation")[0]) == {
        "resourceKey": "r00001",
        "tagKey": "t-email",
        "field": "contact",
        "state": "ACCEPTED",
    }


def test_tag_a_resource_by_key_or_record(mock: responses.RequestsMock, cat: Catalog) -> None:
    mock.add(responses.POST, API + "/tagassociation", status=201, json=ASSOCIATIONS[1])
    cat.tag("r00001", {"key": "t-rev"}, semantic="OTHER")
    cat.tag(pd.Series({"key": "r00002", "path": "x"}), pd.Series({"key": "t-rev"}))
    bodies = [json_of(c) for c in calls(mock, "POST", "/tagassociation")]
    assert bodies == [
        {"resourceKey": "r00001", "tagKey": "t-rev", "semantic": "OTHER"},
        {"resourceKey": "r00002", "tagKey": "t-rev"},
    ]
    assert len(mock.calls) == 3  # login + two posts: no lookups for records and keys


def test_tag_reports_an_unknown_field(mock: responses.RequestsMock, cat: Catalog) -> None:
    body = error_body(400, "UNKNOWN_FIELD", "crm/customers.csv has no field 'nope'.")
    mock.add(responses.POST, API + "/tagassociation", status=400, json=body)
    with pytest.raises(Exception, match="no field 'nope'") as exc:
        cat.tag("r00001", {"key": "t-rev"}, field="nope")
    assert getattr(exc.value, "error_code", None) == "UNKNOWN_FIELD"


def test_untag_deletes_the_matching_association(
    mock: responses.RequestsMock, cat: Catalog
) -> None:
    mock.add(responses.GET, API + "/dataresource/r00001", json=CUSTOMERS)
    mock.add(
        responses.GET,
        API + "/tagassociation/byresource",
        json=CUSTOMERS["tagAssociationViewList"],
    )
    mock.add(responses.DELETE, API + "/tagassociation/tagassociation/a-1", status=204)
    mock.add(responses.DELETE, API + "/tagassociation/tagassociation/a-2", status=204)
    gone = cat.untag("r00001", {"key": "t-email"}, field="contact")
    assert gone["key"] == "a-1"
    cat.untag(("demo_files", "crm/customers.csv"), {"key": "t-rev"})
    assert len(calls(mock, "DELETE", "/tagassociation/tagassociation/a-2")) == 1
    with pytest.raises(NotFoundError) as exc:
        cat.untag(("demo_files", "crm/customers.csv"), {"key": "t-rev"}, field="contact")
    assert exc.value.error_code == "TAG_ASSOCIATION_NOT_FOUND"


def test_update_and_delete_an_association(mock: responses.RequestsMock, cat: Catalog) -> None:
    path = API + "/tagassociation/tagassociation/a-1"
    mock.add(responses.PUT, path, json={**ASSOCIATIONS[0], "state": "REJECTED"})
    mock.add(responses.DELETE, path, status=204)
    row = pd.Series({"key": "a-1", "state": "SUGGESTED"})
    assert cat.update_association(row, state="rejected")["state"] == "REJECTED"
    assert json_of(calls(mock, "PUT", "/tagassociation/tagassociation/a-1")[0]) == {
        "state": "REJECTED"
    }
    cat.delete_association("a-1")
    assert len(calls(mock, "DELETE", "/tagassociation/tagassociation/a-1")) == 1


def test_a_source_key_works_in_resource_tuples(mock: responses.RequestsMock, cat: Catalog) -> None:
    gone = error_body(404, "DATA_SOURCE_NOT_FOUND", "There is no data source named 'src-files'.")
    TagWorld(mock)
    mock.add(responses.GET, API + "/tagassociation/byresource", status=404, json=gone)
    mock.add(
        responses.GET,
        API + "/tagassociation/byresource",
        json=CUSTOMERS["tagAssociationViewList"],
    )
    mock.add(responses.DELETE, API + "/tagassociation/tagassociation/a-2", status=204)
    assert cat.untag(("src-files", "crm/customers.csv"), {"key": "t-rev"})["key"] == "a-2"
    queries = [query_of(c) for c in calls(mock, "GET", "/tagassociation/byresource")]
    assert queries == [
        "sourceName=src-files&resourcePath=crm%2Fcustomers.csv",
        "sourceName=demo_files&resourcePath=crm%2Fcustomers.csv",
    ]
