"""Benchmark: discovery after profiling one new file into a catalog of 5,000 profiled fields.

    python -m tests.benchmarks.incremental_discovery [--files 250] [--rows 2000] [--keep DIR]

Builds a lake of ``--files`` CSV files of 20 columns each (the default makes 5,000 profiled
fields): dimension tables with unique codes, fact tables holding foreign keys into three
dimensions each plus measures, dates and flags, and row-subset extracts of some facts (file
lineage). It profiles the whole lake with a real PROFILE job into a real SQLite store, then
adds one new fact file and profiles only that file (without its discovery). Then, in one run:

* **incremental**: what a PROFILE job now ends with - tag discovery over the new file, then
  join and lineage discovery of the changed resource against the rest of the catalog
  (``discover_relations(..., changed={key})``);
* **anchor**: the full rerun a DISCOVER job does (and every PROFILE job did before):
  ``discover_relations`` over the whole catalog.

Prints both times, their ratio and the load average, whether the target (incremental
< 1 s, issue 12) is met, and whether the incremental run stored exactly the join conditions
and lineage edges the full rerun stores. Not a test: run it by hand, read the figures.
"""

from __future__ import annotations

import argparse
import os
import random
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sqlalchemy import select

from catalog_nb.server.discovery import discover, sketch_index
from catalog_nb.server.discovery.relations import discover_relations
from catalog_nb.server.jobs import run_job
from catalog_nb.server.settings import Settings
from catalog_nb.server.store import Store
from catalog_nb.server.store import jobs as job_store
from catalog_nb.server.store import sources as source_store
from catalog_nb.server.store.schema import data_resources, join_conditions, lineage_edges
from tests.benchmarks.harness import in_folder

COLUMNS = 20
DIMENSIONS = 20
TARGET_SECONDS = 1.0


def _dimension(index: int, rows: int, rng: random.Random) -> list[list[str]]:
    header = [f"dim{index}_code", f"dim{index}_name", "region", "created"]
    header += [f"attr_{c}" for c in range(COLUMNS - len(header))]
    body = [[f"D{index:02d}-{r:05d}", f"name {index} {r}", rng.choice("NESW"),
             f"2024-{1 + r % 12:02d}-{1 + r % 28:02d}"]
            + [str(rng.randint(0, 10**6)) for _ in range(COLUMNS - 4)] for r in range(rows)]
    return [header, *body]


def _fact(index: int, rows: int, rng: random.Random, dim_rows: int) -> list[list[str]]:
    dims = rng.sample(range(DIMENSIONS), 3)
    header = [f"fact{index}_id"] + [f"dim{d}_code" for d in dims] + ["amount", "quantity",
                                                                      "status", "booked"]
    header += [f"measure_{c}" for c in range(COLUMNS - len(header))]
    body = [[f"F{index:04d}-{r:06d}"] + [f"D{d:02d}-{rng.randrange(dim_rows):05d}" for d in dims]
            + [f"{rng.random() * 1000:.2f}", str(rng.randint(1, 50)), rng.choice(["open", "shut"]),
               f"2025-{1 + r % 12:02d}-{1 + r % 28:02d}"]
            + [f"{rng.gauss(0, 1):.4f}" for _ in range(COLUMNS - 8)] for r in range(rows)]
    return [header, *body]


def _write(path: Path, table: list[list[str]]) -> None:
    path.write_text("\n".join(",".join(row) for row in table) + "\n")


def build_lake(folder: Path, files: int, rows: int, seed: int = 5) -> None:
    """Dimensions, facts and row-subset extracts of facts: ``files`` CSVs of 20 columns."""
    rng = random.Random(seed)
    extracts = files // 10
    facts = files - DIMENSIONS - extracts
    for d in range(DIMENSIONS):
        _write(folder / f"dim_{d:02d}.csv", _dimension(d, rows // 2, rng))
    tables = []
    for f in range(facts):
        table = _fact(f, rows, rng, rows // 2)
        tables.append(table)
        _write(folder / f"fact_{f:04d}.csv", table)
    # Extracts are written after their facts: lineage needs the source to be older.
    time.sleep(0.01)
    for e in range(extracts):
        table = tables[e]
        _write(folder / f"extract_{e:04d}.csv", [table[0], *rng.sample(table[1:], rows // 2)])


def _profile(store: Store, settings: Settings, source_key: str, path: str | None) -> float:
    with store.write() as conn:
        job = job_store.create(conn, "PROFILE", source_key, path, None)
    started = time.perf_counter()
    final = run_job(store, settings, str(job["key"]), enforce_roots=False)
    assert final is not None and final["state"] == "SUCCEEDED", final
    return time.perf_counter() - started


def _stored(store: Store) -> tuple[set[Any], set[Any]]:
    """The discovered join conditions and inferred edges, without their keys and times."""
    J, E = join_conditions, lineage_edges
    with store.read() as conn:
        joins = {(r.left_key, r.right_key, r.signature, r.origin, r.cardinality, r.score)
                 for r in conn.execute(select(J))}
        edges = {(r.upstream_key, r.downstream_key, r.lineage_type, r.score)
                 for r in conn.execute(select(E))}
    return joins, edges


def _timed(call: Callable[[], Any]) -> float:
    started = time.perf_counter()
    call()
    return time.perf_counter() - started


def run(folder: Path, files: int, rows: int) -> None:
    lake = folder / "lake"
    lake.mkdir(exist_ok=True)
    if not any(lake.iterdir()):
        build_lake(lake, files, rows)
    # A kept folder keeps its lake (slow to write), never its catalog or the new file.
    (lake / "fact_new.csv").unlink(missing_ok=True)
    for leftover in folder.glob("catalog.db*"):
        leftover.unlink()
    store = Store(f"sqlite:///{folder / 'catalog.db'}")
    store.migrate()
    settings = Settings(data_roots=[lake], admin_password=None)
    with store.write() as conn:
        source = source_store.create_source(
            conn, {"name": "lake", "source_type": "FILE", "uri": str(lake)})
    key = str(source["key"])
    print(f"profiling the lake ({files} files x {COLUMNS} columns) ...", flush=True)
    whole = _profile(store, settings, key, None)
    with store.read() as conn:
        fields = conn.execute(select(data_resources.c.field_count)
                              .where(data_resources.c.data_source_key == key)).scalars().all()
    print(f"  {len(fields)} resources, {sum(f or 0 for f in fields)} profiled fields in "
          f"{whole:.1f} s")

    rng = random.Random(99)
    _write(lake / "fact_new.csv", _fact(9999, rows, rng, rows // 2))
    quiet = settings.model_copy(update={"discovery_after_profile": False,
                                        "relations_after_profile": False})
    _profile(store, quiet, key, "fact_new.csv")
    with store.read() as conn:
        new = dict(conn.execute(select(data_resources.c.key, data_resources.c.path)
                                .where(data_resources.c.path == "fact_new.csv")).one()._mapping)

    load = os.getloadavg()
    # Steady state: the service has run discovery before, so its sketch index is warm.
    tagging = discover(store, settings, [new])
    tags = _timed(lambda: discover(store, settings, [new]))
    relations = _timed(lambda: discover_relations(store, settings, changed={new["key"]}))
    incremental = _stored(store)
    # The first discovery after the service starts reads every sketch once.
    sketch_index.forget(store)
    cold = _timed(lambda: discover_relations(store, settings, changed={new["key"]}))
    sketch_index.forget(store)
    full = _timed(lambda: discover_relations(store, settings))
    rerun = _stored(store)
    after = os.getloadavg()
    total = tags + relations
    print(f"load average {load[0]:.2f} -> {after[0]:.2f}")
    print(f"incremental discovery of the new file: tags {tags:.3f} s "
          f"({tagging.counts['fieldsExamined']} fields examined) + joins and lineage "
          f"{relations:.3f} s = {total:.3f} s")
    print(f"  first run after a service start (sketch index cold): joins and lineage "
          f"{cold:.3f} s, with tags {tags + cold:.3f} s")
    print(f"anchor: full join and lineage rerun (every sketch read, every pair compared; what "
          f"each PROFILE job did before) {full:.3f} s")
    print(f"ratio incremental / full {total / full:.2f} (cold {(tags + cold) / full:.2f})")
    same = incremental == rerun
    print(f"incremental stored the same joins ({len(rerun[0])}) and edges ({len(rerun[1])}) as "
          f"the full rerun: {'yes' if same else 'NO'}")
    count = sum(f or 0 for f in fields)
    for label, seconds in (("steady state", total), ("cold index", tags + cold)):
        verdict = "met" if seconds < TARGET_SECONDS else "NOT met"
        print(f"target: discovery after one new file < {TARGET_SECONDS:.0f} s at {count} "
              f"fields ({label}): {seconds:.3f} s, {verdict}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--files", type=int, default=250)
    parser.add_argument("--rows", type=int, default=2000)
    parser.add_argument("--keep", type=Path, help="build in this folder and keep it")
    args = parser.parse_args(argv)
    return in_folder(args.keep, "incremental-discovery-",
                     lambda folder: run(folder, args.files, args.rows))


if __name__ == "__main__":
    raise SystemExit(main())
