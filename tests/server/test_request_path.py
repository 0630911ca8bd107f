"""A request does a fixed, small amount of store work, whatever the size of the catalog.

Statements are counted on the server's real engine (``before_cursor_execute``: every statement a
route runs; the BEGIN that SQLite needs from us is left out, as psycopg sends PostgreSQL's itself)
while one request is answered over real HTTP. The counts are exact on
purpose: a new query on one of these paths should be a decision, made by changing the number
here. What a count may not do is grow with the catalog: each path is measured on a small and a
larger catalog (more fields, tags, reviews, users, roles), and must not move.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
import threading
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from fastapi.routing import APIRoute
from sqlalchemy import event

from catalog_nb.server import routes
from catalog_nb.server.routes import resources
from tests.conftest import ADMIN_PASSWORD, ADMIN_USER, Http, Server
from tests.server.helpers import create_role, create_user
from tests.server.lake import profile_many, resource_key
from tests.server.tag_helpers import associate, make_domain, make_tag

#: The thread of the server's configuration watcher (``runtime_config.Watcher``).
WATCHER_THREAD = "catalog-config-watcher"

#: Statements of GET /version for a caller whose identity is cached: the session row and the
#: store's generations, in one SELECT, with no transaction around it.
VERSION = 1
#: GET /dataresource/{key} for an administrator, read from the store: the authentication (1),
#: the resource, its fields, tag associations, custom values, favorite flag, rating, join
#: conditions (a file: no collection members), and the catalog generation under which the
#: process keeps the virtual folders and data sets it read (store/definitions.py).
RESOURCE = 9
#: The same read again while nothing changed: the authentication only (server/read_cache.py).
RESOURCE_AGAIN = 1
#: POST /login, in three transactions: purge expired sessions and throttle rows and reserve a
#: throttle slot (6), the user without roles (1), then release the slot, open the session and
#: record its audit event (6).
LOGIN = 13
#: GET /user: the authentication (1), the users, their roles, the roles' grants.
USERS = 4


@contextmanager
def statements(server: Server) -> Iterator[list[str]]:
    """The statements the server's request store runs inside the block (the configuration
    watcher's periodic read left out: it is no request's)."""
    seen: list[str] = []
    lock = threading.Lock()
    def record(_conn: Any, _cursor: Any, statement: str, *_rest: Any) -> None:
        if threading.current_thread().name == WATCHER_THREAD or statement.startswith("BEGIN"):
            return
        with lock:
            seen.append(" ".join(statement.split()))

    event.listen(server.store.engine, "before_cursor_execute", record)
    try:
        yield seen
    finally:
        event.remove(server.store.engine, "before_cursor_execute", record)


def count(server: Server, call: Callable[[], Any], *, cold: bool = False
          ) -> tuple[int, list[str]]:
    """How many statements ``call`` made the server run (with them, for the failure text).

    A first call fills the caller cache; ``cold`` then empties the read cache, so the counted
    call reads what it answers from the store.
    """
    call()
    if cold:
        server.embedded.app.state.reads.clear()
    with statements(server) as seen:
        response = call()
    assert response.status_code in (200, 201), response.text
    return len(seen), seen


@pytest.fixture(scope="module")
def server(make_server: Callable[..., Server]) -> Server:
    return make_server()


@pytest.fixture(scope="module")
def admin(server: Server) -> Http:
    return server.session()


def test_version_runs_one_statement(server: Server, admin: Http) -> None:
    n, seen = count(server, lambda: admin.get("/version"))
    assert n == VERSION, "\n".join(seen)
    assert "sessions" in seen[0] and "store_generations" in seen[0]


def _grow_resource(admin: Http, key: str, tags: int) -> None:
    domain = make_domain(admin)
    for i in range(tags):
        associate(admin, key, make_tag(admin, domain["key"], f"t{i}")["key"], state="ACCEPTED")
    assert admin.post(f"/favorites/{key}").status_code == 201
    response = admin.post("/reviews", json={"entityKey": key, "rating": 4})
    assert response.status_code == 201, response.text


def test_reading_a_resource_runs_the_same_statements_however_large_it_is(
    server: Server, admin: Http
) -> None:
    small_source = profile_many(server.store, f"small{uuid.uuid4().hex[:6]}", 1, fields=2)
    large_source = profile_many(server.store, f"large{uuid.uuid4().hex[:6]}", 1, fields=60)
    small = resource_key(server.store, small_source, "area0/file00000.csv")
    large = resource_key(server.store, large_source, "area0/file00000.csv")
    _grow_resource(admin, large, tags=8)

    for key in (small, large):
        n, seen = count(server, lambda key=key: admin.get(f"/dataresource/{key}"), cold=True)
        assert n == RESOURCE, "\n".join(seen)
        n, seen = count(server, lambda key=key: admin.get(f"/dataresource/{key}"))
        assert n == RESOURCE_AGAIN, "\n".join(seen)
    body = admin.get(f"/dataresource/{large}").json()
    assert len(body["fields"]) == 60 and body["favorite"] is True


def test_login_runs_the_same_statements_whatever_the_roles(server: Server, admin: Http) -> None:
    def login() -> Any:
        return server.anonymous().post(
            "/login", json={"username": ADMIN_USER, "password": ADMIN_PASSWORD})

    before, seen = count(server, login)
    assert before == LOGIN, "\n".join(seen)
    for i in range(5):
        create_role(admin, f"login-role-{uuid.uuid4().hex[:6]}-{i}")
    after, seen = count(server, login)
    assert after == LOGIN, "\n".join(seen)


def test_listing_users_runs_the_same_statements_however_many_there_are(
    server: Server, admin: Http
) -> None:
    before, seen = count(server, lambda: admin.get("/user"))
    assert before == USERS, "\n".join(seen)
    roles = [create_role(admin, f"list-role-{uuid.uuid4().hex[:6]}")["name"] for _ in range(3)]
    for i in range(12):
        create_user(admin, f"lister-{uuid.uuid4().hex[:6]}-{i}", roles=roles[: 1 + i % 3])
    after, seen = count(server, lambda: admin.get("/user"))
    assert after == USERS, "\n".join(seen)


def test_the_resource_routes_overlap_no_other_routers_paths() -> None:
    """The resource router is tried early for speed (server/app.py): that may change no
    answer, so none of its paths may also match a path of another router, or the reverse."""
    mine = [r for r in resources.router.routes if isinstance(r, APIRoute)]
    theirs = [
        r for info in pkgutil.iter_modules(routes.__path__)
        if info.name != "resources"
        for r in importlib.import_module(f"{routes.__name__}.{info.name}").router.routes
        if isinstance(r, APIRoute)
    ]

    def example(path: str) -> str:
        return re.sub(r"\{[^}:]+\}", "x1", re.sub(r"\{[^}:]+:path\}", "a/b", path))

    assert mine and len(theirs) > 50
    for one in mine:
        for other in theirs:
            if one.methods & other.methods:
                assert not other.path_regex.match(example(one.path)), (one.path, other.path)
                assert not one.path_regex.match(example(other.path)), (one.path, other.path)
