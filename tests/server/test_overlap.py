"""Table overlap over HTTP: GET, the JSON batch and the CSV upload, with every refusal.

The test lake's SQL database is profiled twice, as sources ``db1`` and ``db2`` (so every lake
table is ambiguous unless a virtual folder chooses), plus a small SQLite database of this module
("own") with mixed-case field names and a table that was browsed but never profiled.
"""

from __future__ import annotations

import csv
import io
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import create_engine, select

from catalog_nb.demo.truth import LakeTruth
from catalog_nb.server import profiling
from catalog_nb.server.store import ingest
from catalog_nb.server.store.common import new_key
from catalog_nb.server.store.schema import data_sources
from tests.conftest import Http, Server
from tests.server.helpers import (
    PASSWORD,
    assert_error,
    counted_statements,
    create_role,
    create_user,
)
from tests.server.lake import add_source, demo_lake, profile_sql

HEADER = ["virtualFolder", "tableOne", "tableTwo", "commonFields", "tableOneUniqueFields",
          "tableTwoUniqueFields", "overlapPercent"]


class World:
    def __init__(self, server: Server, admin: Http, sources: dict[str, str],
                 folders: dict[str, dict[str, Any]], truth: LakeTruth) -> None:
        self.server, self.admin, self.sources, self.folders = server, admin, sources, folders
        self.truth = truth

    def columns(self, table: str) -> list[str]:
        return self.truth.resource(table).column_names


def _own_database(folder: Path) -> str:
    path = folder / "own.sqlite3"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE Orders_Copy (ORDER_ID INTEGER, Customer_ID INTEGER, note TEXT)")
        db.execute("CREATE TABLE orders_small (order_id INTEGER, amount REAL)")
        db.execute("CREATE TABLE never_profiled (a INTEGER, b TEXT)")
        db.execute("INSERT INTO Orders_Copy VALUES (1, 2, 'x'), (2, 3, 'y')")
        db.execute("INSERT INTO orders_small VALUES (1, 2.5)")
    return f"sqlite:///{path}"


def _profile_own(server: Server, name: str, url: str) -> str:
    """Browse the own database and profile all but ``never_profiled``."""
    key = add_source(server.store, name, url, source_type="SQL")
    engine = create_engine(url)
    try:
        found = profiling.browse_sql(engine)
        with server.store.write() as conn:
            for resource in found:
                ingest.record_browsed(conn, key, resource)
        for resource in found:
            schema, table = resource.path.split(".", 1)
            if table != "never_profiled":
                with server.store.write() as conn:
                    ingest.record_profile(conn, key, profiling.profile_table(engine, schema,
                                                                             table))
    finally:
        engine.dispose()
    return key


@pytest.fixture(scope="module")
def world(make_server: Callable[..., Server], tmp_path_factory: pytest.TempPathFactory) -> World:
    server = make_server()
    admin = server.session()
    tag = new_key()[:6]
    sources = {"db1": profile_sql(server.store, f"db1-{tag}"),
               "db2": profile_sql(server.store, f"db2-{tag}"),
               "own": _profile_own(server, f"own-{tag}",
                                   _own_database(tmp_path_factory.mktemp("own")))}
    folders = {}
    for label in ("db1", "own"):
        made = admin.post("/virtualfolder", json={"name": f"{label}-all-{tag}",
                                                  "dataSourceKey": sources[label]})
        assert made.status_code == 201, made.text
        changed = admin.put(f"/virtualfolder/{made.json()['key']}", json={"pathSpecs": [{}]})
        assert changed.status_code == 200, changed.text
        folders[label] = changed.json()
    truth = LakeTruth.from_json((demo_lake() / "truth.json").read_text(encoding="utf-8"))
    return World(server, admin, sources, folders, truth)


def overlap(http: Http, one: str, two: str, folder: str | None = None) -> Any:
    params = {"table1": one, "table2": two}
    if folder:
        params["virtualFolder"] = folder
    return http.get("/overlap/table", params=params)


def ok(response: Any, status: int = 200) -> Any:
    assert response.status_code == status, response.text
    return response.json()


# ------------------------------------------------------------------------------------- GET


def test_two_tables_compare_by_field_names(world: World) -> None:
    db1 = world.folders["db1"]["name"]
    body = ok(overlap(world.admin, "sales.orders", "sales.order_items", db1))
    orders, items = world.columns("sales.orders"), world.columns("sales.order_items")
    common = [c for c in orders if c in items]
    assert body["commonFields"] == common and common
    assert body["tableOneUniqueFields"] == [c for c in orders if c not in items]
    assert body["tableTwoUniqueFields"] == [c for c in items if c not in orders]
    union = len(set(orders) | set(items))
    assert body["overlapPercent"] == round(100 * len(common) / union, 2)
    assert (body["tableOne"], body["tableTwo"], body["virtualFolder"]) == (
        "sales.orders", "sales.order_items", db1)


def test_names_and_fields_compare_case_insensitively(world: World) -> None:
    own = world.folders["own"]["name"]
    body = ok(overlap(world.admin, "MAIN.orders_copy", "main.ORDERS_SMALL", own.upper()))
    assert body == {"virtualFolder": own.upper(), "tableOne": "MAIN.orders_copy",
                    "tableTwo": "main.ORDERS_SMALL", "commonFields": ["ORDER_ID"],
                    "tableOneUniqueFields": ["Customer_ID", "note"],
                    "tableTwoUniqueFields": ["amount"], "overlapPercent": 25.0}
    # A name unique in the catalog needs no folder.
    assert ok(overlap(world.admin, "main.orders_copy", "main.orders_small"))["overlapPercent"] == 25


def test_a_table_with_itself_is_all_common_and_views_count(world: World) -> None:
    db1 = world.folders["db1"]["name"]
    body = ok(overlap(world.admin, "sales.customers", "SALES.customers", db1))
    assert body["commonFields"] == world.columns("sales.customers")
    assert body["tableOneUniqueFields"] == body["tableTwoUniqueFields"] == []
    assert body["overlapPercent"] == 100.0
    view = ok(overlap(world.admin, "sales.customer_revenue", "sales.customers", db1))
    assert "customer_id" in view["commonFields"]


def test_a_table_without_profiled_fields_is_zero(world: World) -> None:
    body = ok(overlap(world.admin, "main.never_profiled", "main.never_profiled"))
    assert body["commonFields"] == body["tableOneUniqueFields"] == []
    assert body["overlapPercent"] == 0.0
    other = ok(overlap(world.admin, "main.never_profiled", "main.orders_small"))
    assert other["tableTwoUniqueFields"] == ["order_id", "amount"]
    assert other["overlapPercent"] == 0.0


def test_unknown_ambiguous_and_malformed_names_are_refused(world: World) -> None:
    http = world.admin
    assert_error(overlap(http, "sales.nope", "main.orders_small"), 404, "TABLE_NOT_FOUND",
                 "sales.nope")
    body = assert_error(overlap(http, "sales.orders", "main.orders_small"), 400,
                        "AMBIGUOUS_TABLE", "sales.orders", world_name(world, "db1"),
                        world_name(world, "db2"))
    assert len(body["sources"]) == 2
    assert_error(overlap(http, "orders", "main.orders_small"), 400, "INVALID_PARAMETER",
                 "schema.table_name")
    assert_error(overlap(http, "a.b.c", "main.orders_small"), 400, "INVALID_PARAMETER")
    assert_error(overlap(http, "main.orders_small", "."), 400, "INVALID_PARAMETER")
    assert_error(overlap(http, "main.orders_small", "main.orders_small", "no-such-folder"), 404,
                 "VIRTUAL_FOLDER_NOT_FOUND")
    # Inside a folder, tables of other sources are not found.
    assert_error(overlap(http, "main.orders_small", "main.orders_small",
                         world.folders["db1"]["name"]), 404, "TABLE_NOT_FOUND")
    assert_error(http.get("/overlap/table", params={"table1": "main.orders_small"}), 400)
    assert world.server.anonymous().get("/overlap/table", params={
        "table1": "main.orders_small", "table2": "main.orders_small"}).status_code == 401


def world_name(world: World, label: str) -> str:
    with world.server.store.read() as conn:
        return str(conn.execute(select(data_sources.c.name).where(
            data_sources.c.key == world.sources[label])).scalar_one())


def test_hidden_tables_and_folders_are_unknown(world: World) -> None:
    role = create_role(world.admin, "overlap-own-only", "Analyst",
                       dataSourceKeys=[world.sources["own"]])
    create_user(world.admin, "overlap-analyst", roles=[role["name"]])
    http = world.server.session("overlap-analyst", PASSWORD)
    assert ok(overlap(http, "main.orders_copy", "main.orders_small"))["overlapPercent"] == 25.0
    # Not ambiguous for them (that would name the hidden sources): simply not there.
    body = assert_error(overlap(http, "sales.orders", "main.orders_small"), 404,
                        "TABLE_NOT_FOUND")
    assert world_name(world, "db1") not in body["message"]
    assert_error(overlap(http, "main.orders_small", "main.orders_small",
                         world.folders["db1"]["name"]), 404, "VIRTUAL_FOLDER_NOT_FOUND")


# ------------------------------------------------------------------------------ JSON batch


def test_a_batch_answers_in_order(world: World) -> None:
    db1 = world.folders["db1"]["name"]
    items = [
        {"virtualFolder": db1, "tableOne": "sales.orders", "tableTwo": "sales.customers"},
        {"tableOne": "main.orders_copy", "tableTwo": "main.orders_small"},
        {"virtualFolder": None, "tableOne": "main.orders_small", "tableTwo": "main.orders_small"},
        {"virtualFolder": "", "tableOne": "main.never_profiled", "tableTwo": "main.orders_copy"},
    ]
    body = ok(world.admin.post("/overlap/table", json=items), 201)
    assert [(b["tableOne"], b["tableTwo"]) for b in body] == [
        (i["tableOne"], i["tableTwo"]) for i in items]
    assert body[0] == ok(overlap(world.admin, "sales.orders", "sales.customers", db1))
    assert [b["overlapPercent"] for b in body[1:]] == [25.0, 100.0, 0.0]
    # no folder named: "" (the spec types virtualFolder as a string; issue 17)
    assert body[1]["virtualFolder"] == "" and body[3]["virtualFolder"] == ""
    assert ok(world.admin.post("/overlap/table", json=[]), 201) == []


def test_a_bad_item_fails_the_whole_batch_naming_it(world: World) -> None:
    good = {"tableOne": "main.orders_copy", "tableTwo": "main.orders_small"}
    post = world.admin.post
    body = assert_error(post("/overlap/table", json=[good, {"tableOne": "x", "tableTwo": "a.b"}]),
                        400, "INVALID_PARAMETER", "Item 1")
    assert body["index"] == 1
    assert_error(post("/overlap/table", json=[good, good, {"tableOne": "main.zzz",
                                                           "tableTwo": "main.orders_copy"}]),
                 404, "TABLE_NOT_FOUND", "Item 2", "main.zzz")
    assert_error(post("/overlap/table", json=[{"tableOne": "sales.orders", "tableTwo":
                                               "sales.orders"}]), 400, "AMBIGUOUS_TABLE", "Item 0")
    assert_error(post("/overlap/table", json=[{"virtualFolder": "nope", **good}]), 404,
                 "VIRTUAL_FOLDER_NOT_FOUND", "Item 0")
    assert_error(post("/overlap/table", json=[{"tableOne": "main.orders_copy"}]), 400,
                 "INVALID_PAYLOAD", "Item 0", "tableTwo")
    assert_error(post("/overlap/table", json=[{"tableOne": 5, "tableTwo": "a.b"}]), 400,
                 "INVALID_PAYLOAD", "tableOne")
    assert_error(post("/overlap/table", json=[good, "main.orders_copy"]), 400, "INVALID_PAYLOAD",
                 "Item 1")
    assert_error(post("/overlap/table", json=good), 400, "INVALID_PAYLOAD", "array")
    assert_error(post("/overlap/table", json=[good] * 1001), 400, "INVALID_PAYLOAD", "1000")


def test_a_batch_costs_the_same_queries_whatever_its_length(world: World) -> None:
    db1 = world.folders["db1"]["name"]
    tables = [r.path for r in world.truth.resources if r.source_type == "SQL"]
    small = [{"virtualFolder": db1, "tableOne": tables[0], "tableTwo": tables[1]}]
    large = [{"virtualFolder": db1, "tableOne": a, "tableTwo": b} for a in tables for b in tables]
    watched = ("data_resources", "resource_fields", "virtual_folders")
    with counted_statements(world.server, watched) as one:
        ok(world.admin.post("/overlap/table", json=small), 201)
    with counted_statements(world.server, watched) as many:
        answered = ok(world.admin.post("/overlap/table", json=large), 201)
    assert len(answered) == len(large) > 100
    assert len(one) == len(many), many


# ------------------------------------------------------------------------------- CSV upload


def upload(http: Http, content: bytes | str, separator: str | None = None,
           field: str = "fileStream") -> Any:
    data = content.encode("utf-8") if isinstance(content, str) else content
    params = {"separator": separator} if separator is not None else {}
    return http.post("/overlap/table/csv", params=params,
                     files={field: ("pairs.csv", data, "text/csv")})


def rows_of(response: Any, separator: str = ",") -> list[list[str]]:
    assert response.status_code == 201, response.text
    assert response.headers["content-type"].startswith("text/csv")
    assert 'filename="overlap.csv"' in response.headers["content-disposition"]
    return list(csv.reader(io.StringIO(response.text), delimiter=separator))


def test_a_csv_file_is_answered_as_csv(world: World) -> None:
    db1 = world.folders["db1"]["name"]
    text = (f"virtualFolder,tableOne,tableTwo\n{db1},sales.orders,sales.customers\n\n"
            ",main.orders_copy,main.orders_small\n")
    rows = rows_of(upload(world.admin, text))
    assert rows[0] == HEADER
    expected = ok(overlap(world.admin, "sales.orders", "sales.customers", db1))
    assert rows[1] == [db1, "sales.orders", "sales.customers", "|".join(expected["commonFields"]),
                       "|".join(expected["tableOneUniqueFields"]),
                       "|".join(expected["tableTwoUniqueFields"]),
                       f"{expected['overlapPercent']:g}"]
    assert rows[2] == ["", "main.orders_copy", "main.orders_small", "ORDER_ID",
                       "Customer_ID|note", "amount", "25"]
    assert len(rows) == 3


def test_the_separator_reads_and_writes_and_the_header_is_optional(world: World) -> None:
    rows = rows_of(upload(world.admin, ";main.orders_copy;main.orders_small\r\n", ";"), ";")
    assert rows == [HEADER, ["", "main.orders_copy", "main.orders_small", "ORDER_ID",
                             "Customer_ID|note", "amount", "25"]]
    tabbed = rows_of(upload(world.admin, "\tmain.orders_small\tmain.orders_small\n", "\t"), "\t")
    assert tabbed[1][-1] == "100"
    bom = rows_of(upload(world.admin, "\ufeff,main.orders_small,main.orders_small\n"))
    assert bom[1][1] == "main.orders_small"


def test_a_missing_file_part_is_refused(world: World) -> None:
    assert_error(upload(world.admin, ",main.a,main.b\n", field="other"), 400,
                 "MISSING_FILE_PART", "fileStream")
    assert_error(world.admin.post("/overlap/table/csv", json=[]), 400, "MISSING_FILE_PART")
    assert_error(world.admin.post("/overlap/table/csv"), 400, "MISSING_FILE_PART")


def test_malformed_csv_is_refused_naming_the_line(world: World) -> None:
    http = world.admin
    assert_error(upload(http, b"\xff\xfe,main.a,main.b\n"), 400, "INVALID_CSV", "UTF-8")
    body = assert_error(upload(http, ",main.orders_small,main.orders_small\n,only-two\n"), 400,
                        "INVALID_CSV", "Line 2")
    assert body["line"] == 2
    assert_error(upload(http, "a,b,c,d\n"), 400, "INVALID_CSV", "Line 1")
    assert_error(upload(http, ',"unclosed,main.b\n'), 400, "INVALID_CSV")
    assert_error(upload(http, ",main.a,main.b\n", separator="::"), 400, "INVALID_CSV",
                 "separator")
    assert_error(upload(http, ",main.a,main.b\n", separator=""), 400, "INVALID_CSV")
    assert_error(upload(http, "\n,main.orders_small,main.nope\n"), 404, "TABLE_NOT_FOUND",
                 "Line 2", "main.nope")
    assert_error(upload(http, ",main.orders_small,sales.orders\n"), 400, "AMBIGUOUS_TABLE",
                 "Line 1")
    assert_error(upload(http, ",orders,main.orders_small\n"), 400, "INVALID_PARAMETER", "Line 1")
    assert_error(upload(http, "nope,main.orders_small,main.orders_small\n"), 404,
                 "VIRTUAL_FOLDER_NOT_FOUND", "Line 1")
    too_many = "".join(",main.orders_small,main.orders_small\n" for _ in range(10_001))
    assert_error(upload(http, too_many), 400, "INVALID_CSV", "10000")
    empty = rows_of(upload(http, ""))
    assert empty == [HEADER]
