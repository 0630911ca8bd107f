"""The lineage picture: :func:`draw_lineage`, columns left to right by distance from the
root, edges styled by lineage type."""

from __future__ import annotations

from typing import Any, Literal

import networkx as nx
import numpy as np
from matplotlib.axes import Axes
from matplotlib.colors import to_rgb
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from catalog_nb.notebook.drawing import layout as lay
from catalog_nb.notebook.drawing import routes
from catalog_nb.notebook.drawing.common import (
    LEGEND_SIZE,
    TITLE_SIZE,
    _axes,
    _check_max,
    _inches,
    _nothing,
)

__all__ = ["draw_lineage"]

_TYPE_COLOURS = {
    "table": "#4C72B0",
    "view": "#55A868",
    "file": "#DD8452",
    "collection": "#C44E52",
    "group": "#9A9A9A",
}
_EDGE_STYLES: dict[str, tuple[str, Literal["solid", "dashed"]]] = {
    "FACTUAL": ("#333333", "solid"),
    "INFERRED": ("#1f77b4", "dashed"),
}


def draw_lineage(graph: nx.DiGraph, ax: Axes | None = None, max_nodes: int = 60) -> Axes:
    """Draw a lineage graph left to right: upstream columns left, downstream right.

    Columns are the nodes' ``distance`` (from :meth:`Catalog.lineage`), or the longest path
    from the graph's sources (for :meth:`Catalog.lineage_graph`). Each resource is its name in
    a box tinted by resource type, the root's framed in black; FACTUAL edges solid, INFERRED
    dashed. The order within each column crosses as few edges as the barycentre method finds
    (:mod:`~catalog_nb.notebook.drawing.layered`), and edges run between the boxes, never
    through a name: an edge spanning several columns passes each column between two boxes.
    Beyond ``max_nodes`` nodes, each column's resources are grouped per data source (then per
    column) into one node labelled with their count. Names are 9 pt, 8 pt where space is
    short, never less: a graph too big for the axes at 8 pt grows its figure instead. The
    legend, outside the drawing, lists the lineage types, resource types and groups.

    Example::

        draw_lineage(cat.lineage(key, upstream=3, downstream=3), max_nodes=40)
    """
    _check_max("max_nodes", max_nodes, 2)
    ax = _axes(ax, (11, 6))
    if graph.number_of_nodes() == 0:
        return _nothing(ax, "the lineage graph is empty")
    shown, layers, title_note = _lineage_shown(graph, max_nodes)
    root = graph.graph.get("root")
    labels = {n: lay.node_label(shown.nodes[n], n) for n in shown}
    drawing = routes.route(shown, layers, labels, _inches(ax))
    if _grown(ax, drawing.needed):
        drawing = routes.route(shown, layers, labels, _inches(ax))
    kinds = _draw_boxes(ax, shown, drawing, labels, root)
    types_seen = _draw_edges(ax, shown, drawing)
    ax.set_xlim(*drawing.xlim)
    ax.set_ylim(*drawing.ylim)
    _lineage_legend(ax, types_seen, kinds, root in shown)
    _lineage_axis(ax, graph, layers)
    name = graph.nodes[root].get("name") if root in graph else None
    ax.set_title(f"Lineage of {name}{title_note}" if name else f"Lineage{title_note}",
                 fontsize=TITLE_SIZE)
    return ax


def _grown(ax: Axes, needed: tuple[float, float]) -> bool:
    """Grow the figure until the axes are ``needed`` inches (names are never shrunk under
    :data:`~.routes.MIN_FONT`: a big graph makes a bigger picture); whether it grew."""
    have = _inches(ax)
    if needed[0] <= have[0] * 1.01 and needed[1] <= have[1] * 1.01:
        return False
    figure = ax.get_figure(root=True)
    width, height = figure.get_size_inches()  # type: ignore[union-attr]
    box = ax.get_position()
    figure.set_size_inches(max(width, needed[0] / box.width * 1.02),  # type: ignore[union-attr]
                           max(height, needed[1] / box.height * 1.02))
    return True


def _lineage_shown(
    graph: nx.DiGraph, max_nodes: int
) -> tuple[nx.DiGraph, dict[Any, Any], str]:
    """The graph to draw, its columns, and the title's note: beyond ``max_nodes`` nodes each
    column's resources are grouped per data source, then (still too many) per column."""
    layers = lay.layers(graph)
    if graph.number_of_nodes() <= max_nodes:
        return graph, layers, ""
    shown, layers = lay.group_lineage(graph, layers, by_source=True)
    if shown.number_of_nodes() > max_nodes:
        shown, layers = lay.group_lineage(graph, lay.layers(graph), by_source=False)
    note = f" ({graph.number_of_nodes()} resources grouped into {shown.number_of_nodes()} nodes)"
    return shown, layers, note


def _tint(colour: str, share: float = 0.82) -> tuple[float, float, float]:
    """The colour mixed with white: a box light enough for black text."""
    red, green, blue = to_rgb(colour)
    return (red + (1 - red) * share, green + (1 - green) * share, blue + (1 - blue) * share)


def _draw_boxes(ax: Axes, shown: nx.DiGraph, drawing: routes.Routed, labels: dict[Any, str],
                root: Any) -> list[str]:
    """Each resource's name in a box tinted by its type (the root's framed in black, a
    group's dashed); returns the types drawn."""
    kinds = []
    for node in shown:
        kind = shown.nodes[node].get("resource_type") or "group"
        kinds.append(kind)
        colour = _TYPE_COLOURS.get(kind, "#8172B3")
        x, y = drawing.centres[node]
        ax.text(x, y, labels[node], ha="center", va="center", fontsize=drawing.font_size,
                zorder=5, gid="node", linespacing=routes.LINE_SPACING,
                bbox={"boxstyle": f"round,pad={routes.PAD}", "facecolor": _tint(colour),
                      "edgecolor": "black" if node == root else colour,
                      "linewidth": 2.2 if node == root else 1.2,
                      "linestyle": "--" if kind == "group" else "-"})
    return kinds


def _draw_edges(ax: Axes, shown: nx.DiGraph, drawing: routes.Routed) -> set[str]:
    """Each edge along its route, styled by lineage type and widened by count, its arrow
    head at the downstream box; returns the lineage types drawn."""
    types_seen: set[str] = set()
    for (u, v), points in drawing.paths.items():
        attrs = shown.edges[u, v]
        lineage_type = attrs.get("lineage_type") or "FACTUAL"
        colour, style = _EDGE_STYLES.get(lineage_type, ("#777777", "solid"))
        types_seen.add(lineage_type)
        width = 1.0 + min(int(attrs.get("count") or 1), 10) * 0.25
        xs, ys = zip(*points, strict=True)
        ax.plot(xs, ys, color=colour, linestyle=style, linewidth=width, zorder=2, gid="edge",
                solid_capstyle="butt")
        ax.annotate("", xy=points[-1], xytext=points[-2], zorder=3, gid="arrow",
                    arrowprops={"arrowstyle": "-|>", "color": colour, "linewidth": width,
                                "mutation_scale": 11, "shrinkA": 0, "shrinkB": 0})
    return types_seen


def _lineage_legend(ax: Axes, types_seen: set[str], kinds: list[str], has_root: bool) -> None:
    """The legend: lineage types drawn, resource types (and groups) drawn, the root's ring."""
    handles: list[Any] = [
        Line2D([0], [0], color=_EDGE_STYLES[t][0], linestyle=_EDGE_STYLES[t][1], label=t)
        for t in sorted(types_seen)
    ]
    handles += [Patch(facecolor=_tint(_TYPE_COLOURS.get(k, "#8172B3")),
                      edgecolor=_TYPE_COLOURS.get(k, "#8172B3"), linewidth=1.2, label=k)
                for k in sorted(set(kinds))]
    if has_root:
        handles.append(Patch(facecolor="white", edgecolor="black", linewidth=2.2, label="root"))
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=LEGEND_SIZE)


def _lineage_axis(ax: Axes, graph: nx.DiGraph, layers: dict[Any, Any]) -> None:
    """The x axis: one tick per column, signed distances from the root when nodes carry them."""
    columns = sorted(set(layers.values()))
    # networkx hides tick labels; the columns' distances are worth showing
    ax.tick_params(axis="x", bottom=True, labelbottom=True)
    ax.set_xticks(columns)
    by_distance = all(isinstance(d, int | np.integer) for _, d in graph.nodes(data="distance"))
    ax.set_xticklabels([f"{c:+d}" if c and by_distance else str(c) for c in columns])
    ax.set_xlabel("distance from the root" if by_distance else "level (longest path from a source)")
    ax.set_yticks([])
    for side in ("top", "right", "left"):
        ax.spines[side].set_visible(False)
