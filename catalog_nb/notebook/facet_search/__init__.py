"""The facet search panel of the notebook toolkit, :class:`FacetSearch`, by what each module
holds:

* :mod:`.panel`: the panel (state, actions, layout) that code and clicks drive alike;
* :mod:`.details`: the clicked row's details pane and "load into a DataFrame";
* :mod:`.facets`: the facet column (checkbox groups, filter chips);
* :mod:`.views`: the browser-side pieces (anywidget): the results grid and the checklists;
* :mod:`.formatting`: counts, sizes, times, highlighted terms, folded partitions, static HTML;
* :mod:`.loading`: the pandas code of "load into a DataFrame".

Example::

    from catalog_nb.notebook import FacetSearch

    panel = FacetSearch(cat, "customers")
    panel
"""

from __future__ import annotations

from catalog_nb.notebook.facet_search.facets import option_label
from catalog_nb.notebook.facet_search.formatting import COLUMNS
from catalog_nb.notebook.facet_search.panel import DEFAULT_TOP_N, SORT_OPTIONS, FacetSearch

__all__ = ["COLUMNS", "DEFAULT_TOP_N", "SORT_OPTIONS", "TABLE_COLUMNS", "FacetSearch",
           "option_label"]

#: Frame columns the results grid shows (the path under the name, type with format).
TABLE_COLUMNS = ("name", "path", "source", "type", "format", "tags", "rows", "size",
                 "modified", "score")
