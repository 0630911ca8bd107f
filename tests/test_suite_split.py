"""Which tests the PostgreSQL run leaves to the SQLite run (``tests/conftest.py``): only those
that cannot behave differently there."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import reaches_store

HERE = Path(__file__).resolve().parent


@dataclass
class Item:
    fixturenames: tuple[str, ...]
    path: Path


@pytest.mark.parametrize("fixture", ["make_server", "store_url"])
def test_a_test_reaching_a_server_or_a_store_runs_on_both_backends(fixture: str) -> None:
    item = Item(("pg_connections_bounded", "live_server", fixture), HERE / "client/test_frames.py")
    assert reaches_store(item)  # type: ignore[arg-type]


def test_a_module_opening_postgresql_itself_runs_on_both_backends() -> None:
    assert reaches_store(Item((), HERE / "test_connections.py"))  # type: ignore[arg-type]
    assert reaches_store(Item((), HERE / "server/profiling/test_sql.py"))  # type: ignore[arg-type]


def test_a_test_of_mocks_or_plain_values_runs_once() -> None:
    item = Item(("pg_connections_bounded", "mock", "cat", "tmp_path"),
                HERE / "client/test_frames.py")
    assert not reaches_store(item)  # type: ignore[arg-type]


def test_the_store_fixtures_are_built_on_the_two_named_ones(
        request: pytest.FixtureRequest) -> None:
    # Every fixture reaching the store must depend on make_server or store_url, or the
    # PostgreSQL run would leave its tests out.
    manager = request.session._fixturemanager
    for name in ("store", "live_server", "server", "admin"):
        definitions = manager.getfixturedefs(name, request.node)
        assert definitions, name
        closure = set(definitions[-1].argnames)
        assert closure & {"make_server", "store_url", "live_server"}, (name, closure)
