"""Favorites (``/favorites``): the resources the caller keeps at hand; see docs/objects-api.md.

A favorite belongs to the caller. Keeping favorites needs the Analyst access level or above
(Guests read: their list is empty); only resources the caller sees can be favorites, and the
list leaves out those no longer visible. Every write is audited.
"""

from __future__ import annotations

from fastapi import APIRouter, Response

from catalog_nb.contract import AccessLevel, AuditAction, AuditObjectType
from catalog_nb.server.auditing import audited
from catalog_nb.server.deps import CallerDep, StoreDep
from catalog_nb.server.responses import JSONResponse
from catalog_nb.server.schemas.answers import Favorite, FavoritePage
from catalog_nb.server.security import require_level
from catalog_nb.server.services.resource_views import shape
from catalog_nb.server.store import favorites as favorite_store
from catalog_nb.server.store import resources as resource_store
from catalog_nb.server.store.visible import visibility

router = APIRouter(tags=["favorites"])

_WRITE = "Keeping favorites"


@router.get("/favorites", responses={200: {"model": FavoritePage}})
def list_favorites(caller: CallerDep, store: StoreDep) -> JSONResponse:
    """The caller's favorite resources they still see, newest first: ``{list, totalCount}``,
    each a resource summary (no fields, no tags) with ``favoriteTime``."""
    with store.read() as conn:
        vis = visibility(conn, caller.roles)
        rows = favorite_store.list_for(conn, caller.key, vis)
        listed = shape(conn, caller, vis, rows, fields=False, tags=False,
                       extra={row["key"]: {"favoriteTime": row["favorite_ms"]} for row in rows})
    return JSONResponse({"list": listed, "totalCount": len(listed)})


@router.post("/favorites/{entity_key}", status_code=201, responses={
    201: {"model": Favorite, "description": "Kept as a favorite."},
    200: {"model": Favorite, "description": "It already was a favorite (unchanged)."}})
def add_favorite(entity_key: str, caller: CallerDep, store: StoreDep) -> JSONResponse:
    """Keep a visible resource as a favorite: 201, or 200 when it already was one."""
    with audited(store, caller, AuditAction.CREATE, AuditObjectType.FAVORITE,
                 key=entity_key) as w:
        require_level(caller, AccessLevel.ANALYST, _WRITE)
        vis = visibility(w.conn, caller.roles)
        row = resource_store.get_visible(w.conn, vis, entity_key)
        w.target(row["key"], f"{row['source_name']}:{row['path']}")
        when, created = favorite_store.add(w.conn, caller.key, row["key"])
        w.message = None if created else "already a favorite"
    return JSONResponse({"entityKey": row["key"], "favoriteTime": when},
                        status_code=201 if created else 200)


@router.delete("/favorites/{entity_key}", status_code=204)
def remove_favorite(entity_key: str, caller: CallerDep, store: StoreDep) -> Response:
    """Stop keeping a resource as a favorite (also one no longer visible): 204; 404
    ``FAVORITE_NOT_FOUND`` when it was not one."""
    with audited(store, caller, AuditAction.DELETE, AuditObjectType.FAVORITE,
                 key=entity_key) as w:
        require_level(caller, AccessLevel.ANALYST, _WRITE)
        favorite_store.remove(w.conn, caller.key, entity_key)
    return Response(status_code=204)
