"""Benchmark: page the metadata of N data resources into a DataFrame through the client.

    python -m tests.benchmarks.metadata_paging [--resources 10000] [--fields 8]
        [--page-sizes 100,500,1000] [--repeat 3] [--db-url postgresql+psycopg://...]

1. Builds a catalog of ``--resources`` profiled resources with the bulk fixture
   :func:`write_catalog`: synthetic :class:`~catalog_nb.server.profiling.ResourceProfile`
   objects (``--fields`` fields each, with the statistics profiling computes) written by
   ``catalog_nb.server.store.ingest.record_profile``, the very function a profiling job calls,
   so the store holds exactly what profiling writes (no files are read: the point is paging).
2. Starts :class:`~catalog_nb.demo.embedded.EmbeddedServer` on that store (SQLite in a
   temporary folder, or ``--db-url``) and logs in with the client.
3. For each page size, times ``cat.resources(page_size=...)`` (every resource, core view, into a
   typed DataFrame), best of ``--repeat``, and prints resources/s. It also times the raw JSON
   read (``as_frame=False``) and the long field frame (``cat.fields(source=...)``) at the
   largest page size, to show where the time goes.

Not a test: run it by hand, read the figures.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from catalog_nb.client import Catalog, connect
from catalog_nb.contract import ResourceType
from catalog_nb.demo.embedded import EmbeddedServer
from catalog_nb.server.profiling import DataType, FieldProfile, ResourceProfile
from catalog_nb.server.settings import Settings
from catalog_nb.server.store import Store, ingest
from catalog_nb.server.store import sources as source_store

ADMIN_PASSWORD = "bench-password-1"
SOURCE = "bench_files"
_TYPES = [DataType.LONG, DataType.STRING, DataType.DOUBLE, DataType.DATE, DataType.BOOLEAN]


def _field(index: int, position: int, rows: int) -> FieldProfile:
    """A field with the properties profiling writes for its type."""
    data_type = _TYPES[position % len(_TYPES)]
    nulls = (index + position) % 7
    props: dict[str, Any] = {
        "density": (rows - nulls) / rows,
        "valueCount": rows - nulls,
        "nullCount": nulls,
        "distinctCount": max(1, rows // (position + 1)),
        "distinctCountApproximate": False,
        "sampled": False,
        "sampleSize": rows,
    }
    if data_type in (DataType.LONG, DataType.DOUBLE):
        props.update(min=0, max=rows * (position + 1), mean=rows / 2)
    elif data_type == DataType.STRING:
        props.update(min="AA-0001", max="ZZ-9999", minLength=7, maxLength=7)
    elif data_type == DataType.DATE:
        props.update(min="2020-01-01", max="2024-12-31")
    if data_type != DataType.BOOLEAN:
        props["mostFrequent"] = [{"value": v, "count": rows // 10} for v in range(3)]
        props["patterns"] = [{"pattern": "AA-9999", "count": rows}]
    return FieldProfile(f"col_{position}", data_type, nulls > 0, props)


def synthetic_profile(index: int, fields: int) -> ResourceProfile:
    """The profile of the ``index``-th generated CSV file (deterministic)."""
    rows = 100 + index % 5000
    path = f"area{index % 20:02d}/batch{index // 1000:03d}/file{index:06d}.csv"
    return ResourceProfile(
        path=path,
        name=path.rsplit("/", 1)[1],
        resource_type=ResourceType.FILE.value,
        file_format="csv",
        separator=",",
        header=True,
        header_row=1,
        encoding="utf-8",
        row_count=rows,
        resource_size=rows * 64,
        field_count=fields,
        fields=[_field(index, position, rows) for position in range(fields)],
        created_ms=1_700_000_000_000 + index,
        modified_ms=1_700_000_000_000 + index * 1000,
    )


def write_catalog(store: Store, count: int, fields: int, *, batch: int = 1000) -> str:
    """Bulk fixture: a FILE source of ``count`` profiled resources; returns the source key.

    Every resource goes through ``ingest.record_profile``, as a profiling job writes it, in
    transactions of ``batch`` resources.
    """
    with store.write() as conn:
        source = source_store.create_source(
            conn,
            {
                "name": SOURCE,
                "description": "generated for the metadata paging benchmark",
                "source_type": "FILE",
                "uri": "/generated/bench_files",
            },
        )
    key = str(source["key"])
    for start in range(0, count, batch):
        with store.write() as conn:
            for index in range(start, min(start + batch, count)):
                ingest.record_profile(conn, key, synthetic_profile(index, fields))
    return key


def best_of(repeat: int, run: Callable[[], int]) -> tuple[float, int]:
    """The shortest of ``repeat`` timings of ``run`` (which returns how many rows it read)."""
    best, rows = float("inf"), 0
    for _ in range(repeat):
        started = time.perf_counter()
        rows = run()
        best = min(best, time.perf_counter() - started)
    return best, rows


def measure(cat: Catalog, page_sizes: list[int], repeat: int) -> None:
    """Print resources/s of ``cat.resources()`` per page size, then the breakdown."""
    print(f"{'read':<34}{'page':>6}{'rows':>9}{'seconds':>10}{'resources/s':>13}")

    def show(what: str, page: int, seconds: float, rows: int, resources: int) -> None:
        print(f"{what:<34}{page:>6}{rows:>9}{seconds:>10.2f}{resources / seconds:>13,.0f}")

    def frame_of(page: int) -> Callable[[], int]:
        return lambda: len(cat.resources(page_size=page))

    for page in page_sizes:
        seconds, rows = best_of(repeat, frame_of(page))
        show("resources() -> DataFrame", page, seconds, rows, rows)
    page = max(page_sizes)
    seconds, rows = best_of(repeat, lambda: len(cat.resources(page_size=page, as_frame=False)))
    show("resources(as_frame=False) JSON", page, seconds, rows, rows)
    count = rows
    seconds, rows = best_of(repeat, lambda: len(cat.fields(source=SOURCE, page_size=page)))
    show("fields(source=...) long frame", page, seconds, rows, count)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--resources", type=int, default=10_000)
    parser.add_argument("--fields", type=int, default=8, help="fields per resource")
    parser.add_argument("--page-sizes", default="100,500,1000")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--db-url", default=None, help="store URL (default: SQLite in a tmp dir)")
    args = parser.parse_args(argv)
    page_sizes = [int(size) for size in args.page_sizes.split(",")]

    with tempfile.TemporaryDirectory(prefix="catalog-bench-") as tmp:
        data_dir = Path(tmp) / "service"
        url = Settings(data_dir=data_dir, db_url=args.db_url).store_url
        store = Store(url)
        store.migrate()
        started = time.perf_counter()
        write_catalog(store, args.resources, args.fields)
        store.dispose()
        built = time.perf_counter() - started
        print(
            f"catalog: {args.resources:,} resources x {args.fields} fields written through "
            f"ingest.record_profile in {built:.1f}s ({store.dialect})"
        )
        server = EmbeddedServer(data_dir, admin_password=ADMIN_PASSWORD, db_url=args.db_url)
        with server:
            cat = connect(server.url, "admin", ADMIN_PASSWORD, progress=False)
            try:
                measure(cat, page_sizes, args.repeat)
            finally:
                cat.close()


if __name__ == "__main__":
    main()
