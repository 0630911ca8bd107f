"""The plans of the statements a search really issues start from its matches.

A catalog of :data:`RESOURCES` resources (the bulk fixture, with tags on every resource) is
served by a real server and analysed; each test calls a search endpoint over HTTP while a
SQLAlchemy event records the statements the store sends, then asks the database how it runs
them (``EXPLAIN QUERY PLAN`` on SQLite, ``EXPLAIN (FORMAT JSON)`` on PostgreSQL) and checks the
plan: a keyword search is driven by the keyword index, reads resources by key from
``ix_resources_facets`` (never the wide rows, never a scan), and reads the facet rows of its
candidates by primary key, never the facet table whole or from its category index; a facet-only
search reads the covering index, not the table; a keyword search sorted by score finds its
matches in the keyword index alone and reads the document facet rows it has not kept by key. A
plan that regresses (a dropped index, missing statistics, a rewrite that lets the planner walk the
facet table) fails here.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import pytest
from sqlalchemy import event, select

from catalog_nb.server.search.query import parse_basic
from catalog_nb.server.store import document_rows, maintenance
from catalog_nb.server.store import facets as facet_store
from catalog_nb.server.store import search as search_store
from catalog_nb.server.store.schema import store_generations
from catalog_nb.server.visibility import Visibility
from tests.benchmarks.catalog_fixture import tag_catalog, write_catalog
from tests.conftest import PG_URL, Http, Server
from tests.server.helpers import PASSWORD, create_role, create_user

#: Enough resources for the planners to choose: SQLite follows its statistics from a few
#: thousand rows; PostgreSQL reads a table of 3,000 small rows whole rather than use an index.
RESOURCES = 10_000 if PG_URL else 3000
SELECTIONS = [
    {"facetName": "fileFormat", "facetCategories": ["csv", "parquet"]},
    {"facetName": "sizeRange", "facetCategories": ["<1 MB", "1-10 MB"]},
    {"facetName": "tag", "facetCategories": ["bench.t3"]},
]


@dataclass
class Catalog:
    server: Server
    admin: Http
    analyst: Http


@pytest.fixture(scope="module")
def catalog(make_server: Callable[..., Server]) -> Catalog:
    server = make_server()
    source = write_catalog(server.store, RESOURCES, 4, analyze=False)
    write_catalog(server.store, 200, 4, source="other_files", analyze=False)
    tag_catalog(server.store, source)
    maintenance.after_bulk_write(server.store, force=True)
    admin = server.session()
    role = create_role(admin, "plans-analyst", dataSourceKeys=[source])
    create_user(admin, "plans-analyst-user", roles=[role["name"]])
    return Catalog(server, admin, server.session("plans-analyst-user", PASSWORD))


@contextmanager
def issued(server: Server) -> Iterator[list[tuple[str, Any]]]:
    """The statements (and parameters) the server's store sends while the block runs."""
    found: list[tuple[str, Any]] = []
    lock = threading.Lock()

    def record(_conn: Any, _cursor: Any, statement: str, parameters: Any, _context: Any,
               _many: bool) -> None:
        with lock:
            found.append((statement, parameters))

    engine = server.store.engine
    event.listen(engine, "before_cursor_execute", record)
    try:
        yield found
    finally:
        event.remove(engine, "before_cursor_execute", record)


@dataclass
class Plan:
    """A plan as (table, index or None, how: scan | search) steps, and its raw text."""

    steps: list[tuple[str, str | None, str]]
    text: str

    def on(self, table: str) -> list[tuple[str | None, str]]:
        """The steps on ``table`` (or an alias of it, ``table_1``)."""
        return [(index, how) for t, index, how in self.steps
                if t == table or re.fullmatch(rf"{table}_\d+", t)]


def _sqlite_plan(detail: list[str]) -> Plan:
    steps = []
    for line in detail:
        words = line.split()
        if words[0] not in ("SCAN", "SEARCH") or len(words) < 2:
            continue
        table = words[1]
        index = None
        if "INDEX" in words:
            index = words[words.index("INDEX") + 1]
        elif "INTEGER PRIMARY KEY" in line:
            index = "rowid"
        steps.append((table, index, words[0].lower()))
    return Plan(steps, "\n".join(detail))


def _postgres_plan(tree: Any) -> Plan:
    steps = []

    def walk(node: dict[str, Any]) -> None:
        relation = node.get("Relation Name")
        if relation:
            how = "scan" if node["Node Type"] == "Seq Scan" else "search"
            steps.append((relation, node.get("Index Name"), how))
        elif node.get("Index Name"):  # a Bitmap Index Scan names its index only
            steps.append((f"<index {node['Index Name']}>", node["Index Name"], "search"))
        for child in node.get("Plans", []):
            walk(child)

    walk(tree[0]["Plan"])
    return Plan(steps, json.dumps(tree, indent=1))


def explain(server: Server, statement: str, parameters: Any, *, setting: str | None = None,
            ) -> Plan:
    """How the database runs a statement the store issued (after ``SET setting`` on
    PostgreSQL)."""
    with server.store.engine.connect() as conn:
        if conn.dialect.name == "postgresql":
            if setting is not None:
                conn.exec_driver_sql(f"SET {setting}")
            raw = conn.exec_driver_sql(f"EXPLAIN (FORMAT JSON) {statement}", parameters)
            return _postgres_plan(raw.scalar_one())
        rows = conn.exec_driver_sql(f"EXPLAIN QUERY PLAN {statement}", parameters).all()
        return _sqlite_plan([str(row[-1]) for row in rows])


def search_plan(catalog: Catalog, http: Http, path: str, body: dict[str, Any]) -> Plan:
    """The plan of the one statement a search runs (matches and every facet's counts)."""
    with issued(catalog.server) as statements:
        response = http.post(path, json=body)
        assert response.status_code == 201, response.text
    passes = [(s, p) for s, p in statements if "candidates" in s]
    assert len(passes) == 1, [s[:80] for s, _ in statements]
    return explain(catalog.server, *passes[0])


def is_postgres(catalog: Catalog) -> bool:
    return catalog.server.store.dialect == "postgresql"


def assert_starts_from_the_keyword(catalog: Catalog, plan: Plan, *,
                                   restricted: bool = False) -> None:
    """Keyword index first; resources by key from an index (the covering one on SQLite); the
    candidates' facet rows by primary key: nothing read whole, no facet table walked.

    ``restricted``: the caller sees most of the catalog through a list of data sources. For
    the 500 matches of 10,000 resources PostgreSQL then prices a hash join over the whole
    resource table below 500 index probes (and in memory the two are close): its plan may read
    the resources whole, its keyword and facet reads stay the same.
    """
    assert_reads_facet_rows_by_key(catalog, plan)
    if is_postgres(catalog):
        assert ("<index ix_search_documents_tsv>", "ix_search_documents_tsv", "search") \
            in plan.steps, plan.text
        assert plan.on("data_resources"), plan.text
        if not restricted:
            assert ("data_resources", None, "scan") not in plan.steps, plan.text
    else:
        assert plan.steps[0][0] == "search_fts", plan.text
        assert plan.on("data_resources") == [("ix_resources_facets", "search")], plan.text


def assert_reads_facet_rows_by_key(catalog: Catalog, plan: Plan) -> None:
    """The facet rows are read by the resource's key (the primary key): never scanned; on
    SQLite never from the category index either. (PostgreSQL may find a selected tag's holders
    from it: that reads the selection's rows, not the table.)"""
    rows = plan.on("search_facet_values")
    primary = "search_facet_values_pkey" if is_postgres(catalog) else (
        "sqlite_autoindex_search_facet_values_1")
    assert (primary, "search") in rows, plan.text
    assert all(how == "search" for _, how in rows), plan.text
    if not is_postgres(catalog):
        assert {index for index, _ in rows} == {primary}, plan.text


#: A sort other than by score: the search counts and orders in the one-pass statement.
BY_NAME = [{"propertyName": "name", "ascending": True}]


def test_a_keyword_search_with_facets_starts_from_the_keyword(catalog: Catalog) -> None:
    plan = search_plan(catalog, catalog.admin, "/search/new",
                       {"searchPhrase": "area07", "facetSelections": SELECTIONS,
                        "sortBySpecs": BY_NAME})
    assert_starts_from_the_keyword(catalog, plan)


def test_a_keyword_search_without_facets_starts_from_the_keyword(catalog: Catalog) -> None:
    # 50 matches of 10,200: a selective phrase. For one matching a fortieth of so small a
    # catalog, PostgreSQL rightly reads the resource table whole (its plan at 100,000 resources
    # stays the keyword's probes), so the test would not tell a regression from that choice.
    plan = search_plan(catalog, catalog.admin, "/search/new",
                       {"searchPhrase": "batch002 area07", "sortBySpecs": BY_NAME})
    assert_starts_from_the_keyword(catalog, plan)


def test_an_analysts_keyword_search_starts_from_the_keyword(catalog: Catalog) -> None:
    plan = search_plan(catalog, catalog.analyst, "/search/new",
                       {"searchPhrase": "area07", "facetSelections": SELECTIONS[:2],
                        "sortBySpecs": BY_NAME})
    assert_starts_from_the_keyword(catalog, plan, restricted=True)


def keyword_reads(catalog: Catalog, http: Http, body: dict[str, Any]) -> tuple[Plan, list[Plan]]:
    """The plans of the one statement a keyword search by score finds its matches with, and of
    the reads of their document facet rows (those this process has not kept yet)."""
    with issued(catalog.server) as statements:
        response = http.post("/search/new", json=body)
        assert response.status_code == 201, response.text
    assert not [s for s, _ in statements if "candidates" in s]  # no one-pass statement
    found = [(s, p) for s, p in statements if "search_fts" in s or "search_documents.tsv" in s]
    assert len(found) == 1, [s[:80] for s, _ in statements]
    rows = [(s, p) for s, p in statements if "search_document_facets" in s]
    return explain(catalog.server, *found[0]), [explain(catalog.server, *r) for r in rows]


@pytest.mark.parametrize(("who", "body"), [
    ("admin", {"searchPhrase": "area07", "facetSelections": SELECTIONS}),
    ("admin", {"searchPhrase": "batch002 csv"}),
    ("analyst", {"searchPhrase": "area07", "facetSelections": SELECTIONS[:2]}),
])
def test_a_keyword_search_by_score_reads_the_keyword_index_then_rows_by_key(
    catalog: Catalog, who: str, body: dict[str, Any],
) -> None:
    """Sorted by score (the default), a keyword search finds its matches in the keyword index
    alone, then reads the document facet rows it has not kept by the document's integer key:
    never the resource rows, never the facet values, nothing whole; the same search again reads
    no facet row."""
    http = getattr(catalog, who)
    document_rows.forget(catalog.server.store.engine)
    found, rows = keyword_reads(catalog, http, body)
    if is_postgres(catalog):
        assert ("<index ix_search_documents_tsv>", "ix_search_documents_tsv", "search") \
            in found.steps, found.text
        assert {table for table, _, _ in found.steps} == {
            "<index ix_search_documents_tsv>", "search_documents"}, found.text
        assert all(how == "search" for _, _, how in found.steps), found.text
    else:
        assert [(table, how) for table, _, how in found.steps] == [("search_fts", "scan")], \
            found.text
        assert "VIRTUAL TABLE INDEX 0:M" in found.text, found.text  # the MATCH, not every row
    assert len(rows) == 1, [plan.text for plan in rows]
    for plan in rows:
        assert not plan.on("data_resources") and not plan.on("search_facet_values"), plan.text
        assert plan.on("search_document_facets"), plan.text
        assert all(how == "search" for _, how in plan.on("search_document_facets")), plan.text
    assert keyword_reads(catalog, http, body)[1] == []


def test_a_facet_only_search_reads_its_first_page_in_name_order(catalog: Catalog) -> None:
    """Counts from the cells; the first page walks the name index in order and stops (no sort
    of every match); every match is then read in the same order (on SQLite from the same
    covering index, never the table, never sorted)."""
    with issued(catalog.server) as statements:
        response = catalog.admin.post("/search/runFacet", json={"facetSelections": SELECTIONS})
        assert response.status_code == 201, response.text
        # A page waits for the ordering of every match, which runs after the answer.
        paged = catalog.admin.post("/search/page", json={
            "key": response.json()["key"], "pagingCriteria": {"start": 0, "size": 20}})
        assert paged.status_code == 201, paged.text
    assert paged.json()["matchedKeys"] == response.json()["matchedKeys"]
    reads = [(s, p) for s, p in statements
             if "ORDER BY" in s and "FROM data_resources" in s and "candidates" not in s]
    first = [(s, p) for s, p in reads if "LIMIT" in s]
    rest = [(s, p) for s, p in reads if "LIMIT" not in s]
    assert len(first) == len(rest) == 1, [s[:80] for s, _ in statements]
    plan = explain(catalog.server, *first[0],
                   setting=f"enable_sort = {search_store.NAME_ORDER_SORT}")
    ordered = explain(catalog.server, *rest[0])
    if is_postgres(catalog):
        assert ("data_resources", "ix_resources_name_c", "search") in plan.steps, plan.text
        assert '"Sort"' not in plan.text, plan.text
        assert ordered.on("data_resources"), ordered.text
    else:
        for read in (plan, ordered):
            assert read.on("data_resources") == [("ix_resources_name", "scan")], read.text
            assert "TEMP B-TREE" not in read.text, read.text
    assert not any("candidates" in s for s, _ in statements)


def test_a_search_defers_its_sessions_orderings_without_reading_results(
    catalog: Catalog,
) -> None:
    """Saving a search marks the session's results still being ordered: found by the index of
    session and state. On SQLite the state comes after a result's matches in the row, dozens of
    overflow pages each: from the session index alone, every kept result was read through
    (0.6 ms a search with 20 results of 5,000 matches kept)."""
    if is_postgres(catalog):
        pytest.skip("PostgreSQL keeps the matches out of the row (TOAST)")
    body = {"searchPhrase": "area07", "facetSelections": SELECTIONS}
    with issued(catalog.server) as statements:
        for _ in range(3):
            response = catalog.admin.post("/search/new", json=body)
            assert response.status_code == 201, response.text
    deferring = [(s, p) for s, p in statements
                 if s.startswith("UPDATE stored_searches") and "state" in s.split("WHERE")[1]]
    assert len(deferring) == 3, [s[:80] for s, _ in statements]
    plan = explain(catalog.server, *deferring[-1])
    assert plan.on("stored_searches") == [("ix_stored_searches_state", "search")], plan.text


def test_the_facet_catalogue_counts_the_cells(catalog: Catalog) -> None:
    with issued(catalog.server) as statements:
        response = catalog.admin.get("/search/facets")
        assert response.status_code == 200, response.text
    assert not [s for s, _ in statements
                if "FROM data_resources" in s or "search_facet_values" in s], statements
    listed = {f["facetName"]: f["facetCategories"] for f in response.json()["DATA_RESOURCE"]}
    assert listed["tag"][:2] and set(listed["fieldDataType"]) == {
        "LONG", "STRING", "DOUBLE", "DATE", "BOOLEAN"}


def test_an_analysts_facet_catalogue_reads_the_cells_of_their_sources(catalog: Catalog) -> None:
    response = catalog.analyst.get("/search/facets")
    assert response.status_code == 200, response.text
    listed = {f["facetName"]: f["facetCategories"] for f in response.json()["DATA_RESOURCE"]}
    assert listed["dataSource"] == ["bench_files"]


def test_a_page_reads_its_resources_by_key(catalog: Catalog) -> None:
    first = catalog.admin.post("/search/new", json={"searchPhrase": "area07"})
    assert first.status_code == 201, first.text
    with issued(catalog.server) as statements:
        response = catalog.admin.post("/search/page", json={
            "key": first.json()["key"], "pagingCriteria": {"start": 20, "size": 20}})
        assert response.status_code == 201, response.text
    reads = [(s, p) for s, p in statements if "FROM data_resources" in s]
    assert reads
    for statement, parameters in reads:
        plan = explain(catalog.server, statement, parameters)
        assert ("data_resources", None, "scan") not in plan.steps, plan.text



def test_a_search_statement_counts_as_a_read(catalog: Catalog) -> None:
    """The one statement of a search starts with WITH: the store must still take it for the
    read it is (a write would bump the catalog's generation and empty every read cache)."""
    store = catalog.server.store
    generation = select(store_generations.c.generation).where(
        store_generations.c.name == "catalog")
    with store.read() as conn:
        before = conn.execute(generation).scalar_one()
        vis = Visibility(everything=True)
        plan = search_store.Plan(parse_basic("area07", partial=False), {}, [])
        found = search_store.search(conn, vis, facet_store.facet_context(conn, vis), plan)
    with store.read() as conn:
        after = conn.execute(generation).scalar_one()
    assert len(found.matches) == (RESOURCES + 200) // 20 and after == before


def test_the_ordering_after_the_answer_takes_no_parallel_workers(catalog: Catalog) -> None:
    """PostgreSQL orders a facet-only search's matches after the answer without parallel
    workers (they took the cores of the requests that followed), for that transaction only."""
    if not is_postgres(catalog):
        pytest.skip("parallel workers are PostgreSQL's")
    store, vis = catalog.server.store, Visibility(everything=True)
    selections = {"fileFormat": ["csv", "parquet"]}
    with store.read() as conn:
        default = conn.exec_driver_sql("SHOW max_parallel_workers_per_gather").scalar_one()
        ctx = facet_store.facet_context(conn, vis)
        plan = search_store.Plan(parse_basic("", partial=False), selections, [])
        ordered = search_store.order_all(conn, vis, ctx, plan)
        assert conn.exec_driver_sql("SHOW max_parallel_workers_per_gather").scalar_one() == "0"
    with store.read() as conn:
        assert conn.exec_driver_sql("SHOW max_parallel_workers_per_gather").scalar_one() == \
            default != "0"
    assert len(ordered) > 1000
