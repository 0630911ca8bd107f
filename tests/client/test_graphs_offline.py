"""Graph and frame building of the lineage, join, overlap and coverage toolkit, from canned
JSON shaped as ``docs/relations-api.md`` says (builders directly, the Catalog methods over a
mocked service)."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import parse_qs, urlsplit

import networkx as nx
import pytest
import responses

from catalog_nb.client import BadRequestError, Catalog, NotFoundError, TruncatedResultWarning
from catalog_nb.client.relations.frames import (
    IMPACT_COLUMNS,
    JOIN_CONDITION_COLUMNS,
    JOIN_PATH_COLUMNS,
    OVERLAP_COLUMNS,
    Scope,
)
from catalog_nb.client.relations.graphs import impact_rows, lineage_from_answer, lineage_from_edges
from catalog_nb.client.relations.joins import (
    condition_label,
    flip_cardinality,
    join_graph_from_conditions,
    join_path_rows,
    merge_copies,
)
from catalog_nb.client.tags.coverage import coverage_rows, tag_graph_from
from tests.client.mocks import API, error_body
from tests.client.relation_mocks import (
    CONDITIONS,
    CUSTOMERS_DOWNSTREAM,
    FILES,
    TOP_UPSTREAM,
    answer,
    edge,
    node,
    page,
)

# -- lineage builders ----------------------------------------------------------------------------


def test_lineage_graph_has_nodes_edges_and_metadata() -> None:
    graph = lineage_from_answer(TOP_UPSTREAM, fields=True)
    assert set(graph) == {"top", "rev", "cust", "ord", "items"}
    assert set(graph.predecessors("rev")) == {"cust", "ord", "items"}
    assert graph.nodes["rev"]["resource_type"] == "view"
    assert graph.nodes["cust"]["distance"] == -2
    assert graph.nodes["cust"]["source"] == "demo_sql"
    assert graph.nodes["top"]["lineage_state"] == "PARSED"
    data = graph.edges["rev", "top"]
    assert data["lineage_type"] == "FACTUAL" and data["evidence"] == {"parser": "sqlglot"}
    assert data["field_lineage"] == [
        {"downstreamField": "customer_id", "upstreamFields": ["customer_id"]}
    ]
    assert graph.graph["root"] == "top" and graph.graph["truncated"] is False
    assert graph.graph["hidden_count"] == 0 and graph.graph["max_depth"] == 10


def test_lineage_without_fields_has_no_field_lineage() -> None:
    graph = lineage_from_answer(TOP_UPSTREAM)
    assert all("field_lineage" not in data for *_, data in graph.edges(data=True))


def test_lineage_edges_to_unknown_nodes_are_left_out() -> None:
    lonely = answer("a", [node("a", "s.a")], [edge("a", "ghost")])
    graph = lineage_from_answer(lonely)
    assert list(graph) == ["a"] and graph.number_of_edges() == 0


def test_impact_rows_have_distance_types_and_via() -> None:
    graph = lineage_from_answer(CUSTOMERS_DOWNSTREAM)
    rows = {row["key"]: row for row in impact_rows(graph, "cust")}
    assert set(rows) == {"rev", "contacts", "csv", "top", "clean"}
    assert rows["top"]["distance"] == 2 and rows["top"]["via"] == "rev"
    assert rows["clean"]["lineage_types"] == ["INFERRED"]
    assert rows["clean"]["via_path"] == "crm/customers.csv"
    distances = [row["distance"] for row in impact_rows(graph, "cust")]
    assert distances == sorted(distances)


def test_lineage_from_edges_keeps_edges_touching_the_scope() -> None:
    records = [
        {**edge("cust", "csv", "INFERRED", 0.9),
         "upstream": node("cust", "sales.customers", None),
         "downstream": node("csv", "crm/customers.csv", None, source="demo_files",
                            rtype="file")},
        {**edge("cust", "rev"), "upstream": node("cust", "sales.customers", None),
         "downstream": node("rev", "sales.customer_revenue", None, rtype="view")},
    ]
    graph = lineage_from_edges(records, scope=Scope(source_name="demo_files"), total=2)
    assert list(graph.edges) == [("cust", "csv")]
    assert graph.nodes["csv"]["in_scope"] is True and graph.nodes["cust"]["in_scope"] is False
    assert graph.graph == {"total_count": 2, "edge_count": 1}


# -- join builders -------------------------------------------------------------------------------


def test_join_graph_merges_conditions_per_pair_best_first() -> None:
    graph = join_graph_from_conditions(CONDITIONS)
    conditions = graph.edges["cust", "csv"]["conditions"]
    assert [c["key"] for c in conditions] == ["j4", "j5"]
    assert graph.edges["cust", "csv"]["score"] == graph.edges["cust", "csv"]["weight"] == 0.93
    assert conditions[1]["left_cols"] == ["email"] and conditions[1]["right_cols"] == ["contact"]
    assert graph.has_edge("emp", "emp")  # the declared self-join
    assert graph.nodes["csv"]["source"] == "demo_files"


def test_join_graph_counts_a_condition_listed_from_both_sides_once() -> None:
    graph = join_graph_from_conditions(CONDITIONS + CONDITIONS[:2])
    assert len(graph.edges["cust", "ord"]["conditions"]) == 1


def test_join_graph_min_score_and_scope() -> None:
    graph = join_graph_from_conditions(CONDITIONS, min_score=0.9)
    assert not graph.has_edge("csv", "ord")
    scoped = join_graph_from_conditions(CONDITIONS, scope=Scope(keys=frozenset({"prod"})))
    assert set(scoped.edges) == {("prod", "items")}
    assert scoped.nodes["items"]["in_scope"] is False


def _copy_edge(up: dict[str, Any], down: dict[str, Any], kind: str,
               renamed: dict[str, str]) -> dict[str, Any]:
    """A ``GET /lineage`` record of an INFERRED edge of ``kind`` with its field lineage."""
    return {**edge(up["key"], down["key"], "INFERRED", 1.0), "upstream": up, "downstream": down,
            "evidence": {"kind": kind},
            "fieldLineage": [{"downstreamField": d, "upstreamFields": [u]}
                             for d, u in renamed.items()]}


def test_copies_merge_into_one_node_keeping_the_strongest_condition_per_pair() -> None:
    cust, csv = node("cust", "sales.customers"), node("csv", "crm/customers.csv", source=FILES)
    lineage = [_copy_edge(cust, csv, "COPY", {"customer_id": "customer_id", "contact": "email"})]
    graph = merge_copies(join_graph_from_conditions(CONDITIONS), lineage)
    assert "csv" not in graph
    members = graph.nodes["cust"]
    assert members["members"] == ["cust", "csv"]
    assert members["label"] == "sales.customers\n= crm/customers.csv"
    assert members["source"] == "demo_sql"
    # copies join each other on every column (j4, j5): lineage, not joins
    assert not graph.has_edge("cust", "cust")
    # the orders join the customers (j1, 1.0) and their CSV copy (j6, 0.88): one condition
    edge_ = graph.edges["cust", "ord"]
    assert [c["key"] for c in edge_["conditions"]] == ["j1"]
    assert edge_["score"] == 1.0 and edge_["label"] == "customer_id"
    assert graph.graph["copy_groups"] == 1 and graph.graph["resource_count"] == 6
    assert graph.has_edge("emp", "emp")  # a declared self-join is no copy


def test_only_copy_edges_merge_resources() -> None:
    cust, csv = node("cust", "sales.customers"), node("csv", "crm/customers.csv", source=FILES)
    lineage = [_copy_edge(cust, csv, "SUBSET", {"customer_id": "customer_id"})]
    graph = merge_copies(join_graph_from_conditions(CONDITIONS), lineage)
    assert set(graph.edges) == set(join_graph_from_conditions(CONDITIONS).edges)


def test_condition_labels_read_from_the_foreign_side_to_the_key() -> None:
    graph = join_graph_from_conditions(CONDITIONS)
    assert graph.edges["cust", "csv"]["label"] == "customer_id\nemail ↔ contact"
    assert condition_label({"left_cols": ["id"], "right_cols": ["manager_id"],
                            "cardinality": "N:1"}) == "id → manager_id"


def test_join_paths_rank_by_product_of_scores_and_orient_hops() -> None:
    graph = join_graph_from_conditions(CONDITIONS)
    rows, found = join_path_rows(graph, "prod", "csv", max_hops=4, limit=None)
    assert found == 2
    best = [r for r in rows if r["path"] == 1]
    assert [(r["left"], r["right"]) for r in best] == [
        ("prod", "items"), ("items", "ord"), ("ord", "cust"), ("cust", "csv")]
    assert best[1]["cardinality"] == "N:1"  # orders 1:N items, read from items
    assert best[1]["left_cols"] == ["order_id"] and best[0]["path_score"] == pytest.approx(0.93)
    second = [r for r in rows if r["path"] == 2]
    assert second[0]["path_score"] == pytest.approx(0.88) and second[0]["hops"] == 3


def test_join_paths_respect_max_hops_and_limit() -> None:
    graph = join_graph_from_conditions(CONDITIONS)
    assert join_path_rows(graph, "prod", "csv", max_hops=2, limit=None) == ([], 0)
    rows, found = join_path_rows(graph, "prod", "csv", max_hops=4, limit=1)
    assert found == 2 and {r["path"] for r in rows} == {1}


def test_flip_cardinality() -> None:
    assert [flip_cardinality(c) for c in ("1:N", "N:1", "1:1", "N:M")] == [
        "N:1", "1:N", "1:1", "N:M"]


# -- coverage builders ---------------------------------------------------------------------------


def _resource(key: str, source: str, path: str, fields: list[str]) -> dict[str, Any]:
    return {"key": key, "dataSourceName": source, "resourcePath": path, "name": path,
            "resourceType": "resource_type_file", "fields": [{"name": f} for f in fields]}


def _assoc(resource: str, tag: str, field: str | None, domain: str = "Sensitive") -> dict[str, Any]:
    return {"key": f"{resource}-{tag}-{field}", "resourceKey": resource, "field": field,
            "tagFullName": tag, "tagKey": f"k-{tag}", "domainName": domain, "state": "ACCEPTED"}


RESOURCES = [
    _resource("a", "files", "crm/a.csv", ["id", "email", "phone", "note"]),
    _resource("b", "files", "crm/b.csv", ["id", "x"]),
    _resource("c", "sql", "s.c", ["mail", "y", "z"]),
]
ASSOCIATIONS = [
    _assoc("a", "Sensitive.Email", "email"),
    _assoc("a", "Sensitive.Phone", "phone"),
    _assoc("a", "Sensitive.Email", "phone"),
    _assoc("c", "Sensitive.Email", "mail"),
    _assoc("b", "Finance.Ledger", None, "Finance"),
    _assoc("a", "Sensitive.Email", "no_such_field"),
]


def test_coverage_rows_per_level() -> None:
    rows = coverage_rows(RESOURCES, ASSOCIATIONS)
    by = {(r["level"], r["name"]): r for r in rows}
    files = by["source", "files"]
    assert (files["fields"], files["tagged_fields"], files["share"]) == (6, 2, 2 / 6)
    assert (files["resources"], files["tagged_resources"]) == (2, 2)
    assert by["resource", "crm/a.csv"]["share"] == 0.5
    assert by["resource", "crm/b.csv"]["tagged_fields"] == 0
    assert by["resource", "crm/b.csv"]["tagged_resources"] == 1  # tagged on the resource
    email = by["tag", "Sensitive.Email"]
    assert (email["fields"], email["tagged_fields"], email["tagged_resources"]) == (9, 3, 2)
    assert by["domain", "Sensitive"]["tagged_fields"] == 3
    assert by["domain", "Finance"]["tagged_resources"] == 1
    assert [r["level"] for r in rows] == sorted(
        (r["level"] for r in rows), key=["source", "resource", "domain", "tag"].index)


def test_tag_graph_is_bipartite_with_weights() -> None:
    graph = tag_graph_from(RESOURCES, ASSOCIATIONS)
    tags = {n for n, d in graph.nodes(data=True) if d["bipartite"] == 0}
    assert tags == {"Sensitive.Email", "Sensitive.Phone", "Finance.Ledger"}
    assert nx.is_bipartite(graph)
    assert graph.edges["Sensitive.Email", "a"]["weight"] == 2
    assert graph.edges["Sensitive.Email", "a"]["fields"] == ["email", "phone"]
    assert graph.edges["Finance.Ledger", "b"]["resource_level"] is True
    assert graph.nodes["a"]["kind"] == "resource" and graph.nodes["a"]["source"] == "files"


# -- the Catalog methods over a mocked service ---------------------------------------------------


def _query(call: Any) -> dict[str, list[str]]:
    return parse_qs(urlsplit(call.request.url).query)


def test_lineage_sends_depths_types_and_builds_the_graph(
    cat: Catalog, mock: responses.RequestsMock
) -> None:
    mock.get(API + "/lineage/top", json=TOP_UPSTREAM)
    graph = cat.lineage("top", upstream=2, downstream=0, fields=True, types="factual")
    sent = _query(mock.calls[-1])
    assert sent["upstream"] == ["2"] and sent["downstream"] == ["0"]
    assert sent["fieldLineage"] == ["true"] and sent["lineageType"] == ["FACTUAL"]
    assert graph.number_of_nodes() == 5 and "field_lineage" in graph.edges["rev", "top"]


def test_lineage_warns_when_the_service_cut_the_walk(
    cat: Catalog, mock: responses.RequestsMock
) -> None:
    cut = {**TOP_UPSTREAM, "truncated": True,
           "truncatedReasons": ["The walk stopped at 500 resources (CATALOG_LINEAGE_MAX_NODES)."]}
    mock.get(API + "/lineage/top", json=cut)
    with pytest.warns(TruncatedResultWarning, match="500 resources"):
        graph = cat.lineage("top")
    assert graph.graph["truncated"] is True


@pytest.mark.parametrize(
    "kwargs", [{"upstream": -1}, {"downstream": 1.5}, {"types": "GUESSED"}, {"types": []}]
)
def test_lineage_bad_arguments_raise_value_error(cat: Catalog, kwargs: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        cat.lineage("top", **kwargs)


def test_lineage_unknown_resource_is_not_found(cat: Catalog, mock: responses.RequestsMock) -> None:
    mock.get(API + "/lineage/nope", status=404,
             json=error_body(404, "RESOURCE_NOT_FOUND", "No such resource."))
    with pytest.raises(NotFoundError) as caught:
        cat.lineage("nope")
    assert caught.value.error_code == "RESOURCE_NOT_FOUND"


def test_impact_walks_again_to_max_depth_when_more_exists(
    cat: Catalog, mock: responses.RequestsMock
) -> None:
    edges = CUSTOMERS_DOWNSTREAM["edges"]
    shallow = answer("cust", CUSTOMERS_DOWNSTREAM["nodes"][:4], [*edges[:2], edges[3]],
                     upstream=0, downstream=1, truncated=True,
                     reasons=["There is more lineage downstream beyond 1 level."])
    mock.get(API + "/lineage/cust", json=shallow)
    mock.get(API + "/lineage/cust", json=CUSTOMERS_DOWNSTREAM)
    frame = cat.impact("cust")
    assert [_query(c)["downstream"] for c in mock.calls[1:]] == [["1"], ["10"]]
    assert list(frame.columns) == [c.name for c in IMPACT_COLUMNS]
    assert frame.set_index("key").loc["top", "distance"] == 2
    assert frame.attrs["truncated"] is False


def test_impact_with_a_depth_does_not_warn_about_deeper_levels(
    cat: Catalog, mock: responses.RequestsMock
) -> None:
    shallow = answer("cust", CUSTOMERS_DOWNSTREAM["nodes"][:2], CUSTOMERS_DOWNSTREAM["edges"][:1],
                     upstream=0, downstream=1, truncated=True,
                     reasons=["There is more lineage downstream beyond 1 level."])
    mock.get(API + "/lineage/cust", json=shallow)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        frame = cat.impact("cust", depth=1)
    assert frame["key"].tolist() == ["rev"] and frame.attrs["truncated"] is True


def test_impact_of_a_leaf_is_empty_with_columns(cat: Catalog, mock: responses.RequestsMock) -> None:
    mock.get(API + "/lineage/top", json=answer("top", [node("top", "s.top")], [], upstream=0))
    frame = cat.impact("top")
    assert frame.empty and list(frame.columns) == [c.name for c in IMPACT_COLUMNS]
    assert str(frame["distance"].dtype) == "Int64"


def test_lineage_graph_pages_through_edges(cat: Catalog, mock: responses.RequestsMock) -> None:
    records = [
        {**edge(f"u{i}", f"d{i}"), "upstream": node(f"u{i}", f"s.u{i}", None),
         "downstream": node(f"d{i}", f"s.d{i}", None, rtype="view")}
        for i in range(3)
    ]
    mock.get(API + "/lineage", json=page(records))
    graph = cat.lineage_graph(types=["FACTUAL", "INFERRED"])
    assert graph.number_of_edges() == 3 and graph.graph["total_count"] == 3
    assert _query(mock.calls[-1])["lineageType"] == ["FACTUAL", "INFERRED"]


def test_join_conditions_frame_is_typed_and_sorted(
    cat: Catalog, mock: responses.RequestsMock
) -> None:
    mock.get(API + "/joincondition", json=page(CONDITIONS))
    frame = cat.join_conditions()
    assert list(frame.columns) == [c.name for c in JOIN_CONDITION_COLUMNS]
    assert frame["score"].is_monotonic_decreasing
    row = frame.set_index("key").loc["j5"]
    assert row["left_cols"] == ["email"] and row["sample_size"] == 128
    assert row["origin"] == "DISCOVERED" and row["left_in_right"] == 1.0


def test_join_paths_via_the_service(cat: Catalog, mock: responses.RequestsMock) -> None:
    mock.get(API + "/joincondition", json=page(CONDITIONS))
    frame = cat.join_paths("prod", "csv", max_hops=4)
    assert list(frame.columns) == [c.name for c in JOIN_PATH_COLUMNS]
    assert frame.attrs["paths_found"] == 2 and frame["path"].max() == 2


def test_join_paths_unknown_resource_is_not_found(
    cat: Catalog, mock: responses.RequestsMock
) -> None:
    mock.get(API + "/joincondition", json=page(CONDITIONS))
    mock.get(API + "/dataresource/ghost", status=404,
             json=error_body(404, "RESOURCE_NOT_FOUND", "No such resource."))
    with pytest.raises(NotFoundError):
        cat.join_paths("prod", "ghost")


@pytest.mark.parametrize("kwargs", [{"max_hops": 0}, {"limit": 0}])
def test_join_paths_bad_arguments(cat: Catalog, kwargs: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        cat.join_paths("prod", "csv", **kwargs)


def test_join_paths_same_resource_is_a_value_error(cat: Catalog) -> None:
    with pytest.raises(ValueError, match="same resource"):
        cat.join_paths("prod", "prod")


def test_overlap_frame_and_percent(cat: Catalog, mock: responses.RequestsMock) -> None:
    mock.get(API + "/overlap/table", json={
        "commonFields": ["customer_id", "email"], "tableOneUniqueFields": ["name"],
        "tableTwoUniqueFields": ["mail", "id"], "overlapPercent": 40.0})
    frame = cat.overlap("sales.customers", "sales.customer_contacts")
    assert list(frame.columns) == [c.name for c in OVERLAP_COLUMNS]
    assert frame["side"].tolist() == ["both", "both", "one", "two", "two"]
    assert frame.attrs["overlap_percent"] == 40.0
    assert _query(mock.calls[-1])["table1"] == ["sales.customers"]


@pytest.mark.parametrize("tables", [[], ["sales.orders", "SALES.orders"], ["orders"]])
def test_overlap_matrix_bad_tables(cat: Catalog, tables: list[str]) -> None:
    with pytest.raises(ValueError):
        cat.overlap_matrix(tables)


def test_overlap_matrix_batches_pairs_and_is_symmetric(
    cat: Catalog, mock: responses.RequestsMock
) -> None:
    def reply(request: Any) -> tuple[int, dict[str, str], str]:
        items = json.loads(request.body)
        out = [{"commonFields": [], "tableOneUniqueFields": [], "tableTwoUniqueFields": [],
                "overlapPercent": 100.0 if i["tableOne"] == i["tableTwo"] else 25.0}
               for i in items]
        return 201, {"Content-Type": "application/json"}, json.dumps(out)

    mock.add_callback(responses.POST, API + "/overlap/table", callback=reply)
    matrix = cat.overlap_matrix(["a.x", "a.y", "b.z"])
    assert matrix.shape == (3, 3) and str(matrix.dtypes.iloc[0]) == "Float64"
    assert matrix.loc["a.x", "a.x"] == 100.0 and matrix.loc["b.z", "a.y"] == 25.0
    assert (matrix.to_numpy() == matrix.to_numpy().T).all()
    assert len(json.loads(mock.calls[-1].request.body)) == 6


def test_scope_dataframe_needs_a_key_column(cat: Catalog) -> None:
    import pandas as pd

    with pytest.raises(ValueError, match="key"):
        cat.join_graph(pd.DataFrame({"path": ["a"]}))


def test_overlap_csv_logs_in_again_once_after_an_expired_session(
    cat: Catalog, mock: responses.RequestsMock
) -> None:
    mock.post(API + "/overlap/table/csv", status=401,
              json=error_body(401, "SESSION_EXPIRED", "Your session expired."))
    mock.post(API + "/overlap/table/csv", status=201, body="virtualFolder,tableOne\n",
              content_type="text/csv")
    text = cat.api.overlap_csv(",a.x,a.y\n")
    assert text == "virtualFolder,tableOne\n"
    uploads = [c for c in mock.calls if c.request.url.startswith(API + "/overlap/table/csv")]
    assert len(uploads) == 2 and cat.http.logins == 2
    sent = uploads[-1].request
    assert sent.headers["Content-Type"].startswith("multipart/form-data")
    assert b'name="fileStream"' in sent.body and b",a.x,a.y" in sent.body
    assert _query(uploads[-1])["separator"] == [","]


def test_overlap_csv_error_is_typed(cat: Catalog, mock: responses.RequestsMock) -> None:
    mock.post(API + "/overlap/table/csv", status=400,
              json=error_body(400, "INVALID_CSV", "Line 1 has 2 columns."))
    with pytest.raises(BadRequestError) as caught:
        cat.api.overlap_csv("a,b\n")
    assert caught.value.error_code == "INVALID_CSV"
