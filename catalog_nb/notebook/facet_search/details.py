"""The chosen row of the search panel: the resource a click on a row (or ``grid.value`` set from
code) opens in the details pane, its fields, and "load into a DataFrame" for it.

:class:`RowDetails` is the part of :class:`~catalog_nb.notebook.FacetSearch` that works on that
one resource; the panel owns the widgets and the error line it uses (:class:`PanelParts`).

Example::

    panel.rows.value = panel.frame["key"][0]    # what a click on the first row does
    panel.selected                              # its fields with statistics
    print(panel.load_code())                    # the pandas code reading its data
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Any, Protocol

import ipywidgets as W
import pandas as pd

from catalog_nb.client import Catalog, Resource
from catalog_nb.client.frames import empty_frame
from catalog_nb.client.resources.frames import FIELD_COLUMNS
from catalog_nb.notebook.facet_search.loading import load_code, put_in_next_cell, run_load_code
from catalog_nb.notebook.facet_search.notes import tags_html

__all__ = ["PanelParts", "RowDetails"]


class PanelParts(Protocol):
    """What :class:`RowDetails` uses of the panel it is part of."""

    cat: Catalog
    details: W.HTML
    load_button: W.Button
    selected_key: str | None
    _resource: Resource | None
    _quiet: bool

    def _guard(self) -> AbstractContextManager[None]: ...

    def select(self, key: str | None) -> None: ...

    def load_code(self) -> str: ...


class RowDetails:
    """The details pane and the "load into a DataFrame" action of the search panel."""

    #: The resource in the details pane (the panel starts it at ``None``).
    _resource: Resource | None

    @property
    def selected(self: PanelParts) -> pd.DataFrame:
        """The fields (with statistics) of the resource in the details pane; empty when none."""
        if self._resource is None:
            return empty_frame(FIELD_COLUMNS)
        return self._resource.fields

    @property
    def selected_resource(self: PanelParts) -> Resource | None:
        """The :class:`~catalog_nb.client.Resource` in the details pane, or ``None``."""
        return self._resource

    def select(self: PanelParts, key: str | None) -> None:
        """Show the resource ``key`` in the details pane (``None`` clears it)."""
        with self._guard():
            # The button before the pane: the browser gets the changes in this order, so
            # whoever sees a resource's details can load it at once.
            if key is None:
                self._resource = None
                self.load_button.disabled = True
                self.details.value = ""
            else:
                resource = self.cat.resource(key)
                self._resource = resource
                self.load_button.disabled = False
                self.details.value = resource._repr_html_() + tags_html(resource)
            self.selected_key = key
        self.load_button.disabled = self._resource is None  # also after a failed read

    def load_code(self: PanelParts) -> str:
        """pandas code reading the selected resource's data into ``frame``.

        Raises:
            ValueError: no resource is selected, or its kind of data cannot be read by pandas.
        """
        if self._resource is None:
            raise ValueError("Choose a result first: click a row of the results.")
        source = self.cat.source(str(self._resource.source))
        return load_code(self._resource.raw, source)

    def load(self: PanelParts) -> pd.DataFrame:
        """The selected resource's data as a DataFrame (runs :meth:`load_code`)."""
        return run_load_code(self.load_code())

    def put_load_code(self: PanelParts) -> str:
        """Put :meth:`load_code` into the notebook's next cell (what the button does) and
        return it; outside IPython it is only returned."""
        code = ""
        with self._guard():
            code = put_in_next_cell(self.load_code())
        return code

    def _on_row(self: PanelParts, change: Any) -> None:
        if not self._quiet and change["new"] != self.selected_key:
            self.select(change["new"])
