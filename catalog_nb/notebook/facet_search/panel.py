"""The facet search panel: :class:`FacetSearch`, a search page in a notebook cell.

A search box with a BASIC / ADVANCED switch, facets as collapsible checkbox lists with counts
(empty facets hidden), chips of the active filters (✕ removes one, "clear all" all), a results
grid that fits the cell (numbers right-aligned, sizes readable, "unknown" for what the catalog
does not know, partitions folded under their collection, the words searched highlighted) whose
headers sort and whose rows open the details, paging, and "load into a DataFrame".

Every widget is an attribute and every handler runs synchronously, so code and tests drive the
panel exactly as clicks do::

    from catalog_nb.notebook import FacetSearch

    panel = FacetSearch(cat, "customers")
    panel                                       # shows the panel in Jupyter
    panel.facet_selectors["fileFormat"].value = ("csv",)   # tick a facet
    panel.result.total, panel.frame             # the new search and its current page
    panel.rows.sort = "-size"                   # what a click on the Size header does
    panel.next_button.click()                   # page 2
    panel.rows.value = panel.frame["key"][0]    # what a click on a row does
    panel.selected                              # its fields with statistics
    frame = panel.load()                        # its data, read with pandas
    panel.clear_filters()                       # "clear all"
"""

from __future__ import annotations

import html
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import ipywidgets as W
import pandas as pd
import traitlets

from catalog_nb.client import Catalog, CatalogError, Resource, SearchResult
from catalog_nb.client.frames import empty_frame
from catalog_nb.client.search_frames import SEARCH_COLUMNS, normalize_facets
from catalog_nb.notebook.facet_search.details import RowDetails
from catalog_nb.notebook.facet_search.facets import FacetGroup, chip_buttons, facet_options
from catalog_nb.notebook.facet_search.formatting import grid_rows, search_terms
from catalog_nb.notebook.facet_search.notes import no_match_note
from catalog_nb.notebook.facet_search.views import GridHtml, PanelBox, ResultsGrid

__all__ = ["DEFAULT_TOP_N", "SORT_OPTIONS", "FacetSearch"]

#: Categories shown per facet unless a filter narrows them.
DEFAULT_TOP_N = 20
#: The sort choices of the panel: (label, frame sort name).
SORT_OPTIONS: tuple[tuple[str, str], ...] = (
    ("relevance", "score"),
    ("name", "name"),
    ("path", "path"),
    ("data source", "source"),
    ("size", "size"),
    ("rows", "rows"),
    ("last modified", "modified"),
    ("last profiled", "profiled"),
)
#: Facets open when the panel starts (the others fold to one line each).
OPEN_FACETS = 3


class FacetSearch(RowDetails, traitlets.HasTraits):
    """A facet search panel over one catalog.

    Args:
        cat: the logged-in :class:`~catalog_nb.client.Catalog`.
        text: the first search phrase ("" searches everything).
        facets: the first selections, ``{facet: [categories]}``.
        top_n: categories listed per facet (the largest counts) before a filter narrows them.
        page_size: rows per page of the results grid (1..100).
        sort: the first sort field (a value of :data:`SORT_OPTIONS`).
        ascending: the first sort direction.
        advanced: start in ADVANCED mode (``field:value`` terms, AND / OR / NOT, ``*``).
        run: search at once (``False``: wait for :meth:`search`).

    Traits (observe them with ``panel.observe(fn, names=...)``): ``result`` (the current
    :class:`~catalog_nb.client.SearchResult`), ``page`` (0-based page number), ``selected_key``
    (the resource in the details pane) and ``error`` (the last error message, "" when fine).

    Example::

        panel = FacetSearch(cat, "orders", facets={"dataSource": ["demo_files"]}, top_n=10)
        panel.text.value = "customers"          # searches at once
        panel.filters["tag"].value = "pii"      # only tags containing "pii" are listed
        panel.mode.value = "ADVANCED"           # the same words as an advanced query
    """

    result = traitlets.Any(None, allow_none=True)
    page = traitlets.Int(0)
    selected_key = traitlets.Unicode(None, allow_none=True)
    error = traitlets.Unicode("")

    def __init__(
        self,
        cat: Catalog,
        text: str = "",
        facets: Mapping[str, Any] | None = None,
        *,
        top_n: int = DEFAULT_TOP_N,
        page_size: int = 20,
        sort: str = "score",
        ascending: bool = False,
        advanced: bool = False,
        run: bool = True,
    ) -> None:
        super().__init__()
        if top_n < 1:
            raise ValueError("top_n must be at least 1")
        self.cat = cat
        self.top_n = top_n
        self.page_size = page_size
        self.selections = normalize_facets(facets)
        self._frame = empty_frame(SEARCH_COLUMNS)
        self._resource: Resource | None = None
        self._result: SearchResult | None = None
        self._collections: set[tuple[str, str]] | None = None
        self._quiet = False

        self.text = W.Text(value=text, placeholder="words to search for", continuous_update=False,
                           layout=W.Layout(flex="1 1 180px", width="auto"))
        self.search_button = W.Button(description="Search", icon="search",
                                      layout=W.Layout(width="auto"))
        self.mode = W.ToggleButtons(options=["BASIC", "ADVANCED"],
                                    value="ADVANCED" if advanced else "BASIC",
                                    tooltips=["all words must match",
                                              "field:value, AND / OR / NOT, quotes, prefix*"],
                                    style={"button_width": "auto"})
        self.sort_by = W.Dropdown(options=list(SORT_OPTIONS), value=sort, description="Sort by",
                                  layout=W.Layout(width="200px"))
        self.ascending = W.Checkbox(value=ascending, description="ascending", indent=False,
                                    layout=W.Layout(width="auto"))
        self.prev_button = W.Button(description="◀ previous", disabled=True,
                                    layout=W.Layout(width="auto"))
        self.next_button = W.Button(description="next ▶", disabled=True,
                                    layout=W.Layout(width="auto"))
        self.page_label = W.Label(value="no search yet")
        self.grid = ResultsGrid(sort=("" if ascending else "-") + sort)
        self.rows = self.grid
        self.table = GridHtml(self.grid)
        self.details = W.HTML()
        self.load_button = W.Button(description="load into a DataFrame", icon="table",
                                    disabled=True, layout=W.Layout(width="auto"),
                                    tooltip="pandas code reading it, in the next cell")
        self.error_box = W.HTML()
        self.chips = W.HBox(layout=W.Layout(flex_flow="row wrap"))
        self.groups: dict[str, FacetGroup] = {}
        self.facet_selectors: dict[str, Any] = {}
        self.filters: dict[str, Any] = {}
        self.facet_titles: dict[str, Any] = {}
        self.facet_box = W.VBox(layout=W.Layout(width="210px", flex="0 0 210px"))

        self.text.observe(lambda _: self.search(), names="value")
        self.search_button.on_click(lambda _: self.search())
        self.mode.observe(lambda _: self.search(), names="value")
        self.sort_by.observe(lambda _: self._sort_changed(), names="value")
        self.ascending.observe(lambda _: self._sort_changed(), names="value")
        self.grid.observe(lambda _: self._header_clicked(), names="sort")
        self.prev_button.on_click(lambda _: self.go(self.page - 1))
        self.next_button.on_click(lambda _: self.go(self.page + 1))
        self.grid.observe(self._on_row, names="value")
        self.load_button.on_click(lambda _: self.put_load_code())

        results = W.VBox(
            [
                W.HBox([self.prev_button, self.page_label, self.next_button],
                       layout=W.Layout(align_items="center")),
                self.grid,
                W.HBox([self.load_button]),
                self.details,
            ],
            layout=W.Layout(flex="1 1 420px", min_width="0", overflow="hidden"),
        )
        self.panel = PanelBox(
            [
                W.HBox([self.text, self.search_button, self.mode, self.sort_by, self.ascending],
                       layout=W.Layout(flex_flow="row wrap", align_items="center")),
                self.chips,
                self.error_box,
                W.HBox([self.facet_box, results],
                       layout=W.Layout(flex_flow="row wrap", width="100%")),
            ],
            self,
        )
        self.panel.add_class("catalog-nb-facet-search")
        with self._guard():
            for facet in self.cat.facets(as_frame=False):
                self._add_facet(str(facet.get("facetName")), facet.get("displayName"))
        if run:
            self.search()

    # -- what code reads -----------------------------------------------------------------------

    @property
    def frame(self) -> pd.DataFrame:
        """The rows of the page the grid shows (columns of ``SearchResult.frame``)."""
        return self._frame

    @property
    def message(self) -> str:
        """The note above the grid ("" when there is none), e.g. why nothing matched."""
        return str(self.grid.message)

    def to_html(self) -> str:
        """The panel as static HTML: the page line, the filters and the results table."""
        chips = ", ".join(
            f"{html.escape(f)} = {html.escape(c)}" for f, cs in self.selections.items() for c in cs
        )
        filters = f"<p>Filters: {chips}</p>" if chips else ""
        return (f"<div class='catalog-nb-facet-search'><p><b>{html.escape(self.page_label.value)}"
                f"</b></p>{filters}{self.grid.to_html()}</div>")

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.panel)

    # -- actions -------------------------------------------------------------------------------

    def search(self) -> SearchResult | None:
        """Run the search the widgets describe and show its first page; returns the result
        (``None`` when the service refused it: the error line says why)."""
        with self._guard():
            phrase = self.text.value.strip()
            field = str(self.sort_by.value)
            sort = None if field == "score" and not phrase else (field, bool(self.ascending.value))
            result = self.cat.search(
                phrase or None,
                facets=self.selections,
                sort=sort,
                page_size=self.page_size,
                advanced=self.mode.value == "ADVANCED",
            )
            self._result = result
            self._frame = result.frame
            self.page = 0
            self._show_facets(result)
            self._show_page(result)
            self.result = result
            return result
        return None

    def go(self, page: int) -> None:
        """Show page ``page`` (0-based; clamped to the pages there are)."""
        result = self._result
        if result is None:
            return
        page = max(0, min(page, result.page_count - 1))
        with self._guard():
            self._frame = result.page(page)
            self.page = page
            self._show_page(result)

    def remove_filter(self, facet: str, category: str) -> None:
        """Untick ``category`` of ``facet`` (what the chip's ✕ does) and search again."""
        left = [c for c in self.selections.get(facet, []) if c != category]
        self.selections = {**self.selections, facet: left}
        self.selections = {k: v for k, v in self.selections.items() if v}
        self.search()

    def clear_filters(self) -> None:
        """Untick every facet (what "clear all" does) and search again."""
        self.selections = {}
        self.search()

    # -- facets --------------------------------------------------------------------------------

    def _add_facet(self, name: str, display_name: Any) -> None:
        if name in self.groups:
            return
        collapsed = len(self.groups) >= OPEN_FACETS and name not in self.selections
        group = FacetGroup(name, str(display_name or name), collapsed=collapsed)
        group.selector.observe(lambda change: self._ticked(name, change["new"]), names="value")
        group.filter.observe(lambda _: self._fill_facet(name), names="value")
        self.groups[name] = group
        self.facet_selectors[name] = group.selector
        self.filters[name] = group.filter
        self.facet_titles[name] = group.title
        self.facet_box.children = (*self.facet_box.children, group.box)

    def _ticked(self, name: str, value: Any) -> None:
        if self._quiet:
            return
        self.selections = {**self.selections, name: list(value)}
        self.selections = {k: v for k, v in self.selections.items() if v}
        self.search()

    def _show_facets(self, result: SearchResult) -> None:
        for name, display_name in (
            result.facets[["facet", "display_name"]].drop_duplicates("facet").itertuples(False)
        ):
            self._add_facet(str(name), display_name)
        for name in self.groups:
            self._fill_facet(name)
        names = {name: group.display_name for name, group in self.groups.items()}
        self.chips.children = chip_buttons(
            self.selections, names, self.remove_filter, self.clear_filters
        )

    def option_counts(self, name: str) -> pd.DataFrame:
        """The categories of facet ``name`` the selector lists (after its filter and the
        ``top_n`` cut, selected ones always kept): columns category, count, selected."""
        facets = None if self._result is None else self._result.facets
        needle = str(self.filters[name].value) if name in self.filters else ""
        return facet_options(facets, name, self.selections.get(name, []), needle, self.top_n)

    def _fill_facet(self, name: str) -> None:
        with self._guard():
            facets = None if self._result is None else self._result.facets
            total = 0 if facets is None else int((facets["facet"] == name).sum())
            with self._silence():
                self.groups[name].fill(
                    self.option_counts(name), total, self.selections.get(name, []), self.top_n
                )

    # -- page, sorting and details -------------------------------------------------------------

    def _known_collections(self, result: SearchResult) -> set[tuple[str, str]]:
        """The (source, path) of every collection, read once when the catalog has any."""
        if self._collections is None:
            facets = result.facets
            has = ((facets["facet"] == "resourceType") & (facets["category"] == "collection")
                   & (facets["count"] > 0)).any()
            self._collections = set()
            if has:
                found = self.cat.search(None, facets={"resourceType": ["collection"]}).all()
                self._collections = set(zip(found["source"], found["path"], strict=True))
        return self._collections

    def _show_page(self, result: SearchResult) -> None:
        pages = result.page_count
        self.page_label.value = f"page {self.page + 1} of {pages} · {result.total:,} matches"
        self.prev_button.disabled = self.page <= 0
        self.next_button.disabled = self.page >= pages - 1
        advanced = self.mode.value == "ADVANCED"
        terms = search_terms(result.text or "", advanced=advanced)
        with self._silence():
            self.grid.value = None
            self.grid.rows = grid_rows(self._frame, terms, self._known_collections(result))
            self.grid.message = no_match_note(result, advanced)
        self.select(None)

    def _sort_changed(self) -> None:
        if self._quiet:
            return
        with self._silence():
            self.grid.sort = ("" if self.ascending.value else "-") + str(self.sort_by.value)
        self.search()

    def _header_clicked(self) -> None:
        if self._quiet:
            return
        sort = str(self.grid.sort)
        with self._silence():
            self.sort_by.value = sort.lstrip("-")
            self.ascending.value = not sort.startswith("-")
        self.search()

    @contextmanager
    def _silence(self) -> Iterator[None]:
        """Change widgets from code without their handlers searching again."""
        before, self._quiet = self._quiet, True
        try:
            yield
        finally:
            self._quiet = before

    @contextmanager
    def _guard(self) -> Iterator[None]:
        """Show a failure of the service (or of bad input) in the panel instead of raising."""
        try:
            yield
        except (CatalogError, ValueError, TypeError) as exc:
            code = getattr(exc, "error_code", None)
            kind = type(exc).__name__ + (f" {code}" if code else "")
            message = getattr(exc, "message", None) or str(exc)
            self.error = message
            self.error_box.value = (
                "<div style='color:#a00;border:1px solid #a00;padding:4px'>"
                f"<b>{html.escape(kind)}</b>: {html.escape(message)}</div>"
            )
        else:
            if self.error:
                self.error = ""
                self.error_box.value = ""
