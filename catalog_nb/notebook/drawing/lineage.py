"""The lineage picture: :func:`draw_lineage`, columns left to right by distance from the
root, edges styled by lineage type."""

from __future__ import annotations

from typing import Any, Literal

import networkx as nx
import numpy as np
from matplotlib.axes import Axes
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from catalog_nb.notebook.drawing import layout as lay
from catalog_nb.notebook.drawing.common import _axes, _check_max, _nothing

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
    from the graph's sources (for :meth:`Catalog.lineage_graph`). Node colour by resource
    type, the root ringed; FACTUAL edges solid, INFERRED dashed. Beyond ``max_nodes`` nodes,
    each column's resources are grouped per data source (then per column) into one node
    labelled with their count. The legend lists the lineage types, resource types and groups.

    Example::

        draw_lineage(cat.lineage(key, upstream=3, downstream=3), max_nodes=40)
    """
    _check_max("max_nodes", max_nodes, 2)
    ax = _axes(ax, (11, 6))
    if graph.number_of_nodes() == 0:
        return _nothing(ax, "the lineage graph is empty")
    shown, layers, title_note = _lineage_shown(graph, max_nodes)
    pos = lay.layered_positions(shown, layers)
    root = graph.graph.get("root")
    kinds = _draw_lineage_nodes(ax, shown, pos, root)
    types_seen = _draw_lineage_edges(ax, shown, pos)
    nodes = list(shown.nodes)
    _labels(ax, pos, {n: lay.node_label(shown.nodes[n], n) for n in nodes}, below=True)
    ys = [y for _, y in pos.values()]
    # Room for the labels under the lowest nodes and for the ring above the highest.
    ax.set_ylim(min(ys) - 0.6, max(ys) + 0.4)
    _lineage_legend(ax, types_seen, kinds, root in shown)
    _lineage_axis(ax, graph, layers)
    name = graph.nodes[root].get("name") if root in graph else None
    ax.set_title(f"Lineage of {name}{title_note}" if name else f"Lineage{title_note}")
    return ax


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


def _draw_lineage_nodes(
    ax: Axes, shown: nx.DiGraph, pos: dict[Any, tuple[float, float]], root: Any
) -> list[str]:
    """The nodes, coloured by resource type, the root larger and ringed; returns the types."""
    nodes = list(shown.nodes)
    kinds = [shown.nodes[n].get("resource_type") or "group" for n in nodes]
    collection = nx.draw_networkx_nodes(
        shown,
        pos,
        nodelist=nodes,
        ax=ax,
        node_size=[700 if n == root else 420 for n in nodes],
        node_color=[_TYPE_COLOURS.get(k, "#8172B3") for k in kinds],
        edgecolors=["black" if n == root else "white" for n in nodes],
        linewidths=[2.5 if n == root else 1.0 for n in nodes],
    )
    collection.set_gid("nodes")
    return kinds


def _draw_lineage_edges(
    ax: Axes, shown: nx.DiGraph, pos: dict[Any, tuple[float, float]]
) -> set[str]:
    """The edges, styled by lineage type and widened by count; returns the types drawn."""
    types_seen: set[str] = set()
    for lineage_type, (colour, style) in _EDGE_STYLES.items():
        edges = [(u, v) for u, v, t in shown.edges(data="lineage_type") if t == lineage_type]
        if edges:
            types_seen.add(lineage_type)
            widths = [1.0 + min(shown.edges[e].get("count", 1), 10) * 0.3 for e in edges]
            nx.draw_networkx_edges(
                shown,
                pos,
                edgelist=edges,
                ax=ax,
                edge_color=colour,
                style=style,
                width=widths,
                arrows=True,
                arrowstyle="-|>",
                arrowsize=14,
                node_size=500,
                connectionstyle="arc3,rad=0.05",
            )
    return types_seen


def _lineage_legend(ax: Axes, types_seen: set[str], kinds: list[str], has_root: bool) -> None:
    """The legend: lineage types drawn, resource types (and groups) drawn, the root's ring."""
    handles: list[Any] = [
        Line2D([0], [0], color=_EDGE_STYLES[t][0], linestyle=_EDGE_STYLES[t][1], label=t)
        for t in sorted(types_seen)
    ]
    handles += [Patch(color=_TYPE_COLOURS.get(k, "#8172B3"), label=k) for k in sorted(set(kinds))]
    if has_root:
        handles.append(
            Line2D(
                [0],
                [0],
                marker="o",
                color="white",
                markeredgecolor="black",
                markeredgewidth=2,
                markersize=10,
                label="root",
            )
        )
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8)


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
    ax.set_xlim(min(columns) - 0.6, max(columns) + 0.6)


def _labels(ax: Axes, pos: dict[Any, tuple[float, float]], labels: dict[Any, str],
            below: bool) -> None:
    """Node labels just under (or over) their nodes, offset in points so the distance does not
    depend on the layout's scale, on a light box so crossing edges do not hide them."""
    for node, text in labels.items():
        ax.annotate(
            text, xy=pos[node], xytext=(0, -13 if below else 9), textcoords="offset points",
            ha="center", va="top" if below else "bottom", fontsize=8, zorder=5,
            bbox={"boxstyle": "round,pad=0.15", "facecolor": "white", "edgecolor": "none",
                  "alpha": 0.8},
        )
