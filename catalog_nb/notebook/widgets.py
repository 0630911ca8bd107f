"""The facet search panel, :class:`FacetSearch` (kept under this name for existing imports;
it lives in :mod:`catalog_nb.notebook.facet_search`).

Example::

    from catalog_nb.notebook.widgets import FacetSearch

    FacetSearch(cat, "customers")
"""

from __future__ import annotations

from catalog_nb.notebook.facet_search import (
    DEFAULT_TOP_N,
    SORT_OPTIONS,
    TABLE_COLUMNS,
    FacetSearch,
    option_label,
)

__all__ = ["DEFAULT_TOP_N", "SORT_OPTIONS", "TABLE_COLUMNS", "FacetSearch", "option_label"]
