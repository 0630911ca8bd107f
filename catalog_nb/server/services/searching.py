"""Running a search: the plan from the criteria (phrase parsed, sort and facet selections
checked), the matches and facet counts in one read, the result stored for the session, and
pages of stored results read fresh.

Everything applies the caller's visibility: results, counts and facet categories only ever come
from resources the caller sees. A search runs in one read transaction; its result (criteria +
every matched key in order) is then stored for the session. A search without a keyword answers
from the facet cells and its first page; its read stays open until the process's ordering thread
(``server.orderings``) has ordered every match on the same snapshot and stored them, and a page
of that result waits for them (:func:`_ready`). See docs/search-api.md.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass
from typing import Any

import orjson
from sqlalchemy import Connection

from catalog_nb.contract import ErrorCode
from catalog_nb.server.errors import BadRequest
from catalog_nb.server.orderings import Orderings
from catalog_nb.server.schemas.paging import Cursor, check_resumed, resume_search
from catalog_nb.server.schemas.search import MAX_PHRASE, PageRequest, SearchCriteria
from catalog_nb.server.search.query import QueryError, parse_advanced, parse_basic
from catalog_nb.server.security import Caller
from catalog_nb.server.services.resource_views import shape
from catalog_nb.server.settings import Settings
from catalog_nb.server.store import Store
from catalog_nb.server.store import facets as facet_store
from catalog_nb.server.store import resources as resource_store
from catalog_nb.server.store import search as search_store
from catalog_nb.server.store.interrupts import Interrupted, Interruptible
from catalog_nb.server.store.visible import visibility
from catalog_nb.server.visibility import Visibility

#: The log of ``routes.search``, where these lines were written before this module was split off.
log = logging.getLogger("catalog_nb.server.routes.search")
#: How long a page waits for its result's matches to be ordered, and how often it looks.
ORDERING_WAIT, ORDERING_POLL = 10.0, 0.01


@dataclass(frozen=True)
class ResultPage:
    """A page of a stored search result, as the answer sends it."""

    key: str
    #: The criteria as sent (wire form) and the summary stored with the result.
    criteria: dict[str, Any]
    summary: dict[str, Any]
    #: Every stored match so far, ``[key, score]``, in order.
    matches: list[list[Any]]
    #: The page's resources (read fresh: invisible or removed ones left out), their keys, and
    #: how many of the page's stored keys were left out.
    entities: list[orjson.Fragment]
    keys: list[str]
    removed: int
    start: int
    size: int
    total: int


def check_size(size: int, settings: Settings) -> None:
    """400 for a page larger than the service sends."""
    if size > settings.search_page_max:
        raise BadRequest(
            f"pagingCriteria.size is {size}; a page holds at most {settings.search_page_max}.",
            ErrorCode.INVALID_PARAMETER, field="pagingCriteria.size",
        )


def plan(criteria: SearchCriteria) -> search_store.Plan:
    """The store's plan of a search: the phrase parsed (400 for a malformed one), the sort
    checked and the facet selections merged per facet."""
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


def run(
    store: Store, settings: Settings, caller: Caller, criteria: SearchCriteria,
    orderings: Orderings,
) -> ResultPage:
    """Run a search by ``criteria`` and store its result for the caller's session; its first
    page."""
    paging = criteria.paging_criteria
    check_size(paging.size, settings)
    planned = plan(criteria)
    wire = criteria.model_dump(mode="json", by_alias=True)
    # The read stays open past the answer when only the first page's matches were read: the
    # rest are ordered after it on the same snapshot (_order_rest), so pages never disagree
    # with the counts and the first page.
    held = ExitStack()
    try:
        conn = held.enter_context(store.read(snapshot=True))
        vis = visibility(conn, caller.roles)
        ctx = facet_store.facet_context(conn, vis)
        facet_store.check_selections(conn, vis, ctx, planned.selections)
        # The ordering of the session's search before this one is of no more use (this one's
        # save leaves that search to its pages), and would compete with this one.
        orderings.stop(str(caller.token))
        # An in-memory store has one connection: a read held open would stall the save.
        first = None if store.in_memory else paging.start + paging.size
        outcome = search_store.search(conn, vis, ctx, planned, first=first)
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
                run=lambda: _order_rest(store, held, stop, vis, ctx, planned, key,
                                        superseded=lambda: orderings.superseded(token, key)))
        except BaseException:
            held.close()  # the result stays 'ordering': its first page orders it
            raise
    entities, keys, removed = found
    return ResultPage(key, wire, summary, outcome.matches, entities, keys, removed,
                      paging.start, paging.size, outcome.matched)


def _order_rest(
    store: Store, held: ExitStack, stop: Interruptible, vis: Visibility,
    ctx: facet_store.FacetContext, planned: search_store.Plan, key: str,
    superseded: Callable[[], bool] = lambda: False,
) -> None:
    """After the answer: every match of a stored result in order, on its search's snapshot
    (``stop``'s connection, which may interrupt it); not stored when the session searched again
    meanwhile (``superseded``): the result is left to its pages (DEFERRED), and the session's
    new search does not wait for this write."""
    try:
        with stop.running():
            matches = search_store.order_all(stop.connection, vis, ctx, planned)
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
    planned = plan(criteria)
    with store.read() as conn:
        vis = visibility(conn, caller.roles)
        ctx = facet_store.facet_context(conn, vis)
        matches = search_store.order_all(conn, vis, ctx, planned)
    with store.write() as w:
        if not search_store.complete(w, str(stored["key"]), matches):
            return search_store.load(w, token, stored["key"])
    return {**stored, "ordered": matches, "state": search_store.READY}


def result_page(
    store: Store, settings: Settings, caller: Caller, request: PageRequest,
    orderings: Orderings,
) -> ResultPage:
    """Another page of the session's latest search (or of the one named by ``key``, or the one
    after ``cursor``), in the order stored when it ran; entities are read fresh."""
    paging = request.paging_criteria
    check_size(paging.size, settings)
    resume = resume_search(request.cursor, request.key) if request.cursor else None
    start = resume.position if resume is not None else paging.start
    wanted = resume.query if resume is not None else request.key
    with store.read() as conn:
        stored = search_store.load(conn, str(caller.token), wanted)
        if stored.get("state") == search_store.READY:
            return _page_of(conn, caller, stored, resume, start, paging.size)
    stored = _ready(store, caller, stored, orderings)
    with store.read() as conn:
        return _page_of(conn, caller, stored, resume, start, paging.size)


def facet_catalogue(store: Store, caller: Caller) -> list[Any]:
    """Every facet with the categories that hold at least one resource the caller sees."""
    with store.read() as conn:
        vis = visibility(conn, caller.roles)
        ctx = facet_store.facet_context(conn, vis)
        return search_store.facet_catalogue(conn, vis, ctx)


def _page_of(
    conn: Connection, caller: Caller, stored: dict[str, Any], resume: Cursor | None, start: int,
    size: int,
) -> ResultPage:
    matches = list(stored["ordered"])
    if resume is not None:
        check_resumed(resume, matches)
    vis = visibility(conn, caller.roles)
    entities, keys, removed = _entities(conn, caller, vis, matches, start, size)
    return ResultPage(stored["key"], stored["criteria"], stored["summary"], matches, entities,
                      keys, removed, start, size, len(matches))
