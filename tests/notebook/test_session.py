"""open_catalog(): a named server, or the embedded demo attached to or started in its folder."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
import requests

from catalog_nb.client import ConfigurationError
from catalog_nb.demo import run
from catalog_nb.notebook import session
from catalog_nb.notebook.session import demo_dir, open_catalog, pick, read_server_file, report_dir

ENV = ("CATALOG_URL", "CATALOG_USER", "CATALOG_PASSWORD", "CATALOG_DEMO_DIR",
       "CATALOG_DEMO_SCALE", "CATALOG_REPORT_DIR", "NETRC")


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in ENV:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))


def test_the_demo_credentials_are_the_ones_the_demo_creates() -> None:
    assert (session.DEMO_USER, session.DEMO_PASSWORD) == (run.DEMO_USER, run.DEMO_PASSWORD)


def test_demo_dir_prefers_the_variable(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("CATALOG_DEMO_DIR", str(tmp_path / "mine"))
    assert demo_dir() == (tmp_path / "mine").resolve()


def test_demo_dir_finds_the_make_demo_folder_above(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    (tmp_path / "repo" / ".catalog-demo").mkdir(parents=True)
    (tmp_path / "repo" / "notebooks").mkdir()
    (tmp_path / "repo" / "notebooks" / "pyproject.toml").write_text("")  # nearer, but no demo
    monkeypatch.chdir(tmp_path / "repo" / "notebooks")
    assert demo_dir() == (tmp_path / "repo" / ".catalog-demo").resolve()


def test_demo_dir_falls_back_to_the_project_root_then_home(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    (tmp_path / "repo" / "notebooks").mkdir(parents=True)
    (tmp_path / "repo" / "pyproject.toml").write_text("")
    monkeypatch.chdir(tmp_path / "repo" / "notebooks")
    assert demo_dir() == (tmp_path / "repo" / ".catalog-demo").resolve()
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    assert demo_dir() == tmp_path / "home" / ".catalog_nb" / "demo"


def test_report_dir_is_created(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("CATALOG_DEMO_DIR", str(tmp_path / "demo"))
    assert report_dir() == (tmp_path / "demo" / "reports").resolve()
    assert report_dir().is_dir()
    monkeypatch.setenv("CATALOG_REPORT_DIR", str(tmp_path / "out"))
    assert report_dir() == (tmp_path / "out").resolve() and (tmp_path / "out").is_dir()


def test_pick_takes_the_first_preferred_present_else_the_first_row() -> None:
    frame = pd.DataFrame({"path": ["a", "b", "c"], "n": [1, 2, 3]})
    assert pick(frame, "x", "c", "b")["n"] == 3
    assert pick(frame, "x")["n"] == 1
    assert pick(frame, "2", column="n")["path"] == "a"  # compares values, not their text
    with pytest.raises(LookupError):
        pick(frame.iloc[:0], "a")


def test_a_server_file_is_read_only_when_it_is_whole(tmp_path: Path) -> None:
    assert read_server_file(tmp_path) is None
    (tmp_path / "server.json").write_text('{"url": "http://127')
    assert read_server_file(tmp_path) is None
    (tmp_path / "server.json").write_text('{"url": "http://127.0.0.1:1", "pid": 5}')
    assert read_server_file(tmp_path) == {"url": "http://127.0.0.1:1", "pid": 5}


def test_catalog_url_names_the_server(
    monkeypatch: pytest.MonkeyPatch, live_server: object, tmp_path: Path
) -> None:
    from tests.conftest import ADMIN_PASSWORD, ADMIN_USER

    monkeypatch.setenv("CATALOG_URL", live_server.url)  # type: ignore[attr-defined]
    monkeypatch.setenv("CATALOG_USER", ADMIN_USER)
    monkeypatch.setenv("CATALOG_PASSWORD", ADMIN_PASSWORD)
    monkeypatch.setenv("CATALOG_DEMO_DIR", str(tmp_path / "unused"))
    with open_catalog(progress=False) as cat:
        assert cat.url == live_server.url and cat.username == ADMIN_USER  # type: ignore[attr-defined]
    assert not (tmp_path / "unused").exists()  # no demo was started
    monkeypatch.delenv("CATALOG_PASSWORD")
    with pytest.raises(ConfigurationError, match="No password"):
        open_catalog()


def test_the_demo_is_started_once_attached_to_and_stops_with_this_process(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    folder = tmp_path / "demo"
    monkeypatch.setenv("CATALOG_DEMO_DIR", str(folder))
    monkeypatch.setenv("CATALOG_DEMO_SCALE", "0.05")
    try:
        with open_catalog(progress=False) as cat:
            found = read_server_file(folder)
            assert found is not None and cat.url == found["url"]
            child = session._children[folder.resolve()]
            assert found["pid"] == child.pid != os.getpid()
            assert set(cat.sources()["name"]) == {"demo_files", "demo_sql"}
            assert len(cat.resources(progress=False)) > 10  # built and profiled
        # A second notebook attaches to the same server instead of starting another.
        with open_catalog("ana", "analyst-demo", progress=False) as ana:
            assert ana.url == found["url"] and ana.username == "ana"
            assert set(ana.resources(progress=False)["source"]) == {"demo_files"}
        assert list(session._children) == [folder.resolve()]
        assert "Serving until Ctrl-C" in (folder / "demo-server.log").read_text()
    finally:
        session._stop_children()
    assert child.poll() is not None
    assert read_server_file(folder) is None  # the stopped server removed its file


def test_a_stale_server_file_starts_a_new_demo(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    folder = tmp_path / "demo"
    folder.mkdir()
    # A server that died without cleaning up: its pid is gone.
    (folder / "server.json").write_text(json.dumps({"url": "http://127.0.0.1:9", "pid": 2**22 + 7}))
    monkeypatch.setenv("CATALOG_DEMO_DIR", str(folder))
    monkeypatch.setenv("CATALOG_DEMO_SCALE", "0.05")
    try:
        with open_catalog(progress=False) as cat:
            assert cat.url != "http://127.0.0.1:9"
            cat.version()
    finally:
        session._stop_children()


def test_a_demo_that_cannot_start_says_why(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    folder = tmp_path / "demo"
    monkeypatch.setenv("CATALOG_DEMO_DIR", str(folder))
    monkeypatch.setenv("CATALOG_DEMO_SCALE", "not-a-number")
    with pytest.raises(ValueError, match="No password for 'ana'"):
        open_catalog("ana")
    started = time.monotonic()
    with pytest.raises(ValueError):
        open_catalog()
    monkeypatch.setenv("CATALOG_DEMO_SCALE", "-1")
    with pytest.raises(RuntimeError, match="did not start"):
        open_catalog(timeout=120)
    assert time.monotonic() - started < 120
    assert (folder / "demo-server.log").is_file()


def test_the_demo_a_killed_kernel_started_stops_and_is_never_attached_to(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    folder = tmp_path / "demo"
    monkeypatch.setenv("CATALOG_DEMO_DIR", str(folder))
    monkeypatch.setenv("CATALOG_DEMO_SCALE", "0.05")
    # A "kernel" that starts the demo and is then killed outright, as kernel managers do.
    kernel = subprocess.run(
        [sys.executable, "-c",
         "import os, signal\n"
         "from catalog_nb.notebook.session import open_catalog\n"
         "print(open_catalog(progress=False).url, flush=True)\n"
         "os.kill(os.getpid(), signal.SIGKILL)\n"],
        capture_output=True, text=True, timeout=300, check=False,
    )
    assert kernel.returncode == -signal.SIGKILL, kernel.stderr
    url = kernel.stdout.strip()
    found = read_server_file(folder)
    if found is not None:  # the demo may not have noticed yet, but nobody attaches to it
        assert found["url"] == url and found["stop_with"] is not None
        assert session._attach(folder, "admin", "catalog-demo", False) is None
    deadline = time.monotonic() + 30
    while read_server_file(folder) is not None and time.monotonic() < deadline:
        time.sleep(0.2)
    assert read_server_file(folder) is None
    with pytest.raises(requests.ConnectionError):
        for _ in range(50):  # the server stops right after removing its file
            requests.get(url, timeout=2)
            time.sleep(0.2)
