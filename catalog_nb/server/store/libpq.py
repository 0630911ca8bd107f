"""Rows read straight through libpq (psycopg's ``pq`` layer), converted as psycopg would.

The two reads the event loop makes without SQLAlchemy (``Store.held_first``'s single row, and
``sessions.SessionReads``'s sessions) take only integers and text: anything else is left to
the ordinary way (``None`` here).
"""

from __future__ import annotations

from typing import Any

#: PostgreSQL type oids read here: int8, int2, int4; text, varchar, name, bpchar.
INTEGERS = frozenset({20, 21, 23})
TEXTS = frozenset({25, 1043, 19, 1042})


def row(result: Any, n: int, encoding: str) -> tuple[Any, ...] | None:
    """Row ``n`` of a libpq result as Python values; None when a column is of another type."""
    values: list[Any] = []
    for column in range(result.nfields):
        value = result.get_value(n, column)
        oid = result.ftype(column)
        if value is None:
            values.append(None)
        elif oid in INTEGERS:
            values.append(int(value))
        elif oid in TEXTS:
            values.append(bytes(value).decode(encoding))
        else:
            return None
    return tuple(values)
