"""``cat.search`` and ``cat.facets`` against a real service profiling the real demo lake.

The lake is the session's shared one (``tests.client.shared_lake``): a demo lake built at scale
0.05, its two sources registered and profiled through the client. The module tags one resource
with a tag of its own, so every search below reads what the service's own processing and index
wrote.
"""

from __future__ import annotations

import uuid
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pandas as pd
import pytest

from catalog_nb.client import (
    BadRequestError,
    Catalog,
    NotFoundError,
    SearchResult,
    TruncatedResultWarning,
    connect,
)
from catalog_nb.client.frames import DTYPES
from catalog_nb.client.search_frames import FACET_RESULT_COLUMNS, SEARCH_COLUMNS
from tests.client.shared_lake import SharedLake

CUSTOMERS = "crm/customers.csv"


@dataclass
class Lake:
    cat: Catalog
    tag: str
    customers_key: str
    everything: pd.DataFrame


@pytest.fixture(scope="module")
def lake(shared_lake: SharedLake) -> Lake:
    cat = shared_lake.cat
    domain = f"Search{uuid.uuid4().hex[:6]}"
    cat.create_tag_domain(domain)
    tag = cat.create_tag(f"{domain}.Contact")["fullName"]
    customers = cat.resource("demo_files", CUSTOMERS)
    cat.tag(customers.key, tag)
    everything = cat.resources(custom=False)
    return Lake(cat, str(tag), customers.key, everything)


@pytest.fixture
def cat(lake: Lake) -> Catalog:
    return lake.cat


def test_facet_catalogue_lists_the_lake(cat: Catalog, lake: Lake) -> None:
    catalogue = cat.facets()
    by_facet = catalogue.groupby("facet")["category"].apply(set)
    assert {"demo_files", "demo_sql"} <= by_facet["dataSource"]
    assert {"file", "table"} <= by_facet["resourceType"]
    assert "csv" in by_facet["fileFormat"]
    assert lake.tag in by_facet["tag"]
    for name in ("owner", "sensitivity", "fieldDataType", "sizeRange", "lastModified"):
        assert name in by_facet.index


def test_keyword_search_finds_the_resource(cat: Catalog, lake: Lake) -> None:
    result = cat.search("customers")
    assert isinstance(result, SearchResult) and result.key
    frame = result.frame
    assert frame.dtypes.astype(str).to_dict() == {c.name: DTYPES[c.kind] for c in SEARCH_COLUMNS}
    row = frame[frame["key"] == lake.customers_key].iloc[0]
    assert row["source"] == "demo_files" and row["path"] == CUSTOMERS
    assert row["type"] == "file" and row["format"] == "csv"
    assert lake.tag in row["tags"] and row["score"] > 0 and row["rows"] > 0
    assert result.total == len(frame)


def test_everything_pages_consistently(cat: Catalog, lake: Lake) -> None:
    result = cat.search("", page_size=7)
    assert result.total == len(lake.everything)
    frame = result.all()
    assert len(frame) == result.total and frame["key"].is_unique
    assert set(frame["key"]) == set(lake.everything["key"])
    assert [len(p) for p in result.pages()][:-1] == [7] * (result.page_count - 1)
    assert len(result.page(result.page_count + 3)) == 0


def test_facets_filter_and_count_honestly(cat: Catalog, lake: Lake) -> None:
    sql = cat.search(facets={"dataSource": ["demo_sql"]})
    expected = lake.everything[lake.everything["source"] == "demo_sql"]
    assert sql.total == len(expected)
    assert set(sql.all()["source"]) == {"demo_sql"}
    facets = sql.facets
    assert facets.dtypes.astype(str).to_dict() == {
        c.name: DTYPES[c.kind] for c in FACET_RESULT_COLUMNS
    }
    sources = facets[facets["facet"] == "dataSource"].set_index("category")
    # the selected facet keeps its other categories, with their own counts
    assert bool(sources.loc["demo_sql", "selected"]) and not sources.loc["demo_files", "selected"]
    assert sources.loc["demo_files", "count"] == (lake.everything["source"] == "demo_files").sum()
    types = facets[facets["facet"] == "resourceType"]
    assert types["count"].sum() == sql.total


def test_refine_by_tag_and_format(cat: Catalog, lake: Lake) -> None:
    files = cat.search("", facets={"dataSource": "demo_files"})
    tagged = files.refine(add={"tag": lake.tag})
    assert tagged.total == 1 and tagged.frame["key"].tolist() == [lake.customers_key]
    csv = files.refine(remove="dataSource", add={"fileFormat": ["csv"]})
    assert csv.total >= 1 and set(csv.all()["format"]) == {"csv"}
    assert files.total == (lake.everything["source"] == "demo_files").sum()


def test_sort_and_limit(cat: Catalog, lake: Lake) -> None:
    result = cat.search("", sort="-size", limit=5, page_size=2)
    assert result.truncated and len(result.frame) == 2
    with pytest.warns(TruncatedResultWarning, match="first 5 of"):
        frame = result.all()
    sizes = frame["size"].dropna().tolist()
    assert len(frame) == 5 and sizes == sorted(sizes, reverse=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert len(cat.search("customers", partial=True).all()) >= 1


def test_advanced_query(cat: Catalog, lake: Lake) -> None:
    either = cat.search("customers OR orders", advanced=True)
    result = cat.search("(customers OR orders) AND NOT crm", advanced=True)
    assert 1 <= result.total < either.total
    assert lake.customers_key in set(either.all()["key"])
    assert not result.all()["path"].str.contains("crm").any()
    # field:value terms narrow by one property each.
    csv = cat.search("format:csv", advanced=True).all()
    assert len(csv) and set(csv["format"]) == {"csv"}
    crm = cat.search("path:crm AND name:customers", advanced=True).all()
    assert lake.customers_key in set(crm["key"]) and crm["path"].str.startswith("crm/").all()


def test_errors_are_typed(cat: Catalog) -> None:
    with pytest.raises(BadRequestError) as caught:
        cat.search("x", facets={"noSuchFacet": ["a"]})
    assert caught.value.error_code == "INVALID_FACET"
    with pytest.raises(BadRequestError) as caught:
        cat.search("name:(", advanced=True)
    assert caught.value.error_code == "INVALID_QUERY"
    with pytest.raises(BadRequestError):
        cat.search("x", sort="noSuchField")
    with pytest.raises(NotFoundError) as lost:
        cat.api.search_page("no-such-search", start=0, size=1)
    assert lost.value.error_code == "SEARCH_NOT_FOUND"


def test_page_sizes_follow_the_services_configured_limit(
    make_server: Callable[..., Any],
) -> None:
    """The client reads search.pageMax instead of assuming the default limit of 100."""
    server = make_server()
    admin = connect(server.url, server.admin_user, server.admin_password, progress=False)
    try:
        admin.set_config("search.pageMax", 20)
        small = connect(server.url, server.admin_user, server.admin_password, progress=False)
        assert small.search("").page_size == 20   # the default fits the lowered limit
        with pytest.raises(ValueError, match="between 1 and 20"):
            small.search("", page_size=21)
        admin.set_config("search.pageMax", 500)
        large = connect(server.url, server.admin_user, server.admin_password, progress=False)
        assert large.search("", page_size=400).page_size == 400
        assert large.search("").page_size == 100
        small.close()
        large.close()
    finally:
        admin.set_config("search.pageMax", None)
        admin.close()
