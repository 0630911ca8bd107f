"""Join conditions -> the join graph, and the ways to join two resources through it.

Pure functions over JoinConditionTO records (``GET /joincondition`` or a resource's
``joinConditions``), tested from canned JSON;
:class:`~catalog_nb.client.relations.lineage.LineageMixin` fetches and calls them.

The join graph is an undirected :class:`networkx.Graph` keyed by resource key. One edge per
joined pair holds ``conditions``: a list of dicts (``key``, ``left``, ``right`` (resource keys:
which end is the condition's left side), ``left_cols``, ``right_cols``, ``cardinality``
(left-to-right), ``score``, ``origin``), best first, and ``score``/``weight`` = the best score.
A declared self-join (an employee's manager) is a self-loop.

Copies are lineage, not joins (docs/relations-api.md): given the catalog's INFERRED lineage
edges, :func:`merge_copies` folds each group of resources linked by ``COPY`` edges (the same
table as CSV, Parquet and SQL table) into one node named by the group's original, so a join to
any copy is a join to the group, and keeps the strongest condition per pair of groups and
columns. Each edge also gets ``label``: its conditions' columns read from the foreign side to
the key (``o_custkey → c_custkey``; a composite condition as one label of several columns).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import networkx as nx

from catalog_nb.client.relations.frames import Scope

__all__ = [
    "COPY_KINDS",
    "DEFAULT_MIN_SCORE",
    "condition_dict",
    "condition_label",
    "flip_cardinality",
    "join_graph_from_conditions",
    "join_path_rows",
    "merge_copies",
]

#: Least score of the conditions :meth:`Catalog.join_graph` shows by default: the service's
#: scores are calibrated so that about nine in ten conditions at 0.85 or more are true
#: (docs/relations-api.md, "Scores"; the service's ``join_scores.DEFAULT_MIN_SCORE``).
DEFAULT_MIN_SCORE = 0.85
#: Lineage ``evidence.kind`` values whose two resources :func:`merge_copies` folds into one
#: node: the same rows in another format or place. A SUBSET or PROJECTION is a table of its
#: own to the reader, so it stays a node.
COPY_KINDS: tuple[str, ...] = ("COPY",)

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
        "left_distinct": _distinct(record, "leftDistinct"),
        "right_distinct": _distinct(record, "rightDistinct"),
    }


def _distinct(record: Mapping[str, Any], name: str) -> int | None:
    value = (record.get("stats") or {}).get(name)
    try:
        return None if value in (None, "") else int(float(value))
    except (TypeError, ValueError):
        return None


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


def condition_label(condition: Mapping[str, Any]) -> str:
    """The columns of a condition (a :func:`condition_dict`), from the foreign side to the key:
    ``→`` towards the unique side of a ``1:N``/``N:1`` condition, ``↔`` when both are unique
    (or the cardinality is unknown); one name when both sides name the same columns.

    >>> condition_label({"left_cols": ["c_custkey"], "right_cols": ["o_custkey"],
    ...                  "cardinality": "1:N"})
    'o_custkey → c_custkey'
    >>> condition_label({"left_cols": ["ps_partkey", "ps_suppkey"],
    ...                  "right_cols": ["l_partkey", "l_suppkey"], "cardinality": "1:N"})
    'l_partkey, l_suppkey → ps_partkey, ps_suppkey'
    >>> condition_label({"left_cols": ["order_id"], "right_cols": ["order_id"],
    ...                  "cardinality": "1:N"})
    'order_id'
    """
    left = ", ".join(map(str, condition.get("left_cols") or []))
    right = ", ".join(map(str, condition.get("right_cols") or []))
    if left.casefold() == right.casefold():
        return left  # the same column on both sides: its name says it all
    cardinality = condition.get("cardinality")
    if cardinality == "1:N":
        return f"{right} → {left}"
    if cardinality == "N:1":
        return f"{left} → {right}"
    return f"{left} ↔ {right}"


def _edge_label(conditions: Sequence[Mapping[str, Any]], most: int = 2) -> str:
    """One line per distinct column pair, best first; beyond ``most`` lines, a count."""
    lines = list(dict.fromkeys(condition_label(c) for c in conditions))
    more = len(lines) - most
    return "\n".join(lines[:most] + ([f"(+{more} more)"] if more > 0 else []))


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
            edge["label"] = _edge_label(edge["conditions"])
        else:
            graph.add_edge(
                left,
                right,
                conditions=[condition],
                score=condition["score"],
                weight=condition["score"],
                label=_edge_label([condition]),
            )
    graph.graph["min_score"] = min_score
    return graph


def _copy_links(records: Iterable[Mapping[str, Any]],
                kinds: Sequence[str]) -> list[Mapping[str, Any]]:
    return [r for r in records if (r.get("evidence") or {}).get("kind") in kinds]


def _groups(links: Sequence[Mapping[str, Any]]) -> dict[str, list[str]]:
    """Original key -> its copy group's keys (original first, then by key). The original is
    the member no copy edge points to (a copy points from the table to its exports)."""
    linked = nx.Graph((_end(link, "upstream"), _end(link, "downstream")) for link in links)
    copied = {_end(link, "downstream") for link in links}
    groups = {}
    for keys in nx.connected_components(linked):
        originals = sorted(k for k in keys if k not in copied) or sorted(keys)
        groups[originals[0]] = [originals[0], *sorted(k for k in keys if k != originals[0])]
    return groups


def _by_place(members: list[str], info: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """The original first, then its copies by data source and path (a stable reading order)."""
    def place(key: str) -> tuple[str, str]:
        attrs = info.get(key, {})
        return str(attrs.get("source") or ""), str(attrs.get("path") or key)

    return [members[0], *sorted(members[1:], key=place)]


def _end(link: Mapping[str, Any], side: str) -> str:
    return str(link.get(f"{side}Key") or (link.get(side) or {}).get("key"))


def _renamed(links: Sequence[Mapping[str, Any]]) -> dict[tuple[str, str], str]:
    """(copy key, column) -> the original's column, through the edges' field lineage, so the
    same join read from a renamed copy (``contact`` for ``email``) counts once."""
    up: dict[tuple[str, str], tuple[str, str]] = {}
    for link in links:
        for item in link.get("fieldLineage") or link.get("field_lineage") or []:
            sources = item.get("upstreamFields") or []
            if len(sources) == 1:
                up[(_end(link, "downstream"), str(item["downstreamField"]))] = (
                    _end(link, "upstream"), str(sources[0]))
    resolved = {}
    for start in up:
        seen, current = {start}, up[start]
        while current in up and current not in seen:
            seen.add(current)
            current = up[current]
        resolved[start] = current[1]
    return resolved


def _member_label(attrs: Mapping[str, Any], key: str) -> str:
    path = attrs.get("path") or attrs.get("name") or key
    source = attrs.get("source")
    return f"{path} ({source})" if source else str(path)


def _member_path(attrs: Mapping[str, Any], key: str) -> str:
    return str(attrs.get("path") or attrs.get("name") or key)


def merge_copies(
    graph: nx.Graph,
    lineage: Iterable[Mapping[str, Any]],
    *,
    kinds: Sequence[str] = COPY_KINDS,
) -> nx.Graph:
    """The join ``graph`` with copies merged: each group of resources linked by lineage
    edges of ``kinds`` (``GET /lineage`` records; ``evidence.kind``) becomes one node, keyed
    and described by the group's original, with ``members`` (keys, original first),
    ``member_labels`` (``path (source)``), ``member_sources`` and a ``label`` listing them.
    A join to any member is a join to the group; conditions between two members of one group
    (lineage, not joins) are dropped; of the conditions between two groups on the same columns
    (renamed columns of copies followed through the edges' field lineage) the strongest is
    kept. Conditions keep their resources' own keys in ``left``/``right``. ``graph.graph``
    gains ``copy_groups`` (groups of two or more resources drawn as one node) and
    ``resource_count``.

    Example::

        plain = join_graph_from_conditions(cat.api.list_join_conditions()["list"])
        merged = merge_copies(plain, cat.api.list_lineage(lineage_types=["INFERRED"])["list"])
    """
    links = _copy_links(lineage, kinds)
    groups = _groups(links)
    group_of = {member: original for original, members in groups.items() for member in members}
    renamed = _renamed(links)
    info: dict[str, Mapping[str, Any]] = {}
    for link in links:
        for end in ("upstream", "downstream"):
            node = link.get(end) or {}
            info.setdefault(_end(link, end), {
                "name": node.get("name"), "path": node.get("path", node.get("resourcePath")),
                "source": node.get("dataSourceName"), "source_key": node.get("dataSourceKey"),
                "file_format": node.get("fileFormat"), "owner": node.get("owner"), "tags": []})
    groups = {original: _by_place(members, info) for original, members in groups.items()}
    merged = nx.Graph(**graph.graph)
    for key, attrs in graph.nodes(data=True):
        node = group_of.get(key, key)
        if node not in merged:
            merged.add_node(node, **dict(graph.nodes[node] if node in graph else info[node]))
            merged.nodes[node]["in_scope"] = False
        merged.nodes[node]["in_scope"] = bool(
            merged.nodes[node]["in_scope"] or attrs.get("in_scope", True))
    for original, members in groups.items():
        if original not in merged:
            continue
        about = [graph.nodes[m] if m in graph else info.get(m, {}) for m in members]
        paths = [_member_path(attrs, m) for attrs, m in zip(about, members, strict=True)]
        # the copies under their original, one a line: the picture names every member
        merged.nodes[original].update(
            members=list(members),
            member_labels=[_member_label(a, m) for a, m in zip(about, members, strict=True)],
            member_sources=[a.get("source") for a in about],
            label="\n".join([paths[0], *(f"= {path}" for path in paths[1:])]))

    def side(key: str, cols: Sequence[str]) -> tuple[str, tuple[str, ...]]:
        return group_of.get(key, key), tuple(
            renamed.get((key, col), col).casefold() for col in cols)

    best: dict[frozenset[Any], dict[str, Any]] = {}
    for u, v, attrs in graph.edges(data=True):
        if u != v and group_of.get(u, u) == group_of.get(v, v):
            continue  # two copies of one table: lineage, not a join
        for condition in attrs.get("conditions") or []:
            signature = frozenset({side(condition["left"], condition["left_cols"]),
                                   side(condition["right"], condition["right_cols"])})
            kept = best.get(signature)
            if kept is None or condition["score"] > kept["score"]:
                best[signature] = condition
    for condition in sorted(best.values(), key=lambda c: -c["score"]):
        a, b = group_of.get(condition["left"], condition["left"]), group_of.get(
            condition["right"], condition["right"])
        if merged.has_edge(a, b):
            merged.edges[a, b]["conditions"].append(condition)
        else:
            merged.add_edge(a, b, conditions=[condition], score=condition["score"],
                            weight=condition["score"])
    for _, _, attrs in merged.edges(data=True):
        attrs["label"] = _edge_label(attrs["conditions"])
    merged.graph["copy_groups"] = sum(1 for node in merged if node in groups)
    merged.graph["resource_count"] = sum(
        len(merged.nodes[node].get("members") or [node]) for node in merged)
    return merged


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
