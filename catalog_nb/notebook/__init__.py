"""The notebook toolkit: widgets, graphs, plots, audits and exports over the client.

Example::

    from catalog_nb.notebook import FacetSearch

    FacetSearch(cat, "customers")      # the facet search panel
"""

from __future__ import annotations

from catalog_nb.notebook.widgets import FacetSearch

__all__ = ["FacetSearch"]
