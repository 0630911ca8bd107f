"""Incremental join and lineage discovery: a PROFILE job compares what it profiled with the
rest of the catalog and stores exactly what a full rerun (a DISCOVER job) would.

Each test runs real jobs over HTTP on a server of its own, on a small lake of customers,
products and orders written here, then checks the stored joins and edges against the full
rerun's and the sketches the job read against what it profiled.
"""

from __future__ import annotations

import os
import random
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from sqlalchemy import select

from catalog_nb.server.discovery import joins, sketch_index
from catalog_nb.server.profiling.sketch import build_sketch
from catalog_nb.server.store import sketches as sketch_store
from catalog_nb.server.store.schema import data_resources, join_conditions, lineage_edges
from tests.conftest import Http, Server
from tests.server.source_helpers import create_source, run_job

ORDERS = 6


def _write(path: Path, header: list[str], rows: list[list[Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(",".join(map(str, r)) for r in [header, *rows]) + "\n")


def _orders(rng: random.Random, name: str, rows: int = 300) -> list[list[Any]]:
    return [[f"{name}-{i:05d}", f"C{rng.randrange(300):04d}", f"P{rng.randrange(150):03d}",
             f"{rng.uniform(1, 500):.2f}", rng.randint(1, 9)] for i in range(rows)]


ORDER_HEADER = ["order_id", "customer_code", "product_code", "amount", "qty"]


@pytest.fixture()
def lake(tmp_path: Path) -> Path:
    """Customers, products and six order files (eight resources)."""
    rng = random.Random(3)
    folder = tmp_path / "lake"
    _write(folder / "customers.csv", ["customer_code", "segment"],
           [[f"C{i:04d}", rng.choice(["retail", "trade"])] for i in range(300)])
    _write(folder / "products.csv", ["product_code", "title"],
           [[f"P{i:03d}", f"product {i}"] for i in range(150)])
    for n in range(ORDERS):
        _write(folder / f"orders_{n}.csv", ORDER_HEADER, _orders(rng, f"O{n}"))
    return folder


@pytest.fixture()
def reads(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The resource keys whose sketches the sketch index reads from the store."""
    keys: list[str] = []
    real = sketch_store.sketched_fields

    def counting(conn: Any, wanted: Any) -> Any:
        keys.extend(wanted)
        return real(conn, wanted)

    monkeypatch.setattr(sketch_store, "sketched_fields", counting)
    yield keys


def _by_path(server: Server) -> dict[str, str]:
    with server.store.read() as conn:
        rows = conn.execute(select(data_resources.c.key, data_resources.c.path))
        return {str(k): str(p) for k, p in rows}


def _relations(server: Server) -> tuple[set[Any], set[Any]]:
    """The stored join conditions and inferred edges, by path, without keys and times."""
    named = _by_path(server)
    J, E = join_conditions, lineage_edges
    with server.store.read() as conn:
        found = {(named[r.left_key], r.left_cols[0], named[r.right_key], r.right_cols[0],
                  r.origin, r.cardinality, r.score) for r in conn.execute(select(J))}
        edges = {(named[r.upstream_key], named[r.downstream_key], r.lineage_type, r.score)
                 for r in conn.execute(select(E))}
    return found, edges


def _joined(found: set[Any], one: str, other: str) -> bool:
    return any({row[0], row[2]} == {one, other} for row in found)


def _full_rerun(http: Http, source_key: str) -> dict[str, Any]:
    job = run_job(http, source_key, "DISCOVER")
    assert "joinsDiscovered" in job["counts"] and "inferredEdges" in job["counts"], job
    return job


def test_a_profile_job_compares_only_what_it_profiled_and_matches_a_full_rerun(
    make_server: Callable[..., Server], lake: Path, reads: list[str]
) -> None:
    # ``reads`` counts in this process: the jobs run here.
    server = make_server(data_roots=[lake], job_isolation="thread")
    http = server.session()
    source = create_source(http, "shop", "FILE", str(lake))
    first = run_job(http, source["key"], "PROFILE")
    # Everything was new: the first job rediscovers the whole catalog.
    assert first["counts"]["joinsDiscovered"] > 0, first["counts"]
    before, _ = _relations(server)
    assert _joined(before, "orders_0.csv", "customers.csv")

    rng = random.Random(8)
    _write(lake / "new" / "orders_new.csv", ORDER_HEADER, _orders(rng, "N"))
    extract = (lake / "orders_0.csv").read_text().splitlines()
    _write(lake / "new" / "orders_0_extract.csv", extract[0].split(","),
           [line.split(",") for line in extract[1:150]])
    reads.clear()
    job = run_job(http, source["key"], "PROFILE", "new")
    counts = job["counts"]
    assert counts["created"] == 2, counts
    assert counts["joinsDiscoveredChanged"] > 0 and "joinsDiscovered" not in counts, counts
    assert counts["inferredEdgesChanged"] >= 1, counts
    keys = _by_path(server)
    new = {k for k, p in keys.items() if p.startswith("new/")}
    # The index was warm: the job read the sketches of what it profiled, and nothing else.
    assert set(reads) == new, sorted(keys[k] for k in reads)

    incremental, edges = _relations(server)
    assert _joined(incremental, "new/orders_new.csv", "customers.csv")
    assert _joined(incremental, "new/orders_new.csv", "products.csv")
    assert ("orders_0.csv", "new/orders_0_extract.csv", "INFERRED") in {e[:3] for e in edges}
    # What was between unchanged resources is kept as it was.
    assert {r for r in incremental if not {r[0], r[2]} & {keys[k] for k in new}} == before

    _full_rerun(http, source["key"])
    assert _relations(server) == (incremental, edges)


def test_reprofiling_or_losing_a_file_replaces_its_relations(
    make_server: Callable[..., Server], lake: Path
) -> None:
    server = make_server(data_roots=[lake])
    http = server.session()
    source = create_source(http, "shop", "FILE", str(lake))
    run_job(http, source["key"], "PROFILE")
    rows = (lake / "orders_0.csv").read_text().splitlines()
    _write(lake / "orders_0_extract.csv", rows[0].split(","),
           [line.split(",") for line in rows[1:150]])
    run_job(http, source["key"], "PROFILE", "orders_0_extract.csv")
    found, edges = _relations(server)
    assert _joined(found, "orders_1.csv", "customers.csv")
    assert ("orders_0.csv", "orders_0_extract.csv", "INFERRED") in {e[:3] for e in edges}

    # A source profiled after its extract: the extract (unchanged) gets its edge.
    table = _orders(random.Random(6), "O7", 400)
    _write(lake / "orders_7.csv", ORDER_HEADER, table)
    os.utime(lake / "orders_7.csv", (1_600_000_000, 1_600_000_000))
    _write(lake / "extract_7.csv", ORDER_HEADER, table[:200])
    run_job(http, source["key"], "PROFILE", "extract_7.csv")
    assert not [e for e in _relations(server)[1] if e[1] == "extract_7.csv"]
    job = run_job(http, source["key"], "PROFILE", "orders_7.csv")
    assert job["counts"]["inferredEdgesChanged"] >= 1, job["counts"]
    assert ("orders_7.csv", "extract_7.csv", "INFERRED") in {e[:3] for e in _relations(server)[1]}

    # orders_1 now holds customers nobody knows: its join to customers goes.
    rng = random.Random(4)
    _write(lake / "orders_1.csv", ORDER_HEADER,
           [[f"O1-{i:05d}", f"X{rng.randrange(10**6):07d}", f"P{rng.randrange(150):03d}",
             f"{rng.uniform(1, 500):.2f}", rng.randint(1, 9)] for i in range(300)])
    job = run_job(http, source["key"], "PROFILE", "orders_1.csv")
    assert job["counts"]["updated"] == 1, job["counts"]
    found, edges = _relations(server)
    assert not any(r[1] == "customer_code" and {r[0], r[2]} == {"orders_1.csv", "customers.csv"}
                   for r in found)
    assert _joined(found, "orders_1.csv", "products.csv")

    # orders_0 is gone: the next job (which profiles nothing new) drops its edge.
    (lake / "orders_0.csv").unlink()
    run_job(http, source["key"], "PROFILE")
    found, edges = _relations(server)
    assert not [e for e in edges if "orders_0.csv" in e[:2]]
    _full_rerun(http, source["key"])
    assert _relations(server) == (found, edges)


def _brute_force(fields: list[joins.KeyField], focus: set[str] | None) -> list[tuple[int, int]]:
    """The pairs of :func:`joins.candidate_pairs`, by comparing every pair one by one."""
    common: dict[int, int] = {}
    for item in fields:
        for h in item.sketch.hashes.tolist():
            common[h] = common.get(h, 0) + 1
    pairs = []
    for a in range(len(fields)):
        for b in range(a + 1, len(fields)):
            one, two = fields[a], fields[b]
            if one.resource_key == two.resource_key:
                continue
            if focus is not None and not {one.resource_key, two.resource_key} & focus:
                continue
            shared = np.intersect1d(one.sketch.hashes, two.sketch.hashes)
            counted = sum(1 for h in shared.tolist() if common[h] <= joins.MAX_POSTING)
            if counted >= joins.MIN_SHARED:
                pairs.append((a, b))
    return pairs


def test_the_vectorised_inverted_index_pairs_what_comparing_every_pair_does(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rng = random.Random(12)
    fields = []
    for index in range(60):
        low = rng.randrange(0, 400)
        values = [f"v{i}" for i in range(low, low + rng.randrange(5, 400))]
        fields.append(joins.KeyField(
            resource_key=f"r{index // 3}", resource_path=f"r{index // 3}.csv", name=f"f{index}",
            sketch=build_sketch(values), distinct=len(values), unique=True, int_range=None,
            dense=False, tokens=frozenset({f"f{index}"})))
    # Small limits make common hashes and chunking both happen.
    monkeypatch.setattr(joins, "MAX_POSTING", 12)
    monkeypatch.setattr(joins, "PAIR_CHUNK", 500)
    for focus in (None, {"r3"}, {"r0", "r17"}):
        assert joins.candidate_pairs(fields, focus) == _brute_force(fields, focus), focus
    assert joins.candidate_pairs(fields, {"nobody"}) == []
    assert joins.candidate_pairs([], None) == []


def test_the_sketch_index_reloads_only_resources_whose_row_changed(
    make_server: Callable[..., Server], lake: Path, reads: list[str]
) -> None:
    server = make_server(data_roots=[lake])
    http = server.session()
    source = create_source(http, "shop", "FILE", str(lake))
    run_job(http, source["key"], "PROFILE")
    index = sketch_index.SketchIndex()
    with server.store.read() as conn:
        assert len(index.sync(conn)) == 2 + ORDERS
        assert index.sync(conn) == set()
    keys = {p: k for k, p in _by_path(server).items()}
    (lake / "orders_2.csv").write_text((lake / "orders_3.csv").read_text())
    run_job(http, source["key"], "PROFILE", "orders_2.csv")
    reads.clear()
    with server.store.read() as conn:
        assert index.sync(conn) == {keys["orders_2.csv"]}
        assert index.sync(conn, force={keys["customers.csv"]}) == {keys["customers.csv"]}
    assert reads == [keys["orders_2.csv"], keys["customers.csv"]]
    rows = [r for r in index.field_rows() if r["resource_key"] == keys["orders_2.csv"]]
    assert [r["name"] for r in rows] == ORDER_HEADER
    assert all(r["sketch"] is not None and r["error"] is None for r in rows)
