"""The planner's statistics follow the catalog: tables that grew are analysed again at start and
when a large job ends (``store/maintenance.py``)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from sqlalchemy import Connection, text

from catalog_nb.server.store import Store, maintenance
from tests.benchmarks.catalog_fixture import write_catalog
from tests.conftest import TEST_APPLICATION, Server
from tests.server.source_helpers import create_source, run_job


def analysed_rows(conn: Connection, table: str) -> int | None:
    """The row count the statistics of ``table`` describe, None when it was never analysed."""
    if conn.dialect.name == "postgresql":
        # -1 until ANALYZE (or VACUUM) first ran
        tuples = conn.execute(text("SELECT reltuples FROM pg_class WHERE relname = :table"),
                              {"table": table}).scalar_one()
        return int(tuples) if tuples >= 0 else None
    if conn.execute(text("SELECT 1 FROM sqlite_master WHERE name = 'sqlite_stat1'")).first():
        stat = conn.execute(text("SELECT stat FROM sqlite_stat1 WHERE tbl = :table LIMIT 1"),
                            {"table": table}).scalar_one_or_none()
        if stat is not None:
            return int(str(stat).split()[0])
    return None


def no_autovacuum(store: Store) -> None:
    """On PostgreSQL, keep autovacuum off the tables checked here: only the service analyses
    them during a test."""
    if store.dialect == "postgresql":
        with store.write() as conn:
            for table in maintenance.TABLES:
                conn.execute(text(f"ALTER TABLE {table} SET (autovacuum_enabled = false)"))


def test_tables_that_grew_are_analysed_again(store: Store) -> None:
    no_autovacuum(store)
    write_catalog(store, 300, 2, analyze=False)
    with store.write() as conn:
        stale = maintenance.stale_tables(conn)
        assert {"data_resources", "search_documents"} <= set(stale)
        assert "data_sources" not in stale  # one row: any plan will do
        assert set(maintenance.refresh_statistics(conn)) == set(stale)
    with store.write() as conn:
        assert analysed_rows(conn, "data_resources") == 300
        assert maintenance.refresh_statistics(conn) == []  # nothing moved since
    write_catalog(store, 200, 2, source="more", analyze=False)
    with store.write() as conn:
        assert "data_resources" not in maintenance.stale_tables(conn)  # 500 < 2 x 300
    write_catalog(store, 200, 2, source="even_more", analyze=False)
    assert "data_resources" in maintenance.after_bulk_write(store)  # 700 > 2 x 300
    with store.read() as conn:
        assert analysed_rows(conn, "data_resources") == 700


def test_a_server_analyses_a_grown_store_when_it_starts(
    make_server: Callable[..., Server], store_url: str,
) -> None:
    with Store(store_url, application_name=TEST_APPLICATION) as store:
        store.migrate()
        no_autovacuum(store)
        write_catalog(store, 300, 2, analyze=False)
        with store.read() as conn:
            assert analysed_rows(conn, "data_resources") is None
    server = make_server(db_url=store_url)
    with server.store.read() as conn:
        assert analysed_rows(conn, "data_resources") == 300


def test_a_large_job_refreshes_the_statistics_when_it_ends(
    make_server: Callable[..., Server], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Thread isolation: the job runs in this process, where the thresholds are lowered.
    monkeypatch.setattr(maintenance, "LARGE_JOB", 5)
    monkeypatch.setattr(maintenance, "SMALL", 1)
    folder = tmp_path / "lake"
    folder.mkdir()
    for i in range(6):
        (folder / f"part{i}.csv").write_text("id,name\n1,a\n2,b\n")
    server = make_server(data_roots=[folder], job_isolation="thread")
    no_autovacuum(server.store)
    admin = server.session()
    with server.store.read() as conn:
        before = analysed_rows(conn, "data_resources")
    source = create_source(admin, "stats-lake", "FILE", str(folder))
    run_job(admin, source["key"])
    with server.store.read() as conn:
        count = conn.execute(text("SELECT count(*) FROM data_resources")).scalar_one()
        assert before is None and count >= 6
        assert analysed_rows(conn, "data_resources") == count
