"""Hostile input to profiling jobs: a Parquet file with a corrupt footer, and value sketches left
in the store in the version 1 format."""

from __future__ import annotations

import base64
from collections.abc import Callable
from hashlib import blake2b
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from sqlalchemy import select, update

from catalog_nb.server.profiling.sketch import SKETCH_VERSION, V1_ALGORITHM
from catalog_nb.server.store.schema import resource_fields
from tests.conftest import Http, Server
from tests.server.hostile.common import still_answering
from tests.server.source_helpers import create_source, fields, resources, run_job


def _corrupt_footer(path: Path) -> None:
    data = path.read_bytes()
    length = int.from_bytes(data[-8:-4], "little")
    start = len(data) - 8 - length
    path.write_bytes(data[:start] + bytes(b ^ 0x5A for b in data[start:-8]) + data[-8:])


def test_a_corrupt_parquet_footer_fails_only_its_resource(
    make_server: Callable[..., Server], tmp_path: Path
) -> None:
    table = pa.table({"id": list(range(100)), "name": [f"n{i}" for i in range(100)]})
    pq.write_table(table, tmp_path / "good.parquet")
    pq.write_table(table, tmp_path / "broken.parquet")
    _corrupt_footer(tmp_path / "broken.parquet")
    server = make_server(data_roots=[tmp_path])
    admin = server.session()
    source = create_source(admin, "corrupt-parquet", "FILE", str(tmp_path))
    job = run_job(admin, source["key"], "PROFILE")
    assert job["counts"]["errors"] == 1, job
    assert [e["path"] for e in job["errors"]] == ["broken.parquet"]
    assert "cannot be parsed as PARQUET" in job["errors"][0]["message"]
    assert all(c.isprintable() for c in job["errors"][0]["message"])
    found = resources(server, source["key"])
    assert found["broken.parquet"]["status"] == "ERROR" or found["broken.parquet"][
        "resource_state"] == "ERROR"
    assert set(fields(server, found["good.parquet"]["key"])) == {"id", "name"}
    still_answering(server)


def _v1(values: list[str]) -> dict[str, Any]:
    """The version 1 sketch of ``values``, as a store written before version 2 holds it."""
    by_hash = {int.from_bytes(blake2b(v.strip().lower().encode(), digest_size=8).digest(),
                              "big"): v for v in values}
    hashes = sorted(by_hash)[:256]
    return {"version": 1, "algorithm": V1_ALGORITHM, "k": 256, "sampleLimit": 200,
            "hashes": base64.b64encode(b"".join(h.to_bytes(8, "big") for h in hashes)).decode(),
            "sample": [by_hash[h] for h in hashes[:200]]}


def _sketches(server: Server, resource_key: str) -> list[dict[str, Any]]:
    with server.store.read() as conn:
        rows = conn.execute(select(resource_fields.c.sketch)
                            .where(resource_fields.c.resource_key == resource_key)).all()
    return [row[0] for row in rows if row[0]]


def test_v1_sketches_keep_working_and_are_resketched_on_the_next_profile(
    make_server: Callable[..., Server], tmp_path: Path
) -> None:
    ids = [f"cust-{i}" for i in range(300)]
    (tmp_path / "customers.csv").write_text(
        "id,email\n" + "".join(f"{c},{c}@example.com\n" for c in ids))
    (tmp_path / "orders.csv").write_text(
        "order,customer\n" + "".join(f"o{i},{ids[i % 300]}\n" for i in range(900)))
    server = make_server(data_roots=[tmp_path])
    admin = server.session()
    source = create_source(admin, "old-sketches", "FILE", str(tmp_path))
    run_job(admin, source["key"], "PROFILE")
    assert _id_joins(admin)  # version 2 sketches on both sides: the join is found
    found = resources(server, source["key"])
    customers = found["customers.csv"]["key"]
    # The store as an older release left it: every sketch of customers.csv in version 1.
    with server.store.write() as conn:
        conn.execute(update(resource_fields)
                     .where(resource_fields.c.resource_key == customers,
                            resource_fields.c.name == "id")
                     .values(sketch=_v1(ids)))
        conn.execute(update(resource_fields)
                     .where(resource_fields.c.resource_key == customers,
                            resource_fields.c.name == "email")
                     .values(sketch=_v1([f"{c}@example.com" for c in ids])))
    assert {s["version"] for s in _sketches(server, customers)} == {1}
    # Everything that reads sketches still works; a v1 sketch compares with no v2 one, so the
    # id join is not found while customers.csv holds v1 sketches.
    run_job(admin, source["key"], "DISCOVER")
    assert admin.get(f"/dataresource/{customers}").status_code == 200
    assert not _id_joins(admin)
    # The next PROFILE job reads the unchanged file again and writes version 2 sketches ...
    run_job(admin, source["key"], "PROFILE")
    assert {s["version"] for s in _sketches(server, customers)} == {SKETCH_VERSION}
    # ... which compare with the other file's again: the id join is back.
    run_job(admin, source["key"], "DISCOVER")
    assert _id_joins(admin)
    still_answering(server)


def _id_joins(admin: Http) -> list[dict[str, Any]]:
    response = admin.get("/joincondition", params={"dataSource": "old-sketches"})
    assert response.status_code == 200, response.text
    return [c for c in response.json()["list"]
            if {c["leftPath"], c["rightPath"]} == {"customers.csv", "orders.csv"}
            and {tuple(c["leftCols"]), tuple(c["rightCols"])} == {("id",), ("customer",)}]


def _composite_joins(admin: Http) -> list[dict[str, Any]]:
    response = admin.get("/joincondition", params={"dataSource": "old-pairs"})
    assert response.status_code == 200, response.text
    return [c for c in response.json()["list"] if len(c["leftCols"]) == 2]


def test_version_2_pair_sketches_are_made_again_and_plain_ones_kept(
    make_server: Callable[..., Server], tmp_path: Path
) -> None:
    """Version 3 hashes column pairs differently: a resource whose stored sketches carry
    version 2 pairs loses its composite joins until the next PROFILE job makes them again;
    one whose version 2 sketches have no pairs is not profiled again (its values compare)."""
    days = [f"2024-01-{d:02d}" for d in range(1, 29)]
    stations = [f"ST{i:02d}" for i in range(12)]
    (tmp_path / "daily_weather.csv").write_text("day,station_code,rain_mm\n" + "".join(
        f"{d},{s},{(i * 7) % 31}.5\n" for i, (d, s) in
        enumerate((d, s) for d in days for s in stations)))
    (tmp_path / "incidents.csv").write_text("incident_id,day,station_code\n" + "".join(
        f"{5000 + i},{days[(i * 5) % 28]},{stations[(i * 7) % 12]}\n" for i in range(700)))
    server = make_server(data_roots=[tmp_path])
    admin = server.session()
    source = create_source(admin, "old-pairs", "FILE", str(tmp_path))
    run_job(admin, source["key"], "PROFILE")
    assert _composite_joins(admin)
    found = resources(server, source["key"])
    weather, incidents = found["daily_weather.csv"]["key"], found["incidents.csv"]["key"]
    assert any("pairs" in s for s in _sketches(server, weather))
    # The store as the previous release left it: every sketch in version 2.
    with server.store.write() as conn:
        for key in (weather, incidents):
            for row in conn.execute(select(resource_fields.c.name, resource_fields.c.sketch)
                                    .where(resource_fields.c.resource_key == key)).all():
                if row.sketch:
                    conn.execute(update(resource_fields)
                                 .where(resource_fields.c.resource_key == key,
                                        resource_fields.c.name == row.name)
                                 .values(sketch={**row.sketch, "version": 2}))
    run_job(admin, source["key"], "DISCOVER")
    assert not _composite_joins(admin)  # version 2 pairs are read as none
    run_job(admin, source["key"], "PROFILE")
    versions = {key: {s["version"] for s in _sketches(server, key)} for key in (weather, incidents)}
    # Both files hold pairs (the incidents' identifier pairs, the weather's composite key):
    # both are profiled again, and the composite join is back.
    assert versions == {weather: {SKETCH_VERSION}, incidents: {SKETCH_VERSION}}, versions
    run_job(admin, source["key"], "DISCOVER")
    assert _composite_joins(admin)
    # A resource whose version 2 sketches carry no pair keeps them: nothing to make again.
    (tmp_path / "plain.csv").write_text("code,label\n" + "".join(
        f"C{i},label {i % 7}\n" for i in range(50)))
    run_job(admin, source["key"], "PROFILE")
    plain = resources(server, source["key"])["plain.csv"]["key"]
    assert not any("pairs" in s for s in _sketches(server, plain))
    with server.store.write() as conn:
        for row in conn.execute(select(resource_fields.c.name, resource_fields.c.sketch)
                                .where(resource_fields.c.resource_key == plain)).all():
            conn.execute(update(resource_fields)
                         .where(resource_fields.c.resource_key == plain,
                                resource_fields.c.name == row.name)
                         .values(sketch={**row.sketch, "version": 2}))
    run_job(admin, source["key"], "PROFILE")
    assert {s["version"] for s in _sketches(server, plain)} == {2}
