"""Lineage and impact through the client against a real server that profiled the demo lake.

The views' SQL gives FACTUAL edges (``truth.views``); the lake's file copies and subsets give
INFERRED ones (``truth.derivations``).
"""

from __future__ import annotations

from collections.abc import Callable

import networkx as nx
import pytest

from catalog_nb.client import Catalog, NotFoundError, connect
from catalog_nb.client.relations.frames import IMPACT_COLUMNS
from tests.client.mocks import LIVE_PASSWORD
from tests.client.shared_lake import FILES, SQL, SharedLake


@pytest.fixture
def lake(shared_lake: SharedLake) -> SharedLake:
    return shared_lake


@pytest.fixture
def cat(lake: SharedLake) -> Catalog:
    return lake.cat


def test_lineage_of_a_view_has_its_tables_upstream_with_factual_edges(lake: SharedLake) -> None:
    for view in lake.truth.views:
        key = lake.key(view.view)
        graph = lake.cat.lineage((SQL, view.view), upstream=1, downstream=0)
        assert graph.graph["root"] == key
        upstream = {graph.nodes[n]["path"] for n in graph.predecessors(key)}
        assert upstream == set(view.tables), view.view
        for table in view.tables:
            data = graph.edges[lake.key(table), key]
            assert data["lineage_type"] == "FACTUAL"
            assert isinstance(data["evidence"], dict)
        assert graph.nodes[key]["distance"] == 0
        assert graph.nodes[key]["resource_type"] == "view"
        assert graph.nodes[key]["lineage_state"] in ("PARSED", "PARTIAL")
        assert all(graph.nodes[n]["distance"] == -1 for n in graph.predecessors(key))


def test_field_lineage_of_a_view_follows_its_columns(lake: SharedLake) -> None:
    view = next(v for v in lake.truth.views if v.view == "sales.customer_contacts")
    graph = lake.cat.lineage((SQL, view.view), upstream=1, downstream=0, fields=True)
    edge = graph.edges[lake.key("sales.customers"), lake.key(view.view)]
    mapped = {item["downstreamField"]: item["upstreamFields"] for item in edge["field_lineage"]}
    for column, sources in view.columns.items():
        expected = sorted(s.split(".")[-1] for s in sources)
        assert sorted(f.split(".")[-1] for f in mapped[column]) == expected, column


def test_lineage_walks_several_levels_with_negative_distances(lake: SharedLake) -> None:
    top = lake.key("sales.top_customers")
    graph = lake.cat.lineage(top, upstream=2, downstream=0, types="FACTUAL")
    distances = {graph.nodes[n]["path"]: graph.nodes[n]["distance"] for n in graph}
    assert distances["sales.customer_revenue"] == -1
    assert distances["sales.customers"] == distances["sales.orders"] == -2
    assert nx.is_directed_acyclic_graph(graph)
    assert nx.has_path(graph, lake.key("sales.order_items"), top)
    assert set(graph.graph["lineage_types"]) == {"FACTUAL"}


def test_inferred_lineage_between_files(lake: SharedLake) -> None:
    for derivation in lake.truth.derivations:
        if "/" not in derivation.derived or "/" not in derivation.source:
            continue
        derived = lake.key(derivation.derived)
        graph = lake.cat.lineage((FILES, derivation.derived), upstream=1, downstream=0,
                                 types="INFERRED", fields=True)
        source = lake.key(derivation.source)
        assert graph.has_edge(source, derived), derivation
        data = graph.edges[source, derived]
        assert data["lineage_type"] == "INFERRED" and 0 < data["score"] <= 1
        assert data["field_lineage"]


def test_impact_of_a_base_table_lists_views_with_distances(lake: SharedLake) -> None:
    frame = lake.cat.impact((SQL, "sales.customers"))
    assert list(frame.columns) == [c.name for c in IMPACT_COLUMNS]
    distance = dict(zip(frame["path"], frame["distance"], strict=True))
    assert distance["sales.customer_revenue"] == 1
    assert distance["sales.customer_contacts"] == 1
    assert distance["sales.top_customers"] == 2
    top = frame.set_index("path").loc["sales.top_customers"]
    assert top["via_path"] == "sales.customer_revenue" and top["lineage_types"] == ["FACTUAL"]
    assert frame["distance"].is_monotonic_increasing
    assert frame.attrs["truncated"] is False


def test_impact_depth_limits_the_levels(cat: Catalog) -> None:
    frame = cat.impact((SQL, "sales.customers"), depth=1)
    assert set(frame["distance"]) == {1}
    assert "sales.top_customers" not in set(frame["path"])


def test_impact_agrees_with_the_lineage_graph(lake: SharedLake) -> None:
    graph = lake.cat.lineage_graph()
    root = lake.key("sales.orders")
    expected = nx.single_source_shortest_path_length(graph, root)
    frame = lake.cat.impact(root)
    assert dict(zip(frame["key"], frame["distance"], strict=True)) == {
        k: d for k, d in expected.items() if k != root}


def test_lineage_graph_holds_every_view_edge(lake: SharedLake) -> None:
    graph = lake.cat.lineage_graph(types="FACTUAL")
    for view in lake.truth.views:
        for table in view.tables:
            assert graph.edges[lake.key(table), lake.key(view.view)]["lineage_type"] == "FACTUAL"
    assert graph.graph["edge_count"] == graph.graph["total_count"] == graph.number_of_edges()


def test_lineage_graph_of_a_source_keeps_edges_touching_it(lake: SharedLake) -> None:
    graph = lake.cat.lineage_graph(FILES)
    assert graph.number_of_edges() > 0
    for up, down in graph.edges:
        assert graph.nodes[up]["in_scope"] or graph.nodes[down]["in_scope"]
    assert all(graph.nodes[n]["source"] == FILES for n in graph if graph.nodes[n]["in_scope"])


def test_table_without_lineage_is_a_lone_node(lake: SharedLake) -> None:
    key = lake.key("sales.products")
    graph = lake.cat.lineage(key, upstream=3, downstream=0)
    assert list(graph) == [key] and graph.number_of_edges() == 0


def test_bad_arguments_and_unknown_resources(cat: Catalog) -> None:
    with pytest.raises(ValueError):
        cat.lineage((SQL, "sales.customers"), upstream=-1)
    with pytest.raises(ValueError):
        cat.impact((SQL, "sales.customers"), depth=-2)
    with pytest.raises(NotFoundError) as caught:
        cat.lineage("no-such-resource-key")
    assert caught.value.error_code == "RESOURCE_NOT_FOUND"
    with pytest.raises(NotFoundError):
        cat.impact((SQL, "sales.no_such_table"))


def test_hidden_resources_never_appear(lake: SharedLake, unique: Callable[[str], str]) -> None:
    files_key = next(str(s["key"]) for s in lake.cat.api.list_sources() if s["name"] == FILES)
    role = lake.cat.create_role(unique("files-only"), "Analyst", data_source_keys=[files_key])
    user = lake.cat.create_user(unique("files-user"), roles=[role["name"]], password=LIVE_PASSWORD)
    with connect(lake.server.url, user["name"], LIVE_PASSWORD, progress=False) as other:
        graph = other.lineage((FILES, "crm/customers.csv"), upstream=2, downstream=2)
        assert all(graph.nodes[n]["source"] == FILES for n in graph)
        assert graph.graph["hidden_count"] >= 1  # crm/customers.csv is a copy of sales.customers
        with pytest.raises(NotFoundError):
            other.lineage(lake.key("sales.customers"))
