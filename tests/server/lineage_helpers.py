"""Helpers of the lineage tests: a store holding the profiled demo lake, SQL sources with views
made the way browsing records them, and the stored edges read back by resource path.

The discovery steps run over the whole catalog, so the tests that compare with the lake's
ground truth use a store of their own (``store_url``) rather than the shared server, where other
tests' copies of the lake would be legitimate sources too.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select

from catalog_nb.contract import ResourceType
from catalog_nb.demo.lake import load_truth
from catalog_nb.demo.truth import LakeTruth
from catalog_nb.server.profiling import DataType, FieldProfile, ResourceProfile
from catalog_nb.server.store import Store, ingest
from catalog_nb.server.store.schema import data_resources, lineage_edges, lineage_status
from tests.server.lake import add_source, demo_files, demo_lake, profile_folder, profile_sql


@dataclass
class Lake:
    """A store holding the profiled demo lake: its sources and the truth."""

    store: Store
    files_key: str
    sql_key: str
    truth: LakeTruth


def lake_store(store: Store) -> Lake:
    """``store`` (migrated) with the demo lake's files and database profiled."""
    files_key = profile_folder(store, "lake_files", demo_files())
    sql_key = profile_sql(store, "lake_sql")
    return Lake(store, files_key, sql_key, load_truth(demo_lake()))


def paths(store: Store) -> dict[str, str]:
    """Resource key -> path, for every resource of the store."""
    with store.read() as conn:
        rows = conn.execute(select(data_resources.c.key, data_resources.c.path))
        return {str(k): str(p) for k, p in rows}


def edges_by_path(store: Store, lineage_type: str) -> dict[tuple[str, str], dict[str, Any]]:
    """The stored edges of one type, by (upstream path, downstream path)."""
    named = paths(store)
    with store.read() as conn:
        rows = conn.execute(
            select(lineage_edges).where(lineage_edges.c.lineage_type == lineage_type)
        ).mappings().all()
    return {(named[r["upstream_key"]], named[r["downstream_key"]]): dict(r) for r in rows}


def statuses_by_path(store: Store) -> dict[str, tuple[str, str | None]]:
    """The stored lineage status of every resource that has one, by path."""
    named = paths(store)
    with store.read() as conn:
        rows = conn.execute(select(lineage_status)).mappings().all()
    return {named[r["resource_key"]]: (r["state"], r["reason"]) for r in rows}


def field_map(edge: Mapping[str, Any]) -> dict[str, list[str]]:
    """An edge's field lineage as downstream field -> upstream fields."""
    return {item["downstreamField"]: item["upstreamFields"] for item in edge["field_lineage"]}


def sql_source(
    store: Store,
    name: str,
    uri: str,
    tables: Mapping[str, Sequence[str]],
    views: Mapping[str, tuple[str | None, Sequence[str]]],
) -> str:
    """A SQL source whose tables (``schema.table`` -> column names) and views (``schema.view``
    -> (definition, column names)) are recorded as browsing and profiling a database records
    them; its key.

    For SQL that no database in the test environment would accept (another dialect, a broken
    definition), which browsing a real database of that dialect would record all the same.
    """
    key = add_source(store, name, uri, source_type="SQL")
    with store.write() as conn:
        for full, columns in tables.items():
            _record(conn, key, full, ResourceType.TABLE.value, columns, None)
        for full, (definition, columns) in views.items():
            _record(conn, key, full, ResourceType.VIEW.value, columns, definition)
    return key


def _record(conn: Any, source_key: str, full: str, resource_type: str,
            columns: Sequence[str], definition: str | None) -> None:
    schema, table = full.split(".", 1)
    extra: dict[str, Any] = {"databaseName": "db", "dataSchemaName": schema, "tableName": table,
                             "tableType": "VIEW" if definition is not None else "TABLE",
                             "primaryKey": [], "foreignKeys": []}
    if resource_type == ResourceType.VIEW.value:
        extra["viewDefinition"] = definition
    profile = ResourceProfile(
        path=full, name=table, resource_type=resource_type, row_count=10,
        field_count=len(columns), extra=extra,
        fields=[FieldProfile(c, DataType.STRING, True, {"density": 1.0}) for c in columns],
    )
    ingest.record_browsed(conn, source_key, profile)
    ingest.record_profile(conn, source_key, profile)
