"""The catalog service application: ``create_app(settings)`` wires routers, errors and the store.

Example::

    import uvicorn
    from catalog_nb.server.app import create_app
    from catalog_nb.server.settings import Settings

    uvicorn.run(create_app(Settings(admin_password="change-me-now")), port=8765)
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from catalog_nb.contract import API_PREFIX, ErrorCode, distribution_version
from catalog_nb.server import runtime_config
from catalog_nb.server.bootstrap import bootstrap
from catalog_nb.server.errors import ServiceError
from catalog_nb.server.jobs import JobRunner
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
from catalog_nb.server.store import Store

log = logging.getLogger(__name__)


def _error(status: int, code: ErrorCode | str, message: str, **extra: Any) -> JSONResponse:
    body = {"message": message, "errorCode": str(code), "status": status, **extra}
    return JSONResponse(status_code=status, content=body)


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


def install_error_handlers(app: FastAPI) -> None:
    """Every error leaves as JSON ``{message, errorCode, status}``; never HTML, never a trace."""

    @app.exception_handler(ServiceError)
    async def _service(_: Request, exc: ServiceError) -> JSONResponse:
        response = JSONResponse(status_code=exc.status, content=exc.body())
        response.headers.update(exc.headers)
        return response

    @app.exception_handler(RequestValidationError)
    async def _invalid(_: Request, exc: RequestValidationError) -> JSONResponse:
        code, message, details = _describe(list(exc.errors()))
        return _error(400, code, message, details=json.loads(json.dumps(details, default=str)))

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        if exc.status_code == 404:
            return _error(404, ErrorCode.ROUTE_NOT_FOUND,
                          f"There is no endpoint {request.method} {request.url.path}.")
        if exc.status_code == 405:
            return _error(405, ErrorCode.METHOD_NOT_ALLOWED,
                          f"{request.url.path} does not answer {request.method}.")
        if exc.status_code == 400:
            # FastAPI's own 400: a body it cannot decode (not UTF-8, not JSON).
            return _error(400, ErrorCode.MALFORMED_JSON,
                          "The request body is not valid JSON in UTF-8.")
        return _error(exc.status_code, f"HTTP_{exc.status_code}", str(exc.detail))

    @app.exception_handler(Exception)
    async def _fault(request: Request, exc: Exception) -> JSONResponse:
        log.exception("Unhandled error in %s %s", request.method, request.url.path)
        return _error(500, ErrorCode.INTERNAL_ERROR,
                      "The service failed to handle this request; the fault has been logged.")


#: A JSON ``\u0000`` escape that is not itself an escaped backslash followed by "u0000".
_JSON_NUL = re.compile(rb"(?<!\\)(?:\\\\)*\\u0000")


def _has_nul(scope: Scope, body: bytes) -> bool:
    query: bytes = scope.get("query_string") or b""
    return (
        "\x00" in str(scope.get("path", ""))
        or b"%00" in query
        or _JSON_NUL.search(body) is not None
    )


class BodyLimit:
    """ASGI middleware: a body over ``limit`` bytes is answered 413 before any route sees it.

    Bodies are read here (they are small by contract) and replayed to the application, so the
    limit holds for chunked uploads without a Content-Length too. A NUL character anywhere in the
    path, the query or a JSON string of the body is answered 400 here too: PostgreSQL text cannot
    hold one, and no name, key or description needs one.
    """

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.limit:
            await self._too_large(scope, receive, send)
            return
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.limit:
                await self._too_large(scope, receive, send)
                return
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        if _has_nul(scope, body):
            response = _error(400, ErrorCode.INVALID_PAYLOAD,
                              "The request contains a NUL character, which the catalog refuses.")
            await response(scope, receive, send)
            return
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)

    async def _too_large(self, scope: Scope, receive: Receive, send: Send) -> None:
        response = _error(413, ErrorCode.PAYLOAD_TOO_LARGE,
                          f"The request body is larger than the limit of {self.limit} bytes.")
        await response(scope, receive, send)


def create_app(settings: Settings | None = None) -> FastAPI:
    """The catalog service as an ASGI application; the store is opened and migrated on start."""
    settings = settings or Settings()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        store = Store(settings.store_url)
        store.migrate()
        with store.write() as conn:
            bootstrap(conn, settings)
        app.state.store = store
        # Stored /config values win over the environment; applied before any job starts.
        watcher = runtime_config.start(store, app.state.runtime_config)
        # Jobs left RUNNING by a stopped process fail, QUEUED ones run (server/jobs.py).
        runner = JobRunner(store, settings).start()
        app.state.jobs = runner
        try:
            yield
        finally:
            watcher.stop()
            runner.stop()
            store.dispose()

    app = FastAPI(
        title="catalog_nb — Metadata Catalog Service",
        version=distribution_version(),
        lifespan=lifespan,
        docs_url=f"{API_PREFIX}/docs",
        redoc_url=None,
        openapi_url=f"{API_PREFIX}/openapi.json",
    )
    app.state.settings = settings
    app.state.runtime_config = runtime_config.RuntimeConfig(settings)
    install_error_handlers(app)
    # Order matters: the role paths and /user/_me must be matched before /user/{key}.
    routers = (
        auth.router, roles.router, users.router, audit.router, sources.router, jobs.router,
        resources.router, custom_properties.router, folders.router, tags.router,
        associations.router, search.router, lineage.router, joins.router, overlap.router,
        favorites.router, reviews.router, config.router,
    )
    for router in routers:
        app.include_router(router, prefix=API_PREFIX)
    app.add_middleware(BodyLimit, limit=settings.max_body_bytes)
    app.openapi = lambda: _openapi(app)  # type: ignore[method-assign]
    return app


_ERROR_SCHEMA = {
    "type": "object",
    "required": ["message", "errorCode", "status"],
    "properties": {
        "message": {"type": "string"},
        "errorCode": {"type": "string"},
        "status": {"type": "integer"},
        "details": {"type": "array", "items": {"type": "object"}},
    },
}


def _openapi(app: FastAPI) -> dict[str, Any]:
    """The OpenAPI document, saying what the service really answers: validation failures are
    400 with the error body (FastAPI would document 422), and every route may answer it."""
    if app.openapi_schema:
        return app.openapi_schema
    from fastapi.openapi.utils import get_openapi

    schema = get_openapi(title=app.title, version=app.version, routes=app.routes)
    schema.setdefault("components", {}).setdefault("schemas", {})["Error"] = _ERROR_SCHEMA
    error = {
        "description": "Bad parameters or payload",
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
    }
    for operations in schema.get("paths", {}).values():
        for operation in operations.values():
            responses = operation.setdefault("responses", {})
            responses.pop("422", None)
            responses.setdefault("400", error)
    for name in ("HTTPValidationError", "ValidationError"):
        schema["components"]["schemas"].pop(name, None)
    app.openapi_schema = schema
    return schema
