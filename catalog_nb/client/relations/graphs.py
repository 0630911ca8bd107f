"""Lineage JSON -> networkx graphs, and the impact rows read off them.

Pure functions over the service's answers (``GET /lineage/{key}`` and ``GET /lineage``), so
they are tested from canned JSON; :class:`~catalog_nb.client.relations.lineage.LineageMixin` fetches
and calls them.

Graphs are :class:`networkx.DiGraph` keyed by resource key; edges point upstream -> downstream
and carry ``lineage_type`` (FACTUAL, INFERRED), ``score``, ``evidence`` (dict), ``key`` and,
when asked for, ``field_lineage`` (list of ``{downstreamField, upstreamFields}``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import networkx as nx

from catalog_nb.client.relations.frames import Scope, node_attributes

__all__ = ["edge_attributes", "impact_rows", "lineage_from_answer", "lineage_from_edges"]


def edge_attributes(edge: Mapping[str, Any], *, fields: bool) -> dict[str, Any]:
    """The graph attributes of a lineage edge JSON."""
    attributes: dict[str, Any] = {
        "key": edge.get("key"),
        "lineage_type": edge.get("lineageType"),
        "score": edge.get("score"),
        "evidence": dict(edge.get("evidence") or {}),
    }
    if fields:
        attributes["field_lineage"] = [dict(item) for item in edge.get("fieldLineage") or []]
    return attributes


def lineage_from_answer(answer: Mapping[str, Any], *, fields: bool = False) -> nx.DiGraph:
    """The DiGraph of one ``GET /lineage/{key}`` answer.

    ``graph.graph`` holds ``root`` (the resource key), ``upstream``/``downstream`` (the depths
    walked), ``lineage_types``, ``truncated``, ``truncated_reasons``, ``hidden_count`` and
    ``max_depth``. Edges whose ends are not both among the nodes are left out (the service
    never sends them; a hand-made answer might).

    Example::

        graph = lineage_from_answer(cat.api.get_lineage(key, upstream=2))
        [graph.nodes[n]["name"] for n in graph.predecessors(key)]
    """
    graph = nx.DiGraph(
        root=answer.get("resourceKey"),
        upstream=answer.get("upstream"),
        downstream=answer.get("downstream"),
        lineage_types=list(answer.get("lineageTypes") or []),
        truncated=bool(answer.get("truncated")),
        truncated_reasons=list(answer.get("truncatedReasons") or []),
        hidden_count=int(answer.get("hiddenCount") or 0),
        max_depth=answer.get("maxDepth"),
    )
    for node in answer.get("nodes") or []:
        graph.add_node(str(node["key"]), **node_attributes(node))
    for edge in answer.get("edges") or []:
        up, down = str(edge["upstreamKey"]), str(edge["downstreamKey"])
        if up in graph and down in graph:
            graph.add_edge(up, down, **edge_attributes(edge, fields=fields))
    return graph


def lineage_from_edges(
    records: Iterable[Mapping[str, Any]],
    *,
    scope: Scope | None = None,
    total: int | None = None,
    fields: bool = False,
) -> nx.DiGraph:
    """The catalog-wide DiGraph of ``GET /lineage`` records (edge + ``upstream`` and
    ``downstream`` node), keeping the edges with an end in ``scope``.

    Nodes get ``in_scope``; ``graph.graph`` holds ``total_count`` (edges the service listed)
    and ``edge_count`` (edges kept).
    """
    scope = scope or Scope()
    graph = nx.DiGraph(total_count=total)
    for record in records:
        up, down = record.get("upstream") or {}, record.get("downstream") or {}
        up_key = str(record.get("upstreamKey") or up.get("key"))
        down_key = str(record.get("downstreamKey") or down.get("key"))
        up_in = scope.contains(up_key, up.get("dataSourceName"))
        down_in = scope.contains(down_key, down.get("dataSourceName"))
        if not (up_in or down_in):
            continue
        for key, node, inside in ((up_key, up, up_in), (down_key, down, down_in)):
            if key not in graph:
                graph.add_node(key, **{**node_attributes(node), "distance": None})
            graph.nodes[key]["in_scope"] = inside
        graph.add_edge(up_key, down_key, **edge_attributes(record, fields=fields))
    graph.graph["edge_count"] = graph.number_of_edges()
    return graph


def _label(graph: nx.DiGraph, key: str) -> str | None:
    node = graph.nodes[key]
    return node.get("path") or node.get("name")


def impact_rows(graph: nx.DiGraph, root: str) -> list[dict[str, Any]]:
    """One record per resource downstream of ``root``: distance (hops along the edges),
    ``lineage_types`` of the edges reaching it from one level closer, and ``via``, the
    upstream neighbour on a shortest path (the best-scored one when there are several).

    Sorted by distance, source and path.
    """
    distances = nx.single_source_shortest_path_length(graph, root)
    rows = []
    for key, distance in distances.items():
        if key == root:
            continue
        closer = [up for up in graph.predecessors(key) if distances.get(up) == distance - 1]
        types = sorted({str(graph.edges[up, key].get("lineage_type")) for up in closer})
        via = max(
            closer,
            key=lambda up: (graph.edges[up, key].get("score") or 0.0, str(_label(graph, up))),
        )
        node = graph.nodes[key]
        rows.append(
            {
                "key": key,
                "source": node.get("source"),
                "path": node.get("path"),
                "name": node.get("name"),
                "resource_type": node.get("resource_type"),
                "distance": distance,
                "lineage_types": types,
                "via": via,
                "via_path": _label(graph, via),
            }
        )
    rows.sort(key=lambda r: (r["distance"], str(r["source"]), str(r["path"])))
    return rows
