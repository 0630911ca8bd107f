"""Which tests the PostgreSQL run leaves to the SQLite run (``tests/conftest.py``): only those
that cannot behave differently there."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import (
    STORE_ONLY,
    expected_seconds,
    pytest_collection_modifyitems,
    reaches_store,
)

HERE = Path(__file__).resolve().parent


@dataclass
class Item:
    fixturenames: tuple[str, ...]
    path: Path


@pytest.mark.parametrize("fixture", ["make_server", "store_url"])
def test_a_test_reaching_a_server_or_a_store_runs_on_both_backends(fixture: str) -> None:
    item = Item(("pg_connections_bounded", "live_server", fixture), HERE / "server/test_jobs.py")
    assert reaches_store(item)  # type: ignore[arg-type]


@pytest.mark.parametrize("module", ["client/test_live_resources.py",
                                    "notebook/test_widget_live.py", "e2e/test_lake.py"])
def test_the_client_and_notebook_tests_run_once_even_with_a_server(module: str) -> None:
    item = Item(("live_server", "make_server"), HERE / module)
    assert not reaches_store(item)  # type: ignore[arg-type]


def test_a_test_outside_the_suite_folder_is_judged_by_its_fixtures(tmp_path: Path) -> None:
    # A test's own pytest run (tests/test_connections.py) collects modules in a temporary folder.
    module = tmp_path / "test_inner.py"
    module.write_text("def test_nothing():\n    pass\n")
    assert reaches_store(Item(("make_server",), module))  # type: ignore[arg-type]
    assert not reaches_store(Item(("tmp_path",), module))  # type: ignore[arg-type]


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


class Marked:
    """An item of the given ``slow`` marker (None: not slow)."""

    def __init__(self, name: str, slow: pytest.MarkDecorator | None) -> None:
        self.name = name
        self.slow = slow

    def get_closest_marker(self, name: str) -> pytest.Mark | None:
        return self.slow.mark if name == "slow" and self.slow is not None else None


def test_the_longest_tests_are_started_first_and_the_others_keep_their_order(
        request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(STORE_ONLY, raising=False)  # the order alone, whatever run this is
    items = [Marked("a", None), Marked("b", pytest.mark.slow), Marked("c", None),
             Marked("d", pytest.mark.slow(seconds=400)), Marked("e", pytest.mark.slow(seconds=5)),
             Marked("f", None)]
    pytest_collection_modifyitems(request.config, items)  # type: ignore[arg-type]
    assert [item.name for item in items] == ["d", "b", "e", "a", "c", "f"]
    assert expected_seconds(items[1]) == 30  # type: ignore[arg-type]  # slow, no seconds said
