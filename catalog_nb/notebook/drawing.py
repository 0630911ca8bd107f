"""Matplotlib pictures of the catalog's graphs and coverage frames.

Each function takes what a :class:`~catalog_nb.client.catalog.Catalog` method returns, draws it
on ``ax`` (a new figure when ``None``) and returns the Axes. Big inputs are aggregated, never
drawn as a hairball: beyond ``max_nodes`` nodes, resources are grouped (per lineage layer and
data source, per data source, or into one "others" node) and the title says what was grouped.
An empty input draws a "nothing to draw" note. The grouping rules and layouts live in
:mod:`catalog_nb.notebook.drawing_layout`.

* :func:`draw_lineage`: :meth:`Catalog.lineage` / :meth:`Catalog.lineage_graph`, layered left
  to right by distance (upstream left), edge style by lineage type.
* :func:`draw_join_graph`: :meth:`Catalog.join_graph`, colours by data source, edge width by
  score, edge colour by cardinality, edges labelled with their columns, copies one node.
* :func:`draw_tag_coverage`: :meth:`Catalog.tag_coverage`, bars of tagged shares.
* :func:`draw_tag_graph`: :meth:`Catalog.tag_graph`, tags left, resources right.
* :func:`draw_overlap_matrix`: :meth:`Catalog.overlap_matrix`, a heatmap.

Example::

    from catalog_nb.notebook.drawing import draw_lineage
    draw_lineage(cat.lineage(("demo_sql", "sales.top_customers"), upstream=3))
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from typing import Any, Literal

import matplotlib.pyplot as plt
import networkx as nx
import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from catalog_nb.notebook import drawing_layout as lay

__all__ = [
    "COVERAGE_LEVELS",
    "draw_join_graph",
    "draw_lineage",
    "draw_overlap_matrix",
    "draw_tag_coverage",
    "draw_tag_graph",
]

#: Levels of :meth:`Catalog.tag_coverage` that :func:`draw_tag_coverage` can draw.
COVERAGE_LEVELS = ("source", "resource", "domain", "tag")

_NOTHING = "nothing to draw"
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
_CARDINALITY_COLOURS = {"1:1": "#2ca02c", "1:N": "#1f77b4", "N:1": "#1f77b4", "N:M": "#d62728"}


# -- shared helpers ----------------------------------------------------------------------------


def _axes(ax: Axes | None, size: tuple[float, float]) -> Axes:
    if ax is not None:
        return ax
    _, made = plt.subplots(figsize=size)
    return made


def _nothing(ax: Axes, what: str) -> Axes:
    ax.text(
        0.5,
        0.5,
        f"{_NOTHING}: {what}",
        ha="center",
        va="center",
        transform=ax.transAxes,
        color="#666666",
    )
    ax.set_axis_off()
    return ax


def _check_max(name: str, value: int, minimum: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ValueError(f"{name} must be a whole number of at least {minimum}, not {value!r}")


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


def _palette(names: Iterable[Any]) -> dict[Any, Any]:
    colours = plt.get_cmap("tab10").colors  # type: ignore[attr-defined]
    return {name: colours[i % len(colours)] for i, name in enumerate(sorted(set(names), key=str))}


# -- lineage -----------------------------------------------------------------------------------


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


# -- joins -------------------------------------------------------------------------------------


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
    join (:func:`~catalog_nb.notebook.drawing_layout.strongest_joins`): an order's customer
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


def _inches(ax: Axes) -> tuple[float, float]:
    width, height = ax.get_figure(root=True).get_size_inches()  # type: ignore[union-attr]
    box = ax.get_position()
    return float(width * box.width), float(height * box.height)


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


# -- tag coverage ------------------------------------------------------------------------------


def draw_tag_coverage(
    coverage: pd.DataFrame, ax: Axes | None = None, level: str = "source", max_bars: int = 30
) -> Axes:
    """Horizontal bars of the tagged share of fields and of resources at one ``level`` of
    :meth:`Catalog.tag_coverage` (``source``, ``resource``, ``domain`` or ``tag``; resource
    rows get the field share only).

    Beyond ``max_bars`` rows, the rows with the most fields are drawn and the rest summed into
    one "N others" bar (their pooled shares).

    Example::

        draw_tag_coverage(cat.tag_coverage(), level="resource", max_bars=20)
    """
    if level not in COVERAGE_LEVELS:
        raise ValueError(f"level must be one of {', '.join(COVERAGE_LEVELS)}, not {level!r}")
    _check_max("max_bars", max_bars, 2)
    missing = {"level", "name", "fields", "tagged_fields", "resources", "tagged_resources"}
    missing -= set(coverage.columns)
    if missing:
        raise ValueError(f"not a tag_coverage frame: no {', '.join(sorted(missing))} column")
    rows = coverage[coverage["level"] == level]
    ax = _axes(ax, (9, max(3.0, 0.35 * min(len(rows), max_bars + 1) + 1.5)))
    if rows.empty:
        return _nothing(ax, f"no {level} rows in the coverage")
    table = pd.DataFrame(
        {
            "name": rows["name"].astype("string").fillna("?").map(lay.short).tolist(),
            "fields": rows["fields"].fillna(0).astype(int).tolist(),
            "tagged_fields": rows["tagged_fields"].fillna(0).astype(int).tolist(),
            "resources": rows["resources"].fillna(0).astype(int).tolist(),
            "tagged_resources": rows["tagged_resources"].fillna(0).astype(int).tolist(),
        }
    )
    note = ""
    if len(table) > max_bars:
        table = table.sort_values(["fields", "name"], ascending=[False, True])
        head, rest = table.iloc[: max_bars - 1], table.iloc[max_bars - 1 :]
        pooled = rest[["fields", "tagged_fields", "resources", "tagged_resources"]].sum()
        table = pd.concat([head, pd.DataFrame([{"name": f"{len(rest)} others", **pooled}])])
        note = f" ({len(rows)} {level}s, {len(rest)} pooled)"

    def ratio(part: pd.Series, whole: pd.Series) -> np.ndarray:
        return np.where(whole > 0, part / whole.where(whole > 0, 1), 0.0)

    table["share"] = ratio(table["tagged_fields"], table["fields"])
    table["resource_share"] = ratio(table["tagged_resources"], table["resources"])
    table = table.sort_values(["share", "name"], ascending=[True, False]).reset_index(drop=True)
    y = np.arange(len(table))
    # one resource is tagged or not: its resource share says nothing a bar should show
    both = level != "resource"
    height = 0.4 if both else 0.7
    offset = height / 2 if both else 0.0
    ax.barh(y + offset, table["share"], height, color="#4C72B0", label="fields tagged")
    if both:
        ax.barh(
            y - offset, table["resource_share"], height, color="#DD8452", label="resources tagged"
        )
    for i, (share, fields) in enumerate(zip(table["share"], table["fields"], strict=True)):
        ax.text(
            min(float(share), 1.0) + 0.01,
            i + offset,
            f"{share:.0%} of {fields}",
            va="center",
            fontsize=7,
        )
    ax.set_yticks(y)
    ax.set_yticklabels(table["name"])
    ax.set_xlim(0, 1.15)
    ax.xaxis.set_major_formatter(plt.FuncFormatter(lambda v, _: f"{v:.0%}"))
    ax.legend(loc="lower right", fontsize=8)
    ax.set_title(f"Tag coverage per {level}{note}")
    return ax


# -- tag graph ---------------------------------------------------------------------------------


def draw_tag_graph(graph: nx.Graph, ax: Axes | None = None, max_nodes: int = 80) -> Axes:
    """Draw the bipartite tag graph of :meth:`Catalog.tag_graph`: tags in the left column
    (coloured by domain), resources in the right one; edge width by tagged field count.

    Beyond ``max_nodes`` nodes, resources are grouped per data source; if tags alone are
    still too many, the tags tagging most are kept and the rest merged into one node.

    Example::

        draw_tag_graph(cat.tag_graph("demo_files"))
    """
    _check_max("max_nodes", max_nodes, 4)
    ax = _axes(ax, (10, 8))
    if graph.number_of_nodes() == 0:
        return _nothing(ax, "no tagged resources")
    shown, note = graph, ""
    if graph.number_of_nodes() > max_nodes:
        shown = lay.group_resources(graph)
        groups = sum(1 for _, kind in shown.nodes(data="kind") if kind == "group")
        if shown.number_of_nodes() > max_nodes:
            shown = lay.top_tags(shown, max(1, max_nodes - groups - 1))
        note = f" ({graph.number_of_nodes()} nodes grouped into {shown.number_of_nodes()})"
    left = sorted(
        (n for n, k in shown.nodes(data="kind") if k == "tag"),
        key=lambda n: lay.node_label(shown.nodes[n], n),
    )
    right = sorted(
        (n for n, k in shown.nodes(data="kind") if k != "tag"),
        key=lambda n: lay.node_label(shown.nodes[n], n),
    )
    pos: dict[Hashable, tuple[float, float]] = {}
    for x, column in ((0.0, left), (1.0, right)):
        for i, node in enumerate(column):
            pos[node] = (x, 1.0 - (i + 0.5) / max(len(column), 1))
    domains = _palette(shown.nodes[n].get("domain") or "?" for n in left)
    nodes = left + right
    colours = [domains[shown.nodes[n].get("domain") or "?"] for n in left]
    colours += ["#9A9A9A" if shown.nodes[n].get("kind") == "group" else "#CCCCCC" for n in right]
    collection = nx.draw_networkx_nodes(
        shown,
        pos,
        nodelist=nodes,
        ax=ax,
        node_color=colours,
        node_size=260,
        edgecolors="#555555",
        linewidths=0.5,
    )
    collection.set_gid("nodes")
    edges = list(shown.edges(data="weight"))
    if edges:
        heaviest = max(float(w or 1) for _, _, w in edges)
        nx.draw_networkx_edges(
            shown,
            pos,
            edgelist=[(u, v) for u, v, _ in edges],
            ax=ax,
            alpha=0.5,
            width=[0.5 + 3.5 * float(w or 1) / heaviest for _, _, w in edges],
            edge_color="#777777",
        )
    for node in left:
        x, y = pos[node]
        ax.text(
            x - 0.03,
            y,
            lay.node_label(shown.nodes[node], node),
            ha="right",
            va="center",
            fontsize=8,
        )
    for node in right:
        x, y = pos[node]
        ax.text(
            x + 0.03, y, lay.node_label(shown.nodes[node], node), ha="left", va="center", fontsize=8
        )
    handles: list[Any] = [Patch(color=c, label=str(d)) for d, c in domains.items()]
    handles.append(Patch(color="#CCCCCC", label="resource"))
    if any(shown.nodes[n].get("kind") == "group" for n in right):
        handles.append(Patch(color="#9A9A9A", label="resources of a source"))
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.15, 1.0), fontsize=8)
    ax.set_xlim(-0.6, 1.6)
    ax.set_axis_off()
    ax.set_title(f"Tags and the resources they tag{note}")
    return ax


# -- overlap -----------------------------------------------------------------------------------


def draw_overlap_matrix(matrix: pd.DataFrame, ax: Axes | None = None, max_labels: int = 40) -> Axes:
    """A heatmap of :meth:`Catalog.overlap_matrix` (0-100 %), with a colour bar.

    Cells are annotated up to 15 tables; table names label the axes up to ``max_labels``
    tables (beyond, the axes say how many tables there are), so hundreds of tables still
    give a readable picture of where the overlap is.

    Example::

        draw_overlap_matrix(cat.overlap_matrix(["sales.customers", "sales.orders"]))
    """
    _check_max("max_labels", max_labels, 1)
    ax = _axes(ax, (8, 7))
    if matrix.empty:
        return _nothing(ax, "the overlap matrix is empty")
    values = matrix.astype("Float64").to_numpy(dtype=float, na_value=np.nan)
    image = ax.imshow(values, vmin=0, vmax=100, cmap="viridis", aspect="auto")
    ax.figure.colorbar(image, ax=ax, label="overlap %")
    count = len(matrix)
    if count <= max_labels:
        ax.tick_params(axis="both", bottom=True, left=True, labelbottom=True, labelleft=True)
        ax.set_xticks(range(len(matrix.columns)))
        ax.set_xticklabels(
            [lay.short(c, 24) for c in matrix.columns], rotation=60, ha="right", fontsize=8
        )
        ax.set_yticks(range(count))
        ax.set_yticklabels([lay.short(i, 24) for i in matrix.index], fontsize=8)
    else:
        ax.set_xticks([])
        ax.set_yticks([])
        ax.set_xlabel(f"{len(matrix.columns)} tables (names hidden above {max_labels})")
        ax.set_ylabel(f"{count} tables")
    if count <= 15:
        for i in range(count):
            for j in range(len(matrix.columns)):
                value = values[i, j]
                if not np.isnan(value):
                    ax.text(
                        j,
                        i,
                        f"{value:.0f}",
                        ha="center",
                        va="center",
                        fontsize=7,
                        color="white" if value < 60 else "black",
                    )
    ax.set_title("Schema overlap (%)")
    return ax
