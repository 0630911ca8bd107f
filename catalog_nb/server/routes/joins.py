"""Join conditions (extension): ``GET /joincondition``, every visible condition once.

A resource's own conditions come with the resource (``joinConditions`` of ``GET
/dataresource/{key}``); this list is for catalog-wide pictures such as the join graph.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from catalog_nb.contract import ErrorCode
from catalog_nb.server.deps import CallerDep, StoreDep
from catalog_nb.server.errors import BadRequest, NotFound
from catalog_nb.server.responses import JSONResponse
from catalog_nb.server.schemas.answers import JoinConditionPage
from catalog_nb.server.schemas.joins import page_out
from catalog_nb.server.schemas.resource_query import split_list
from catalog_nb.server.store import joins as join_store
from catalog_nb.server.store import overlap as overlap_store
from catalog_nb.server.store import sources as source_store
from catalog_nb.server.store.folders import specs_of
from catalog_nb.server.store.resources import R
from catalog_nb.server.store.visible import specs_condition, visibility

router = APIRouter(tags=["joins"])

MAX_PAGE = 1000


@router.get("/joincondition", responses={200: {"model": JoinConditionPage}})
def list_conditions(
    caller: CallerDep,
    store: StoreDep,
    start: int = 0,
    size: int = MAX_PAGE,
    data_source: Annotated[str | None, Query(alias="dataSource")] = None,
    virtual_folder: Annotated[str | None, Query(alias="virtualFolder")] = None,
    min_score: Annotated[float | None, Query(alias="minScore")] = None,
    origin: Annotated[list[str] | None, Query()] = None,
) -> JSONResponse:
    """A page of the visible join conditions, best score first: ``{list, totalCount, start,
    size}``. ``dataSource`` (name) and ``virtualFolder`` (name) keep conditions with at least
    one end inside; ``origin`` is DECLARED and/or DISCOVERED (repeated or ``;``-separated)."""
    if start < 0 or not 1 <= size <= MAX_PAGE:
        raise BadRequest(f"start must be 0 or more and size between 1 and {MAX_PAGE}.",
                         ErrorCode.INVALID_PARAMETER)
    if min_score is not None and not 0.0 <= min_score <= 1.0:
        raise BadRequest(f"minScore must be between 0 and 1, not {min_score}.",
                         ErrorCode.INVALID_PARAMETER)
    origins = [o.upper() for o in split_list(v.replace(";", ",") for v in origin or [])]
    unknown = [o for o in origins if o not in join_store.ORIGINS]
    if unknown:
        raise BadRequest(f"Unknown origin(s) {', '.join(unknown)}; use DECLARED or DISCOVERED.",
                         ErrorCode.INVALID_PARAMETER)
    query = join_store.ListQuery(start=start, size=size, min_score=min_score, origins=origins)
    with store.read() as conn:
        vis = visibility(conn, caller.roles)
        scopes = []
        if data_source:
            try:
                source = source_store.get_source_by_name(conn, data_source)
            except NotFound:
                source = None
            if source is None or not vis.touches(source["key"]):
                raise NotFound(f"There is no data source named '{data_source}'.",
                               ErrorCode.DATA_SOURCE_NOT_FOUND)
            scopes.append(R.c.data_source_key == source["key"])
        if virtual_folder:
            folder = overlap_store.folder_by_name(conn, vis, virtual_folder)
            scopes.append(specs_condition(conn, specs_of(folder)))
        if scopes:
            query.scope = scopes[0] if len(scopes) == 1 else scopes[0] & scopes[1]
        loaded, total = join_store.list_page(conn, vis, query)
    return JSONResponse(page_out(loaded, total, start, size))
