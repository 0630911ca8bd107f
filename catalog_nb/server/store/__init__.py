"""The catalog store: the only code that writes SQL (SQLAlchemy Core), one module per family.

``Store`` (``store.engine``) owns the engine and hands out transactions; the family modules
(``users``, ``roles``, ``sessions``, ``audit``, ...) are functions that take a connection, so
one request's work happens in one transaction and a failure leaves nothing half-written. A store
holds a pool of open connections until it is disposed: whoever makes one disposes of it
(``with`` does).

Example::

    with Store("sqlite:///catalog.sqlite3") as store:
        store.migrate()
        with store.write() as conn:
            users.create(conn, name="ana", roles=["Analyst"], assigned_by="cli")

Family modules import what they need from ``store.engine`` and ``store.changes`` directly,
never from this package, so importing the package never runs into a half-imported module.
"""

from __future__ import annotations

from catalog_nb.server.store.changes import changed, note_change
from catalog_nb.server.store.engine import (
    Store,
    busy_error,
    is_busy,
    share_write_turns,
)

__all__ = [
    "Store",
    "busy_error",
    "changed",
    "is_busy",
    "note_change",
    "share_write_turns",
]
