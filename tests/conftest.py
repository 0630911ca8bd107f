"""Shared fixtures: real catalog servers on 127.0.0.1 over a real store.

The store is a SQLite file in a temporary folder, or, when ``CATALOG_TEST_PG_URL`` names a
PostgreSQL server (an admin URL such as ``postgresql+psycopg://postgres@127.0.0.1:5432/postgres``),
a fresh database created on it for each server and dropped afterwards. CI runs the whole suite
both ways.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import requests
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from catalog_nb.contract import API_PREFIX
from catalog_nb.demo.embedded import EmbeddedServer
from catalog_nb.server.store import Store

ADMIN_USER = "admin"
ADMIN_PASSWORD = "admin-password-1"
PG_URL = os.environ.get("CATALOG_TEST_PG_URL")


def _pg_database() -> tuple[str, Callable[[], None]]:
    assert PG_URL
    admin = create_engine(PG_URL, isolation_level="AUTOCOMMIT")
    name = f"catalog_test_{uuid.uuid4().hex[:12]}"
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))

    def drop() -> None:
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()

    return make_url(PG_URL).set(database=name).render_as_string(hide_password=False), drop


@pytest.fixture(scope="session")
def backend() -> str:
    """Which store the suite runs on: ``sqlite`` or ``postgresql``."""
    return "postgresql" if PG_URL else "sqlite"


class Server:
    """A running catalog service for tests: its URL, its administrator and its store."""

    def __init__(self, embedded: EmbeddedServer) -> None:
        self.embedded = embedded
        self.url = embedded.url
        self.api = embedded.url + API_PREFIX
        self.admin_user = ADMIN_USER
        self.admin_password = ADMIN_PASSWORD

    @property
    def store(self) -> Store:
        store: Store = self.embedded.app.state.store
        return store

    def session(self, user: str = ADMIN_USER, password: str = ADMIN_PASSWORD) -> Http:
        """A requests session logged in as ``user``."""
        http = Http(self.api)
        response = http.post("/login", json={"username": user, "password": password})
        assert response.status_code == 200, response.text
        return http

    def anonymous(self) -> Http:
        return Http(self.api)


class Http(requests.Session):
    """A requests session whose paths are relative to the API base (``/api/v2``)."""

    def __init__(self, base: str) -> None:
        super().__init__()
        self.base = base

    def request(self, method: str | bytes, url: str | bytes, *args: Any, **kwargs: Any) -> Any:
        target = url.decode() if isinstance(url, bytes) else url
        if target.startswith("/"):
            target = self.base + target
        kwargs.setdefault("timeout", 30)
        return super().request(method, target, *args, **kwargs)


@pytest.fixture(scope="session")
def make_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[..., Server]]:
    """Start a fresh server on a fresh store; every one started is stopped at the end."""
    started: list[tuple[EmbeddedServer, Callable[[], None] | None]] = []

    def start(**settings: Any) -> Server:
        data_dir: Path = tmp_path_factory.mktemp("catalog")
        drop = None
        if PG_URL and "db_url" not in settings:
            settings["db_url"], drop = _pg_database()
        settings.setdefault("admin_password", ADMIN_PASSWORD)
        embedded = EmbeddedServer(data_dir, admin_user=ADMIN_USER, **settings).start()
        started.append((embedded, drop))
        return Server(embedded)

    yield start
    for embedded, drop in reversed(started):
        embedded.stop()
        if drop is not None:
            drop()


@pytest.fixture
def store_url(tmp_path: Path) -> Iterator[str]:
    """The URL of a fresh, empty store on the backend under test."""
    if not PG_URL:
        yield f"sqlite:///{tmp_path / 'catalog.sqlite3'}"
        return
    url, drop = _pg_database()
    yield url
    drop()


@pytest.fixture(scope="session")
def live_server(make_server: Callable[..., Server]) -> Server:
    """One server shared by the whole session (tests must not depend on each other's data)."""
    return make_server()


@pytest.fixture
def server(make_server: Callable[..., Server]) -> Server:
    """A server of this test's own, on a fresh store."""
    return make_server()


@pytest.fixture
def admin(live_server: Server) -> Http:
    """The shared server's administrator, logged in."""
    return live_server.session()


@pytest.fixture
def unique() -> Callable[[str], str]:
    """Unique names, so tests on the shared server never collide."""
    return lambda prefix: f"{prefix}-{uuid.uuid4().hex[:8]}"
