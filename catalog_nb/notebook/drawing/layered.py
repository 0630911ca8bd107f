"""A layered (Sugiyama) drawing of a directed graph whose columns are given: the lineage
picture's layout. Pure networkx and numpy, so it runs with the client's dependencies alone.

The classic steps (Sugiyama, Tagawa and Toda 1981; Gansner et al. 1993, the method of
Graphviz ``dot``):

1. an edge spanning several columns is cut into a chain of *dummy* nodes, one per column it
   passes, so that every edge joins neighbouring columns (:func:`proper_layering`);
2. the order within each column is chosen to cross few edges: alternating down and up sweeps
   placing each node at the barycentre of its neighbours in the column just swept, each sweep
   followed by swaps of neighbours while a swap crosses fewer edges ("transpose"); the best
   order seen is kept (:func:`order_layers`);
3. heights: each column is stacked in that order and its nodes pulled towards the mean height
   of their neighbours, without reordering or overlapping (:func:`place_heights`), which
   straightens the dummy chains.

Crossings only depend on the orders: :func:`order_crossings` counts them.

>>> g = nx.DiGraph([("a", "y"), ("b", "x")])
>>> order, _ = order_layers(g, {"a": 0, "b": 0, "x": 1, "y": 1})
>>> order_crossings(g, order)
0
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import networkx as nx
import numpy as np

__all__ = [
    "Dummy",
    "order_crossings",
    "order_layers",
    "place_heights",
    "proper_layering",
]

#: Most down-and-up sweep pairs tried; the search stops earlier after rounds without gain.
SWEEPS = 24
#: Rounds without fewer crossings after which the search stops.
PATIENCE = 4
#: Shuffled starting orders tried after the walk's.
RESTARTS = 8


@dataclass(frozen=True)
class Dummy:
    """A point where an edge spanning several columns crosses a column between its ends."""

    edge: tuple[Hashable, Hashable]
    layer: int


def proper_layering(
    graph: nx.DiGraph, layers: Mapping[Hashable, int]
) -> tuple[nx.Graph, dict[Hashable, int], dict[tuple[Hashable, Hashable], list[Hashable]]]:
    """The graph whose edges all join neighbouring columns: ``(graph, layers, chains)``,
    ``chains`` giving for each original edge between different columns the nodes it passes,
    from its left end to its right end. Edges inside one column (a cycle collapsed into one
    column) have no chain."""
    proper = nx.Graph()
    proper.add_nodes_from(graph)
    column = dict(layers)
    chains: dict[tuple[Hashable, Hashable], list[Hashable]] = {}
    for u, v in graph.edges():
        if u == v or layers[u] == layers[v]:
            continue
        left, right = (u, v) if layers[u] < layers[v] else (v, u)
        chain: list[Hashable] = [left]
        for layer in range(layers[left] + 1, layers[right]):
            dummy = Dummy((u, v), layer)
            column[dummy] = layer
            chain.append(dummy)
        chain.append(right)
        nx.add_path(proper, chain)
        chains[(u, v)] = chain
    return proper, column, chains


def _between(proper: nx.Graph, upper: Sequence[Hashable], lower: Sequence[Hashable]) -> int:
    """Crossings between two neighbouring columns in these orders: pairs of edges whose ends
    are in opposite orders."""
    where = {node: i for i, node in enumerate(lower)}
    ends = sorted((i, where[n]) for i, node in enumerate(upper) for n in proper[node] if n in where)
    targets = np.array([t for _, t in ends], dtype=int)
    starts = np.array([s for s, _ in ends], dtype=int)
    count = 0
    for k in range(len(ends)):
        later = slice(k + 1, None)
        count += int(((targets[later] < targets[k]) & (starts[later] > starts[k])).sum())
    return count


def _total(proper: nx.Graph, order: Mapping[int, list[Hashable]]) -> int:
    columns = sorted(order)
    return sum(_between(proper, order[a], order[b])
               for a, b in itertools.pairwise(columns) if b == a + 1)


def order_crossings(graph: nx.DiGraph, order: Mapping[int, list[Hashable]]) -> int:
    """How many pairs of edges cross when ``graph`` is drawn with these column orders (dummy
    nodes included, as :func:`order_layers` returns them)."""
    layers = {node: layer for layer, nodes in order.items() for node in nodes if
              not isinstance(node, Dummy)}
    proper, _, _ = proper_layering(graph, layers)
    return _total(proper, order)


def _pair_crossings(proper: nx.Graph, a: Hashable, b: Hashable,
                    sides: Sequence[Mapping[Hashable, int]]) -> int:
    """Crossings among the edges of ``a`` and ``b`` when ``a`` is above ``b``."""
    count = 0
    for where in sides:
        mine = [where[n] for n in proper[a] if n in where]
        theirs = [where[n] for n in proper[b] if n in where]
        count += sum(1 for p in mine for q in theirs if p > q)
    return count


def _transpose(proper: nx.Graph, order: dict[int, list[Hashable]]) -> None:
    """Swap neighbours in a column while that crosses fewer edges with both next columns."""
    improved = True
    while improved:
        improved = False
        for layer, nodes in order.items():
            sides = [{n: i for i, n in enumerate(order[side])}
                     for side in (layer - 1, layer + 1) if side in order]
            for i in range(len(nodes) - 1):
                a, b = nodes[i], nodes[i + 1]
                if _pair_crossings(proper, a, b, sides) > _pair_crossings(proper, b, a, sides):
                    nodes[i], nodes[i + 1] = b, a
                    improved = True


def _sweep(proper: nx.Graph, order: dict[int, list[Hashable]], columns: list[int]) -> None:
    """Each column of ``columns`` in turn reordered by the barycentre of its neighbours in the
    column before it (nodes without one keep their place)."""
    for previous, layer in itertools.pairwise(columns):
        where = {n: i for i, n in enumerate(order[previous])}
        centres = []
        for index, node in enumerate(order[layer]):
            seen = [where[n] for n in proper[node] if n in where]
            centres.append(((float(np.mean(seen)) if seen else float(index)), index, node))
        order[layer] = [node for _, _, node in sorted(centres, key=lambda c: c[:2])]


def order_layers(
    graph: nx.DiGraph,
    layers: Mapping[Hashable, int],
    key: Callable[[Hashable], str] = str,
) -> tuple[dict[int, list[Hashable]], dict[tuple[Hashable, Hashable], list[Hashable]]]:
    """Column orders crossing few edges: ``(order, chains)``, ``order`` listing each column's
    nodes top to bottom (dummy nodes included), ``chains`` as :func:`proper_layering` gives
    them. The first order is a breadth-first walk from the left (ties by ``key``), then
    barycentre sweeps down and up with transposition, keeping the order with fewest crossings.
    """
    proper, column, chains = proper_layering(graph, layers)
    first = _walk_order(proper, column, key)
    best, fewest = _improve(proper, first)
    # a sweep only refines its start: a few shuffled starts (seeded: the same picture every
    # time) find the fewest crossings where the walk's start leads to a local minimum
    rng = np.random.default_rng(7)
    for _ in range(RESTARTS if fewest else 0):
        shuffled = {layer: [nodes[i] for i in rng.permutation(len(nodes))]
                    for layer, nodes in first.items()}
        order, count = _improve(proper, shuffled)
        if count < fewest:
            best, fewest = order, count
        if fewest == 0:
            break
    return best, chains


def _walk_order(proper: nx.Graph, column: Mapping[Hashable, int],
                key: Callable[[Hashable], str]) -> dict[int, list[Hashable]]:
    """Columns in the order a breadth-first walk from the leftmost nodes meets their nodes."""
    order: dict[int, list[Hashable]] = defaultdict(list)
    seen: set[Hashable] = set()
    starts = sorted(proper, key=lambda n: (column[n], isinstance(n, Dummy), key(n)))
    for start in starts:
        if start in seen:
            continue
        for node in [start, *(v for _, v in nx.bfs_edges(proper, start,
                                                          sort_neighbors=_sorter(key)))]:
            if node not in seen:
                seen.add(node)
                order[column[node]].append(node)
    return {layer: order[layer] for layer in sorted(order)}


def _improve(proper: nx.Graph, start: dict[int, list[Hashable]]
             ) -> tuple[dict[int, list[Hashable]], int]:
    """Barycentre sweeps down and up from ``start``, each followed by transposition, until
    no gain for :data:`PATIENCE` rounds: the best order seen and its crossings."""
    order = {layer: list(nodes) for layer, nodes in start.items()}
    columns = list(order)
    _transpose(proper, order)
    best, fewest = {k: list(v) for k, v in order.items()}, _total(proper, order)
    idle = 0
    for _ in range(SWEEPS):
        if fewest == 0 or idle >= PATIENCE:
            break
        idle += 1
        for direction in (columns, columns[::-1]):
            _sweep(proper, order, direction)
            _transpose(proper, order)
            count = _total(proper, order)
            if count < fewest:
                best, fewest, idle = {k: list(v) for k, v in order.items()}, count, 0
    return best, fewest


def _sorter(key: Callable[[Hashable], str]) -> Callable[[Any], list[Hashable]]:
    def ordered(nodes: Any) -> list[Hashable]:
        return sorted(nodes, key=lambda n: (isinstance(n, Dummy), key(n)))

    return ordered


def _isotonic(targets: np.ndarray) -> np.ndarray:
    """The non-decreasing sequence nearest to ``targets`` (least squares): pool adjacent
    violators."""
    blocks: list[list[float]] = []  # [mean, weight]
    for value in targets:
        blocks.append([float(value), 1.0])
        while len(blocks) > 1 and blocks[-2][0] > blocks[-1][0]:
            mean, weight = blocks.pop()
            before, count = blocks[-1]
            blocks[-1] = [(before * count + mean * weight) / (count + weight), count + weight]
    return np.concatenate([np.full(int(w), m) for m, w in blocks])


def place_heights(
    proper: nx.Graph,
    order: Mapping[int, list[Hashable]],
    heights: Mapping[Hashable, float],
    gap: float,
    rounds: int = 12,
) -> dict[Hashable, float]:
    """Each node's height (its centre; larger is higher), keeping the column orders top to
    bottom and at least ``gap`` between the boxes of ``heights``: columns start stacked and
    centred, then each round moves every column's nodes as near as the order allows to the
    mean height of their neighbours (least squares), which straightens the dummy chains."""
    y: dict[Hashable, float] = {}
    offsets: dict[int, np.ndarray] = {}
    for layer, nodes in order.items():
        sizes = np.array([heights[n] for n in nodes], dtype=float)
        # distance of each centre below the first one's, the column packed tight
        offset = np.concatenate([[0.0], np.cumsum((sizes[:-1] + sizes[1:]) / 2 + gap)])
        offsets[layer] = offset
        for node, down in zip(nodes, offset - offset[-1] / 2, strict=True):
            y[node] = -float(down)
    for _ in range(rounds):
        for layer, nodes in order.items():
            wanted = np.array([np.mean([y[n] for n in proper[node]]) if len(proper[node])
                               else y[node] for node in nodes], dtype=float)
            # below the first by at least the packed distance: z = -y - offset non-decreasing
            placed = _isotonic(-wanted - offsets[layer])
            for node, z, down in zip(nodes, placed, offsets[layer], strict=True):
                y[node] = -float(z + down)
    return y
