"""``cat.resources()`` read in the Arrow layout against a real service that profiled the real
demo lake: the frame is the one the JSON pages give, cell for cell and dtype for dtype, for every
kind of value a resource carries (custom values of each type, favorites, ratings, folders, keys,
tables, views, collections), for every caller and every way of cutting the read.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pandas as pd
import pytest
import requests

from catalog_nb import contract
from catalog_nb.client import Catalog, CatalogError, TruncatedResultWarning, connect
from catalog_nb.client.resources.arrow_frame import ArrowRows, decode_page
from catalog_nb.client.resources.paged_frame import PagedFrame
from tests.benchmarks.catalog_fixture import write_catalog
from tests.client.mocks import LIVE_PASSWORD
from tests.client.shared_lake import profiled_catalog

#: One custom property of each type, and the values the lake's resources get.
CUSTOM = {
    "cp_text": ("STRING", {"crm/customers.csv": "gold", "sales.orders": "silver"}),
    "cp_count": ("INTEGER", {"crm/customers.csv": 7, "sales.orders": -2}),
    "cp_share": ("NUMBER", {"crm/customers.csv": 0.25}),
    "cp_flag": ("BOOLEAN", {"crm/customers.csv": True, "sales.orders": False}),
    "cp_day": ("DATE", {"sales.orders": "2024-02-29"}),
    "cp_labels": ("STRING_LIST", {"crm/customers.csv": ["a", "b"], "sales.orders": []}),
    "cp_unused": ("STRING", {}),
}


class Seen:
    """The ``Content-Type`` and ``pageSize`` of every metadata page the client read."""

    def __init__(self, cat: Catalog) -> None:
        self.types: list[str] = []
        self.sizes: list[int] = []
        cat.api.http.session.hooks["response"].append(self.record)

    def record(self, response: requests.Response, *args: Any, **kwargs: Any) -> None:
        if "/dataresource/metadata" in response.url:
            self.types.append(response.headers.get("Content-Type", "").split(";")[0])
            query = parse_qs(urlsplit(response.url).query)
            self.sizes.append(int(query["pageSize"][0]))


#: Resources of a generated source: more than a JSON page holds.
MANY = 1_200


@pytest.fixture(scope="module")
def cat(make_server: Callable[..., Any], tmp_path_factory: pytest.TempPathFactory
        ) -> Iterator[Catalog]:
    cat, _, server = profiled_catalog(make_server, tmp_path_factory, "arrow-lake")
    # After the profiling: its join discovery would read these generated fields (no sketches).
    # Written in one bulk ingest (the rows a profiling job writes, as record_profile would
    # write them one by one, which took two thirds of this module's time).
    write_catalog(server.store, MANY, 1, source="many")
    paths = {"crm/customers.csv": "demo_files", "sales.orders": "demo_sql"}
    for name, (kind, _) in CUSTOM.items():
        cat.create_custom_property(name.removeprefix("cp_"), kind)
    for path, source in paths.items():
        cat.update_resource(source, path, owner="ana", custom={
            name.removeprefix("cp_"): values[path] for name, (_, values) in CUSTOM.items()
            if path in values})
    cat.add_favorite(cat.resource("demo_files", "crm/customers.csv"))
    cat.review(cat.resource("demo_sql", "sales.orders"), 4)
    cat.create_virtual_folder("crm-folder", "demo_files", source_path="crm")
    yield cat
    cat.close()


def _both(cat: Catalog, **kwargs: Any) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The frame read in the Arrow layout, then as JSON pages; checks each read its layout."""
    seen = Seen(cat)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        arrow = cat.resources(**kwargs)
        assert set(seen.types) == {contract.ARROW_STREAM}, seen.types
        seen.types.clear()
        cat.arrow_pages = False
        try:
            plain = cat.resources(**kwargs)
        finally:
            cat.arrow_pages = True
    assert set(seen.types) == {"application/json"}, seen.types
    return arrow, plain


@pytest.mark.parametrize("kwargs", [
    {},
    {"source": "demo_sql"},
    {"source": "many", "page_size": 500},
    {"type": ["table", "view"]},
    {"limit": 5, "page_size": 2},
    {"limit": 7},
    {"custom": False},
    {"owner": "ana"},
    {"name": "no-such-resource"},
    {"virtual_folder": "crm-folder"},
])
def test_the_arrow_frame_is_the_json_frame(cat: Catalog, kwargs: dict[str, Any]) -> None:
    arrow, plain = _both(cat, **kwargs)
    pd.testing.assert_frame_equal(arrow, plain, check_exact=True)


def test_pages_grow_to_the_arrow_layouts_largest_once_it_answers(cat: Catalog) -> None:
    seen = Seen(cat)
    frame = cat.resources()
    # The first page is one any service takes; the next ones the Arrow layout's largest.
    assert seen.sizes == [contract.METADATA_PAGE_MAX, contract.ARROW_PAGE_MAX]
    assert len(frame) == frame["key"].nunique() > MANY
    seen.sizes.clear()
    with pytest.warns(TruncatedResultWarning):
        assert len(cat.resources(limit=MANY)) == MANY
    assert set(seen.sizes) == {contract.METADATA_PAGE_MAX}  # a limit keeps the page size


def test_the_arrow_frame_shows_what_was_written(cat: Catalog) -> None:
    frame = cat.resources().set_index("path")
    customers, orders = frame.loc["crm/customers.csv"], frame.loc["sales.orders"]
    assert customers["cp_text"] == "gold" and customers["cp_count"] == 7
    assert customers["cp_share"] == 0.25
    assert (customers["cp_flag"], orders["cp_flag"]) == (True, False)
    assert customers["cp_labels"] == ["a", "b"] and orders["cp_labels"] == []
    assert orders["cp_day"] == pd.Timestamp("2024-02-29", tz="UTC")
    assert pd.isna(customers["cp_day"]) and pd.isna(frame["cp_unused"]).all()
    assert (customers["favorite"], orders["favorite"]) == (True, False)
    assert orders["average_rating"] == 4.0 and orders["rating_count"] == 1
    assert customers["virtual_folders"] == ["crm-folder"]
    assert frame["virtual_folders"].map(len).sum() == (frame.index.str.startswith("crm/")).sum()
    assert (frame.loc[frame["type"] == "table", "rows"] > 0).all()
    # Each list cell is a list of its own, as the JSON frame makes them.
    assert frame["cp_labels"].map(id).nunique() == len(frame)


def test_a_restricted_caller_reads_the_same_frame_in_either_layout(
    cat: Catalog, unique: Callable[[str], str]
) -> None:
    files = cat.sources().set_index("name").loc["demo_files", "key"]
    role = cat.create_role(unique("files"), "Analyst", data_source_keys=[files])
    user = cat.create_user(unique("ana"), password=LIVE_PASSWORD, roles=[role["name"]])
    other = connect(cat.api.http.url, user["name"], LIVE_PASSWORD, progress=False)
    try:
        arrow, plain = _both(other)
        pd.testing.assert_frame_equal(arrow, plain, check_exact=True)
        assert set(arrow["source"]) == {"demo_files"}
        assert not arrow["favorite"].any()  # the administrator's favorite is not theirs
    finally:
        other.close()


def test_fields_and_tags_are_read_as_json(cat: Catalog) -> None:
    seen = Seen(cat)
    frame = cat.resources("demo_files", fields=True, tags=True)
    assert seen.types and set(seen.types) == {"application/json"}
    assert "fields" in frame.columns and "tags" in frame.columns


def test_page_size_bounds_follow_the_layout(cat: Catalog) -> None:
    assert len(cat.resources(page_size=contract.ARROW_PAGE_MAX)) == len(cat.resources())
    with pytest.raises(ValueError, match="10000"):
        cat.resources(page_size=contract.ARROW_PAGE_MAX + 1)
    with pytest.raises(ValueError, match="1000"):
        cat.resources(fields=True, page_size=contract.METADATA_PAGE_MAX + 1)


def test_an_unreadable_arrow_page_is_a_catalog_error(cat: Catalog) -> None:
    response = requests.Response()
    response.status_code = 200
    response.headers["Content-Type"] = contract.ARROW_STREAM
    response._content = b"\xff\xff\xff\xffnot an arrow stream"
    with pytest.raises(CatalogError, match="unreadable Arrow page"):
        decode_page(response, cat.api.http.decode)
    json_page = cat.api.resource_metadata(page_size=1, decode=False)
    assert decode_page(json_page, cat.api.http.decode)["list"][0]["key"]


def test_pages_of_both_layouts_in_one_read_are_refused(cat: Catalog) -> None:
    def page(accept: str | None) -> Any:
        answer = cat.api.resource_metadata(page_size=2, decode=False, accept=accept)
        return decode_page(answer, cat.api.http.decode)["list"]

    arrow, plain = page(contract.ARROW_STREAM), page(None)
    assert isinstance(arrow, ArrowRows) and isinstance(plain, list)
    for first, then in ((arrow, plain), (plain, arrow)):
        paged = PagedFrame()
        paged(first)
        with pytest.raises(CatalogError, match="as Arrow and others as JSON"):
            paged(then)
