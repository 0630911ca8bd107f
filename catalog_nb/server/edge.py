"""The edge of the service: what every request passes before a route sees it, and the last word
on any fault after.

:class:`RequestGuard` refuses, once and for every route, what no route should have to think about:

- a body over the size limit (413), also when it arrives chunked without a Content-Length;
- a NUL character in the path, the query or a JSON string (400): PostgreSQL text cannot hold one
  and no name, key or description needs one;
- JSON nested deeper than ``MAX_JSON_DEPTH`` (400): no request of the API needs it, and a value
  nested a few hundred levels deep is accepted by the parser but cannot be answered back;
- text that is not valid Unicode (400 ``INVALID_TEXT``): a lone UTF-16 surrogate in a JSON string
  (``"\\ud800"``, which Python decodes but no UTF-8 encoder writes back, so one stored value
  breaks every later read of it), or percent-escapes of bytes that are not UTF-8 in the path or
  the query (which would otherwise turn silently into U+FFFD).

Two shortcuts for the most frequent requests sit here too: :class:`CachedReads` answers a
repeated resource read from the read cache, and ``/version``, before routing, and :class:`GZip`
sends the answers of clients that do not accept gzip the way Starlette's middleware does, for
less.

It also answers every fault no handler claimed: 503 with ``Retry-After`` when the store was busy,
else 500, each as the JSON error body, logged once, with long lines (a 100 kB SQL statement)
cut short. Starlette's own last-resort handler would log the fault a second time and re-raise it.
"""

from __future__ import annotations

import logging
import re
import traceback
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import unquote_to_bytes

from starlette.datastructures import MutableHeaders
from starlette.middleware.gzip import GZipMiddleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from catalog_nb.contract import MAX_JSON_DEPTH, ErrorCode
from catalog_nb.server.deps import CALLER_SCOPE_KEY, current_caller
from catalog_nb.server.errors import ServiceError
from catalog_nb.server.responses import JSONResponse
from catalog_nb.server.settings import Settings
from catalog_nb.server.store import busy_error, is_busy

# Faults were always logged under the app module's name; existing log configurations still apply.
log = logging.getLogger("catalog_nb.server.app")

#: Longest line of a logged fault; the rest of a line is replaced by its length.
LOG_LINE_MAX = 500

#: A JSON ``\\u0000`` escape that is not itself an escaped backslash followed by "u0000".
_JSON_NUL = re.compile(rb"(?<!\\)(?:\\\\)*\\u0000")
#: A JSON surrogate escape: a high one with the low one that may follow it, or a low one alone.
#: A pair is a valid character outside the BMP; any other surrogate escape is a lone one.
_JSON_SURROGATE = re.compile(
    rb"(?<!\\)(?:\\\\)*\\u[dD][89abAB][0-9a-fA-F]{2}(?P<low>\\u[dD][c-fC-F][0-9a-fA-F]{2})?"
    rb"|(?<!\\)(?:\\\\)*(?P<lone>\\u[dD][c-fC-F][0-9a-fA-F]{2})",
)


def error_response(
    status: int,
    code: ErrorCode | str,
    message: str,
    headers: dict[str, str] | None = None,
    **extra: Any,
) -> JSONResponse:
    """The JSON error body ``{message, errorCode, status, ...}`` as a response."""
    body = {"message": message, "errorCode": str(code), "status": status, **extra}
    return JSONResponse(status_code=status, content=body, headers=headers)


def service_error_response(exc: ServiceError) -> JSONResponse:
    """The answer to a domain error: its status, its JSON body and its headers."""
    response = JSONResponse(status_code=exc.status, content=exc.body())
    response.headers.update(exc.headers)
    return response


def has_lone_surrogate(body: bytes) -> bool:
    """Whether a JSON text escapes a UTF-16 surrogate that is not half of a valid pair.

    >>> has_lone_surrogate(rb'{"a": "\\ud83d\\ude00"}'), has_lone_surrogate(rb'{"a": "\\ud800"}')
    (False, True)
    >>> has_lone_surrogate(rb'{"a": "\\\\ud800"}')  # an escaped backslash, then text
    False
    """
    return any(m.group("lone") or not m.group("low") for m in _JSON_SURROGATE.finditer(body))


#: A JSON string (its escapes included), whose brackets are text, not structure.
_JSON_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")


def json_depth(body: bytes) -> int:
    """How deep the arrays and objects of a JSON text nest (brackets inside strings ignored).

    >>> json_depth(b'{"a": [1, {"b": "[[["}]}')
    3
    """
    # Imported here: only a body with more brackets than MAX_JSON_DEPTH gets this far, and
    # numpy is a large import for a service that may never see one.
    import numpy as np

    brackets = np.frombuffer(_JSON_STRING.sub(b"", body).translate(None, _NOT_BRACKETS),
                             dtype=np.uint8)
    if not len(brackets):
        return 0
    steps = np.where((brackets == ord("[")) | (brackets == ord("{")), 1, -1)
    return int(np.cumsum(steps).max())


def too_deep(body: bytes) -> bool:
    """Whether a JSON text nests deeper than ``MAX_JSON_DEPTH`` (cheap for the usual body)."""
    # Fewer opening brackets than the limit cannot nest past it: no scan needed.
    return (body.count(b"[") + body.count(b"{") > MAX_JSON_DEPTH
            and json_depth(body) > MAX_JSON_DEPTH)


def _utf8(raw: bytes) -> bool:
    if raw.isascii() and b"%" not in raw:
        return True  # most paths and queries: nothing to decode
    try:
        unquote_to_bytes(raw).decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _refusal(scope: Scope, body: bytes, content_type: bytes = b"") -> JSONResponse | None:
    """The 400 for a request whose path, query or body holds text no route may receive.

    The body checks read JSON; an uploaded file (multipart) is the route's to read, as bytes.
    """
    query: bytes = scope.get("query_string") or b""
    raw_path: bytes = scope.get("raw_path") or str(scope.get("path", "")).encode()
    if content_type.lower().startswith(b"multipart/"):
        body = b""
    if "\x00" in str(scope.get("path", "")) or b"%00" in query or (
            body and _JSON_NUL.search(body)):
        return error_response(400, ErrorCode.INVALID_PAYLOAD,
                              "The request contains a NUL character, which the catalog refuses.")
    if not _utf8(raw_path) or not _utf8(query.replace(b"+", b" ")):
        return error_response(
            400, ErrorCode.INVALID_TEXT,
            "The path or the query string is not valid UTF-8 once its %-escapes are decoded.",
        )
    if not body:
        return None
    if too_deep(body):
        return error_response(
            400, ErrorCode.INVALID_PAYLOAD,
            f"The request body nests arrays and objects more than {MAX_JSON_DEPTH} levels deep.",
        )
    if has_lone_surrogate(body):
        return error_response(
            400, ErrorCode.INVALID_TEXT,
            "The request body holds a lone UTF-16 surrogate escape (such as \\ud800), which is "
            "not valid Unicode text; send each character outside the BMP as a surrogate pair.",
        )
    return None


def _short(text: str) -> str:
    lines = text.splitlines()
    return "\n".join(
        line if len(line) <= LOG_LINE_MAX
        else f"{line[:LOG_LINE_MAX]}... ({len(line)} characters)"
        for line in lines
    )


def fault_response(scope: Scope, exc: Exception) -> JSONResponse:
    """The answer to an exception no handler claimed: 503 for a busy store, else a logged 500."""
    where = f"{scope.get('method', '?')} {scope.get('path', '?')}"
    if is_busy(exc):
        log.warning("The store was busy during %s: %s", where, _short(str(exc).split("\n")[0]))
        busy = busy_error()
        return JSONResponse(busy.body(), status_code=busy.status, headers=busy.headers)
    log.error("Unhandled error in %s\n%s", where, _short("".join(traceback.format_exception(exc))))
    return error_response(500, ErrorCode.INTERNAL_ERROR,
                          "The service failed to handle this request; the fault has been logged.")


class RequestGuard:
    """ASGI middleware: the edge checks above, then the application, then the fault answer.

    Bodies are read here (they are small by contract) and replayed to the application, so the
    limit holds for chunked uploads too.
    """

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        # One pass over the headers (the last of a repeated one counts, as in a dict of them).
        declared = content_type = None
        chunked = False
        for name, value in scope.get("headers") or ():
            if name == b"content-length":
                declared = value
            elif name == b"content-type":
                content_type = value
            elif name == b"transfer-encoding":
                chunked = True
        if declared is not None and declared.isdigit() and int(declared) > self.limit:
            await self._too_large(scope, receive, send)
            return
        if declared is None and not chunked:
            # No body (a GET, most requests): nothing to read and replay, only the path and
            # the query to check.
            await self._forward(scope, receive, send, b"", receive, content_type)
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
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self._forward(scope, receive, send, body, replay, content_type)

    async def _forward(self, scope: Scope, receive: Receive, send: Send, body: bytes,
                       replay: Receive, content_type: bytes | None) -> None:
        """The refusal of a request no route may receive, else the application's answer
        (``replay`` gives it the body read), else the answer to its fault."""
        refusal = _refusal(scope, body, content_type or b"")
        if refusal is not None:
            await refusal(scope, receive, send)
            return
        started = False

        async def watch(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, replay, watch)
        except Exception as exc:
            if started:
                raise
            await fault_response(scope, exc)(scope, receive, send)

    async def _too_large(self, scope: Scope, receive: Receive, send: Send) -> None:
        response = error_response(
            413, ErrorCode.PAYLOAD_TOO_LARGE,
            f"The request body is larger than the limit of {self.limit} bytes.",
        )
        await response(scope, receive, send)


class GZip(GZipMiddleware):
    """Starlette's ``GZipMiddleware``, with a shorter way for the answers of a client that does
    not accept gzip (most API clients): the same answers, without the per-request header
    objects and content-type sets of Starlette's ``IdentityResponder`` (4 µs a request instead
    of 9, measured alone; tests/server/test_request_edge.py compares the two message by message).
    """

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            accepted = b""
            for name, value in scope["headers"]:
                if name == b"accept-encoding":
                    accepted = value
                    break  # the first one, as Starlette reads it
            if b"gzip" not in accepted:
                await self.app(scope, receive, _Uncompressed(send, self.minimum_size,
                                                             self.exclude_content_types))
                return
        await super().__call__(scope, receive, send)


class _Uncompressed:
    """The ``send`` of an answer left uncompressed, as Starlette's ``IdentityResponder`` sends
    it: untouched, but with ``Vary: Accept-Encoding`` when the answer is one gzip would have
    compressed for a client accepting it (large enough, or streamed; not already encoded, not
    a partial 206, not of an excluded content type)."""

    __slots__ = ("excluded", "minimum", "passing", "send", "start")

    def __init__(self, send: Send, minimum: int, excluded: tuple[str, ...]) -> None:
        self.send = send
        self.minimum = minimum
        self.excluded = excluded
        self.start: Message | None = None
        self.passing = False

    async def __call__(self, message: Message) -> None:
        kind = message["type"]
        if kind == "http.response.start":
            headers = message.setdefault("headers", [])
            encoded = False
            content_type: bytes | None = None
            for name, value in headers:
                if name == b"content-encoding":
                    encoded = True
                elif name == b"content-type" and content_type is None:
                    content_type = value
            media_type = (content_type or b"").decode("latin-1").partition(";")[0].strip().lower()
            media_types = {media_type, media_type.partition("/")[0] + "/*"}
            if media_type.startswith("application/grpc+"):
                media_types.add("application/grpc")
            self.passing = (encoded or message["status"] == 206
                            or not media_types.isdisjoint(self.excluded))
            if self.passing:
                await self.send(message)
            else:
                self.start = message
            return
        start, self.start = self.start, None
        if start is not None and kind == "http.response.body":
            if len(message.get("body", b"")) >= self.minimum or message.get("more_body", False):
                MutableHeaders(raw=start["headers"]).add_vary_header("Accept-Encoding")
            await self.send(start)
        elif start is not None and kind == "http.response.pathsend":
            await self.send(start)
        elif start is not None:
            self.start = start  # an early hint or trailers before the body: still held
        await self.send(message)


class CachedReads:
    """ASGI middleware: ``GET <prefix>{key}`` answered from the process's read cache
    (``server.read_cache``) when it holds the answer for this caller, and ``GET`` of a path of
    ``documents`` (``/version``) answered with its document, both before FastAPI routes them.

    The cached answer is the one the route (``routes.resources.get_resource``) gave this caller
    under the store's current generations: routing, dependency solving and the route's
    wrappers change nothing in it, and cost about 100 of the 350 µs of CPU such a request took
    (tests/benchmarks/request_rate.py). A document is what its route answers too: the route
    calls the same function of the settings, and a request with a query string goes to it.
    Only the route fills the cache (under ``(cache_kind, key)``), so a path no resource read
    answered, such as ``<prefix>metadata``, is never answered here. The caller is authenticated
    exactly as a route authenticates it (``deps.current_caller``: 401 with the same body); any
    other request, and a miss, go on to the routes with the caller found.
    """

    def __init__(self, app: ASGIApp, prefix: str, cache_kind: str,
                 documents: Mapping[str, Callable[[Settings], Any]] | None = None) -> None:
        self.app = app
        self.prefix = prefix
        self.cache_kind = cache_kind
        self.documents = dict(documents or {})

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "GET":
            await self.app(scope, receive, send)
            return
        path: str = scope["path"]
        document = None if scope.get("query_string") else self.documents.get(path)
        key = path[len(self.prefix):] if path.startswith(self.prefix) else ""
        if document is None and (not key or "/" in key):
            await self.app(scope, receive, send)
            return
        request = Request(scope, receive)
        try:
            caller = await current_caller(request)
        except ServiceError as exc:
            await service_error_response(exc)(scope, receive, send)
            return
        if document is not None:
            await JSONResponse(document(request.app.state.settings))(scope, receive, send)
            return
        body = request.app.state.reads.get((self.cache_kind, key), caller)
        if body is None:
            scope[CALLER_SCOPE_KEY] = caller
            await self.app(scope, receive, send)
            return
        await Response(body, media_type=JSONResponse.media_type)(scope, receive, send)
