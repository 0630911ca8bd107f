"""Benchmark: latency of /search/new (a keyword and three facet selections) and /search/page.

    python -m tests.benchmarks.search_latency [--resources 100000] [--fields 4] [--repeat 20]
        [--db-url postgresql+psycopg://...]

1. Builds a catalog of ``--resources`` resources with the bulk fixture :func:`write_catalog`:
   synthetic :class:`~catalog_nb.server.profiling.ResourceProfile` objects (the statistics
   profiling computes, four file formats, sizes from bytes to gigabytes) written by
   ``ingest.record_profile``, the function a profiling job calls, which also refreshes the
   search index of each resource in the same transaction (``store.search.refresh``). So the
   store holds exactly what profiling writes, index included.
2. Starts :class:`~catalog_nb.demo.embedded.EmbeddedServer` on that store (SQLite in a
   temporary folder, or ``--db-url``) and logs in over HTTP.
3. Times ``--repeat`` calls of ``POST /search/new`` with the keyword ``area07`` (5% of the
   resources) and three facet selections (fileFormat, sizeRange, fieldDataType), and of
   ``POST /search/page`` on its stored result, and prints p50/p95/p99 of each next to the time
   of the plain SQL computing the same counts (the matches and the three selected facets'
   category counts, each over the keyword and the other two selections) on a direct
   connection to the store.

Not a test: run it by hand, read the figures.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import requests
from sqlalchemy import text

from catalog_nb.contract import API_PREFIX, ResourceType
from catalog_nb.demo.embedded import EmbeddedServer
from catalog_nb.server.profiling import ResourceProfile
from catalog_nb.server.settings import Settings
from catalog_nb.server.store import Store, ingest
from catalog_nb.server.store import sources as source_store
from tests.benchmarks.metadata_paging import _field

ADMIN_PASSWORD = "bench-password-1"
SOURCE = "bench_search"
KEYWORD = "area07"
_FORMATS = ("csv", "tsv", "json", "parquet")
SELECTIONS = [
    {"facetName": "fileFormat", "facetCategories": ["csv", "parquet"]},
    {"facetName": "sizeRange", "facetCategories": ["<1 MB", "1-10 MB"]},
    {"facetName": "fieldDataType", "facetCategories": ["DATE"]},
]


def synthetic_profile(index: int, fields: int) -> ResourceProfile:
    """The profile of the ``index``-th generated file (deterministic)."""
    rows = 100 + index % 5000
    fmt = _FORMATS[index % len(_FORMATS)]
    path = f"area{index % 20:02d}/batch{index // 1000:03d}/file{index:06d}.{fmt}"
    return ResourceProfile(
        path=path, name=path.rsplit("/", 1)[1], resource_type=ResourceType.FILE.value,
        file_format=fmt, separator="," if fmt == "csv" else None, header=fmt == "csv",
        header_row=1 if fmt == "csv" else 0, encoding="utf-8", row_count=rows,
        resource_size=rows * 64 * (1 + (index % 7) ** 5), field_count=fields,
        fields=[_field(index, position + index % 3, rows) for position in range(fields)],
        created_ms=1_700_000_000_000 + index, modified_ms=1_700_000_000_000 + index * 1000,
    )


def write_catalog(store: Store, count: int, fields: int, *, batch: int = 1000) -> str:
    """Bulk fixture: a FILE source of ``count`` profiled (and indexed) resources; its key.

    Every resource goes through ``ingest.record_profile``, as a profiling job writes it (the
    index refresh included), in transactions of ``batch`` resources.
    """
    with store.write() as conn:
        source = source_store.create_source(conn, {
            "name": SOURCE, "description": "generated for the search benchmark",
            "source_type": "FILE", "uri": "/generated/bench_search",
        })
    key = str(source["key"])
    for start in range(0, count, batch):
        with store.write() as conn:
            for index in range(start, min(start + batch, count)):
                ingest.record_profile(conn, key, synthetic_profile(index, fields))
    return key


def _keyword(dialect: str) -> str:
    if dialect == "postgresql":
        return ("r.key IN (SELECT resource_key FROM search_documents "
                "WHERE tsv @@ to_tsquery('english', 'area07'))")
    return ("r.key IN (SELECT d.resource_key FROM search_documents d WHERE d.doc_id IN "
            "(SELECT rowid FROM search_fts WHERE search_fts MATCH '\"area07\"'))")


_PLAIN = {
    "format": "lower(r.file_format) IN ('csv', 'parquet')",
    "size": "r.resource_size < 10485760",
    "date": ("EXISTS (SELECT 1 FROM search_facet_values h WHERE h.resource_key = r.key "
             "AND h.facet = 'fieldDataType' AND h.category = 'DATE')"),
}


def plain_sql(dialect: str) -> list[str]:
    """Hand-written SQL for the same counts: the matches, then each selected facet's counts over
    the keyword and the other two selections."""
    keyword = _keyword(dialect)

    def where(*skip: str) -> str:
        return " AND ".join([keyword, *(c for k, c in _PLAIN.items() if k not in skip)])

    size_case = ("CASE WHEN r.resource_size IS NULL THEN 'unknown' "
                 "WHEN r.resource_size < 1048576 THEN '<1 MB' "
                 "WHEN r.resource_size < 10485760 THEN '1-10 MB' "
                 "WHEN r.resource_size < 104857600 THEN '10-100 MB' "
                 "WHEN r.resource_size < 1073741824 THEN '100 MB-1 GB' ELSE '>1 GB' END")
    return [
        f"SELECT count(*) FROM data_resources r WHERE {where()}",
        f"SELECT lower(r.file_format), count(*) FROM data_resources r WHERE {where('format')} "
        "GROUP BY lower(r.file_format)",
        f"SELECT c, count(*) FROM (SELECT {size_case} AS c FROM data_resources r "
        f"WHERE {where('size')}) x GROUP BY c",
        "SELECT v.category, count(*) FROM data_resources r JOIN search_facet_values v "
        f"ON v.resource_key = r.key WHERE v.facet = 'fieldDataType' AND {where('date')} "
        "GROUP BY v.category",
    ]


def percentiles(samples: list[float]) -> str:
    ordered = sorted(samples)

    def at(q: float) -> float:
        return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))] * 1000

    return f"p50 {at(0.50):8.1f} ms  p95 {at(0.95):8.1f} ms  p99 {at(0.99):8.1f} ms"


def timed(repeat: int, run: Callable[[], Any]) -> list[float]:
    run()  # warm up
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        run()
        samples.append(time.perf_counter() - started)
    return samples


def widget_clicks(url: str, repeat: int) -> list[float]:
    """Seconds per facet click in the facet-search widget, as a notebook user sees them: the
    click runs the new search and redraws counts, table and paging before it returns."""
    import catalog_nb
    from catalog_nb.notebook import FacetSearch

    with catalog_nb.connect(url, "admin", ADMIN_PASSWORD) as cat:
        panel = FacetSearch(cat, KEYWORD)
        selector = panel.facet_selectors["fileFormat"]
        values = [o[1] if isinstance(o, tuple) else o for o in selector.options]
        if not values:
            raise RuntimeError("the fileFormat facet has no categories for the keyword")
        choices: list[tuple[Any, ...]] = [(), tuple(values[:1])]  # click on, click off
        clicks = [0]

        def click() -> None:
            clicks[0] += 1
            selector.value = choices[clicks[0] % 2]
            if panel.error:
                raise RuntimeError(panel.error)

        return timed(repeat, click)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--resources", type=int, default=100_000)
    parser.add_argument("--fields", type=int, default=4, help="fields per resource")
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--db-url", default=None, help="store URL (default: SQLite in a tmp dir)")
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory(prefix="catalog-bench-") as tmp:
        data_dir = Path(tmp) / "service"
        url = Settings(data_dir=data_dir, db_url=args.db_url).store_url
        store = Store(url)
        store.migrate()
        started = time.perf_counter()
        write_catalog(store, args.resources, args.fields)
        built = time.perf_counter() - started
        print(f"catalog: {args.resources:,} resources x {args.fields} fields written (and "
              f"indexed) through ingest.record_profile in {built:.1f}s ({store.dialect})")
        server = EmbeddedServer(data_dir, admin_password=ADMIN_PASSWORD, db_url=args.db_url)
        with server:
            http = requests.Session()
            base = server.url + API_PREFIX
            http.post(f"{base}/login", json={"username": "admin", "password": ADMIN_PASSWORD},
                      timeout=60).raise_for_status()
            body = {"searchPhrase": KEYWORD, "facetSelections": SELECTIONS,
                    "pagingCriteria": {"start": 0, "size": 20}}
            first = http.post(f"{base}/search/new", json=body, timeout=300)
            first.raise_for_status()
            result = first.json()
            print(f"/search/new matched {result['matchedEntityCount']:,} resources")

            def new() -> None:
                http.post(f"{base}/search/new", json=body, timeout=300).raise_for_status()

            page_at = [0]

            def page() -> None:
                page_at[0] = (page_at[0] + 20) % max(20, result["matchedEntityCount"])
                http.post(f"{base}/search/page", timeout=300, json={
                    "pagingCriteria": {"start": page_at[0], "size": 20}}).raise_for_status()

            queries = plain_sql(store.dialect)

            def plain() -> None:
                with store.read() as conn:
                    for query in queries:
                        conn.execute(text(query)).all()

            def first_plain() -> None:
                with store.read() as conn:
                    conn.execute(text(queries[0])).all()

            plain_times = timed(args.repeat, plain)
            print(f"{'/search/new (keyword + 3 facets)':<36}{percentiles(timed(args.repeat, new))}")
            print(f"{'  plain SQL, same counts':<36}{percentiles(plain_times)}")
            new()  # the session's latest search is the one paged
            print(f"{'/search/page (20 per page)':<36}{percentiles(timed(args.repeat, page))}")
            print(f"{'  plain SQL, match count':<36}"
                  f"{percentiles(timed(args.repeat, first_plain))}")
            print(f"(median of plain SQL, all counts: {statistics.median(plain_times) * 1000:.1f}"
                  " ms)")
            print(f"{'widget facet click (fileFormat)':<36}"
                  f"{percentiles(widget_clicks(server.url, args.repeat))}")
            print(f"{'  plain SQL, same counts':<36}{percentiles(plain_times)}")
        store.dispose()


if __name__ == "__main__":
    main()
