"""Schema upgrades: a store left at an older version is brought to the latest, rows kept."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import delete, insert, inspect, select

from catalog_nb.server.store import Store
from catalog_nb.server.store.migrations import LATEST
from catalog_nb.server.store.schema import data_sources, jobs, schema_version
from tests.conftest import TEST_APPLICATION


def test_a_version_3_store_gets_byte_progress_columns_and_keeps_its_jobs(store_url: str) -> None:
    with Store(store_url, application_name=TEST_APPLICATION) as store:
        store.migrate()
        with store.write() as conn:  # the store as version 3 left it: no work_* columns (nor
            # version 15's engine and worker)
            for column in ("work_unit", "work_total", "work_done", "engine", "worker"):
                conn.exec_driver_sql(f"ALTER TABLE jobs DROP COLUMN {column}")
            conn.execute(delete(schema_version).where(schema_version.c.version > 3))
            conn.execute(insert(data_sources).values(
                key="src-1", name="old", name_fold="old", source_type="FILE", uri="/tmp",
                include_patterns=[], exclude_patterns=[], created_ms=1, changed_ms=1))
            conn.exec_driver_sql(
                "INSERT INTO jobs (key, job_type, data_source_key, state, progress, done, "
                "counts, errors, created_ms, changed_ms) VALUES ('job-1', 'PROFILE', 'src-1', "
                "'SUCCEEDED', 1.0, 3, '{}', '[]', 1, 1)")
        assert store.migrate() == LATEST
        with store.read() as conn:
            names = {c["name"] for c in inspect(conn).get_columns("jobs")}
            row = conn.execute(select(jobs).where(jobs.c.key == "job-1")).mappings().one()
            versions = conn.execute(select(schema_version.c.version)).scalars().all()
        assert {"work_unit", "work_total", "work_done"} <= names
        assert (row["done"], row["work_unit"], row["work_total"]) == (3, None, None)
        assert (row["engine"], row["worker"]) == ("local", None)
        assert sorted(versions)[-1] == LATEST


def test_a_version_4_store_gets_the_field_staging_table(store_url: str) -> None:
    with Store(store_url, application_name=TEST_APPLICATION) as store:
        store.migrate()
        with store.write() as conn:  # the store as version 4 left it: no staging table
            conn.exec_driver_sql("DROP TABLE staged_fields")
            conn.execute(delete(schema_version).where(schema_version.c.version > 4))
        assert store.migrate() == LATEST
        with store.read() as conn:
            columns = {c["name"] for c in inspect(conn).get_columns("staged_fields")}
            indexes = {i["name"] for i in inspect(conn).get_indexes("staged_fields")}
            versions = conn.execute(select(schema_version.c.version)).scalars().all()
        assert {"staging_key", "position", "job_key", "name", "properties", "sketch"} <= columns
        assert "ix_staged_fields_name" in indexes
        assert sorted(versions) == list(range(1, LATEST + 1))


def _results_storage(store: Store) -> str:
    with store.read() as conn:
        return str(conn.exec_driver_sql(
            "SELECT attstorage FROM pg_attribute WHERE attrelid = 'stored_searches'::regclass "
            "AND attname = 'ordered'").scalar_one())


def test_stored_search_results_are_kept_uncompressed_on_postgresql(store_url: str) -> None:
    """Version 12, and a new store: PostgreSQL stores a search's matches as written (pglz took
    three times as long as the write)."""
    if not store_url.startswith("postgresql"):
        pytest.skip("a PostgreSQL column storage setting")
    with Store(store_url, application_name=TEST_APPLICATION) as store:
        store.migrate()
        assert _results_storage(store) == "e"  # a new store: EXTERNAL
        with store.write() as conn:
            conn.exec_driver_sql(
                "ALTER TABLE stored_searches ALTER COLUMN ordered SET STORAGE EXTENDED")
            conn.execute(delete(schema_version).where(schema_version.c.version > 11))
        assert _results_storage(store) == "x"
        assert store.migrate() == LATEST
        assert _results_storage(store) == "e"


def test_a_version_13_store_finds_stored_results_by_state(store_url: str) -> None:
    """Version 14: an index of the stored results by session and state (a search defers the
    session's results still being ordered without reading any result)."""
    with Store(store_url, application_name=TEST_APPLICATION) as store:
        store.migrate()
        with store.write() as conn:
            conn.exec_driver_sql("DROP INDEX ix_stored_searches_state")
            conn.execute(delete(schema_version).where(schema_version.c.version > 13))
        with store.read() as conn:
            assert "ix_stored_searches_state" not in _indexes(conn)
        assert store.migrate() == LATEST
        with store.read() as conn:
            assert "ix_stored_searches_state" in _indexes(conn)


def _indexes(conn: Any) -> set[str]:
    return {str(i["name"]) for i in inspect(conn).get_indexes("stored_searches")}
