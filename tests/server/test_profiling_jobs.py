"""What browse and profile jobs write: the demo lake, bad files, changes, paths, dead sources.

Jobs run through HTTP against a real server; what they wrote is read back from the store
(``data_resources``, ``resource_fields``).
"""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import create_engine, text

from catalog_nb.demo.lake import build_lake, lake_sources
from catalog_nb.demo.lake_sql import TABLE_KEYS
from catalog_nb.demo.truth import LakeTruth
from catalog_nb.server import job_work as jobs_module
from tests.conftest import PG_URL, Http, Server, new_pg_database
from tests.server.source_helpers import create_source, fields, resources, run_job

SECRET = "n0t-to-be-Seen"
TYPES = {"file": "resource_type_file", "collection": "resource_type_collection",
         "table": "resource_type_table", "view": "resource_type_view"}


@pytest.fixture(scope="module")
def lake(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, LakeTruth]:
    root = tmp_path_factory.mktemp("lake") / "lake"
    return root, build_lake(root, scale=0.05)


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("scratch")


@pytest.fixture(scope="module")
def lake_server(make_server: Callable[..., Server], lake: tuple[Path, LakeTruth],
                scratch: Path) -> Server:
    # Some tests patch profiling with monkeypatch: jobs run in this process.
    return make_server(data_roots=[lake[0], scratch], job_isolation="thread")


@pytest.fixture(scope="module")
def boss(lake_server: Server) -> Http:
    return lake_server.session()


@pytest.fixture(scope="module")
def lake_keys(boss: Http, lake: tuple[Path, LakeTruth]) -> dict[str, str]:
    """The lake's two sources, registered and profiled once for the module."""
    keys = {}
    for payload in lake_sources(lake[0]):
        response = boss.post("/datasource", json=payload)
        assert response.status_code == 201, response.text
        keys[payload["sourceType"]] = response.json()["key"]
        job = run_job(boss, keys[payload["sourceType"]])
        assert job["counts"]["errors"] == 0, job
    return keys


@pytest.fixture
def folder(scratch: Path) -> Path:
    made = scratch / uuid.uuid4().hex[:8]
    made.mkdir()
    return made


def _write(folder: Path, files: dict[str, str]) -> Path:
    for name, content in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content)
    return folder


# ------------------------------------------------------------------------------ the demo lake


def test_the_lake_files_are_browsed_and_profiled(
    lake_server: Server, lake_keys: dict[str, str], lake: tuple[Path, LakeTruth]
) -> None:
    stored = resources(lake_server, lake_keys["FILE"])
    truth = [r for r in lake[1].resources if r.source_type == "FILE"]
    for expected in truth:
        row = stored[expected.path]
        assert row["resource_type"] == TYPES[str(expected.resource_type)], expected.path
        assert row["status"] == "PROFILED" and row["resource_state"] == "OK", row
        assert row["row_count"] == expected.row_count, expected.path
        assert row["file_format"] in (expected.file_format, "tsv"), expected.path
        assert row["time_of_last_profile"] and row["resource_size"], expected.path
        found = fields(lake_server, str(row["key"]))
        assert row["field_count"] == len(found) > 0
        if expected.file_format in ("csv", "parquet"):
            assert list(found) == expected.column_names, expected.path
        first = next(iter(found.values()))
        assert first["properties"]["valueCount"] >= 0 and "density" in first["properties"]
    orders = stored["sales/orders"]
    members = [r for r in stored.values() if r["collection_key"] == orders["key"]]
    expected_orders = next(r for r in truth if r.path == "sales/orders")
    assert orders["partition_count"] == len(members) == len(expected_orders.partitions)
    assert {m["path"] for m in members} == {p.path for p in expected_orders.partitions}


def test_the_lake_database_is_browsed_and_profiled(
    lake_server: Server, lake_keys: dict[str, str], lake: tuple[Path, LakeTruth]
) -> None:
    stored = resources(lake_server, lake_keys["SQL"])
    truth = [r for r in lake[1].resources if r.source_type == "SQL"]
    assert set(stored) == {r.path for r in truth}
    for expected in truth:
        row = stored[expected.path]
        schema, table = expected.path.split(".")
        assert row["resource_type"] == TYPES[str(expected.resource_type)]
        assert row["status"] == "PROFILED" and row["row_count"] == expected.row_count
        assert (row["data_schema_name"], row["table_name"]) == (schema, table)
        assert row["database_name"] == "company.sqlite3"
        extra = row["extra"]
        assert list(fields(lake_server, str(row["key"]))) == expected.column_names
        if str(expected.resource_type) == "view":
            assert row["table_type"] == "VIEW"
            assert "CREATE VIEW" in extra["viewDefinition"].upper()
            continue
        primary, foreign = TABLE_KEYS[expected.path]
        assert tuple(extra["primaryKey"]) == primary == expected.primary_key
        found = {(tuple(fk["columns"]), f"{fk['referredSchema']}.{fk['referredTable']}",
                  tuple(fk["referredColumns"])) for fk in extra["foreignKeys"]}
        assert found == set(foreign), expected.path
        pk_fields = fields(lake_server, str(row["key"]))
        assert all(not pk_fields[c]["nullable"] for c in primary)


def test_a_second_profile_skips_unchanged_files_and_reads_touched_ones(
    boss: Http, lake_server: Server, folder: Path, unique: Callable[[str], str]
) -> None:
    _write(folder, {"a.csv": "id,v\n1,a\n", "b.csv": "id,v\n1,b\n2,c\n",
                    "parts/p-2024-01.csv": "k\n1\n", "parts/p-2024-02.csv": "k\n2\n"})
    source = create_source(boss, unique("changes"), "FILE", str(folder))
    first = run_job(boss, source["key"])
    resource_counts = {k: first["counts"][k]
                       for k in ("created", "updated", "unchanged", "skipped", "errors")}
    assert resource_counts == {"created": 3, "updated": 0, "unchanged": 0, "skipped": 2,
                               "errors": 0}, first
    second = run_job(boss, source["key"])
    assert second["counts"]["unchanged"] == 3 and second["counts"]["updated"] == 0, second
    stamp = resources(lake_server, source["key"])["a.csv"]["time_of_last_profile"]
    # Touched: same bytes, new time. Grown: new rows. Both are read again.
    later = (folder / "a.csv").stat().st_mtime + 10
    os.utime(folder / "a.csv", (later, later))
    with (folder / "b.csv").open("a") as handle:
        handle.write("3,d\n")
    third = run_job(boss, source["key"])
    assert third["counts"]["updated"] == 2 and third["counts"]["unchanged"] == 1, third
    after = resources(lake_server, source["key"])
    assert after["a.csv"]["time_of_last_profile"] > stamp
    assert after["b.csv"]["row_count"] == 3
    assert after["a.csv"]["time_of_resource_change"] == int(later * 1000)
    # A browse that sees a change does not make stale statistics look current.
    later += 10
    os.utime(folder / "b.csv", (later, later))
    run_job(boss, source["key"], "BROWSE")
    fourth = run_job(boss, source["key"])
    assert fourth["counts"]["updated"] == 1 and fourth["counts"]["unchanged"] == 2, fourth


# ----------------------------------------------------------------------------------- bad files


def test_bad_files_become_errors_and_the_job_goes_on(
    boss: Http, lake_server: Server, folder: Path, unique: Callable[[str], str]
) -> None:
    (folder / "empty.csv").write_bytes(b"")
    (folder / "header_only.csv").write_text("id,name,city\n")
    (folder / "ragged.csv").write_text("id,name,city\n1,a,x\n2,b\n3,c,z,extra\n4,d,w\n5,e,v\n")
    (folder / "mixed.csv").write_bytes(b"id,name\n1,caf\xc3\xa9\n2,na\xefve\n3,\xe9t\xe9\n")
    (folder / "junk.csv").write_bytes(bytes(range(256)) * 16)
    (folder / "good.csv").write_text("id,name\n1,ok\n2,fine\n")
    source = create_source(boss, unique("bad"), "FILE", str(folder))
    job = run_job(boss, source["key"])
    assert job["counts"]["errors"] == 2 and job["counts"]["created"] == 4, job
    assert {e["path"] for e in job["errors"]} == {"empty.csv", "junk.csv"}
    stored = resources(lake_server, source["key"])
    for name in ("empty.csv", "junk.csv"):
        assert stored[name]["resource_state"] == "ERROR" and stored[name]["status"] == "ERROR"
        assert stored[name]["error_msg"], name
        assert stored[name]["resource_type"] == "resource_type_file"
    assert "empty" in stored["empty.csv"]["error_msg"]
    assert "binary" in stored["junk.csv"]["error_msg"]
    assert stored["header_only.csv"]["row_count"] == 0
    assert list(fields(lake_server, str(stored["header_only.csv"]["key"]))) == [
        "id", "name", "city"]
    assert stored["ragged.csv"]["row_count"] == 3
    assert stored["ragged.csv"]["extra"]["raggedRows"] == 2
    assert stored["mixed.csv"]["row_count"] == 3
    assert stored["good.csv"]["status"] == "PROFILED" and stored["good.csv"]["row_count"] == 2


def test_a_file_deleted_between_browse_and_profile(
    boss: Http, lake_server: Server, folder: Path, unique: Callable[[str], str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _write(folder, {"keep.csv": "a\n1\n", "gone.csv": "a\n2\n"})
    real = jobs_module.profile_file

    def vanishing(path: str, **options: Any) -> Any:
        if path == "gone.csv":
            (folder / "gone.csv").unlink()
        return real(path, **options)

    monkeypatch.setattr(jobs_module, "profile_file", vanishing)
    source = create_source(boss, unique("vanish"), "FILE", str(folder))
    job = run_job(boss, source["key"])
    assert job["counts"]["errors"] == 1 and job["counts"]["created"] == 1, job
    assert job["errors"][0]["path"] == "gone.csv"
    assert "no longer exists" in job["errors"][0]["message"]
    stored = resources(lake_server, source["key"])
    assert stored["gone.csv"]["resource_state"] == "ERROR"
    assert stored["gone.csv"]["resource_size"] is not None, "browsing's facts are kept"
    assert stored["keep.csv"]["status"] == "PROFILED"
    monkeypatch.undo()
    again = run_job(boss, source["key"], "BROWSE")
    assert "1 no longer found" in again["message"]
    assert resources(lake_server, source["key"])["gone.csv"]["status"] == "MISSING"
    assert boss.get(f"/datasource/{source['key']}").json()["resourceCount"] == 1


def test_patterns_select_what_is_browsed(
    boss: Http, lake_server: Server, lake: tuple[Path, LakeTruth], unique: Callable[[str], str]
) -> None:
    files = create_source(boss, unique("some-files"), "FILE", str(lake[0] / "files"),
                          includePatterns=["*.csv"], excludePatterns=["finance/*"])
    run_job(boss, files["key"], "BROWSE")
    paths = set(resources(lake_server, files["key"]))
    assert "crm/customers.csv" in paths and "sales/orders" in paths
    assert not [p for p in paths if p.startswith("finance/") or p.endswith((".json", ".jsonl"))]
    sql_uri = lake_sources(lake[0])[1]["uri"]
    tables = create_source(boss, unique("hr-only"), "SQL", sql_uri, includePatterns=["hr.*"],
                           excludePatterns=["*headcount"])
    run_job(boss, tables["key"], "BROWSE")
    assert set(resources(lake_server, tables["key"])) == {
        "hr.departments", "hr.employees", "hr.staff_directory"}


# ------------------------------------------------------------------------------ resource paths


@pytest.mark.parametrize(
    ("path", "profiled"),
    [
        ("crm/customers.csv", {"crm/customers.csv"}),
        ("/crm/", {"crm/customers.csv", "crm/customers_clean.csv"}),
        ("sales/orders", {"sales/orders"}),
        ("sales/orders/2024-01.csv", {"sales/orders/2024-01.csv"}),
    ],
)
def test_a_resource_path_limits_what_is_profiled(
    boss: Http, lake_server: Server, lake: tuple[Path, LakeTruth], path: str,
    profiled: set[str], unique: Callable[[str], str],
) -> None:
    source = create_source(boss, unique("scoped"), "FILE", str(lake[0] / "files"))
    job = run_job(boss, source["key"], path=path)
    stored = resources(lake_server, source["key"])
    assert {p for p, r in stored.items() if r["status"] == "PROFILED"} == profiled
    assert len(stored) > len(profiled), "the whole source was browsed"
    assert job["resourcePath"] == path.strip()
    assert job["counts"]["created"] == len(profiled)


def test_an_unknown_resource_path_fails_the_job(
    boss: Http, lake: tuple[Path, LakeTruth], unique: Callable[[str], str]
) -> None:
    source = create_source(boss, unique("nowhere"), "FILE", str(lake[0] / "files"))
    job = run_job(boss, source["key"], path="crm/nope.csv", expect="FAILED")
    assert "There is no resource at 'crm/nope.csv'" in job["message"]
    sql = create_source(boss, unique("nowhere-sql"), "SQL", lake_sources(lake[0])[1]["uri"])
    job = run_job(boss, sql["key"], path="sales.nope", expect="FAILED")
    assert "There is no resource at 'sales.nope'" in job["message"]
    job = run_job(boss, sql["key"], path="hr")
    # The failed job browsed (and recorded) the source before it failed.
    assert job["counts"]["updated"] == 4 and job["total"] == 4, job


# ------------------------------------------------------------------------------- dead sources


def test_a_database_that_cannot_be_reached_fails_the_job_not_the_service(
    boss: Http, lake_server: Server, scratch: Path, unique: Callable[[str], str]
) -> None:
    unreachable = create_source(
        boss, unique("down"), "SQL", f"postgresql+psycopg://reader:{SECRET}@127.0.0.1:1/nowhere")
    job = run_job(boss, unreachable["key"], expect="FAILED")
    assert job["message"].startswith(f"Cannot connect to data source '{unreachable['name']}'")
    assert "127.0.0.1" in job["message"] and SECRET not in job["message"]
    assert boss.get("/version").status_code == 200
    for path in ("/job", f"/job/{job['key']}", "/datasource", "/auditevent/list"):
        response = boss.get(path)
        assert response.status_code == 200 and SECRET not in response.text
    missing = scratch / f"{uuid.uuid4().hex}.sqlite3"
    gone = create_source(boss, unique("gone"), "SQL", f"sqlite:///{missing}")
    job = run_job(boss, gone["key"], expect="FAILED")
    assert "no SQLite database" in job["message"]
    assert not missing.exists(), "a missing database is never created"
    assert resources(lake_server, gone["key"]) == {}


def test_a_folder_that_disappeared_fails_the_job(
    boss: Http, folder: Path, unique: Callable[[str], str]
) -> None:
    _write(folder, {"a.csv": "a\n1\n"})
    source = create_source(boss, unique("vanished"), "FILE", str(folder))
    shutil.rmtree(folder)
    job = run_job(boss, source["key"], expect="FAILED")
    assert "does not exist" in job["message"] and source["name"] in job["message"]


# --------------------------------------------------------------------------------- PostgreSQL


@pytest.fixture
def pg_source(request: pytest.FixtureRequest) -> Iterator[str]:
    """A fresh PostgreSQL database with a schema, a foreign key and a view."""
    if not PG_URL:
        pytest.skip("CATALOG_TEST_PG_URL is not set")
    url, drop = new_pg_database(request.node.nodeid, prefix="catalog_src")
    engine = create_engine(url)
    with engine.begin() as conn:
        conn.execute(text("CREATE SCHEMA shop"))
        conn.execute(text("CREATE TABLE shop.customers (id INTEGER PRIMARY KEY, "
                          "email VARCHAR(80) NOT NULL, born DATE)"))
        conn.execute(text("CREATE TABLE shop.orders (id BIGINT PRIMARY KEY, customer_id INTEGER "
                          "NOT NULL REFERENCES shop.customers (id), amount NUMERIC(10, 2))"))
        conn.execute(text("INSERT INTO shop.customers SELECT g, 'c' || g || '@example.org', "
                          "DATE '1980-01-01' + g FROM generate_series(1, 40) AS g"))
        conn.execute(text("INSERT INTO shop.orders SELECT g, 1 + g % 40, g * 1.5 "
                          "FROM generate_series(1, 250) AS g"))
        conn.execute(text("CREATE VIEW shop.big_orders AS SELECT id, amount FROM shop.orders "
                          "WHERE amount > 100"))
    engine.dispose()
    yield url
    drop()


def test_a_postgresql_database_is_browsed_and_profiled(
    boss: Http, lake_server: Server, pg_source: str, unique: Callable[[str], str]
) -> None:
    source = create_source(boss, unique("pg"), "SQL", pg_source)
    job = run_job(boss, source["key"])
    assert job["counts"]["created"] == 3 and job["counts"]["errors"] == 0, job
    stored = resources(lake_server, source["key"])
    assert set(stored) == {"shop.customers", "shop.orders", "shop.big_orders"}
    orders = stored["shop.orders"]
    assert orders["row_count"] == 250 and orders["resource_type"] == "resource_type_table"
    assert orders["extra"]["primaryKey"] == ["id"]
    assert orders["extra"]["foreignKeys"] == [{
        "columns": ["customer_id"], "referredSchema": "shop", "referredTable": "customers",
        "referredColumns": ["id"]}]
    assert stored["shop.customers"]["row_count"] == 40
    view = stored["shop.big_orders"]
    assert view["resource_type"] == "resource_type_view"
    assert view["row_count"] == 184
    assert "amount > " in view["extra"]["viewDefinition"]
    found = fields(lake_server, str(orders["key"]))
    assert {n: f["data_type"] for n, f in found.items()} == {
        "id": "LONG", "customer_id": "LONG", "amount": "DOUBLE"}
    assert found["amount"]["properties"]["max"] == 375.0
