"""Reading tags: each tag with its direct children and, for the tag and each child, the number
of associations the caller may see, in a fixed number of queries however many tags."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy import Connection

from catalog_nb.server.schemas.tags import TagOut, tag_out
from catalog_nb.server.security import Caller
from catalog_nb.server.store import Store
from catalog_nb.server.store import tags as tag_store
from catalog_nb.server.store.visible import visibility


def shape(conn: Connection, caller: Caller, rows: Sequence[Mapping[str, Any]],
          children: Mapping[str, Sequence[Mapping[str, Any]]] | None = None) -> list[TagOut]:
    """Tags with their direct children and counts, in a fixed number of queries; ``children``
    when the caller already holds them (else they are read)."""
    if children is None:
        children = tag_store.children_of(conn, [r["key"] for r in rows])
    keys = [r["key"] for r in rows] + [c["key"] for kids in children.values() for c in kids]
    # Many tags: count them all at once rather than naming thousands of keys in the query.
    counts = tag_store.association_counts(conn, visibility(conn, caller.roles),
                                          keys if len(keys) <= 500 else None)
    return [tag_out(r, counts, children) for r in rows]


def list_tags(store: Store, caller: Caller, domain_key: str | None) -> list[TagOut]:
    """Every tag (of one domain), by full name, each with its direct children."""
    with store.read() as conn:
        rows = tag_store.list_tags(conn, domain_key)
        children: dict[str, list[Mapping[str, Any]]] = {}
        for row in rows:  # a whole domain (or all of them) holds every child of its tags
            if row["parent_key"] is not None:
                children.setdefault(row["parent_key"], []).append(row)
        return shape(conn, caller, rows, children)


def get_tag(store: Store, caller: Caller, key: str) -> TagOut:
    """The tag with this key, with its direct children."""
    with store.read() as conn:
        return shape(conn, caller, [tag_store.get_tag(conn, key)])[0]


def tag_by_name(store: Store, caller: Caller, tag_name: str, domain_name: str | None) -> TagOut:
    """The tag of this name or full name (within ``domain_name`` when given)."""
    with store.read() as conn:
        return shape(conn, caller, [tag_store.by_name(conn, tag_name, domain_name)])[0]


def tag_children(store: Store, caller: Caller, tag_key: str) -> list[TagOut]:
    """The direct children of a tag (404 when there is no such tag)."""
    with store.read() as conn:
        tag_store.get_tag(conn, tag_key)
        return shape(conn, caller, tag_store.children_of(conn, [tag_key]).get(tag_key, []))
