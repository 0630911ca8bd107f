"""Table overlap: resolving ``schema.table_name`` names to visible SQL tables, and their fields.

A batch of names is resolved in a fixed number of queries whatever its length: the candidate
tables (by case-folded table name, visible to the caller, inside the virtual folder when one is
named), then the fields of the tables found. Schema names are compared in Python over the few
candidates, so no driver has to take thousands of bound parameter pairs.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from sqlalchemy import Connection, func, select

from catalog_nb.contract import ErrorCode
from catalog_nb.server.errors import BadRequest, NotFound
from catalog_nb.server.store.common import fold
from catalog_nb.server.store.folders import specs_of
from catalog_nb.server.store.schema import (
    data_resources,
    data_sources,
    resource_fields,
    virtual_folders,
)
from catalog_nb.server.store.visible import specs_condition, visible_condition
from catalog_nb.server.visibility import Visibility

R, S, F, VF = data_resources, data_sources, resource_fields, virtual_folders

#: A table name as the overlap endpoints take it: (schema, table), both case-folded.
TableName = tuple[str, str]


def split_name(name: str) -> TableName:
    """``schema.table_name`` as (schema, table) case-folded; 400 without exactly one dot.

    >>> split_name("Sales.Orders")
    ('sales', 'orders')
    """
    parts = (name or "").strip().split(".")
    if len(parts) != 2 or not all(p.strip() for p in parts):
        raise BadRequest(
            f"'{name}' is not a table name of the form schema.table_name (exactly one dot).",
            ErrorCode.INVALID_PARAMETER,
        )
    return parts[0].strip().casefold(), parts[1].strip().casefold()


def folder_by_name(conn: Connection, vis: Visibility, name: str) -> dict[str, Any]:
    """The virtual folder with this name (case-insensitive); 404 when unknown or hidden."""
    row = conn.execute(select(VF).where(VF.c.name_fold == fold(name))).mappings().first()
    folder = dict(row) if row is not None else None
    if folder is None or not vis.sees_folder(folder):
        raise NotFound(f"There is no virtual folder named '{name}'.",
                       ErrorCode.VIRTUAL_FOLDER_NOT_FOUND)
    return folder


def find_tables(
    conn: Connection,
    vis: Visibility,
    names: Iterable[TableName],
    folder: Mapping[str, Any] | None = None,
) -> dict[TableName, list[dict[str, Any]]]:
    """The visible tables and views matching each name (inside ``folder`` when given), each
    ``{key, path, source_name, schema, table}``; a name nobody matches maps to ``[]``."""
    wanted = sorted(set(names))
    found: dict[TableName, list[dict[str, Any]]] = {name: [] for name in wanted}
    if not wanted:
        return found
    where = [
        visible_condition(conn, vis),
        R.c.table_name.is_not(None),
        func.lower(R.c.table_name).in_(sorted({table for _, table in wanted})),
    ]
    if folder is not None:
        where.append(specs_condition(conn, specs_of(folder)))
    query = (
        select(R.c.key, R.c.path, R.c.data_schema_name, R.c.table_name,
               S.c.name.label("source_name"))
        .join(S, S.c.key == R.c.data_source_key)
        .where(*where)
        .order_by(S.c.name_fold, R.c.path)
    )
    for row in conn.execute(query).mappings():
        # lower() in SQL narrows; casefold here decides (SQLite lowers ASCII only).
        name = (str(row["data_schema_name"] or "").casefold(), str(row["table_name"]).casefold())
        if name in found:
            found[name].append(dict(row))
    return found


def field_names(conn: Connection, keys: Sequence[str]) -> dict[str, list[str]]:
    """The field names of many resources in one query, in field order."""
    found: dict[str, list[str]] = defaultdict(list)
    if not keys:
        return found
    query = (
        select(F.c.resource_key, F.c.name)
        .where(F.c.resource_key.in_(sorted(set(keys))))
        .order_by(F.c.resource_key, F.c.position)
    )
    for key, name in conn.execute(query):
        found[key].append(name)
    return found
