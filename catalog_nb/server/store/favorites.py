"""Favorites: the resources each user keeps at hand (``favorites``, one row per user and
resource).

A favorite outlives a change of the user's roles: the list shows only what the user sees now
(the rows stay, so a role given back brings them back). Deleting a user or a resource deletes
its favorites (foreign keys with ON DELETE CASCADE).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sqlalchemy import Connection, delete, select
from sqlalchemy.dialects import postgresql, sqlite

from catalog_nb.contract import ErrorCode
from catalog_nb.server.errors import NotFound
from catalog_nb.server.store.common import any_key, now_ms
from catalog_nb.server.store.resources import read_query, rows_of
from catalog_nb.server.store.schema import data_resources, data_sources, favorites
from catalog_nb.server.store.visible import visible_condition
from catalog_nb.server.visibility import Visibility

FAV, R, S = favorites, data_resources, data_sources


def add(conn: Connection, user_key: str, resource_key: str) -> tuple[int, bool]:
    """Make a resource a favorite of a user: ``(favorite time, whether it is new)``.

    Idempotent: a favorite already kept keeps its time. An insert that ignores conflicts, so
    two requests at once cannot collide on the key.
    """
    dialect = postgresql if conn.dialect.name == "postgresql" else sqlite
    statement = dialect.insert(FAV).values(
        user_key=user_key, resource_key=resource_key, created_ms=now_ms()
    ).on_conflict_do_nothing(index_elements=[FAV.c.user_key, FAV.c.resource_key])
    # RETURNING, not rowcount: drivers disagree on the rowcount of a skipped insert.
    inserted = conn.execute(statement.returning(FAV.c.created_ms)).scalar()
    if inserted is not None:
        return int(inserted), True
    when = conn.execute(
        select(FAV.c.created_ms)
        .where(FAV.c.user_key == user_key, FAV.c.resource_key == resource_key)
    ).scalar_one()
    return int(when), False


def remove(conn: Connection, user_key: str, resource_key: str) -> None:
    """Stop keeping a resource as a favorite; 404 ``FAVORITE_NOT_FOUND`` when it was not one."""
    gone = conn.execute(
        delete(FAV).where(FAV.c.user_key == user_key, FAV.c.resource_key == resource_key)
    ).rowcount
    if not gone:
        raise NotFound(f"The data resource '{resource_key}' is not one of your favorites.",
                       ErrorCode.FAVORITE_NOT_FOUND)


def list_for(conn: Connection, user_key: str, vis: Visibility) -> list[dict[str, Any]]:
    """A user's favorite resources that ``vis`` sees, newest first, as resource rows (joined
    with their source, as ``store.resources`` reads them) with ``favorite_ms``."""
    query = (
        read_query(conn)
        .add_columns(FAV.c.created_ms.label("favorite_ms"))
        .join(FAV, FAV.c.resource_key == R.c.key)
        .where(FAV.c.user_key == user_key, visible_condition(conn, vis))
        .order_by(FAV.c.created_ms.desc(), R.c.key)
    )
    return rows_of(conn.execute(query))


def flags(conn: Connection, user_key: str, resource_keys: Iterable[str]) -> set[str]:
    """Which of ``resource_keys`` are favorites of the user, in one query."""
    wanted = list(resource_keys)
    if not wanted:
        return set()
    query = select(FAV.c.resource_key).where(FAV.c.user_key == user_key,
                                           any_key(conn, FAV.c.resource_key, wanted))
    return {str(k) for k in conn.execute(query).scalars()}
