"""The facet search panel driven headlessly against a mocked service: set widget values, call
the handlers, and assert the results, counts, pages, details and errors that follow."""

from __future__ import annotations

from typing import Any

import ipywidgets as W
import pytest
import responses

from catalog_nb.client import Catalog
from catalog_nb.notebook import FacetSearch
from catalog_nb.notebook.widgets import option_label
from tests.client.mocks import API, error_body
from tests.client.resource_mocks import CUSTOMER_FIELDS
from tests.client.search_mocks import FakeSearch, entity, lake


@pytest.fixture
def fake(mock: responses.RequestsMock) -> FakeSearch:
    records = lake(45)
    records[0]["fields"] = CUSTOMER_FIELDS
    records[0]["tagAssociationViewList"].append(
        {"tagFullName": "PII.Email", "field": "contact", "state": "SUGGESTED"}
    )
    return FakeSearch(records).install(mock)


def labels(panel: FacetSearch, facet: str) -> list[str]:
    return [label for label, _ in panel.facet_selectors[facet].options]


def test_opens_with_every_resource_and_counted_options(cat: Catalog, fake: FakeSearch) -> None:
    panel = FacetSearch(cat)
    assert fake.bodies[0][0] == "/search/runFacet"
    assert panel.result is not None and panel.result.total == 45
    assert set(panel.facet_selectors) == {"dataSource", "fileFormat", "tag"}
    assert labels(panel, "fileFormat") == ["csv (23)", "parquet (22)"]
    assert labels(panel, "dataSource") == ["demo_files (45)"]
    assert isinstance(panel.panel, W.VBox) and panel.error == ""


def test_typing_words_searches_at_once(cat: Catalog, fake: FakeSearch) -> None:
    panel = FacetSearch(cat)
    seen: list[int] = []
    panel.observe(lambda change: seen.append(change["new"].total), names="result")
    panel.text.value = "orders"
    assert fake.bodies[-1][0] == "/search/new"
    assert fake.bodies[-1][1]["searchPhrase"] == "orders"
    assert panel.result.total == 22 and seen == [22]
    assert labels(panel, "fileFormat") == ["parquet (22)"]
    panel.search_button.click()
    assert seen == [22, 22] and len(fake.bodies) == 3


def test_clicking_a_facet_moves_the_counts(cat: Catalog, fake: FakeSearch) -> None:
    panel = FacetSearch(cat)
    panel.facet_selectors["fileFormat"].value = ("csv",)
    assert fake.bodies[-1][1]["facetSelections"] == [
        {"facetName": "fileFormat", "facetCategories": ["csv"]}
    ]
    assert panel.result.total == 23 and panel.selections == {"fileFormat": ["csv"]}
    # the facet's own categories stay visible; the other facets count the selection
    assert labels(panel, "fileFormat") == ["csv (23)", "parquet (22)"]
    assert labels(panel, "tag") == ["PII.Email (23)"]
    assert panel.facet_selectors["fileFormat"].value == ("csv",)
    panel.facet_selectors["fileFormat"].value = ()
    assert panel.result.total == 45 and panel.selections == {}


def test_paging_moves_through_the_stored_result(cat: Catalog, fake: FakeSearch) -> None:
    panel = FacetSearch(cat, page_size=20)
    assert panel.page_label.value == "page 1 of 3 · 45 matches"
    assert panel.prev_button.disabled and not panel.next_button.disabled
    assert len(panel.frame) == 20 and "customers00000.csv" in panel.table.value
    panel.next_button.click()
    assert fake.bodies[-1] == (
        "/search/page", {"key": "s1", "pagingCriteria": {"start": 20, "size": 20}}
    )
    assert panel.page == 1 and panel.page_label.value == "page 2 of 3 · 45 matches"
    assert panel.frame["key"].iloc[0] == "r00020"
    panel.go(99)
    assert panel.page == 2 and len(panel.frame) == 5 and panel.next_button.disabled
    panel.prev_button.click()
    assert panel.page == 1 and not panel.prev_button.disabled


def test_sorting_sends_sort_specs(cat: Catalog, fake: FakeSearch) -> None:
    panel = FacetSearch(cat, "customers")
    assert fake.bodies[-1][1]["sortBySpecs"] == [{"propertyName": "score", "ascending": False}]
    panel.sort_by.value = "size"
    assert fake.bodies[-1][1]["sortBySpecs"] == [
        {"propertyName": "resourceSize", "ascending": False}
    ]
    panel.ascending.value = True
    assert fake.bodies[-1][1]["sortBySpecs"] == [
        {"propertyName": "resourceSize", "ascending": True}
    ]
    panel.text.value = "  "  # no words: relevance means nothing, the service orders by name
    panel.sort_by.value = "score"
    assert fake.bodies[-1][0] == "/search/runFacet" and fake.bodies[-1][1]["sortBySpecs"] == []


def test_details_pane_shows_fields_and_tags(cat: Catalog, fake: FakeSearch) -> None:
    panel = FacetSearch(cat)
    assert panel.selected.empty and "data_type" in panel.selected.columns
    panel.rows.value = "r00000"
    assert panel.selected_key == "r00000"
    assert panel.selected["name"].tolist() == ["customer_id", "contact"]
    assert panel.selected["density"].tolist() == [1.0, 0.97]
    assert "PII.Email" in panel.details.value and "on contact" in panel.details.value
    assert panel.selected_resource is not None and panel.selected_resource.key == "r00000"
    panel.next_button.click()  # a new page clears the choice
    assert panel.selected.empty and panel.selected_key is None and panel.details.value == ""


@pytest.mark.parametrize(
    ("status", "code", "kind"),
    [(400, "INVALID_QUERY", "BadRequestError"), (500, "INTERNAL_ERROR", "ServerError")],
)
def test_service_errors_show_in_the_panel(
    cat: Catalog, fake: FakeSearch, status: int, code: str, kind: str
) -> None:
    panel = FacetSearch(cat)
    before = panel.result
    fake.fail["/search/new"] = (status, error_body(status, code, "Cannot read that query."))
    panel.text.value = "broken ("
    assert panel.error == "Cannot read that query."
    assert kind in panel.error_box.value and code in panel.error_box.value
    assert panel.result is before  # the last good result stays
    panel.text.value = "orders"
    assert panel.error == "" and panel.error_box.value == "" and panel.result.total == 22


def test_failing_page_and_details_show_errors(
    cat: Catalog, fake: FakeSearch, mock: responses.RequestsMock
) -> None:
    panel = FacetSearch(cat, page_size=20)
    fake.fail["/search/page"] = (404, error_body(404, "SEARCH_NOT_FOUND", "The search is gone."))
    panel.next_button.click()
    assert panel.page == 0 and "SEARCH_NOT_FOUND" in panel.error_box.value
    mock.replace(responses.GET, API + "/dataresource/r00001",
                 json=error_body(404, "RESOURCE_NOT_FOUND", "No such resource."), status=404)
    panel.rows.value = "r00001"
    assert panel.error == "No such resource." and panel.selected.empty


def test_thousands_of_categories_stay_usable(cat: Catalog, mock: responses.RequestsMock) -> None:
    records = [entity(i, tags=[f"Domain.tag{i:04d}"]) for i in range(3000)]
    FakeSearch(records).install(mock)
    panel = FacetSearch(cat, top_n=20)
    options = labels(panel, "tag")
    assert len(options) == 20 and options[0] == option_label("Domain.tag0000", 1)
    assert "20 of 3,000" in panel.facet_titles["tag"].value
    panel.filters["tag"].value = "tag29"
    narrowed = [value for _, value in panel.facet_selectors["tag"].options]
    assert len(narrowed) == 20 and all("tag29" in value for value in narrowed)
    panel.filters["tag"].value = "tag2999"
    assert labels(panel, "tag") == ["Domain.tag2999 (1)"]
    panel.facet_selectors["tag"].value = ("Domain.tag2999",)
    assert panel.result.total == 1
    panel.filters["tag"].value = "tag0001"  # the selection stays listed while filtered out
    assert [v for _, v in panel.facet_selectors["tag"].options] == [
        "Domain.tag0001", "Domain.tag2999"
    ]
    assert panel.facet_selectors["tag"].value == ("Domain.tag2999",)


def test_initial_facets_and_no_run(cat: Catalog, fake: FakeSearch) -> None:
    panel = FacetSearch(cat, "orders", facets={"fileFormat": "parquet"}, run=False)
    assert panel.result is None and panel.frame.empty and fake.bodies == []
    panel.go(1)  # nothing to page yet
    assert panel.page == 0 and fake.bodies == []
    assert panel.search() is panel.result and panel.result is not None
    assert fake.bodies[-1][1]["facetSelections"] == [
        {"facetName": "fileFormat", "facetCategories": ["parquet"]}
    ]
    panel.go(5)  # 22 matches fill two pages of 20
    assert panel.page == 1 and len(panel.frame) == 2
    with pytest.raises(ValueError, match="top_n"):
        FacetSearch(cat, top_n=0)


def test_facet_catalogue_failure_is_shown(cat: Catalog, mock: responses.RequestsMock) -> None:
    FakeSearch(lake(3)).install(mock)
    mock.replace(responses.GET, API + "/search/facets",
                 json=error_body(500, "INTERNAL_ERROR", "Facets broke."), status=500)
    panel = FacetSearch(cat, run=False)
    assert panel.error == "Facets broke." and panel.facet_selectors == {}
    panel.search()  # facets appear from the result instead
    assert set(panel.facet_selectors) == {"dataSource", "fileFormat", "tag"}


def test_displays_the_panel(cat: Catalog, fake: FakeSearch, monkeypatch: Any) -> None:
    import IPython.display

    shown: list[Any] = []
    monkeypatch.setattr(IPython.display, "display", shown.append)
    panel = FacetSearch(cat)
    panel._ipython_display_()
    assert shown == [panel.panel]
