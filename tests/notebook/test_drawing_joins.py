"""The join picture reads at TPC-H's size and at the demo's: no crossing, no label over
another (a join whose columns find no room goes unlabelled and the title says so), readable
text, the legend outside; measured on the drawn matplotlib artists."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import networkx as nx
import numpy as np
import pytest
from matplotlib.axes import Axes

from catalog_nb.client.relations.joins import join_graph_from_conditions
from catalog_nb.notebook.drawing import draw_join_graph
from tests.benchmarks.join_graph_readability import (
    draw_circle,
    edge_crossings,
    label_overlaps,
    smallest_font,
)
from tests.client.relation_mocks import condition
from tests.notebook.test_drawing import legend_texts


@pytest.fixture(autouse=True)
def _close_figures() -> Iterator[None]:
    yield
    plt.close("all")


#: TPC-H's keys: (key table, its columns, referring table, its columns).
TPCH = [
    ("region", ["r_regionkey"], "nation", ["n_regionkey"]),
    ("nation", ["n_nationkey"], "supplier", ["s_nationkey"]),
    ("nation", ["n_nationkey"], "customer", ["c_nationkey"]),
    ("part", ["p_partkey"], "partsupp", ["ps_partkey"]),
    ("supplier", ["s_suppkey"], "partsupp", ["ps_suppkey"]),
    ("customer", ["c_custkey"], "orders", ["o_custkey"]),
    ("orders", ["o_orderkey"], "lineitem", ["l_orderkey"]),
    ("part", ["p_partkey"], "lineitem", ["l_partkey"]),
    ("supplier", ["s_suppkey"], "lineitem", ["l_suppkey"]),
    ("partsupp", ["ps_partkey", "ps_suppkey"], "lineitem", ["l_partkey", "l_suppkey"]),
]

#: The demo lake's strongest joins (as ``cat.join_graph()`` draws them): key side first.
DEMO = [
    ("sales.products", ["product_id"], "sales.order_items", ["product_id"], "1:N"),
    ("sales.orders", ["order_id"], "sales.order_items", ["order_id"], "1:N"),
    ("hr.departments", ["department_id"], "hr.employees", ["department_id"], "1:N"),
    ("hr.departments", ["department_id"], "hr.staff_directory", ["dept_id"], "1:N"),
    ("hr.departments", ["code"], "hr/employees.csv", ["dept"], "1:N"),
    ("hr.department_headcount", ["code"], "hr.departments", ["code"], "1:1"),
    ("hr.employees", ["employee_id"], "ref/stores.json", ["manager.emp_no"], "1:N"),
    ("hr.employees", ["email"], "hr.staff_directory", ["work_email"], "1:1"),
    ("sales.customers", ["customer_id"], "sales.orders", ["customer_id"], "1:N"),
    ("sales.orders", ["order_no"], "finance/payments.parquet", ["order_no"], "1:N"),
    ("ref/stores.json", ["store_id"], "sales.orders", ["store_id"], "1:N"),
    ("sales.customers", ["customer_id"], "sales/orders", ["customer_id"], "1:N"),
    ("sales.customers", ["customer_id"], "finance/payments.parquet", ["customer_id"], "1:N"),
    ("sales.customers", ["customer_id"], "sales.customer_revenue", ["customer_id"], "1:1"),
    ("sales.customers", ["customer_id"], "sales.top_customers", ["customer_id"], "1:1"),
    ("sales.customers", ["customer_id"], "sales.customer_contacts", ["id"], "1:1"),
    ("ref/stores.json", ["store_id"], "sales/orders", ["store_id"], "1:N"),
    ("sales.customer_contacts", ["id"], "finance/payments_2024.csv", ["customer_id"], "1:N"),
]


def _side(path: str) -> tuple[str, str, str]:
    source = "demo_files" if "/" in path else "demo_sql"
    return path, source, path


def _tpch() -> nx.Graph:
    return join_graph_from_conditions([
        condition(f"{a}-{b}", (a, "tpch", f"tpch.{a}"), acols, (b, "tpch", f"tpch.{b}"), bcols,
                  "1:N", 0.99) for a, acols, b, bcols in TPCH])


def _demo() -> nx.Graph:
    return join_graph_from_conditions([
        condition(f"j{i}", _side(a), acols, _side(b), bcols, card, 0.95)
        for i, (a, acols, b, bcols, card) in enumerate(DEMO)])


def _drawn(graph: nx.Graph) -> Axes:
    fig, ax = plt.subplots(figsize=(11, 7))
    draw_join_graph(graph, ax=ax)
    fig.canvas.draw()
    return ax


@pytest.mark.parametrize("name", ["TPC-H", "demo"])
def test_join_picture_has_no_crossing_and_no_label_over_another(name: str) -> None:
    graph = _tpch() if name == "TPC-H" else _demo()
    ax = _drawn(graph)
    names = [t for t in ax.texts if t.get_gid() == "node"]
    columns = [t for t in ax.texts if t.get_gid() == "edge-label"]
    assert len(names) == graph.number_of_nodes()
    # a join whose columns find no free spot by its edge goes unlabelled, counted in the title
    left_out = re.search(r"no room for the columns of (\d+) joins?", ax.get_title())
    unlabelled = int(left_out.group(1)) if left_out else 0
    assert unlabelled <= 1
    assert len(columns) + unlabelled == (nx.Graph(graph).number_of_edges()
                                         - nx.number_of_selfloops(graph))
    assert edge_crossings(ax) == 0
    renderer = ax.figure.canvas.get_renderer()  # type: ignore[attr-defined]
    boxes = [t.get_bbox_patch().get_window_extent(renderer) for t in names]  # type: ignore[union-attr]
    assert not [(a, b) for i, a in enumerate(boxes) for b in boxes[i + 1:] if a.overlaps(b)]
    overlaps = label_overlaps(ax)
    assert overlaps == 0
    assert min(float(t.get_fontsize()) for t in names) >= 9
    assert smallest_font(ax) >= 8
    legend = ax.get_legend()
    assert legend is not None and min(float(t.get_fontsize()) for t in legend.get_texts()) >= 9
    assert legend.get_window_extent().x0 >= ax.get_window_extent().x1 - 1
    # the anchor, measured the same way: every join on a circle crosses and overlaps
    fig, before = plt.subplots(figsize=(11, 7))
    draw_circle(graph, before)
    fig.canvas.draw()
    assert edge_crossings(before) > 0 and label_overlaps(before) > overlaps


def test_edge_labels_sit_by_an_edge() -> None:
    # beside its edge when the middle is taken: within a few lines of an edge
    ax = _drawn(_tpch())
    renderer = ax.figure.canvas.get_renderer()  # type: ignore[attr-defined]
    lines = [seg for c in ax.collections if c.get_gid() != "nodes"
             for seg in getattr(c, "get_segments", list)()]
    assert lines
    for text in (t for t in ax.texts if t.get_gid() == "edge-label"):
        box = text.get_window_extent(renderer).expanded(1.3, 7.0)
        near = [seg for seg in lines
                if any(box.contains(*ax.transData.transform(p)) for p in _along(seg))]
        assert near, text.get_text()


def _along(segment: Any) -> list[Any]:
    start, end = np.asarray(segment[0], float), np.asarray(segment[-1], float)
    return [start + (end - start) * k / 20 for k in range(21)]


#: Two query views over TPC-H's tables: (view, the tables it reads, the joins found on it as
#: (its columns, key table, key columns)).
VIEWS = [
    ("q03", ["customer", "orders", "lineitem"],
     [(["l_orderkey"], "orders", ["o_orderkey"]), (["c_custkey"], "customer", ["c_custkey"])]),
    ("q10", ["customer", "orders", "nation"],
     [(["c_custkey"], "customer", ["c_custkey"]), (["n_nationkey"], "nation", ["n_nationkey"]),
      (["o_orderkey"], "orders", ["o_orderkey"])]),
]


def _with_views() -> tuple[nx.Graph, nx.DiGraph]:
    records = [condition(f"{a}-{b}", (a, "tpch", f"tpch.{a}"), acols, (b, "tpch", f"tpch.{b}"),
                         bcols, "1:N", 0.99) for a, acols, b, bcols in TPCH]
    lineage = nx.DiGraph()
    lineage.add_nodes_from({t for a, _, b, _ in TPCH for t in (a, b)}, resource_type="table")
    for view, reads, joins in VIEWS:
        lineage.add_node(view, resource_type="view")
        lineage.add_edges_from(((table, view) for table in reads), lineage_type="FACTUAL",
                               evidence={})
        records += [condition(f"{view}-{key}", (key, "tpch", f"tpch.{key}"), kcols,
                              (view, "tpch", f"tpch.{view}"), cols, "1:N", 0.94)
                    for cols, key, kcols in joins]
    # the views also join one another through the keys they share
    records.append(condition("q03-q10", ("q10", "tpch", "tpch.q10"), ["c_custkey"],
                             ("q03", "tpch", "tpch.q03"), ["c_custkey"], "1:1", 0.94))
    return join_graph_from_conditions(records), lineage


def test_view_joins_lineage_explains_are_left_out_and_counted() -> None:
    graph, lineage = _with_views()
    fig, ax = plt.subplots(figsize=(11, 7))
    draw_join_graph(graph, ax=ax, lineage=lineage)
    fig.canvas.draw()
    names = {t.get_text() for t in ax.texts if t.get_gid() == "node"}
    assert names == {f"tpch.{t}" for a, _, b, _ in TPCH for t in (a, b)}
    # 2 + 3 joins to the tables they read, 1 between them: 6 joins of 2 views
    assert "6 joins of 2 views left out" in ax.get_title()
    assert "lineage=None draws all" in ax.get_title()
    assert edge_crossings(ax) == 0 and label_overlaps(ax) == 0
    # without lineage every join is drawn, the views too
    fig, everything = plt.subplots(figsize=(11, 7))
    draw_join_graph(graph, ax=everything, strongest=False)
    drawn = {t.get_text() for t in everything.texts if t.get_gid() == "node"}
    assert {"tpch.q03", "tpch.q10"} <= drawn and "views left out" not in everything.get_title()


def test_copies_are_not_views() -> None:
    # a table's CSV export is its copy (INFERRED COPY lineage), not a view: its joins stay
    graph, lineage = _with_views()
    lineage.add_node("orders_csv", resource_type="view")
    lineage.add_edge("orders", "orders_csv", lineage_type="INFERRED", evidence={"kind": "COPY"})
    graph.add_edge("orders_csv", "customer", label="o_custkey \u2192 c_custkey", score=0.9,
                   conditions=[])
    _fig, ax = plt.subplots(figsize=(11, 7))
    draw_join_graph(graph, ax=ax, lineage=lineage, strongest=False)
    assert "orders_csv" in {t.get_text() for t in ax.texts if t.get_gid() == "node"}
    assert "6 joins of 2 views left out" in ax.get_title()


def test_a_resource_joined_to_views_only_keeps_its_strongest_view_join() -> None:
    # a returns file joins the query views only: it stays in the picture, by its best join
    graph, lineage = _with_views()
    for view, score in (("q03", 0.97), ("q10", 0.9)):
        graph.add_edge("returns", view, label="r_orderkey \u2192 o_orderkey", score=score,
                       conditions=[])
    _fig, ax = plt.subplots(figsize=(11, 7))
    draw_join_graph(graph, ax=ax, lineage=lineage, strongest=False)
    names = {t.get_text() for t in ax.texts if t.get_gid() == "node"}
    assert {"returns", "tpch.q03"} <= names and "tpch.q10" not in names
    assert "7 joins of 2 views left out" in ax.get_title()


def test_the_legend_names_the_sources_of_merged_copies_no_box_stands_for() -> None:
    # TPC-H's tables merged with their CSV and Parquet copies: every box wears tpch_sql's
    # colour, so the legend says where the copies live
    graph = _tpch()
    for node in graph:
        graph.nodes[node].update(members=[node, f"{node}.csv", f"{node}.parquet"],
                                 member_sources=["tpch", "tpch_csv", "tpch_parquet"])
    texts = legend_texts(_drawn(graph))
    assert "tpch" in texts
    assert "= copies merged (copies also in tpch_csv, tpch_parquet)" in texts
    # a copy whose source has boxes of its own in the picture needs no such note
    demo = _demo()
    customers = "sales.customers"
    demo.nodes[customers].update(members=[customers, "crm/customers.csv"],
                                 member_sources=["demo_sql", "demo_files"])
    texts = legend_texts(_drawn(demo))
    assert {"demo_files", "demo_sql", "= copies merged"} <= set(texts)
