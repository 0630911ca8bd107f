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


def _cells(panel: FacetSearch, column: str) -> list[str]:
    """The grid's cells of ``column`` for the rows at the top level (folded rows left out)."""
    return [str(row[column]) for row in panel.grid.rows]


def test_header_click_sorts_and_cells_read_as_numbers(cat: Catalog) -> None:
    panel = FacetSearch(cat, page_size=50)
    panel.grid.sort = "-rows"  # what a click on the Rows header sends
    assert panel.sort_by.value == "rows" and panel.ascending.value is False
    shown = [int(c.replace(",", "")) for c in _cells(panel, "rows") if c not in ("", "unknown")]
    assert len(shown) > 3 and shown == sorted(shown, reverse=True)
    assert any("," in c for c in _cells(panel, "rows"))  # 25,337 style, never 25337
    numeric = {c["name"] for c in panel.grid.columns if c["numeric"]}
    assert numeric == {"rows", "size", "score"}  # right-aligned, headers and cells alike
    # Tables have no size on the wire (0): the grid says unknown, never a fake 0.
    tables = panel.frame["type"].eq("table").tolist()
    sizes = [row["size"] for row, table in zip(panel.grid.rows, tables, strict=False) if table]
    assert sizes and set(sizes) == {"unknown"}
    assert "0 B" not in _cells(panel, "size")
    panel.ascending.value = True  # the checkbox moves the header's arrow too
    assert panel.grid.sort == "rows"


def test_chips_remove_one_filter_or_all(cat: Catalog) -> None:
    panel = FacetSearch(cat)
    everything = panel.result.total
    panel.facet_selectors["dataSource"].value = ("demo_files",)
    panel.facet_selectors["fileFormat"].value = ("csv",)
    labels = [chip.description for chip in panel.chips.children]
    assert labels[-1] == "clear all" and len(labels) == 3
    assert any("csv ✕" in label for label in labels)
    narrowed = panel.result.total
    next(c for c in panel.chips.children if "csv" in c.description).click()
    assert panel.selections == {"dataSource": ["demo_files"]} and panel.result.total > narrowed
    assert panel.facet_selectors["fileFormat"].value == ()
    panel.chips.children[-1].click()
    assert panel.selections == {} and panel.result.total == everything
    assert panel.chips.children == ()


def test_partitions_fold_under_their_collection(cat: Catalog) -> None:
    panel = FacetSearch(cat, page_size=100)
    collection = next(r for r in panel.grid.rows if "sales/orders" in r["name"] and r["children"])
    members = [child["name"] for child in collection["children"]]
    assert len(members) > 1 and all("sales/orders/" in name for name in members)
    top = [r["name"] for r in panel.grid.rows]
    assert not [name for name in top if "sales/orders/" in name and name not in
                (collection["name"],)]
    assert all(key for _, key in panel.rows.options)  # every row, folded or not, can be chosen


def test_basic_advanced_switch_messages_and_highlights(cat: Catalog) -> None:
    panel = FacetSearch(cat)
    panel.text.value = "cust*"
    assert panel.result.total == 0
    assert "ADVANCED" in panel.message and "whole words" in panel.message
    panel.mode.value = "ADVANCED"  # the same words, now a prefix
    assert panel.result.total > 0 and panel.message == ""
    assert any("<mark>" in row["name"] for row in panel.grid.rows)
    panel.text.value = "name:(unclosed"
    assert "INVALID_QUERY" in panel.error_box.value and panel.error
    panel.mode.value = "BASIC"
    panel.text.value = "customers"
    assert panel.error == "" and "<mark>customers</mark>" in panel.grid.rows[0]["name"]


def test_load_into_a_dataframe(cat: Catalog) -> None:
    panel = FacetSearch(cat, "customers")
    with pytest.raises(ValueError, match="click a row"):
        panel.load_code()
    assert panel.load_button.disabled
    # The browser gets the changes in the order they are made: the button must be usable by the
    # time the details show (the browser test clicks it as soon as they do).
    changed: list[str] = []
    panel.load_button.observe(lambda c: changed.append(f"button {c['new']}"), "disabled")
    panel.details.observe(lambda c: changed.append("details"), "value")
    key = panel.frame.loc[panel.frame["path"] == CUSTOMERS, "key"].iloc[0]
    panel.rows.value = key
    assert not panel.load_button.disabled
    assert changed == ["button False", "details"]
    panel.select(None)
    assert changed[2:] == ["button True", "details"]
    panel.select(key)
    code = panel.put_load_code()  # outside IPython: only returned
    assert "pd.read_csv(" in code and CUSTOMERS in code
    frame = panel.load()
    assert len(frame) == panel.selected_resource.rows
    assert list(frame.columns) == panel.selected["name"].tolist()


def test_saved_output_carries_a_static_table(cat: Catalog) -> None:
    panel = FacetSearch(cat, "customers", page_size=5)
    bundle = panel.panel._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    static = bundle["text/html"]
    assert "matches" in static and "<table" in static and "customers" in static
    assert static.count("<tr data-key=") >= min(5, panel.result.total)
