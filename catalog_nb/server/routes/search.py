"""Search: keyword and facet search over data resources, stored results and their pages.

See docs/search-api.md. Everything applies the caller's visibility: results, counts and facet
categories only ever come from resources the caller sees. A search runs in one read
transaction; its result (criteria + every matched key in order) is then stored for the session.
A search without a keyword answers from the facet cells and its first page; its read stays open
until the process's ordering thread (``server.orderings``) has ordered every match on the same
snapshot and stored them, and a page of that result waits for them (``_ready``).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from contextlib import ExitStack
from typing import Any

import orjson
from fastapi import APIRouter, Request
from sqlalchemy import Connection

from catalog_nb.contract import ErrorCode
from catalog_nb.server.deps import CallerDep, SettingsDep, StoreDep
from catalog_nb.server.errors import BadRequest
from catalog_nb.server.orderings import Orderings
from catalog_nb.server.responses import JSONResponse
from catalog_nb.server.routes.resources import shape
from catalog_nb.server.schemas.paging import Cursor, check_resumed, resume_search, search_cursor
from catalog_nb.server.schemas.search import MAX_PHRASE, PageRequest, SearchCriteria
from catalog_nb.server.search.query import QueryError, parse_advanced, parse_basic
from catalog_nb.server.security import Caller, Visibility, visibility
from catalog_nb.server.settings import Settings
from catalog_nb.server.store import Store
from catalog_nb.server.store import facets as facet_store
from catalog_nb.server.store import resources as resource_store
from catalog_nb.server.store import search as search_store
from catalog_nb.server.store.interrupts import Interrupted, Interruptible

router = APIRouter(tags=["search"])
log = logging.getLogger(__name__)
#: How long a page waits for its result's matches to be ordered, and how often it looks.
ORDERING_WAIT, ORDERING_POLL = 10.0, 0.01


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
    found: tuple[list[orjson.Fragment], list[str], int], start: int, size: int, total: int,
) -> JSONResponse:
    entities, keys, removed = found
    end = min(start + size, total, len(matches))
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
    store: Store, settings: Settings, caller: Caller, criteria: SearchCriteria,
    orderings: Orderings,
) -> JSONResponse:
    paging = criteria.paging_criteria
    _check_size(paging.size, settings)
    plan = _plan(criteria)
    wire = criteria.model_dump(mode="json", by_alias=True)
    # The read stays open past the answer when only the first page's matches were read: the
    # rest are ordered after it on the same snapshot (_order_rest), so pages never disagree
    # with the counts and the first page.
    held = ExitStack()
    try:
        conn = held.enter_context(store.read(snapshot=True))
        vis = visibility(conn, caller.roles)
        ctx = facet_store.facet_context(conn, vis)
        facet_store.check_selections(conn, vis, ctx, plan.selections)
        # The ordering of the session's search before this one is of no more use (this one's
        # save leaves that search to its pages), and would compete with this one.
        orderings.stop(str(caller.token))
        # An in-memory store has one connection: a read held open would stall the save.
        first = None if store.in_memory else paging.start + paging.size
        outcome = search_store.search(conn, vis, ctx, plan, first=first)
        found = _entities(conn, caller, vis, outcome.matches, paging.start, paging.size)
    except BaseException:
        held.close()
        raise
    if outcome.complete:
        held.close()
    summary = {"facetResults": outcome.facet_results}
    try:
        with store.write() as w:
            key = search_store.save(w, str(caller.token), wire, summary, outcome.matches,
                                    matched=None if outcome.complete else outcome.matched)
    except BaseException:
        held.close()
        raise
    if not outcome.complete:
        # On the ordering thread, not in a task run after the answer is sent: the held read
        # must end even when sending fails.
        try:
            token = str(caller.token)
            stop = Interruptible(conn)
            orderings.submit(
                token, key, skip=held.close, cancel=stop.interrupt,
                run=lambda: _order_rest(store, held, stop, vis, ctx, plan, key,
                                        superseded=lambda: orderings.superseded(token, key)))
        except BaseException:
            held.close()  # the result stays 'ordering': its first page orders it
            raise
    return _result(key, wire, summary, outcome.matches, found, paging.start, paging.size,
                   outcome.matched)


def _order_rest(
    store: Store, held: ExitStack, stop: Interruptible, vis: Visibility,
    ctx: facet_store.FacetContext, plan: search_store.Plan, key: str,
    superseded: Callable[[], bool] = lambda: False,
) -> None:
    """After the answer: every match of a stored result in order, on its search's snapshot
    (``stop``'s connection, which may interrupt it); not stored when the session searched again
    meanwhile (``superseded``): the result is left to its pages (DEFERRED), and the session's
    new search does not wait for this write."""
    try:
        with stop.running():
            matches = search_store.order_all(stop.connection, vis, ctx, plan)
    except Interrupted:
        return  # the session searched again: its pages ask for that search
    except Exception:
        # The result stays 'ordering': a page waiting for it orders it itself (_ready).
        log.exception("ordering the matches of search %s failed", key)
        return
    finally:
        held.close()
    if superseded():
        return
    try:
        with store.write() as w:
            search_store.complete(w, key, matches)
    except Exception:
        log.exception("storing the ordered matches of search %s failed", key)


def _ready(store: Store, caller: Caller, stored: dict[str, Any],
           orderings: Orderings) -> dict[str, Any]:
    """The stored result with every match: waits for its ordering (which may run in another
    worker process: the store is asked again), or orders it after ``ORDERING_WAIT`` seconds
    (on a new snapshot: the ordering was lost with the process that ran it), or at once when
    it was left to its pages (``DEFERRED``: the session searched again meanwhile)."""
    deadline = time.monotonic() + ORDERING_WAIT
    token, key = str(caller.token), str(stored["key"])
    # An ordering waiting or running in this process is waited for even when the result was
    # left to its pages (a later search of the session that orders nothing): it orders on the
    # search's own snapshot.
    if stored.get("state") != search_store.READY and orderings.holds(token, key):
        orderings.hurry(token, key)
        while orderings.holds(token, key):
            time.sleep(ORDERING_POLL)
        with store.read() as conn:  # after the ordering ended: what it stored is there
            stored = search_store.load(conn, token, key)
    while stored.get("state") == search_store.ORDERING and time.monotonic() < deadline:
        time.sleep(ORDERING_POLL)
        with store.read() as conn:
            stored = search_store.load(conn, token, stored["key"])
    if stored.get("state") == search_store.READY:
        return stored
    criteria = SearchCriteria.model_validate(stored["criteria"])
    plan = _plan(criteria)
    with store.read() as conn:
        vis = visibility(conn, caller.roles)
        ctx = facet_store.facet_context(conn, vis)
        matches = search_store.order_all(conn, vis, ctx, plan)
    with store.write() as w:
        if not search_store.complete(w, str(stored["key"]), matches):
            return search_store.load(w, token, stored["key"])
    return {**stored, "ordered": matches, "state": search_store.READY}


@router.post("/search/new")
def new_search(
    criteria: SearchCriteria, caller: CallerDep, store: StoreDep, settings: SettingsDep,
    request: Request,
) -> JSONResponse:
    """Search by phrase and facets; the result is stored for the session under its key."""
    return _run(store, settings, caller, criteria, request.app.state.orderings)


@router.post("/search/runFacet")
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
    return _run(store, settings, caller, criteria, request.app.state.orderings)


@router.post("/search/page")
def page(
    request: PageRequest, caller: CallerDep, store: StoreDep, settings: SettingsDep,
    http: Request,
) -> JSONResponse:
    """Another page of the session's latest search (or of the one named by ``key``, or the one
    after ``cursor``), in the order stored when it ran; entities are read fresh."""
    paging = request.paging_criteria
    _check_size(paging.size, settings)
    resume = resume_search(request.cursor, request.key) if request.cursor else None
    start = resume.position if resume is not None else paging.start
    wanted = resume.query if resume is not None else request.key
    with store.read() as conn:
        stored = search_store.load(conn, str(caller.token), wanted)
        if stored.get("state") == search_store.READY:
            return _page_of(conn, caller, stored, resume, start, paging.size)
    stored = _ready(store, caller, stored, http.app.state.orderings)
    with store.read() as conn:
        return _page_of(conn, caller, stored, resume, start, paging.size)


def _page_of(
    conn: Connection, caller: Caller, stored: dict[str, Any], resume: Cursor | None, start: int,
    size: int,
) -> JSONResponse:
    matches = list(stored["ordered"])
    if resume is not None:
        check_resumed(resume, matches)
    vis = visibility(conn, caller.roles)
    found = _entities(conn, caller, vis, matches, start, size)
    return _result(stored["key"], stored["criteria"], stored["summary"], matches, found, start,
                   size, len(matches))


@router.get("/search/facets")
def facets(caller: CallerDep, store: StoreDep) -> JSONResponse:
    """Every facet with the categories that hold at least one resource the caller sees."""
    with store.read() as conn:
        vis = visibility(conn, caller.roles)
        ctx = facet_store.facet_context(conn, vis)
        listed = search_store.facet_catalogue(conn, vis, ctx)
    return JSONResponse({"DATA_RESOURCE": listed})
