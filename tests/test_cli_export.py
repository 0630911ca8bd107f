"""``catalog-nb export``: connects like the client (flags, environment, netrc), writes what is
asked, prints the paths, and fails with a clear message on paths it cannot write."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import openpyxl
import pytest

from catalog_nb.cli import main
from catalog_nb.client import connect
from catalog_nb.notebook import session
from tests.server.lake import demo_files, profile_folder


@pytest.fixture(scope="module")
def server(make_server: Callable[..., Any]) -> Any:
    running = make_server()
    profile_folder(running.store, "cli_files", demo_files())
    return running


def test_export_with_flags_and_password_on_stdin(
    server: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("CATALOG_URL", raising=False)
    monkeypatch.setattr("sys.stdin", io.StringIO(server.admin_password + "\n"))
    code = main(["export", "--url", server.url, "--user", server.admin_user, "--password-stdin",
                 "--xlsx", str(tmp_path / "c.xlsx"), "--html", str(tmp_path / "c.html"),
                 "--csv", str(tmp_path / "csv"), "--title", "CLI report"])
    assert code == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"xlsx: {tmp_path / 'c.xlsx'}"
    assert f"csv: {tmp_path / 'csv' / 'resources.csv'}" in out
    assert out[-1] == f"html: {tmp_path / 'c.html'}"
    assert "cli_files" in str(openpyxl.load_workbook(tmp_path / "c.xlsx")["sources"]["B2"].value)
    assert "<title>CLI report</title>" in (tmp_path / "c.html").read_text(encoding="utf-8")


def test_export_from_the_environment_and_netrc(
    server: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    host = server.url.split("//", 1)[1]
    netrc = tmp_path / "netrc"
    netrc.write_text(f"machine {host} login {server.admin_user} password "
                     f"{server.admin_password}\n")
    netrc.chmod(0o600)
    monkeypatch.setenv("NETRC", str(netrc))
    monkeypatch.setenv("CATALOG_URL", server.url)
    monkeypatch.delenv("CATALOG_USER", raising=False)
    monkeypatch.delenv("CATALOG_PASSWORD", raising=False)
    assert main(["export", "--xlsx", str(tmp_path / "e.xlsx")]) == 0
    assert capsys.readouterr().out.strip() == f"xlsx: {tmp_path / 'e.xlsx'}"


def test_export_of_a_snapshot_offline(
    server: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with connect(server.url, server.admin_user, server.admin_password, progress=False) as cat:
        cat.snapshot(tmp_path / "snap")
    assert main(["export", "--snapshot", str(tmp_path / "snap"),
                 "--html", str(tmp_path / "s.html")]) == 0
    assert capsys.readouterr().out.strip() == f"html: {tmp_path / 's.html'}"
    assert "a snapshot holds no lineage" in (tmp_path / "s.html").read_text(encoding="utf-8")


def test_export_fails_clearly(
    server: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CATALOG_URL", server.url)
    monkeypatch.setenv("CATALOG_USER", server.admin_user)
    monkeypatch.setenv("CATALOG_PASSWORD", server.admin_password)
    with pytest.raises(SystemExit) as unwritable:
        main(["export", "--xlsx", str(tmp_path / "missing" / "c.xlsx")])
    assert str(unwritable.value.code).startswith("error: cannot write the workbook to")
    assert "does not exist" in str(unwritable.value.code)
    with pytest.raises(SystemExit) as nothing:
        main(["export"])
    assert "nothing to export" in str(nothing.value.code)
    monkeypatch.setenv("CATALOG_PASSWORD", "wrong-password-1")
    with pytest.raises(SystemExit) as refused:
        main(["export", "--xlsx", str(tmp_path / "c.xlsx")])
    assert str(refused.value.code).startswith("error: ")
    with pytest.raises(SystemExit) as no_snapshot:
        main(["export", "--snapshot", str(tmp_path), "--html", str(tmp_path / "x.html")])
    assert "no manifest.json" in str(no_snapshot.value.code)
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def _no_named_service(monkeypatch: pytest.MonkeyPatch, demo_dir: Path) -> None:
    for name in ("CATALOG_URL", "CATALOG_USER", "CATALOG_PASSWORD"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("CATALOG_DEMO_DIR", str(demo_dir))


def test_export_without_a_url_attaches_to_the_running_demo(
    server: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # What a serving demo leaves in its folder (catalog_nb.demo.run), naming a live server.
    demo = tmp_path / "demo"
    demo.mkdir()
    (demo / session.SERVER_FILE).write_text(json.dumps(
        {"url": server.url, "pid": os.getpid(), "stop_with": None}))
    _no_named_service(monkeypatch, demo)
    monkeypatch.setattr("sys.stdin", io.StringIO(server.admin_password + "\n"))
    assert main(["export", "--user", server.admin_user, "--password-stdin",
                 "--xlsx", str(tmp_path / "demo.xlsx")]) == 0
    out, err = capsys.readouterr()
    assert out.strip() == f"xlsx: {tmp_path / 'demo.xlsx'}"
    assert err.strip() == f"Catalog: {server.url} (the demo serving {demo})"
    assert "cli_files" in str(
        openpyxl.load_workbook(tmp_path / "demo.xlsx")["sources"]["B2"].value)


def test_export_without_any_catalog_says_url(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    demo = tmp_path / "demo"
    demo.mkdir()
    _no_named_service(monkeypatch, demo)
    with pytest.raises(SystemExit) as nothing:
        main(["export", "--html", str(tmp_path / "c.html")])
    message = str(nothing.value.code)
    assert message.startswith("error: no catalog to export: give --url URL (or set "
                              "CATALOG_URL), or --snapshot DIR; no demo is serving")
    assert "connect(url=" not in message
    # A server file whose demo has ended is no running demo either.
    (demo / session.SERVER_FILE).write_text(json.dumps(
        {"url": "http://127.0.0.1:9", "pid": _ended_pid(), "stop_with": None}))
    with pytest.raises(SystemExit, match="give --url URL"):
        main(["export", "--html", str(tmp_path / "c.html")])
    assert not (tmp_path / "c.html").exists()


def _ended_pid() -> int:
    """The id of a process that has ended (and been reaped)."""
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait(60)
    return process.pid
