"""Stored values of the configuration properties (``config_values``), one row per changed one.

Only values changed through ``PUT /config/{name}`` are stored; a property without a row keeps
the value the service started with. What the names mean and how values are checked lives in
:mod:`catalog_nb.server.runtime_config`.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import Connection, delete, select
from sqlalchemy.dialects import postgresql, sqlite

from catalog_nb.server.store.common import now_ms
from catalog_nb.server.store.schema import config_values

C = config_values


def stored(conn: Connection) -> dict[str, dict[str, Any]]:
    """Every stored value: name -> ``{name, value, changed_by, changed_ms}``."""
    return {str(r["name"]): dict(r) for r in conn.execute(select(C)).mappings()}


def put(conn: Connection, name: str, value: Any, changed_by: str) -> dict[str, Any]:
    """Store ``value`` (already checked) for ``name``, replacing any earlier one; the row.

    An upsert, so two processes changing one property at once cannot collide on the key.
    """
    row = {"name": name, "value": value, "changed_by": changed_by, "changed_ms": now_ms()}
    dialect = postgresql if conn.dialect.name == "postgresql" else sqlite
    statement = dialect.insert(C).values(**row)
    conn.execute(statement.on_conflict_do_update(
        index_elements=[C.c.name],
        set_={"value": statement.excluded.value, "changed_by": statement.excluded.changed_by,
              "changed_ms": statement.excluded.changed_ms},
    ))
    return row


def remove(conn: Connection, name: str) -> bool:
    """Forget the stored value of ``name``; whether there was one."""
    return bool(conn.execute(delete(C).where(C.c.name == name)).rowcount)
