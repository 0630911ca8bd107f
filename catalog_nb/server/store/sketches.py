"""Reads behind relation discovery's sketch index (``discovery/sketch_index.py``).

The index keeps every sketched field of the catalog decoded in memory and asks the store only
what changed: :func:`resource_stamps` is one narrow query over the resources (no JSON column),
and :func:`sketched_fields` loads the fields of the resources whose stamp moved.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from sqlalchemy import Connection, func, select

from catalog_nb.server.store.common import chunks
from catalog_nb.server.store.schema import data_resources, resource_fields

R, F = data_resources, resource_fields

#: The resource columns relation discovery reads.
RESOURCE_COLUMNS = (
    R.c.key, R.c.data_source_key, R.c.path, R.c.name, R.c.resource_type, R.c.table_name,
    R.c.row_count, R.c.time_of_resource_change, R.c.time_of_last_profile, R.c.status,
    R.c.resource_state, R.c.collection_key,
)


def resource_stamps(conn: Connection) -> dict[str, dict[str, Any]]:
    """Every profiled resource by key, with the columns of :data:`RESOURCE_COLUMNS`.

    ``time_of_last_profile`` moves with every profile (``changed_ms`` would move with every
    browse too, and make every job reload the whole source), so a resource whose row is the
    one the index holds has the fields the index holds.
    """
    query = select(*RESOURCE_COLUMNS).where(R.c.time_of_last_profile.is_not(None))
    return {str(row["key"]): dict(row) for row in conn.execute(query).mappings()}


def profiled_count(conn: Connection) -> int:
    """How many resources have been profiled."""
    query = select(func.count()).select_from(R).where(R.c.time_of_last_profile.is_not(None))
    return int(conn.execute(query).scalar_one())


def sketched_fields(conn: Connection, keys: Sequence[str]) -> Iterator[dict[str, Any]]:
    """The fields holding a value sketch of these resources, in resource and field order:
    ``resource_key, name, position, data_type, properties, sketch``."""
    wanted = sorted(set(keys))
    for chunk in chunks(wanted):
        query = (
            select(F.c.resource_key, F.c.name, F.c.position, F.c.data_type, F.c.properties,
                   F.c.sketch)
            .where(F.c.resource_key.in_(chunk), F.c.sketch.is_not(None))
            .order_by(F.c.resource_key, F.c.position)
        )
        result = conn.execute(query)
        names = list(result.keys())
        yield from (dict(zip(names, row, strict=True)) for row in result)
