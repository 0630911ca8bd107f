"""Graph transformations behind :mod:`catalog_nb.notebook.drawing`: grouping big graphs into
readable ones, and the node positions of each picture.

Pure networkx (no matplotlib), so the aggregation rules are testable on their own:

* :func:`layers`, :func:`group_lineage`, :func:`layered_positions`: lineage columns by
  distance (or longest path), resources grouped per column and data source;
* :func:`top_with_others`, :func:`component_layout`: the join graph's best-connected resources
  plus one "others" node, components laid out apart (dense ones on a circle);
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
    "group_lineage",
    "group_resources",
    "layered_positions",
    "layers",
    "node_label",
    "short",
    "top_tags",
    "top_with_others",
]

#: Longest node label drawn (longer ones end with an ellipsis).
LABEL_MAX = 28
#: Density from which a join graph component is drawn on a circle.
DENSE = 0.3


def short(text: Any, limit: int = LABEL_MAX) -> str:
    text = "" if text is None or (not isinstance(text, str) and pd.isna(text)) else str(text)
    return text if len(text) <= limit else text[: limit - 1] + "\u2026"


def node_label(attrs: Mapping[str, Any], key: Hashable) -> str:
    # the path tells sales.orders (a table) from sales/orders (a folder of files); names do not
    return short(attrs.get("label") or attrs.get("path") or attrs.get("name") or key)


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


def layered_positions(
    graph: nx.DiGraph, layers: dict[Hashable, int]
) -> dict[Hashable, tuple[float, float]]:
    """x = layer; within a layer nodes are spread evenly, ordered by the mean position of
    their neighbours in the previous layer (one sweep: fewer crossings), then by label."""
    by_layer: dict[int, list[Hashable]] = defaultdict(list)
    for node, layer in layers.items():
        by_layer[layer].append(node)
    position: dict[Hashable, tuple[float, float]] = {}
    for layer in sorted(by_layer):

        def order(node: Hashable) -> tuple[float, str]:
            seen = [position[p][1] for p in graph.predecessors(node) if p in position]
            seen += [position[s][1] for s in graph.successors(node) if s in position]
            centre = float(np.mean(seen)) if seen else 0.0
            return centre, node_label(graph.nodes[node], node)

        nodes = sorted(by_layer[layer], key=order)
        count = len(nodes)
        for i, node in enumerate(nodes):
            position[node] = (float(layer), (count - 1) / 2.0 - i)
    return position


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
                local = nx.spring_layout(sub, seed=7, weight=None, iterations=200, scale=1.0)
        for node, (px, py) in local.items():
            pos[node] = (x + size + px * (size - 0.5), y - size + py * (size - 0.5))
        x += 2 * size + 0.5
        row_height = max(row_height, 2 * size)
    return pos


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
