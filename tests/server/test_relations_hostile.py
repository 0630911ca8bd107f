"""Issue 14's bad inputs for join and copy discovery, each through the real interface: files
(and an SQLite database) profiled by PROFILE jobs of a server on 127.0.0.1, the answers read
from ``GET /joincondition``, ``GET /lineage`` and ``GET /dataresource/metadata``.

Copies of one table are lineage (one COPY edge, no join between them, one join per partner);
a foreign key of two values still joins its small dimension; a table without a key, all-null
and constant columns, and a measure whose values happen to lie inside an id column join
nothing; a composite key where no column is unique is found as one two-column condition.
"""

from __future__ import annotations

import os
import random
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.conftest import Http, Server
from tests.server.source_helpers import create_source, run_job

T0 = 1_700_000_000
DAY = 86_400


def _write(path: Path, header: list[str], rows: list[list[Any]], moment: int = T0) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [",".join(header), *(",".join("" if v is None else str(v) for v in r) for r in rows)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    os.utime(path, (moment, moment))


def _every(http: Http, path: str, **params: Any) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    while True:
        response = http.get(path, params={"start": len(found), "size": 500, **params})
        assert response.status_code == 200, response.text
        page = response.json()
        found.extend(page["list"])
        if not page["list"] or len(found) >= page["totalCount"]:
            return found


def _joins(http: Http) -> set[tuple[str, tuple[str, ...], str, tuple[str, ...]]]:
    """Every condition as (left path, left columns, right path, right columns)."""
    return {(c["leftPath"], tuple(c["leftCols"]), c["rightPath"], tuple(c["rightCols"]))
            for c in _every(http, "/joincondition")}


def _touching(found: set[tuple[str, tuple[str, ...], str, tuple[str, ...]]], path: str
              ) -> set[tuple[str, tuple[str, ...], str, tuple[str, ...]]]:
    return {c for c in found if path in (c[0], c[2])}


def _profiled(make_server: Callable[..., Server], folder: Path) -> Http:
    server = make_server(data_roots=[folder])
    http = server.session()
    source = create_source(http, "lake", "FILE", str(folder))
    job = run_job(http, source["key"], "PROFILE")
    assert not job.get("errors"), job
    return http


def _customers(folder: Path) -> None:
    _write(folder / "customers.csv", ["customer_code", "segment"],
           [[f"C{i:04d}", "retail" if i % 3 else "trade"] for i in range(400)])


def _orders(count: int) -> list[list[Any]]:
    rng = random.Random(11)
    return [[f"O{i:05d}", f"C{rng.randrange(400):04d}", f"{rng.uniform(5, 900):.2f}"]
            for i in range(count)]


ORDER_HEADER = ["order_no", "customer_code", "amount"]


def test_two_copies_and_a_partial_copy_are_lineage_with_one_join_per_partner(
        make_server: Callable[..., Server], tmp_path: Path) -> None:
    folder = tmp_path / "lake"
    _customers(folder)
    rows = _orders(1200)
    _write(folder / "orders.csv", ORDER_HEADER, rows, T0)
    _write(folder / "orders_copy.csv", ORDER_HEADER, rows, T0 + DAY)
    _write(folder / "orders_part.csv", ORDER_HEADER, rows[:500], T0 + 2 * DAY)
    # The same table once more, in a database without declared keys.
    with sqlite3.connect(folder / "shop.db") as db:
        db.execute("CREATE TABLE orders (order_no TEXT, customer_code TEXT, amount REAL)")
        db.executemany("INSERT INTO orders VALUES (?, ?, ?)",
                       [(o, c, float(a)) for o, c, a in rows])
        db.execute("CREATE TABLE customers (customer_code TEXT, segment TEXT)")
        db.executemany("INSERT INTO customers VALUES (?, ?)",
                       [(f"C{i:04d}", "retail" if i % 3 else "trade") for i in range(400)])
    http = _profiled(make_server, folder)
    source = create_source(http, "shop", "SQL", f"sqlite:///{folder / 'shop.db'}")
    run_job(http, source["key"], "PROFILE")

    edges = _every(http, "/lineage", lineageType="INFERRED")
    kinds = {(e["upstream"]["path"], e["downstream"]["path"]): e["evidence"]["kind"]
             for e in edges}
    copies = [e for e in edges if e["evidence"]["kind"] == "COPY"]
    # The database table is where files come from; the copy is younger than orders.csv.
    assert kinds[("main.orders", "orders.csv")] == "COPY"
    assert kinds[("orders.csv", "orders_copy.csv")] == "COPY"
    assert kinds.get(("orders.csv", "orders_part.csv")) == "SUBSET" or kinds.get(
        ("orders_copy.csv", "orders_part.csv")) == "SUBSET", kinds
    evidence = next(e["evidence"] for e in copies if e["downstream"]["path"] == "orders_copy.csv")
    assert evidence["matchedFields"] == 3 and evidence["meanContainment"] == 1.0
    assert evidence["rowRatio"] == 1.0

    found = _joins(http)
    orders = {"orders.csv", "orders_copy.csv", "orders_part.csv", "main.orders"}
    # No condition between two copies of the table.
    assert not [c for c in found if {c[0], c[2]} <= orders], found
    # Customers join the orders once per data source, each in its own source: the original.
    to_customers = sorted((c[0], c[2]) for c in found if "customer_code" in c[1])
    assert to_customers == [("customers.csv", "orders.csv"), ("main.customers", "main.orders")]


def test_a_foreign_key_of_two_values_joins_its_small_dimension(
        make_server: Callable[..., Server], tmp_path: Path) -> None:
    folder = tmp_path / "lake"
    _write(folder / "statuses.csv", ["status_id", "label"],
           [[1, "open"], [2, "closed"], [3, "on hold"]])
    rng = random.Random(5)
    _write(folder / "tickets.csv", ["ticket_id", "status_id", "priority", "opened"],
           [[10_000 + i, 1 + i % 2, 1 + rng.randrange(2), f"2024-03-{1 + i % 28:02d}"]
            for i in range(800)])
    found = _joins(_profiled(make_server, folder))
    assert found == {("statuses.csv", ("status_id",), "tickets.csv", ("status_id",))}


def test_a_table_without_a_key_joins_nothing(
        make_server: Callable[..., Server], tmp_path: Path) -> None:
    folder = tmp_path / "lake"
    rng = random.Random(8)
    # Every column repeats: no row is told from the others by any column or pair.
    events = [[f"U{rng.randrange(40):03d}", f"P{rng.randrange(25):02d}", rng.randrange(3)]
              for _ in range(600)]
    _write(folder / "events.csv", ["user_code", "page_code", "kind"], events + events[:50])
    _write(folder / "visits.csv", ["user_code", "page_code", "seconds"],
           [[f"U{rng.randrange(40):03d}", f"P{rng.randrange(25):02d}", rng.randrange(300)]
            for _ in range(500)])
    http = _profiled(make_server, folder)
    assert _joins(http) == set()
    listed = _every(http, "/dataresource/metadata")
    keys = {r["resourcePath"]: r["inferredKeys"] for r in listed}["events.csv"]
    assert keys == {"primaryKey": [], "uniqueColumns": [], "compositeKeys": []}, keys


def test_all_null_and_constant_columns_join_nothing(
        make_server: Callable[..., Server], tmp_path: Path) -> None:
    folder = tmp_path / "lake"
    _write(folder / "units.csv", ["unit_code", "tenant_id", "note", "region_id"],
           [[f"U{i:03d}", 7, None, None] for i in range(120)])
    _write(folder / "readings.csv", ["reading_no", "unit_code", "tenant_id", "region_id"],
           [[i, f"U{i % 120:03d}", 7, None] for i in range(900)])
    found = _joins(_profiled(make_server, folder))
    assert found == {("units.csv", ("unit_code",), "readings.csv", ("unit_code",))}


def test_a_composite_key_where_no_column_is_unique_is_one_two_column_condition(
        make_server: Callable[..., Server], tmp_path: Path) -> None:
    folder = tmp_path / "lake"
    stations = [f"ST{i:02d}" for i in range(12)]
    days = [f"2024-01-{d:02d}" for d in range(1, 29)]
    rng = random.Random(2)
    _write(folder / "daily_weather.csv", ["day", "station_code", "rain_mm"],
           [[d, s, round(rng.uniform(0, 30), 1)] for d in days for s in stations])
    _write(folder / "incidents.csv", ["incident_id", "day", "station_code", "crew"],
           [[5000 + i, rng.choice(days), rng.choice(stations), rng.randrange(6)]
            for i in range(700)], T0 + DAY)
    http = _profiled(make_server, folder)
    found = _joins(http)
    assert ("daily_weather.csv", ("day", "station_code"), "incidents.csv",
            ("day", "station_code")) in found, found
    # Neither column alone is a key, so neither joins alone.
    assert not [c for c in found if len(c[1]) == 1], found
    listed = _every(http, "/dataresource/metadata")
    keys = {r["resourcePath"]: r["inferredKeys"] for r in listed}
    assert keys["daily_weather.csv"]["compositeKeys"] == [["day", "station_code"]]
    assert "inferredKeys" not in listed[0]["sourceDetails"]


def test_a_measure_whose_values_lie_in_an_id_column_is_no_foreign_key(
        make_server: Callable[..., Server], tmp_path: Path) -> None:
    folder = tmp_path / "lake"
    # Sparse ids (every third number): no dense range explains the overlap away.
    _write(folder / "parcels.csv", ["parcel_id", "weight_band"],
           [[3 * i, "S" if i % 2 else "L"] for i in range(1, 400)])
    rng = random.Random(9)
    _write(folder / "deliveries.csv", ["delivery_no", "parcel_id", "delay_minutes", "points"],
           [[f"D{i:05d}", 3 * rng.randrange(1, 400), 3 * rng.randrange(1, 60),
             3 * rng.randrange(1, 90)] for i in range(900)])
    found = _joins(_profiled(make_server, folder))
    assert found == {("parcels.csv", ("parcel_id",), "deliveries.csv", ("parcel_id",))}


def test_a_table_of_five_rows_is_recognised_as_a_copy(
        make_server: Callable[..., Server], tmp_path: Path) -> None:
    folder = tmp_path / "lake"
    regions = [[0, "AFRICA"], [1, "AMERICA"], [2, "ASIA"], [3, "EUROPE"], [4, "MIDDLE EAST"]]
    _write(folder / "region.csv", ["r_regionkey", "r_name"], regions)
    with sqlite3.connect(folder / "ref.db") as db:
        db.execute("CREATE TABLE region (r_regionkey INTEGER, r_name TEXT)")
        db.executemany("INSERT INTO region VALUES (?, ?)", regions)
    http = _profiled(make_server, folder)
    source = create_source(http, "ref", "SQL", f"sqlite:///{folder / 'ref.db'}")
    run_job(http, source["key"], "PROFILE")
    edges = [(e["upstream"]["path"], e["downstream"]["path"], e["evidence"]["kind"])
             for e in _every(http, "/lineage", lineageType="INFERRED")]
    assert edges == [("main.region", "region.csv", "COPY")]
    assert _joins(http) == set()


def test_a_copy_profiled_later_merges_incrementally_as_a_full_run_would(
        make_server: Callable[..., Server], tmp_path: Path) -> None:
    folder = tmp_path / "lake"
    _customers(folder)
    rows = _orders(900)
    _write(folder / "orders.csv", ORDER_HEADER, rows, T0)
    for n in range(6):  # enough of a catalog for one new file to be discovered incrementally
        _write(folder / f"other_{n}.csv", ["code", "value"],
               [[f"X{n}-{i}", i * n] for i in range(50)])
    server = make_server(data_roots=[folder])
    http = server.session()
    source = create_source(http, "lake", "FILE", str(folder))
    run_job(http, source["key"], "PROFILE")
    before = _joins(http)
    assert ("customers.csv", ("customer_code",), "orders.csv", ("customer_code",)) in before

    _write(folder / "orders_copy.csv", ORDER_HEADER, rows, T0 + DAY)
    job = run_job(http, source["key"], "PROFILE", "orders_copy.csv")
    assert "joinsDiscoveredChanged" in job["counts"], job["counts"]
    incremental = _joins(http)
    assert incremental == before, incremental
    run_job(http, source["key"], "DISCOVER")
    assert _joins(http) == incremental
