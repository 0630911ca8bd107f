"""The facet search panel driven headlessly against a real service and the demo lake: set
widget values, assert the results, counts, pages, details and errors that follow."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from catalog_nb.client import Catalog
from catalog_nb.notebook import FacetSearch
from tests.client.shared_lake import profiled_catalog

CUSTOMERS = "crm/customers.csv"


@pytest.fixture(scope="module")
def cat(
    make_server: Callable[..., Any], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Catalog]:
    catalog = profiled_catalog(make_server, tmp_path_factory, "widget-lake")[0]
    yield catalog
    catalog.close()


def counts(panel: FacetSearch, facet: str) -> dict[str, int]:
    """``{category: count}`` read back from the option labels ``category (n)``."""
    read = {}
    for label, value in panel.facet_selectors[facet].options:
        assert label.startswith(f"{value} (") and label.endswith(")")
        read[value] = int(label[len(value) + 2 : -1].replace(",", ""))
    return read


def test_facet_clicks_move_results_and_counts(cat: Catalog) -> None:
    everything = cat.resources(custom=False)
    panel = FacetSearch(cat, page_size=10)
    assert panel.error == "" and panel.result.total == len(everything)
    by_source = everything["source"].value_counts().to_dict()
    assert counts(panel, "dataSource") == by_source
    panel.facet_selectors["dataSource"].value = ("demo_sql",)
    assert panel.result.total == by_source["demo_sql"]
    assert set(panel.result.all()["source"]) == {"demo_sql"}
    # the clicked facet keeps its counts; the others now count only demo_sql
    assert counts(panel, "dataSource") == by_source
    assert sum(counts(panel, "resourceType").values()) == by_source["demo_sql"]
    panel.facet_selectors["dataSource"].value = ()
    assert panel.result.total == len(everything)


def test_words_paging_and_details(cat: Catalog) -> None:
    panel = FacetSearch(cat, page_size=5)
    pages = panel.result.page_count
    assert pages > 1 and panel.page_label.value.startswith(f"page 1 of {pages}")
    first = panel.frame["key"].tolist()
    panel.next_button.click()
    assert panel.page == 1 and not set(first) & set(panel.frame["key"])
    panel.text.value = "customers"
    assert panel.page == 0 and panel.result.text == "customers"
    key = panel.frame.loc[panel.frame["path"] == CUSTOMERS, "key"].iloc[0]
    panel.rows.value = key
    fields = panel.selected
    assert len(fields) > 0 and fields["data_type"].notna().all()
    assert fields["density"].between(0, 1).all() and panel.selected_key == key
    assert "customers.csv" in panel.details.value


def test_sorting_by_size(cat: Catalog) -> None:
    panel = FacetSearch(cat, page_size=10)
    panel.sort_by.value = "size"
    sizes = panel.frame["size"].tolist()
    assert sizes == sorted(sizes, reverse=True)
    panel.ascending.value = True
    # tables have no size (0 on the wire); the service sorts unknown sizes last
    known = [size for size in panel.frame["size"] if size]
    assert len(known) > 1 and known == sorted(known)


def test_service_errors_show_in_the_panel(cat: Catalog) -> None:
    panel = FacetSearch(cat)
    good = panel.result
    panel.selections = {"noSuchFacet": ["x"]}
    assert panel.search() is None
    assert "INVALID_FACET" in panel.error_box.value and panel.error
    assert panel.result is good
    panel.selections = {}
    panel.text.value = "x" * 10_000  # too long: the service refuses it
    assert "INVALID_QUERY" in panel.error_box.value
    panel.text.value = "customers"
    assert panel.error == "" and panel.result.total >= 1


def test_many_categories_top_n_and_filter(cat: Catalog) -> None:
    panel = FacetSearch(cat, top_n=2)
    all_types = cat.facets().query("facet == 'fieldDataType'")["category"].tolist()
    assert len(all_types) > 2
    assert len(panel.facet_selectors["fieldDataType"].options) == 2
    assert f"2 of {len(all_types)}" in panel.facet_titles["fieldDataType"].value
    wanted = sorted(all_types)[-1]
    panel.filters["fieldDataType"].value = wanted.lower()
    assert [v for _, v in panel.facet_selectors["fieldDataType"].options] == [wanted]
