"""Which transactions changed the catalog: what the catalog generation (and every cache keyed
by it) counts.

A connection notes in its ``info`` whether its open transaction wrote a table the generation
counts (any but ``schema.UNCOUNTED_TABLES``); ``Store`` bumps the generation at commit when it
did. Kept apart from ``store.engine`` so that family modules (``bulk_insert``, ``definitions``)
can note and ask without importing the engine, which imports the migrations that import them.
"""

from __future__ import annotations

import re
from typing import Any

from sqlalchemy import Connection, Engine, event

from catalog_nb.server.store.schema import UNCOUNTED_TABLES

#: ``conn.info`` key: whether the open transaction wrote a table the catalog generation counts.
CHANGED_INFO_KEY = "catalog_changed"
#: Statements that change nothing, by their first word.
_READS = ("SELECT", "BEGIN", "PRAGMA", "SHOW", "SAVEPOINT", "RELEASE", "ROLLBACK", "COMMIT",
          "EXPLAIN", "SET", "ANALYZE", "VALUES")
#: The table a DML statement written as text writes (Core statements name theirs).
_DML_TABLE = re.compile(
    r"\s*(?:INSERT(?:\s+OR\s+\w+)?\s+INTO|REPLACE\s+INTO|UPDATE(?:\s+OR\s+\w+)?|"
    r"DELETE\s+FROM)\s+\"?(\w+)", re.IGNORECASE)


def count_changes(engine: Engine) -> None:
    """Note on each connection whether its transaction wrote a table that the catalog
    generation counts (any but ``schema.UNCOUNTED_TABLES``); see :meth:`Store._counted`."""

    @event.listens_for(engine, "before_cursor_execute")
    def _note(conn: Connection, _cursor: Any, statement: str, _params: Any, context: Any,
              _many: bool) -> None:
        info = conn.info
        if info.get(CHANGED_INFO_KEY):
            return
        compiled = getattr(context, "compiled", None)
        if context is not None and (context.isinsert or context.isupdate or context.isdelete):
            table = getattr(getattr(compiled, "statement", None), "table", None)
            name = getattr(table, "name", None)
        elif getattr(getattr(compiled, "statement", None), "is_select", False):
            return  # a Core SELECT, "WITH ..." included (a search: store/facets.py)
        else:
            first = statement.lstrip()[:10].upper()
            if first.startswith(_READS):
                return
            found = _DML_TABLE.match(statement)
            # Anything else (DDL, a statement not understood) counts: caches may be wrong
            # only if a change is missed, never because one too many is counted.
            name = found.group(1).lower() if found else None
        if name not in UNCOUNTED_TABLES:
            info[CHANGED_INFO_KEY] = True


def changed(conn: Connection) -> bool:
    """Whether the connection's open transaction has written a table the catalog generation
    counts (what it reads is then not what the generation stands for)."""
    return bool(conn.info.get(CHANGED_INFO_KEY))


def note_change(conn: Connection, table: str) -> None:
    """Note a write to ``table`` that the driver made, past SQLAlchemy's statement events (a
    COPY: ``store.bulk_insert``), as :func:`count_changes` notes the others."""
    if table not in UNCOUNTED_TABLES:
        conn.info[CHANGED_INFO_KEY] = True
