"""Schema version 7: a store whose field data types and sensitivities are rows of
``search_facet_values`` (as version 6 kept them) gets them as resource columns, read through the
covering index ``ix_resources_facets``; its tags stay where they were. Schema version 9: a
store without facet cells gets them counted, with the name index and the stored results' state.
Schema version 10: a store without the documents' facet rows gets them written; 11: their tails;
13: document ids never given twice."""

from __future__ import annotations

import json

from sqlalchemy import delete, insert, inspect, select, text

from catalog_nb.server.search.facets import FIELD_TYPE_BITS
from catalog_nb.server.store import Store, facet_cells
from catalog_nb.server.store import search as search_store
from catalog_nb.server.store.migrations import LATEST
from catalog_nb.server.store.schema import (
    data_resources,
    schema_version,
    search_cell_members,
    search_document_facets,
    search_documents,
    search_facet_values,
)
from tests.benchmarks.catalog_fixture import tag_catalog, write_catalog
from tests.conftest import TEST_APPLICATION

R, FV = data_resources, search_facet_values


def _write_tagged(store: Store) -> None:
    """A migrated store with 60 resources of the bulk fixture, tagged."""
    store.migrate()
    tag_catalog(store, write_catalog(store, 60, 4, analyze=False), tags=3)


def _as_version_6(store: Store) -> None:
    """Put the dense facets back into rows and drop what version 7 added."""
    with store.write() as conn:
        rows = conn.execute(select(R.c.key, R.c.facet_field_types, R.c.facet_sensitivity)).all()
        conn.execute(insert(FV), [
            {"resource_key": key, "facet": "fieldDataType", "category": name}
            for key, held, _ in rows for name, bit in FIELD_TYPE_BITS.items() if held & bit])
        conn.execute(insert(FV), [
            {"resource_key": key, "facet": "sensitivity", "category": sensitivity}
            for key, _, sensitivity in rows])
        conn.exec_driver_sql("DROP INDEX ix_resources_facets")
        conn.exec_driver_sql("DROP INDEX IF EXISTS ix_resources_name")
        for column in ("facet_field_types", "facet_sensitivity"):
            conn.exec_driver_sql(f"ALTER TABLE data_resources DROP COLUMN {column}")
        conn.execute(delete(schema_version).where(schema_version.c.version > 6))


def test_a_version_6_store_gets_its_dense_facets_as_columns(store_url: str) -> None:
    with Store(store_url, application_name=TEST_APPLICATION) as store:
        _write_tagged(store)
        with store.read() as conn:
            before = conn.execute(select(R.c.key, R.c.facet_field_types, R.c.facet_sensitivity)
                                  .order_by(R.c.key)).all()
            tags = conn.execute(select(FV).order_by(*FV.c)).all()
        assert {s for _, _, s in before} == {"CONFIDENTIAL", "NONE"}
        _as_version_6(store)

        assert store.migrate() == LATEST
        with store.read() as conn:
            after = conn.execute(select(R.c.key, R.c.facet_field_types, R.c.facet_sensitivity)
                                 .order_by(R.c.key)).all()
            left = conn.execute(select(FV).order_by(*FV.c)).all()
            indexes = {i["name"] for i in inspect(conn).get_indexes("data_resources")}
            versions = conn.execute(select(schema_version.c.version)).scalars().all()
            dense = conn.execute(text(
                "SELECT count(*) FROM search_facet_values "
                "WHERE facet IN ('fieldDataType', 'sensitivity')")).scalar_one()
    assert after == before
    assert left == tags and dense == 0
    assert "ix_resources_facets" in indexes
    assert sorted(versions) == list(range(1, LATEST + 1))


def _as_version_8(store: Store) -> None:
    """Drop what version 9 added."""
    with store.write() as conn:
        conn.exec_driver_sql("DROP TABLE search_cells")
        conn.exec_driver_sql("DROP TABLE search_cell_members")
        conn.exec_driver_sql("DROP INDEX IF EXISTS ix_resources_name")
        conn.exec_driver_sql("DROP INDEX IF EXISTS ix_resources_name_c")
        conn.exec_driver_sql("DROP INDEX ix_stored_searches_state")  # version 14's
        for column in ("state", "matched"):
            conn.exec_driver_sql(f"ALTER TABLE stored_searches DROP COLUMN {column}")
        conn.execute(delete(schema_version).where(schema_version.c.version > 8))


def test_a_version_8_store_gets_its_facet_cells(store_url: str) -> None:
    with Store(store_url, application_name=TEST_APPLICATION) as store:
        _write_tagged(store)
        with store.read() as conn:
            before = sorted(facet_cells.folded(conn), key=repr)
        assert before
        _as_version_8(store)

        assert store.migrate() == LATEST
        with store.read() as conn:
            after = sorted(facet_cells.folded(conn), key=repr)
            indexes = {i["name"] for i in inspect(conn).get_indexes("data_resources")}
            columns = {c["name"] for c in inspect(conn).get_columns("stored_searches")}
            members = conn.execute(text("SELECT count(*) FROM search_cell_members")).scalar_one()
    assert after == before and members == 60
    assert indexes & {"ix_resources_name", "ix_resources_name_c"}
    assert {"state", "matched"} <= columns


def test_a_version_9_store_gets_its_document_facet_rows(store_url: str) -> None:
    with Store(store_url, application_name=TEST_APPLICATION) as store:
        _write_tagged(store)
        with store.read() as conn:
            before = sorted(conn.execute(select(search_document_facets)).all(), key=repr)
            documents = conn.execute(text("SELECT count(*) FROM search_documents")).scalar_one()
        assert len(before) == documents == 60
        with store.write() as conn:
            conn.exec_driver_sql("DROP TABLE search_document_facets")
            conn.execute(delete(schema_version).where(schema_version.c.version > 9))

        assert store.migrate() == LATEST
        with store.read() as conn:
            after = sorted(conn.execute(select(search_document_facets)).all(), key=repr)
            versions = conn.execute(select(schema_version.c.version)).scalars().all()
    assert after == before
    assert sorted(versions) == list(range(1, LATEST + 1))


def test_a_version_10_store_gets_its_document_facet_tails(store_url: str) -> None:
    """Version 11: each facet row holds its member's coordinates (the day aside) and derived
    categories as the one text a keyword search reads, instead of a column each."""
    with Store(store_url, application_name=TEST_APPLICATION) as store:
        _write_tagged(store)
        with store.read() as conn:
            before = sorted(conn.execute(select(search_document_facets)).all(), key=repr)
            members = {row.resource_key: row for row in conn.execute(
                select(search_cell_members))}
        with store.write() as conn:
            conn.exec_driver_sql("DROP TABLE search_document_facets")
            conn.exec_driver_sql(  # version 10's columns
                "CREATE TABLE search_document_facets (doc_id INTEGER PRIMARY KEY, "
                "resource_key VARCHAR(64) NOT NULL, name TEXT NOT NULL, "
                "data_source_key VARCHAR(64), resource_type VARCHAR(64), file_format TEXT, "
                "owner TEXT, sensitivity TEXT, size_range TEXT, field_types INTEGER, "
                "change_day INTEGER, derived TEXT NOT NULL)")
            conn.execute(delete(schema_version).where(schema_version.c.version > 10))

        assert store.migrate() == LATEST
        with store.read() as conn:
            after = sorted(conn.execute(select(search_document_facets)).all(), key=repr)
    assert after == before and len(after) == 60
    for row in after:
        member = members[row.resource_key]._mapping
        assert json.loads(row.tail) == [*(member[c] for c in facet_cells.COLUMNS[:-1]),
                                        member["derived"]]
        assert row.change_day == member["change_day"]


def test_a_version_12_store_never_gives_a_document_id_twice(store_url: str) -> None:
    """Version 13: on SQLite, the documents are moved into a table with AUTOINCREMENT, ids
    kept (the FTS rows are keyed by them) and facet rows written again; a document written
    anew then never takes the id of the one it replaces, even the highest (processes keep
    documents' rows by id). PostgreSQL's ids come from a sequence: nothing to do there."""
    with Store(store_url, application_name=TEST_APPLICATION) as store:
        _write_tagged(store)
        with store.read() as conn:
            documents = sorted(conn.execute(select(search_documents)).all(), key=repr)
            rows = sorted(conn.execute(select(search_document_facets)).all(), key=repr)
        sqlite = store.dialect == "sqlite"
        with store.write() as conn:
            if sqlite:  # version 12's table: a plain rowid, the highest given again
                conn.exec_driver_sql("CREATE TEMP TABLE kept AS SELECT * FROM search_documents")
                conn.exec_driver_sql("DROP TABLE search_document_facets")
                conn.exec_driver_sql("DROP TABLE search_documents")
                conn.exec_driver_sql(
                    "CREATE TABLE search_documents (doc_id INTEGER NOT NULL PRIMARY KEY, "
                    "resource_key VARCHAR(64) NOT NULL UNIQUE "
                    "REFERENCES data_resources (key) ON DELETE CASCADE, name TEXT NOT NULL, "
                    "path TEXT NOT NULL, tags TEXT NOT NULL, fields TEXT NOT NULL, "
                    "descriptions TEXT NOT NULL, custom TEXT NOT NULL)")
                conn.exec_driver_sql("INSERT INTO search_documents SELECT * FROM kept")
                conn.exec_driver_sql("DROP TABLE kept")
                search_document_facets.create(conn)
                facet_cells.rebuild_documents(conn)
            conn.execute(delete(schema_version).where(schema_version.c.version > 12))

        assert store.migrate() == LATEST
        with store.read() as conn:
            assert sorted(conn.execute(select(search_documents)).all(), key=repr) == documents
            assert sorted(conn.execute(select(search_document_facets)).all(),
                          key=repr) == rows
            versions = conn.execute(select(schema_version.c.version)).scalars().all()
            last, key = conn.execute(
                select(search_documents.c.doc_id, search_documents.c.resource_key)
                .order_by(search_documents.c.doc_id.desc()).limit(1)).one()
        assert sorted(versions) == list(range(1, LATEST + 1))
        with store.write() as conn:
            search_store.refresh(conn, [key])
        with store.read() as conn:
            now = conn.execute(select(search_documents.c.doc_id).where(
                search_documents.c.resource_key == key)).scalar_one()
    assert now > last
