"""Graph transformations behind :mod:`catalog_nb.notebook.drawing`: grouping big graphs into
readable ones, and the node positions of each picture.

Pure networkx (no matplotlib), so the aggregation rules are testable on their own:

* :func:`layers`, :func:`group_lineage`: lineage columns by distance (or longest path),
  resources grouped per column and data source (the columns' order and the edges' routes are
  :mod:`~catalog_nb.notebook.drawing.layered` and :mod:`~catalog_nb.notebook.drawing.routes`);
* :func:`strongest_joins`, :func:`top_with_others`, :func:`component_layout`: the join graph's
  strongest join per referring column, its best-connected resources plus one "others" node,
  components laid out apart in the layout crossing fewest edges (dense ones on a circle);
* :func:`group_resources`, :func:`top_tags`: the tag graph's resources per data source, rarest
  tags merged.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Hashable, Mapping
from typing import Any

import networkx as nx
import numpy as np
import pandas as pd

__all__ = [
    "component_layout",
    "crossings",
    "group_lineage",
    "group_resources",
    "layers",
    "node_label",
    "separate_boxes",
    "short",
    "stress_layout",
    "strongest_joins",
    "top_tags",
    "top_with_others",
]

#: Longest node label drawn (longer ones end with an ellipsis).
LABEL_MAX = 28
#: Density from which a join graph component is drawn on a circle (a key shared by many
#: resources); below, a schema of keys and foreign keys is mostly planar and a force-directed
#: layout crosses fewer edges than a circle does.
DENSE = 0.5


def short(text: Any, limit: int = LABEL_MAX) -> str:
    text = "" if text is None or (not isinstance(text, str) and pd.isna(text)) else str(text)
    return text if len(text) <= limit else text[: limit - 1] + "\u2026"


def node_label(attrs: Mapping[str, Any], key: Hashable) -> str:
    # the path tells sales.orders (a table) from sales/orders (a folder of files); names do not
    text = attrs.get("label") or attrs.get("path") or attrs.get("name") or key
    # a group of copies lists one member a line: each line is cut, not the whole label
    return "\n".join(short(line) for line in str(text).split("\n"))


def crossings(graph: nx.Graph, pos: Mapping[Hashable, Any]) -> int:
    """How many pairs of drawn edges cross (edges sharing an end never count): the measure of
    a readable layout.

    >>> g = nx.Graph([("a", "b"), ("c", "d")])
    >>> crossings(g, {"a": (0, 0), "b": (1, 1), "c": (0, 1), "d": (1, 0)})
    1
    """
    segments = [(np.asarray(pos[u], float), np.asarray(pos[v], float), {u, v})
                for u, v in graph.edges() if u != v]

    def side(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> float:
        return float((b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0]))

    count = 0
    for i, (a, b, ends) in enumerate(segments):
        for c, d, others in segments[i + 1:]:
            if ends & others:
                continue
            if side(a, b, c) * side(a, b, d) < 0 and side(c, d, a) * side(c, d, b) < 0:
                count += 1
    return count


def layers(graph: nx.DiGraph) -> dict[Hashable, int]:
    """Each node's column: its ``distance`` when every node has one, else the longest path
    from a source of the graph (cycles collapsed into one column)."""
    distances = dict(graph.nodes(data="distance"))
    if all(isinstance(d, int | np.integer) for d in distances.values()):
        return {node: int(d) for node, d in distances.items()}
    condensed = nx.condensation(graph)
    column: dict[int, int] = {}
    for part in nx.topological_sort(condensed):
        before = [column[p] + 1 for p in condensed.predecessors(part)]
        column[part] = max(before, default=0)
    mapping = condensed.graph["mapping"]
    return {node: column[mapping[node]] for node in graph}


def group_lineage(
    graph: nx.DiGraph, layers: dict[Hashable, int], by_source: bool
) -> tuple[nx.DiGraph, dict[Hashable, int]]:
    """Nodes grouped per (layer, source) (or per layer), the root kept on its own."""
    root = graph.graph.get("root")
    groups: dict[Any, list[Hashable]] = defaultdict(list)
    for node, attrs in graph.nodes(data=True):
        if node == root:
            groups[("root", node)].append(node)
        else:
            groups[(layers[node], attrs.get("source") if by_source else None)].append(node)
    member_of: dict[Hashable, Any] = {}
    grouped = nx.DiGraph(**graph.graph)
    for group, members in groups.items():
        name: Any = members[0] if len(members) == 1 else ("group", *group)
        for member in members:
            member_of[member] = name
        if len(members) == 1:
            grouped.add_node(name, **graph.nodes[members[0]])
        else:
            source = group[1]
            what = f"{source}: " if source else ""
            grouped.add_node(
                name,
                label=f"{what}{len(members)} resources",
                resource_type="group",
                members=list(members),
                source=source,
            )
    for up, down, attrs in graph.edges(data=True):
        a, b = member_of[up], member_of[down]
        if a == b:
            continue
        if grouped.has_edge(a, b):
            grouped.edges[a, b]["count"] += 1
            grouped.edges[a, b]["types"].add(attrs.get("lineage_type"))
        else:
            grouped.add_edge(
                a,
                b,
                count=1,
                types={attrs.get("lineage_type")},
                lineage_type=attrs.get("lineage_type"),
            )
    new_layers = {member_of[members[0]]: layers[members[0]] for members in groups.values()}
    return grouped, new_layers


def top_with_others(graph: nx.Graph, max_nodes: int) -> tuple[nx.Graph, int]:
    """The ``max_nodes - 1`` best-connected nodes, the rest merged into one "others" node."""
    ranked = sorted(graph.degree(weight="weight"), key=lambda kv: (-kv[1], str(kv[0])))
    keep = {node for node, _ in ranked[: max_nodes - 1]}
    rest = [node for node in graph if node not in keep]
    shown = nx.Graph(graph.subgraph(keep))
    others = ("others",)
    shown.add_node(others, label=f"{len(rest)} other resources", source="(others)", members=rest)
    for u, v, attrs in graph.edges(data=True):
        inside = (u in keep, v in keep)
        if inside == (True, False) or inside == (False, True):
            kept = u if u in keep else v
            score = float(attrs.get("score") or 0.0)
            if shown.has_edge(kept, others):
                edge = shown.edges[kept, others]
                edge["count"] += 1
                edge["score"] = edge["weight"] = max(edge["score"], score)
            else:
                shown.add_edge(kept, others, count=1, score=score, weight=score, conditions=[])
    return shown, len(rest)


def _foreign_end(condition: Mapping[str, Any]) -> tuple[str, tuple[str, ...]] | None:
    """The side of a condition that refers to the other: the many side of ``1:N``, the side
    of fewer distinct values of a ``1:1`` (a subset of the customers refers to all of them);
    ``None`` when that cannot be told."""
    cardinality = condition.get("cardinality")
    left = (str(condition.get("left")), tuple(condition.get("left_cols") or ()))
    right = (str(condition.get("right")), tuple(condition.get("right_cols") or ()))
    if cardinality == "1:N":
        return right
    if cardinality == "N:1":
        return left
    counts = condition.get("left_distinct"), condition.get("right_distinct")
    if cardinality == "1:1" and None not in counts and counts[0] != counts[1]:
        return left if counts[0] < counts[1] else right  # type: ignore[operator]
    return None


def strongest_joins(graph: nx.Graph) -> nx.Graph:
    """The join graph keeping, for each referring column (list) of a resource, only its
    strongest join: the best score, then the biggest key (the table the others are subsets
    of), then the best-connected partner. A foreign key read against the dimension and
    against every view and subset of it draws one edge, to the dimension; the others are
    what the dimension joins anyway. Edges with no referring side that can be told, and
    declared self-joins, stay. ``graph.graph["hidden_joins"]`` counts the edges left out.

    Conditions name their own resources (``left``/``right``); in a graph of merged copies
    the edge ends are the groups, so a condition's side is mapped to the edge end it lies on.
    """
    best: dict[Any, tuple[tuple[float, int, int, str], tuple[Any, Any]]] = {}
    keep: set[frozenset[Any]] = set()
    for u, v, attrs in graph.edges(data=True):
        for condition in attrs.get("conditions") or []:
            foreign = _foreign_end(condition)
            if u == v or foreign is None:
                keep.add(frozenset((u, v)))
                continue
            # the edge end the foreign side is on (a copy's condition lies on its group)
            on_left = foreign[0] == str(condition.get("left"))
            end, partner = (u, v) if _holds(graph, u, foreign[0]) else (v, u)
            key_distinct = condition.get("left_distinct" if not on_left else "right_distinct")
            rank = (float(condition.get("score") or 0.0), int(key_distinct or 0),
                    graph.degree(partner), str(partner))
            slot = (end, tuple(c.casefold() for c in foreign[1]))
            if slot not in best or rank > best[slot][0]:
                best[slot] = (rank, (u, v))
    keep |= {frozenset(edge) for _, edge in best.values()}
    kept = nx.Graph(graph)
    kept.remove_edges_from([(u, v) for u, v in graph.edges() if frozenset((u, v)) not in keep])
    kept.graph["hidden_joins"] = graph.number_of_edges() - kept.number_of_edges()
    return kept


def _holds(graph: nx.Graph, node: Any, resource: str) -> bool:
    """Whether the graph node is the resource or the group of copies it belongs to."""
    return str(node) == resource or resource in (graph.nodes[node].get("members") or ())


def component_layout(graph: nx.Graph) -> dict[Hashable, tuple[float, float]]:
    """Each connected component laid out on its own (spring layout, uniform weights), scaled
    to its size and tiled in rows, biggest first.

    One spring layout of the whole graph pushes the components apart and squeezes a clique of
    well-scored joins (every key of one domain) into an unreadable knot; dense components go on
    a circle instead (ordered by data source and path).
    """
    components = sorted(nx.connected_components(graph), key=lambda c: (-len(c), min(map(str, c))))
    total_width = 1.6 * np.sqrt(graph.number_of_nodes()) + 1.0
    pos: dict[Hashable, tuple[float, float]] = {}
    x = y = row_height = 0.0
    for component in components:
        size = 0.5 + 0.5 * np.sqrt(len(component))  # the component's radius
        if x > 0 and x + 2 * size > total_width:
            x, y, row_height = 0.0, y - row_height - 0.5, 0.0
        if len(component) == 1:
            local = {next(iter(component)): np.zeros(2)}
        else:
            sub = graph.subgraph(component)
            if len(component) > 3 and nx.density(sub) >= DENSE:
                # a key shared by many resources joins them all: on a circle every label shows
                ring = sorted(
                    sub,
                    key=lambda n: (str(sub.nodes[n].get("source")), node_label(sub.nodes[n], n)),
                )
                local = nx.circular_layout(ring, scale=1.0)  # a list keeps the order
            else:
                local = _fewest_crossings(sub)
        for node, (px, py) in local.items():
            pos[node] = (x + size + px * (size - 0.5), y - size + py * (size - 0.5))
        x += 2 * size + 0.5
        row_height = max(row_height, 2 * size)
    return pos


def stress_layout(graph: nx.Graph, seed: int = 7, iterations: int = 300) -> dict[Hashable, Any]:
    """Positions whose distances follow the graph's hop distances (stress majorization, the
    SMACOF iteration that Kamada-Kawai layouts approximate): trees and sparse schemas spread
    out evenly instead of folding onto themselves. One connected component; numpy only.
    """
    nodes = list(graph)
    count = len(nodes)
    if count < 3:
        return nx.circular_layout(nodes, scale=1.0)
    index = {node: i for i, node in enumerate(nodes)}
    hops = np.full((count, count), float(count))
    for node, reached in nx.all_pairs_shortest_path_length(graph):
        for other, length in reached.items():
            hops[index[node], index[other]] = float(length)
    weights = np.where(hops > 0, 1.0 / np.maximum(hops, 1e-9) ** 2, 0.0)
    laplacian = -weights
    laplacian[np.diag_indices(count)] = weights.sum(axis=1)
    inverse = np.linalg.pinv(laplacian)
    rng = np.random.default_rng(seed)
    points = rng.normal(size=(count, 2))
    for _ in range(iterations):
        gaps = np.linalg.norm(points[:, None, :] - points[None, :, :], axis=-1)
        ratio = np.where(gaps > 1e-9, weights * hops / np.maximum(gaps, 1e-9), 0.0)
        guttman = -ratio
        guttman[np.diag_indices(count)] = ratio.sum(axis=1)
        moved = inverse @ guttman @ points
        if np.abs(moved - points).max() < 1e-5:
            points = moved
            break
        points = moved
    points -= points.mean(axis=0)
    extent = np.abs(points).max() or 1.0
    return {node: points[index[node]] / extent for node in nodes}


def _widest(pos: dict[Hashable, Any]) -> dict[Hashable, Any]:
    """The layout turned so that its longest extent is horizontal (pictures are wider than
    tall; turning changes no crossing)."""
    points = np.array(list(pos.values()), dtype=float)
    if len(points) < 3:
        return pos
    centred = points - points.mean(axis=0)
    _, _, axes = np.linalg.svd(centred, full_matrices=False)
    turned = centred @ axes.T
    turned /= np.abs(turned).max() or 1.0
    return dict(zip(pos, turned, strict=True))


def _fewest_crossings(graph: nx.Graph) -> dict[Hashable, Any]:
    """Of a few layouts of one component, the one whose edges cross least (on ties, the one
    whose nearest two nodes are furthest apart): a force-directed layout is only as good as
    its start, and crossed edges and crowded labels are what make a join picture
    unreadable."""
    # twice networkx's default spacing: labelled boxes and edge labels need the room
    spacing = 2.0 / np.sqrt(len(graph))
    candidates = [stress_layout(graph, seed=seed) for seed in (7, 1)]
    candidates += [nx.spring_layout(graph, seed=seed, weight=None, iterations=200, scale=1.0,
                                    k=spacing) for seed in (7, 1, 2)]

    def closest(pos: dict[Hashable, Any]) -> float:
        # the nearest two nodes relative to the layout's extent: crowded labels overlap
        points = np.array(list(pos.values()), dtype=float)
        gaps = np.linalg.norm(points[:, None, :] - points[None, :, :], axis=-1)
        extent = float(np.ptp(points, axis=0).max()) or 1.0
        return float(gaps[np.triu_indices(len(points), 1)].min()) / extent

    return _widest(min(candidates, key=lambda pos: (crossings(graph, pos), -closest(pos))))


def separate_boxes(
    pos: Mapping[Hashable, Any],
    boxes: Mapping[Hashable, tuple[float, float]],
    area: tuple[float, float],
    margin: float | tuple[float, float] = 0.15,
    rounds: int = 200,
) -> dict[Hashable, tuple[float, float]]:
    """Positions moved apart until no two label boxes overlap: ``boxes`` are each node's label
    (width, height) in inches, ``area`` the picture's (width, height) in inches, which the
    positions' extent (plus ``margin`` on each side, one share or (x, y) shares of the extent)
    is stretched to fill. Each round pushes
    every overlapping pair apart along the axis where they overlap least, half each.

    >>> moved = separate_boxes({"a": (0, 0), "b": (0.01, 0), "c": (1, 1)},
    ...                        {n: (1.0, 0.3) for n in "abc"}, (6.0, 4.0))
    >>> abs(moved["a"][0] - moved["b"][0]) > 0.1
    True
    """
    nodes = list(pos)
    points = np.array([pos[n] for n in nodes], dtype=float)
    if len(nodes) < 2:
        return {n: (float(x), float(y)) for n, (x, y) in zip(nodes, points, strict=True)}
    sizes = np.array([boxes[n] for n in nodes], dtype=float)
    for _ in range(rounds):
        span = np.ptp(points, axis=0)
        span[span == 0] = 1.0
        # inches per data unit along x and y, as the axes will stretch the extent to fill
        scale = np.asarray(area, dtype=float) / (span * (1 + 2 * np.asarray(margin)))
        half = sizes / 2 / scale  # half-box in data units
        moved = False
        for i in range(len(nodes)):
            gap = points[i] - points[i + 1:]
            overlap = half[i] + half[i + 1:] - np.abs(gap)
            for j in np.nonzero((overlap > 0).all(axis=1))[0]:
                other = i + 1 + j
                axis = int(np.argmin(overlap[j] / (half[i] + half[other])))
                direction = np.sign(gap[j, axis]) or (1.0 if i % 2 else -1.0)
                push = overlap[j, axis] / 2 * 1.05
                points[i, axis] += direction * push
                points[other, axis] -= direction * push
                moved = True
        if not moved:
            break
    return {n: (float(x), float(y)) for n, (x, y) in zip(nodes, points, strict=True)}


def group_resources(graph: nx.Graph) -> nx.Graph:
    """Resources merged per data source (edges: summed weights)."""
    grouped = nx.Graph()
    counts: dict[Any, int] = defaultdict(int)
    for node, attrs in graph.nodes(data=True):
        if attrs.get("kind") == "tag":
            grouped.add_node(node, **attrs)
        else:
            counts[attrs.get("source")] += 1
    for source, count in counts.items():
        grouped.add_node(
            ("source", source), kind="group", bipartite=1, label=f"{source}: {count} resources"
        )
    for u, v, attrs in graph.edges(data=True):
        tag, resource = (u, v) if graph.nodes[u].get("kind") == "tag" else (v, u)
        target = ("source", graph.nodes[resource].get("source"))
        weight = float(attrs.get("weight") or 1)
        if grouped.has_edge(tag, target):
            grouped.edges[tag, target]["weight"] += weight
        else:
            grouped.add_edge(tag, target, weight=weight)
    return grouped


def top_tags(graph: nx.Graph, keep: int) -> nx.Graph:
    """The ``keep`` tags tagging the most, the rest merged into one "N other tags" node."""
    tags = [n for n, kind in graph.nodes(data="kind") if kind == "tag"]
    ranked = sorted(tags, key=lambda t: (-graph.degree(t, weight="weight"), str(t)))
    rest = ranked[keep:]
    shown = nx.Graph(graph)
    other = ("tags", "others")
    shown.add_node(other, kind="tag", label=f"{len(rest)} other tags", domain="(others)")
    for tag in rest:
        for neighbour, attrs in graph[tag].items():
            weight = float(attrs.get("weight") or 1)
            if shown.has_edge(other, neighbour):
                shown.edges[other, neighbour]["weight"] += weight
            else:
                shown.add_edge(other, neighbour, weight=weight)
        shown.remove_node(tag)
    return shown
