"""Reviews: one per user and resource (``reviews``), and the rating statistics of resources.

A review is read only by those who see its resource; the rating statistics
(:func:`rating_stats`) are computed from the rows, never stored, so they cannot drift.
Deleting a user or a resource deletes its reviews (ON DELETE CASCADE).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from sqlalchemy import Connection, Select, delete, func, insert, select, update
from sqlalchemy.exc import IntegrityError

from catalog_nb.contract import ErrorCode
from catalog_nb.server.errors import Conflict, NotFound
from catalog_nb.server.store.common import any_key, new_key, now_ms
from catalog_nb.server.store.schema import data_resources, data_sources, reviews
from catalog_nb.server.store.visible import visible_condition
from catalog_nb.server.visibility import Visibility

V, R, S = reviews, data_resources, data_sources


def _with_resource() -> Select[Any]:
    return (
        select(V, R.c.path.label("resource_path"), S.c.name.label("source_name"),
               R.c.data_source_key)
        .join(R, R.c.key == V.c.resource_key)
        .join(S, S.c.key == R.c.data_source_key)
    )


def _not_found(key: str) -> NotFound:
    return NotFound(f"There is no review with key '{key}'.", ErrorCode.REVIEW_NOT_FOUND)


def get_visible(conn: Connection, vis: Visibility, key: str) -> dict[str, Any]:
    """The review with this key, if ``vis`` sees its resource; else 404 ``REVIEW_NOT_FOUND``."""
    row = conn.execute(
        _with_resource().where(V.c.key == key, visible_condition(conn, vis))
    ).mappings().first()
    if row is None:
        raise _not_found(key)
    return dict(row)


def of_resource(conn: Connection, resource_key: str) -> list[dict[str, Any]]:
    """The reviews of one resource (visibility checked by the caller), newest first."""
    query = _with_resource().where(V.c.resource_key == resource_key)
    return [dict(r) for r in conn.execute(
        query.order_by(V.c.changed_ms.desc(), V.c.key)).mappings()]


def of_user(conn: Connection, user_key: str, vis: Visibility) -> list[dict[str, Any]]:
    """A user's reviews of the resources ``vis`` sees, newest first."""
    query = _with_resource().where(V.c.user_key == user_key, visible_condition(conn, vis))
    return [dict(r) for r in conn.execute(
        query.order_by(V.c.changed_ms.desc(), V.c.key)).mappings()]


def create(
    conn: Connection, resource_key: str, user_key: str, user_name: str,
    values: Mapping[str, Any],
) -> dict[str, Any]:
    """Add a user's review of a resource; 409 ``DUPLICATE_REVIEW`` when they wrote one."""
    existing = conn.execute(
        select(V.c.key).where(V.c.resource_key == resource_key, V.c.user_key == user_key)
    ).scalar()
    if existing is not None:
        raise _duplicate(existing)
    now = now_ms()
    key = new_key()
    try:
        conn.execute(insert(V).values(
            key=key, resource_key=resource_key, user_key=user_key, user_name=user_name,
            rating=values["rating"], title=values.get("title"), text=values.get("text"),
            created_ms=now, changed_ms=now,
        ))
    except IntegrityError as exc:  # a concurrent request wrote it in between
        raise _duplicate(None) from exc
    return get_any(conn, key)


def _duplicate(existing: str | None) -> Conflict:
    which = f" (key '{existing}')" if existing else ""
    return Conflict(
        f"You have already reviewed this data resource{which}; update that review instead.",
        ErrorCode.DUPLICATE_REVIEW, reviewKey=existing,
    )


def get_any(conn: Connection, key: str) -> dict[str, Any]:
    """The review with this key, whoever sees it (for writes already checked); else 404."""
    row = conn.execute(_with_resource().where(V.c.key == key)).mappings().first()
    if row is None:
        raise _not_found(key)
    return dict(row)


def change(conn: Connection, key: str, values: Mapping[str, Any]) -> dict[str, Any]:
    """Write checked ``values`` (rating, title, text) to a review; the updated review."""
    conn.execute(update(V).where(V.c.key == key).values(**values, changed_ms=now_ms()))
    return get_any(conn, key)


def remove(conn: Connection, key: str) -> None:
    """Delete a review."""
    conn.execute(delete(V).where(V.c.key == key))


def rating_stats(
    conn: Connection, resource_keys: Iterable[str]
) -> dict[str, tuple[float, int]]:
    """``(average rating to 2 decimals, count)`` of many resources in one query (only those
    with reviews)."""
    wanted = list(resource_keys)
    if not wanted:
        return {}
    query = (
        select(V.c.resource_key, func.sum(V.c.rating), func.count())
        .where(any_key(conn, V.c.resource_key, wanted))
        .group_by(V.c.resource_key)
    )
    return {str(k): (round(int(total) / int(n), 2), int(n)) for k, total, n in conn.execute(query)}
