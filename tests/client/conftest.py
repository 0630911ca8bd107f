"""Fixtures of the client tests (helpers live in :mod:`tests.client.mocks`).

``live_server`` and ``unique`` come from ``tests/conftest.py``: a real server shared by the
session, so live tests create their own uniquely named users and roles.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
import responses

from catalog_nb.client import Catalog, connect
from tests.client.mocks import BASE, LIVE_PASSWORD, ScriptedServer, add_login


@pytest.fixture
def mock() -> Iterator[responses.RequestsMock]:
    """A ``responses`` mock that does not insist every registered answer is used."""
    with responses.RequestsMock(assert_all_requests_are_fired=False) as rsps:
        yield rsps


@pytest.fixture
def cat(mock: responses.RequestsMock) -> Iterator[Catalog]:
    """A catalog logged in as admin against the mocked service (no backoff, no progress)."""
    add_login(mock)
    catalog = connect(BASE, "admin", "pw-123456", backoff_factor=0, progress=False)
    yield catalog
    catalog.http.close()


@pytest.fixture
def scripted() -> Iterator[ScriptedServer]:
    """A :class:`ScriptedServer`, stopped after the test."""
    server = ScriptedServer()
    yield server
    server.stop()


@pytest.fixture
def live_cat(live_server: Any) -> Iterator[Catalog]:
    """The client logged in as the administrator of the shared real server."""
    catalog = connect(
        live_server.url, live_server.admin_user, live_server.admin_password, progress=False
    )
    yield catalog
    catalog.close()


@pytest.fixture
def make_user(live_cat: Catalog, unique: Callable[[str], str]) -> Callable[..., dict[str, Any]]:
    """Create a user with a unique name (and, by default, a fresh Analyst role and a password)."""

    def make(prefix: str = "user", **fields: Any) -> dict[str, Any]:
        if "roles" not in fields:
            fields["roles"] = [live_cat.create_role(unique("role"), "Analyst")["name"]]
        fields.setdefault("password", LIVE_PASSWORD)
        return live_cat.create_user(unique(prefix), **fields)

    return make


