"""Fixtures of the notebook tests: a mocked service and a client logged in to it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import responses

from catalog_nb.client import Catalog, connect
from tests.client.mocks import BASE, add_login


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
