"""The catalog service application: ``create_app(settings)`` wires routers, errors and the store.

Example::

    import uvicorn
    from catalog_nb.server.app import create_app
    from catalog_nb.server.settings import Settings

    uvicorn.run(create_app(Settings(admin_password="change-me-now")), port=8765)
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import cache
from typing import Any

from fastapi import APIRouter, FastAPI, Request
from fastapi.datastructures import Default
from fastapi.exceptions import RequestValidationError
from fastapi.routing import APIRoute
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.middleware.gzip import DEFAULT_EXCLUDED_CONTENT_TYPES
from starlette.routing import BaseRoute, compile_path

from catalog_nb.contract import API_PREFIX, ARROW_STREAM, ErrorCode, distribution_version
from catalog_nb.server import runtime_config
from catalog_nb.server.callers import CallerCache
from catalog_nb.server.edge import (
    CachedReads,
    GZip,
    RequestGuard,
    error_response,
    service_error_response,
)
from catalog_nb.server.errors import ServiceError
from catalog_nb.server.lifecycle import freeze_startup_heap, service
from catalog_nb.server.openapi import build_openapi
from catalog_nb.server.orderings import Orderings
from catalog_nb.server.read_cache import ReadCache
from catalog_nb.server.responses import JSONResponse
from catalog_nb.server.routes import (
    associations,
    audit,
    auth,
    config,
    custom_properties,
    favorites,
    folders,
    jobs,
    joins,
    lineage,
    overlap,
    resources,
    reviews,
    roles,
    search,
    sources,
    tags,
    users,
)
from catalog_nb.server.settings import Settings
from catalog_nb.server.slashes import TrailingSlash
from catalog_nb.server.store import Store

_PARAMS = ("query", "path", "header", "cookie")


def _describe(errors: list[Any]) -> tuple[ErrorCode, str, list[dict[str, Any]]]:
    details = []
    code = ErrorCode.INVALID_PAYLOAD
    for err in errors:
        loc = [str(p) for p in err.get("loc", ())]
        if err.get("type") == "json_invalid":
            code = ErrorCode.MALFORMED_JSON
        elif loc[-1:] == ["password"] and err.get("type") == "string_too_short":
            code = ErrorCode.WEAK_PASSWORD
        elif loc and loc[0] in _PARAMS and code != ErrorCode.MALFORMED_JSON:
            code = ErrorCode.INVALID_PARAMETER
        where = ".".join(loc[1:]) if len(loc) > 1 else (loc[0] if loc else "")
        text = str(err.get("msg", "invalid")).removeprefix("Value error, ")
        if err.get("type") == "model_attributes_type" and loc == ["body"]:
            text = "the body must be a JSON object, sent with Content-Type: application/json"
        details.append({"field": where, "message": text, "type": err.get("type")})
    if code == ErrorCode.MALFORMED_JSON:
        return code, "The request body is not valid JSON.", details
    if not details:
        return code, "The request is invalid.", details
    first = details[0]
    if first["field"] in ("", "body") and first["type"] == "missing":
        return code, "The request needs a JSON body.", details
    message = "; ".join(
        f"{d['field']}: {d['message']}" if d["field"] else d["message"] for d in details[:5]
    )
    more = f" (and {len(details) - 5} more)" if len(details) > 5 else ""
    return code, f"Invalid request: {message}{more}.", details


class MethodTable:
    """Which methods each path of the API answers, for the ``Allow`` header of a 405.

    Starlette names only the methods of the first route whose path matched, but one path is
    often served by several routes (``GET`` and ``PUT /user/{key}`` are two operations), so the
    table is built from every route of every router once per process (:func:`_method_table`).
    """

    def __init__(self, routes: list[tuple[str, set[str]]]) -> None:
        self._rows = [(compile_path(path)[0], methods) for path, methods in routes]

    def allowed(self, path: str) -> list[str]:
        return sorted({m for regex, listed in self._rows if regex.match(path) for m in listed})


def install_error_handlers(app: FastAPI) -> None:
    """Every error leaves as JSON ``{message, errorCode, status}``; never HTML, never a trace.

    Faults no handler claims are answered by the edge (``edge.RequestGuard``).
    """

    @app.exception_handler(ServiceError)
    async def _service(_: Request, exc: ServiceError) -> JSONResponse:
        return service_error_response(exc)

    @app.exception_handler(RequestValidationError)
    async def _invalid(_: Request, exc: RequestValidationError) -> JSONResponse:
        code, message, details = _describe(list(exc.errors()))
        details = json.loads(json.dumps(details, default=str))
        return error_response(400, code, message, details=details)

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        if exc.status_code == 404:
            return error_response(404, ErrorCode.ROUTE_NOT_FOUND,
                                  f"There is no endpoint {request.method} {request.url.path}.")
        if exc.status_code == 405:
            allowed = request.app.state.methods.allowed(request.url.path)
            return error_response(
                405, ErrorCode.METHOD_NOT_ALLOWED,
                f"{request.url.path} does not answer {request.method}; it answers "
                f"{', '.join(allowed)}.",
                headers={"Allow": ", ".join(allowed)},
            )
        if exc.status_code == 400:
            # FastAPI's own 400: a body it cannot decode (not UTF-8, not JSON).
            return error_response(400, ErrorCode.MALFORMED_JSON,
                                  "The request body is not valid JSON in UTF-8.")
        return error_response(exc.status_code, f"HTTP_{exc.status_code}", str(exc.detail))


#: Order matters: the role paths and /user/_me must be matched before /user/{key}. And FastAPI
#: tries the routes one by one, each try costing a few microseconds: the resource reads, the
#: most frequent requests, come right after login (no path of another router matches one of
#: theirs, tests/server/test_request_path.py checks it).
ROUTERS = (
    auth.router, resources.router, roles.router, users.router, audit.router,
    sources.router, jobs.router, custom_properties.router, folders.router, tags.router,
    associations.router, search.router, lineage.router, joins.router, overlap.router,
    favorites.router, reviews.router, config.router,
)


@cache
def _included_routers() -> tuple[BaseRoute, ...]:
    """:data:`ROUTERS` included under the API prefix, once per process, for every app.

    FastAPI builds an included router's route handlers (each endpoint's dependencies and
    models) at its first request, for the inclusion it was reached through: included into each
    app anew, every app of a process built them again, 30-60 ms of CPU per app (a test
    suite starts hundreds). The inclusions hold nothing of an app: the routes reach the app's
    state through the request.
    """
    holder = APIRouter(default_response_class=Default(JSONResponse))
    for router in ROUTERS:
        holder.include_router(router, prefix=API_PREFIX)
    return tuple(holder.routes)


@cache
def _method_table() -> MethodTable:
    """The methods of every path of :data:`ROUTERS`, read only: one table per process, as the
    routes are."""
    return MethodTable([
        (API_PREFIX + route.path, set(route.methods or ()))
        for router in ROUTERS for route in router.routes if isinstance(route, APIRoute)
    ] + [(f"{API_PREFIX}/openapi.json", {"GET"}), (f"{API_PREFIX}/docs", {"GET"})])


def create_app(settings: Settings | None = None, *, run_jobs: bool = True) -> FastAPI:
    """The catalog service as an ASGI application; the store is opened and migrated on start.

    ``run_jobs=False``: this process runs no job runner; another process sharing the store does
    (``catalog-nb serve --workers N`` runs the one runner in its supervising process), and
    ``POST /job`` only queues (``app.state.jobs`` is None).
    """
    settings = settings or Settings()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        store = Store(
            settings.store_url, busy_timeout=settings.store_busy_timeout_seconds,
            pool_size=settings.store_pool_size, max_overflow=settings.store_max_overflow,
        )
        with service(store, settings, app.state.runtime_config, run_jobs=run_jobs) as runner:
            app.state.store = store
            app.state.jobs = runner
            freeze_startup_heap()
            yield

    app = FastAPI(
        title="catalog_nb — Metadata Catalog Service",
        version=distribution_version(),
        lifespan=lifespan,
        docs_url=f"{API_PREFIX}/docs",
        redoc_url=None,
        openapi_url=f"{API_PREFIX}/openapi.json",
        # Default(...): routes with a response model keep FastAPI's pydantic fast path; every
        # other answer is encoded by orjson (server/responses.py).
        default_response_class=Default(JSONResponse),
    )
    app.state.settings = settings
    app.state.runtime_config = runtime_config.RuntimeConfig(settings)
    # Callers' names and roles, and answers of hot reads, per process (server/callers.py and
    # server/read_cache.py say when they are read again).
    app.state.callers = CallerCache()
    app.state.reads = ReadCache()
    app.state.orderings = Orderings()
    install_error_handlers(app)
    app.router.routes.extend(_included_routers())
    app.state.methods = _method_table()
    # Innermost: behind the edge's checks, in front of the routing (edge.CachedReads).
    app.add_middleware(CachedReads, prefix=f"{API_PREFIX}/dataresource/",
                       cache_kind=resources.CACHED_READ,
                       documents={f"{API_PREFIX}/version": auth.version_document})
    app.add_middleware(RequestGuard, limit=settings.max_body_bytes)
    if settings.gzip_level:
        # Outermost, so error answers of the edge are compressed too. Large bodies are
        # compressed in a worker thread (zlib lets go of the interpreter lock).
        # Arrow pages compress their own buffers (LZ4: a tenth of gzip's time, on both sides).
        app.add_middleware(GZip, minimum_size=settings.gzip_minimum_size,
                           compresslevel=settings.gzip_level,
                           exclude_content_types=(*DEFAULT_EXCLUDED_CONTENT_TYPES, ARROW_STREAM))
    # Outermost: every other layer, and the routing, sees "/tag/" as "/tag" (server/slashes.py).
    app.add_middleware(TrailingSlash, prefix=API_PREFIX)
    app.openapi = lambda: _openapi(app)  # type: ignore[method-assign]
    return app


def _openapi(app: FastAPI) -> dict[str, Any]:
    """The OpenAPI document (built once): every operation's answers, errors included
    (server/openapi.py)."""
    if not app.openapi_schema:
        app.openapi_schema = build_openapi(app)
    return app.openapi_schema
