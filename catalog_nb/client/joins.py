"""Join conditions -> the join graph, and the ways to join two resources through it.

Pure functions over JoinConditionTO records (``GET /joincondition`` or a resource's
``joinConditions``), tested from canned JSON; :class:`~catalog_nb.client.lineage.LineageMixin`
fetches and calls them.

The join graph is an undirected :class:`networkx.Graph` keyed by resource key. One edge per
joined pair holds ``conditions``: a list of dicts (``key``, ``left``, ``right`` (resource keys:
which end is the condition's left side), ``left_cols``, ``right_cols``, ``cardinality``
(left-to-right), ``score``, ``origin``), best first, and ``score``/``weight`` = the best score.
A declared self-join (an employee's manager) is a self-loop.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Mapping
from typing import Any

import networkx as nx

from catalog_nb.client.relation_frames import Scope

__all__ = ["condition_dict", "flip_cardinality", "join_graph_from_conditions", "join_path_rows"]

_FLIPPED = {"1:N": "N:1", "N:1": "1:N"}


def flip_cardinality(cardinality: str | None) -> str | None:
    """The cardinality read right-to-left.

    >>> flip_cardinality("1:N")
    'N:1'
    """
    if cardinality is None:
        return None
    return _FLIPPED.get(cardinality, cardinality)


def _score(record: Mapping[str, Any]) -> float:
    score = record.get("score")
    if score is None:
        score = (record.get("stats") or {}).get("score")
    try:
        return float(score) if score is not None else 0.0
    except (TypeError, ValueError):
        return 0.0


def _origin(record: Mapping[str, Any]) -> str | None:
    origin = record.get("leftOrigin")
    if isinstance(origin, list):
        return str(origin[0]) if origin else None
    return None if origin is None else str(origin)


def condition_dict(record: Mapping[str, Any]) -> dict[str, Any]:
    """The edge-level dict of one JoinConditionTO (see the module docstring)."""
    return {
        "key": record.get("key"),
        "left": str(record["leftResourceId"]),
        "right": str(record["rightResourceId"]),
        "left_cols": list(record.get("leftCols") or []),
        "right_cols": list(record.get("rightCols") or []),
        "cardinality": record.get("joinCardinality"),
        "score": _score(record),
        "origin": _origin(record),
    }


def _side(record: Mapping[str, Any], side: str) -> dict[str, Any]:
    return {
        "name": record.get(f"{side}ResourceName"),
        "path": record.get(f"{side}Path"),
        "source": record.get(f"{side}SourceName"),
        "source_key": record.get(f"{side}SourceId"),
        "file_format": record.get(f"{side}FileFormat"),
        "owner": record.get(f"{side}Owner"),
        "tags": list(record.get(f"{side}Tags") or []),
    }


def join_graph_from_conditions(
    records: Iterable[Mapping[str, Any]],
    *,
    scope: Scope | None = None,
    min_score: float = 0.0,
) -> nx.Graph:
    """The join graph of JoinConditionTO ``records``: conditions scoring at least
    ``min_score`` with an end in ``scope``. The same condition listed twice (once per side,
    as a resource's ``joinConditions`` do) counts once. Nodes get ``in_scope``.

    Example::

        graph = join_graph_from_conditions(cat.api.list_join_conditions()["list"])
        graph.edges[a, b]["conditions"][0]["left_cols"]
    """
    scope = scope or Scope()
    graph = nx.Graph()
    seen: set[Any] = set()
    for record in records:
        condition = condition_dict(record)
        if condition["score"] < min_score:
            continue
        identity = condition["key"] or (
            frozenset(
                [
                    (condition["left"], *condition["left_cols"]),
                    (condition["right"], *condition["right_cols"]),
                ]
            )
        )
        if identity in seen:
            continue
        seen.add(identity)
        left, right = condition["left"], condition["right"]
        left_in = scope.contains(left, record.get("leftSourceName"))
        right_in = scope.contains(right, record.get("rightSourceName"))
        if not (left_in or right_in):
            continue
        for key, side, inside in ((left, "left", left_in), (right, "right", right_in)):
            if key not in graph:
                graph.add_node(key, **_side(record, side))
            graph.nodes[key]["in_scope"] = inside
        if graph.has_edge(left, right):
            edge = graph.edges[left, right]
            edge["conditions"].append(condition)
            edge["conditions"].sort(key=lambda c: -c["score"])
            edge["score"] = edge["weight"] = edge["conditions"][0]["score"]
        else:
            graph.add_edge(
                left,
                right,
                conditions=[condition],
                score=condition["score"],
                weight=condition["score"],
            )
    return graph


def _hop(graph: nx.Graph, here: str, there: str) -> dict[str, Any]:
    """The best condition of the edge here-there, read from ``here`` to ``there``."""
    best = graph.edges[here, there]["conditions"][0]
    forward = best["left"] == here
    return {
        "left": here,
        "right": there,
        "left_cols": best["left_cols"] if forward else best["right_cols"],
        "right_cols": best["right_cols"] if forward else best["left_cols"],
        "cardinality": best["cardinality"] if forward else flip_cardinality(best["cardinality"]),
        "score": best["score"],
        "origin": best["origin"],
    }


def join_path_rows(
    graph: nx.Graph, a: str, b: str, *, max_hops: int, limit: int | None
) -> tuple[list[dict[str, Any]], int]:
    """Every simple path of at most ``max_hops`` joins from ``a`` to ``b``, ranked by
    ``path_score`` (the product of the hops' best scores; fewer hops first on ties), as one
    record per hop; at most ``limit`` paths. Returns ``(rows, paths found)``.
    """
    if a not in graph or b not in graph:
        return [], 0
    scored = []
    for nodes in nx.all_simple_paths(graph, a, b, cutoff=max_hops):
        hops = [_hop(graph, here, there) for here, there in itertools.pairwise(nodes)]
        path_score = math.prod(hop["score"] for hop in hops)
        scored.append((path_score, hops))
    scored.sort(key=lambda item: (-item[0], len(item[1]), [h["right"] for h in item[1]]))
    found = len(scored)
    if limit is not None:
        scored = scored[:limit]
    rows = []
    for number, (path_score, hops) in enumerate(scored, start=1):
        for step, hop in enumerate(hops, start=1):
            left, right = graph.nodes[hop["left"]], graph.nodes[hop["right"]]
            rows.append(
                {
                    "path": number,
                    "hops": len(hops),
                    "step": step,
                    **hop,
                    "path_score": path_score,
                    "left_source": left.get("source"),
                    "left_path": left.get("path"),
                    "right_source": right.get("source"),
                    "right_path": right.get("path"),
                }
            )
    return rows, found
