"""The shortcuts of the request path answer exactly what the full path answers.

A repeated ``GET /dataresource/{key}`` and ``GET /version`` are answered before routing
(``edge.CachedReads``), answers for clients that do not accept gzip leave through a shorter way
than Starlette's (``edge.GZip``), and the session is read straight through the driver
(``Store.held_first``). Each is checked against the path it shortens: through the real server
where it is an interface promise, and side by side with Starlette's own middleware below it.
"""

from __future__ import annotations

import asyncio
import gzip
import uuid
from collections.abc import Callable
from typing import Any

import pytest
from starlette.middleware.gzip import GZipMiddleware
from starlette.types import Message, Receive, Scope, Send

from catalog_nb.contract import SESSION_COOKIE
from catalog_nb.server.edge import GZip, _utf8
from tests.conftest import Http, Server
from tests.server.lake import profile_many, resource_key

#: Headers that differ between any two answers (the time they were sent).
_VARYING = {"date"}


def _headers(response: Any) -> dict[str, str]:
    return {k.lower(): v for k, v in response.headers.items() if k.lower() not in _VARYING}


@pytest.fixture(scope="module")
def resource(live_server: Server) -> str:
    source = profile_many(live_server.store, f"edge{uuid.uuid4().hex[:6]}", 1, fields=30)
    return resource_key(live_server.store, source, "area0/file00000.csv")


def _fresh(live_server: Server) -> Http:
    """A session of its own (the shared administrator's is never logged out)."""
    return live_server.session()


@pytest.mark.parametrize("encoding", ["identity", "gzip"])
def test_a_cached_read_is_the_routes_answer_byte_for_byte(
    live_server: Server, resource: str, encoding: str
) -> None:
    http = _fresh(live_server)
    live_server.embedded.app.state.reads.clear()
    headers = {"Accept-Encoding": encoding}
    first = http.get(f"/dataresource/{resource}", headers=headers, stream=True)  # the route's
    second = http.get(f"/dataresource/{resource}", headers=headers, stream=True)  # the edge's
    raw = [r.raw.read(decode_content=False) for r in (first, second)]
    assert first.status_code == second.status_code == 200
    assert _headers(first) == _headers(second)
    assert raw[0] == raw[1] if encoding == "identity" else (
        gzip.decompress(raw[0]) == gzip.decompress(raw[1]))
    assert _headers(second)["content-type"] == "application/json"
    assert _headers(second)["vary"] == "Accept-Encoding"
    assert _headers(second).get("content-encoding") == (
        "gzip" if encoding == "gzip" else None)
    assert len(raw[1]) == int(_headers(second)["content-length"])


def test_an_ended_session_is_refused_by_the_edge_as_by_the_routes(
    live_server: Server, resource: str
) -> None:
    http = _fresh(live_server)
    assert http.get(f"/dataresource/{resource}").status_code == 200  # cached for this caller
    assert http.get("/logout").status_code in (200, 204)
    cookie = {SESSION_COOKIE: "x"}
    for sent in (dict(http.cookies), cookie, {}):
        anonymous = live_server.anonymous()
        anonymous.cookies.update(sent)
        edge = anonymous.get(f"/dataresource/{resource}")
        version = anonymous.get("/version")
        route = anonymous.get("/user/_me")
        assert edge.status_code == version.status_code == route.status_code == 401
        assert edge.json() == version.json() == route.json()
        assert edge.json()["errorCode"] and edge.json()["message"]


@pytest.mark.parametrize("encoding", ["identity", "gzip"])
def test_the_edges_version_is_the_routes_byte_for_byte(admin: Http, encoding: str) -> None:
    headers = {"Accept-Encoding": encoding}
    edge = admin.get("/version", headers=headers, stream=True)
    # A query string sends the request on to the route.
    route = admin.get("/version", params={"from": "route"}, headers=headers, stream=True)
    assert edge.status_code == route.status_code == 200
    assert _headers(edge) == _headers(route)
    assert edge.raw.read(decode_content=False) == route.raw.read(decode_content=False)


def test_the_other_resource_paths_are_left_to_their_routes(
    live_server: Server, admin: Http, resource: str
) -> None:
    assert admin.get(f"/dataresource/{resource}").status_code == 200
    page = admin.get("/dataresource/metadata", params={"pageSize": 1})
    assert page.status_code == 200 and "list" in page.json()
    missing = admin.get(f"/dataresource/{uuid.uuid4().hex}")
    assert missing.status_code == 404 and missing.json()["errorCode"]
    assert admin.post(f"/dataresource/{resource}").status_code == 405


def test_a_miss_reads_the_session_once(live_server: Server, admin: Http, resource: str) -> None:
    from tests.server.test_request_path import statements

    admin.get("/version")  # the caller's identity cached
    live_server.embedded.app.state.reads.clear()
    with statements(live_server) as seen:
        assert admin.get(f"/dataresource/{resource}").status_code == 200
    assert sum("FROM sessions" in s for s in seen) == 1, "\n".join(seen)


# -- GZip, side by side with Starlette's GZipMiddleware ----------------------------------------

_LARGE = b"x" * 2_000


def _app(start: Message, *bodies: Message) -> Callable[[Scope, Receive, Send], Any]:
    async def app(_scope: Scope, _receive: Receive, send: Send) -> None:
        await send(dict(start, headers=list(start.get("headers", []))))
        for body in bodies:
            await send(dict(body))
    return app


def _start(status: int = 200, **headers: str) -> Message:
    return {"type": "http.response.start", "status": status,
            "headers": [(k.replace("_", "-").encode(), v.encode()) for k, v in headers.items()]}


def _body(body: bytes, more: bool = False) -> Message:
    return {"type": "http.response.body", "body": body, "more_body": more}


_ANSWERS = {
    "small": (_start(content_type="application/json"), _body(b"{}")),
    "large": (_start(content_type="application/json"), _body(_LARGE)),
    "streamed": (_start(content_type="text/csv"), _body(b"a", True), _body(_LARGE, True),
                 _body(b"")),
    "partial": (_start(206, content_type="text/plain"), _body(_LARGE)),
    "encoded": (_start(content_type="text/plain", content_encoding="br"), _body(_LARGE)),
    "excluded": (_start(content_type="image/png"), _body(_LARGE)),
    "vary already": (_start(content_type="text/plain", vary="Cookie"), _body(_LARGE)),
    "no type": (_start(), _body(_LARGE)),
    "early hint": ({"type": "http.response.early_hint", "links": []},
                   _start(content_type="text/plain"), _body(_LARGE)),
    "pathsend": (_start(content_type="text/plain"),
                 {"type": "http.response.pathsend", "path": "/dev/null"}),
}


def _sent(middleware: type[GZipMiddleware], answer: tuple[Message, ...],
          accept: bytes | None) -> list[Message]:
    first, *rest = answer
    if first["type"] != "http.response.start":  # an early hint before the start
        app = _app(rest[0], first, *rest[1:])
    else:
        app = _app(first, *rest)
    sent: list[Message] = []

    async def receive() -> Message:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: Message) -> None:
        sent.append(message)

    headers = [(b"host", b"x")] + ([(b"accept-encoding", accept)] if accept else [])
    scope = {"type": "http", "method": "GET", "path": "/", "headers": headers}
    asyncio.run(middleware(app, minimum_size=500, compresslevel=1)(scope, receive, send))
    return sent


@pytest.mark.parametrize("accept", [None, b"identity", b"br, deflate"])
@pytest.mark.parametrize("name", list(_ANSWERS))
def test_uncompressed_answers_leave_as_starlette_sends_them(name: str, accept: bytes | None
                                                            ) -> None:
    assert _sent(GZip, _ANSWERS[name], accept) == _sent(GZipMiddleware, _ANSWERS[name], accept)


@pytest.mark.parametrize("name", ["small", "large", "streamed"])
def test_gzip_is_still_starlettes(name: str) -> None:
    sent = _sent(GZip, _ANSWERS[name], b"gzip, deflate")
    assert sent == _sent(GZipMiddleware, _ANSWERS[name], b"gzip, deflate")
    if name != "small":
        assert (b"content-encoding", b"gzip") in sent[0]["headers"]


def test_paths_and_queries_are_checked_as_utf8_only_where_they_need_it() -> None:
    assert _utf8(b"/api/v2/dataresource/abc")
    assert _utf8(b"/caf%C3%A9") and _utf8("/café".encode())
    assert not _utf8(b"/caf%E9") and not _utf8(b"/caf\xe9")
