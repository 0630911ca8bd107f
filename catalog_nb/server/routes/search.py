"""Search: keyword and facet search over data resources, stored results and their pages.

See docs/search-api.md. Everything applies the caller's visibility: results, counts and facet
categories only ever come from resources the caller sees. A search runs in one read
transaction; its result (criteria + every matched key in order) is then stored for the session.
"""

from __future__ import annotations

from typing import Any

import orjson
from fastapi import APIRouter
from sqlalchemy import Connection

from catalog_nb.contract import ErrorCode
from catalog_nb.server.deps import CallerDep, SettingsDep, StoreDep
from catalog_nb.server.errors import BadRequest
from catalog_nb.server.responses import JSONResponse
from catalog_nb.server.routes.resources import shape
from catalog_nb.server.schemas.paging import check_resumed, resume_search, search_cursor
from catalog_nb.server.schemas.search import MAX_PHRASE, PageRequest, SearchCriteria
from catalog_nb.server.search.query import QueryError, parse_advanced, parse_basic
from catalog_nb.server.security import Caller, Visibility, visibility
from catalog_nb.server.settings import Settings
from catalog_nb.server.store import Store
from catalog_nb.server.store import facets as facet_store
from catalog_nb.server.store import resources as resource_store
from catalog_nb.server.store import search as search_store

router = APIRouter(tags=["search"])


def _check_size(size: int, settings: Settings) -> None:
    if size > settings.search_page_max:
        raise BadRequest(
            f"pagingCriteria.size is {size}; a page holds at most {settings.search_page_max}.",
            ErrorCode.INVALID_PARAMETER, field="pagingCriteria.size",
        )


def _plan(criteria: SearchCriteria) -> search_store.Plan:
    phrase = criteria.search_phrase or ""
    if len(phrase) > MAX_PHRASE:
        raise BadRequest(
            f"The search phrase has {len(phrase)} characters; at most {MAX_PHRASE} are taken.",
            ErrorCode.INVALID_QUERY, field="searchPhrase",
        )
    try:
        node = (parse_advanced(phrase, partial=criteria.partial_search)
                if criteria.search_type == "ADVANCED"
                else parse_basic(phrase, partial=criteria.partial_search))
    except QueryError as exc:
        what = "ADVANCED query is malformed" if criteria.search_type == "ADVANCED" else (
            "BASIC phrase is refused")
        raise BadRequest(f"The {what}: {exc}", ErrorCode.INVALID_QUERY,
                         field="searchPhrase") from exc
    sort = []
    for spec in criteria.sort_by_specs:
        if spec.property_name not in search_store.SORT_PROPERTIES:
            known = ", ".join(search_store.SORT_PROPERTIES)
            raise BadRequest(
                f"Results cannot be sorted by '{spec.property_name}'; sort by one of {known}.",
                ErrorCode.INVALID_PAYLOAD, field="sortBySpecs",
            )
        ascending = spec.ascending
        sort.append((spec.property_name,
                      spec.property_name != "score" if ascending is None else ascending))
    selections: dict[str, list[str]] = {}
    for selection in criteria.facet_selections:
        chosen = selections.setdefault(selection.facet_name, [])
        chosen.extend(c for c in selection.facet_categories if c not in chosen)
    return search_store.Plan(node, {k: v for k, v in selections.items() if v}, sort)


def _entities(
    conn: Connection, caller: Caller, vis: Visibility, matches: list[list[Any]], start: int,
    size: int,
) -> tuple[list[orjson.Fragment], list[str], int]:
    """The page's entities (read fresh; invisible or removed ones left out), their keys, and how
    many of the page's stored keys were left out."""
    page = matches[start:start + size]
    rows = resource_store.by_keys(conn, vis, [k for k, _ in page])
    present = [rows[k] for k, _ in page if k in rows]
    scores = {k: {"score": s} for k, s in page}
    shaped = shape(conn, caller, vis, present, fields=False, tags=False, extra=scores)
    return shaped, [r["key"] for r in present], len(page) - len(present)


def _result(
    key: str, criteria: dict[str, Any], summary: dict[str, Any], matches: list[list[Any]],
    found: tuple[list[orjson.Fragment], list[str], int], start: int, size: int,
) -> JSONResponse:
    entities, keys, removed = found
    total = len(matches)
    end = min(start + size, total)
    next_cursor = search_cursor(key, end, total, matches[end - 1][0]) if end > start else None
    body = {
        "key": key,
        "searchPhrase": criteria.get("searchPhrase"),
        "facetResults": summary["facetResults"],
        "preFilters": [],
        "facetSelections": criteria.get("facetSelections", []),
        "entities": entities,
        "matchedEntityCount": total,
        "totalResultCount": total,
        "responseEntityCount": len(entities),
        "matchedKeys": keys,
        "start": start,
        "size": size,
        "removedSinceSearch": removed,
        "facetGroups": [],
        "refDataResources": [],
        "nextCursor": next_cursor,
    }
    return JSONResponse(body, status_code=201)


def _run(
    store: Store, settings: Settings, caller: Caller, criteria: SearchCriteria
) -> JSONResponse:
    paging = criteria.paging_criteria
    _check_size(paging.size, settings)
    plan = _plan(criteria)
    wire = criteria.model_dump(mode="json", by_alias=True)
    with store.read() as conn:
        vis = visibility(conn, caller.roles)
        ctx = facet_store.facet_context(conn, vis)
        facet_store.check_selections(conn, vis, ctx, plan.selections)
        outcome = search_store.search(conn, vis, ctx, plan)
        found = _entities(conn, caller, vis, outcome.matches, paging.start, paging.size)
    summary = {"facetResults": outcome.facet_results}
    with store.write() as conn:
        key = search_store.save(conn, str(caller.token), wire, summary, outcome.matches)
    return _result(key, wire, summary, outcome.matches, found, paging.start, paging.size)


@router.post("/search/new")
def new_search(
    criteria: SearchCriteria, caller: CallerDep, store: StoreDep, settings: SettingsDep
) -> JSONResponse:
    """Search by phrase and facets; the result is stored for the session under its key."""
    return _run(store, settings, caller, criteria)


@router.post("/search/runFacet")
def run_facet(
    criteria: SearchCriteria, caller: CallerDep, store: StoreDep, settings: SettingsDep
) -> JSONResponse:
    """Search by facet selections only (a phrase belongs to /search/new)."""
    if (criteria.search_phrase or "").strip():
        raise BadRequest(
            "/search/runFacet searches by facets only; send a search phrase to /search/new.",
            ErrorCode.INVALID_PAYLOAD, field="searchPhrase",
        )
    return _run(store, settings, caller, criteria)


@router.post("/search/page")
def page(
    request: PageRequest, caller: CallerDep, store: StoreDep, settings: SettingsDep
) -> JSONResponse:
    """Another page of the session's latest search (or of the one named by ``key``, or the one
    after ``cursor``), in the order stored when it ran; entities are read fresh."""
    paging = request.paging_criteria
    _check_size(paging.size, settings)
    resume = resume_search(request.cursor, request.key) if request.cursor else None
    start = resume.position if resume is not None else paging.start
    with store.read() as conn:
        stored = search_store.load(conn, str(caller.token),
                                   resume.query if resume is not None else request.key)
        matches = list(stored["ordered"])
        if resume is not None:
            check_resumed(resume, matches)
        vis = visibility(conn, caller.roles)
        found = _entities(conn, caller, vis, matches, start, paging.size)
    return _result(stored["key"], stored["criteria"], stored["summary"], matches, found, start,
                   paging.size)


@router.get("/search/facets")
def facets(caller: CallerDep, store: StoreDep) -> JSONResponse:
    """Every facet with the categories that hold at least one resource the caller sees."""
    with store.read() as conn:
        vis = visibility(conn, caller.roles)
        ctx = facet_store.facet_context(conn, vis)
        listed = facet_store.facet_catalogue(conn, vis, ctx)
    return JSONResponse({"DATA_RESOURCE": listed})
