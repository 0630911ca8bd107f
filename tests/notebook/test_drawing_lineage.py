"""The layered lineage picture: crossings at their minimum, no edge through a name, readable
text; measured on the drawn matplotlib artists (Agg backend)."""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterator

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import networkx as nx
import pytest
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from catalog_nb.client.relations.graphs import lineage_from_answer, lineage_from_edges
from catalog_nb.notebook.drawing import draw_lineage, layered
from catalog_nb.notebook.drawing import layout as lay
from tests.benchmarks.lineage_readability import (
    draw_before,
    drawn_crossings,
    one_sweep_positions,
    struck_labels,
    tpch_lineage,
)
from tests.client.relation_mocks import TOP_UPSTREAM, answer, edge, node


@pytest.fixture(autouse=True)
def _close_figures() -> Iterator[None]:
    yield
    plt.close("all")


def _drawn(graph: nx.DiGraph, size: tuple[float, float] = (11, 6)) -> Axes:
    fig, ax = plt.subplots(figsize=size)
    draw_lineage(graph, ax=ax)
    fig.canvas.draw()
    return ax


def _random_layers(seed: int, per_layer: int = 3, count: int = 3) -> tuple[nx.DiGraph,
                                                                           dict[str, int]]:
    rng = random.Random(seed)
    graph = nx.DiGraph()
    layers = {f"{level}-{i}": level for level in range(count) for i in range(per_layer)}
    graph.add_nodes_from(layers)
    for level in range(count - 1):
        for i, j in itertools.product(range(per_layer), repeat=2):
            if rng.random() < 0.45:
                graph.add_edge(f"{level}-{i}", f"{level + 1}-{j}")
    return graph, layers


def _fewest(graph: nx.DiGraph, layers: dict[str, int]) -> int:
    """The fewest crossings of any column orders, by trying them all."""
    columns = [[n for n in layers if layers[n] == level] for level in sorted(set(layers.values()))]
    return min(layered.order_crossings(graph, dict(enumerate(orders)))
               for orders in itertools.product(*(itertools.permutations(c) for c in columns)))


@pytest.mark.parametrize("seed", range(12))
def test_column_orders_reach_the_fewest_crossings_found_by_trying_every_order(seed: int) -> None:
    graph, layers = _random_layers(seed)
    order, _ = layered.order_layers(graph, layers)
    assert layered.order_crossings(graph, order) == _fewest(graph, layers)


def test_a_shuffled_tree_and_a_crossed_ladder_are_drawn_without_a_crossing() -> None:
    # both have drawings without a crossing; their names start them in a crossed order
    tree = nx.balanced_tree(2, 3, create_using=nx.DiGraph)
    tree = nx.relabel_nodes(tree, {n: f"{(n * 7919) % 101:03d}" for n in tree})
    ladder = nx.DiGraph([(f"a{i}", f"b{(i * 3) % 7}") for i in range(7)]
                        + [(f"b{i}", f"c{(i * 5) % 7}") for i in range(7)])
    for graph in (tree, ladder):
        layers = lay.layers(graph)
        order, _ = layered.order_layers(graph, layers)
        assert layered.order_crossings(graph, order) == 0
        assert drawn_crossings(_drawn(graph)) == 0


def test_edges_spanning_columns_pass_through_dummies_and_cross_least() -> None:
    # a -> d skips two columns; drawn straight it would cross b -> c's column
    graph = nx.DiGraph([("a", "b"), ("b", "c"), ("c", "d"), ("a", "d"), ("x", "c"),
                        ("x", "b")])
    order, chains = layered.order_layers(graph, lay.layers(graph))
    assert [type(n) for n in chains[("a", "d")][1:-1]] == [layered.Dummy, layered.Dummy]
    assert layered.order_crossings(graph, order) == _fewest_with_dummies(graph)


def _fewest_with_dummies(graph: nx.DiGraph) -> int:
    layers = lay.layers(graph)
    order, _ = layered.order_layers(graph, layers)
    return min(layered.order_crossings(graph, dict(zip(order, orders, strict=True)))
               for orders in itertools.product(*(itertools.permutations(c)
                                                 for c in order.values())))


def test_tpch_shaped_lineage_crosses_fewer_edges_than_one_sweep() -> None:
    graph = tpch_lineage()
    layers = lay.layers(graph)
    order, _ = layered.order_layers(graph, layers)
    before = lay.crossings(graph, one_sweep_positions(graph, layers))
    after = layered.order_crossings(graph, order)
    print(f"\nTPC-H-shaped lineage: {before} crossings with one sweep, {after} now")
    assert after < before / 2


def _cases() -> dict[str, nx.DiGraph]:
    records = [
        {**edge(u, d), "upstream": node(u, f"s.{u}", None), "downstream": node(d, f"s.{d}", None)}
        for u, d in [("a", "b"), ("b", "c"), ("a", "c"), ("c", "a2"), ("a2", "c"), ("a", "z")]
    ]
    nodes = [node("root", "s.root", 0)]
    edges = []
    for level in (1, 2, 3):
        for i in range(6):
            nodes.append(node(f"n{level}-{i}", f"s.table_with_a_long_name_{level}_{i}", level))
            edges.append(edge("root" if level == 1 else f"n{level - 1}-{(i * 5) % 6}",
                              f"n{level}-{i}"))
    edges.append(edge("root", "n3-2"))
    return {"top customers": lineage_from_answer(TOP_UPSTREAM),
            "cycle and skip": lineage_from_edges(records),
            "long names": lineage_from_answer(answer("root", nodes, edges, downstream=3)),
            "TPC-H": tpch_lineage()}


@pytest.mark.parametrize("name", ["top customers", "cycle and skip", "long names", "TPC-H"])
def test_no_edge_crosses_a_name(name: str) -> None:
    graph = _cases()[name]
    ax = _drawn(graph)
    assert len([t for t in ax.texts if t.get_gid() == "node"]) == graph.number_of_nodes()
    assert struck_labels(ax) == []
    # the anchor: the picture before strikes names through on the same graphs
    if name in ("long names", "TPC-H"):
        fig, before = plt.subplots(figsize=(11, 6))
        draw_before(graph, before)
        fig.canvas.draw()
        assert struck_labels(before)


def test_no_edge_crosses_a_name_in_the_report_after_tight_layout() -> None:
    # the HTML report draws on a bare Figure of 10 x 6 inches and then tightens its layout
    for graph in _cases().values():
        figure = Figure(figsize=(10, 6), dpi=100)
        FigureCanvasAgg(figure)
        ax = figure.add_subplot()
        draw_lineage(graph, ax=ax)
        figure.tight_layout()
        figure.canvas.draw()
        assert struck_labels(ax) == []


def test_names_edges_and_legend_read_at_the_default_size() -> None:
    ax = _drawn(lineage_from_answer(TOP_UPSTREAM))
    names = [t for t in ax.texts if t.get_gid() == "node"]
    assert min(t.get_fontsize() for t in names) >= 9
    legend = ax.get_legend()
    assert legend is not None
    assert min(t.get_fontsize() for t in legend.get_texts()) >= 9
    assert ax.title.get_fontsize() >= 10
    # the legend lies outside the drawing: right of the axes
    assert legend.get_window_extent().x0 >= ax.get_window_extent().x1 - 1
    # every name inside the axes
    frame = ax.get_window_extent()
    for text in names:
        box = text.get_bbox_patch().get_window_extent()  # type: ignore[union-attr]
        assert frame.x0 <= box.x0 and box.x1 <= frame.x1 and frame.y0 <= box.y0 <= box.y1 <= \
            frame.y1, text.get_text()
