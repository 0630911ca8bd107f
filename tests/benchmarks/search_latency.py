"""Benchmark: search latency at 10,000 and 100,000 resources, on SQLite and PostgreSQL, next to
the plain SQL for the same counts.

    python -m tests.benchmarks.search_latency [--sizes 10000,100000] [--fields 4] [--tags 8]
        [--repeat 40] [--postgresql | --db-url postgresql+psycopg://user@host:port/postgres]
        [--keep DIR]

1. For each backend and size, builds a catalog with the bulk fixture
   (``tests/benchmarks/catalog_fixture.py``: profiles written by ``ingest.record_profiles``,
   what profiling writes, index included), tags every resource with one or two of ``--tags``
   tags (``tag_catalog``; the index follows), brings the planner's statistics up to date as
   the service does after a large job, and prints how long that took. SQLite
   lives in a temporary folder (``--keep DIR`` keeps the SQLite catalogs there and reuses them);
   PostgreSQL in one database per size on a throw-away cluster that ``--postgresql`` starts
   with ``scripts/pg-cluster`` (stopped at the end), or on the server ``--db-url`` names (an
   admin URL: the databases are made and dropped there).
2. Starts one ``catalog-nb serve`` process per catalog (one worker, so the client's time is not
   the server's) and logs in over HTTP.
3. Times ``--repeat`` calls of each search against every catalog of a backend in turn (so the
   sizes share the machine's load alike), after a warm-up:

   * ``/search/new`` with the keyword ``area07`` (5 % of the catalog: 500 or 5,000 resources)
     and three facet selections (fileFormat, sizeRange, fieldDataType);
   * ``/search/new`` with the keyword ``batch007`` (1,000 resources at either size) and the same
     selections: a search whose matches do not grow with the catalog;
   * ``/search/runFacet``, the same selections without a keyword (a fifth of the catalog);
   * ``/search/page``, 20 at a time through the stored ``area07`` result;

   and, on a direct connection to the store, the plain SQL computing the same counts (the
   matches and each selected facet's categories over the keyword and the other selections; for
   a page, the page's rows by key).
4. Prints p50 and p99 of each, the ratio to the plain SQL, the server process's CPU time per
   request (its background work included: on a loaded machine the latencies say little, this
   says what a request costs), the growth of p50 from the smallest to the largest size, the
   load average, and whether the targets are met: at the largest size p50 <= 30 ms and
   p99 <= 100 ms, and growth under 2x.

Not a test: run it by hand, read the figures (the machine is shared: mind the load average).
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import requests
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from catalog_nb.contract import API_PREFIX
from catalog_nb.demo.embedded import free_port
from catalog_nb.server.settings import Settings
from catalog_nb.server.store import Store
from catalog_nb.server.store.maintenance import after_bulk_write
from tests.benchmarks.catalog_fixture import tag_catalog, write_catalog
from tests.benchmarks.postgres import pg_cluster

ADMIN_PASSWORD = "bench-password-1"
ROOT = Path(__file__).resolve().parents[2]
SELECTIONS = [
    {"facetName": "fileFormat", "facetCategories": ["csv", "parquet"]},
    {"facetName": "sizeRange", "facetCategories": ["<1 MB", "1-10 MB"]},
    {"facetName": "fieldDataType", "facetCategories": ["DATE"]},
]
#: Targets at the largest size (milliseconds) and for the growth from the smallest.
P50_TARGET, P99_TARGET, GROWTH_TARGET = 30.0, 100.0, 2.0


@dataclass(frozen=True)
class Search:
    """One timed request: its label, endpoint, keyword (None: facets only)."""

    label: str
    path: str
    keyword: str | None

    def body(self) -> dict[str, Any]:
        return {"searchPhrase": self.keyword, "facetSelections": SELECTIONS,
                "pagingCriteria": {"start": 0, "size": 20}}


SEARCHES = (
    Search("keyword area07 (5%) + 3 facets", "/search/new", "area07"),
    Search("keyword batch007 (1,000) + 3 facets", "/search/new", "batch007"),
    Search("facet-only, 3 facets", "/search/runFacet", None),
)
PAGE = "/search/page (20 of area07's)"


# ------------------------------------------------------------------------------ plain SQL

_SIZE_CASE = ("CASE WHEN r.resource_size IS NULL THEN 'unknown' "
              "WHEN r.resource_size < 1048576 THEN '<1 MB' "
              "WHEN r.resource_size < 10485760 THEN '1-10 MB' "
              "WHEN r.resource_size < 104857600 THEN '10-100 MB' "
              "WHEN r.resource_size < 1073741824 THEN '100 MB-1 GB' ELSE '>1 GB' END")
_TYPES = ("STRING", "LONG", "DOUBLE", "BOOLEAN", "DATE", "TIMESTAMP", "BINARY", "ARRAY", "STRUCT")
_CONDITIONS = {
    "format": "lower(r.file_format) IN ('csv', 'parquet')",
    "size": "r.resource_size < 10485760",
    "date": "(r.facet_field_types & 16) <> 0",
}


def _keyword(dialect: str, word: str) -> str:
    if dialect == "postgresql":
        return ("r.key IN (SELECT resource_key FROM search_documents "
                f"WHERE tsv @@ to_tsquery('english', '{word}'))")
    return ("r.key IN (SELECT d.resource_key FROM search_documents d WHERE d.doc_id IN "
            f"(SELECT rowid FROM search_fts WHERE search_fts MATCH '\"{word}\"'))")


def plain_sql(dialect: str, word: str | None) -> list[str]:
    """Hand-written SQL for a search's counts: the matches, then each selected facet's
    categories over the keyword and the other two selections (the field types from the bit
    mask the index keeps on each resource)."""
    keyword = [_keyword(dialect, word)] if word else []

    def where(*skip: str) -> str:
        return " AND ".join([*keyword, *(c for k, c in _CONDITIONS.items() if k not in skip)])

    types = " UNION ALL ".join(
        f"SELECT '{name}' AS t, {1 << bit} AS b" for bit, name in enumerate(_TYPES))
    return [
        f"SELECT count(*) FROM data_resources r WHERE {where()}",
        f"SELECT lower(r.file_format), count(*) FROM data_resources r WHERE {where('format')} "
        "GROUP BY lower(r.file_format)",
        f"SELECT c, count(*) FROM (SELECT {_SIZE_CASE} AS c FROM data_resources r "
        f"WHERE {where('size')}) x GROUP BY c",
        f"SELECT t.t, count(*) FROM data_resources r JOIN ({types}) t "
        f"ON (r.facet_field_types & t.b) <> 0 WHERE {where('date')} GROUP BY t.t",
    ]


# ------------------------------------------------------------------------------ catalogs


@dataclass
class Catalog:
    """A built catalog and, once started, its server."""

    size: int
    data_dir: Path
    db_url: str | None
    built_seconds: float | None = None
    tagged_seconds: float | None = None
    url: str = ""
    process: subprocess.Popen[bytes] | None = None
    http: requests.Session = field(default_factory=requests.Session)
    store: Store | None = None

    @property
    def api(self) -> str:
        return self.url + API_PREFIX

    def post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        response = self.http.post(self.api + path, json=body, timeout=300)
        if response.status_code not in (200, 201):
            raise RuntimeError(f"POST {path}: {response.status_code} {response.text[:300]}")
        found: dict[str, Any] = response.json()
        return found


def build(size: int, fields: int, tags: int, data_dir: Path, db_url: str | None) -> Catalog:
    """The catalog of ``size`` resources in ``data_dir`` (SQLite) or at ``db_url``, each
    resource tagged with one or two of ``tags`` tags; an existing SQLite catalog of a
    ``--keep`` folder is reused."""
    catalog = Catalog(size, data_dir, db_url)
    marker = data_dir / f"built-{fields}-fields-{tags}-tags"
    if db_url is None and marker.exists():
        return catalog
    if db_url is None and data_dir.exists():
        shutil.rmtree(data_dir)
    data_dir.mkdir(parents=True, exist_ok=True)
    with Store(Settings(data_dir=data_dir, db_url=db_url).store_url) as store:
        store.migrate()
        started = time.perf_counter()
        source = write_catalog(store, size, fields, analyze=not tags)
        catalog.built_seconds = time.perf_counter() - started
        if tags:
            started = time.perf_counter()
            tag_catalog(store, source, tags)
            after_bulk_write(store, force=True)
            catalog.tagged_seconds = time.perf_counter() - started
    marker.touch()
    return catalog


@contextmanager
def serving(catalog: Catalog) -> Iterator[Catalog]:
    """``catalog-nb serve`` on the catalog, logged in; stopped when the block ends."""
    port = free_port()
    command = [sys.executable, "-m", "catalog_nb.cli", "serve", "--port", str(port),
               "--log-level", "warning", "--data-dir", str(catalog.data_dir)]
    if catalog.db_url:
        command += ["--db-url", catalog.db_url]
    env = {**os.environ, "CATALOG_ADMIN_PASSWORD": ADMIN_PASSWORD}
    catalog.process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL)
    catalog.url = f"http://127.0.0.1:{port}"
    catalog.store = Store(Settings(data_dir=catalog.data_dir, db_url=catalog.db_url).store_url,
                          application_name="catalog-nb benchmark")
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                catalog.post("/login", {"username": "admin", "password": ADMIN_PASSWORD})
                break
            except requests.ConnectionError:
                if catalog.process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("the server did not start") from None
                time.sleep(0.2)
        yield catalog
    finally:
        catalog.process.send_signal(signal.SIGINT)  # a clean shutdown, as Ctrl-C
        try:
            catalog.process.wait(30)
        except subprocess.TimeoutExpired:
            catalog.process.kill()
            catalog.process.wait(30)
        catalog.store.dispose()


# ------------------------------------------------------------------------------ timing


def percentile(samples: list[float], q: float) -> float:
    """The ``q`` quantile of ``samples`` in milliseconds (nearest rank)."""
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))] * 1000


def interleaved(repeat: int, runs: dict[int, Callable[[], Any]],
                processes: dict[int, int] | None = None,
                ) -> tuple[dict[int, list[float]], dict[int, float | None]]:
    """Seconds of each run, the runs taking turns (after two warm-up calls each); and, for the
    ``processes`` given (size -> server pid), the server's CPU seconds per run on average."""
    for run in runs.values():
        run()
        run()
    samples: dict[int, list[float]] = {size: [] for size in runs}
    cpu_before = {size: cpu_seconds(pid) for size, pid in (processes or {}).items()}
    for _ in range(repeat):
        for size, run in runs.items():
            started = time.perf_counter()
            run()
            samples[size].append(time.perf_counter() - started)
    cpu: dict[int, float | None] = {}
    for size, pid in (processes or {}).items():
        after, before = cpu_seconds(pid), cpu_before[size]
        cpu[size] = None if after is None or before is None else (after - before) / repeat
    return samples, cpu


def cpu_seconds(pid: int) -> float | None:
    """The CPU time (user + system) a process has used so far, every thread counted; None where
    ``/proc`` does not tell. On a shared machine the latencies follow the load, this hardly."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _plain(catalog: Catalog, queries: list[str]) -> Callable[[], None]:
    assert catalog.store is not None
    store = catalog.store

    def run() -> None:
        with store.read() as conn:
            for query in queries:
                conn.execute(text(query)).all()

    return run


def _search(catalog: Catalog, search: Search) -> Callable[[], None]:
    return lambda: catalog.post(search.path, search.body()) and None


def _pager(catalog: Catalog) -> tuple[Callable[[], None], list[str]]:
    """Pages of the session's stored area07 result, and the plain SQL reading a page's rows."""
    result = catalog.post("/search/new", SEARCHES[0].body())
    key, matched = result["key"], max(20, result["matchedEntityCount"])
    at = [0]

    def page() -> None:
        at[0] = (at[0] + 20) % matched
        catalog.post("/search/page", {"key": key, "pagingCriteria": {"start": at[0],
                                                                       "size": 20}})

    keys = ", ".join(f"'{k}'" for k in result["matchedKeys"])
    return page, [f"SELECT * FROM data_resources r JOIN data_sources s "
                  f"ON s.key = r.data_source_key WHERE r.key IN ({keys})"]


@dataclass
class Row:
    """One line of figures: a search at one size (``cpu``: the server's CPU seconds per
    request, its background work included, when known)."""

    label: str
    size: int
    samples: list[float]
    plain: list[float]
    cpu: float | None = None

    @property
    def p50(self) -> float:
        return percentile(self.samples, 0.5)

    @property
    def p99(self) -> float:
        return percentile(self.samples, 0.99)


def measure(catalogs: list[Catalog], repeat: int, dialect: str) -> list[Row]:
    """Every search against every catalog, and its plain SQL, interleaved by size."""
    rows: list[Row] = []
    by_size = {c.size: c for c in catalogs}
    pids = {s: c.process.pid for s, c in by_size.items() if c.process is not None}
    for search in SEARCHES:
        served, cpu = interleaved(repeat, {s: _search(c, search) for s, c in by_size.items()},
                                  pids)
        plain, _ = interleaved(repeat, {s: _plain(c, plain_sql(dialect, search.keyword))
                                        for s, c in by_size.items()})
        rows += [Row(search.label, s, served[s], plain[s], cpu.get(s)) for s in by_size]
    pagers = {s: _pager(c) for s, c in by_size.items()}
    served, cpu = interleaved(repeat, {s: p[0] for s, p in pagers.items()}, pids)
    plain, _ = interleaved(repeat, {s: _plain(by_size[s], p[1]) for s, p in pagers.items()})
    rows += [Row(PAGE, s, served[s], plain[s], cpu.get(s)) for s in by_size]
    return rows


def report(backend: str, rows: list[Row], load: tuple[float, float]) -> list[str]:
    """Print the figures and verdicts of one backend; returns the verdict lines."""
    sizes = sorted({r.size for r in rows})
    print(f"\n== {backend}: load average {load[0]:.2f} before, {load[1]:.2f} after "
          f"({os.cpu_count()} cores)")
    print(f"{'request':<38}{'resources':>10}{'p50 ms':>9}{'p99 ms':>9}{'plain SQL p50':>15}"
          f"{'ratio':>7}{'server CPU ms':>15}")
    for row in rows:
        plain = percentile(row.plain, 0.5)
        cpu = "-" if row.cpu is None else f"{row.cpu * 1000:.1f}"
        print(f"{row.label:<38}{row.size:>10,}{row.p50:>9.1f}{row.p99:>9.1f}{plain:>15.1f}"
              f"{row.p50 / plain if plain else float('inf'):>7.1f}{cpu:>15}")
    verdicts = []
    largest, smallest = sizes[-1], sizes[0]
    for label in dict.fromkeys(r.label for r in rows):
        big = next(r for r in rows if r.label == label and r.size == largest)
        small = next(r for r in rows if r.label == label and r.size == smallest)
        growth = big.p50 / small.p50
        checks = [
            (f"p50 {big.p50:.1f} ms <= {P50_TARGET:.0f}", big.p50 <= P50_TARGET),
            (f"p99 {big.p99:.1f} ms <= {P99_TARGET:.0f}", big.p99 <= P99_TARGET),
        ]
        if smallest != largest:
            checks.append((f"growth {growth:.2f}x < {GROWTH_TARGET:.0f}x",
                           growth < GROWTH_TARGET))
        verdicts.append(f"{backend:<11}{label:<38}" + "; ".join(
            f"{what}: {'met' if ok else 'NOT met'}" for what, ok in checks))
    return verdicts


# ------------------------------------------------------------------------------ backends


@contextmanager
def postgres_server(args: argparse.Namespace) -> Iterator[str | None]:
    """The admin URL of the PostgreSQL server to use: ``--db-url``, or a throw-away cluster
    (``--postgresql``), or None."""
    if args.db_url:
        yield args.db_url
        return
    if not args.postgresql:
        yield None
        return
    with pg_cluster(Path(tempfile.mkdtemp(prefix="catalog-bench-pg-"))) as url:
        yield url


@contextmanager
def databases(admin_url: str, sizes: list[int]) -> Iterator[dict[int, str]]:
    """One fresh database per size on the server, dropped afterwards."""
    engine = create_engine(admin_url, isolation_level="AUTOCOMMIT")
    names = {size: f"catalog_bench_search_{size}_{os.getpid()}" for size in sizes}
    try:
        with engine.connect() as conn:
            for name in names.values():
                conn.execute(text(f'CREATE DATABASE "{name}"'))
        yield {size: make_url(admin_url).set(database=name).render_as_string(
            hide_password=False) for size, name in names.items()}
    finally:
        with engine.connect() as conn:
            for name in names.values():
                conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        engine.dispose()


def run_backend(backend: str, sizes: list[int], args: argparse.Namespace, folder: Path,
                urls: dict[int, str] | None) -> list[str]:
    """Build, serve, measure and report one backend; returns its verdict lines."""
    catalogs = []
    for size in sizes:
        db_url = urls[size] if urls else None
        catalog = build(size, args.fields, args.tags, folder / f"{backend}-{size}", db_url)
        catalogs.append(catalog)
        built = (f"written in {catalog.built_seconds:.1f} s (bulk fixture, load average "
                 f"{os.getloadavg()[0]:.2f})" if catalog.built_seconds else "reused")
        tagged = (f"; {args.tags} tags on every resource in {catalog.tagged_seconds:.1f} s"
                  if catalog.tagged_seconds else "")
        print(f"{backend}: {size:,} resources x {args.fields} fields {built}{tagged}",
              flush=True)
    with ExitStack() as stack:
        for catalog in catalogs:
            stack.enter_context(serving(catalog))
        before = os.getloadavg()[0]
        dialect = "postgresql" if urls else "sqlite"
        rows = measure(catalogs, args.repeat, dialect)
        after = os.getloadavg()[0]
    return report(backend, rows, (before, after))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="10000,100000", help="catalog sizes, comma-separated")
    parser.add_argument("--fields", type=int, default=4, help="fields per resource")
    parser.add_argument("--repeat", type=int, default=40)
    parser.add_argument("--tags", type=int, default=8,
                        help="tags in the catalog, one or two on every resource (0: none)")
    parser.add_argument("--postgresql", action="store_true",
                        help="also on a throw-away PostgreSQL cluster (scripts/pg-cluster)")
    parser.add_argument("--db-url", default=None,
                        help="also on this PostgreSQL server (an admin URL)")
    parser.add_argument("--keep", type=Path, help="keep (and reuse) the SQLite catalogs here")
    args = parser.parse_args(argv)
    sizes = sorted(int(s) for s in args.sizes.split(","))
    print(f"load average {os.getloadavg()[0]:.2f} at the start ({os.cpu_count()} cores)")
    verdicts: list[str] = []
    temporary = args.keep is None
    folder = args.keep or Path(tempfile.mkdtemp(prefix="catalog-bench-search-"))
    try:
        verdicts += run_backend("SQLite", sizes, args, folder, None)
        with postgres_server(args) as admin_url:
            if admin_url:
                with databases(admin_url, sizes) as urls:
                    verdicts += run_backend("PostgreSQL", sizes, args, folder, urls)
    finally:
        if temporary:
            shutil.rmtree(folder, ignore_errors=True)
    print(f"\nTargets: p50 <= {P50_TARGET:.0f} ms and p99 <= {P99_TARGET:.0f} ms at "
          f"{sizes[-1]:,} resources; growth from {sizes[0]:,} to {sizes[-1]:,} under "
          f"{GROWTH_TARGET:.0f}x")
    for line in verdicts:
        print(line)
    print(f"load average {os.getloadavg()[0]:.2f} at the end")


if __name__ == "__main__":
    main()
