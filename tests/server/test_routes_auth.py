"""Every route the app registers answers 401 without a valid session (login excepted).

The walk reads the routes from the running app, so a route added later is walked too and cannot
forget authentication.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable

import fastapi.routing
import pytest
from fastapi.routing import APIRoute
from sqlalchemy import update
from starlette.routing import BaseRoute

from catalog_nb.contract import API_PREFIX, ErrorCode
from catalog_nb.server.store import schema
from tests.conftest import Http, Server
from tests.server.helpers import assert_error, session_token, token_hash, with_cookie
from tests.server.tag_helpers import make_domain

OPEN = {("POST", "/login")}

#: The endpoints issue 2 names (Login, Users and Roles tables, logout, version, audit trail).
REQUIRED = {
    ("POST", "/login"), ("GET", "/logout"), ("POST", "/logout"), ("GET", "/version"),
    ("GET", "/user"), ("POST", "/user"), ("GET", "/user/_me"), ("PUT", "/user/_me"),
    ("GET", "/user/{}"), ("PUT", "/user/{}"), ("DELETE", "/user/{}"), ("GET", "/user/name/{}"),
    ("POST", "/user/assign/role"), ("POST", "/user/remove/role"), ("GET", "/user/list/roles"),
    ("GET", "/user/permit/resource"), ("GET", "/user/permit/source"),
    ("POST", "/user/role"), ("GET", "/user/role"), ("GET", "/user/role/byname"),
    ("GET", "/user/role/{}"), ("PUT", "/user/role/{}"), ("DELETE", "/user/role/{}"),
    ("GET", "/search/user"),
    ("GET", "/auditevent/list"), ("POST", "/auditevent/search"),
    ("GET", "/auditevent/{}"), ("DELETE", "/auditevent/{}"),
}


def registered(server: Server) -> list[tuple[BaseRoute, str, set[str]]]:
    """(route, full path, methods) of every route of the running app, routers flattened.

    Recent FastAPI keeps included routers as wrappers in ``app.routes``;
    ``iter_route_contexts`` flattens them (older versions list the routes themselves).
    """
    app = server.embedded.app
    iterate = getattr(fastapi.routing, "iter_route_contexts", None)
    if iterate is None:
        return [(r, getattr(r, "path", ""), set(getattr(r, "methods", None) or ()))
                for r in app.routes]
    return [(c.original_route, c.path or "", set(c.methods or ())) for c in iterate(app.routes)]


def endpoints(server: Server) -> list[tuple[str, str]]:
    """(method, path below /api/v2) of every APIRoute of the running app."""
    found: list[tuple[str, str]] = []
    for route, path, methods in registered(server):
        if isinstance(route, APIRoute):
            assert path.startswith(API_PREFIX), path
            found.extend((method, path[len(API_PREFIX):]) for method in sorted(methods))
    return found


def generic(path: str) -> str:
    return re.sub(r"\{[^}]+\}", "{}", path)


def walk(http: Http, server: Server) -> dict[str, tuple[int, str]]:
    """Call every route but login with dummy path values and ``{}``; what each answered."""
    answers = {}
    for method, path in endpoints(server):
        if (method, generic(path)) in OPEN:
            continue
        concrete = re.sub(r"\{[^}]+\}", "dummy-value", path)
        response = http.request(method, concrete, json={})
        code = response.json().get("errorCode", "") if response.headers.get(
            "content-type", "").startswith("application/json") else response.text[:80]
        answers[f"{method} {path}"] = (response.status_code, code)
    return answers


def test_the_app_registers_every_endpoint_of_the_issue(live_server: Server) -> None:
    registered = {(m, generic(p)) for m, p in endpoints(live_server)}
    assert registered >= REQUIRED, sorted(REQUIRED - registered)


def test_only_the_api_docs_are_plain_routes(live_server: Server) -> None:
    """Nothing bypasses the walk: every non-APIRoute is the OpenAPI document or its viewer."""
    others = [path for route, path, _ in registered(live_server) if not isinstance(route, APIRoute)]
    assert set(others) <= {
        f"{API_PREFIX}/openapi.json", f"{API_PREFIX}/docs", f"{API_PREFIX}/docs/oauth2-redirect",
        "/docs/oauth2-redirect",
    }, others


@pytest.mark.parametrize("credential", ["none", "forged", "logged-out"])
def test_every_route_but_login_needs_a_session(live_server: Server, credential: str) -> None:
    if credential == "none":
        http = live_server.anonymous()
    elif credential == "forged":
        http = with_cookie(live_server, "forged-" + "x" * 40)
    else:
        session = live_server.session()
        token = session_token(session)
        assert session.get("/logout").status_code == 200
        http = with_cookie(live_server, token)
    answers = walk(http, live_server)
    assert len(answers) >= len(REQUIRED) - len(OPEN)
    wrong = {k: v for k, v in answers.items()
             if v != (401, ErrorCode.AUTHENTICATION_REQUIRED.value)}
    assert wrong == {}


def test_every_route_but_login_refuses_an_expired_session(live_server: Server) -> None:
    session = live_server.session()
    token = session_token(session)
    with live_server.store.write() as conn:
        conn.execute(
            update(schema.sessions)
            .where(schema.sessions.c.token_hash == token_hash(token))
            .values(last_seen_ms=int(time.time() * 1000) - 3 * 3_600_000)
        )
    answers = walk(session, live_server)
    wrong = {k: v for k, v in answers.items() if v != (401, ErrorCode.SESSION_EXPIRED.value)}
    assert wrong == {}


def test_login_is_reachable_without_a_session(live_server: Server) -> None:
    response = live_server.anonymous().post("/login", json={})
    assert_error(response, 400, ErrorCode.INVALID_PAYLOAD.value)


def test_a_401_tells_how_to_log_in(live_server: Server, unique: Callable[[str], str]) -> None:
    body = assert_error(live_server.anonymous().get("/user"), 401,
                        ErrorCode.AUTHENTICATION_REQUIRED.value)
    assert "log in" in body["message"].lower()


def test_apps_of_one_process_share_their_routes_and_nothing_else(
        make_server: Callable[..., Server]) -> None:
    """Every app of a process serves the same route objects (their handlers are built once,
    server/app.py), each on its own store, with its own sessions."""
    one, two = make_server(), make_server()
    routes_of = [{id(r) for r in s.embedded.app.router.routes} for s in (one, two)]
    included = {id(r) for r in one.embedded.app.router.routes
                if type(r).__name__ == "_IncludedRouter" or isinstance(r, APIRoute)}
    assert included and included <= routes_of[0] & routes_of[1]
    first, second = one.session(), two.session()
    made = make_domain(first)
    assert made["name"] in {d["name"] for d in first.get("/tagdomain").json()}
    assert made["name"] not in {d["name"] for d in second.get("/tagdomain").json()}
    assert second.get(f"/tagdomain/{made['key']}").status_code == 404
    # A session of one server is unknown to the other.
    foreign = two.anonymous()
    foreign.cookies.update(first.cookies)
    assert foreign.get("/tagdomain").status_code == 401
