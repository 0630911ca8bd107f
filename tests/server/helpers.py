"""Helpers of the server tests: error assertions, store snapshots, users and roles made via HTTP.

Everything here goes through the real HTTP interface, except ``row_count`` and ``session_row``,
which read the store directly to prove what a response claims (a row gone, a session ended).
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import requests
from sqlalchemy import Table, event, func, select

from catalog_nb.contract import SESSION_COOKIE
from catalog_nb.server.store import schema
from tests.conftest import Http, Server

#: Password given to every user the server tests create.
PASSWORD = "member-password-1"


def assert_error(
    response: requests.Response, status: int, code: str | None = None, *mentions: str
) -> dict[str, Any]:
    """The response is a JSON error of ``status`` (and ``code``); its message names ``mentions``."""
    assert response.status_code == status, (response.status_code, response.text)
    content_type = response.headers.get("content-type", "")
    assert content_type.startswith("application/json"), content_type
    text = response.text
    assert "<html" not in text.lower()
    assert "Traceback" not in text and 'File "' not in text
    body = response.json()
    assert isinstance(body, dict), body
    assert isinstance(body.get("message"), str) and body["message"].strip(), body
    assert isinstance(body.get("errorCode"), str) and body["errorCode"], body
    if code is not None:
        assert body["errorCode"] == code, body
    for word in mentions:
        assert word in body["message"], (word, body["message"])
    return body


def snapshot(http: Http) -> tuple[Any, Any]:
    """Every user and every role, as the API shows them (to prove a refusal changed nothing)."""
    users = http.get("/user")
    roles = http.get("/user/role")
    assert users.status_code == 200 and roles.status_code == 200
    return users.json(), roles.json()


def row_count(server: Server, table: Table) -> int:
    with server.store.read() as conn:
        return int(conn.execute(select(func.count()).select_from(table)).scalar_one())


def session_token(http: requests.Session) -> str:
    """The session token held in a logged-in requests session's cookie jar."""
    token = http.cookies.get(SESSION_COOKIE)
    assert token, "no session cookie"
    return str(token)


def token_hash(token: str) -> str:
    """How the store keys a session (SHA-256 of the token)."""
    return hashlib.sha256(token.encode()).hexdigest()


def session_row(server: Server, token: str) -> dict[str, Any] | None:
    with server.store.read() as conn:
        row = conn.execute(
            select(schema.sessions).where(schema.sessions.c.token_hash == token_hash(token))
        ).mappings().first()
    return dict(row) if row else None


def with_cookie(server: Server, token: str) -> Http:
    """A fresh session that replays ``token`` by hand (whatever the cookie jar would do)."""
    http = server.anonymous()
    http.headers["Cookie"] = f"{SESSION_COOKIE}={token}"
    return http


def create_user(
    http: Http,
    name: str,
    *,
    roles: list[str] | None = None,
    password: str | None = PASSWORD,
    **fields: Any,
) -> dict[str, Any]:
    body: dict[str, Any] = {"name": name, **fields}
    if roles is not None:
        body["roles"] = roles
    if password is not None:
        body["password"] = password
    response = http.post("/user", json=body)
    assert response.status_code == 201, response.text
    user: dict[str, Any] = response.json()
    return user


def create_role(http: Http, name: str, level: str = "Analyst", **fields: Any) -> dict[str, Any]:
    response = http.post("/user/role", json={"name": name, "accessLevel": level, **fields})
    assert response.status_code == 201, response.text
    role: dict[str, Any] = response.json()
    return role


def get_user(http: Http, key: str) -> dict[str, Any]:
    response = http.get(f"/user/{key}")
    assert response.status_code == 200, response.text
    user: dict[str, Any] = response.json()
    return user


def user_by_name(http: Http, name: str) -> dict[str, Any]:
    response = http.get(f"/user/name/{quote(name, safe='')}")
    assert response.status_code == 200, response.text
    user: dict[str, Any] = response.json()
    return user


def audit_search(http: Http, **criteria: Any) -> list[dict[str, Any]]:
    """Every audit event matching ``criteria`` (newest first)."""
    response = http.post("/auditevent/search", json={"size": 1000, **criteria})
    assert response.status_code == 200, response.text
    events: list[dict[str, Any]] = response.json()["list"]
    return events


@dataclass
class Member:
    """A user of the shared server with a password, and a session logged in as them."""

    name: str
    key: str
    http: Http


@contextmanager
def counted_statements(server: Server, tables: Iterable[str]) -> Iterator[list[str]]:
    """The SQL statements touching any of ``tables`` that the server runs inside the block.

    Session and role look-ups are left out by the caller's choice of tables: a session is
    touched only now and then, which would make counts flaky.
    """
    watched = tuple(tables)
    statements: list[str] = []
    lock = threading.Lock()

    def record(*args: Any) -> None:
        statement = str(args[2])
        if any(table in statement for table in watched):
            with lock:
                statements.append(statement)

    event.listen(server.store.engine, "before_cursor_execute", record)
    try:
        yield statements
    finally:
        event.remove(server.store.engine, "before_cursor_execute", record)


def generation(store: Any, name: str) -> int:
    """The store's ``name`` generation (``auth`` or ``catalog``: ``schema.store_generations``)."""
    G = schema.store_generations
    with store.read() as conn:
        return int(conn.execute(select(G.c.generation).where(G.c.name == name)).scalar_one())


def generation_bumps(store: Any, name: str, change: Any) -> int:
    """How far ``change(conn)``, run in one write transaction, moves the ``name`` generation."""
    before = generation(store, name)
    with store.write() as conn:
        change(conn)
    return generation(store, name) - before
