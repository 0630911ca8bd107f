"""The facet search panel of the notebook toolkit: :class:`FacetSearch`.

Built from ipywidgets over :meth:`Catalog.search <catalog_nb.client.search.SearchMixin.search>`:
a search box (Enter or the button searches), one selector per facet whose options read
``category (count)`` (the ``top_n`` largest categories, plus a filter box per facet so
thousands of categories stay usable), a results table with paging and sorting, a details pane
for the chosen resource (its fields with statistics and its tags), and an error line that shows
what the service answered instead of raising into the event loop.

Everything happens synchronously: setting a widget's value runs its handler at once, so code
and tests can drive the panel without a browser::

    from catalog_nb.notebook import FacetSearch

    panel = FacetSearch(cat, "customers")
    panel                                       # shows the panel in Jupyter
    panel.facet_selectors["fileFormat"].value = ("csv",)
    panel.result.total, panel.frame             # the new search and its current page
    panel.next_button.click()                   # page 2
    panel.rows.value = panel.frame["key"][0]    # details of the first row
    panel.selected                              # its fields with statistics
    panel.observe(lambda change: print(change.new.total), names="result")
"""

from __future__ import annotations

import html
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import ipywidgets as W
import pandas as pd
import traitlets

from catalog_nb.client import Catalog, CatalogError, Resource, SearchResult
from catalog_nb.client.frames import empty_frame
from catalog_nb.client.resources.frames import FIELD_COLUMNS
from catalog_nb.client.search_frames import SEARCH_COLUMNS, normalize_facets

__all__ = ["DEFAULT_TOP_N", "SORT_OPTIONS", "TABLE_COLUMNS", "FacetSearch", "option_label"]

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
#: Columns of the results table.
TABLE_COLUMNS = (
    "name", "source", "path", "type", "format", "owner", "tags", "sensitivity", "rows", "size",
    "modified", "score",
)
_NO_ROW = "— choose a result for its details —"


def option_label(category: str, count: int) -> str:
    """The label of one facet option.

    >>> option_label("csv", 12)
    'csv (12)'
    """
    return f"{category} ({count:,})"


def _table_html(frame: pd.DataFrame) -> str:
    if not len(frame):
        return "<p><i>No matching resources.</i></p>"
    shown = frame.loc[:, list(TABLE_COLUMNS)].copy()
    shown["tags"] = shown["tags"].map(", ".join)
    shown["modified"] = shown["modified"].dt.strftime("%Y-%m-%d %H:%M")
    shown["score"] = shown["score"].round(3)
    shown = shown.astype(object).where(shown.notna(), "")
    return str(shown.to_html(index=False, escape=True, border=0, classes="catalog-nb-results"))


def _tags_html(resource: Resource) -> str:
    views = [v for v in resource.raw.get("tagAssociationViewList") or [] if isinstance(v, dict)]
    if not views:
        return "<p><b>Tags:</b> none</p>"
    items = "".join(
        f"<li>{html.escape(str(v.get('tagFullName') or v.get('tagName')))}"
        f"{' on ' + html.escape(str(v['field'])) if v.get('field') else ''}"
        f" <small>({html.escape(str(v.get('state')))})</small></li>"
        for v in views
    )
    return f"<p><b>Tags:</b></p><ul>{items}</ul>"


class FacetSearch(traitlets.HasTraits):
    """A facet search panel over one catalog.

    Args:
        cat: the logged-in :class:`~catalog_nb.client.Catalog`.
        text: the first search phrase ("" searches everything).
        facets: the first selections, ``{facet: [categories]}``.
        top_n: categories listed per facet (the largest counts) before a filter narrows them.
        page_size: rows per page of the results table (1..100).
        sort: the first sort field (a value of :data:`SORT_OPTIONS`).
        ascending: the first sort direction.
        run: search at once (``False``: wait for :meth:`search`).

    Traits (observe them with ``panel.observe(fn, names=...)``): ``result`` (the current
    :class:`~catalog_nb.client.SearchResult`), ``page`` (0-based page number), ``selected_key``
    (the resource in the details pane) and ``error`` (the last error message, "" when fine).

    Example::

        panel = FacetSearch(cat, "orders", facets={"dataSource": ["demo_files"]}, top_n=10)
        panel.text.value = "customers"          # searches at once
        panel.filters["tag"].value = "pii"      # only tags containing "pii" are listed
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
        self._updating = False

        self.text = W.Text(value=text, placeholder="words to search for", continuous_update=False)
        self.search_button = W.Button(description="Search", icon="search")
        self.sort_by = W.Dropdown(options=list(SORT_OPTIONS), value=sort, description="Sort by")
        self.ascending = W.Checkbox(value=ascending, description="ascending", indent=False)
        self.prev_button = W.Button(description="◀ previous", disabled=True)
        self.next_button = W.Button(description="next ▶", disabled=True)
        self.page_label = W.Label(value="no search yet")
        self.table = W.HTML()
        self.rows = W.Dropdown(options=[(_NO_ROW, None)], value=None, description="Details")
        self.details = W.HTML()
        self.error_box = W.HTML()
        self.facet_selectors: dict[str, Any] = {}
        self.filters: dict[str, Any] = {}
        self.facet_titles: dict[str, Any] = {}
        self._facet_names: dict[str, str] = {}
        self.facet_box = W.VBox()

        self.text.observe(lambda _: self.search(), names="value")
        self.search_button.on_click(lambda _: self.search())
        self.sort_by.observe(lambda _: self.search(), names="value")
        self.ascending.observe(lambda _: self.search(), names="value")
        self.prev_button.on_click(lambda _: self.go(self.page - 1))
        self.next_button.on_click(lambda _: self.go(self.page + 1))
        self.rows.observe(self._on_row, names="value")

        self.panel = W.VBox(
            [
                W.HBox([self.text, self.search_button, self.sort_by, self.ascending]),
                self.error_box,
                W.HBox(
                    [
                        W.Box([self.facet_box], layout=W.Layout(width="30%")),
                        W.VBox(
                            [
                                W.HBox([self.prev_button, self.page_label, self.next_button]),
                                self.table,
                                self.rows,
                                self.details,
                            ],
                            layout=W.Layout(width="70%"),
                        ),
                    ]
                ),
            ]
        )
        with self._guard():
            for facet in self.cat.facets(as_frame=False):
                self._add_facet(str(facet.get("facetName")), facet.get("displayName"))
        if run:
            self.search()

    # -- what code reads -----------------------------------------------------------------------

    @property
    def frame(self) -> pd.DataFrame:
        """The rows of the page the table shows (columns of ``SearchResult.frame``)."""
        return self._frame

    @property
    def selected(self) -> pd.DataFrame:
        """The fields (with statistics) of the resource in the details pane; empty when none."""
        if self._resource is None:
            return empty_frame(FIELD_COLUMNS)
        return self._resource.fields

    @property
    def selected_resource(self) -> Resource | None:
        """The :class:`~catalog_nb.client.Resource` in the details pane, or ``None``."""
        return self._resource

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

    def select(self, key: str | None) -> None:
        """Show the resource ``key`` in the details pane (``None`` clears it)."""
        with self._guard():
            if key is None:
                self._resource = None
                self.details.value = ""
            else:
                resource = self.cat.resource(key)
                self._resource = resource
                self.details.value = resource._repr_html_() + _tags_html(resource)
            self.selected_key = key

    # -- facets --------------------------------------------------------------------------------

    def _add_facet(self, name: str, display_name: Any) -> None:
        if name in self.facet_selectors:
            return
        self._facet_names[name] = str(display_name or name)
        title = W.HTML(value=f"<b>{html.escape(self._facet_names[name])}</b>")
        selector = W.SelectMultiple(options=[], rows=6)
        search_box = W.Text(placeholder="filter categories", continuous_update=True)
        selector.observe(self._on_facet(name), names="value")
        search_box.observe(lambda _: self._fill_facet(name), names="value")
        self.facet_titles[name] = title
        self.facet_selectors[name] = selector
        self.filters[name] = search_box
        self.facet_box.children = (*self.facet_box.children, W.VBox([title, search_box, selector]))

    def _on_facet(self, name: str) -> Callable[[Any], None]:
        def changed(change: Any) -> None:
            if self._updating:
                return
            self.selections = {**self.selections, name: list(change["new"])}
            self.selections = {k: v for k, v in self.selections.items() if v}
            self.search()

        return changed

    def _show_facets(self, result: SearchResult) -> None:
        for name, display_name in (
            result.facets[["facet", "display_name"]].drop_duplicates("facet").itertuples(False)
        ):
            self._add_facet(str(name), display_name)
        for name in self.facet_selectors:
            self._fill_facet(name)

    def option_counts(self, name: str) -> pd.DataFrame:
        """The categories of facet ``name`` the selector lists (after its filter and the
        ``top_n`` cut, selected ones always kept): columns category, count, selected."""
        if self._result is None:
            return pd.DataFrame({"category": [], "count": [], "selected": []})
        facets = self._result.facets
        rows = facets.loc[facets["facet"] == name, ["category", "count", "selected"]]
        chosen = set(self.selections.get(name, []))
        rows = rows.assign(selected=rows["category"].isin(chosen))
        needle = str(self.filters[name].value).strip().casefold() if name in self.filters else ""
        if needle:
            rows = rows[rows["category"].str.casefold().str.contains(needle, regex=False)]
        top = rows.head(self.top_n)
        kept = rows[rows["selected"] & ~rows["category"].isin(top["category"])]
        return pd.concat([top, kept], ignore_index=True)

    def _fill_facet(self, name: str) -> None:
        with self._guard():
            shown = self.option_counts(name)
            options = [
                (option_label(str(category), int(count)), str(category))
                for category, count in zip(shown["category"], shown["count"], strict=True)
            ]
            selected = tuple(self.selections.get(name, []))
            values = [value for _, value in options]
            options.extend((option_label(c, 0), c) for c in selected if c not in values)
            self._updating = True
            try:
                self.facet_selectors[name].options = options
                self.facet_selectors[name].value = selected
            finally:
                self._updating = False
            facets = None if self._result is None else self._result.facets
            total = 0 if facets is None else int((facets["facet"] == name).sum())
            label = f"<b>{html.escape(self._facet_names[name])}</b>"
            if total > len(shown):
                label += f" <small>({len(shown)} of {total:,}; filter to find more)</small>"
            self.facet_titles[name].value = label

    # -- page and details ----------------------------------------------------------------------

    def _show_page(self, result: SearchResult) -> None:
        pages = result.page_count
        self.page_label.value = f"page {self.page + 1} of {pages} · {result.total:,} matches"
        self.prev_button.disabled = self.page <= 0
        self.next_button.disabled = self.page >= pages - 1
        self.table.value = _table_html(self._frame)
        options: list[tuple[str, str | None]] = [(_NO_ROW, None)]
        options.extend(
            (f"{row.name} ({row.source}:{row.path})", str(row.key))
            for row in self._frame[["key", "name", "source", "path"]].itertuples(False)
        )
        self.rows.options = options
        self.rows.value = None

    def _on_row(self, change: Any) -> None:
        if change["new"] != self.selected_key:
            self.select(change["new"])

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
