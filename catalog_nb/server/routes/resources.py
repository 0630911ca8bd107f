"""Data resources: read one (by key or by source and path), the metadata query, and the two PUTs.

Resources are created only by browsing and profiling; this router reads them and writes what
people add (descriptions, owner, custom values, field annotations). Everything applies the
caller's visibility: an invisible resource answers 404 and is never counted.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Annotated, Any
from urllib.parse import urlencode

import orjson
from fastapi import APIRouter, Body, Query, Request, Response
from sqlalchemy import Connection

from catalog_nb.contract import (
    ARROW_STREAM,
    METADATA_PAGE_DEFAULT,
    AccessLevel,
    AuditAction,
    AuditObjectType,
    ErrorCode,
    ResourceType,
)
from catalog_nb.server.auditing import audited
from catalog_nb.server.deps import CallerDep, StoreDep, read_quickly
from catalog_nb.server.errors import NotFound
from catalog_nb.server.read_cache import ReadCache
from catalog_nb.server.responses import JSONResponse, dumps
from catalog_nb.server.schemas.joins import by_resource as joins_by_resource
from catalog_nb.server.schemas.paging import MAX_CURSOR_LENGTH
from catalog_nb.server.schemas.resource_arrow import arrow_page
from catalog_nb.server.schemas.resource_query import (
    answers_arrow,
    check_paging,
    metadata_fingerprint,
    metadata_page,
    parse_filters,
    parse_properties,
    parse_update,
    parse_views,
    resume_metadata,
    split_list,
)
from catalog_nb.server.schemas.resources import Shaping, page_out
from catalog_nb.server.security import Caller, PathSpec, Visibility, require_level, visibility
from catalog_nb.server.store import Store, definitions
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


@router.get("/dataresource/metadata", response_class=JSONResponse, responses={200: {
    "content": {ARROW_STREAM: {"schema": {"type": "string", "format": "binary"}}},
    "description": "A page of resources: JSON, or an Arrow IPC stream when the request "
                   "accepts it (no views)."}})
def metadata(
    request: Request,
    caller: CallerDep,
    store: StoreDep,
    property_filter: Annotated[list[str] | None, Query(alias="propertyFilter")] = None,
    virtual_folder_keys: Annotated[list[str] | None, Query(alias="virtualFolderKeys")] = None,
    views: Annotated[list[str] | None, Query()] = None,
    properties: Annotated[list[str] | None, Query()] = None,
    page_size: Annotated[int, Query(alias="pageSize")] = METADATA_PAGE_DEFAULT,
    start: int = 0,
    cursor: Annotated[str | None, Query(max_length=MAX_CURSOR_LENGTH)] = None,
    modified_from: Annotated[int | None, Query(alias="resourceModifiedDateFromL")] = None,
    modified_to: Annotated[int | None, Query(alias="resourceModifiedDateToL")] = None,
) -> Response:
    """A page of the resources the caller sees: ``{list, totalCount, start, pageSize,
    nextCursor}``.

    Ordered by data source name, then path. ``nextCursor`` (null on the last page) continues the
    same query by keyset: pass it back as ``cursor``; the ``Link: <...>; rel="next"`` header
    holds the URL of that next page, for clients that page without reading the body. With
    ``Accept: application/vnd.apache.arrow.stream`` (and no views) the page is an Arrow IPC
    stream instead (schemas/resource_arrow.py). See docs/resources-api.md.
    """
    chosen = parse_views(views or [])
    arrow = answers_arrow(request.headers.get("accept"), bool(chosen))
    check_paging(start, page_size, modified_from, modified_to, arrow=arrow)
    filters = parse_filters(property_filter or [])
    folder_keys = split_list(virtual_folder_keys or [])
    query = resource_store.MetadataQuery(
        filters=filters, modified_from=modified_from, modified_to=modified_to, start=start,
        size=page_size,
    )
    query_id = metadata_fingerprint(filters, folder_keys, modified_from, modified_to)
    resume = resume_metadata(cursor, start, query_id)
    query.properties = parse_properties(properties or [])
    query.separate = arrow
    with store.read() as conn:
        vis = visibility(conn, caller.roles)
        if folder_keys:
            query.folders = _folder_specs(conn, vis, folder_keys)
        if resume is not None:
            query.after = (str(resume.after[0]), str(resume.after[1]), str(resume.after[2]))
            total = resume.total
        else:
            total = resource_store.count_matching(conn, vis, query)
        # One row more than the page says whether another page follows.
        rows = [] if resume is None and start >= total else (
            resource_store.query_page(conn, vis, query, limit=page_size + 1))
        more, rows = len(rows) > page_size, rows[:page_size]
        ctx = shaping(conn, caller, vis, rows, fields="viewFields" in chosen,
                      tags="viewTags" in chosen, minimal="resource_path" in chosen,
                      properties=query.properties)
        listed: Sequence[Any] = rows if arrow else page_out(rows, ctx)
    first = resume.position if resume is not None else start
    after = resource_store.sort_key(rows[-1]) if more else None
    body = metadata_page(listed, total, first, page_size, query_id, after,
                         counted=resume is None)
    headers = {}
    if body["nextCursor"] is not None:
        kept = [(k, v) for k, v in request.query_params.multi_items()
                if k not in ("cursor", "start")]
        url = request.url.replace(query="")
        query_string = urlencode([*kept, ("cursor", body["nextCursor"])])
        headers["Link"] = f'<{url}?{query_string}>; rel="next"'
    if arrow:
        del body["list"]
        return Response(arrow_page(rows, ctx, body), media_type=ARROW_STREAM, headers=headers)
    return JSONResponse(body, headers=headers)


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


def read_resource(store: Store, caller: Caller, key: str) -> orjson.Fragment:
    """The wire form of the resource with this key as ``caller`` sees it; 404 when hidden."""
    with store.read() as conn:
        vis = visibility(conn, caller.roles)
        row = resource_store.get_visible(conn, vis, key)
        return shape(conn, caller, vis, [row], joins=True)[0]


#: What the read cache files a resource's answer under, with its key (edge.CachedReads answers
#: repeated reads from there before routing).
CACHED_READ = "resource"


@router.get("/dataresource/{key}", response_class=JSONResponse)
async def get_resource(key: str, caller: CallerDep, store: StoreDep, request: Request
                       ) -> Response:
    """The resource with this key, with fields and tags."""
    # async: one resource is a short read, cheaper on the event loop than in a worker thread
    # where the store allows it (deps.read_quickly); a repeated one is answered from the
    # process's read cache while nothing in the store changed (server/read_cache.py), before
    # it is even routed here (edge.CachedReads).
    reads: ReadCache = request.app.state.reads

    async def read() -> bytes:
        return dumps(await read_quickly(store, read_resource, store, caller, key))

    body = await reads.fetch((CACHED_READ, key), caller, read)
    return Response(body, media_type=JSONResponse.media_type)


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
