"""The read model of data resources: rows from ``store.resources`` with what the wire form adds
(fields, tags, custom values, favorites, ratings, join conditions, folders and data sets), each
extra read in one query for a whole page.

Every read applies the caller's visibility: an invisible resource answers 404 and is never
counted. The routes of resources, searches and favorites shape their resources here.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import orjson
from sqlalchemy import Connection

from catalog_nb.contract import ErrorCode, ResourceType
from catalog_nb.server.errors import NotFound
from catalog_nb.server.schemas.joins import by_resource as joins_by_resource
from catalog_nb.server.schemas.paging import Cursor
from catalog_nb.server.schemas.resources import Shaping, page_out
from catalog_nb.server.security import Caller
from catalog_nb.server.store import Store, definitions
from catalog_nb.server.store import associations as association_store
from catalog_nb.server.store import custom_properties as property_store
from catalog_nb.server.store import favorites as favorite_store
from catalog_nb.server.store import folders as folder_store
from catalog_nb.server.store import joins as join_store
from catalog_nb.server.store import resources as resource_store
from catalog_nb.server.store import reviews as review_store
from catalog_nb.server.store import sources as source_store
from catalog_nb.server.store.visible import visibility
from catalog_nb.server.visibility import PathSpec, Visibility


def shape(
    conn: Connection,
    caller: Caller,
    vis: Visibility,
    rows: Sequence[dict[str, Any]],
    *,
    fields: bool = True,
    tags: bool = True,
    minimal: bool = False,
    joins: bool = False,
    extra: Mapping[str, Mapping[str, Any]] | None = None,
    properties: frozenset[str] | None = None,
) -> list[orjson.Fragment]:
    """The wire form of resource rows (JSON, ready for the answer), with their extras loaded in
    one query each; ``joins`` adds their join conditions (the detail form: three more queries),
    ``extra`` more properties by resource key (a search score), ``properties`` the only
    properties to send (rows read with the same ``properties``)."""
    return page_out(rows, shaping(conn, caller, vis, rows, fields=fields, tags=tags,
                                  minimal=minimal, joins=joins, extra=extra,
                                  properties=properties))


def shaping(
    conn: Connection,
    caller: Caller,
    vis: Visibility,
    rows: Sequence[dict[str, Any]],
    *,
    fields: bool,
    tags: bool,
    minimal: bool = False,
    joins: bool = False,
    extra: Mapping[str, Mapping[str, Any]] | None = None,
    properties: frozenset[str] | None = None,
) -> Shaping:
    """What resource rows are shaped with (see :func:`shape`), loaded for the whole page."""
    keys = [r["key"] for r in rows]
    ctx = Shaping(caller=caller, vis=vis, tags=tags, minimal=minimal,
                  fields=resource_store.fields_of(conn, keys) if fields else None,
                  extra=extra or {}, properties=properties)

    def wanted(*names: str) -> bool:
        """Whether a property that needs a query of its own is sent at all."""
        return not minimal and (properties is None or any(n in properties for n in names))

    if tags or fields or wanted("sensitivity"):
        # One query for the whole page: the views, each field's tags and the sensitivity.
        ctx.associations = association_store.of_resources(conn, keys)
    if wanted("customProperties"):
        ctx.custom = property_store.values_of(conn, keys)
    if wanted("favorite"):
        ctx.favorites = favorite_store.flags(conn, caller.key, keys)
    if wanted("averageRating", "ratingCount"):
        ctx.ratings = review_store.rating_stats(conn, keys)
    if joins and wanted("joinConditions"):
        ctx.joins = joins_by_resource(join_store.of_resources(conn, vis, keys), keys)
    if wanted("memberPaths"):
        collections = [r["key"] for r in rows
                       if r["resource_type"] == ResourceType.COLLECTION.value]
        ctx.members = resource_store.members_of(conn, collections)
    sources = {r["data_source_key"] for r in rows}
    if wanted("dataSetVirtualFolders"):
        ctx.folders = [
            (f["name"], f["data_source_key"], [PathSpec.of(s) for s in f["path_specs"] or []])
            for f in definitions.folders(conn)
            if f["data_source_key"] in sources and vis.sees_folder(f)
        ]
    if wanted("dataSetMember"):
        ctx.datasets = [
            {k: specs for k, specs in folder_store.specs_of(d).items() if k in sources}
            for d in definitions.datasets(conn) if vis.sees_dataset(d)
        ]
    return ctx


@dataclass(frozen=True)
class MetadataPage:
    """A page of the metadata query: its rows, what they are shaped with, and the counts."""

    rows: list[dict[str, Any]]
    shaping: Shaping
    #: The rows in their JSON form (the rows themselves for an Arrow answer).
    listed: Sequence[Any]
    total: int
    more: bool


def metadata_page(
    store: Store,
    caller: Caller,
    query: resource_store.MetadataQuery,
    *,
    folder_keys: list[str],
    resume: Cursor | None,
    views: Collection[str],
    arrow: bool,
) -> MetadataPage:
    """A page of the resources the caller sees, in one read: counted unless a cursor brought
    the count along, read one row past the page (whether another page follows), and shaped
    with the ``views`` asked for."""
    with store.read() as conn:
        vis = visibility(conn, caller.roles)
        if folder_keys:
            query.folders = folder_specs(conn, vis, folder_keys)
        if resume is not None:
            query.after = (str(resume.after[0]), str(resume.after[1]), str(resume.after[2]))
            total = resume.total
        else:
            total = resource_store.count_matching(conn, vis, query)
        # One row more than the page says whether another page follows.
        rows = [] if resume is None and query.start >= total else (
            resource_store.query_page(conn, vis, query, limit=query.size + 1))
        more, rows = len(rows) > query.size, rows[:query.size]
        ctx = shaping(conn, caller, vis, rows, fields="viewFields" in views,
                      tags="viewTags" in views, minimal="resource_path" in views,
                      properties=query.properties)
        listed: Sequence[Any] = rows if arrow else page_out(rows, ctx)
    return MetadataPage(rows, ctx, listed, total, more)


def folder_specs(
    conn: Connection, vis: Visibility, keys: list[str]
) -> dict[str, list[PathSpec]]:
    """Path specifications of the named folders per source; 404 for an unknown or hidden one."""
    found = {f["key"]: f for f in source_store.virtual_folders_by_key(conn, keys)}
    specs: dict[str, list[PathSpec]] = {}
    for key in dict.fromkeys(keys):
        folder = found.get(key)
        if folder is None or not vis.sees_folder(folder):
            raise NotFound(f"There is no virtual folder with key '{key}'.",
                           ErrorCode.VIRTUAL_FOLDER_NOT_FOUND)
        for source_key, listed in folder_store.specs_of(folder).items():
            specs.setdefault(source_key, []).extend(listed)
    return specs


def resource_by_path(
    store: Store, caller: Caller, source_name: str, resource_path: str
) -> orjson.Fragment:
    """The wire form of the resource at ``resource_path`` of the named data source, with fields,
    tags and join conditions; 404 when hidden."""
    with store.read() as conn:
        vis = visibility(conn, caller.roles)
        row = resource_store.get_visible_by_path(conn, vis, source_name, resource_path)
        return shape(conn, caller, vis, [row], joins=True)[0]


def read_resource(store: Store, caller: Caller, key: str) -> orjson.Fragment:
    """The wire form of the resource with this key as ``caller`` sees it; 404 when hidden."""
    with store.read() as conn:
        vis = visibility(conn, caller.roles)
        row = resource_store.get_visible(conn, vis, key)
        return shape(conn, caller, vis, [row], joins=True)[0]
