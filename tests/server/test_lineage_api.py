"""``GET /lineage/{resourceKey}`` and ``GET /lineage`` over real HTTP, on a server whose catalog
was made by real PROFILE jobs over the demo lake (which end with lineage discovery).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from catalog_nb.demo.lake import build_lake, lake_sources
from catalog_nb.demo.truth import LakeTruth
from catalog_nb.server.discovery import view_lineage
from catalog_nb.server.settings import Settings
from tests.conftest import Http, Server
from tests.server.helpers import PASSWORD, assert_error, create_role, create_user
from tests.server.lineage_helpers import paths, sql_source
from tests.server.source_helpers import run_job

NODE_KEYS = {"key", "name", "path", "resourceType", "dataSourceKey", "dataSourceName",
             "fileFormat", "owner", "description", "rowCount", "schemaName", "tableName",
             "distance", "lineageState", "lineageReason"}
EDGE_KEYS = {"key", "upstreamKey", "downstreamKey", "lineageType", "score", "evidence"}


@pytest.fixture(scope="module")
def lake(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, LakeTruth]:
    root = tmp_path_factory.mktemp("lineage-lake") / "lake"
    return root, build_lake(root, scale=0.05)


@pytest.fixture(scope="module")
def lake_server(make_server: Callable[..., Server], lake: tuple[Path, LakeTruth]) -> Server:
    return make_server(data_roots=[lake[0]])


@pytest.fixture(scope="module")
def boss(lake_server: Server) -> Http:
    return lake_server.session()


@pytest.fixture(scope="module")
def jobs(boss: Http, lake: tuple[Path, LakeTruth]) -> dict[str, dict[str, Any]]:
    """The lake's two sources, profiled by jobs (files first): the last job's view of things."""
    done = {}
    for payload in lake_sources(lake[0]):
        response = boss.post("/datasource", json=payload)
        assert response.status_code == 201, response.text
        source = response.json()
        done[payload["sourceType"]] = {"source": source, "job": run_job(boss, source["key"])}
    return done


@pytest.fixture(scope="module")
def keys(lake_server: Server, jobs: dict[str, Any]) -> dict[str, str]:
    """Resource path -> key."""
    return {p: k for k, p in paths(lake_server.store).items()}


def lineage(http: Http, key: str, **params: Any) -> dict[str, Any]:
    response = http.get(f"/lineage/{key}", params=params)
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def by_path(body: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {n["path"]: n for n in body["nodes"]}


def named_edges(body: dict[str, Any]) -> set[tuple[str, str, str]]:
    names = {n["key"]: n["path"] for n in body["nodes"]}
    return {(names[e["upstreamKey"]], names[e["downstreamKey"]], e["lineageType"])
            for e in body["edges"]}


def test_profile_jobs_discover_lineage(jobs: dict[str, dict[str, Any]]) -> None:
    files_job, sql_job = jobs["FILE"]["job"], jobs["SQL"]["job"]
    # The file job saw no database yet: only file-to-file derivations.
    assert files_job["counts"]["inferredEdges"] == 2
    assert sql_job["counts"]["viewsParsed"] == 5 and sql_job["counts"]["viewsUnparsed"] == 0
    assert sql_job["counts"]["factualEdges"] == 9
    assert sql_job["counts"]["inferredEdges"] == 5
    assert "View lineage: 5 of 5 views parsed" in sql_job["message"]


def test_upstream_walk_over_a_view_of_a_view(boss: Http, keys: dict[str, str]) -> None:
    body = lineage(boss, keys["sales.top_customers"], upstream=3, downstream=0)
    nodes = by_path(body)
    assert {p: n["distance"] for p, n in nodes.items()} == {
        "sales.top_customers": 0, "sales.customer_revenue": -1, "sales.customers": -2,
        "sales.orders": -2, "sales.order_items": -2}
    assert named_edges(body) == {
        ("sales.customer_revenue", "sales.top_customers", "FACTUAL"),
        ("sales.customers", "sales.customer_revenue", "FACTUAL"),
        ("sales.orders", "sales.customer_revenue", "FACTUAL"),
        ("sales.order_items", "sales.customer_revenue", "FACTUAL")}
    assert set(body["nodes"][0]) == NODE_KEYS
    assert all(set(e) == EDGE_KEYS for e in body["edges"])  # no fieldLineage unless asked
    assert nodes["sales.top_customers"]["lineageState"] == "PARSED"
    assert nodes["sales.customers"]["lineageState"] is None
    assert nodes["sales.customers"]["schemaName"] == "sales"
    assert body["truncated"] is False and body["truncatedReasons"] == []
    assert body["hiddenCount"] == 0 and body["maxDepth"] == 10
    assert (body["upstream"], body["downstream"]) == (3, 0)
    assert body["lineageTypes"] == ["FACTUAL", "INFERRED"]

    with_fields = lineage(boss, keys["sales.top_customers"], upstream=1, fieldLineage="true")
    (edge,) = with_fields["edges"]
    assert edge["fieldLineage"] == [
        {"downstreamField": "customer_id", "upstreamFields": ["customer_id"]},
        {"downstreamField": "full_name", "upstreamFields": ["full_name"]},
        {"downstreamField": "revenue", "upstreamFields": ["revenue"]}]
    assert with_fields["fieldLineage"] is True


def test_downstream_walk_mixes_factual_and_inferred(boss: Http, keys: dict[str, str]) -> None:
    body = lineage(boss, keys["sales.customers"], upstream=0, downstream=2, fieldLineage=True)
    assert {p: n["distance"] for p, n in by_path(body).items()} == {
        "sales.customers": 0, "sales.customer_revenue": 1, "sales.customer_contacts": 1,
        "crm/customers.csv": 1, "sales.top_customers": 2, "crm/customers_clean.csv": 2}
    inferred = {(u, d) for u, d, t in named_edges(body) if t == "INFERRED"}
    assert inferred == {("sales.customers", "crm/customers.csv"),
                        ("crm/customers.csv", "crm/customers_clean.csv")}
    export = next(e for e in body["edges"] if e["downstreamKey"] == keys["crm/customers.csv"])
    assert export["evidence"]["matchedFields"] == 12 and 0 < export["score"] <= 1
    assert {"downstreamField": "contact", "upstreamFields": ["email"]} in export["fieldLineage"]

    only_factual = lineage(boss, keys["sales.customers"], downstream=2, lineageType="FACTUAL")
    assert {t for _, _, t in named_edges(only_factual)} == {"FACTUAL"}
    assert "crm/customers.csv" not in by_path(only_factual)
    assert only_factual["lineageTypes"] == ["FACTUAL"]
    only_inferred = lineage(boss, keys["sales.customers"], downstream=2, lineageType="inferred")
    assert set(by_path(only_inferred)) == {"sales.customers", "crm/customers.csv",
                                           "crm/customers_clean.csv"}
    both = boss.get(f"/lineage/{keys['sales.customers']}",
                    params=[("lineageType", "FACTUAL"), ("lineageType", "INFERRED"),
                            ("downstream", "2")])
    assert both.json()["nodes"] == body["nodes"]
    assert lineage(boss, keys["sales.customers"], downstream=2,
                   lineageType="FACTUAL;INFERRED")["lineageTypes"] == ["FACTUAL", "INFERRED"]


def test_depths_are_capped_and_truncation_is_said(boss: Http, keys: dict[str, str]) -> None:
    start = keys["sales.customer_revenue"]
    zero = lineage(boss, start, upstream=0, downstream=0)
    assert [n["path"] for n in zero["nodes"]] == ["sales.customer_revenue"]
    assert zero["edges"] == []
    assert zero["truncated"] is True
    assert any("upstream beyond 0 levels" in r for r in zero["truncatedReasons"])
    assert any("downstream beyond 0 levels" in r for r in zero["truncatedReasons"])

    huge = lineage(boss, start, upstream=10**12, downstream=5000)
    assert (huge["upstream"], huge["downstream"]) == (10, 10)
    assert huge["truncated"] is True
    assert any("capped at 10" in r and "upstream" in r for r in huge["truncatedReasons"])
    assert any("capped at 10" in r and "downstream" in r for r in huge["truncatedReasons"])
    assert by_path(huge)["sales.top_customers"]["distance"] == 1

    whole = lineage(boss, start, upstream=10, downstream=10)
    assert whole["truncated"] is False


def test_a_resource_without_lineage(boss: Http, keys: dict[str, str]) -> None:
    body = lineage(boss, keys["web/access_log.jsonl"], upstream=5, downstream=5)
    assert [n["path"] for n in body["nodes"]] == ["web/access_log.jsonl"]
    assert body["nodes"][0]["distance"] == 0 and body["nodes"][0]["lineageState"] is None
    assert body["edges"] == [] and body["truncated"] is False and body["hiddenCount"] == 0


@pytest.mark.parametrize("params, field", [
    ({"upstream": -1}, "upstream"),
    ({"downstream": "two"}, "downstream"),
    ({"upstream": "1.5"}, "upstream"),
    ({"fieldLineage": "maybe"}, "fieldLineage"),
    ({"lineageType": "GUESSED"}, "GUESSED"),
    ({"lineageType": "FACTUAL;nope"}, "nope"),
])
def test_bad_parameters_are_400(boss: Http, keys: dict[str, str], params: dict[str, Any],
                                field: str) -> None:
    response = boss.get(f"/lineage/{keys['sales.customers']}", params=params)
    assert_error(response, 400, "INVALID_PARAMETER", field)


def test_unknown_resource_is_404(boss: Http) -> None:
    assert_error(boss.get("/lineage/no-such-key"), 404, "RESOURCE_NOT_FOUND", "no-such-key")
    assert_error(boss.get("/lineage/x/y"), 404)


def test_list_of_edges(boss: Http, keys: dict[str, str], jobs: dict[str, Any]) -> None:
    body = boss.get("/lineage").json()
    assert body["totalCount"] == 14 and len(body["list"]) == 14
    assert (body["start"], body["size"]) == (0, 1000)
    first = body["list"][0]
    assert set(first) == EDGE_KEYS | {"upstream", "downstream"}
    assert set(first["upstream"]) == NODE_KEYS - {"distance"}
    assert first["upstream"]["key"] == first["upstreamKey"]
    ordered = [(e["upstream"]["path"], e["downstream"]["path"]) for e in body["list"]]
    assert ordered == sorted(ordered)

    inferred = boss.get("/lineage", params={"lineageType": "INFERRED"}).json()
    assert inferred["totalCount"] == 5
    files = jobs["FILE"]["source"]
    in_files = boss.get("/lineage", params={"dataSource": files["name"]}).json()
    assert in_files["totalCount"] == 5  # every inferred edge ends in a file
    assert boss.get("/lineage", params={"dataSource": files["key"]}).json() == in_files
    page = boss.get("/lineage", params={"start": 12, "size": 5, "fieldLineage": "true"}).json()
    assert page["totalCount"] == 14 and len(page["list"]) == 2
    assert all("fieldLineage" in e for e in page["list"])
    assert boss.get("/lineage", params={"start": 99}).json()["list"] == []

    assert_error(boss.get("/lineage", params={"size": 0}), 400, "INVALID_PARAMETER", "size")
    assert_error(boss.get("/lineage", params={"size": 1001}), 400, "INVALID_PARAMETER")
    assert_error(boss.get("/lineage", params={"start": -1}), 400, "INVALID_PARAMETER", "start")
    assert_error(boss.get("/lineage", params={"dataSource": "nope"}), 404,
                 "DATA_SOURCE_NOT_FOUND")


def test_hidden_resources_are_never_named(lake_server: Server, boss: Http,
                                          keys: dict[str, str], jobs: dict[str, Any]) -> None:
    tag = uuid.uuid4().hex[:8]
    files, sql = jobs["FILE"]["source"], jobs["SQL"]["source"]
    role = create_role(boss, f"files-only-{tag}", "Analyst", dataSourceKeys=[files["key"]])
    create_user(boss, f"files-{tag}", roles=[role["name"]])
    reader = lake_server.session(f"files-{tag}", PASSWORD)

    body = lineage(reader, keys["crm/customers_clean.csv"], upstream=5)
    assert set(by_path(body)) == {"crm/customers_clean.csv", "crm/customers.csv"}
    assert body["hiddenCount"] == 1  # sales.customers, upstream of the export
    assert all(keys["sales.customers"] not in (e["upstreamKey"], e["downstreamKey"])
               for e in body["edges"])
    assert body["truncated"] is False
    assert keys["sales.customers"] not in str(body)

    assert_error(reader.get(f"/lineage/{keys['sales.customers']}"), 404, "RESOURCE_NOT_FOUND")
    listed = reader.get("/lineage").json()
    assert listed["totalCount"] == 2
    assert {(e["upstream"]["path"], e["downstream"]["path"]) for e in listed["list"]} == {
        ("crm/customers.csv", "crm/customers_clean.csv"),
        ("finance/payments.parquet", "finance/payments_2024.csv")}
    assert_error(reader.get("/lineage", params={"dataSource": sql["name"]}), 404,
                 "DATA_SOURCE_NOT_FOUND")


def test_cycles_and_the_node_cap(make_server: Callable[..., Server]) -> None:
    server = make_server(lineage_max_nodes=3, lineage_max_depth=4)
    sql_source(server.store, "loops", "sqlite:///loops.sqlite3", {"main.t": ["x"]}, {
        "main.a": ("CREATE VIEW a AS SELECT x FROM b", ["x"]),
        "main.b": ("CREATE VIEW b AS SELECT x FROM a", ["x"]),
        "main.c": ("CREATE VIEW c AS SELECT x FROM t", ["x"]),
        "main.d": ("CREATE VIEW d AS SELECT x FROM c", ["x"]),
        "main.e": ("CREATE VIEW e AS SELECT x FROM d", ["x"]),
    })
    view_lineage.refresh(server.store, Settings())
    named = {p: k for k, p in paths(server.store).items()}
    http = server.session()

    loop = lineage(http, named["main.a"], upstream=4, downstream=4)
    assert {p: n["distance"] for p, n in by_path(loop).items()} == {"main.a": 0, "main.b": -1}
    assert named_edges(loop) == {("main.b", "main.a", "FACTUAL"), ("main.a", "main.b", "FACTUAL")}
    assert loop["truncated"] is False

    capped = lineage(http, named["main.t"], downstream=4)
    assert len(capped["nodes"]) == 3
    assert capped["truncated"] is True
    assert any("stopped at 3 resources" in r for r in capped["truncatedReasons"])
    assert lineage(http, named["main.e"], upstream=9)["maxDepth"] == 4
