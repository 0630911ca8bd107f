"""Reviews (``/reviews``): one rating (1-5) with a title and a text per user and resource.

See docs/objects-api.md. Reading follows the resource's visibility: a review of a resource the
caller does not see answers 404 like one that does not exist. Writing needs the Analyst access
level or above; a review is changed by its author only, and deleted by its author or an
Administrator. The resource's ``averageRating`` and ``ratingCount`` are computed from the
reviews (``store.reviews.rating_stats``). Every write is audited.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Annotated, Any

from fastapi import APIRouter, Query, Response

from catalog_nb.contract import AccessLevel, AuditAction, AuditObjectType, ErrorCode
from catalog_nb.server.auditing import audited
from catalog_nb.server.deps import CallerDep, StoreDep
from catalog_nb.server.errors import BadRequest, Forbidden
from catalog_nb.server.responses import JSONResponse
from catalog_nb.server.schemas.answers import ReviewOut, ReviewPage
from catalog_nb.server.schemas.objects import (
    ReviewIn,
    ReviewUpdate,
    check_rating,
    review_out,
)
from catalog_nb.server.security import Caller, require_level
from catalog_nb.server.store import resources as resource_store
from catalog_nb.server.store import reviews as review_store
from catalog_nb.server.store.visible import visibility

router = APIRouter(tags=["reviews"])

_WRITE = "Reviewing data resources"


def _listing(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    ratings = [int(r["rating"]) for r in rows]
    return {
        "list": [review_out(r) for r in rows],
        "totalCount": len(rows),
        "averageRating": round(sum(ratings) / len(ratings), 2) if ratings else 0.0,
        "ratingCount": len(ratings),
    }


def _name(row: Mapping[str, Any]) -> str:
    return f"{row['source_name']}:{row['resource_path']} by {row['user_name']}"


def _author(caller: Caller, row: Mapping[str, Any], doing: str) -> None:
    if row["user_key"] != caller.key:
        raise Forbidden(f"{doing} a review is for its author ({row['user_name']}) only.",
                        ErrorCode.PERMISSION_DENIED)


@router.get("/reviews", responses={200: {"model": ReviewPage}})
def list_reviews(
    caller: CallerDep, store: StoreDep,
    entity_key: Annotated[str | None, Query(alias="entityKey", max_length=64)] = None,
) -> JSONResponse:
    """The reviews of a resource (``entityKey``), or the caller's own, newest first:
    ``{list, totalCount, averageRating, ratingCount}``."""
    with store.read() as conn:
        vis = visibility(conn, caller.roles)
        if entity_key is not None:
            resource = resource_store.get_visible(conn, vis, entity_key)
            rows = review_store.of_resource(conn, resource["key"])
        else:
            rows = review_store.of_user(conn, caller.key, vis)
    return JSONResponse(_listing(rows))


@router.get("/reviews/{key}", responses={200: {"model": ReviewOut}})
def get_review(key: str, caller: CallerDep, store: StoreDep) -> JSONResponse:
    """The review with this key (404 when its resource is not visible)."""
    with store.read() as conn:
        row = review_store.get_visible(conn, visibility(conn, caller.roles), key)
    return JSONResponse(review_out(row))


@router.post("/reviews", status_code=201, responses={201: {"model": ReviewOut}})
def create_review(body: ReviewIn, caller: CallerDep, store: StoreDep) -> JSONResponse:
    """Review a visible resource (Analyst+): 201; 409 ``DUPLICATE_REVIEW`` for a second one."""
    with audited(store, caller, AuditAction.CREATE, AuditObjectType.REVIEW,
                 name=body.entity_key) as w:
        require_level(caller, AccessLevel.ANALYST, _WRITE)
        rating = check_rating(body.rating)
        resource = resource_store.get_visible(w.conn, visibility(w.conn, caller.roles),
                                              body.entity_key)
        row = review_store.create(w.conn, resource["key"], caller.key, caller.name,
                                  {"rating": rating, "title": body.title, "text": body.text})
        w.target(row["key"], _name(row))
        w.message = f"rating {rating}"
    return JSONResponse(review_out(row), status_code=201)


@router.put("/reviews/{key}", responses={200: {"model": ReviewOut}})
def update_review(key: str, body: ReviewUpdate, caller: CallerDep,
                  store: StoreDep) -> JSONResponse:
    """Change one's own review (absent properties unchanged): the updated review."""
    with audited(store, caller, AuditAction.UPDATE, AuditObjectType.REVIEW, key=key) as w:
        require_level(caller, AccessLevel.ANALYST, _WRITE)
        row = review_store.get_visible(w.conn, visibility(w.conn, caller.roles), key)
        w.target(row["key"], _name(row))
        _author(caller, row, "Changing")
        for sent, own in (("key", row["key"]), ("entity_key", row["resource_key"])):
            value = getattr(body, sent)
            if value is not None and value != own:
                raise BadRequest(
                    f"The body's {'entityKey' if sent == 'entity_key' else sent} '{value}' is "
                    f"not this review's ('{own}'); a review cannot move.",
                    ErrorCode.INVALID_PAYLOAD, field=sent,
                )
        values = body.values()
        row = review_store.change(w.conn, key, values)
        w.message = f"sent {', '.join(sorted(values)) or 'nothing'}"
    return JSONResponse(review_out(row))


@router.delete("/reviews/{key}", status_code=204)
def delete_review(key: str, caller: CallerDep, store: StoreDep) -> Response:
    """Delete a review (its author, or an Administrator): 204."""
    with audited(store, caller, AuditAction.DELETE, AuditObjectType.REVIEW, key=key) as w:
        require_level(caller, AccessLevel.ANALYST, _WRITE)
        row = review_store.get_visible(w.conn, visibility(w.conn, caller.roles), key)
        w.target(row["key"], _name(row))
        if not caller.admin:
            _author(caller, row, "Deleting")
        review_store.remove(w.conn, key)
    return Response(status_code=204)
