"""Join conditions over HTTP: PROFILE jobs discover them, resources and /joincondition show them.

The test lake's two sources are registered and profiled through ``POST /job`` on a server of
this module's own (join discovery is catalog-wide), so what is read back was made by the real
job hook. Visibility: an Analyst granted only the FILE source sees only conditions between
files, in the resource detail and in the list, and never learns of the SQL side.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from urllib.parse import quote

import pytest
from sqlalchemy import select

from catalog_nb.demo.lake import build_lake, lake_sources
from catalog_nb.server.discovery import builtin, joins
from catalog_nb.server.store import joins as join_store
from catalog_nb.server.store.schema import data_resources
from tests.conftest import Http, Server
from tests.server.helpers import (
    PASSWORD,
    assert_error,
    counted_statements,
    create_role,
    create_user,
)
from tests.server.source_helpers import run_job
from tests.server.tag_helpers import associate, make_domain, make_tag

JOIN_FIELDS = {
    "key", "leftResourceId", "rightResourceId", "leftResourceName", "rightResourceName",
    "leftPath", "rightPath", "leftSourceId", "rightSourceId", "leftSourceName",
    "rightSourceName", "leftFileFormat", "rightFileFormat", "leftOwner", "rightOwner",
    "leftSize", "rightSize", "leftTimeOfLastChange", "rightTimeOfLastChange",
    "leftTimeOfResourceChange", "rightTimeOfResourceChange", "leftTags", "rightTags",
    "leftCols", "rightCols", "leftOrigin", "rightOrigin", "joinOp", "joinOrder",
    "joinCardinality", "joinStatState", "tags", "stats", "score",
}
STATS = {"score", "leftInRight", "rightInLeft", "leftDistinct", "rightDistinct", "sampleSize",
         "nameSimilarity", "evidence"}


class Lake:
    def __init__(self, server: Server, admin: Http, sources: dict[str, dict[str, Any]],
                 jobs: list[dict[str, Any]]) -> None:
        self.server, self.admin, self.sources, self.jobs = server, admin, sources, jobs

    def resource(self, http: Http, source: str, path: str) -> Any:
        name = self.sources[source]["name"]
        return http.get(f"/dataresource/source/{quote(name)}", params={"resourcePath": path})

    def detail(self, path: str, http: Http | None = None) -> dict[str, Any]:
        source = "FILE" if "/" in path else "SQL"
        response = self.resource(http or self.admin, source, path)
        assert response.status_code == 200, response.text
        body: dict[str, Any] = response.json()
        return body


@pytest.fixture(scope="module")
def lake(make_server: Callable[..., Server], tmp_path_factory: pytest.TempPathFactory) -> Lake:
    root = tmp_path_factory.mktemp("joinlake") / "acme"
    build_lake(root, scale=0.05)
    server = make_server(data_roots=[root])
    admin = server.session()
    sources, jobs = {}, []
    for payload in lake_sources(root):
        response = admin.post("/datasource", json=payload)
        assert response.status_code == 201, response.text
        sources[payload["sourceType"]] = response.json()
        jobs.append(run_job(admin, response.json()["key"]))
    return Lake(server, admin, sources, jobs)


def conditions(http: Http, **params: Any) -> dict[str, Any]:
    response = http.get("/joincondition", params=params)
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def one(listed: list[dict[str, Any]], left_col: str, right_path: str,
        right_col: str) -> dict[str, Any]:
    found = [c for c in listed if c["leftCols"] == [left_col] and c["rightPath"] == right_path
             and c["rightCols"] == [right_col]]
    assert len(found) == 1, (left_col, right_path, right_col, listed)
    return found[0]


def test_profile_jobs_discover_joins_and_report_them(lake: Lake) -> None:
    file_job, sql_job = lake.jobs
    # The FILE source alone has no declared keys; after the SQL source the 5 declared are in.
    assert file_job["counts"]["joinsDeclared"] == 0 and file_job["counts"]["joinsDiscovered"] > 0
    assert sql_job["counts"]["joinsDeclared"] == 5
    assert sql_job["counts"]["joinsDiscovered"] > file_job["counts"]["joinsDiscovered"]
    assert "Joins: 5 declared" in sql_job["message"]
    body = conditions(lake.admin)
    assert body["totalCount"] == len(body["list"]) == (
        sql_job["counts"]["joinsDeclared"] + sql_job["counts"]["joinsDiscovered"])


def test_fields_discovery_tagged_as_personal_attributes_join_nothing(lake: Lake) -> None:
    """The jobs' tag discovery ran first; its phone/postcode/id suggestions are no join keys."""
    with lake.server.store.read() as conn:
        attributes = join_store.tagged_fields(conn, joins.ATTRIBUTE_TAGS, builtin.SOURCE_NAME)
        paths = dict(conn.execute(select(data_resources.c.key, data_resources.c.path)).all())
    assert attributes, "tag discovery suggested no personal attribute on the demo lake"
    tagged = {(paths[key], name) for key, name in attributes}
    listed = conditions(lake.admin, origin="DISCOVERED")["list"]
    sides = {(c[f"{side}Path"], col) for c in listed for side in ("left", "right")
             for col in c[f"{side}Cols"]}
    assert listed and not sides & tagged


def test_resource_detail_shows_its_conditions_from_its_side(lake: Lake) -> None:
    orders = lake.detail("sales.orders")
    listed = orders["joinConditions"]
    assert listed and all(set(c) == JOIN_FIELDS for c in listed)
    assert all(c["leftResourceId"] == orders["key"] for c in listed)
    assert [c["score"] for c in listed] == sorted((c["score"] for c in listed), reverse=True)
    declared = one(listed, "customer_id", "sales.customers", "customer_id")
    # Stored customers -> orders (1:N); seen from orders it is N:1.
    assert declared["joinCardinality"] == "N:1"
    assert declared["leftOrigin"] == declared["rightOrigin"] == ["DECLARED"]
    assert declared["joinStatState"] == "DECLARED" and declared["score"] == 1.0
    assert (declared["joinOp"], declared["joinOrder"]) == ("=", "LEFT_TO_RIGHT")
    assert declared["stats"]["leftInRight"] == "1" and declared["stats"]["rightInLeft"] != "1"
    assert set(declared["stats"]) == STATS and all(
        isinstance(v, str) for v in declared["stats"].values())
    assert declared["leftSourceName"] == lake.sources["SQL"]["name"]
    assert declared["rightResourceName"] == "customers" and declared["leftSize"] >= 0
    customers = lake.detail("crm/customers.csv")
    to_orders = one(customers["joinConditions"], "customer_id", "sales.orders", "customer_id")
    assert to_orders["joinCardinality"] == "1:N" and to_orders["leftOrigin"] == ["DISCOVERED"]
    assert to_orders["leftFileFormat"] == "csv"
    assert to_orders["leftSourceId"] == lake.sources["FILE"]["key"]
    by_key = lake.admin.get(f"/dataresource/{customers['key']}").json()
    assert by_key["joinConditions"] == customers["joinConditions"]


def test_a_self_join_is_shown_once(lake: Lake) -> None:
    employees = lake.detail("hr.employees")
    selfs = [c for c in employees["joinConditions"]
             if c["leftResourceId"] == c["rightResourceId"]]
    assert len(selfs) == 1
    assert (selfs[0]["leftCols"], selfs[0]["rightCols"]) == (["employee_id"], ["manager_id"])


def test_accepted_tags_of_resources_and_joined_fields_are_carried(lake: Lake) -> None:
    domain = make_domain(lake.admin, "joins")
    tag = make_tag(lake.admin, domain["key"], "CustomerKey")
    whole = make_tag(lake.admin, domain["key"], "Crm")
    customers = lake.detail("crm/customers.csv")
    associate(lake.admin, customers["key"], tag["key"], field="customer_id", state="ACCEPTED")
    associate(lake.admin, customers["key"], whole["key"], state="ACCEPTED")
    suggested = make_tag(lake.admin, domain["key"], "Maybe")
    associate(lake.admin, customers["key"], suggested["key"], state="SUGGESTED")
    to_orders = one(lake.detail("crm/customers.csv")["joinConditions"], "customer_id",
                    "sales.orders", "customer_id")
    assert [t["key"] for t in to_orders["tags"]] == [tag["key"]]
    assert [t["key"] for t in to_orders["leftTags"]] == [whole["key"]]
    assert to_orders["leftTags"][0]["domainName"] == domain["name"]
    # whole Tag objects, as the spec types JoinConditionTO's tag arrays (issue 17)
    whole_tag = lake.admin.get(f"/tag/{whole['key']}").json()
    assert set(to_orders["leftTags"][0]) == set(whole_tag)
    assert {k: v for k, v in to_orders["leftTags"][0].items()
            if k not in ("children", "associationCount")} == {
        k: v for k, v in whole_tag.items() if k not in ("children", "associationCount")}
    assert set(to_orders["tags"][0]) == set(whole_tag)
    assert to_orders["rightTags"] == []
    # Seen from orders, the customers file's tags are on the right.
    back = one(lake.detail("sales.orders")["joinConditions"], "customer_id",
               "crm/customers.csv", "customer_id")
    assert [t["key"] for t in back["rightTags"]] == [whole["key"]]


def test_the_list_pages_and_filters(lake: Lake) -> None:
    everything = conditions(lake.admin)["list"]
    keys = [c["key"] for c in everything]
    assert len(keys) == len(set(keys))
    page = conditions(lake.admin, start=3, size=4)
    assert [c["key"] for c in page["list"]] == keys[3:7]
    assert (page["start"], page["size"], page["totalCount"]) == (3, 4, len(keys))
    past = conditions(lake.admin, start=len(keys) + 5)
    assert past["list"] == [] and past["totalCount"] == len(keys)
    declared = conditions(lake.admin, origin="DECLARED")
    assert declared["totalCount"] == 5
    assert {c["joinStatState"] for c in declared["list"]} == {"DECLARED"}
    both = conditions(lake.admin, origin="declared;DISCOVERED")
    assert both["totalCount"] == len(keys)
    strong = conditions(lake.admin, minScore=0.9)["list"]
    assert strong and all(c["score"] >= 0.9 for c in strong)
    assert len(strong) == sum(1 for c in everything if c["score"] >= 0.9)
    files = conditions(lake.admin, dataSource=lake.sources["FILE"]["name"])["list"]
    file_key = lake.sources["FILE"]["key"]
    assert files and all(file_key in (c["leftSourceId"], c["rightSourceId"]) for c in files)
    assert len(files) == sum(1 for c in everything
                             if file_key in (c["leftSourceId"], c["rightSourceId"]))


def test_the_virtual_folder_scope(lake: Lake) -> None:
    made = lake.admin.post("/virtualfolder", json={
        "name": "crm-only", "dataSourceKey": lake.sources["FILE"]["key"],
        "pathSpecs": [{"sourcePath": "crm"}]})
    assert made.status_code == 201, made.text
    listed = conditions(lake.admin, virtualFolder="crm-only")["list"]
    assert listed
    assert all(c["leftPath"].startswith("crm/") or c["rightPath"].startswith("crm/")
               for c in listed)


def test_bad_list_parameters_are_refused(lake: Lake) -> None:
    http = lake.admin
    assert_error(http.get("/joincondition", params={"size": 0}), 400, "INVALID_PARAMETER")
    assert_error(http.get("/joincondition", params={"size": 1001}), 400, "INVALID_PARAMETER")
    assert_error(http.get("/joincondition", params={"start": -1}), 400, "INVALID_PARAMETER")
    assert_error(http.get("/joincondition", params={"minScore": 1.5}), 400, "INVALID_PARAMETER",
                 "minScore")
    assert_error(http.get("/joincondition", params={"origin": "GUESSED"}), 400,
                 "INVALID_PARAMETER", "GUESSED")
    assert_error(http.get("/joincondition", params={"dataSource": "no-such-source"}), 404,
                 "DATA_SOURCE_NOT_FOUND")
    assert_error(http.get("/joincondition", params={"virtualFolder": "no-such-folder"}), 404,
                 "VIRTUAL_FOLDER_NOT_FOUND")
    assert lake.server.anonymous().get("/joincondition").status_code == 401


def test_a_caller_only_sees_conditions_between_what_they_see(lake: Lake) -> None:
    role = create_role(lake.admin, "files-only-joins", "Analyst",
                       dataSourceKeys=[lake.sources["FILE"]["key"]])
    create_user(lake.admin, "joins-analyst", roles=[role["name"]])
    http = lake.server.session("joins-analyst", PASSWORD)
    sql_key = lake.sources["SQL"]["key"]
    mine = conditions(http)
    assert mine["totalCount"] == len(mine["list"]) > 0
    assert all(sql_key not in (c["leftSourceId"], c["rightSourceId"]) for c in mine["list"])
    everything = conditions(lake.admin)["list"]
    assert mine["totalCount"] == sum(1 for c in everything
                                     if sql_key not in (c["leftSourceId"], c["rightSourceId"]))
    detail = lake.detail("crm/customers.csv", http)
    assert detail["joinConditions"]
    assert all(c["rightSourceId"] != sql_key for c in detail["joinConditions"])
    admin_view = lake.detail("crm/customers.csv")["joinConditions"]
    assert len(detail["joinConditions"]) < len(admin_view)
    assert_error(http.get("/joincondition", params={"dataSource": lake.sources["SQL"]["name"]}),
                 404, "DATA_SOURCE_NOT_FOUND")
    assert "sales.orders" not in str(detail["joinConditions"])


def test_the_detail_costs_a_fixed_number_of_queries_and_lists_carry_none(lake: Lake) -> None:
    tables = ("join_conditions", "data_resources", "resource_fields", "tag_associations")
    many = lake.detail("crm/customers.csv")
    few = lake.detail("hr/employees.csv")
    assert len(many["joinConditions"]) > len(few["joinConditions"]) > 0
    with counted_statements(lake.server, tables) as on_many:
        lake.detail("crm/customers.csv")
    with counted_statements(lake.server, tables) as on_few:
        lake.detail("hr/employees.csv")
    assert len(on_many) == len(on_few)
    assert sum("join_conditions" in s for s in on_many) == 1
    with counted_statements(lake.server, ("join_conditions",)) as on_list:
        page = lake.admin.get("/dataresource/metadata", params={"pageSize": 100})
    assert page.status_code == 200 and on_list == []
    assert all(r["joinConditions"] == [] for r in page.json()["list"])


def test_rediscovery_by_a_discover_job_keeps_the_same_conditions(lake: Lake) -> None:
    before = sorted((c["leftResourceId"], c["rightResourceId"], tuple(c["leftCols"]),
                     tuple(c["rightCols"])) for c in conditions(lake.admin)["list"])
    job = run_job(lake.admin, lake.sources["FILE"]["key"], "DISCOVER")
    assert job["counts"]["joinsDeclared"] == 5
    after = sorted((c["leftResourceId"], c["rightResourceId"], tuple(c["leftCols"]),
                    tuple(c["rightCols"])) for c in conditions(lake.admin)["list"])
    assert after == before

