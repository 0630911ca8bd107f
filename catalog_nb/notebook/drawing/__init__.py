"""Matplotlib pictures of the catalog's graphs and coverage frames.

Each function takes what a :class:`~catalog_nb.client.catalog.Catalog` method returns, draws it
on ``ax`` (a new figure when ``None``) and returns the Axes. Big inputs are aggregated, never
drawn as a hairball: beyond ``max_nodes`` nodes, resources are grouped (per lineage layer and
data source, per data source, or into one "others" node) and the title says what was grouped.
An empty input draws a "nothing to draw" note. The grouping rules and layouts live in
:mod:`catalog_nb.notebook.drawing.layout`, the helpers the pictures share in
:mod:`~catalog_nb.notebook.drawing.common`.

* :func:`draw_lineage` (:mod:`.lineage`): :meth:`Catalog.lineage` /
  :meth:`Catalog.lineage_graph`, layered left to right by distance (upstream left), edge style
  by lineage type.
* :func:`draw_join_graph` (:mod:`.joins`): :meth:`Catalog.join_graph`, colours by data source,
  edge width by score, edge colour by cardinality, edges labelled with their columns, copies
  one node.
* :func:`draw_tag_coverage` (:mod:`.tags`): :meth:`Catalog.tag_coverage`, bars of tagged
  shares.
* :func:`draw_tag_graph` (:mod:`.tags`): :meth:`Catalog.tag_graph`, tags left, resources right.
* :func:`draw_overlap_matrix` (:mod:`.overlap`): :meth:`Catalog.overlap_matrix`, a heatmap.
* :func:`draw_audit_events` (:mod:`.charts`): :meth:`Catalog.audit_events`, events per user
  stacked by action.

Text is 9 pt at the default figure sizes (titles 11 pt) and legends sit beside the axes or
above the data, never over it.

Example::

    from catalog_nb.notebook.drawing import draw_lineage
    draw_lineage(cat.lineage(("demo_sql", "sales.top_customers"), upstream=3))
"""

from __future__ import annotations

from catalog_nb.notebook.drawing.charts import draw_audit_events
from catalog_nb.notebook.drawing.joins import draw_join_graph
from catalog_nb.notebook.drawing.lineage import draw_lineage
from catalog_nb.notebook.drawing.overlap import draw_overlap_matrix
from catalog_nb.notebook.drawing.tags import COVERAGE_LEVELS, draw_tag_coverage, draw_tag_graph

__all__ = [
    "COVERAGE_LEVELS",
    "draw_audit_events",
    "draw_join_graph",
    "draw_lineage",
    "draw_overlap_matrix",
    "draw_tag_coverage",
    "draw_tag_graph",
]
