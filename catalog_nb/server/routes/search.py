"""Search: keyword and facet search over data resources, stored results and their pages.

See docs/search-api.md. The searching itself (plans, visibility, stored results, the ordering
of a facet-only search's matches after the answer) is ``services.searching``; this router
parses the requests and writes the answers.
"""

from __future__ import annotations

from fastapi import APIRouter, Request

from catalog_nb.contract import ErrorCode
from catalog_nb.server.deps import CallerDep, SettingsDep, StoreDep
from catalog_nb.server.errors import BadRequest
from catalog_nb.server.responses import JSONResponse
from catalog_nb.server.schemas.answers import FacetCatalogue, SearchResult
from catalog_nb.server.schemas.paging import search_cursor
from catalog_nb.server.schemas.search import PageRequest, SearchCriteria
from catalog_nb.server.services import searching
from catalog_nb.server.services.searching import ResultPage

router = APIRouter(tags=["search"])


def _answer(page: ResultPage) -> JSONResponse:
    """The answer of a search or page: the page's entities and the result's counts and facets,
    with the cursor of the page after it (null on the last)."""
    key, criteria, matches = page.key, page.criteria, page.matches
    start, size, total = page.start, page.size, page.total
    end = min(start + size, total, len(matches))
    next_cursor = search_cursor(key, end, total, matches[end - 1][0]) if end > start else None
    body = {
        "key": key,
        "searchPhrase": criteria.get("searchPhrase"),
        "facetResults": page.summary["facetResults"],
        "preFilters": [],
        "facetSelections": criteria.get("facetSelections", []),
        "entities": page.entities,
        "matchedEntityCount": total,
        "totalResultCount": total,
        "responseEntityCount": len(page.entities),
        "matchedKeys": page.keys,
        "start": start,
        "size": size,
        "removedSinceSearch": page.removed,
        "facetGroups": [],
        "refDataResources": [],
        "nextCursor": next_cursor,
    }
    return JSONResponse(body, status_code=201)


@router.post("/search/new", status_code=201, responses={201: {"model": SearchResult}})
def new_search(
    criteria: SearchCriteria, caller: CallerDep, store: StoreDep, settings: SettingsDep,
    request: Request,
) -> JSONResponse:
    """Search by phrase and facets; the result is stored for the session under its key."""
    return _answer(searching.run(store, settings, caller, criteria, request.app.state.orderings))


@router.post("/search/runFacet", status_code=201, responses={201: {"model": SearchResult}})
def run_facet(
    criteria: SearchCriteria, caller: CallerDep, store: StoreDep, settings: SettingsDep,
    request: Request,
) -> JSONResponse:
    """Search by facet selections only (a phrase belongs to /search/new)."""
    if (criteria.search_phrase or "").strip():
        raise BadRequest(
            "/search/runFacet searches by facets only; send a search phrase to /search/new.",
            ErrorCode.INVALID_PAYLOAD, field="searchPhrase",
        )
    return _answer(searching.run(store, settings, caller, criteria, request.app.state.orderings))


@router.post("/search/page", status_code=201, responses={201: {"model": SearchResult}})
def page(
    request: PageRequest, caller: CallerDep, store: StoreDep, settings: SettingsDep,
    http: Request,
) -> JSONResponse:
    """Another page of the session's latest search (or of the one named by ``key``, or the one
    after ``cursor``), in the order stored when it ran; entities are read fresh."""
    return _answer(searching.result_page(store, settings, caller, request,
                                         http.app.state.orderings))


@router.get("/search/facets", responses={200: {"model": FacetCatalogue}})
def facets(caller: CallerDep, store: StoreDep) -> JSONResponse:
    """Every facet with the categories that hold at least one resource the caller sees."""
    return JSONResponse({"DATA_RESOURCE": searching.facet_catalogue(store, caller)})
