"""Who may see a data source or a data resource: the permit endpoints, asked by a Steward or an
Administrator about every user at once.

The caller must see the source (or resource) first: to anyone else it answers 404 like a source
that does not exist (DESIGN.md: what the caller does not see answers 404, not 403).
"""

from __future__ import annotations

from catalog_nb.contract import AccessLevel, ErrorCode
from catalog_nb.server.errors import NotFound
from catalog_nb.server.security import Caller, require_level
from catalog_nb.server.store import Store
from catalog_nb.server.store import sources as source_store
from catalog_nb.server.store import users as user_store
from catalog_nb.server.store.visible import visibilities
from catalog_nb.server.visibility import sees_source


def _no_source(name: str) -> NotFound:
    return NotFound(f"There is no data source named '{name}'.", ErrorCode.DATA_SOURCE_NOT_FOUND)


def who_sees_source(store: Store, caller: Caller, source_name: str) -> dict[str, bool]:
    """Each user's name, and whether they may see the data source named ``source_name``."""
    require_level(caller, AccessLevel.STEWARD, "Asking who may see a data source")
    with store.read() as conn:
        source = source_store.get_source_by_name(conn, source_name)
        if not sees_source(caller.roles, source["key"]):
            raise _no_source(source_name)
        return {u.name: sees_source(u.roles, source["key"]) for u in user_store.list_all(conn)}


def who_sees_resource(
    store: Store, caller: Caller, source_name: str, resource_path: str
) -> dict[str, bool]:
    """Each user's name, and whether they may see the resource at ``resource_path`` of the data
    source named ``source_name``."""
    require_level(caller, AccessLevel.STEWARD, "Asking who may see a data resource")
    with store.read() as conn:
        source = source_store.get_source_by_name(conn, source_name)
        everyone = user_store.list_all(conn)
        # The caller's and every user's visibility at once: two queries however many users.
        mine, *theirs = visibilities(conn, [caller.roles, *(u.roles for u in everyone)])
        if not mine.sees(source["key"], resource_path):
            raise _no_source(source_name)
        try:
            row = source_store.get_resource_by_path(conn, source["key"], resource_path)
        except NotFound:
            # A leading "/" is forgiven, as everywhere a resourcePath is read: paths are
            # relative to the source's root.
            if not resource_path.startswith("/"):
                raise
            row = source_store.get_resource_by_path(conn, source["key"],
                                                    resource_path.lstrip("/"))
        resource_path = row["path"]
        return {u.name: seen.sees(source["key"], resource_path)
                for u, seen in zip(everyone, theirs, strict=True)}
