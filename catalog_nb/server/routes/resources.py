"""Data resources: read one (by key or by source and path), the metadata query, and the two PUTs.

Resources are created only by browsing and profiling; this router reads them and writes what
people add (descriptions, owner, custom values, field annotations). Everything applies the
caller's visibility: an invisible resource answers 404 and is never counted.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any

from fastapi import APIRouter, Body, Query
from fastapi.responses import JSONResponse
from sqlalchemy import Connection

from catalog_nb.contract import (
    METADATA_PAGE_DEFAULT,
    AccessLevel,
    AuditAction,
    AuditObjectType,
    ErrorCode,
    ResourceType,
)
from catalog_nb.server.auditing import audited
from catalog_nb.server.deps import CallerDep, StoreDep
from catalog_nb.server.errors import NotFound
from catalog_nb.server.schemas.joins import by_resource as joins_by_resource
from catalog_nb.server.schemas.resource_query import (
    check_paging,
    parse_filters,
    parse_update,
    parse_views,
    split_list,
)
from catalog_nb.server.schemas.resources import Shaping, resource_out
from catalog_nb.server.security import Caller, PathSpec, Visibility, require_level, visibility
from catalog_nb.server.store import Store
from catalog_nb.server.store import associations as association_store
from catalog_nb.server.store import custom_properties as property_store
from catalog_nb.server.store import favorites as favorite_store
from catalog_nb.server.store import folders as folder_store
from catalog_nb.server.store import joins as join_store
from catalog_nb.server.store import resources as resource_store
from catalog_nb.server.store import reviews as review_store
from catalog_nb.server.store import sources as source_store

router = APIRouter(tags=["data resources"])

_WRITE = "Changing data resources"


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
) -> list[dict[str, Any]]:
    """The wire form of resource rows, with their extras loaded in one query each;
    ``joins`` adds their join conditions (the detail form: three more queries)."""
    keys = [r["key"] for r in rows]
    ctx = Shaping(caller=caller, vis=vis, tags=tags, minimal=minimal,
                  fields=resource_store.fields_of(conn, keys) if fields else None)
    if tags or fields or not minimal:
        # One query for the whole page: the views, each field's tags and the sensitivity.
        ctx.associations = association_store.of_resources(conn, keys)
    if not minimal:
        ctx.custom = property_store.values_of(conn, keys)
        ctx.favorites = favorite_store.flags(conn, caller.key, keys)
        ctx.ratings = review_store.rating_stats(conn, keys)
        if joins:
            ctx.joins = joins_by_resource(join_store.of_resources(conn, vis, keys), keys)
        collections = [r["key"] for r in rows
                       if r["resource_type"] == ResourceType.COLLECTION.value]
        ctx.members = resource_store.members_of(conn, collections)
        sources = {r["data_source_key"] for r in rows}
        ctx.folders = [
            (f["name"], f["data_source_key"], [PathSpec.of(s) for s in f["path_specs"] or []])
            for f in folder_store.folders_in_sources(conn, sources) if vis.sees_folder(f)
        ]
        ctx.datasets = [
            {k: specs for k, specs in folder_store.specs_of(d).items() if k in sources}
            for d in folder_store.list_datasets(conn, vis)
        ]
    return [resource_out(r, ctx) for r in rows]


@router.get("/dataresource/metadata")
def metadata(
    caller: CallerDep,
    store: StoreDep,
    property_filter: Annotated[list[str] | None, Query(alias="propertyFilter")] = None,
    virtual_folder_keys: Annotated[list[str] | None, Query(alias="virtualFolderKeys")] = None,
    views: Annotated[list[str] | None, Query()] = None,
    page_size: Annotated[int, Query(alias="pageSize")] = METADATA_PAGE_DEFAULT,
    start: int = 0,
    modified_from: Annotated[int | None, Query(alias="resourceModifiedDateFromL")] = None,
    modified_to: Annotated[int | None, Query(alias="resourceModifiedDateToL")] = None,
) -> JSONResponse:
    """A page of the resources the caller sees: ``{list, totalCount, start, pageSize}``.

    Ordered by data source name, then path. See docs/resources-api.md for the parameters.
    """
    check_paging(start, page_size, modified_from, modified_to)
    query = resource_store.MetadataQuery(
        filters=parse_filters(property_filter or []), modified_from=modified_from,
        modified_to=modified_to, start=start, size=page_size,
    )
    chosen = parse_views(views or [])
    folder_keys = split_list(virtual_folder_keys or [])
    with store.read() as conn:
        vis = visibility(conn, caller.roles)
        if folder_keys:
            query.folders = _folder_specs(conn, vis, folder_keys)
        rows, total = resource_store.query_page(conn, vis, query)
        listed = shape(conn, caller, vis, rows, fields="viewFields" in chosen,
                       tags="viewTags" in chosen, minimal="resource_path" in chosen)
    return JSONResponse(
        {"list": listed, "totalCount": total, "start": start, "pageSize": page_size}
    )


def _folder_specs(
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


@router.get("/dataresource/source/{source_name:path}")
def get_by_path(
    source_name: str,
    caller: CallerDep,
    store: StoreDep,
    resource_path: Annotated[str, Query(alias="resourcePath", min_length=1)],
) -> JSONResponse:
    """The resource at ``resourcePath`` of the named data source, with fields and tags."""
    with store.read() as conn:
        vis = visibility(conn, caller.roles)
        row = resource_store.get_visible_by_path(conn, vis, source_name, resource_path)
        return JSONResponse(shape(conn, caller, vis, [row], joins=True)[0])


@router.get("/dataresource/{key}")
def get_resource(key: str, caller: CallerDep, store: StoreDep) -> JSONResponse:
    """The resource with this key, with fields and tags."""
    with store.read() as conn:
        vis = visibility(conn, caller.roles)
        row = resource_store.get_visible(conn, vis, key)
        return JSONResponse(shape(conn, caller, vis, [row], joins=True)[0])


def _update(
    store: Store, caller: Caller, body: Any, key: str | None, source_name: str | None = None,
    path: str | None = None,
) -> JSONResponse:
    """The PUT of either form, in one audited transaction; answers the updated resource."""
    target = key or f"{source_name}:{path}"
    with audited(store, caller, AuditAction.UPDATE, AuditObjectType.DATA_RESOURCE,
                 key=key, name=None if key else target) as w:
        require_level(caller, AccessLevel.STEWARD, _WRITE)
        vis = visibility(w.conn, caller.roles)
        if key is not None:
            row = resource_store.get_visible(w.conn, vis, key)
        else:
            row = resource_store.get_visible_by_path(w.conn, vis, str(source_name), str(path))
        w.target(row["key"], f"{row['source_name']}:{row['path']}")
        resource_store.lock_for_update(w.conn, row["key"])
        changes = parse_update(body)
        definitions = property_store.by_names(w.conn, changes.custom)
        custom = {}
        for name, value in changes.custom.items():
            definition = definitions[name.casefold()]
            custom[definition["key"]] = None if value is None else property_store.check_value(
                definition["type"], value, definition["name"]
            )
        resource_store.annotate(w.conn, row["key"], changes.values, changes.fields)
        property_store.set_values(w.conn, row["key"], custom)
        w.message = f"changed {changes.summary()}"
        updated = resource_store.get_visible(w.conn, vis, row["key"])
        out = shape(w.conn, caller, vis, [updated], joins=True)[0]
    return JSONResponse(out)


@router.put("/dataresource/source/{source_name:path}")
def update_by_path(
    source_name: str,
    caller: CallerDep,
    store: StoreDep,
    resource_path: Annotated[str, Query(alias="resourcePath", min_length=1)],
    body: Annotated[Any, Body()] = None,
) -> JSONResponse:
    """Change people-owned properties of the resource at ``resourcePath`` (Steward+)."""
    return _update(store, caller, body, None, source_name, resource_path)


@router.put("/dataresource/{key}")
def update_resource(
    key: str, caller: CallerDep, store: StoreDep, body: Annotated[Any, Body()] = None
) -> JSONResponse:
    """Change people-owned properties of the resource with this key (Steward+)."""
    return _update(store, caller, body, key)
