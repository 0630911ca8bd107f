"""The notebook toolkit: widgets, graph drawings, audits and exports over the client.

* :func:`open_catalog` (:mod:`.session`): the catalog named by ``CATALOG_URL``, or the embedded
  demo catalog, started on first use.
* :class:`FacetSearch` (:mod:`.widgets`): the facet search panel.
* ``draw_*`` (:mod:`.drawing`): matplotlib pictures of the graphs the client builds
  (``cat.lineage``, ``cat.join_graph``, ``cat.tag_coverage``, ``cat.tag_graph``,
  ``cat.overlap_matrix``).
* :mod:`catalog_nb.notebook.audits` (short name ``audit``): hygiene checks returning findings
  frames (``run_all``).
* :mod:`catalog_nb.notebook.export`: Excel, CSV and HTML exports and the stewards' sheet round
  trip (needs ``pip install catalog-nb[reports]``; imported on use).

Example::

    from catalog_nb.notebook import FacetSearch, draw_lineage, open_catalog

    cat = open_catalog()
    FacetSearch(cat, "customers")      # the facet search panel
    draw_lineage(cat.lineage(cat.resources("demo_sql").key[0], upstream=3))
"""

from __future__ import annotations

from catalog_nb.notebook.drawing import (
    draw_join_graph,
    draw_lineage,
    draw_overlap_matrix,
    draw_tag_coverage,
    draw_tag_graph,
)
from catalog_nb.notebook.session import open_catalog
from catalog_nb.notebook.widgets import FacetSearch

__all__ = [
    "FacetSearch",
    "draw_join_graph",
    "draw_lineage",
    "draw_overlap_matrix",
    "draw_tag_coverage",
    "draw_tag_graph",
    "open_catalog",
]
