"""Data sources, and the resource, virtual folder and data set look-ups that permissions need."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sqlalchemy import Connection, select

from catalog_nb.contract import ErrorCode
from catalog_nb.server.errors import NotFound
from catalog_nb.server.store.common import fold
from catalog_nb.server.store.schema import data_resources, data_sources, datasets, virtual_folders


def get_source_by_name(conn: Connection, name: str) -> dict[str, Any]:
    """The data source with this name (case-insensitive); 404 when there is none."""
    row = conn.execute(
        select(data_sources).where(data_sources.c.name_fold == fold(name))
    ).mappings().first()
    if row is None:
        raise NotFound(f"There is no data source named '{name}'.", ErrorCode.DATA_SOURCE_NOT_FOUND)
    return dict(row)


def get_resource_by_path(conn: Connection, source_key: str, path: str) -> dict[str, Any]:
    """The data resource at ``path`` in a source; 404 when there is none."""
    row = conn.execute(
        select(data_resources).where(
            data_resources.c.data_source_key == source_key, data_resources.c.path == path
        )
    ).mappings().first()
    if row is None:
        raise NotFound(f"There is no data resource at path '{path}'.", ErrorCode.RESOURCE_NOT_FOUND)
    return dict(row)


def virtual_folders_by_key(conn: Connection, keys: Iterable[str]) -> list[dict[str, Any]]:
    """The virtual folders with these keys (unknown keys are skipped)."""
    wanted = list(keys)
    if not wanted:
        return []
    query = select(virtual_folders).where(virtual_folders.c.key.in_(wanted))
    return [dict(r) for r in conn.execute(query).mappings()]


def datasets_by_key(conn: Connection, keys: Iterable[str]) -> list[dict[str, Any]]:
    """The data sets with these keys (unknown keys are skipped)."""
    wanted = list(keys)
    if not wanted:
        return []
    query = select(datasets).where(datasets.c.key.in_(wanted))
    return [dict(r) for r in conn.execute(query).mappings()]
