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

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from catalog_nb.notebook.drawing import (
        draw_audit_events,
        draw_join_graph,
        draw_lineage,
        draw_overlap_matrix,
        draw_tag_coverage,
        draw_tag_graph,
    )
    from catalog_nb.notebook.session import open_catalog
    from catalog_nb.notebook.widgets import FacetSearch

#: Where each public name lives. They are imported on first use: the demo server and the job
#: processes import ``catalog_nb.notebook.session`` alone, and matplotlib, networkx and
#: ipywidgets (about 2 s of imports) are for the notebook's pictures and widgets only.
_HOMES = {
    "FacetSearch": "catalog_nb.notebook.widgets",
    "draw_audit_events": "catalog_nb.notebook.drawing",
    "draw_join_graph": "catalog_nb.notebook.drawing",
    "draw_lineage": "catalog_nb.notebook.drawing",
    "draw_overlap_matrix": "catalog_nb.notebook.drawing",
    "draw_tag_coverage": "catalog_nb.notebook.drawing",
    "draw_tag_graph": "catalog_nb.notebook.drawing",
    "open_catalog": "catalog_nb.notebook.session",
}

__all__ = [
    "FacetSearch",
    "draw_audit_events",
    "draw_join_graph",
    "draw_lineage",
    "draw_overlap_matrix",
    "draw_tag_coverage",
    "draw_tag_graph",
    "open_catalog",
]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value  # once: the next lookup does not come here
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_HOMES})
