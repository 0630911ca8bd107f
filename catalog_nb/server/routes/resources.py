"""Data resources: read one (by key or by source and path), the metadata query, and the two PUTs.

Resources are created only by browsing and profiling; this router reads them and writes what
people add (descriptions, owner, custom values, field annotations). Everything applies the
caller's visibility: an invisible resource answers 404 and is never counted.
"""

from __future__ import annotations

from typing import Annotated, Any
from urllib.parse import urlencode

from fastapi import APIRouter, Body, Query, Request, Response

from catalog_nb.contract import ARROW_STREAM, METADATA_PAGE_DEFAULT
from catalog_nb.server.deps import CallerDep, StoreDep, read_quickly
from catalog_nb.server.openapi import ResourceChange, json_body
from catalog_nb.server.read_cache import ReadCache
from catalog_nb.server.responses import JSONResponse, dumps
from catalog_nb.server.schemas.answers import DataResource, MetadataPage
from catalog_nb.server.schemas.paging import MAX_CURSOR_LENGTH
from catalog_nb.server.schemas.resource_arrow import arrow_page
from catalog_nb.server.schemas.resource_query import (
    answers_arrow,
    check_paging,
    metadata_fingerprint,
    metadata_page,
    parse_filters,
    parse_properties,
    parse_views,
    resume_metadata,
    split_list,
)
from catalog_nb.server.services import resource_updates, resource_views
from catalog_nb.server.store import resources as resource_store

router = APIRouter(tags=["data resources"])


@router.get("/dataresource/metadata", response_class=JSONResponse, responses={200: {
    "model": MetadataPage,
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
    found = resource_views.metadata_page(store, caller, query, folder_keys=folder_keys,
                                         resume=resume, views=chosen, arrow=arrow)
    rows, ctx, more = found.rows, found.shaping, found.more
    first = resume.position if resume is not None else start
    after = resource_store.sort_key(rows[-1]) if more else None
    body = metadata_page(found.listed, found.total, first, page_size, query_id, after,
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


@router.get("/dataresource/source/{source_name:path}", responses={200: {"model": DataResource}})
def get_by_path(
    source_name: str,
    caller: CallerDep,
    store: StoreDep,
    resource_path: Annotated[str, Query(alias="resourcePath", min_length=1)],
) -> JSONResponse:
    """The resource at ``resourcePath`` of the named data source, with fields and tags."""
    return JSONResponse(
        resource_views.resource_by_path(store, caller, source_name, resource_path))


#: What the read cache files a resource's answer under, with its key (edge.CachedReads answers
#: repeated reads from there before routing).
CACHED_READ = "resource"


@router.get("/dataresource/{key}", response_class=JSONResponse,
             responses={200: {"model": DataResource}})
async def get_resource(key: str, caller: CallerDep, store: StoreDep, request: Request
                       ) -> Response:
    """The resource with this key, with fields and tags."""
    # async: one resource is a short read, cheaper on the event loop than in a worker thread
    # where the store allows it (deps.read_quickly); a repeated one is answered from the
    # process's read cache while nothing in the store changed (server/read_cache.py), before
    # it is even routed here (edge.CachedReads).
    reads: ReadCache = request.app.state.reads

    async def read() -> bytes:
        return dumps(await read_quickly(store, resource_views.read_resource, store, caller, key))

    body = await reads.fetch((CACHED_READ, key), caller, read)
    return Response(body, media_type=JSONResponse.media_type)


@router.put("/dataresource/source/{source_name:path}", openapi_extra=json_body(ResourceChange),
            responses={200: {"model": DataResource}})
def update_by_path(
    source_name: str,
    caller: CallerDep,
    store: StoreDep,
    resource_path: Annotated[str, Query(alias="resourcePath", min_length=1)],
    body: Annotated[Any, Body()] = None,
) -> JSONResponse:
    """Change people-owned properties of the resource at ``resourcePath`` (Steward+)."""
    return JSONResponse(
        resource_updates.update_resource(store, caller, body, None, source_name, resource_path))


@router.put("/dataresource", include_in_schema=False, openapi_extra=json_body(ResourceChange))
def update_in_folder(
    caller: CallerDep,
    store: StoreDep,
    resource_path: Annotated[str, Query(alias="resourcePath", min_length=1)],
    virtual_folder_name: Annotated[str, Query(alias="virtualFolderName", min_length=1)],
    body: Annotated[Any, Body()] = None,
) -> JSONResponse:
    """The product's form of ``PUT /dataresource/source/{sourceName}`` (docs/compatibility.md):
    the resource at ``resourcePath`` of the virtual folder ``virtualFolderName``."""
    return JSONResponse(resource_updates.update_resource(
        store, caller, body, None, path=resource_path, folder_name=virtual_folder_name))


@router.put("/dataresource/{key}", openapi_extra=json_body(ResourceChange),
            responses={200: {"model": DataResource}})
def update_resource(
    key: str, caller: CallerDep, store: StoreDep, body: Annotated[Any, Body()] = None
) -> JSONResponse:
    """Change people-owned properties of the resource with this key (Steward+)."""
    return JSONResponse(resource_updates.update_resource(store, caller, body, key))
