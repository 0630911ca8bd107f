"""The pieces of the facet search panel below the service: how values read, which rows fold,
the facet groups that hide and fold, the pandas code of "load into a DataFrame"."""

from __future__ import annotations

import pandas as pd
import pytest

from catalog_nb.client.frames import to_frame
from catalog_nb.client.search_frames import SEARCH_COLUMNS
from catalog_nb.notebook.facet_search.facets import FacetGroup, facet_options
from catalog_nb.notebook.facet_search.formatting import (
    grid_rows,
    highlight,
    human_count,
    human_size,
    search_terms,
    static_table,
)
from catalog_nb.notebook.facet_search.loading import load_code


def test_numbers_and_sizes_read_as_people_read_them() -> None:
    assert human_count(25337) == "25,337" and human_count(pd.NA) == "unknown"
    assert human_size(25_337_000) == "25.3 MB" and human_size(None) == "unknown"
    assert human_size(999) == "999 B"


def test_terms_and_highlights_escape_html() -> None:
    assert search_terms("name:orders AND NOT tag:pii", advanced=True) == ["orders", "pii"]
    assert search_terms("AND", advanced=False) == ["and"]
    assert highlight("<b>Orders</b>", ["orders"]) == "&lt;b&gt;<mark>Orders</mark>&lt;/b&gt;"


def _frame(*records: dict[str, object]) -> pd.DataFrame:
    return to_frame([{"dataSourceName": "files", **r} for r in records], SEARCH_COLUMNS)


def test_partitions_fold_and_unknown_sizes() -> None:
    frame = _frame(
        {"key": "p1", "resourcePath": "sales/orders/2024-01.csv", "name": "2024-01.csv",
         "resourceType": "resource_type_file", "resourceSize": 0},
        {"key": "t1", "resourcePath": "sales.orders", "name": "orders",
         "resourceType": "resource_type_table", "resourceSize": 0},
        {"key": "p2", "resourcePath": "sales/orders/2024-02.csv", "name": "2024-02.csv",
         "resourceType": "resource_type_file", "resourceSize": 2048},
    )
    rows = grid_rows(frame, [], collections=[("files", "sales/orders")])
    assert [r["key"] for r in rows] == ["", "t1"]  # the collection is not on the page
    assert [c["key"] for c in rows[0]["children"]] == ["p1", "p2"]
    assert rows[1]["size"] == "unknown" and rows[0]["children"][0]["size"] == "unknown"
    assert rows[0]["children"][1]["size"] == "2.0 kB"
    html = static_table(rows)
    assert html.count("<tr data-key=") == 4 and "padding-left:2em" in html


def test_empty_facets_hide_and_long_ones_offer_a_filter() -> None:
    group = FacetGroup("tag", "Tag", collapsed=True)
    assert group.body.layout.display == "none"
    group.toggle.value = True
    assert group.body.layout.display == ""
    empty = facet_options(None, "tag", [], "", 5)
    group.fill(empty, 0, [], 5)
    assert group.box.layout.display == "none"
    facets = pd.DataFrame({"facet": ["tag"] * 7, "category": [f"t{i}" for i in range(7)],
                           "count": list(range(7, 0, -1)), "selected": [False] * 7})
    shown = facet_options(facets, "tag", ["t6"], "", 5)
    group.fill(shown, 7, ["t6"], 5)
    assert group.box.layout.display == "" and group.filter.layout.display == ""
    assert group.selector.value == ("t6",) and len(group.selector.options) == 6
    assert group.toggle.description == "Tag (1)" and "6 of 7" in group.title.value


def test_load_code_for_each_kind_of_resource() -> None:
    table = load_code({"resourceType": "resource_type_table", "tableName": "orders",
                       "dataSchemaName": "sales"}, {"sourceType": "SQL", "uri": "sqlite:///x.db"})
    assert "pd.read_sql_table('orders', 'sqlite:///x.db', schema='sales')" in table
    folder = load_code({"resourceType": "resource_type_collection", "resourcePath": "sales/orders",
                        "fileFormat": "csv"}, {"sourceType": "FILE", "uri": "/lake/"})
    assert "Path('/lake/sales/orders').glob('*.csv')" in folder and "pd.concat(" in folder
    with pytest.raises(ValueError, match="format 'xlsx'"):
        load_code({"resourceType": "resource_type_file", "resourcePath": "a.xlsx"},
                  {"sourceType": "FILE", "uri": "/lake"})
