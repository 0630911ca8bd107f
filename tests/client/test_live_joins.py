"""Join conditions, the join graph, join paths and table overlap through the client, against a
real server that profiled the demo lake (ground truth: ``truth.joins``)."""

from __future__ import annotations

import csv
import io
import re
from typing import Any

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import networkx as nx
import pytest

from catalog_nb.client import BadRequestError, Catalog, NotFoundError
from catalog_nb.client.relations.frames import JOIN_CONDITION_COLUMNS, JOIN_PATH_COLUMNS
from catalog_nb.client.relations.joins import DEFAULT_MIN_SCORE
from catalog_nb.notebook.drawing import draw_join_graph
from catalog_nb.notebook.drawing.layout import component_layout, crossings, strongest_joins
from tests.client.shared_lake import SQL, SharedLake


@pytest.fixture
def lake(shared_lake: SharedLake) -> SharedLake:
    return shared_lake


@pytest.fixture
def cat(lake: SharedLake) -> Catalog:
    return lake.cat


def _pair(graph: nx.Graph, lake: SharedLake, a: str, b: str) -> dict[str, Any]:
    return dict(graph.edges[lake.key(a), lake.key(b)])


# -- conditions and the graph --------------------------------------------------------------------


def test_declared_foreign_keys_are_conditions_with_score_one(lake: SharedLake) -> None:
    frame = lake.cat.join_conditions(SQL)
    assert list(frame.columns) == [c.name for c in JOIN_CONDITION_COLUMNS]
    assert frame["score"].is_monotonic_decreasing
    declared = frame[frame["origin"] == "DECLARED"]
    for join in (j for j in lake.truth.joins if j.declared_fk):
        pair = {(lake.key(join.left), tuple(join.left_columns)),
                (lake.key(join.right), tuple(join.right_columns))}
        rows = [r for r in declared.itertuples()
                if {(r.left_key, tuple(r.left_cols)), (r.right_key, tuple(r.right_cols))} == pair]
        assert rows, join
        assert rows[0].score == 1.0


def test_join_graph_has_one_edge_per_joined_pair(lake: SharedLake) -> None:
    graph = lake.cat.join_graph(min_score=0, copies=False)
    listed = lake.cat.api.list_join_conditions()["list"]
    pairs = {frozenset((c["leftResourceId"], c["rightResourceId"])) for c in listed}
    assert {frozenset(edge) for edge in graph.edges} == pairs
    assert sum(len(d["conditions"]) for *_, d in graph.edges(data=True)) == len(listed)
    truth = {frozenset((j.left, j.right)) for j in lake.truth.joins if j.left != j.right}
    found = [p for p in truth if graph.has_edge(*(lake.key(name) for name in p))]
    assert len(found) >= len(truth) / 2  # discovery finds most true joins (73 % at this scale)
    edge = _pair(graph, lake, "sales.orders", "sales.order_items")
    condition = edge["conditions"][0]
    assert edge["score"] == edge["weight"] == condition["score"] == 1.0
    left_is_orders = condition["left"] == lake.key("sales.orders")
    cols = condition["left_cols"] if left_is_orders else condition["right_cols"]
    assert cols == ["order_id"]
    assert condition["cardinality"] == ("1:N" if left_is_orders else "N:1")
    assert graph.nodes[lake.key("sales.orders")]["source"] == SQL


def test_join_graph_min_score_drops_weaker_pairs(cat: Catalog) -> None:
    full = cat.join_graph(min_score=0, copies=False)
    strict = cat.join_graph(min_score=0.95, copies=False)
    assert 0 < strict.number_of_edges() <= full.number_of_edges()
    assert all(data["score"] >= 0.95 for *_, data in strict.edges(data=True))


def test_default_join_graph_keeps_documented_scores_and_merges_copies(lake: SharedLake) -> None:
    graph = lake.cat.join_graph()
    assert graph.graph["min_score"] == DEFAULT_MIN_SCORE == 0.85
    assert all(score >= 0.85 for *_, score in graph.edges(data="score"))
    # crm/customers.csv is a COPY of sales.customers: one node, named by the table
    copies = [r for r in lake.cat.api.list_lineage(lineage_types=["INFERRED"])["list"]
              if r["evidence"].get("kind") == "COPY"]
    assert copies
    customers, export = lake.key("sales.customers"), lake.key("crm/customers.csv")
    assert {customers, export} <= {r["upstreamKey"] for r in copies} | {
        r["downstreamKey"] for r in copies}
    assert export not in graph
    group = graph.nodes[customers]
    assert group["members"][0] == customers and export in group["members"]
    assert group["label"].splitlines() == ["sales.customers", "= crm/customers.csv"]
    assert group["member_sources"] == ["demo_sql", "demo_files"]
    assert graph.graph["copy_groups"] >= 1
    assert graph.graph["resource_count"] > graph.number_of_nodes()
    # every member's joins are the group's: none between two members, one per pair and columns
    for u, v, data in graph.edges(data=True):
        assert u != v or all(c["origin"] == "DECLARED" for c in data["conditions"])
        columns = [(tuple(c["left_cols"]), tuple(c["right_cols"])) for c in data["conditions"]]
        assert len(columns) == len(set(columns))
        assert data["conditions"] == sorted(data["conditions"], key=lambda c: -c["score"])
    orders = graph.edges[customers, lake.key("sales.orders")]
    assert orders["label"].splitlines()[0] == "customer_id"
    unmerged = lake.cat.join_graph(copies=False)
    assert graph.number_of_nodes() < unmerged.number_of_nodes()
    assert graph.number_of_edges() <= unmerged.number_of_edges()


def test_join_graph_of_a_scope_merges_copies_from_other_sources(lake: SharedLake) -> None:
    graph = lake.cat.join_graph(SQL)
    customers = lake.key("sales.customers")
    assert lake.key("crm/customers.csv") in graph.nodes[customers]["members"]
    assert graph.nodes[customers]["in_scope"] is True


def test_draw_join_graph_of_the_lake_is_readable(lake: SharedLake) -> None:
    graph = lake.cat.join_graph()
    ax = draw_join_graph(graph)
    labels = [t for t in ax.texts if t.get_gid() != "edge-label"]
    edge_labels = [t.get_text() for t in ax.texts if t.get_gid() == "edge-label"]
    assert len(labels) == graph.number_of_nodes()
    assert "sales.customers\n= crm/customers.csv" in [t.get_text() for t in labels]
    assert "customer_id" in edge_labels
    drawn = strongest_joins(graph)
    # Every drawn join is labelled, or counted in the title when its label found no free spot.
    unlabelled = re.search(r"no room for the columns of (\d+) join", ax.get_title())
    left_out = int(unlabelled.group(1)) if unlabelled else 0
    assert left_out <= 1, ax.get_title()
    assert len(edge_labels) + left_out == (drawn.number_of_edges()
                                           - nx.number_of_selfloops(drawn))
    flat = nx.Graph(drawn)
    flat.remove_edges_from(list(nx.selfloop_edges(flat)))
    assert crossings(flat, component_layout(flat)) <= 2
    renderer = ax.figure.canvas.get_renderer()  # type: ignore[attr-defined]
    boxes = [t.get_window_extent(renderer) for t in labels]
    assert not [(a, b) for i, a in enumerate(boxes) for b in boxes[i + 1:] if a.overlaps(b)]
    plt.close("all")


def test_join_graph_scope_of_keys(lake: SharedLake) -> None:
    scope = [lake.key("sales.products")]
    graph = lake.cat.join_graph(scope)
    assert lake.key("sales.order_items") in graph
    assert all(lake.key("sales.products") in edge for edge in graph.edges)


def test_resource_join_conditions_agree_with_the_list(lake: SharedLake) -> None:
    key = lake.key("sales.order_items")
    own = lake.cat.api.get_resource(key)["joinConditions"]
    assert own and all(c["leftResourceId"] == key for c in own)
    listed = lake.cat.join_conditions([key])
    assert set(listed["key"]) == {c["key"] for c in own}


# -- paths ---------------------------------------------------------------------------------------


def test_join_paths_between_resources_known_to_join(lake: SharedLake) -> None:
    join = next(j for j in lake.truth.joins if j.left == "sales.orders"
                and j.right == "sales.order_items")
    frame = lake.cat.join_paths((SQL, join.left), (SQL, join.right))
    assert list(frame.columns) == [c.name for c in JOIN_PATH_COLUMNS]
    best = frame[frame["path"] == 1]
    assert best["hops"].tolist() == [1]
    assert best.iloc[0]["left_cols"] == list(join.left_columns)
    assert best.iloc[0]["right_cols"] == list(join.right_columns)
    assert best.iloc[0]["left"] == lake.key(join.left)
    assert frame.groupby("path")["path_score"].first().is_monotonic_decreasing


def test_join_paths_through_an_intermediate_resource(lake: SharedLake) -> None:
    # products -> order_items -> orders: no direct condition, two declared keys
    frame = lake.cat.join_paths((SQL, "sales.products"), (SQL, "sales.orders"), max_hops=2)
    two_hops = frame[frame["hops"] == 2]
    assert not two_hops.empty
    path = two_hops[two_hops["path"] == two_hops["path"].min()]
    assert path["right_path"].tolist() == ["sales.order_items", "sales.orders"]
    assert path["left_cols"].tolist() == [["product_id"], ["order_id"]]


def test_join_paths_without_a_way_is_empty(lake: SharedLake) -> None:
    frame = lake.cat.join_paths((SQL, "sales.products"), (SQL, "hr.departments"), max_hops=1)
    assert frame.empty and list(frame.columns) == [c.name for c in JOIN_PATH_COLUMNS]


def test_join_paths_bad_input(cat: Catalog) -> None:
    with pytest.raises(ValueError):
        cat.join_paths((SQL, "sales.orders"), (SQL, "sales.orders"))
    with pytest.raises(ValueError):
        cat.join_paths((SQL, "sales.orders"), (SQL, "sales.products"), max_hops=0)
    with pytest.raises(NotFoundError):
        cat.join_paths((SQL, "sales.orders"), "no-such-resource")


# -- overlap -------------------------------------------------------------------------------------


def _columns(lake: SharedLake, table: str) -> list[str]:
    return lake.truth.resource(table).column_names


def test_overlap_of_two_tables_matches_their_columns(lake: SharedLake) -> None:
    one, two = "sales.customers", "sales.customer_revenue"
    frame = lake.cat.overlap(one, two)
    a, b = _columns(lake, one), _columns(lake, two)
    common = [c for c in a if c.casefold() in {x.casefold() for x in b}]
    assert frame.loc[frame["side"] == "both", "field"].tolist() == common
    assert set(frame.loc[frame["side"] == "one", "field"]) == set(a) - set(common)
    union = len(set(a) | set(b))
    assert frame.attrs["overlap_percent"] == pytest.approx(round(100 * len(common) / union, 2))


def test_overlap_matrix_is_symmetric_with_full_diagonal(lake: SharedLake) -> None:
    tables = ["sales.customers", "sales.orders", "sales.order_items", "hr.employees"]
    matrix = lake.cat.overlap_matrix(tables)
    assert list(matrix.index) == list(matrix.columns) == tables
    assert all(matrix.loc[t, t] == 100.0 for t in tables)
    assert (matrix.to_numpy() == matrix.to_numpy().T).all()
    single = lake.cat.overlap("sales.orders", "sales.order_items").attrs["overlap_percent"]
    assert matrix.loc["sales.order_items", "sales.orders"] == single


def test_overlap_errors_are_typed(cat: Catalog) -> None:
    with pytest.raises(NotFoundError) as caught:
        cat.overlap("sales.customers", "sales.nothing_here")
    assert caught.value.error_code == "TABLE_NOT_FOUND"
    with pytest.raises(NotFoundError):
        cat.overlap_matrix(["sales.customers", "nowhere.table"])
    with pytest.raises(ValueError):
        cat.overlap("customers", "sales.orders")
    with pytest.raises(ValueError):
        cat.overlap_matrix([])
    with pytest.raises(NotFoundError) as folder:
        cat.overlap("sales.customers", "sales.orders", virtual_folder="no such folder")
    assert folder.value.error_code == "VIRTUAL_FOLDER_NOT_FOUND"


def test_overlap_csv_through_the_raw_layer(cat: Catalog) -> None:
    text = cat.api.overlap_csv(
        "virtualFolder;tableOne;tableTwo\n;sales.customers;sales.customer_revenue\n"
        ";sales.orders;sales.order_items\n", separator=";")
    rows = list(csv.DictReader(io.StringIO(text), delimiter=";"))
    assert [r["tableTwo"] for r in rows] == ["sales.customer_revenue", "sales.order_items"]
    expected = cat.overlap("sales.orders", "sales.order_items").attrs["overlap_percent"]
    assert float(rows[1]["overlapPercent"]) == pytest.approx(expected)
    assert "customer_id" in rows[0]["commonFields"].split("|")
    with pytest.raises(BadRequestError) as caught:
        cat.api.overlap_csv(",sales.orders\n")
    assert caught.value.error_code == "INVALID_CSV"
