"""The two browser-side pieces of the facet search panel, as anywidget widgets.

* :class:`ResultsGrid`: the results table; its ``value`` is the key of the row clicked (the
  details pane follows it), its ``sort`` the field its headers sort by (``-`` for descending).
* :class:`CheckList`: one facet as checkboxes; ``options`` are ``(label, category)`` pairs,
  ``value`` the tuple of ticked categories (as ``ipywidgets.SelectMultiple`` has them, so code
  drives it the same way).

anywidget ships each front end (a small ES module and a style sheet in this package) with the
widget's state, so the pieces render wherever ipywidgets do (JupyterLab, Notebook 7, VS Code,
Voila) and in a saved notebook's widget state, with no extension to install.

Example::

    grid = ResultsGrid(columns=[c.as_json() for c in COLUMNS], rows=grid_rows(frame, []))
    grid.observe(lambda change: print("clicked", change.new), names="value")
"""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any

import anywidget
import ipywidgets as W
import traitlets

from catalog_nb.notebook.facet_search.formatting import COLUMNS, static_table

__all__ = ["CheckList", "GridHtml", "PanelBox", "ResultsGrid"]

_HERE = Path(__file__).parent
_CSS = _HERE / "style.css"


class ResultsGrid(anywidget.AnyWidget):
    """The results table: sortable headers, clickable rows, folded partitions.

    Traits (synced with the browser): ``columns`` (:data:`COLUMNS` as JSON), ``rows`` (from
    :func:`~.formatting.grid_rows`), ``value`` (the clicked row's key, ``None`` when none),
    ``sort`` (``"name"``, ``"-size"``...), ``message`` (a note above the table, e.g. why
    nothing matched).
    """

    _esm = _HERE / "grid.js"
    _css = _CSS
    columns = traitlets.List([c.as_json() for c in COLUMNS]).tag(sync=True)
    rows: traitlets.List[dict[str, Any]] = traitlets.List([]).tag(sync=True)
    value = traitlets.Unicode(None, allow_none=True).tag(sync=True)
    sort = traitlets.Unicode("-score").tag(sync=True)
    message = traitlets.Unicode("").tag(sync=True)

    @property
    def options(self) -> list[tuple[str, str]]:
        """``(name, key)`` of every row that can be clicked (partitions included)."""
        out: list[tuple[str, str]] = []
        for row in self.rows:
            for one in (row, *row.get("children", [])):
                if one.get("key"):
                    out.append((str(one["name"]), str(one["key"])))
        return out

    def to_html(self) -> str:
        """The grid as static HTML (the message, then the table)."""
        note = f"<p><i>{html.escape(self.message)}</i></p>" if self.message else ""
        return note + static_table(self.rows)


class CheckList(anywidget.AnyWidget):
    """One facet's categories as checkboxes (``options``: ``(label, category)`` pairs;
    ``value``: the ticked categories)."""

    _esm = _HERE / "checklist.js"
    _css = _CSS
    options: traitlets.List[Any] = traitlets.List([]).tag(sync=True)
    value = traitlets.Tuple(()).tag(sync=True)

    @traitlets.validate("options")
    def _pairs(self, proposal: Any) -> list[tuple[str, str]]:
        return [(str(label), str(value)) for label, value in proposal["value"]]


class GridHtml:
    """``panel.table``: the results page as static HTML (``.value``)."""

    def __init__(self, grid: ResultsGrid) -> None:
        self._grid = grid

    @property
    def value(self) -> str:
        return self._grid.to_html()


class PanelBox(W.VBox):
    """The panel's top box: a widget that also carries a static HTML rendering, so a saved
    notebook shows the results where no widget manager runs (GitHub, an untrusted viewer)."""

    def __init__(self, children: list[Any], owner: Any) -> None:
        super().__init__(children)
        self._owner = owner

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        bundle = dict(super()._repr_mimebundle_(**kwargs) or {})
        bundle["text/html"] = self._owner.to_html()
        return bundle
