"""The join graph picture: :func:`draw_join_graph`, resources coloured by data source, edges
by score and cardinality, labelled with their columns where they cover no other label."""

from __future__ import annotations

from typing import Any

import networkx as nx
import numpy as np
from matplotlib.axes import Axes
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from catalog_nb.notebook.drawing import layout as lay
from catalog_nb.notebook.drawing.common import _axes, _check_max, _inches, _nothing, _palette

__all__ = ["draw_join_graph"]

_CARDINALITY_COLOURS = {"1:1": "#2ca02c", "1:N": "#1f77b4", "N:1": "#1f77b4", "N:M": "#d62728"}


def draw_join_graph(
    graph: nx.Graph,
    ax: Axes | None = None,
    max_nodes: int = 60,
    edge_labels: bool = True,
    strongest: bool = True,
) -> Axes:
    """Draw a join graph: resources coloured by data source, edge width by best score, edge
    colour by cardinality of the best condition, each edge labelled with its columns read from
    the foreign side to the key (``o_custkey → c_custkey``; ``edge_labels=False`` leaves them
    out). A group of copies merged by :meth:`Catalog.join_graph` is one node listing its
    members. Self-joins are not drawn.

    ``strongest=True`` draws, for each referring column of a resource, only its strongest
    join (:func:`~catalog_nb.notebook.drawing.layout.strongest_joins`): an order's customer
    id joins the customers, not also every view and subset of them; the title counts the
    alternatives left out (``cat.join_conditions()`` lists them all).

    Each connected component is laid out apart, in the layout whose edges cross least. Beyond
    ``max_nodes`` nodes the best-connected ``max_nodes - 1`` resources are drawn and the rest
    merged into one "N other resources" node (its edges count the joins into it). The title
    says how many tables, resources and joins are drawn, and from which score.

    Example::

        draw_join_graph(cat.join_graph("demo_sql"))             # score >= 0.85, copies merged
        draw_join_graph(cat.join_graph(min_score=0.5), edge_labels=False)
    """
    _check_max("max_nodes", max_nodes, 2)
    ax = _axes(ax, (10, 8))
    if graph.number_of_nodes() == 0:
        return _nothing(ax, "no join conditions")
    shown, merged = lay.strongest_joins(graph) if strongest else graph, 0
    hidden = int(shown.graph.get("hidden_joins") or 0)
    if shown.number_of_nodes() > max_nodes:
        shown, merged = lay.top_with_others(shown, max_nodes)
    shown = nx.Graph(shown)
    shown.remove_edges_from(list(nx.selfloop_edges(shown)))
    nodes = list(shown.nodes)
    labels = {n: lay.node_label(shown.nodes[n], n) for n in nodes}
    pos = lay.separate_boxes(lay.component_layout(shown), _label_boxes(labels), _inches(ax),
                             margin=_MARGINS[0])
    sources = [shown.nodes[n].get("source") or "?" for n in shown]
    colours = _palette(sources)
    collection = nx.draw_networkx_nodes(
        shown,
        pos,
        nodelist=nodes,
        ax=ax,
        node_size=380,
        edgecolors="white",
        node_color=[colours[shown.nodes[n].get("source") or "?"] for n in nodes],
    )
    collection.set_gid("nodes")
    cardinalities: set[str] = set()
    edges = list(shown.edges(data=True))
    if edges:
        edge_colours = []
        for _, _, attrs in edges:
            conditions = attrs.get("conditions") or []
            card = conditions[0].get("cardinality") if conditions else None
            card = card or "grouped"
            cardinalities.add(card)
            edge_colours.append(_CARDINALITY_COLOURS.get(card, "#999999"))
        nx.draw_networkx_edges(
            shown,
            pos,
            edgelist=[(u, v) for u, v, _ in edges],
            ax=ax,
            edge_color=edge_colours,
            width=[0.5 + 3.0 * float(a.get("score") or 0.0) for _, _, a in edges],
            alpha=0.8,
        )
        if edge_labels:
            _edge_labels(ax, pos, edges, _label_boxes(labels))
    for n in nodes:
        # a table is its name: the label sits on the node, framed in its source's colour,
        # so no label hangs over a neighbour's edges
        ax.annotate(
            labels[n], xy=pos[n], ha="center", va="center",
            fontsize=7.5, zorder=5,
            bbox={"boxstyle": "round,pad=0.3", "facecolor": "white",
                  "edgecolor": colours[shown.nodes[n].get("source") or "?"],
                  "linewidth": 2.0 if shown.nodes[n].get("members") else 1.2},
        )
    handles: list[Any] = [Patch(color=colours[s], label=str(s)) for s in sorted(colours, key=str)]
    handles += [
        Line2D([0], [0], color=_CARDINALITY_COLOURS.get(c, "#999999"), linewidth=2, label=c)
        for c in sorted(cardinalities)
    ]
    if any(shown.nodes[n].get("members") for n in nodes):
        handles.append(Patch(facecolor="white", edgecolor="#333333", linewidth=2.0,
                             label="= copies merged"))
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8)
    ax.set_axis_off()
    ax.margins(*_MARGINS)  # room for the labels of the outermost nodes
    ax.set_title(_join_title(graph, len(nodes), merged, hidden), fontsize=10)
    return ax


#: Margins (x, y) of a join graph's axes, shares of the data extent: half a label box.
_MARGINS = (0.12, 0.14)
#: Size in inches of one character and one line of a join graph's node label (7.5 pt text
#: with its box's padding).
_CHAR, _LINE = 0.068, 0.15


def _label_boxes(labels: dict[Any, str]) -> dict[Any, tuple[float, float]]:
    return {node: (max(len(line) for line in text.split("\n")) * _CHAR + 0.12,
                   text.count("\n") * _LINE + _LINE + 0.1)
            for node, text in labels.items()}


#: Size in inches of one character and one line of an edge label (6.5 pt).
_EDGE_CHAR, _EDGE_LINE = 0.055, 0.12
#: Where along its edge a label may sit (shares of the edge, from one end), middle first.
_ALONG = (0.5, 0.38, 0.62, 0.28, 0.72)


def _edge_labels(ax: Axes, pos: dict[Any, tuple[float, float]],
                 edges: list[tuple[Any, Any, dict[str, Any]]],
                 boxes: dict[Any, tuple[float, float]]) -> None:
    """Each edge's columns on the edge: at its middle, or slid along it to the first spot
    where the label covers neither a node's label (``boxes``, inches) nor another edge's."""
    points = np.array(list(pos.values()), dtype=float)
    span = np.ptp(points, axis=0)
    span[span == 0] = 1.0
    # inches per data unit, as separate_boxes reckons them
    scale = np.asarray(_inches(ax)) / (span * (1 + 2 * np.asarray(_MARGINS)))
    taken = [(np.asarray(pos[n]) * scale, np.asarray(size)) for n, size in boxes.items()]

    def free(centre: np.ndarray, size: np.ndarray) -> int:
        return sum(1 for other, extent in taken
                   if (np.abs(centre - other) < (size + extent) / 2).all())

    for u, v, attrs in edges:
        text = attrs.get("label") or (f"{attrs['count']} joins" if attrs.get("count") else "")
        if not text:
            continue
        lines = text.split("\n")
        size = np.array([max(map(len, lines)) * _EDGE_CHAR + 0.06, len(lines) * _EDGE_LINE])
        start, end = np.asarray(pos[u], dtype=float), np.asarray(pos[v], dtype=float)
        spots = [start + (end - start) * share for share in _ALONG]
        # an edge too short to carry its label gets it beside its middle, across the edge
        across = np.array([-(end - start)[1], (end - start)[0]]) * scale
        length = float(np.linalg.norm(across)) or 1.0
        for step in (1.0, -1.0, 2.0, -2.0):
            shift = across / length * step * (size[1] + 0.08)
            spots.append(spots[0] + shift / scale)
        spot = min(spots, key=lambda p: free(p * scale, size))  # the middle on ties
        taken.append((spot * scale, size))
        ax.text(float(spot[0]), float(spot[1]), text, fontsize=6.5, color="#333333",
                ha="center", va="center", zorder=4, gid="edge-label",
                bbox={"boxstyle": "round,pad=0.1", "facecolor": "white", "edgecolor": "none",
                      "alpha": 0.85})


def _join_title(graph: nx.Graph, drawn: int, merged: int, hidden: int) -> str:
    tables = graph.number_of_nodes()
    resources = int(graph.graph.get("resource_count") or tables)
    groups = int(graph.graph.get("copy_groups") or 0)
    what = f"{tables} resources"
    if groups:
        merged_groups = "group" if groups == 1 else "groups"
        what = f"{tables} tables ({resources} resources, {groups} {merged_groups} of copies merged)"
    floor = graph.graph.get("min_score")
    scored = f", score \u2265 {float(floor):.2f}" if floor else ""
    note = f"; top {drawn - 1} shown, {merged} grouped" if merged else ""
    alternatives = "alternative" if hidden == 1 else "alternatives"
    weaker = f"\n(strongest per column drawn: {hidden} weaker {alternatives} left out)" \
        if hidden else ""
    return f"Join graph: {what}, {graph.number_of_edges()} joins{scored}{note}{weaker}"
