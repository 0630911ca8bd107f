"""A server that owns its process (``catalog-nb serve`` and its workers run the application on
the main thread) freezes its start-up heap once started (``lifecycle.freeze_startup_heap``); one
embedded in another program's thread (a notebook, the tests) leaves that program's heap alone."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import pytest

from catalog_nb.server import lifecycle
from catalog_nb.server.app import create_app
from catalog_nb.server.settings import Settings


@pytest.fixture
def freezes(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    seen: list[str] = []
    monkeypatch.setattr(lifecycle.gc, "freeze", lambda: seen.append("freeze"))
    return seen


def _start_and_stop(data_dir: Path, seen: list[str]) -> None:
    """The application's lifespan, as the server runs it: started, then stopped."""
    app = create_app(Settings(data_dir=data_dir, admin_password="start-up-heap-1"),
                     run_jobs=False)

    async def run() -> None:
        async with app.router.lifespan_context(app):
            seen.append("started")
        seen.append("stopped")

    asyncio.run(run())


def test_the_main_threads_server_freezes_its_heap_once_started(
    freezes: list[str], tmp_path: Path
) -> None:
    _start_and_stop(tmp_path, freezes)
    assert freezes == ["freeze", "started", "stopped"]


def test_a_server_on_another_thread_freezes_nothing(freezes: list[str], tmp_path: Path) -> None:
    thread = threading.Thread(target=_start_and_stop, args=(tmp_path, freezes))
    thread.start()
    thread.join(120)
    assert freezes == ["started", "stopped"]
