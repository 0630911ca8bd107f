"""The matplotlib drawings of the graphs: what ends up on the Axes (Agg backend)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import networkx as nx
import numpy as np
import pandas as pd
import pytest
from matplotlib.axes import Axes
from matplotlib.collections import PathCollection

from catalog_nb.client.frames import to_frame
from catalog_nb.client.relations.frames import COVERAGE_COLUMNS
from catalog_nb.client.relations.graphs import lineage_from_answer, lineage_from_edges
from catalog_nb.client.relations.joins import join_graph_from_conditions
from catalog_nb.client.tags.coverage import coverage_rows, tag_graph_from
from catalog_nb.notebook.drawing import (
    draw_join_graph,
    draw_lineage,
    draw_overlap_matrix,
    draw_tag_coverage,
    draw_tag_graph,
)
from catalog_nb.notebook.drawing import layout as lay
from tests.client.relation_mocks import (
    CONDITIONS,
    TOP_UPSTREAM,
    answer,
    condition,
    edge,
    node,
)


@pytest.fixture(autouse=True)
def _close_figures() -> Iterator[None]:
    yield
    plt.close("all")


def _nodes(ax: Axes) -> PathCollection:
    found = [c for c in ax.collections if c.get_gid() == "nodes"]
    assert len(found) == 1
    collection = found[0]
    assert isinstance(collection, PathCollection)
    return collection


def _texts(ax: Axes) -> list[str]:
    return [t.get_text() for t in ax.texts if t.get_gid() != "arrow"]


def _boxes(ax: Axes) -> list[Any]:
    """The lineage picture's resources: each its name in a box."""
    return [t for t in ax.texts if t.get_gid() == "node"]


def _where(text: Any) -> tuple[float, float]:
    """Where a label points: its node for an annotation (offset in points), else its spot."""
    return tuple(text.xy) if hasattr(text, "xy") else text.get_position()


def legend_texts(ax: Axes) -> list[str]:
    """The texts of the picture's legend (it must have one)."""
    legend = ax.get_legend()
    assert legend is not None
    return [t.get_text() for t in legend.get_texts()]


def _wide_lineage(per_layer: int, layers: int = 3, sources: int = 3) -> nx.DiGraph:
    """A root with ``layers`` downstream levels of ``per_layer`` resources each."""
    nodes = [node("root", "s.root", 0)]
    edges = []
    previous = ["root"]
    for level in range(1, layers + 1):
        current = [f"n{level}-{i}" for i in range(per_layer)]
        for i, key in enumerate(current):
            nodes.append(node(key, f"s.t{level}_{i}", level, source=f"src{i % sources}"))
            edges.append(edge(previous[i % len(previous)], key,
                              "INFERRED" if i % 2 else "FACTUAL"))
        previous = current
    return lineage_from_answer(answer("root", nodes, edges, downstream=layers))


# -- lineage -------------------------------------------------------------------------------------


def test_lineage_is_layered_left_to_right_by_distance() -> None:
    graph = lineage_from_answer(TOP_UPSTREAM)
    ax = draw_lineage(graph)
    assert len(_boxes(ax)) == 5
    x_of = {t.get_text(): _where(t)[0] for t in _boxes(ax)}
    assert set(x_of) == {"sales.top_customers", "sales.customer_revenue", "sales.customers",
                         "sales.orders", "sales.order_items"}
    assert x_of["sales.customers"] == x_of["sales.orders"] == x_of["sales.order_items"] == -2
    assert x_of["sales.customers"] < x_of["sales.customer_revenue"] < x_of["sales.top_customers"]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["-2", "-1", "0"]
    assert "FACTUAL" in legend_texts(ax) and "root" in legend_texts(ax)
    assert "INFERRED" not in legend_texts(ax)
    assert "top_customers" in ax.get_title()


def test_every_label_lies_inside_the_axes() -> None:
    """The lowest node's label used to fall below the axes and vanish."""
    for ax in (draw_lineage(lineage_from_answer(TOP_UPSTREAM)),
               draw_lineage(_wide_lineage(per_layer=7))):
        ax.figure.canvas.draw()
        frame = ax.get_window_extent()
        for text in _boxes(ax):
            box = text.get_window_extent()
            assert frame.y0 <= box.y0 and box.y1 <= frame.y1, text.get_text()
        plt.close(ax.figure)


def test_lineage_legend_lists_both_types_and_resource_types() -> None:
    graph = _wide_lineage(per_layer=4, layers=2)
    legend = legend_texts(draw_lineage(graph))
    assert {"FACTUAL", "INFERRED", "table", "root"} <= set(legend)


def test_lineage_of_hundreds_of_nodes_is_grouped_per_layer_and_source() -> None:
    graph = _wide_lineage(per_layer=100, layers=3)
    assert graph.number_of_nodes() == 301
    ax = draw_lineage(graph, max_nodes=60)
    drawn = len(_boxes(ax))
    assert drawn == 1 + 3 * 3  # the root, then one node per (level, source)
    assert any(t.endswith("34 resources") for t in _texts(ax))
    assert "group" in legend_texts(ax)
    assert "301 resources grouped" in ax.get_title()
    columns = [_where(t)[0] for t in _boxes(ax)]
    assert sorted(set(columns)) == [0, 1, 2, 3] and columns.count(2) == 3


def test_lineage_falls_back_to_one_group_per_layer() -> None:
    graph = _wide_lineage(per_layer=50, layers=4, sources=40)
    ax = draw_lineage(graph, max_nodes=20)
    assert len(_boxes(ax)) == 1 + 4


def test_catalog_wide_lineage_without_distances_is_layered_by_longest_path() -> None:
    records = [
        {**edge(u, d), "upstream": node(u, f"s.{u}", None), "downstream": node(d, f"s.{d}", None)}
        for u, d in [("a", "b"), ("b", "c"), ("a", "c"), ("c", "a2"), ("a2", "c")]
    ]
    graph = lineage_from_edges(records)
    ax = draw_lineage(graph)
    x_of = {t.get_text(): _where(t)[0] for t in _boxes(ax)}
    assert x_of["s.a"] < x_of["s.b"] < x_of["s.c"]
    assert x_of["s.c"] == x_of["s.a2"]  # a cycle shares one column
    assert [t.get_text() for t in ax.get_xticklabels()] == ["0", "1", "2"]


def test_empty_lineage_says_nothing_to_draw() -> None:
    ax = draw_lineage(nx.DiGraph())
    assert any("nothing to draw" in t for t in _texts(ax))


def test_drawing_on_a_given_axes_returns_it() -> None:
    _, ax = plt.subplots()
    assert draw_lineage(lineage_from_answer(TOP_UPSTREAM), ax=ax) is ax


def test_max_nodes_must_be_sensible() -> None:
    with pytest.raises(ValueError):
        draw_lineage(lineage_from_answer(TOP_UPSTREAM), max_nodes=0)


# -- joins ---------------------------------------------------------------------------------------


def _node_labels(ax: Axes) -> list[str]:
    return [t.get_text() for t in ax.texts if t.get_gid() != "edge-label"]


def _edge_labels(ax: Axes) -> list[str]:
    return [t.get_text() for t in ax.texts if t.get_gid() == "edge-label"]


def test_join_graph_draws_every_resource_and_legends_sources_and_cardinalities() -> None:
    graph = join_graph_from_conditions(CONDITIONS)
    ax = draw_join_graph(graph, strongest=False)
    assert len(_nodes(ax).get_offsets()) == graph.number_of_nodes() == 6
    assert len(_node_labels(ax)) == 6
    legend = legend_texts(ax)
    assert {"demo_sql", "demo_files", "1:N", "1:1"} <= set(legend)


def test_join_graph_edges_carry_their_columns_from_the_foreign_side_to_the_key() -> None:
    conditions = [
        condition("o", ("orders", "db", "orders"), ["o_orderkey"], ("items", "db", "lineitem"),
                  ["l_orderkey"], "1:N", 0.99),
        condition("ps", ("partsupp", "db", "partsupp"), ["ps_partkey", "ps_suppkey"],
                  ("items", "db", "lineitem"), ["l_partkey", "l_suppkey"], "1:N", 0.99),
        condition("c", ("cust", "db", "customer"), ["custkey"], ("orders", "db", "orders"),
                  ["custkey"], "1:N", 0.99),
    ]
    ax = draw_join_graph(join_graph_from_conditions(conditions))
    assert sorted(_edge_labels(ax)) == [
        "custkey", "l_orderkey → o_orderkey", "l_partkey, l_suppkey → ps_partkey, ps_suppkey"]
    assert not _edge_labels(draw_join_graph(join_graph_from_conditions(conditions),
                                            edge_labels=False))


def test_join_graph_draws_the_strongest_join_of_each_referring_column() -> None:
    # An order's customer id is contained in the customers and in two views of them: one edge,
    # to the biggest key of the best score; the 1:1 views keep their own edge to the customers.
    cust, rev, top = ("cust", "db", "customers"), ("rev", "db", "revenue"), ("top", "db", "top")
    orders = ("ord", "db", "orders")
    conditions = [
        condition("a", cust, ["id"], orders, ["customer_id"], "1:N", 0.99),
        condition("b", rev, ["id"], orders, ["customer_id"], "1:N", 0.99),
        condition("c", top, ["id"], orders, ["customer_id"], "1:N", 0.86),
        condition("d", cust, ["id"], rev, ["id"], "1:1", 0.99),
        condition("e", cust, ["id"], top, ["id"], "1:1", 0.99),
    ]
    for item, distinct in zip(conditions, ("900", "400", "20", "900", "900"), strict=True):
        item["stats"]["leftDistinct"] = distinct
    for item, distinct in zip(conditions[3:], ("400", "20"), strict=True):
        item["stats"]["rightDistinct"] = distinct
    graph = join_graph_from_conditions(conditions)
    kept = lay.strongest_joins(graph)
    assert {frozenset(e) for e in kept.edges} == {
        frozenset(("cust", "ord")), frozenset(("cust", "rev")), frozenset(("cust", "top"))}
    assert kept.graph["hidden_joins"] == 2
    ax = draw_join_graph(graph)
    assert "2 weaker alternatives left out" in ax.get_title()
    assert len(_edge_labels(ax)) == 3


def test_join_graph_layout_of_a_planar_schema_crosses_no_edge() -> None:
    # TPC-H's eight tables and ten joins: a planar graph drawn without a crossing.
    tables = ["region", "nation", "supplier", "customer", "part", "partsupp", "orders",
              "lineitem"]
    pairs = [("region", "nation"), ("nation", "supplier"), ("nation", "customer"),
             ("part", "partsupp"), ("supplier", "partsupp"), ("customer", "orders"),
             ("orders", "lineitem"), ("part", "lineitem"), ("supplier", "lineitem"),
             ("partsupp", "lineitem")]
    conditions = [condition(f"{a}-{b}", (a, "db", a), ["k"], (b, "db", b), [f"{a}_k"], "1:N",
                            0.99) for a, b in pairs]
    graph = join_graph_from_conditions(conditions)
    assert set(graph) == set(tables)
    assert lay.crossings(graph, lay.component_layout(graph)) == 0
    ax = draw_join_graph(graph)
    boxes = [t.get_window_extent(ax.figure.canvas.get_renderer())  # type: ignore[attr-defined]
             for t in ax.texts if t.get_gid() != "edge-label"]
    overlapping = [(a, b) for i, a in enumerate(boxes) for b in boxes[i + 1:] if a.overlaps(b)]
    assert not overlapping  # every table's label legible


def _big_join_graph(count: int) -> nx.Graph:
    conditions = []
    for i in range(count):
        hub = ("hub", "src0", "s.hub")
        spoke = (f"r{i}", f"src{i % 3}", f"s.r{i}")
        conditions.append(condition(f"h{i}", hub, ["id"], spoke, ["hub_id"], "1:N", 0.9))
        if i:
            prev = (f"r{i - 1}", f"src{(i - 1) % 3}", f"s.r{i - 1}")
            conditions.append(condition(f"c{i}", prev, ["k"], spoke, ["k"], "N:M", 0.5))
    return join_graph_from_conditions(conditions)


def test_join_graph_of_hundreds_keeps_the_best_connected_and_groups_the_rest() -> None:
    graph = _big_join_graph(300)
    ax = draw_join_graph(graph, max_nodes=40)
    assert len(_nodes(ax).get_offsets()) == 40
    assert "262 other resources" in _texts(ax)  # 301 resources: 39 drawn, 262 grouped
    assert "s.hub" in _texts(ax)
    assert "262 grouped" in ax.get_title()


def test_empty_join_graph_says_nothing_to_draw() -> None:
    assert any("nothing to draw" in t for t in _texts(draw_join_graph(nx.Graph())))


# -- tag coverage and tag graph ------------------------------------------------------------------


def _resource(key: str, source: str, fields: int) -> dict[str, Any]:
    return {"key": key, "dataSourceName": source, "resourcePath": f"{source}/{key}",
            "name": key, "fields": [{"name": f"f{j}"} for j in range(fields)]}


def _assoc(resource: str, tag: str, field: str) -> dict[str, Any]:
    return {"resourceKey": resource, "field": field, "tagFullName": tag, "tagKey": tag,
            "domainName": tag.split(".")[0], "state": "ACCEPTED"}


def _coverage(resources: int, sources: int = 2) -> tuple[list[Any], list[Any]]:
    res = [_resource(f"r{i}", f"src{i % sources}", 4) for i in range(resources)]
    tags = [_assoc(f"r{i}", f"D{i % 3}.T{i % 7}", f"f{i % 4}") for i in range(0, resources, 2)]
    return res, tags


def test_tag_coverage_bars_per_source_with_shares() -> None:
    resources, associations = _coverage(10)
    frame = to_frame(coverage_rows(resources, associations), COVERAGE_COLUMNS)
    ax = draw_tag_coverage(frame, level="source")
    assert [t.get_text() for t in ax.get_yticklabels()] == ["src1", "src0"]
    widths = sorted(round(p.get_width(), 3) for p in ax.patches)
    assert widths == [0.0, 0.0, 0.25, 1.0]  # src0 tags 5 of 20 fields on all 5 resources
    assert legend_texts(ax) == ["fields tagged", "resources tagged"]


def test_tag_coverage_of_hundreds_of_resources_pools_the_rest() -> None:
    resources, associations = _coverage(300)
    frame = to_frame(coverage_rows(resources, associations), COVERAGE_COLUMNS)
    ax = draw_tag_coverage(frame, level="resource", max_bars=25)
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert len(labels) == 25 and "276 others" in labels
    assert len(ax.patches) == 25  # one bar each: the field share
    assert legend_texts(ax) == ["fields tagged"]


def test_tag_coverage_bad_level_and_empty_level() -> None:
    frame = to_frame([], COVERAGE_COLUMNS)
    with pytest.raises(ValueError, match="level"):
        draw_tag_coverage(frame, level="planet")
    assert any("nothing to draw" in t for t in _texts(draw_tag_coverage(frame)))


def test_tag_graph_puts_tags_left_and_resources_right() -> None:
    resources, associations = _coverage(10)
    graph = tag_graph_from(resources, associations)
    ax = draw_tag_graph(graph)
    assert len(_nodes(ax).get_offsets()) == graph.number_of_nodes()
    x_of = {t.get_text(): _where(t)[0] for t in ax.texts}
    assert x_of["D0.T0"] < 0.5 < x_of["src0/r0"]
    assert {"D0", "D1", "D2", "resource"} <= set(legend_texts(ax))


def test_tag_graph_of_hundreds_groups_resources_per_source() -> None:
    resources, associations = _coverage(400, sources=3)
    graph = tag_graph_from(resources, associations)
    assert graph.number_of_nodes() > 200
    ax = draw_tag_graph(graph, max_nodes=80)
    tags = [n for n, kind in graph.nodes(data="kind") if kind == "tag"]
    per_source = pd.Series([s for _, s in graph.nodes(data="source") if s]).value_counts()
    assert len(_nodes(ax).get_offsets()) == len(tags) + 3
    assert {f"{s}: {n} resources" for s, n in per_source.items()} <= set(_texts(ax))
    assert "resources of a source" in legend_texts(ax)


def test_tag_graph_with_too_many_tags_merges_the_rarest() -> None:
    res = [_resource(f"r{i}", "src", 2) for i in range(150)]
    tags = [_assoc(f"r{i}", f"D.T{i}", "f0") for i in range(150)]
    ax = draw_tag_graph(tag_graph_from(res, tags), max_nodes=30)
    assert len(_nodes(ax).get_offsets()) <= 30
    assert any(t.endswith("other tags") for t in _texts(ax))


# -- overlap -------------------------------------------------------------------------------------


def _matrix(names: list[str]) -> pd.DataFrame:
    n = len(names)
    values = np.fromfunction(lambda i, j: np.where(i == j, 100.0, (i + j) % 50), (n, n))
    return pd.DataFrame(values, index=names, columns=names).astype("Float64")


def test_overlap_heatmap_is_annotated_and_labelled() -> None:
    ax = draw_overlap_matrix(_matrix(["a.x", "a.y", "b.z"]))
    assert len(ax.images) == 1
    assert ax.images[0].get_array().shape == (3, 3)
    assert [t.get_text() for t in ax.get_xticklabels()] == ["a.x", "a.y", "b.z"]
    assert _texts(ax).count("100") == 3


def test_overlap_heatmap_of_hundreds_hides_names_and_annotations() -> None:
    ax = draw_overlap_matrix(_matrix([f"s.t{i}" for i in range(200)]))
    assert ax.images[0].get_array().shape == (200, 200)
    assert ax.get_xticklabels() == [] and _texts(ax) == []
    assert "200 tables" in ax.get_xlabel()


def test_empty_overlap_matrix_says_nothing_to_draw() -> None:
    assert any("nothing to draw" in t for t in _texts(draw_overlap_matrix(pd.DataFrame())))


def test_join_graph_components_do_not_overlap_and_a_dense_one_is_a_circle() -> None:
    ring = [(f"k{i}", "src0", f"s.k{i}") for i in range(8)]
    conditions = [
        condition(f"c{i}-{j}", ring[i], ["id"], ring[j], ["id"], "1:1", 0.9)
        for i in range(8) for j in range(i + 1, 8)
    ]
    conditions.append(condition("p", ("a", "src1", "s.a"), ["x"], ("b", "src1", "s.b"), ["x"],
                                "1:N", 0.8))
    # every pair of the clique drawn (a key shared by many resources), not only the strongest
    ax = draw_join_graph(join_graph_from_conditions(conditions), strongest=False)
    where = {t.get_text(): np.array(_where(t)) for t in ax.texts}
    clique = np.array([where[f"s.k{i}"] for i in range(8)])
    centre = clique.mean(axis=0)
    radii = np.linalg.norm(clique - centre, axis=1)
    assert radii.max() - radii.min() < 1e-6 * radii.max()  # all on one circle
    for pair_node in ("s.a", "s.b"):
        assert np.linalg.norm(where[pair_node] - centre) > radii.max()
