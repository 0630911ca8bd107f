"""``cat.search`` and ``cat.facets`` against a mocked service: request bodies, frames, paging,
truncation, refine and typed errors."""

from __future__ import annotations

import warnings
from urllib.parse import parse_qs, urlsplit

import pandas as pd
import pytest
import responses

from catalog_nb.client import (
    BadRequestError,
    Catalog,
    NotFoundError,
    SearchResult,
    ServerError,
    TruncatedResultWarning,
)
from catalog_nb.client.frames import DTYPES
from catalog_nb.client.search_frames import (
    FACET_CATALOGUE_COLUMNS,
    FACET_RESULT_COLUMNS,
    SEARCH_COLUMNS,
    sort_specs,
)
from tests.client.mocks import API, error_body
from tests.client.search_mocks import FakeSearch, entity, lake


@pytest.fixture
def fake(mock: responses.RequestsMock) -> FakeSearch:
    return FakeSearch(lake(5)).install(mock)


def dtypes(columns: tuple) -> dict[str, str]:
    return {c.name: DTYPES[c.kind] for c in columns}


def test_search_new_sends_the_exact_criteria(cat: Catalog, fake: FakeSearch) -> None:
    result = cat.search(
        "customers",
        facets={"dataSource": "demo_files", "tag": ["PII.Email", "PII.Email"]},
        sort=["-size", ("name", True)],
        partial=True,
    )
    assert fake.bodies == [
        (
            "/search/new",
            {
                "searchType": "BASIC",
                "searchPhrase": "customers",
                "partialSearch": True,
                "facetSelections": [
                    {"facetName": "dataSource", "facetCategories": ["demo_files"]},
                    {"facetName": "tag", "facetCategories": ["PII.Email"]},
                ],
                "entityScope": "DATA_RESOURCE",
                "sortBySpecs": [
                    {"propertyName": "resourceSize", "ascending": False},
                    {"propertyName": "name", "ascending": True},
                ],
                "pagingCriteria": {"start": 0, "size": 100},
            },
        )
    ]
    assert isinstance(result, SearchResult)
    assert result.total == 3 and result.key == "s1"
    assert result.selections == {"dataSource": ["demo_files"], "tag": ["PII.Email"]}


def test_no_text_is_a_facets_only_search(cat: Catalog, fake: FakeSearch) -> None:
    result = cat.search(facets={"fileFormat": ["parquet"]}, advanced=True, page_size=10)
    path, body = fake.bodies[0]
    assert path == "/search/runFacet"
    assert "searchPhrase" not in body
    assert body["searchType"] == "ADVANCED" and body["pagingCriteria"] == {"start": 0, "size": 10}
    assert result.total == 2 and result.text is None


def test_frame_is_typed_with_tag_full_names(cat: Catalog, mock: responses.RequestsMock) -> None:
    rejected = entity(1, tags=["PII.Email"], score=2.5, sensitivity="RESTRICTED")
    rejected["tagAssociationViewList"].append(
        {"tagFullName": "Finance.Revenue", "field": "amount", "state": "SUGGESTED"}
    )
    rejected["tagAssociationViewList"].append(
        {"tagFullName": "Old.Tag", "field": None, "state": "REJECTED"}
    )
    unprofiled = entity(2, timeOfLastProfile=None, rowCount=0, owner=None)
    FakeSearch([rejected, unprofiled]).install(mock)
    frame = cat.search("").frame
    assert list(frame.columns) == [c.name for c in SEARCH_COLUMNS]
    assert frame.dtypes.astype(str).to_dict() == dtypes(SEARCH_COLUMNS)
    first, second = frame.iloc[0], frame.iloc[1]
    assert first["tags"] == ["PII.Email", "Finance.Revenue"]
    assert first["sensitivity"] == "RESTRICTED" and first["score"] == 2.5
    assert first["type"] == "file" and first["source"] == "demo_files"
    assert pd.isna(second["rows"]) and pd.isna(second["owner"]) and second["tags"] == []


def test_empty_results_keep_their_columns(cat: Catalog, fake: FakeSearch) -> None:
    result = cat.search("nothing-matches-this")
    assert result.total == 0 and len(result.frame) == 0
    assert result.frame.dtypes.astype(str).to_dict() == dtypes(SEARCH_COLUMNS)
    assert list(result.all().columns) == [c.name for c in SEARCH_COLUMNS]
    assert list(result.facets.columns) == [c.name for c in FACET_RESULT_COLUMNS]
    assert len(result.facets) == 0 and result.page_count == 1


def test_facets_frame_counts_selected_and_order(cat: Catalog, fake: FakeSearch) -> None:
    facets = cat.search("", facets={"fileFormat": ["parquet"]}).facets
    assert facets.dtypes.astype(str).to_dict() == dtypes(FACET_RESULT_COLUMNS)
    formats = facets[facets["facet"] == "fileFormat"]
    # the facet's own counts ignore its own selection; both categories stay visible
    assert formats[["category", "count", "selected"]].values.tolist() == [
        ["csv", 3, False],
        ["parquet", 2, True],
    ]
    tags = facets[facets["facet"] == "tag"]
    assert tags[["category", "count"]].values.tolist() == [["Finance.Revenue", 2]]
    assert set(facets["display_name"]) == {"Data source", "File format", "Tag"}


def test_a_selected_category_without_count_stays_listed(
    cat: Catalog, mock: responses.RequestsMock
) -> None:
    answer = {
        "key": "k", "entities": [], "totalResultCount": 0,
        "facetResults": [{"name": "tag", "displayName": "Tag", "categoryCounts": {"A": 0},
                          "selectedCategories": ["B"]}],
    }
    mock.add(responses.POST, API + "/search/new", json=answer, status=201)
    rows = cat.search("x", facets={"tag": "B"}).facets
    assert rows[["category", "count", "selected"]].values.tolist() == [
        ["A", 0, False],
        ["B", 0, True],
    ]


def test_all_pages_through_the_stored_result(cat: Catalog, mock: responses.RequestsMock) -> None:
    fake = FakeSearch(lake(250)).install(mock)
    result = cat.search("", page_size=100)
    assert len(result.frame) == 100 and result.page_count == 3
    everything = result.all()
    assert everything["key"].tolist() == [f"r{i:05d}" for i in range(250)]
    assert [body for path, body in fake.bodies if path == "/search/page"] == [
        {"key": "s1", "pagingCriteria": {"start": 100, "size": 100}},
        {"key": "s1", "pagingCriteria": {"start": 200, "size": 100}},
    ]
    assert [len(page) for page in result] == [100, 100, 50]


def test_page_past_the_end_is_empty_with_columns(
    cat: Catalog, mock: responses.RequestsMock
) -> None:
    FakeSearch(lake(5)).install(mock)
    result = cat.search("", page_size=2)
    assert result.page(1)["key"].tolist() == ["r00002", "r00003"]
    past = result.page(7)
    assert len(past) == 0 and list(past.columns) == [c.name for c in SEARCH_COLUMNS]
    with pytest.raises(ValueError, match="start at 0"):
        result.page(-1)


def test_limit_truncates_loudly(cat: Catalog, mock: responses.RequestsMock) -> None:
    fake = FakeSearch(lake(250)).install(mock)
    result = cat.search("", limit=150)
    assert result.truncated and result.page_count == 2
    with pytest.warns(TruncatedResultWarning, match="first 150 of 250"):
        frame = result.all()
    assert len(frame) == 150
    small = cat.search("", limit=30)
    assert fake.bodies[-1][1]["pagingCriteria"] == {"start": 0, "size": 30}
    assert len(small.frame) == 30
    with pytest.warns(TruncatedResultWarning):
        assert len(small.all()) == 30


def test_no_warning_when_everything_fits(cat: Catalog, fake: FakeSearch) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert len(cat.search("", limit=5).all()) == 5
        assert len(cat.search("", page_size=2).all()) == 5


def test_progress_bar_reads_every_page(cat: Catalog, mock: responses.RequestsMock) -> None:
    FakeSearch(lake(30)).install(mock)
    assert len(cat.search("", page_size=10).all(progress=True)) == 30


def test_refine_starts_a_new_search(cat: Catalog, fake: FakeSearch) -> None:
    first = cat.search("customers", facets={"dataSource": ["demo_files"]}, sort="name")
    second = first.refine(add={"tag": "PII.Email"}, remove=["dataSource"])
    assert second is not first and second.key != first.key
    assert fake.bodies[-1][1]["facetSelections"] == [
        {"facetName": "tag", "facetCategories": ["PII.Email"]}
    ]
    assert fake.bodies[-1][1]["sortBySpecs"] == [{"propertyName": "name", "ascending": True}]
    third = second.refine("orders", remove={"tag": ["PII.Email"]}, add={"fileFormat": "parquet"})
    assert fake.bodies[-1][1]["searchPhrase"] == "orders"
    assert fake.bodies[-1][1]["facetSelections"] == [
        {"facetName": "fileFormat", "facetCategories": ["parquet"]}
    ]
    assert third.total == 2 and first.total == 3
    fourth = third.refine(None, facets={"tag": ["Finance.Revenue"]})
    assert fake.bodies[-1][0] == "/search/runFacet" and fourth.total == 2
    assert first.refine(remove="dataSource").selections == {}


def test_facet_catalogue(cat: Catalog, fake: FakeSearch) -> None:
    catalogue = cat.facets()
    assert catalogue.dtypes.astype(str).to_dict() == dtypes(FACET_CATALOGUE_COLUMNS)
    assert catalogue[catalogue["facet"] == "fileFormat"]["category"].tolist() == ["csv", "parquet"]
    raw = cat.facets(as_frame=False)
    assert [f["facetName"] for f in raw] == ["dataSource", "fileFormat", "tag"]


def test_empty_facet_catalogue_keeps_columns(cat: Catalog, mock: responses.RequestsMock) -> None:
    mock.add(responses.GET, API + "/search/facets", json={"DATA_RESOURCE": [
        {"facetName": "owner", "displayName": "Owner", "facetCategories": []}
    ]})
    catalogue = cat.facets()
    assert catalogue["facet"].tolist() == ["owner"] and catalogue["category"].isna().all()


@pytest.mark.parametrize(
    ("status", "code", "error"),
    [
        (400, "INVALID_FACET", BadRequestError),
        (400, "INVALID_QUERY", BadRequestError),
        (500, "INTERNAL_ERROR", ServerError),
    ],
)
def test_errors_are_typed(
    cat: Catalog, fake: FakeSearch, status: int, code: str, error: type
) -> None:
    fake.fail["/search/new"] = (status, error_body(status, code, "Refused."))
    with pytest.raises(error) as caught:
        cat.search("x")
    assert caught.value.error_code == code and caught.value.status == status


def test_unknown_facet_is_a_bad_request(cat: Catalog, fake: FakeSearch) -> None:
    with pytest.raises(BadRequestError, match="Unknown facet nope"):
        cat.search("x", facets={"nope": ["a"]})


def test_page_of_a_lost_search_is_not_found(cat: Catalog, fake: FakeSearch) -> None:
    result = cat.search("", page_size=1)
    fake.stored.clear()
    with pytest.raises(NotFoundError) as caught:
        result.page(1)
    assert caught.value.error_code == "SEARCH_NOT_FOUND"


def test_bad_arguments_are_refused_before_any_request(cat: Catalog, fake: FakeSearch) -> None:
    with pytest.raises(ValueError, match="page_size"):
        cat.search("x", page_size=101)
    with pytest.raises(ValueError, match="limit"):
        cat.search("x", limit=0)
    with pytest.raises(TypeError, match="facet names"):
        cat.search("x", facets=["csv"])  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="as a sort"):
        cat.search("x", sort=[42])
    assert fake.bodies == []


def test_sort_specs_forms() -> None:
    assert sort_specs(None) == []
    assert sort_specs("score") == [{"propertyName": "score", "ascending": True}]
    assert sort_specs(("rows", False)) == [{"propertyName": "rowCount", "ascending": False}]
    assert sort_specs(["-modified", "resourcePath"]) == [
        {"propertyName": "timeOfResourceChange", "ascending": False},
        {"propertyName": "resourcePath", "ascending": True},
    ]


def test_reprs_name_the_search(cat: Catalog, fake: FakeSearch) -> None:
    result = cat.search("customers", facets={"fileFormat": "csv"}, page_size=2)
    assert "3 matches for 'customers' where fileFormat = csv" in repr(result)
    page = result._repr_html_()
    assert "customers00000.csv" in page and "2 of 3 shown" in page
    assert len(result) == 3


def test_raw_layer_calls(cat: Catalog, fake: FakeSearch) -> None:
    answer = cat.api.search_new({"searchPhrase": "orders", "facetSelections": [],
                                 "pagingCriteria": {"start": 0, "size": 1}})
    assert answer["totalResultCount"] == 2
    page = cat.api.search_page(start=1, size=1)
    assert fake.bodies[-1][1] == {"pagingCriteria": {"start": 1, "size": 1}}
    assert page["entities"][0]["key"] == "r00003"


def test_tags_are_read_for_entities_that_come_without_them(
    cat: Catalog, mock: responses.RequestsMock
) -> None:
    bare = [entity(i) for i in range(2)]
    for record in bare:
        del record["tagAssociationViewList"]
    FakeSearch(bare).install(mock)
    tagged = {"key": "r00001", "tagAssociationViewList": [
        {"tagFullName": "PII.Email", "field": "contact", "state": "SUGGESTED"},
        {"tagFullName": "Old.Tag", "field": None, "state": "REJECTED"},
    ]}
    mock.add(responses.GET, API + "/dataresource/metadata",
             json={"list": [tagged], "totalCount": 1, "start": 0, "pageSize": 2})
    frame = cat.search("").frame
    assert frame["tags"].tolist() == [[], ["PII.Email"]]
    (call,) = [c for c in mock.calls if "/dataresource/metadata" in c.request.url]
    query = parse_qs(urlsplit(call.request.url).query)
    assert query["propertyFilter"] == ["id:r00000;r00001"] and query["views"] == ["viewTags"]
