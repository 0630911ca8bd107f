"""Fixtures of the server tests, on top of the shared ones in ``tests/conftest.py``.

``admin`` is overridden here with session scope: the server tests make hundreds of requests as
the administrator and one login serves them all (no server test logs that session out or changes
the administrator's password). ``members`` holds one logged-in user per non-administrator access
level on the shared server.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable

import pytest

from catalog_nb.contract import AccessLevel
from tests.conftest import Http, Server
from tests.server.helpers import PASSWORD, Member, create_user


@pytest.fixture(scope="session")
def admin(live_server: Server) -> Http:
    """The shared server's administrator, logged in once for the whole session."""
    return live_server.session()


@pytest.fixture(scope="session")
def members(live_server: Server, admin: Http) -> dict[str, Member]:
    """A logged-in user holding only the built-in role of each non-administrator level."""
    found = {}
    for level in (AccessLevel.STEWARD, AccessLevel.ANALYST, AccessLevel.GUEST):
        name = f"{level.value.lower()}-{uuid.uuid4().hex[:8]}"
        user = create_user(admin, name, roles=[level.value])
        found[level.value] = Member(name, user["key"], live_server.session(name, PASSWORD))
    return found


@pytest.fixture
def fresh_admin(server: Server) -> Http:
    """The administrator of this test's own fresh server."""
    return server.session()


@pytest.fixture
def login_as(live_server: Server) -> Callable[[str], Http]:
    """Log in to the shared server as a user created with the helpers' password."""
    return lambda name: live_server.session(name, PASSWORD)
