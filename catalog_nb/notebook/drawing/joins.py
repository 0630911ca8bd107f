"""The join graph picture: :func:`draw_join_graph`, resources coloured by data source, edges
by score and cardinality, labelled with their columns where they cover no other label."""

from __future__ import annotations

from typing import Any

import networkx as nx
import numpy as np
from matplotlib.axes import Axes
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from catalog_nb.client.relations.joins import COPY_KINDS
from catalog_nb.notebook.drawing import layout as lay
from catalog_nb.notebook.drawing import routes
from catalog_nb.notebook.drawing.common import (
    LEGEND_SIZE,
    TITLE_SIZE,
    _axes,
    _check_max,
    _inches,
    _nothing,
    _palette,
)

__all__ = ["draw_join_graph"]

_CARDINALITY_COLOURS = {"1:1": "#2ca02c", "1:N": "#1f77b4", "N:1": "#1f77b4", "N:M": "#d62728"}


def draw_join_graph(
    graph: nx.Graph,
    ax: Axes | None = None,
    max_nodes: int = 60,
    edge_labels: bool = True,
    strongest: bool = True,
    lineage: nx.DiGraph | None = None,
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

    ``lineage`` (``cat.lineage_graph()``) leaves out the joins of views whose lineage says
    where their columns come from: a query over ``orders`` joins ``customer`` through
    ``o_custkey`` because ``orders`` does, which the lineage picture shows; the view is not
    drawn here. The title counts them; without ``lineage`` every join is drawn.

    Each connected component is laid out apart, in the layout whose edges cross least. Beyond
    ``max_nodes`` nodes the best-connected ``max_nodes - 1`` resources are drawn and the rest
    merged into one "N other resources" node (its edges count the joins into it). The title
    says how many tables, resources and joins are drawn, and from which score.

    Example::

        draw_join_graph(cat.join_graph("demo_sql"))             # score >= 0.85, copies merged
        draw_join_graph(cat.join_graph(min_score=0.5), edge_labels=False)
        draw_join_graph(cat.join_graph(), lineage=cat.lineage_graph())  # no view joins
    """
    _check_max("max_nodes", max_nodes, 2)
    ax = _axes(ax, (10, 8))
    if graph.number_of_nodes() == 0:
        return _nothing(ax, "no join conditions")
    explained, views = _view_joins(graph, lineage) if lineage is not None else ([], 0)
    if explained:
        graph = nx.Graph(graph)
        graph.remove_edges_from(explained)
        graph.remove_nodes_from([n for n in list(graph) if graph.degree(n) == 0])
    shown, merged = lay.strongest_joins(graph) if strongest else graph, 0
    hidden = int(shown.graph.get("hidden_joins") or 0)
    if shown.number_of_nodes() > max_nodes:
        shown, merged = lay.top_with_others(shown, max_nodes)
    shown = nx.Graph(shown)
    shown.remove_edges_from(list(nx.selfloop_edges(shown)))
    nodes = list(shown.nodes)
    labels = {n: lay.node_label(shown.nodes[n], n) for n in nodes}
    pos = _placed(shown, labels, _inches(ax), edge_labels)
    sources = [shown.nodes[n].get("source") or "?" for n in shown]
    colours = _palette(sources)
    collection = nx.draw_networkx_nodes(
        shown,
        pos,
        nodelist=nodes,
        ax=ax,
        node_size=60,  # hidden under the name's box: the box is the node
        edgecolors="white",
        node_color=[colours[shown.nodes[n].get("source") or "?"] for n in nodes],
    )
    collection.set_gid("nodes")
    cardinalities: set[str] = set()
    unlabelled = 0
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
            spots, unlabelled = _label_spots(pos, edges, _label_boxes(labels), _inches(ax))
            _edge_labels(ax, spots)
    for n in nodes:
        # a table is its name: the label sits on the node, framed in its source's colour,
        # so no label hangs over a neighbour's edges
        ax.annotate(
            labels[n], xy=pos[n], ha="center", va="center",
            fontsize=_NODE_SIZE, zorder=5, gid="node",
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
        # a merged box wears its original's colour: name the sources its copies come from
        # when no box of their own stands for them (TPC-H's CSV and Parquet copies of tables)
        elsewhere = sorted({str(s) for n in nodes for s in shown.nodes[n].get("member_sources")
                            or () if s and s not in colours})
        also = f" (copies also in {', '.join(elsewhere)})" if elsewhere else ""
        handles.append(Patch(facecolor="white", edgecolor="#333333", linewidth=2.0,
                             label=f"= copies merged{also}"))
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=LEGEND_SIZE)
    ax.set_axis_off()
    ax.margins(*_MARGINS)  # room for the labels of the outermost nodes
    title = _join_title(graph, len(nodes), merged, hidden)
    if explained:
        title += (f"\n({len(explained)} joins of {views} views left out, their lineage shows"
                  " their sources; lineage=None draws all)")
    if unlabelled:
        joins = "join" if unlabelled == 1 else "joins"
        title += f"\n(no room for the columns of {unlabelled} {joins}: cat.join_conditions())"
    ax.set_title(title, fontsize=TITLE_SIZE)
    return ax


def _view_joins(graph: nx.Graph, lineage: nx.DiGraph) -> tuple[list[tuple[Any, Any]], int]:
    """The join graph's edges with a view at an end whose sources lineage knows (a view with
    an upstream edge other than a copy's), and how many views lose joins. A resource joined
    to views only keeps its strongest such join: left out, it would vanish from the picture."""
    views = {n for n in graph if n in lineage
             and lineage.nodes[n].get("resource_type") == "view"
             and any((attrs.get("evidence") or {}).get("kind") not in COPY_KINDS
                     for _, _, attrs in lineage.in_edges(n, data=True))}
    kept = set()
    for node in graph:
        if node not in views and graph.degree(node) and all(v in views for v in graph[node]):
            partner = max(graph[node], key=lambda v: float(graph.edges[node, v].get("score")
                                                          or 0.0))
            kept.add(frozenset((node, partner)))
    left_out = [(u, v) for u, v in graph.edges()
                if (u in views or v in views) and frozenset((u, v)) not in kept]
    return left_out, len({n for edge in left_out for n in edge if n in views})


def _placed(shown: nx.Graph, labels: dict[Any, str], area: tuple[float, float],
            edge_labels: bool) -> dict[Any, tuple[float, float]]:
    """Node positions whose names do not overlap, with room between them for the edge labels
    (half the widest label of a node's edges across, a line along) when the picture has it:
    less room, then none, when the names would not fit otherwise."""
    boxes = _label_boxes(labels)
    widest = {n: max((_edge_box(a)[0] for _, _, a in shown.edges(n, data=True)), default=0.0)
              for n in shown} if edge_labels else dict.fromkeys(shown, 0.0)
    start = lay.component_layout(shown)
    pos: dict[Any, tuple[float, float]] = {}
    room = boxes
    for share in (1.0, 0.75, 0.5, 0.25, 0.0):
        room = {n: (w + share * max(_ROOM[0], widest[n] / 2), h + share * _ROOM[1])
                for n, (w, h) in boxes.items()}
        pos = lay.separate_boxes(start, room, area, margin=_MARGINS)
        if not _crowded(pos, boxes, area):
            break
    moved = _off_the_edges(shown, dict(pos), boxes, room, area)
    edges = list(shown.edges(data=True)) if edge_labels else []

    def flaws(placed: dict[Any, tuple[float, float]]) -> tuple[int, int]:
        # crossings first; then labels over one another and names under an edge
        covered = _label_spots(placed, edges, boxes, area)[1] if edges else 0
        return lay.crossings(shown, placed), covered + _struck(shown, placed, boxes, area)

    return min((pos, moved), key=flaws)


def _struck(shown: nx.Graph, pos: dict[Any, tuple[float, float]],
            boxes: dict[Any, tuple[float, float]], area: tuple[float, float]) -> int:
    """(edge, name) pairs where the edge runs through a third resource's name."""
    scale = _scale(pos, area)
    count = 0
    for u, v in shown.edges():
        a, b = np.asarray(pos[u]) * scale, np.asarray(pos[v]) * scale
        count += sum(1 for node in shown if node not in (u, v) and _hits(
            a, b, np.asarray(pos[node]) * scale, np.asarray(boxes[node]) / 2))
    return count


def _hits(a: np.ndarray, b: np.ndarray, centre: np.ndarray, half: np.ndarray) -> bool:
    """Whether the segment from ``a`` to ``b`` passes through the box (Liang-Barsky)."""
    step = b - a
    enter, leave = 0.0, 1.0
    for axis in (0, 1):
        low, high = centre[axis] - half[axis], centre[axis] + half[axis]
        if abs(step[axis]) < 1e-12:
            if not low < a[axis] < high:
                return False
            continue
        first, second = (low - a[axis]) / step[axis], (high - a[axis]) / step[axis]
        enter, leave = max(enter, min(first, second)), min(leave, max(first, second))
    return enter < leave


def _off_the_edges(shown: nx.Graph, pos: dict[Any, tuple[float, float]],
                   boxes: dict[Any, tuple[float, float]], room: dict[Any, tuple[float, float]],
                   area: tuple[float, float], rounds: int = 40) -> dict[Any, tuple[float, float]]:
    """Positions where no edge runs through a third resource's name: a name an edge strikes
    is moved across the edge's line to clear it (on the side it already lies), then the names
    are separated again; a few rounds, as a move can bring a name onto another edge. A round
    that would make edges cross is undone, and the moves stop there: a crossing reads worse
    than an edge passing behind a name."""
    edges = [(u, v) for u, v in shown.edges() if u != v]
    crossed = lay.crossings(shown, pos)
    for _ in range(rounds):
        before = dict(pos)
        scale = _scale(pos, area)
        moved = False
        for u, v in edges:
            a, b = np.asarray(pos[u]) * scale, np.asarray(pos[v]) * scale
            length = float(np.linalg.norm(b - a))
            if length == 0:
                continue
            normal = np.array([-(b - a)[1], (b - a)[0]]) / length
            for node in shown:
                centre, half = np.asarray(pos[node]) * scale, np.asarray(boxes[node]) / 2
                if node in (u, v) or not _hits(a, b, centre, half):
                    continue
                offset = float(np.dot(centre - a, normal))
                side = 1.0 if offset >= 0 else -1.0
                needed = float(np.abs(normal) @ half) + 0.06  # the box's reach across the line
                shift = normal * side * (needed - abs(offset))
                pos[node] = tuple(float(c) for c in (centre + shift) / scale)  # type: ignore[assignment]
                moved = True
        if not moved:
            break
        pos = lay.separate_boxes(pos, room, area, margin=_MARGINS)
        if lay.crossings(shown, pos) > crossed:
            return before
    return pos


def _crowded(pos: dict[Any, tuple[float, float]], boxes: dict[Any, tuple[float, float]],
             area: tuple[float, float]) -> bool:
    """Whether two names' boxes overlap once the positions fill the axes."""
    nodes = list(pos)
    points = np.array([pos[n] for n in nodes], dtype=float)
    if len(nodes) < 2:
        return False
    span = np.ptp(points, axis=0)
    span[span == 0] = 1.0
    inches = points * (np.asarray(area) / (span * (1 + 2 * np.asarray(_MARGINS))))
    sizes = np.array([boxes[n] for n in nodes], dtype=float)
    for i in range(len(nodes) - 1):
        apart = np.abs(inches[i] - inches[i + 1:]) < (sizes[i] + sizes[i + 1:]) / 2
        if apart.all(axis=1).any():
            return True
    return False


#: Margins (x, y) of a join graph's axes, shares of the data extent: half a label box.
_MARGINS = (0.12, 0.14)
#: Room (inches) kept free around each name, across and along, for the edge labels.
_ROOM = (0.5, 0.45)
#: Font sizes (points) of a table's name and of a join's columns.
_NODE_SIZE, _EDGE_SIZE = 9.0, 8.0


def _label_boxes(labels: dict[Any, str]) -> dict[Any, tuple[float, float]]:
    # the name's box (0.3 of the font size of padding) plus a little air, in inches
    return {node: (routes.text_box(text)[0] * _NODE_SIZE / 72 + 0.08,
                   routes.text_box(text)[1] * _NODE_SIZE / 72 + 0.06)
            for node, text in labels.items()}


#: Where along its edge a label may sit (shares of the edge, from one end), middle first.
_ALONG = tuple(np.linspace(0.12, 0.88, 20))
#: How far beside its edge a label may sit, in label heights.
_ACROSS = (0.0, 0.5, -0.5, 1.0, -1.0, 1.5, -1.5, 2.0, -2.0, 2.5, -2.5, 3.0, -3.0)


def _scale(pos: dict[Any, tuple[float, float]], area: tuple[float, float]) -> np.ndarray:
    """Inches per data unit along x and y, as :func:`~.layout.separate_boxes` reckons them."""
    points = np.array(list(pos.values()), dtype=float)
    span = np.ptp(points, axis=0)
    span[span == 0] = 1.0
    return np.asarray(area, dtype=float) / (span * (1 + 2 * np.asarray(_MARGINS)))


def _label_spots(pos: dict[Any, tuple[float, float]],
                 edges: list[tuple[Any, Any, dict[str, Any]]],
                 boxes: dict[Any, tuple[float, float]],
                 area: tuple[float, float]) -> tuple[list[tuple[np.ndarray, str]], int]:
    """Where each edge's columns go: at its middle, or slid along it (or beside it) to the
    spot nearest the middle where the label covers neither a name (``boxes``, inches) nor
    another edge's label; and how many labels found no such spot (left out)."""
    scale = _scale(pos, area)
    # what is taken so far, one row per box: centres and extents (inches), as arrays so that
    # every candidate spot of an edge is checked against every box at once (a loop over
    # candidates and boxes made this most of a big join picture's drawing time)
    centres = np.array([np.asarray(pos[n]) * scale for n in boxes], dtype=float).reshape(-1, 2)
    extents = np.array([np.asarray(size) for size in boxes.values()], dtype=float).reshape(-1, 2)

    def covers(points: np.ndarray, size: np.ndarray) -> np.ndarray:
        """How many taken boxes each of ``points`` (inches, one per row) overlaps."""
        apart = np.abs(points[:, None, :] - centres[None, :, :])
        return (apart < (size + extents) / 2).all(axis=2).sum(axis=1)

    spots: list[tuple[np.ndarray, str]] = []
    covered = 0
    for u, v, attrs in edges:
        text = _edge_text(attrs)
        if not text:
            continue
        size = np.array(_edge_box(attrs)) + 0.06  # a little air: reckoned sizes are close
        start, end = np.asarray(pos[u], dtype=float), np.asarray(pos[v], dtype=float)
        middle = (start + end) / 2
        # an edge too short to carry its label gets it beside, across the edge
        across = np.array([-(end - start)[1], (end - start)[0]]) * scale
        unit = across / (float(np.linalg.norm(across)) or 1.0) * (size[1] + 0.08) / scale
        candidates = [start + (end - start) * share + unit * step for share in _ALONG
                      for step in _ACROSS]
        counts = covers(np.array(candidates) * scale, size)
        # the free spot nearest the middle; where none is free, the least covered
        fewest = np.flatnonzero(counts == counts.min())
        best = int(min(fewest, key=lambda i: float(
            np.linalg.norm((candidates[i] - middle) * scale))))
        if counts[best]:
            # no room by its edge: a label over another reads as neither; the title counts it
            covered += 1
            continue
        spot = candidates[best]
        centres = np.vstack([centres, spot * scale])
        extents = np.vstack([extents, size])
        spots.append((spot, text))
    return spots, covered


def _edge_labels(ax: Axes, spots: list[tuple[np.ndarray, str]]) -> None:
    """Each edge's columns at its spot (:func:`_label_spots`), on a white ground."""
    for spot, text in spots:
        ax.text(float(spot[0]), float(spot[1]), text, fontsize=_EDGE_SIZE, color="#333333",
                ha="center", va="center", zorder=4, gid="edge-label",
                bbox={"boxstyle": "round,pad=0.1", "facecolor": "white", "edgecolor": "none",
                      "alpha": 0.85})


def _edge_text(attrs: dict[str, Any]) -> str:
    return str(attrs.get("label") or (f"{attrs['count']} joins" if attrs.get("count") else ""))


def _edge_box(attrs: dict[str, Any]) -> tuple[float, float]:
    """An edge label's box (width, height) in inches."""
    text = _edge_text(attrs)
    if not text:
        return 0.0, 0.0
    width, height = routes.text_box(text, pad=0.1)
    return width * _EDGE_SIZE / 72 + 0.03, height * _EDGE_SIZE / 72 + 0.03


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
